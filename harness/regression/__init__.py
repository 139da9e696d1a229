"""regression."""
