"""A quick look at a data file: its header and first rows as text, for the local user's preview.

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

from dpdesk.core.errors import InputError
from dpdesk.core.loading.csvfile import detect_encoding, sniff_delimiter
from dpdesk.core.loading.guards import check_xlsx


@dataclass(frozen=True)
class Peek:
    """Header and first rows of a file, as text."""

    path: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    encoding: str = ""
    delimiter: str = ""


def peek(path: str | Path, rows: int = 200) -> Peek:
    """Read the header and up to ``rows`` first rows of a CSV, .xlsx or Parquet file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "no such file")
    suffix = p.suffix.lower()
    try:
        if suffix in (".xlsx", ".xlsm", ".parquet", ".pq"):
            import polars as pl

            if suffix in (".parquet", ".pq"):
                frame = pl.read_parquet(p, n_rows=rows)
            else:
                check_xlsx(p)
                frame = pl.read_excel(p, engine="calamine", infer_schema_length=0).head(rows)
            header = tuple(str(c).strip() for c in frame.columns)
            body = tuple(
                tuple("" if v is None else str(v) for v in r)
                for r in frame.cast(dict.fromkeys(frame.columns, pl.String)).rows()
            )
            return Peek(str(p), header, body)
        with p.open("rb") as f:
            head = f.read(1_000_000)
    except InputError:
        raise
    except OSError as exc:
        raise InputError(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - readers raise many exception types for malformed files
        raise InputError(str(p), f"cannot read this file ({str(exc).splitlines()[0][:200]})") from None
    if not head.strip():
        raise InputError(str(p), "the file is empty")
    enc = detect_encoding(head)
    text = codecs.getincrementaldecoder(enc)("replace").decode(head, final=False).lstrip("\ufeff")
    delim = sniff_delimiter(text)
    lines = text.splitlines(keepends=True)
    if len(head) == 1_000_000 and len(lines) > 1:
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


def suggest_from_peek(p: Peek) -> dict[str, str]:
    """Propose a type per column from the first rows: int, float or category. Types only, never bounds."""
    out: dict[str, str] = {}
    for i, name in enumerate(p.header):
        values = [r[i].strip() for r in p.rows if i < len(r) and r[i].strip()]
        kind = "int" if values else "category"
        for v in values:
            try:
                x = float(v)
            except ValueError:
                kind = "category"
                break
            if kind == "int" and (not x.is_integer() or any(c in v for c in ".eE")):
                kind = "float"
        out[name] = kind
    return out
