"""Loading a table (CSV in common encodings, Excel .xlsx, Parquet) into compact numpy columns.

Only the columns the plan declares are kept, already in the form the statistics need:

* category columns as ``int16`` codes into the declared category list, ``-1`` for missing,
  unparsable or undeclared values (values outside the declared categories are treated as missing);
* int columns clamped to their declared bounds in the smallest integer type, with a missing mask;
* float columns as ``float64`` with ``NaN`` for missing (infinities are clamped at query time).

CSV is read in byte blocks split at record boundaries outside quotes; each piece is parsed by
polars and converted to numpy before the next is read, so memory stays near the size of the
final columns, progress is reported per block and a cancel is honoured between blocks. The file's
SHA-256 (the ledger's dataset key) is computed in the same pass.

Nothing here reads a public parameter off the data: bounds and categories come from the plan.
The :class:`LoadReport` (counts of missing and undeclared values, with a first example location)
is for the local curator's eyes only and never enters a release, a report or the ledger.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import hashlib
import io
import math
import mmap
import os
import re
import secrets
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dpdesk.core.errors import Cancelled, InputError
from dpdesk.core.plan import ColumnSpec
from dpdesk.core.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    import polars
    import polars as pl

#: Public cap on the number of rows; it keeps fixed-point sums exact in int64 (see queries.py).
MAX_ROWS = 2**31 - 1
BLOCK_BYTES = 8 * 1024 * 1024  # measured: lower peak memory than 32 MiB, and 15-30% less CPU
MAX_RECORD_BYTES = 256 * 1024 * 1024
#: An .xlsx whose parts would unpack to more than this is refused (zip bombs).
MAX_XLSX_UNPACKED = 2 * 1024**3
MAX_XLSX_RATIO = 200
#: Read and inflate size when checking an .xlsx part's real size (bounds the check's memory).
XLSX_CHECK_CHUNK = 1024 * 1024
CSV_SUFFIXES = (".csv", ".tsv", ".txt")
STREAM_CHUNK_BYTES = 8 * 1024 * 1024
HASH_READ_BYTES = 256 * 1024  # read and hashed while still in the CPU cache
#: UTF-8 files go through polars' streaming reader first (tests switch it off to test the block reader).
STREAM_UTF8 = True
DELIMITERS = (",", ";", "\t", "|")


@dataclass
class ColumnIssues:
    """Per-column counts for the curator: what became missing, and where the first one was; for int columns,
    also how many values were clamped to the bounds as they were stored (float values are clamped later, at
    query time: see :func:`dpdesk.core.datacheck.check_data`)."""

    missing: int = 0
    unparsable: int = 0
    undeclared: int = 0
    first_problem: str | None = None
    clamped: int = 0


@dataclass
class LoadReport:
    """What the loader noticed, for the local user only (never written to a release)."""

    encoding: str = "utf-8"
    delimiter: str = ","
    issues: dict[str, ColumnIssues] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Human-readable lines describing problems, empty if there were none."""
        out = []
        for name, iss in self.issues.items():
            parts = []
            if iss.missing:
                parts.append(f"{iss.missing} empty")
            if iss.unparsable:
                parts.append(f"{iss.unparsable} unparsable")
            if iss.undeclared:
                parts.append(f"{iss.undeclared} outside the declared categories")
            if parts:
                where = f" (first at {iss.first_problem})" if iss.first_problem else ""
                out.append(f"column {name!r}: {', '.join(parts)} value(s), treated as missing{where}")
        return out


@dataclass
class Column:
    """One loaded column: values in their compact form and, for int columns, a missing mask."""

    spec: ColumnSpec
    values: np.ndarray
    missing_mask: np.ndarray | None = None

    def missing(self) -> np.ndarray:
        """Boolean mask of rows whose value is missing."""
        if self.spec.type == "category":
            return self.values < 0
        if self.spec.type == "float":
            return cast(np.ndarray, np.isnan(self.values))
        if self.missing_mask is None:
            return np.zeros(len(self.values), dtype=bool)
        return self.missing_mask


@dataclass
class Table:
    """The declared columns of a loaded data file, and its SHA-256 (the dataset's ledger key)."""

    path: str
    sha256: str
    n_rows: int
    columns: dict[str, Column]
    ids: np.ndarray | None = None
    ids_missing: np.ndarray | None = None
    report: LoadReport = field(default_factory=LoadReport)

    def specs(self) -> dict[str, ColumnSpec]:
        """The column declarations the table was loaded with."""
        return {n: c.spec for n, c in self.columns.items()}


