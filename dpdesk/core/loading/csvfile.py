"""CSV and other delimited text: encoding detection, delimiter sniffing, and the two readers.

UTF-8 files go through polars' streaming reader with the declared types (:func:`_stream_csv`); a file it cannot
explain (ragged or blank lines, invalid UTF-8), and every other encoding, goes through the block reader
(:func:`_read_csv_pieces`): byte blocks split at record boundaries outside quotes, each piece parsed by polars
and converted to numpy before the next is read, so memory stays near the size of the final columns, progress is
reported per block and a cancel is honoured between blocks. The file's SHA-256 (the ledger's dataset key) is
computed in the same pass.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
import re
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dpdesk.core.common.errors import Cancelled, InputError
from dpdesk.core.common.progress import Progress
from dpdesk.core.loading.columns import TableBuilder, id_hashes, int_dtype, match_columns
from dpdesk.core.loading.guards import MAX_RECORD_BYTES
from dpdesk.core.loading.panics import reader_errors
from dpdesk.core.loading.table import BatchSink, LoadReport, Table
from dpdesk.core.model.spec import ColumnSpec

if TYPE_CHECKING:
    import polars
    import polars as pl

BLOCK_BYTES = 8 * 1024 * 1024  # measured: lower peak memory than 32 MiB, and 15-30% less CPU
#: A smaller block for the block reader (and the identity pass, which reads through it) in this thread, set by a
#: release under a low memory limit (:func:`dpdesk.core.release.streaming.load_for_release`); 0: :data:`BLOCK_BYTES`.
BLOCK_CAP: ContextVar[int] = ContextVar("dpdesk_block_cap", default=0)
STREAM_CHUNK_BYTES = 8 * 1024 * 1024
HASH_READ_BYTES = 256 * 1024  # read and hashed while still in the CPU cache
#: UTF-8 files go through polars' streaming reader first (tests switch it off to test the block reader).
STREAM_UTF8 = True
DELIMITERS = (",", ";", "\t", "|")


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
        cap = BLOCK_CAP.get()
        raw = self.f.read(min(BLOCK_BYTES, cap) if cap else BLOCK_BYTES)
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


def load_csv(
    path: Path,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    encoding: str | None,
    delimiter: str | None,
    sink: Callable[[], BatchSink] | None = None,
    *,
    identity: Callable[[list[str]], Any] | None = None,
) -> Table:
    """Load the declared columns of a delimited text file (``encoding`` and ``delimiter`` detected if None);
    with a ``sink``, streamed batch by batch (see :class:`~dpdesk.core.loading.columns.TableBuilder`)."""
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
        table = _stream_csv(pl, path, head, columns, id_column, progress, delim, sink, identity)
        if table is not None:
            return table
    report = LoadReport(encoding=enc, delimiter=delim)

    src = _Source(path, enc)
    try:
        return _read_csv_pieces(pl, src, path, columns, id_column, progress, report, delim, sink)
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
    sink: Callable[[], BatchSink] | None = None,
    identity: Callable[[list[str]], Any] | None = None,
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
    wanted = match_columns(header, columns, id_column, path)
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
    before = _file_state(path)
    hasher = _Hasher(path)  # one pass over the file, whatever the attempts below
    hasher.start()
    try:
        table = _stream_attempts(
            pl,
            path,
            columns,
            delim,
            header,
            wanted,
            typed,
            as_text,
            hasher,
            size,
            bytes_per_row,
            progress,
            sink,
            identity,
        )
    finally:
        hasher.stop.set()  # a no-op once it is done; stops it when the block reader takes over or on error
        hasher.join()
    if table is not None and table.identity is not None and _file_state(path) != before:
        # written to while polars and the hash read it (each opens the file itself): the identity may be of other
        # bytes than the SHA-256's, so it is computed again in a pass that reads both from the same bytes
        table.identity, table.identity_secret = None, None
    return table


def _file_state(path: Path) -> tuple[int, int, int, int]:
    """What any write to a file changes (its inode, size, and modification and change times: the change time
    cannot be set back by its owner)."""
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


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
    sink: Callable[[], BatchSink] | None = None,
    identity: Callable[[list[str]], Any] | None = None,
) -> Table | None:
    """Stream the file; a column that does not fit its type is read as text in a new attempt. With ``identity``
    (a factory of :class:`~dpdesk.core.loading.typed_identity.TypedIdentity` for the header), every column is
    also hashed for the content identity, a fresh one per attempt."""
    id_column = next((name for _, name in wanted if name not in columns), None)
    for _attempt in range(len(wanted) + 1):
        ident = None if identity is None else identity(header)
        try:
            table = _stream_attempt(
                pl,
                path,
                columns,
                delim,
                header,
                wanted,
                typed,
                as_text,
                hasher,
                size,
                bytes_per_row,
                progress,
                sink,
                id_column,
                ident,
            )
        except _Retry:
            if ident is not None:
                ident.close()
            continue
        except BaseException:
            if ident is not None:
                ident.close()
            raise
        if table is None or ident is None:
            if ident is not None:
                ident.close()
            return table
        table.identity = ident.result(table.sha256)  # None when a float column held a large integer
        table.identity_secret = ident.keys.secret if table.identity is not None else None
        return table
    return None


class _Retry(Exception):
    """:func:`_stream_attempt`'s answer when a column is to be read as text in a new attempt."""


