"""Frozen copies of implementations a benchmark compares against (the "before" of a change)."""
