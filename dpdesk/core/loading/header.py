"""A table's column names, read from its header alone: no value of any row is read.

For a plan template (``dpdesk plan new``) and the header check of ``dpdesk plan check --data``: nothing derived
from the private values may go into a plan, so nothing but the names is read. A CSV is read byte by byte from an
unbuffered file up to the end of its first record (a newline outside double quotes), never further; its encoding
is judged from those bytes alone. A workbook's names are its first sheet's first row, read by calamine from the
copy the bomb guard checked, asked for no row below it; a Parquet file's names are its schema (metadata, not
values).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import os
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading.csvfile import sniff_delimiter
from dpdesk.core.loading.excel import XLSX_SUFFIXES
from dpdesk.core.loading.guards import check_parquet, check_regular_file, check_xlsx
from dpdesk.core.loading.panics import quiet_panics, reader_errors, reader_message
from dpdesk.core.loading.parquet import PARQUET_SUFFIXES
from dpdesk.i18n import _

#: The longest header line read (a longer first record is refused: it is no header).
MAX_HEADER_BYTES = 1_000_000


@dataclass(frozen=True)
class Header:
    """A table's column names, as the loader will match them (stripped), and how a CSV's line was read."""

    path: str
    names: tuple[str, ...]
    #: The CSV's encoding and delimiter as judged from the header line alone (empty for a workbook or Parquet).
    encoding: str = ""
    delimiter: str = ""


def read_header(path: str | Path, *, encoding: str | None = None, delimiter: str | None = None) -> Header:
    """The column names of a CSV, .xlsx or Parquet file, read from its header alone."""
    p = Path(path)
    check_regular_file(p)
    suffix = p.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return Header(str(p), _parquet_names(p))
    if suffix in XLSX_SUFFIXES:
        return Header(str(p), _xlsx_names(p))
    try:
        with p.open("rb", buffering=0) as f:
            raw = header_line(f, str(p))
    except OSError as exc:
        raise InputError(str(p), _("cannot read the file: {why}").format(why=exc.strerror or exc)) from None
    return csv_header(raw, str(p), encoding=encoding, delimiter=delimiter)


def header_line(f: BinaryIO, path: str) -> bytes:
    """The bytes of the first record of ``f``, its line end included: read one unit (a byte, or two in UTF-16) at
    a time, so that not one byte past the header's line end is read from ``f``."""
    first = f.read(1)
    if not first:
        raise InputError(path, _("the file is empty"))
    pending = [first]
    if first == b"\x00":
        return _utf16_line(first + f.read(1), f, path)
    if first in (b"\xff", b"\xfe"):
        second = f.read(1)
        if first + second in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            return _utf16_line(first + second, f, path)
        pending.append(second)
    buf = bytearray()
    quoted = False
    while True:
        unit = pending.pop(0) if pending else f.read(1)
        if not unit:
            return bytes(buf)
        if len(buf) == 1 and unit == b"\x00":  # "a\0": UTF-16 without a byte-order mark
            return _utf16_line(bytes(buf) + unit, f, path)
        buf += unit
        if unit == b'"':  # a newline inside double quotes is part of a name ("" keeps the parity)
            quoted = not quoted
        elif unit == b"\n" and not quoted:
            return bytes(buf)
        if len(buf) >= MAX_HEADER_BYTES:
            break
    raise InputError(path, _too_long())


def _utf16_line(start: bytes, f: BinaryIO, path: str) -> bytes:
    """The first record of a UTF-16 file, two bytes at a time (``start``: its first two bytes)."""
    little = start != codecs.BOM_UTF16_BE and not start.startswith(b"\x00")
    newline, quote = ("\n", '"')
    buf = bytearray(start)
    quoted = False
    unit = start
    while True:
        text = unit.decode("utf-16-le" if little else "utf-16-be", errors="replace")
        if text == quote:
            quoted = not quoted
        elif text == newline and not quoted:
            return bytes(buf)
        if len(buf) >= MAX_HEADER_BYTES:
            raise InputError(path, _too_long())
        unit = f.read(2)
        if len(unit) < 2:
            return bytes(buf + unit)
        buf += unit