def file_sha256(path: str | Path, progress: Progress = NULL_PROGRESS) -> str:
    """SHA-256 of a file's bytes (the dataset key), read in blocks with progress."""
    p = Path(path)
    h = hashlib.sha256()
    try:
        total = p.stat().st_size
        done = 0
        with p.open("rb") as f:
            while block := f.read(BLOCK_BYTES):
                h.update(block)
                done += len(block)
                progress.update(done, total, "hashing")
    except OSError as exc:
        raise InputError(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    return h.hexdigest()


def load_table(
    path: str | Path,
    columns: dict[str, ColumnSpec],
    *,
    id_column: str | None = None,
    progress: Progress = NULL_PROGRESS,
    encoding: str | None = None,
    delimiter: str | None = None,
) -> Table:
    """Load the declared ``columns`` (and an optional id column) of a CSV, .xlsx or Parquet file."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), "no such file")
    if p.is_dir():
        raise InputError(str(p), "is a folder, not a data file")
    suffix = p.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        return _load_frame_file(p, columns, id_column, progress, kind="xlsx")
    if suffix in (".parquet", ".pq"):
        return _load_frame_file(p, columns, id_column, progress, kind="parquet")
    if suffix == ".xls":
        raise InputError(str(p), "old .xls workbooks are not supported; save it as .xlsx or CSV")
    return _load_csv(p, columns, id_column, progress, encoding, delimiter)


# ----------------------------------------------------------------------------- encodings


def detect_encoding(head: bytes) -> str:
    """Guess a CSV's encoding from its first bytes: UTF-8 (with or without BOM), UTF-16, GB18030, cp1252."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if len(head) >= 4:
        even_nul = head[0::2].count(0)
        odd_nul = head[1::2].count(0)
        half = len(head) // 2
        if odd_nul > half * 0.3 and even_nul < half * 0.05:
            return "utf-16-le"
        if even_nul > half * 0.3 and odd_nul < half * 0.05:
            return "utf-16-be"
    for enc in ("utf-8", "gb18030"):
        try:
            codecs.getincrementaldecoder(enc)().decode(head, final=False)
        except UnicodeDecodeError:
            continue
        return enc
    return "cp1252"


def sniff_delimiter(sample: str) -> str:
    """Pick the delimiter (comma, semicolon, tab, bar) that splits the sample's lines most consistently."""
    # Lines end at \n only, as for polars: splitlines() would also cut at a bare \r, \x0b, \u2028... in a field.
    text = sample.replace("\r\n", "\n").replace("\r", " ")
    lines = [ln for ln in text.split("\n")[:50] if ln.strip()]
    best, best_score = ",", 0.0
    for d in DELIMITERS:
        counts: list[int] = []
        try:
            for r in csv.reader(lines, delimiter=d):
                counts.append(len(r))
        except csv.Error:
            pass  # judge the records read before
        if len(counts) > 1:
            counts = counts[:-1]  # the last record of a sample may be cut short (even inside a quoted field)
        if not counts or counts[0] < 2:
            continue
        same = sum(1 for c in counts if c == counts[0]) / len(counts)
        score = same * 1000 + counts[0]
        if same >= 0.9 and score > best_score:
            best, best_score = d, score
    return best


# ----------------------------------------------------------------------------- CSV


class _Source:
    """Reads a file in blocks, hashing the raw bytes and transcoding to UTF-8 when needed."""

    def __init__(self, path: Path, encoding: str) -> None:
        self.path = path
        self.f = path.open("rb")
        self.size = path.stat().st_size
        self.read_bytes = 0
        self.hash = hashlib.sha256()
        self.encoding = encoding
        self._decoder = None if encoding == "utf-8" else codecs.getincrementaldecoder(encoding)("strict")
        self._first = True
        self._hasher: threading.Thread | None = None
        self.out_bytes = 0

    def hexdigest(self) -> str:
        """The file's SHA-256 (after the last block was read)."""
        if self._hasher is not None:
            self._hasher.join()
            self._hasher = None
        return self.hash.hexdigest()

    def expected_size(self) -> float:
        """The expected size of the whole file once transcoded to UTF-8 (from what was read so far)."""
        if self.read_bytes == 0 or self.out_bytes == 0:
            return float(self.size)
        return self.size * self.out_bytes / self.read_bytes

    def read(self) -> bytes:
        raw = self.f.read(BLOCK_BYTES)
        if self._hasher is not None:
            self._hasher.join()
        # hashlib releases the GIL: the hash of this block runs while polars parses the previous one
        self._hasher = threading.Thread(target=self.hash.update, args=(raw,), daemon=True)
        self._hasher.start()
        self.read_bytes += len(raw)
        final = not raw
        if self._decoder is None:
            out = raw
        else:
            try:
                out = self._decoder.decode(raw, final=final).encode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    str(self.path),
                    f"is not valid {self.encoding} text (bad byte near offset {self.read_bytes - len(raw) + exc.start}); "
                    "choose the file's encoding explicitly",
                ) from None
            except UnicodeError as exc:  # e.g. a stateful codec that gives up mid-file
                raise InputError(str(self.path), f"cannot be read as {self.encoding} text ({exc})") from None
        if self._first and out:
            self._first = False
            out = out.removeprefix(codecs.BOM_UTF8)
        self.out_bytes += len(out)
        return out

    def close(self) -> None:
        if self._hasher is not None:
            self._hasher.join()
        self.f.close()


def _split_records(buf: bytes) -> int:
    """Index just past the last newline of ``buf`` that lies outside double quotes, or -1.

    ``buf`` starts outside quotes. Quote parity from the start decides whether a newline is
    inside a quoted field (an escaped quote ``""`` adds two, keeping the parity).
    """
    pos = buf.rfind(b"\n")
    if pos < 0:
        return -1
    if b'"' not in buf:
        return pos + 1
    parity = buf.count(b'"', 0, pos) % 2
    while parity:
        prev = buf.rfind(b"\n", 0, pos)
        if prev < 0:
            return -1
        parity ^= buf.count(b'"', prev, pos) % 2
        pos = prev
    return pos + 1


def _first_record_end(buf: bytes) -> int:
    """Index just past the first newline of ``buf`` outside double quotes, or -1."""
    start = 0
    parity = 0
    while True:
        pos = buf.find(b"\n", start)
        if pos < 0:
            return -1
        parity ^= buf.count(b'"', start, pos) % 2
        if not parity:
            return pos + 1
        start = pos + 1


