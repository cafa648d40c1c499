"""The command line's type suggestion (``dpdesk suggest``): a type per column from a sample of rows."""

from __future__ import annotations

import codecs
import io
from pathlib import Path

import numpy as np

from dpdesk.core.errors import InputError
from dpdesk.core.loading.csvfile import detect_encoding, sniff_delimiter
from dpdesk.core.loading.excel import read_checked_xlsx


def suggest_types(path: str | Path, sample_rows: int = 1000) -> dict[str, str]:
    """Propose a type (int, float, category) for each column from a sample of rows.

    Only types are proposed: bounds and categories are public facts the user must supply
    (reading them off the data would leak it).
    """
    import polars as pl

    p = Path(path)
    suffix = p.suffix.lower()
    try:
        if suffix in (".xlsx", ".xlsm"):
            frame = read_checked_xlsx(p).head(sample_rows)
        elif suffix in (".parquet", ".pq"):
            frame = pl.read_parquet(p, n_rows=sample_rows)
        else:
            with p.open("rb") as f:
                head = f.read(1_000_000)
            enc = detect_encoding(head)
            text = codecs.getincrementaldecoder(enc)("replace").decode(head, final=False).lstrip("\ufeff")
            lines = text.splitlines()[: sample_rows + 1]
            delim = sniff_delimiter("\n".join(lines[:50]))
            frame = pl.read_csv(
                io.StringIO("\n".join(lines)).read().encode(), separator=delim, infer_schema=False
            )
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - malformed input of any kind
        raise InputError(str(p), f"cannot read a sample ({str(exc).splitlines()[0][:200]})") from None
    out: dict[str, str] = {}
    for name in frame.columns:
        s = frame.get_column(name)
        if s.dtype != pl.String:
            s = s.cast(pl.String)
        s = s.str.strip_chars().drop_nulls()
        s = s.filter(s.str.len_bytes() > 0)
        if s.len() == 0:
            out[name] = "category"
            continue
        floats = s.cast(pl.Float64, strict=False)
        if floats.null_count() == 0:
            arr = floats.to_numpy()
            finite = arr[np.isfinite(arr)]
            whole = bool(np.all(finite == np.floor(finite)))
            out[name] = "int" if whole and not s.str.contains(r"[.eE]").any() else "float"
        else:
            out[name] = "category"
    return out
