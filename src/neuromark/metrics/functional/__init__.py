"""Pure metric functions: counting and statistics, no state."""