def _load_csv(
    path: Path,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    encoding: str | None,
    delimiter: str | None,
) -> Table:
    import polars as pl  # heavy; only loaded when a table is

    try:
        with path.open("rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
    if not head.strip():
        raise InputError(str(path), "the file is empty")
    enc = encoding or detect_encoding(head)
    try:
        text_codec = getattr(codecs.lookup(enc), "_is_text_encoding", True)  # not base64, zlib, rot13...
    except LookupError:
        text_codec = False
    if not text_codec:
        raise InputError(str(path), f"unknown encoding {enc!r}")
    if enc in ("utf-8", "utf8"):
        enc = "utf-8"
    elif enc == "utf-8-sig":
        enc = "utf-8"  # the BOM is dropped by _Source
    try:
        head_text = codecs.getincrementaldecoder(enc)("replace").decode(head, final=False).lstrip("\ufeff")
    except UnicodeError as exc:  # not a decoding error: e.g. UTF-16 named but no byte-order mark
        raise InputError(
            str(path), f"cannot be read as {enc} text ({exc}); choose another encoding"
        ) from None
    delim = delimiter or sniff_delimiter(head_text)
    if len(delim) != 1:
        raise InputError(str(path), f"the delimiter must be a single character (got {delim!r})")
    if enc == "utf-8" and STREAM_UTF8:
        table = _stream_csv(pl, path, head, columns, id_column, progress, delim)
        if table is not None:
            return table
    report = LoadReport(encoding=enc, delimiter=delim)

    src = _Source(path, enc)
    try:
        return _read_csv_pieces(pl, src, path, columns, id_column, progress, report, delim)
    finally:
        src.close()


class _Hasher(threading.Thread):
    """SHA-256 of a file in a thread of its own (hashlib releases the GIL), noting whether it holds a quote."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.hash = hashlib.sha256()
        self.quoted = False
        self.error: OSError | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        buf = bytearray(HASH_READ_BYTES)
        view = memoryview(buf)
        try:
            with self.path.open("rb", buffering=0) as f:
                while not self.stop.is_set() and (n := f.readinto(buf)):
                    self.hash.update(view[:n])
                    if not self.quoted and buf.find(b'"', 0, n) >= 0:
                        self.quoted = True
        except OSError as exc:
            self.error = exc


#: Polars names the column of a field it cannot parse as the declared type like this.
_BAD_FIELD = re.compile(r"at column '(c\d+)'")


def _stream_csv(
    pl: Any,
    path: Path,
    head: bytes,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    delim: str,
) -> Table | None:
    """The fast path for UTF-8 files: polars' streaming reader with the declared types, batch by batch.

    As fast as one ``polars.read_csv`` of the whole file with the declared schema, at about half its
    peak memory (batches go into the preallocated numpy columns as they come). A column whose fields do
    not all fit their declared type (a word in a number column, an undeclared category) is read again as
    text, which counts and locates every problem; anything else unusual (ragged lines, blank lines,
    invalid UTF-8) returns None, and the block reader, which explains each problem with its line, reads
    the file instead. The SHA-256 runs meanwhile in a thread.
    """
    body = head.removeprefix(codecs.BOM_UTF8)
    cut = _first_record_end(body)
    if cut < 0 or body.count(b"\n", 0, cut) != 1:
        return None  # a header longer than the first 64 KiB, or with a quoted newline: the block reader
    header = _parse_header(body[:cut], path, delim)
    wanted = _match_columns(header, columns, id_column, path)
    size = path.stat().st_size
    data_head = body[cut:]
    lines_in_head = data_head.count(b"\n")
    bytes_per_row = len(data_head) / lines_in_head if lines_in_head else float(size)
    typed = _typed_schema(pl, header, wanted, columns)
    # polars' chunk size decides how much of the file is in flight: 8 MiB measured the fastest of 2-16 MiB
    # on 10M rows with peak memory 0.8x a plain polars.read_csv (benchmarks/RESULTS.md); read when a scan
    # starts, so setting it here is enough (a value the user set wins)
    os.environ.setdefault("POLARS_CSV_CHUNK_SIZE", str(STREAM_CHUNK_BYTES))
    as_text: set[str] = set()
    hasher = _Hasher(path)  # one pass over the file, whatever the attempts below
    hasher.start()
    try:
        return _stream_attempts(
            pl, path, columns, delim, header, wanted, typed, as_text, hasher, size, bytes_per_row, progress
        )
    finally:
        hasher.stop.set()  # a no-op once it is done; stops it when the block reader takes over or on error
        hasher.join()


def _stream_attempts(
    pl: Any,
    path: Path,
    columns: dict[str, ColumnSpec],
    delim: str,
    header: list[str],
    wanted: list[tuple[int, str]],
    typed: dict[str, Any],
    as_text: set[str],
    hasher: _Hasher,
    size: int,
    bytes_per_row: float,
    progress: Progress,
) -> Table | None:
    """Stream the file; a column that does not fit its type is read as text in a new attempt."""
    id_column = next((name for _, name in wanted if name not in columns), None)
    for _attempt in range(len(wanted) + 1):
        schema = {k: (pl.String if k in as_text else t) for k, t in typed.items()}
        report = LoadReport(encoding="utf-8", delimiter=delim)
        builders = {name: _ColumnBuilder(columns[name], report) for _, name in wanted if name in columns}
        id_parts: list[np.ndarray] = []
        id_missing_parts: list[np.ndarray] = []
        all_null_row = False
        n_rows = 0
        try:
            lf = pl.scan_csv(
                path,
                has_header=False,
                skip_rows=1,
                schema=schema,
                separator=delim,
                encoding="utf8",
                truncate_ragged_lines=False,
                ignore_errors=False,
                raise_if_empty=False,
            ).select(_stream_exprs(pl, wanted, columns, as_text))
            # every field is parsed (no projection pushdown): polars checks the number of fields of a
            # line only then, and a line with a field too many must not shift into the wrong columns
            batches = lf.collect_batches(optimizations=pl.QueryOptFlags(projection_pushdown=False))
            for frame in batches:
                rows = frame.height
                if n_rows == 0 and rows:
                    expected = int(size / bytes_per_row * 1.02) + 1024
                    for b in builders.values():
                        b.reserve(expected)
                if n_rows + rows > MAX_ROWS:
                    raise InputError(
                        str(path), f"more than {MAX_ROWS} rows; dpdesk handles at most that many"
                    )
                empties: list[np.ndarray | None] = []  # each column's empty fields (None: none)
                for i, name in wanted:
                    s = frame.get_column(f"c{i}")
                    if name not in builders:
                        id_parts.append(np.column_stack([s.to_numpy(), frame.get_column(f"h{i}").to_numpy()]))
                        id_missing_parts.append(frame.get_column(f"m{i}").to_numpy())
                        empties.append(id_missing_parts[-1])
                    elif f"c{i}" in as_text:
                        builders[name].add(s)
                        empties.append(s.is_null().to_numpy())
                    elif s.null_count() == 0:  # the usual case: a zero-copy view, no mask
                        builders[name].add_clean(s.to_numpy())
                        empties.append(None)
                    else:
                        null = s.is_null().to_numpy()
                        builders[name].add_converted(s.fill_null(builders[name].fill).to_numpy(), null)
                        empties.append(null)
                if len(header) > 1 and not all_null_row and _some_row_all_true(empties):
                    all_null_row = True  # a blank line, or a line of empty fields: told apart below
                n_rows += rows
                progress.update(min(int(n_rows * bytes_per_row), size - 1), size, "reading")
        except (InputError, Cancelled):
            raise
        except Exception as exc:  # noqa: BLE001 - polars raises several exception types for malformed input
            bad = _BAD_FIELD.search(str(exc))
            if bad and bad.group(1) not in as_text and int(bad.group(1)[1:]) in dict(wanted):
                as_text.add(bad.group(1))
                continue
            return None
        hasher.join()
        if hasher.error is not None:
            raise InputError(str(path), f"cannot read the file: {hasher.error.strerror or hasher.error}")
        if all_null_row and _has_blank_line(path):
            return None  # blank lines are no records: the block reader drops them
        exact_lines = not hasher.quoted or (
            not any(b.first_record is not None for b in builders.values()) or _lines_are_records(path, n_rows)
        )
        progress.update(size, size, "reading")
        return _finish(
            path,
            hasher.hash.hexdigest(),
            n_rows,
            builders,
            id_parts,
            id_missing_parts,
            report,
            id_column,
            _record_place(exact_lines),
        )
    return None


def _stream_exprs(
    pl: Any, wanted: list[tuple[int, str]], columns: dict[str, ColumnSpec], as_text: set[str]
) -> list[Any]:
    """The streaming query's columns: each declared column already in its compact type (the work runs in
    polars' threads, batch by batch), empty fields still null; for the id column also ``m<i>``, its empties."""
    exprs = []
    for i, name in wanted:
        c = pl.col(f"c{i}")
        spec = columns.get(name)
        if spec is None:  # the id column
            exprs += [e.alias(n) for e, n in zip(_id_exprs(pl, c), (f"c{i}", f"h{i}", f"m{i}"), strict=True)]
        elif f"c{i}" in as_text:
            exprs.append(c)
        elif spec.type == "category":  # parsed as an Enum: null only for an empty field
            exprs.append(c.to_physical().alias(f"c{i}"))  # stored as int16 codes
        else:  # ints are clamped to their bounds as they are stored (one pass, see _ColumnBuilder._put)
            exprs.append(c)
    return exprs


def _some_row_all_true(masks: list[np.ndarray | None]) -> bool:
    """Whether some row is True in every mask (None: a mask with no True; the usual case, and cheap)."""
    full = [m for m in masks if m is not None]
    if not masks or len(full) < len(masks):
        return False
    acc = full[0]
    for m in full[1:]:
        if not acc.any():
            return False
        acc = acc & m
    return bool(acc.any())


def _has_blank_line(path: Path) -> bool:
    """Whether a line of the file (after the header) is empty."""
    tail = b""
    with path.open("rb") as f:
        while block := f.read(BLOCK_BYTES):
            chunk = tail + block
            if b"\n\n" in chunk or b"\n\r\n" in chunk:
                return True
            tail = chunk[-2:]
    return False


def _lines_are_records(path: Path, n_rows: int) -> bool:
    """Whether the file has one line per record (no quoted newline): its data lines number ``n_rows``."""
    newlines = 0
    last = b""
    with path.open("rb") as f:
        while block := f.read(BLOCK_BYTES):
            newlines += block.count(b"\n")
            last = block[-1:]
    return newlines - 1 + (0 if last == b"\n" else 1) == n_rows


def _read_csv_pieces(
    pl: Any,
    src: _Source,
    path: Path,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    report: LoadReport,
    delim: str,
) -> Table:
    buf = b""
    header: list[str] | None = None
    wanted: list[tuple[int, str]] = []
    builders: dict[str, _ColumnBuilder] = {}
    id_parts: list[np.ndarray] = []
    id_missing_parts: list[np.ndarray] = []
    line = 1  # physical line number of the next piece's first line
    head_bytes = b""
    schema: dict[str, Any] | None = None
    n_rows = 0
    eof = False
    exact_lines = True
    while True:
        if not eof:
            block = src.read()
            if not block:
                eof = True
            buf += block
            progress.update(src.read_bytes, src.size, "reading")
        if header is None:
            cut = _first_record_end(buf)
            if cut < 0 and not eof:
                if len(buf) > MAX_RECORD_BYTES:
                    raise InputError(
                        str(path), "the header line is too long or has an unclosed quote", line=1
                    )
                continue
            head_bytes = buf[:cut] if cut >= 0 else buf
            buf = buf[cut:] if cut >= 0 else b""
            header = _parse_header(head_bytes, path, delim)
            wanted = _match_columns(header, columns, id_column, path)
            builders = {name: _ColumnBuilder(columns[name], report) for _, name in wanted if name in columns}
            line = 2
        if eof:
            piece, buf = buf, b""
            if piece.count(b'"') % 2:
                raise InputError(str(path), "a quoted field is never closed", line=line)
        else:
            cut = _split_records(buf)
            if cut < 0:
                if len(buf) > MAX_RECORD_BYTES:
                    raise InputError(
                        str(path),
                        f"a record is longer than {MAX_RECORD_BYTES // 2**20} MiB, or a quote is never closed",
                        line=line,
                    )
                continue
            piece, buf = buf[:cut], buf[cut:]
        records = piece
        frame = None
        typed = False
        if records:
            if schema is None:
                schema = _typed_schema(pl, header, wanted, columns)
            frame = _parse_typed(pl, records, schema, wanted, delim)
            if frame is not None and len(header) > 1 and _has_all_null_row(pl, frame):
                # a blank line reads as an all-null row: drop blank lines (a scan only such pieces pay for);
                # a line of spaces or of empty fields is a record and stays
                records = _drop_blank_lines(piece)
                frame = _parse_typed(pl, records, schema, wanted, delim) if records else None
            typed = frame is not None
            if frame is None:
                records = _drop_blank_lines(piece) if len(header) > 1 else piece
                if records:
                    frame = _parse_piece(pl, records, path, head_bytes, header, wanted, delim, line)
        if frame is not None:
            rows = frame.height
            if n_rows == 0 and rows:
                # rows to expect, from this piece's bytes per row (columns are preallocated, not concatenated)
                expected = int(src.expected_size() / max(1, len(records)) * rows * 1.02) + 1024
                for b in builders.values():
                    b.reserve(expected)
            if n_rows + rows > MAX_ROWS:
                raise InputError(str(path), f"more than {MAX_ROWS} rows; dpdesk handles at most that many")
            for _, name in wanted:
                s = frame.get_column(name)
                if name in builders:
                    if typed:
                        builders[name].add_typed(s)
                    else:
                        builders[name].add(s)
                else:
                    ids, miss = _id_hashes(s)
                    id_parts.append(ids)
                    id_missing_parts.append(miss)
            n_rows += rows
        if typed and records is piece and b'"' not in piece and frame is not None:
            line += frame.height  # one line per record: no quoted newlines, no blank lines here
        else:
            newlines = piece.count(b"\n")
            line += newlines
            lines_here = newlines + (0 if piece.endswith(b"\n") else 1) if piece else 0
            if records is not piece or (frame.height if frame is not None else 0) != lines_here:
                exact_lines = False  # a dropped blank line or a quoted newline: records are not lines
        if eof:
            break
    assert header is not None
    progress.update(src.size, src.size, "reading")
    return _finish(
        path,
        src.hexdigest(),
        n_rows,
        builders,
        id_parts,
        id_missing_parts,
        report,
        id_column,
        _record_place(exact_lines),
    )


def _record_place(exact_lines: bool) -> Callable[[int], str]:
    """How to name data record ``r`` (0-based) to the curator: its line when records are lines."""
    if exact_lines:
        return lambda r: f"line {r + 2}"
    return lambda r: f"record {r + 1} after the header"


def _has_all_null_row(pl: Any, frame: pl.DataFrame) -> bool:
    """Whether some row has every selected field empty (what polars makes of a blank line)."""
    if frame.height == 0 or frame.width == 0:
        return False
    return bool(frame.select(pl.all_horizontal(pl.all().is_null())).to_series().any())


def _drop_blank_lines(piece: bytes) -> bytes:
    """``piece`` without its empty lines outside quoted fields (``piece`` starts outside quotes).

    In a file of several columns an empty line is no record: polars would read it as a row of
    missing values, or fail when it opens a piece, so results would depend on where blocks split.
    """
    # plain substring scans (memchr-fast); a regex with an alternation is ~20x slower here
    if not (piece.startswith((b"\n", b"\r\n")) or b"\n\n" in piece or b"\n\r\n" in piece):
        return piece
    kept = []
    parity = 0
    for ln in piece.split(b"\n"):
        if parity or ln not in (b"", b"\r"):
            kept.append(ln)
        parity ^= ln.count(b'"') % 2
    return b"\n".join(kept)


def _parse_header(head: bytes, path: Path, delim: str) -> list[str]:
    text = head.decode("utf-8", errors="replace").rstrip("\r\n")
    try:
        rows = list(csv.reader([text], delimiter=delim))
    except csv.Error as exc:
        raise InputError(str(path), f"cannot read the header: {exc}", line=1) from None
    if not rows or not rows[0]:
        raise InputError(str(path), "the header line is empty", line=1)
    return [h.strip() for h in rows[0]]


def _match_columns(
    header: list[str], columns: dict[str, ColumnSpec], id_column: str | None, path: Path
) -> list[tuple[int, str]]:
    names = list(columns) + ([id_column] if id_column else [])
    out: list[tuple[int, str]] = []
    missing = []
    for name in names:
        idx = [i for i, h in enumerate(header) if h == name]
        if not idx:
            missing.append(name)
        elif len(idx) > 1:
            raise InputError(str(path), f"the header names column {name!r} {len(idx)} times", line=1)
        else:
            out.append((idx[0], name))
    if missing:
        shown = ", ".join(repr(h) for h in header[:30]) + (" …" if len(header) > 30 else "")
        raise InputError(
            str(path),
            f"declared column(s) {', '.join(repr(m) for m in missing)} not found in the header; "
            f"the file has: {shown}",
            line=1,
        )
    return out


def _typed_schema(
    pl: Any, header: list[str], wanted: list[tuple[int, str]], columns: dict[str, ColumnSpec]
) -> dict[str, Any]:
    """A polars schema for every field: the declared types for declared columns, text for the rest."""
    types = dict(wanted)
    schema: dict[str, Any] = {}
    for i in range(len(header)):
        spec = columns.get(types.get(i, ""))
        if spec is None:
            schema[f"c{i}"] = pl.String
        elif spec.type == "category":
            schema[f"c{i}"] = pl.Enum(list(spec.categories or ()))
        elif spec.type == "int":
            # one size above what the bounds need, so out-of-bounds codes such as 999 still parse (and are
            # clamped); narrower than Int64 is less for polars to write (a field that does not fit is read
            # again as text, which clamps it)
            assert spec.bounds is not None
            stored = _int_dtype(spec.bounds)
            schema[f"c{i}"] = {np.int8: pl.Int16, np.int16: pl.Int32}.get(stored, pl.Int64)
        else:
            schema[f"c{i}"] = pl.Float64
    return schema


def _parse_typed(
    pl: Any, piece: bytes, schema: dict[str, Any], wanted: list[tuple[int, str]], delim: str
) -> pl.DataFrame | None:
    """The fast path: parse a piece straight into the declared types; None if any field does not fit.

    Clean pieces (the usual case) never build a text column. A piece with an unparsable number, an
    undeclared or space-padded category, a ragged line or anything else unusual returns None and is
    read again as text by :func:`_parse_piece`, which counts and locates each problem.
    """
    try:
        frame = pl.read_csv(
            piece,
            has_header=False,
            separator=delim,
            schema=schema,
            truncate_ragged_lines=False,
            raise_if_empty=False,
            encoding="utf8",
            ignore_errors=False,
        )
    except Exception:  # noqa: BLE001 - any parse problem: the text path explains it
        return None
    # every field is parsed, not only the wanted ones: polars checks a line's number of fields only
    # then, and a line with a field too many would otherwise shift silently into the wrong columns
    if frame.width != len(schema):
        return None
    return cast("polars.DataFrame", frame.select([pl.col(f"c{i}").alias(name) for i, name in wanted]))


def _parse_piece(
    pl: Any,
    piece: bytes,
    path: Path,
    head_bytes: bytes,
    header: list[str],
    wanted: list[tuple[int, str]],
    delim: str,
    line: int,
) -> pl.DataFrame:
    # The header line goes first so that polars takes the number of fields from it, not from the
    # piece's first line (a short line there failed the piece); its row is then dropped.
    head = head_bytes if head_bytes.endswith(b"\n") else head_bytes + b"\n"
    try:
        frame = pl.read_csv(
            head + piece,
            has_header=False,
            separator=delim,
            infer_schema=False,
            truncate_ragged_lines=False,
            raise_if_empty=False,
            encoding="utf8",
        )
    except Exception as exc:  # noqa: BLE001 - polars raises several exception types for malformed input
        at, fields = _long_record(piece, len(header), delim)
        if at is not None:
            raise InputError(
                str(path),
                f"this line has {fields} fields, but the header names {len(header)}",
                line=line + at,
            ) from None
        raise InputError(str(path), _polars_message(exc, line), line=line) from None
    if frame.width != len(header):
        raise InputError(str(path), f"expected {len(header)} fields per line", line=line)
    frame = frame.slice(1)
    return cast(
        "polars.DataFrame", frame.select([pl.col(frame.columns[i]).alias(name) for i, name in wanted])
    )


def _long_record(piece: bytes, n_fields: int, delim: str) -> tuple[int | None, int]:
    """The line offset in ``piece`` where the first record with more than ``n_fields`` fields starts."""
    reader = csv.reader(io.StringIO(piece.decode("utf-8", errors="replace"), newline=""), delimiter=delim)
    start = 0
    try:
        for row in reader:
            if len(row) > n_fields:
                return start, len(row)
            start = reader.line_num
    except csv.Error:
        pass
    return None, 0


def _polars_message(exc: Exception, line: int) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "utf-8" in text.lower() or "utf8" in text.lower():
        return "contains bytes that are not valid UTF-8 at or after this line; choose the file's encoding explicitly"
    return f"cannot parse the records starting at this line ({text[:200]})"


def _id_hashes(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Hash id strings to 128 bits (an (n, 2) uint64 array) and mark the empty ones."""
    import polars as pl

    frame = s.to_frame("id").select(_id_exprs(pl, pl.col("id")))
    return np.column_stack([frame.to_series(0).to_numpy(), frame.to_series(1).to_numpy()]), frame.to_series(
        2
    ).to_numpy()


def _id_exprs(pl: Any, col: Any) -> tuple[Any, Any, Any]:
    """An id's 128-bit keyed hash (two 64-bit halves) and whether it is empty; one definition for every reader.

    Two people whose ids collide would be merged into one, whose rows are bounded together: a
    neighbour that adds one of them could then change up to 2k kept rows, twice the sensitivity.
    Each half is polars' hash under its own secret 64-bit seed from the operating system's
    cryptographic generator (made once per process, never stored or shown), so colliding ids cannot
    be crafted without the seeds, and for distinct ids a collision anywhere among the 2^31 rows dpdesk
    accepts has probability about 2^61 / 2^128 = 2^-67.
    """
    text = col.cast(pl.String).str.strip_chars()
    return (
        text.hash(seed=_ID_SEEDS[0]).alias("hash"),
        text.hash(seed=_ID_SEEDS[1]).alias("hash2"),
        (text.is_null() | (text.str.len_bytes() == 0)).alias("empty"),
    )


_ID_SEEDS = (secrets.randbits(64), secrets.randbits(64))


class _ColumnBuilder:
    """Converts parsed pieces of one column into its compact numpy form."""

    def __init__(self, spec: ColumnSpec, report: LoadReport) -> None:
        self.spec = spec
        self.parts: list[np.ndarray] = []
        self.miss_parts: list[np.ndarray] = []
        self.issues = report.issues.setdefault(spec.name, ColumnIssues())
        if spec.type == "int":
            assert spec.bounds is not None
            self.dtype = _int_dtype(spec.bounds)
        self.buf: np.ndarray | None = None  # preallocated values (see reserve), filled up to self.n
        self.miss_buf: np.ndarray | None = None
        self.n = 0
        self.first_record: int | None = None  # 0-based index of the first data record with a problem

    def reserve(self, rows: int) -> None:
        """Preallocate room for about ``rows`` values (grown by half again when exceeded)."""
        self.buf = _prefaulted(rows, self._empty_dtype())
        if self.spec.type == "int":
            self.miss_buf = np.zeros(rows, dtype=bool)  # untouched (zero) pages until a value is missing

    def _put(self, values: np.ndarray, miss: np.ndarray | None, clip: tuple[int, int] | None = None) -> None:
        """Append ``values`` (clamped to ``clip`` first, in the same pass as the copy, when given)."""
        if self.buf is None:
            if clip is not None:
                self._count_clamped(values)
                values = np.clip(values, *clip).astype(self._empty_dtype())
            self.parts.append(values)
            if self.spec.type == "int":
                self.miss_parts.append(miss if miss is not None else np.zeros(len(values), dtype=bool))
            return
        m = len(values)
        if self.n + m > len(self.buf):
            size = max(self.n + m, len(self.buf) * 3 // 2)
            bigger = np.empty(size, dtype=self.buf.dtype)
            bigger[: self.n] = self.buf[: self.n]
            self.buf = bigger
            if self.miss_buf is not None:
                more = np.zeros(size, dtype=bool)
                more[: self.n] = self.miss_buf[: self.n]
                self.miss_buf = more
        if clip is not None:
            self._count_clamped(values)
            np.clip(values, *clip, out=self.buf[self.n : self.n + m], casting="unsafe")
        else:
            self.buf[self.n : self.n + m] = values
        if self.miss_buf is not None and miss is not None:
            self.miss_buf[self.n : self.n + m] = miss
        self.n += m

    def add_typed(self, s: pl.Series) -> None:
        """A piece parsed straight into the declared type: only empty fields can be missing."""
        import polars as pl

        nulls = s.null_count()
        null = s.is_null().to_numpy() if nulls else None
        if nulls:
            self._note("missing", null, nulls)  # type: ignore[arg-type]
        if self.spec.type == "category":
            self._put(s.to_physical().cast(pl.Int16).fill_null(-1).to_numpy(), None)
        elif self.spec.type == "float":
            x = s.to_numpy() if not nulls else s.fill_null(float("nan")).to_numpy()
            nan = np.isnan(x)
            if null is not None:
                nan &= ~null
            n_nan = int(nan.sum())
            if n_nan:  # a literal NaN is no number: counted like the text path counts it
                self._note("unparsable", nan, n_nan)
            self._put(x, None)
        else:
            lo, hi = self.spec.bounds  # type: ignore[misc]
            x = s.fill_null(int(lo)).to_numpy() if nulls else s.to_numpy()
            miss = null if null is not None else np.zeros(len(x), dtype=bool)
            self._count_clamped(x)
            self._put(np.clip(x, int(lo), int(hi)).astype(self.dtype), miss)

    @property
    def fill(self) -> float | int:
        """What an empty field becomes before it is masked: -1 (no category), the lower bound, or NaN."""
        if self.spec.type == "category":
            return -1
        if self.spec.type == "int":
            assert self.spec.bounds is not None
            return int(self.spec.bounds[0])
        return float("nan")

    def add_clean(self, values: np.ndarray) -> None:
        """Values in the column's compact form, none of them empty (see _stream_exprs)."""
        if self.spec.type == "float" and not np.isfinite(np.add.reduce(values)):
            nan = np.isnan(values)  # a literal NaN is no number: counted like the text path counts it
            n_nan = int(np.count_nonzero(nan))
            if n_nan:
                self._note("unparsable", nan, n_nan)
        self._put(values, None, self._clip())

    def add_converted(self, values: np.ndarray, null: np.ndarray | None) -> None:
        """Values already in the column's compact form (see _stream_exprs), with the mask of empty fields
        (for categories, the empty fields are the -1 codes)."""
        assert null is not None
        nulls = int(np.count_nonzero(null))
        if nulls:
            self._note("missing", null, nulls)
        if self.spec.type == "float":
            nan = np.isnan(values)
            if nulls:
                nan &= ~null
            n_nan = int(np.count_nonzero(nan))
            if n_nan:  # a literal NaN is no number: counted like the text path counts it
                self._note("unparsable", nan, n_nan)
            self._put(values, None)
        elif self.spec.type == "int":
            self._put(values, null, self._clip())
        else:
            self._put(values, None)

    def _clip(self) -> tuple[int, int] | None:
        """The bounds an int column's values are clamped to as they are stored."""
        if self.spec.type != "int":
            return None
        assert self.spec.bounds is not None
        return int(self.spec.bounds[0]), int(self.spec.bounds[1])

    def _count_clamped(self, values: np.ndarray) -> None:
        """Count the int column's values outside its bounds, about to be clamped (no NaN here: missing
        values are filled with the lower bound first). Two fast reductions per batch; the count only when
        one is out."""
        lo, hi = self._clip()  # type: ignore[misc]
        if len(values) and (values.min() < lo or values.max() > hi):
            self.issues.clamped += int(np.count_nonzero(values < lo) + np.count_nonzero(values > hi))

    def _note(self, kind: str, mask: np.ndarray, count: int) -> None:
        setattr(self.issues, kind, getattr(self.issues, kind) + count)
        if self.first_record is None and count:
            self.first_record = self.n + int(np.argmax(mask))  # values are put after their notes

    def add(self, s: pl.Series) -> None:
        import polars as pl

        if s.dtype == pl.String:  # a blank or whitespace-only cell is empty, not unparsable
            s = s.str.strip_chars().replace("", None)
        null = s.is_null().to_numpy()
        n_null = int(null.sum())
        if n_null:
            self._note("missing", null, n_null)
        if self.spec.type == "category":
            assert self.spec.categories is not None
            text = s if s.dtype == pl.String else s.cast(pl.String)
            codes_s = text.str.strip_chars().cast(pl.Enum(list(self.spec.categories)), strict=False)
            codes = codes_s.to_physical().fill_null(-1).to_numpy().astype(np.int16)
            bad = (codes < 0) & ~null
            n_bad = int(bad.sum())
            if n_bad:
                self._note("undeclared", bad, n_bad)
            self._put(codes, None)
            return
        if s.dtype == pl.String:
            x = s.str.strip_chars().cast(pl.Float64, strict=False).to_numpy()
        elif s.dtype.is_numeric() or s.dtype == pl.Boolean:
            x = s.cast(pl.Float64, strict=False).to_numpy()
        else:
            x = s.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False).to_numpy()
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        if self.spec.type == "int":
            with np.errstate(invalid="ignore"):
                frac = np.isfinite(x) & (x != np.floor(x))
            bad = (nan & ~null) | frac
        else:
            bad = nan & ~null
        n_bad = int(bad.sum())
        if n_bad:
            self._note("unparsable", bad, n_bad)
        if self.spec.type == "float":  # already NaN where bad; x may be a read-only view of polars memory
            self._put(x, None)
            return
        miss = nan | frac
        lo, hi = self.spec.bounds  # type: ignore[misc]
        filled = np.where(miss, lo, x)
        self._count_clamped(filled)
        self._put(np.clip(filled, lo, hi).astype(self.dtype), miss)

    def finish(self) -> Column:
        if self.buf is not None:
            if len(self.buf) > self.n:  # give the slack back, in place when nothing else holds the array
                try:
                    self.buf.resize(self.n, refcheck=False)
                except ValueError:  # a view (of a prefaulted map): keep it unless the slack is large
                    if len(self.buf) > self.n * 1.25 + 4096:
                        self.buf = self.buf[: self.n].copy()
            values = self.buf[: self.n]
            m = None if self.miss_buf is None else self.miss_buf[: self.n]
        else:
            values = _concat(self.parts, self._empty_dtype())
            m = _concat(self.miss_parts, np.dtype(bool)) if self.spec.type == "int" else None
        self.parts, self.miss_parts, self.buf, self.miss_buf = [], [], None, None
        mask = None
        if self.spec.type == "int" and m is not None and m.any():
            mask = m.copy() if m.base is not None else m
        return Column(self.spec, values, mask)

    def _empty_dtype(self) -> np.dtype[Any]:
        if self.spec.type == "category":
            return np.dtype(np.int16)
        if self.spec.type == "int":
            return np.dtype(self.dtype)
        return np.dtype(np.float64)


def _prefaulted(n: int, dtype: np.dtype[Any]) -> np.ndarray:
    """An uninitialised array whose pages the kernel maps in one call (``MAP_POPULATE``), not one fault each.

    The columns are filled batch by batch while polars keeps both cores busy; faulting 257 MiB in page by
    page measured 0.2-0.5 CPU-s for 10M rows (with numpy's huge-page advice, the kernel also compacts memory
    at each fault). Where the flag is missing (not Linux), a plain ``np.empty`` with small pages.
    """
    flag = getattr(mmap, "MAP_POPULATE", 0)
    private, anonymous = getattr(mmap, "MAP_PRIVATE", 0), getattr(mmap, "MAP_ANONYMOUS", 0)
    if flag and private and anonymous and n > 0:
        try:
            m = mmap.mmap(-1, n * dtype.itemsize, flags=private | anonymous | flag)
            return np.frombuffer(m, dtype=dtype, count=n)
        except (OSError, ValueError):
            pass
    with _small_pages():
        return np.empty(n, dtype=dtype)


@contextlib.contextmanager
def _small_pages() -> Iterator[None]:
    """Allocate without numpy's transparent-huge-page advice.

    The columns are filled batch by batch, so every page is faulted in once; with the advice the kernel
    compacts memory to find huge pages at each fault, which measured about 0.5 CPU-s more for a
    10M-row table on the benchmark machine (benchmarks/RESULTS.md). A private numpy switch: without it
    nothing changes.
    """
    mod = getattr(getattr(np, "_core", None), "multiarray", None)
    get, set_ = getattr(mod, "_get_madvise_hugepage", None), getattr(mod, "_set_madvise_hugepage", None)
    if get is None or set_ is None:
        yield
        return
    before = set_(False)
    try:
        yield
    finally:
        set_(before)


def _int_dtype(bounds: tuple[float, float]) -> type[np.signedinteger[Any]]:
    for dt in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        if info.min <= bounds[0] and bounds[1] <= info.max:
            return dt
    return np.int64


def _concat(parts: list[np.ndarray], dtype: np.dtype[Any]) -> np.ndarray:
    if not parts:
        return np.empty(0, dtype=dtype)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts)


