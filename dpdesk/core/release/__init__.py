"""A release in two steps (prepare: nothing written; commit: charge durably, then draw and write), the data
check, and the streamed computation over a large table."""
