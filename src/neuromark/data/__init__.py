"""Data sets (one module per data set), the event dtype, downloads with checksum checks."""