def _stream_attempt(
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
    sink: Callable[[], BatchSink] | None,
    id_column: str | None,
    ident: Any,
) -> Table | None:
    """One attempt of :func:`_stream_attempts`: the table, or None for the block reader (:class:`_Retry` when a
    column is to be read as text)."""
    schema = {k: (pl.String if k in as_text else t) for k, t in typed.items()}
    tb = TableBuilder(path, columns, wanted, LoadReport(encoding="utf-8", delimiter=delim), sink)
    builders = tb.builders
    all_null_row = False
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
        ).select(_stream_exprs(pl, wanted, columns, as_text, len(header) if ident is not None else 0))
        # every field is parsed (no projection pushdown): polars checks the number of fields of a
        # line only then, and a line with a field too many must not shift into the wrong columns
        batches = lf.collect_batches(optimizations=pl.QueryOptFlags(projection_pushdown=False))
        for frame in batches:
            tb.batch(frame.height, int(size / bytes_per_row * 1.02) + 1024)
            empties: list[np.ndarray | None] = []  # each column's empty fields (None: none)
            for i, name in wanted:
                s = frame.get_column(f"c{i}")
                if name not in builders:
                    ids, miss = id_hashes(s)
                    tb.add_ids(ids, miss)
                    empties.append(miss)
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
            if ident is not None:
                ident.submit(_identity_columns(frame, header, wanted, columns, as_text, ident))
            if len(header) > 1 and not all_null_row and _some_row_all_true(empties):
                all_null_row = True  # a blank line, or a line of empty fields: told apart below
            progress.update(min(int(tb.n_rows * bytes_per_row), size - 1), size, "reading")
    except (InputError, Cancelled):
        raise
    except reader_errors() as exc:  # polars raises several exception types (and panics) for malformed input
        bad = _BAD_FIELD.search(str(exc))
        if bad and bad.group(1) not in as_text and int(bad.group(1)[1:]) in dict(wanted):
            as_text.add(bad.group(1))
            raise _Retry from None
        return None
    hasher.join()
    if hasher.error is not None:
        raise InputError(str(path), f"cannot read the file: {hasher.error.strerror or hasher.error}")
    if all_null_row and _has_blank_line(path):
        return None  # blank lines are no records: the block reader drops them
    exact_lines = not hasher.quoted or (
        not any(b.first_record is not None for b in builders.values()) or _lines_are_records(path, tb.n_rows)
    )
    progress.update(size, size, "reading")
    if ident is not None:
        ident.wait()  # the last batches' hashing (its errors raised here)
    return tb.finish(hasher.hash.hexdigest(), id_column, _record_place(exact_lines))


