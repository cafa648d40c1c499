"""Parquet files: the metadata checked against the limits first, then only the columns wanted decoded by polars."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.loading.columns import load_frame, match_columns
from dpdesk.core.loading.guards import check_parquet
from dpdesk.core.loading.table import Table
from dpdesk.core.plan import ColumnSpec
from dpdesk.core.progress import Progress

if TYPE_CHECKING:
    import polars

PARQUET_SUFFIXES = (".parquet", ".pq")


def read_parquet(path: Path, n_rows: int | None = None) -> polars.DataFrame:
    """The file (or its first ``n_rows`` rows) as a polars frame, once its metadata passed the limits."""
    import polars as pl

    check_parquet(path)
    return pl.read_parquet(path, n_rows=n_rows)


def read_declared(path: Path, columns: dict[str, ColumnSpec], id_column: str | None) -> polars.DataFrame:
    """Only the declared columns (and the id column): an undeclared column is never decoded, nor counted
    against the limits."""
    import polars as pl

    names = list(pl.read_parquet_schema(path))
    wanted = set(columns) | ({id_column} if id_column else set())
    match_columns(
        [n.strip() for n in names], columns, id_column, path
    )  # a missing column named with the header
    check_parquet(path, wanted)
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
    )
