"""Parquet files: the metadata checked against the limits first, then only the columns wanted decoded by polars."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import Progress
from dpdesk.core.common.text import shown
from dpdesk.core.loading.columns import TableBuilder, load_frame, match_columns
from dpdesk.core.loading.guards import bounded_batches, check_parquet
from dpdesk.core.loading.panics import quiet_panics, quietly, reader_errors, reader_message
from dpdesk.core.loading.table import BatchSink, LoadReport, Table, file_sha256
from dpdesk.core.model.spec import ColumnSpec
from dpdesk.i18n import _

if TYPE_CHECKING:
    import polars

PARQUET_SUFFIXES = (".parquet", ".pq")


def read_parquet(path: Path, n_rows: int | None = None) -> polars.DataFrame:
    """The file (or its first ``n_rows`` rows) as a polars frame, once its metadata passed the limits."""
    import polars as pl

    check_parquet(path, scan=n_rows is None)  # a few rows are copied from their views, never the whole file
    with quiet_panics():
        return pl.read_parquet(path, n_rows=n_rows)


def check_flat(path: Path, schema: polars.Schema, wanted: set[str]) -> None:
    """Every wanted column holds one number, text, date or truth value a cell: a column of lists, arrays, records
    or raw bytes is refused by its type, before it is decoded (casting one raised a traceback)."""
    import polars as pl

    for name, dtype in schema.items():
        if name.strip() not in wanted:
            continue
        if isinstance(dtype, pl.List):
            kind = _("lists")
        elif isinstance(dtype, pl.Array):
            kind = _("arrays")
        elif isinstance(dtype, pl.Struct):
            kind = _("records")
        elif dtype == pl.Binary or dtype == pl.Object:
            kind = _("raw bytes")
        else:
            continue
        raise InputError(
            str(path),
            _(
                "its cells hold {kind} (Parquet type {dtype}), not one value each: dpdesk reads numbers, "
                "text, dates and true/false; save the file with this column as plain values or text, or "
                "declare another column"
            ).format(kind=kind, dtype=shown(str(dtype))),
            column=name.strip(),
        )


def read_declared(path: Path, columns: dict[str, ColumnSpec], id_column: str | None) -> polars.DataFrame:
    """Only the declared columns (and the id column): an undeclared column is never decoded, nor counted
    against the limits."""
    import polars as pl

    with quiet_panics():
        schema = pl.Schema(pl.read_parquet_schema(path))
    names = list(schema)
    wanted = set(columns) | ({id_column} if id_column else set())
    match_columns(
        [n.strip() for n in names], columns, id_column, path
    )  # a missing column named with the header
    check_flat(path, schema, wanted)
    check_parquet(path, wanted)
    with quiet_panics():
        return pl.read_parquet(path, columns=[n for n in names if n.strip() in wanted])


def load_parquet(
    path: Path, columns: dict[str, ColumnSpec], id_column: str | None, progress: Progress
) -> Table:
    """Load the declared columns of a Parquet file (a problem is named by its record number)."""
    return load_frame(
        path,
        columns,
        id_column,
        progress,
        "parquet",
        lambda p: read_declared(p, columns, id_column),
        lambda r: f"record {r + 1}",
        lambda frame: bounded_batches(path, [frame], max(frame.height, 1)),  # long text copied in slices
    )


#: Rows per batch when a Parquet file is streamed (a row group larger than this is read in slices).
STREAM_BATCH_ROWS = 256 * 1024


def stream_parquet(
    path: Path,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    sink: Callable[[], BatchSink],
) -> Table:
    """Stream the declared columns of a Parquet file to ``sink`` in batches (row groups, or slices of them):
    hashed first, then read batch by batch, so that memory holds one batch, not the table."""
    import polars as pl

    wanted_names = set(columns) | ({id_column} if id_column else set())
    check_parquet(path, wanted_names)  # refused from its metadata before anything is read
    sha = file_sha256(path, progress)
    with quiet_panics():
        schema = pl.Schema(pl.read_parquet_schema(path))
    names = list(schema)
    wanted = match_columns([n.strip() for n in names], columns, id_column, path)
    check_flat(path, schema, wanted_names)
    tb = TableBuilder(path, columns, wanted, LoadReport(encoding="", delimiter=""), sink)
    try:
        lf = pl.scan_parquet(path).select(
            [pl.col(n).alias(n.strip()) for n in names if n.strip() in wanted_names]
        )
        for frame in bounded_batches(
            path, quietly(lf.collect_batches(chunk_size=STREAM_BATCH_ROWS)), STREAM_BATCH_ROWS
        ):
            tb.batch(frame.height)
            tb.add_frame(frame, wanted)
            progress.update(tb.n_rows, max(tb.n_rows, 1), "reading")
    except InputError:
        raise
    except reader_errors() as exc:  # polars raises many exception types (and panics) for malformed files
        raise InputError(str(path), f"cannot read this parquet file ({reader_message(exc)})") from None
    return tb.finish(sha, id_column, lambda r: f"record {r + 1}")