def _identity_columns(
    frame: pl.DataFrame,
    header: list[str],
    wanted: list[tuple[int, str]],
    columns: dict[str, ColumnSpec],
    as_text: set[str],
    ident: Any,
) -> list[Any]:
    """Every column of a streamed batch as the content identity takes it (file order): a declared column as read
    (a category's codes with its labels, a number as parsed, a column read as text as text), any other as text."""
    names = dict(wanted)
    out: list[Any] = []
    for i in range(len(header)):
        spec = columns.get(names.get(i, ""))
        if spec is None or f"c{i}" in as_text:
            out.append(frame.get_column(f"u{i}" if spec is None else f"c{i}"))
        elif spec.type == "category":
            out.append(ident.coded(frame.get_column(f"c{i}"), tuple(spec.categories or ())))
        else:
            out.append(ident.typed(frame.get_column(f"c{i}"), "int" if spec.type == "int" else "number"))
    return out


def _stream_exprs(
    pl: Any, wanted: list[tuple[int, str]], columns: dict[str, ColumnSpec], as_text: set[str], width: int = 0
) -> list[Any]:
    """The streaming query's columns: each declared column already in its compact type (the work runs in
    polars' threads, batch by batch), empty fields still null; the id column as text (hashed batch by batch); with
    a ``width`` (the content identity is computed), every undeclared column of the file as text, ``u<i>``."""
    declared = {i for i, name in wanted if name in columns}
    exprs = [pl.col(f"c{i}").alias(f"u{i}") for i in range(width) if i not in declared]
    for i, name in wanted:
        c = pl.col(f"c{i}")
        spec = columns.get(name)
        if spec is None or f"c{i}" in as_text:  # the id column, as text: hashed by id_hashes, batch by batch
            exprs.append(c)
        elif spec.type == "category":  # parsed as an Enum: null only for an empty field
            exprs.append(c.to_physical().alias(f"c{i}"))  # stored as int16 codes
        else:  # ints are clamped to their bounds as they are stored (one pass, see ColumnBuilder._put)
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
    sink: Callable[[], BatchSink] | None = None,
) -> Table:
    buf = b""
    header: list[str] | None = None
    wanted: list[tuple[int, str]] = []
    tb: TableBuilder | None = None
    line = 1  # physical line number of the next piece's first line
    head_bytes = b""
    schema: dict[str, Any] | None = None
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
            wanted = match_columns(header, columns, id_column, path)
            tb = TableBuilder(path, columns, wanted, report, sink)
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
                    frame = _parse_piece(pl, records, path, head_bytes, header, wanted, delim, line, piece)
        if frame is not None:
            assert tb is not None
            rows = frame.height
            # rows to expect, from this piece's bytes per row (columns are preallocated, not concatenated)
            tb.batch(rows, int(src.expected_size() / max(1, len(records)) * rows * 1.02) + 1024)
            tb.add_frame(frame, wanted, typed)
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
    assert header is not None and tb is not None
    progress.update(src.size, src.size, "reading")
    return tb.finish(src.hexdigest(), id_column, _record_place(exact_lines))


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
    # the piece's last line keeps its line end: polars reads a last line of only empty fields without one
    # as a record of the right width whatever its number of fields (",," in a file of two columns)
    return b"\n".join(kept) + (b"\n" if piece.endswith(b"\n") and kept and kept[-1] else b"")


def _parse_header(head: bytes, path: Path, delim: str) -> list[str]:
    text = head.decode("utf-8", errors="replace").rstrip("\r\n")
    try:
        rows = list(csv.reader([text], delimiter=delim))
    except csv.Error as exc:
        raise InputError(str(path), f"cannot read the header: {exc}", line=1) from None
    if not rows or not rows[0]:
        raise InputError(str(path), "the header line is empty", line=1)
    return [h.strip() for h in rows[0]]


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
            stored = int_dtype(spec.bounds)
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
    except reader_errors():  # any parse problem (a polars panic too): the text path explains it
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
    original: bytes | None = None,
) -> pl.DataFrame:
    """Parse ``piece`` (the records of ``original``, the piece as read, blank lines dropped) as text."""
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
    except reader_errors() as exc:  # polars raises several exception types (and panics) for malformed input
        # located in the piece as read, so that the line number counts the dropped blank lines
        at, fields = _long_record(piece if original is None else original, len(header), delim)
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


def _polars_message(exc: BaseException, line: int) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "utf-8" in text.lower() or "utf8" in text.lower():
        return "contains bytes that are not valid UTF-8 at or after this line; choose the file's encoding explicitly"
    return f"cannot parse the records starting at this line ({text[:200]})"
