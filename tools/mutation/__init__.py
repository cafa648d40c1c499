"""The mutation check: each promise broken one at a time must be caught by its tests (see mutants.py)."""
