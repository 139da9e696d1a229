"""corpus."""
