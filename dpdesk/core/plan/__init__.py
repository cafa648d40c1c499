"""Plan files: reading, checking and writing a plan and its codebook, with each query's statistic from the
registry."""
