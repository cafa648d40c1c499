"""The Spark engine: the exact aggregation of a release handed to Apache Spark, everything else on the desktop.

Spark reads the table where it lies (a Parquet or CSV path the cluster reads, or a catalog table) and computes, with
Spark SQL's built-in functions only (no Python on the executors: the cluster needs nothing of dpdesk), what the
in-memory and streaming engines compute: the declared columns read as the loaders read them
(:mod:`.columns`), the data check's counts, each query's mergeable state (:mod:`.states`), rows bounded per person
(:mod:`.bounding`) and the keyed hashes these need (:mod:`.hashing`). Only those integers come back; the design,
the ledger, the noise and the package stay the release's. ``tests/spark`` checks the states bit for bit against the
in-memory engine on the same tables.

pyspark is imported by these modules only, and only when a release asks for ``--engine spark``.
"""
