"""A quick look at a data file: its header and first rows as text, for the local user's preview and for the
type suggestion (:mod:`dpdesk.core.loading.suggest`), which both the app and the command line read this way.

Reads at most about a megabyte (CSV) or the first rows (xlsx, Parquet). What it shows is for
the curator's own screen only; nothing from it enters a plan, a release or a ledger, except the
column names and the types the user accepts.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass
from pathlib import Path

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading.csvfile import detect_encoding, sniff_delimiter
from dpdesk.core.loading.excel import XLSX_SUFFIXES, read_checked_xlsx
from dpdesk.core.loading.panics import reader_errors, reader_message
from dpdesk.core.loading.parquet import PARQUET_SUFFIXES, read_parquet

#: The sample both the preview and the type suggestion read: the first 1,000 data rows (of a CSV, those within
#: its first megabyte).
SAMPLE_ROWS = 1000
#: How much of a CSV a peek reads.
PEEK_BYTES = 1_000_000


@dataclass(frozen=True)
class Peek:
    """Header and first rows of a file, as text."""

    path: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    encoding: str = ""
    delimiter: str = ""


def peek(path: str | Path, rows: int = SAMPLE_ROWS) -> Peek:
    """Read the header and up to ``rows`` first rows of a CSV, .xlsx or Parquet file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "no such file")
    suffix = p.suffix.lower()
    try:
        if suffix in XLSX_SUFFIXES or suffix in PARQUET_SUFFIXES:
            import polars as pl

            # a workbook is read as the load reads it: calamine sees only the parts the bomb guard checked
            frame = (
                read_parquet(p, n_rows=rows)
                if suffix in PARQUET_SUFFIXES
                else read_checked_xlsx(p).head(rows)
            )
            header = tuple(str(c).strip() for c in frame.columns)
            body = tuple(
                tuple("" if v is None else str(v) for v in r)
                for r in frame.cast(dict.fromkeys(frame.columns, pl.String)).rows()
            )
            return Peek(str(p), header, body)
        with p.open("rb") as f:
            head = f.read(PEEK_BYTES)
    except InputError:
        raise
    except OSError as exc:
        raise InputError(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    except (
        reader_errors()
    ) as exc:  # readers raise many exception types (and polars panics) for malformed files
        raise InputError(str(p), f"cannot read this file ({reader_message(exc)})") from None
    if not head.strip():
        raise InputError(str(p), "the file is empty")
    enc = detect_encoding(head)
    text = codecs.getincrementaldecoder(enc)("replace").decode(head, final=False).lstrip("\ufeff")
    delim = sniff_delimiter(text)
    lines = text.splitlines(keepends=True)
    if len(head) == PEEK_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    try:
        records = list(csv.reader(io.StringIO("".join(lines)), delimiter=delim))
    except csv.Error as exc:
        raise InputError(str(p), f"cannot read the first lines: {exc}") from None
    records = [r for r in records if r]
    if not records:
        raise InputError(str(p), "the file has no header line", line=1)
    header = tuple(h.strip() for h in records[0])
    width = len(header)
    body = tuple(tuple((r + [""] * width)[:width]) for r in records[1 : rows + 1])
    return Peek(str(p), header, body, enc, delim)
