"""The aggregation engines behind one boundary (:mod:`dpdesk.core.release.engines.base`): what a release needs of
a table, whichever engine reads it. ``memory`` holds the table in memory, ``streamed`` merges it batch by batch
through partition files; a further engine (a cluster's) is one more module implementing the protocol."""
