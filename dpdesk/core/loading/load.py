"""The one entry point: :func:`load_table` picks the reader by the file's suffix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.loading.csvfile import load_csv
from dpdesk.core.loading.excel import XLSX_SUFFIXES, load_xlsx
from dpdesk.core.loading.guards import check_regular_file
from dpdesk.core.loading.parquet import PARQUET_SUFFIXES, load_parquet, stream_parquet
from dpdesk.core.loading.table import BatchSink, Table
from dpdesk.core.model.spec import ColumnSpec
from dpdesk.i18n import _


def load_table(
    path: str | Path,
    columns: dict[str, ColumnSpec],
    *,
    id_column: str | None = None,
    progress: Progress = NULL_PROGRESS,
    encoding: str | None = None,
    delimiter: str | None = None,
    sink: Callable[[], BatchSink] | None = None,
    identity_secret: bytes | None = None,
) -> Table:
    """Load the declared ``columns`` (and an optional id column) of a CSV, .xlsx or Parquet file.

    With a ``sink`` the rows are streamed to it batch by batch and the table returned holds no values (see
    :mod:`dpdesk.core.release.streaming`): CSV in blocks, Parquet by row groups; a workbook is refused (it is read whole).
    With an ``identity_secret``, a reader that can computes the table's content identity in the same read
    (:attr:`Table.identity`, :mod:`dpdesk.core.loading.typed_identity`; today the UTF-8 CSV reader's fast path).
    """
    p = Path(path)
    check_regular_file(p)  # a device or a FIFO is refused at once, before any reader opens it
    suffix = p.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        if sink is not None:
            raise InputError(str(p), _too_large_xlsx())
        return load_xlsx(p, columns, id_column, progress)
    if suffix in PARQUET_SUFFIXES:
        if sink is not None:
            return stream_parquet(p, columns, id_column, progress, sink)
        return load_parquet(p, columns, id_column, progress)
    if suffix == ".xls":
        raise InputError(str(p), "old .xls workbooks are not supported; save it as .xlsx or CSV")
    identity = None
    if identity_secret is not None:
        from dpdesk.core.loading.typed_identity import TypedIdentity

        def identity(header: list[str]) -> TypedIdentity:
            return TypedIdentity(identity_secret, header, parsed_floats=True)

    return load_csv(p, columns, id_column, progress, encoding, delimiter, sink, identity=identity)


def _too_large_xlsx() -> str:
    return _(
        "this workbook's declared columns would not fit under the memory limit, and a workbook can only be read "
        "whole; save it as CSV (or Parquet) and release that file, or raise the memory limit"
    )
