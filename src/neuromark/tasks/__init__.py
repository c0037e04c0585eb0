"""Tasks: one module per task."""
