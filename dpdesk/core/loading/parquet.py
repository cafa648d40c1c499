"""Parquet files, read whole by polars."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.loading.columns import load_frame
from dpdesk.core.loading.table import Table
from dpdesk.core.plan import ColumnSpec
from dpdesk.core.progress import Progress

if TYPE_CHECKING:
    import polars

PARQUET_SUFFIXES = (".parquet", ".pq")


def read_parquet(path: Path, n_rows: int | None = None) -> polars.DataFrame:
    """The file (or its first ``n_rows`` rows) as a polars frame."""
    import polars as pl

    return pl.read_parquet(path, n_rows=n_rows)


def load_parquet(
    path: Path, columns: dict[str, ColumnSpec], id_column: str | None, progress: Progress
) -> Table:
    """Load the declared columns of a Parquet file (a problem is named by its record number)."""
    return load_frame(
        path, columns, id_column, progress, "parquet", read_parquet, lambda r: f"record {r + 1}"
    )
