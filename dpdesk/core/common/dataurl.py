"""Whether a ``--data`` names a table in a database rather than a file: told by the text alone, without importing
the loaders (the command line and the app ask it before anything heavy is imported)."""

from __future__ import annotations

from pathlib import Path

#: the URL schemes libpq reads
SCHEMES = ("postgresql", "postgres")


def is_database_url(data: str | Path) -> bool:
    """Whether ``data`` names a table in a database (a ``postgresql://`` or ``postgres://`` URL) rather than a
    file."""
    return isinstance(data, str) and data.strip().lower().startswith(tuple(s + "://" for s in SCHEMES))
