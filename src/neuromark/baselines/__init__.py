"""Baselines: one module per task."""