def _too_long() -> str:
    return _("the first line is longer than {n} bytes: it is not a header line").format(
        n=f"{MAX_HEADER_BYTES:,}"
    )


def csv_header(raw: bytes, path: str, *, encoding: str | None = None, delimiter: str | None = None) -> Header:
    """The names in a CSV's header line ``raw`` (the first record's bytes, nothing after it)."""
    enc = encoding or header_encoding(raw)
    try:
        text = codecs.decode(raw, enc, errors="strict")
    except LookupError:
        raise InputError(path, _("unknown encoding {name}").format(name=repr(enc))) from None
    except UnicodeError:
        raise InputError(
            path,
            _("the header line is not {name} text; give the file's encoding with --encoding").format(
                name=enc
            ),
            line=1,
        ) from None
    text = text.lstrip("\ufeff").rstrip("\r\n")
    if not text.strip():
        raise InputError(path, _("the file has no header line"), line=1)
    delim = delimiter or sniff_delimiter(text)
    try:
        rows = list(csv.reader([text], delimiter=delim))
    except (csv.Error, TypeError) as exc:
        raise InputError(path, _("cannot read the header: {why}").format(why=exc), line=1) from None
    names = tuple(h.strip() for h in rows[0]) if rows else ()
    return Header(path, names, enc, delim)


def header_encoding(raw: bytes) -> str:
    """The encoding of a CSV judged from its header line alone: a byte-order mark or UTF-16's zero bytes, else
    UTF-8, else GB18030 when the line reads as Chinese words, else cp1252.

    The loader's guess (:func:`~dpdesk.core.loading.csvfile.detect_encoding`) tries GB18030 before cp1252 on
    the first 64 KiB; on a header alone that would take most Latin-1 names for Chinese ("Größe" is valid
    GB18030), so here GB18030 must also read as Chinese: every character outside ASCII a CJK character or
    punctuation coded in two bytes of GB2312's range, and at least one word of two such characters.
    """
    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if raw.startswith(b"\x00"):
        return "utf-16-be"
    if raw[1:2] == b"\x00":
        return "utf-16-le"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    return "gb18030" if _reads_as_chinese(raw) else "cp1252"


def _reads_as_chinese(raw: bytes) -> bool:
    try:
        text = raw.decode("gb18030")
    except UnicodeDecodeError:
        return False
    run = longest = 0
    for ch in text:
        if ord(ch) < 0x80:
            run = 0
            continue
        code = ch.encode("gb18030")
        if len(code) != 2 or min(code) < 0xA1 or not _cjk(ch):
            return False
        run += 1
        longest = max(longest, run)
    return longest >= 2


def _cjk(ch: str) -> bool:
    """A CJK ideograph, CJK punctuation or a full-width form."""
    return unicodedata.name(ch, "").startswith(("CJK", "FULLWIDTH", "IDEOGRAPHIC"))


def _parquet_names(path: Path) -> tuple[str, ...]:
    """A Parquet file's column names from its schema (metadata: no page is decoded)."""
    import polars as pl

    check_parquet(path, set(), scan=False)  # dpdesk's own reading of the metadata refuses a damaged footer
    try:
        with quiet_panics():
            schema = pl.read_parquet_schema(path)
    except reader_errors() as exc:
        raise InputError(
            str(path), _("cannot read this file ({why})").format(why=reader_message(exc))
        ) from None
    return tuple(str(n).strip() for n in schema)


def _xlsx_names(path: Path) -> tuple[str, ...]:
    """A workbook's first sheet's first row, read from the copy the bomb guard checked; no row below is asked for."""
    import polars as pl

    try:
        fd, name = tempfile.mkstemp(prefix="dpdesk-", suffix=".xlsx")
    except OSError as exc:
        raise InputError(
            str(path), _("cannot create a temporary file: {why}").format(why=exc.strerror or exc)
        ) from None
    os.close(fd)
    try:
        check_xlsx(path, Path(name))
        with quiet_panics():
            frame = pl.read_excel(name, engine="calamine", infer_schema_length=0, read_options={"n_rows": 0})
    except InputError:
        raise
    except reader_errors() as exc:
        raise InputError(
            str(path), _("cannot read this file ({why})").format(why=reader_message(exc))
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return tuple(str(c).strip() for c in frame.columns)
