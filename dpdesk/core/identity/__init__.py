"""Which dataset a data file belongs to: by its bytes, by its content, or as a near-copy of a known table."""
