"""goldset."""