def _finish(
    path: Path,
    sha: str,
    n_rows: int,
    builders: dict[str, _ColumnBuilder],
    id_parts: list[np.ndarray],
    id_missing_parts: list[np.ndarray],
    report: LoadReport,
    id_column: str | None,
    where: Callable[[int], str],
) -> Table:
    for b in builders.values():
        if b.first_record is not None:
            b.issues.first_problem = where(b.first_record)
    cols = {name: b.finish() for name, b in builders.items()}
    ids = ids_missing = None
    if id_column is not None:
        ids = _concat(id_parts, np.dtype(np.uint64)).reshape(-1, 2)
        ids_missing = _concat(id_missing_parts, np.dtype(bool))
    return Table(str(path), sha, n_rows, cols, ids, ids_missing, report)


# ----------------------------------------------------------------------------- xlsx, Parquet


def _check_xlsx(path: Path, copy_to: Path | None = None) -> None:
    """Refuse a workbook that is not a sound zip or may be a zip bomb; with ``copy_to``, write the
    checked parts there as a new zip, inflated and stored (not recompressed), for calamine to read.

    Python's zipfile and calamine's zip reader can find different parts in a crafted archive (they
    locate the central directory differently after prepended bytes, or with several end records,
    and pick differently among duplicate names): a workbook checked here could show calamine an
    unchecked bomb. Reading the copy, calamine only ever sees the bytes this check inflated.
    """
    import errno
    import shutil

    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except zipfile.BadZipFile:
        raise InputError(str(path), "is not a valid .xlsx workbook (not a zip archive)") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
    unpacked = sum(i.file_size for i in infos)
    packed = max(1, os.path.getsize(path))
    if unpacked > MAX_XLSX_UNPACKED or (unpacked / packed > MAX_XLSX_RATIO and unpacked > 50 * 2**20):
        raise InputError(
            str(path),
            f"the workbook would unpack to {unpacked / 2**20:.0f} MiB from {packed / 2**20:.1f} MiB; "
            "refused as a possible zip bomb (export it as CSV instead)",
        )
    # The sizes above are only what the archive declares: calamine's zip reader inflates a part until
    # its deflate stream ends, whatever size was declared (a 3 GiB stream declared as 629 bytes made it
    # abort the process on a failed allocation). So inflate every part here, counting the real bytes,
    # and refuse any part that comes out at another size than declared: then the real total is the
    # declared total checked above, and no part is inflated much beyond its declared size.
    seen: set[str] = set()
    for info in infos:
        key = info.filename.casefold()  # part names are case-insensitive in a workbook (OPC)
        if key in seen:
            raise InputError(
                str(path),
                f"is not a valid .xlsx workbook (the part {info.filename!r} appears twice in the "
                "archive); refused as possibly forged",
            )
        seen.add(key)
    no_room = ""
    if copy_to is not None:
        no_room = (
            f"there is not enough free disk space in {copy_to.parent} to check the workbook (it needs "
            f"{unpacked / 2**20:.0f} MiB there while loading); free some space and try again"
        )
        with contextlib.suppress(OSError):
            if shutil.disk_usage(copy_to.parent).free < unpacked + 2**20:
                raise InputError(str(path), no_room)
    try:
        with (
            open(path, "rb") as f,
            zipfile.ZipFile(copy_to, "w") if copy_to is not None else contextlib.nullcontext() as out,
        ):
            for info in infos:
                _check_xlsx_part(path, f, info, out)
    except OSError as exc:
        if no_room and exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG):
            raise InputError(str(path), no_room) from None  # only writing the copy runs out of room
        raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from None


