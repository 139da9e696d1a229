"""fusion."""
