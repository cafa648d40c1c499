"""A table in PostgreSQL given where a data file is (``--data postgresql://...?table=...``, the app's Open
dialog): its rows read through ``COPY`` into a private CSV file for the command's run, which every flow then reads
as it reads any CSV file (the same loader, data check and content identity: ``docs/databases.md``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from dpdesk.core.common.dataurl import is_database_url
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.loading.database import DatabaseSource, column_types, copy_to_file, parse_source

#: PostgreSQL's types a plan declares as ``int`` or ``float`` (as ``format_type`` names them, without a modifier)
INT_TYPES = ("smallint", "integer", "bigint")
FLOAT_TYPES = ("real", "double precision", "numeric")


def source_of(data: str | Path) -> DatabaseSource | None:
    """The database source ``data`` names, or None for a file (raises :class:`DatabaseError` for a database URL
    that cannot be used: one holding a password, naming no table)."""
    if not is_database_url(data):
        return None
    return parse_source(str(data))


@contextlib.contextmanager
def data_file(
    data: str | Path, *, header_only: bool = False, progress: Progress = NULL_PROGRESS
) -> Iterator[str | Path]:
    """``data`` itself for a file; for a database URL, its rows read into a CSV file named after the table, in a
    private folder (mode 0700) removed when the block ends (or swept if the process is killed). Nothing is charged
    or written elsewhere before the read succeeds; :class:`~dpdesk.core.loading.database.DatabaseError` otherwise."""
    source = source_of(data)
    if source is None:
        yield data
        return
    from dpdesk.core.release.streaming import private_folder

    with private_folder() as folder:
        dest = folder / source.file_name

        def read(n: int) -> None:
            progress.update(n, 0, "reading")

        copy_to_file(source, dest, header_only=header_only, on_bytes=read)
        yield dest


def declared_types(source: DatabaseSource) -> dict[str, str]:
    """The plan types of the source's number columns as the database declares them (``int``, ``float``): public
    schema read from its catalogue, no value read. Other columns are left out (a text column may be a category
    or not: the plan's author says)."""
    found: dict[str, str] = {}
    for name, kind in column_types(source):
        base = kind.split("(", 1)[0].strip()
        if base in INT_TYPES:
            found[name] = "int"
        elif base in FLOAT_TYPES:
            found[name] = "float"
    return found
