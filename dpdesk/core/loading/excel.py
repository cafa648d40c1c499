"""Excel .xlsx workbooks: the first sheet, read by calamine only from the copy the bomb guard checked."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import Progress
from dpdesk.core.loading.columns import load_frame
from dpdesk.core.loading.guards import check_xlsx
from dpdesk.core.loading.table import Table
from dpdesk.core.model.spec import ColumnSpec

if TYPE_CHECKING:
    import polars

XLSX_SUFFIXES = (".xlsx", ".xlsm")


def load_xlsx(path: Path, columns: dict[str, ColumnSpec], id_column: str | None, progress: Progress) -> Table:
    """Load the declared columns of a workbook's first sheet (a problem is named by its spreadsheet row)."""
    # a spreadsheet shows the header as row 1
    return load_frame(path, columns, id_column, progress, "xlsx", read_checked_xlsx, lambda r: f"row {r + 2}")


def read_checked_xlsx(path: Path) -> polars.DataFrame:
    """The first sheet, read by calamine from the copy the check wrote, never from the file itself.

    Python's zipfile and calamine's zip reader can be shown different parts by a crafted archive, so
    calamine only ever sees the parts check_xlsx inflated and checked (see tests/trust/test_xlsx_bomb.py).
    """
    import tempfile

    import polars as pl

    try:
        fd, name = tempfile.mkstemp(prefix="dpdesk-", suffix=".xlsx")
    except OSError as exc:
        raise InputError(
            str(path), f"cannot create a temporary file to check the workbook: {exc.strerror or exc}"
        ) from None
    os.close(fd)
    try:
        check_xlsx(path, Path(name))
        return pl.read_excel(name, engine="calamine", infer_schema_length=0)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