def _check_xlsx_part(
    path: Path, f: io.BufferedReader, info: zipfile.ZipInfo, out: zipfile.ZipFile | None = None
) -> None:
    """Refuse a workbook part that is encrypted, oddly compressed, damaged, or not its declared size;
    with ``out``, write it there as it is inflated (stored, in chunks: never a whole part in memory)."""
    import zlib

    name, declared = info.filename, info.file_size
    if info.flag_bits & 0x1:
        raise InputError(str(path), f"the workbook part {name!r} is encrypted; save the workbook unprotected")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise InputError(
            str(path),
            f"the workbook part {name!r} uses zip compression method {info.compress_type}, "
            "which .xlsx workbooks do not use; refused",
        )
    damaged = f"is not a valid .xlsx workbook (the part {name!r} is damaged)"
    stored = info.compress_type == zipfile.ZIP_STORED or info.compress_size == 0
    if stored and info.compress_size != declared:  # the reader copies exactly the compressed bytes
        raise InputError(
            str(path),
            f"the workbook part {name!r} unpacks to {info.compress_size} bytes, not the {declared} bytes "
            "its header declares; the workbook is damaged or forged",
        )
    # Read the raw data from where the local header says it starts (as calamine's zip reader does),
    # never more than the directory's compressed size, and inflate it in chunks.
    f.seek(info.header_offset)
    head = f.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise InputError(str(path), damaged)
    f.seek(int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little"), io.SEEK_CUR)
    copy = zipfile.ZipInfo(name)
    copy.file_size = declared  # known up front, so the writer picks zip64 for a part over 2 GiB
    crc = 0
    with out.open(copy, "w") if out is not None else contextlib.nullcontext() as w:
        left, data, real = info.compress_size, b"", 0
        if stored:
            while left:
                data = f.read(min(left, XLSX_CHECK_CHUNK))
                if not data:
                    raise InputError(str(path), damaged)  # the file ends before the part does
                left -= len(data)
                real += len(data)
                if w is not None:
                    w.write(data)
                else:
                    crc = zlib.crc32(data, crc)
        else:
            inflater = zlib.decompressobj(-15)
            try:
                while not inflater.eof:
                    if not data and left:
                        data = f.read(min(left, XLSX_CHECK_CHUNK))
                        left = left - len(data) if data else 0
                    chunk = inflater.decompress(data, XLSX_CHECK_CHUNK)
                    data = inflater.unconsumed_tail
                    real += len(chunk)
                    if real > declared:
                        raise InputError(
                            str(path),
                            f"the workbook part {name!r} unpacks to more than the {declared} bytes its "
                            "header declares; refused as a possible zip bomb (export it as CSV instead)",
                        )
                    if not chunk and not data and not left:
                        raise InputError(str(path), damaged)  # the stream stops before its end
                    if w is not None:
                        w.write(chunk)
                    else:
                        crc = zlib.crc32(chunk, crc)
            except zlib.error:
                raise InputError(str(path), damaged) from None
        if real != declared:
            raise InputError(
                str(path),
                f"the workbook part {name!r} unpacks to {real} bytes, not the {declared} bytes its header "
                "declares; the workbook is damaged or forged",
            )
    if (copy.CRC if w is not None else crc) != info.CRC:  # the copy carries a fresh checksum: check it here
        raise InputError(str(path), damaged)


def _read_checked_xlsx(pl: Any, path: Path) -> pl.DataFrame:
    """The first sheet, read by calamine from the copy the check wrote, never from the file itself.

    Python's zipfile and calamine's zip reader can be shown different parts by a crafted archive, so
    calamine only ever sees the parts _check_xlsx inflated and checked (see tests/trust/test_xlsx_bomb.py).
    """
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix="dpdesk-", suffix=".xlsx")
    except OSError as exc:
        raise InputError(
            str(path), f"cannot create a temporary file to check the workbook: {exc.strerror or exc}"
        ) from None
    os.close(fd)
    try:
        _check_xlsx(path, Path(name))
        return cast("polars.DataFrame", pl.read_excel(name, engine="calamine", infer_schema_length=0))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _load_frame_file(
    path: Path, columns: dict[str, ColumnSpec], id_column: str | None, progress: Progress, kind: str
) -> Table:
    import polars as pl

    sha = file_sha256(path, progress)
    progress.update(0, 1, "parsing")
    names = list(columns) + ([id_column] if id_column else [])
    try:
        frame = _read_checked_xlsx(pl, path) if kind == "xlsx" else pl.read_parquet(path)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - readers raise many exception types for malformed files
        raise InputError(
            str(path), f"cannot read this {kind} file ({str(exc).splitlines()[0][:200]})"
        ) from None
    header = [str(c).strip() for c in frame.columns]
    frame.columns = header
    wanted = _match_columns(header, columns, id_column, path)
    if frame.height > MAX_ROWS:
        raise InputError(str(path), f"more than {MAX_ROWS} rows; dpdesk handles at most that many")
    report = LoadReport(encoding="", delimiter="")
    builders = {name: _ColumnBuilder(columns[name], report) for name in columns}
    id_parts: list[np.ndarray] = []
    id_miss: list[np.ndarray] = []
    for _, name in wanted:
        s = frame.get_column(name)
        if name in builders:
            builders[name].add(s)
        else:
            ids, miss = _id_hashes(s)
            id_parts.append(ids)
            id_miss.append(miss)
    del names
    progress.update(1, 1, "parsing")
    # a spreadsheet shows the header as row 1
    where = (lambda r: f"row {r + 2}") if kind == "xlsx" else (lambda r: f"record {r + 1}")
    return _finish(path, sha, frame.height, builders, id_parts, id_miss, report, id_column, where)


# ----------------------------------------------------------------------------- suggestions


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
            frame = _read_checked_xlsx(pl, p).head(sample_rows)
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


def is_integral(x: float) -> bool:
    """Whether ``x`` is a finite whole number."""
    return math.isfinite(x) and x == math.floor(x)
