"""Read limits and the .xlsx bomb guard (security code): what a file may not make the loader do.

An .xlsx workbook is a zip archive: before calamine reads one, :func:`check_xlsx` inflates every part itself,
counting the real bytes against the declared sizes and the limits here, and writes the checked parts to a copy,
which is all calamine ever reads (see tests/trust/test_xlsx_bomb.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpdesk.core.common.errors import InputError, LimitError
from dpdesk.i18n import _

if TYPE_CHECKING:
    import polars as pl

#: Public cap on the number of rows; it keeps fixed-point sums exact in int64 (see queries.py).
MAX_ROWS = 2**31 - 1
MAX_RECORD_BYTES = 256 * 1024 * 1024
#: An .xlsx whose parts would unpack to more than this is refused (zip bombs).
MAX_XLSX_UNPACKED = 2 * 1024**3
MAX_XLSX_RATIO = 200
#: Read and inflate size when checking an .xlsx part's real size (bounds the check's memory).
XLSX_CHECK_CHUNK = 1024 * 1024
#: An .xlsx sheet may span at most this many cells (its last row x its last column, as its dimension and every
#: cell and row reference say): calamine allocates the whole rectangle, so one far-off cell in a small file
#: would otherwise cost gigabytes (and a cell at XFD1048576 aborted the process).
MAX_XLSX_CELLS = 20_000_000
#: The text a workbook's cells may expand to from its shared strings (a cell of type "s" holds the index of a
#: string stored once): one 32,000-character string referenced by 100,000 cells is 3.2 GB once read, from a
#: 0.5 MB file (calamine aborted the process on it). Each reference counts its string's length in the part.
MAX_XLSX_SHARED_TEXT = 1024**3
#: The largest sheet Excel itself makes: 1,048,576 rows by 16,384 columns (XFD).
XLSX_MAX_ROW, XLSX_MAX_COL = 1_048_576, 16_384
#: A Parquet file is refused when its declared columns would decode to more than this many bytes and more
#: than :data:`MAX_PARQUET_RATIO` times the file's size (estimated from its metadata, before any decoding).
MAX_PARQUET_DECODED = 1024**3
MAX_PARQUET_RATIO = 200
#: A Parquet footer (its metadata) larger than this is refused.
MAX_PARQUET_FOOTER = 64 * 1024**2
#: Decoded bytes (a string cell counts its length) handed on at a time by :func:`bounded_batches`: a column of
#: long strings is sliced into pieces of at most this size before anything copies its cells.
MAX_BATCH_BYTES = 16 * 1024**2
#: Rows whose text lengths :func:`check_parquet` sums at a time (as 16-byte views: 16 MiB a text column).
SCAN_ROWS = 1024 * 1024


def check_regular_file(path: Path) -> None:
    """Refuse anything but a regular file (a device such as /dev/zero, a FIFO, a socket, a folder) at once:
    such a file never ends, or blocks the reader, and has no stable contents to key a ledger on.

    The file is opened without blocking (a FIFO with no writer would block a plain open) and checked on the
    open descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise InputError(str(path), _("no such file")) from None
    except IsADirectoryError:
        raise InputError(str(path), _("is a folder, not a data file")) from None
    except OSError as exc:
        raise InputError(
            str(path), _("cannot read the file: {err}").format(err=exc.strerror or exc)
        ) from None
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if stat.S_ISDIR(mode):
        raise InputError(str(path), _("is a folder, not a data file"))
    if not stat.S_ISREG(mode):
        raise InputError(
            str(path),
            _("is not a regular file (a device, pipe or socket); dpdesk reads data only from files"),
        )


def check_rows(path: Path, n_rows: int) -> None:
    """Refuse a table of more than :data:`MAX_ROWS` rows."""
    if n_rows > MAX_ROWS:
        raise InputError(
            str(path), _("more than {n} rows; dpdesk handles at most that many").format(n=MAX_ROWS)
        )


def check_xlsx(path: Path, copy_to: Path | None = None) -> None:
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
        raise InputError(str(path), _("is not a valid .xlsx workbook (not a zip archive)")) from None
    except OSError as exc:
        raise InputError(
            str(path), _("cannot read the file: {err}").format(err=exc.strerror or exc)
        ) from None
    unpacked = sum(i.file_size for i in infos)
    packed = max(1, os.path.getsize(path))
    if unpacked > MAX_XLSX_UNPACKED or (unpacked / packed > MAX_XLSX_RATIO and unpacked > 50 * 2**20):
        raise InputError(
            str(path),
            _(
                "the workbook would unpack to {big} MiB from {small} MiB; refused as a possible zip bomb "
                "(export it as CSV instead)"
            ).format(big=f"{unpacked / 2**20:.0f}", small=f"{packed / 2**20:.1f}"),
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
                _(
                    "is not a valid .xlsx workbook (the part {part} appears twice in the archive); refused as "
                    "possibly forged"
                ).format(part=repr(info.filename)),
            )
        seen.add(key)
    no_room = ""
    if copy_to is not None:
        no_room = _(
            "there is not enough free disk space in {folder} to check the workbook (it needs {n} MiB there "
            "while loading); free some space and try again"
        ).format(folder=copy_to.parent, n=f"{unpacked / 2**20:.0f}")
        with contextlib.suppress(OSError):
            if shutil.disk_usage(copy_to.parent).free < unpacked + 2**20:
                raise InputError(str(path), no_room)
    shared = _SharedText(path)
    try:
        with (
            open(path, "rb") as f,
            zipfile.ZipFile(copy_to, "w") if copy_to is not None else contextlib.nullcontext() as out,
        ):
            for info in infos:
                _check_xlsx_part(path, f, info, out, shared)
    except OSError as exc:
        if no_room and exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG):
            raise InputError(str(path), no_room) from None  # only writing the copy runs out of room
        raise InputError(
            str(path), _("cannot read the file: {err}").format(err=exc.strerror or exc)
        ) from None
    shared.check()


def _check_xlsx_part(
    path: Path,
    f: io.BufferedReader,
    info: zipfile.ZipInfo,
    out: zipfile.ZipFile | None = None,
    shared: _SharedText | None = None,
) -> None:
    """Refuse a workbook part that is encrypted, oddly compressed, damaged, or not its declared size;
    with ``out``, write it there as it is inflated (stored, in chunks: never a whole part in memory)."""
    import zlib

    name, declared = info.filename, info.file_size
    if info.flag_bits & 0x1:
        raise InputError(
            str(path),
            _("the workbook part {part} is encrypted; save the workbook unprotected").format(part=repr(name)),
        )
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise InputError(
            str(path),
            _(
                "the workbook part {part} uses zip compression method {method}, which .xlsx workbooks do not "
                "use; refused"
            ).format(part=repr(name), method=info.compress_type),
        )
    damaged = _("is not a valid .xlsx workbook (the part {part} is damaged)").format(part=repr(name))
    stored = info.compress_type == zipfile.ZIP_STORED or info.compress_size == 0
    if stored and info.compress_size != declared:  # the reader copies exactly the compressed bytes
        raise InputError(
            str(path),
            _forged(name, info.compress_size, declared),
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
    refs = _CellRefScan(path, name, shared)
    strings = shared.strings_scan() if shared is not None and _is_shared_strings(name) else None
    with out.open(copy, "w") if out is not None else contextlib.nullcontext() as w:
        left, data, real = info.compress_size, b"", 0
        if stored:
            while left:
                data = f.read(min(left, XLSX_CHECK_CHUNK))
                if not data:
                    raise InputError(str(path), damaged)  # the file ends before the part does
                left -= len(data)
                real += len(data)
                refs.feed(data)
                if strings is not None:
                    strings.feed(data)
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
                            _(
                                "the workbook part {part} unpacks to more than the {n} bytes its header "
                                "declares; refused as a possible zip bomb (export it as CSV instead)"
                            ).format(part=repr(name), n=declared),
                        )
                    if not chunk and not data and not left:
                        raise InputError(str(path), damaged)  # the stream stops before its end
                    refs.feed(chunk)
                    if strings is not None:
                        strings.feed(chunk)
                    if w is not None:
                        w.write(chunk)
                    else:
                        crc = zlib.crc32(chunk, crc)
            except zlib.error:
                raise InputError(str(path), damaged) from None
        if real != declared:
            raise InputError(
                str(path),
                _forged(name, real, declared),
            )
    refs.finish()
    if (copy.CRC if w is not None else crc) != info.CRC:  # the copy carries a fresh checksum: check it here
        raise InputError(str(path), damaged)


#: A sheet's ``<dimension ref="A1:C9">``, ``<row r="9">`` and ``<c r="C9">`` (any namespace prefix), as calamine
#: reads them: the tag's local name, then its attributes up to the end of the tag.
_TAG_RE = re.compile(
    rb"""<(?:[A-Za-z_][\w.-]*:)?(dimension|row|c|v)(?=[\s/>])((?:[^>"']|"[^"]*"|'[^']*')*)>"""
)
#: A cell's type attribute (``t="s"``: its value is the index of a shared string).
_TYPE_RE = re.compile(rb"""(?:^|\s)t\s*=\s*(?:"s"|'s')""")
_ATTR_RE = re.compile(rb"(?:^|\s)(r|ref)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_CELL_RE = re.compile(rb"\$?([A-Za-z]{0,3})\$?([0-9]{0,7})")
#: A tag may not be longer than this (the scan keeps an unfinished tag between chunks).
_MAX_TAG = 1024 * 1024


def _forged(part: str, real: int, declared: int) -> str:
    return _(
        "the workbook part {part} unpacks to {real} bytes, not the {declared} bytes its header declares; the "
        "workbook is damaged or forged"
    ).format(part=repr(part), real=real, declared=declared)


def _column_letters(col: int) -> str:
    """A column number's letters (1: A, 16384: XFD)."""
    letters = ""
    while col > 0:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


class _CellRefScan:
    """Pre-scan of one workbook part, as it is inflated, for the cell references a sheet can lie about: its
    dimension and every row and cell reference (a cell or row without one follows the previous). Refuses a
    reference past Excel's last row or column, or a sheet whose last row x last column exceeds
    :data:`MAX_XLSX_CELLS`, before calamine ever reads the part."""

    def __init__(self, path: Path, part: str, shared: _SharedText | None = None) -> None:
        self.path, self.part = path, part
        self.shared = shared
        self.in_shared_cell = False  # the last cell tag is of type "s" and open: its <v> holds an index
        self.tail = b""
        self.row = 0
        self.col = 0
        self.max_row = 0
        self.max_col = 0
        self.cells = 0

    def feed(self, data: bytes) -> None:
        buf = self.tail + data
        end = buf.rfind(b">") + 1
        start = buf.rfind(b"<")
        cut = start if start >= end else len(buf)
        if cut == len(buf):  # a value's text must be whole: a last <v> with no tag after it waits for more
            last_v = max(buf.rfind(b"<v>", max(0, cut - 64)), buf.rfind(b":v>", max(0, cut - 64)))
            if last_v >= 0:
                cut = buf.rfind(b"<", 0, last_v + 1)
        for m in _TAG_RE.finditer(buf, 0, cut):
            if m.group(1) == b"v":
                if self.in_shared_cell and self.shared is not None:
                    text_end = buf.find(b"<", m.end(), cut)
                    self.shared.reference(buf[m.end() : text_end if text_end >= 0 else cut])
                self.in_shared_cell = False
                continue
            self._tag(m.group(1), m.group(2))
        self.tail = buf[cut:]
        if len(self.tail) > _MAX_TAG:
            self._refuse(_("has a tag longer than 1 MiB"))

    def finish(self) -> None:
        self.tail = b""

    def _tag(self, kind: bytes, attrs: bytes) -> None:
        # every value that looks like the reference is bounded (not only the one a reader would take)
        want = b"ref" if kind == b"dimension" else b"r"
        refs = [
            a.group(2) if a.group(2) is not None else a.group(3)
            for a in _ATTR_RE.finditer(attrs)
            if a.group(1) == want
        ]
        if kind == b"dimension":
            for ref in refs:
                for part in ref.split(b":"):
                    self._cell(part)
            return
        if kind == b"row":
            rows = [self._number(ref) for ref in refs]
            self.row = rows[0] if rows else self.row + 1
            self.col = 0
            self._bound(max(rows, default=self.row), 1)
            return
        self.cells += 1
        self.in_shared_cell = bool(_TYPE_RE.search(attrs)) and not attrs.rstrip().endswith(b"/")
        if self.cells > MAX_XLSX_CELLS:
            self._refuse(
                _("has more than {n} cells, more than dpdesk reads from a workbook").format(
                    n=f"{MAX_XLSX_CELLS:,}"
                )
            )
        found = [self._cell(ref) for ref in refs]
        if found:
            self.col, row = found[0]
            if row:
                self.row = row
        else:
            self.col += 1
        self._bound(max(self.row, 1), self.col)

    def _cell(self, ref: bytes) -> tuple[int, int]:
        m = _CELL_RE.fullmatch(ref.strip())
        if m is None:
            self._refuse(
                _("has a malformed cell reference {ref}").format(ref=repr(ref[:40].decode("latin-1")))
            )
        assert m is not None
        col = 0
        for ch in m.group(1).upper():
            col = col * 26 + ch - 64
        row = int(m.group(2)) if m.group(2) else 0
        self._bound(row, col)
        return col, row

    def _number(self, ref: bytes) -> int:
        if not ref.strip().isdigit() or len(ref.strip()) > 7:
            self._refuse(_("has a malformed row number {ref}").format(ref=repr(ref[:40].decode("latin-1"))))
        return int(ref)

    def _bound(self, row: int, col: int) -> None:
        if row > XLSX_MAX_ROW or col > XLSX_MAX_COL:
            if col <= 1 and row > XLSX_MAX_ROW:  # a row element, or a cell in the first column: name the row
                what = _("refers to row {row}, beyond Excel's last row {last}").format(
                    row=row, last=XLSX_MAX_ROW
                )
            else:
                what = _(
                    "refers to the cell {cell} (row {row}, column {col}), beyond Excel's last row {last} or "
                    "column XFD"
                ).format(cell=f"{_column_letters(col)}{row or ''}", row=row, col=col, last=XLSX_MAX_ROW)
            self._refuse(what)
        self.max_row, self.max_col = max(self.max_row, row), max(self.max_col, col)
        if self.max_row * self.max_col > MAX_XLSX_CELLS:
            self._refuse(
                _(
                    "spans {rows} rows by {cols} columns, more than the {n} cells dpdesk reads from a workbook "
                    "(a far-off cell makes the reader allocate them all); delete the far-off cells or export the "
                    "sheet as CSV"
                ).format(rows=self.max_row, cols=self.max_col, n=f"{MAX_XLSX_CELLS:,}")
            )

    def _refuse(self, what: str) -> None:
        raise InputError(
            str(self.path), _("the workbook part {part} {problem}").format(part=repr(self.part), problem=what)
        )


def _is_shared_strings(part: str) -> bool:
    return part.casefold().rsplit("/", 1)[-1] == "sharedstrings.xml"


class _SharedText:
    """How much text a workbook's shared-string cells expand to: each string's length in the shared-strings part
    (its raw XML, at least its decoded UTF-8 length) times the number of cells referring to it, summed over the
    sheets; refused past :data:`MAX_XLSX_SHARED_TEXT` (:meth:`check`, once every part was scanned)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.counts: dict[int, int] = {}
        self.lengths: list[int] = []

    def reference(self, text: bytes) -> None:
        t = text.strip()
        if t.isdigit() and len(t) <= 10:
            i = int(t)
            self.counts[i] = self.counts.get(i, 0) + 1

    def strings_scan(self) -> _StringLengths:
        return _StringLengths(self.lengths)

    def check(self) -> None:
        total = sum(n * (self.lengths[i] if i < len(self.lengths) else 0) for i, n in self.counts.items())
        if total > MAX_XLSX_SHARED_TEXT:
            raise LimitError(
                str(self.path),
                _(
                    "its cells repeat stored text to {n} MiB once read (a long string used by many cells); "
                    "refused as a possible decompression bomb (limit: {limit} MiB; export the sheet as CSV)"
                ).format(n=f"{total / 2**20:,.0f}", limit=MAX_XLSX_SHARED_TEXT // 2**20),
            )


class _StringLengths:
    """The byte length of each ``<si>…</si>`` item of a shared-strings part, fed chunk by chunk."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths
        self.tail = b""
        self.open_at: int | None = None  # bytes of the current item seen so far (None: between items)

    def feed(self, data: bytes) -> None:
        buf = self.tail + data
        i = 0
        while True:
            if self.open_at is None:
                j = _SI_OPEN.search(buf, i)
                if j is None:
                    break
                if j.group(0).endswith(b"/>"):  # <si/>: an empty string
                    self.lengths.append(0)
                    i = j.end()
                    continue
                self.open_at, i = 0, j.end()
            else:
                k = _SI_CLOSE.search(buf, i)
                if k is None:
                    break
                self.lengths.append(self.open_at + (k.start() - i))
                self.open_at, i = None, k.end()
        keep = min(len(buf) - i, 16)  # a tag cut at the chunk's end is matched with the next chunk
        if self.open_at is not None:
            self.open_at += len(buf) - i - keep
        self.tail = buf[len(buf) - keep :]


_SI_OPEN = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?si(?=[\s/>])[^>]*>")
_SI_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?si\s*>")


def check_parquet(path: Path, columns: set[str] | None = None, *, scan: bool = True) -> None:
    """Refuse a Parquet file whose metadata (read here, before polars decodes anything) is damaged, or says that
    the named columns (stripped names; None: every column) would decode to more than :data:`MAX_PARQUET_DECODED`
    bytes and more than :data:`MAX_PARQUET_RATIO` times the file's size, or to more than :data:`MAX_ROWS` rows.

    The estimate, per column chunk: 16 bytes per row or value (whichever the metadata says is more) plus its
    uncompressed size. A run-length or dictionary encoding can make a small file stand for a very large table;
    the metadata says how large before any page is decoded.

    The metadata cannot say how long a dictionary's values are: a column repeating one 5,000-character value 2
    million times is 12 KB on disk with a 5 KB dictionary, but 10 GB once its cells are copied. With ``scan``
    (the default) the named text columns' lengths are then summed in a streaming pass (polars decodes such a
    column as 16-byte views of its dictionary, so the pass costs what the metadata's estimate allowed) and the
    same limits apply to 16 bytes a cell plus those lengths, before any cell is copied.
    """
    rows, chunks, size = _parquet_metadata(path)
    group_rows = sum(max(r, 0) for r, _ in chunks)
    if max(rows, group_rows) > MAX_ROWS or rows < 0:
        raise InputError(
            str(path),
            _("more than {n} rows (as its metadata says); dpdesk handles at most that many").format(
                n=MAX_ROWS
            ),
        )
    estimate = 0
    for group_rows, cols in chunks:
        for name, values, uncompressed in cols:
            if columns is None or name.strip() in columns:
                estimate += 16 * max(group_rows, values, 0) + max(uncompressed, 0)
    if estimate > MAX_PARQUET_DECODED and estimate > MAX_PARQUET_RATIO * max(size, 1):
        raise LimitError(
            str(path),
            _(
                "its columns would decode to about {big} MiB from a {small} MiB file (as its metadata says); "
                "refused as a possible decompression bomb (limit: {limit} MiB, or {ratio} times the file's size)"
            ).format(
                big=f"{estimate / 2**20:,.0f}",
                small=f"{size / 2**20:.1f}",
                limit=MAX_PARQUET_DECODED // 2**20,
                ratio=MAX_PARQUET_RATIO,
            ),
        )
    if scan:
        _check_decoded(path, _text_bytes(path, columns, max(rows, group_rows)))


def _text_bytes(path: Path, columns: set[str] | None, rows: int) -> int:
    """16 bytes a cell plus the summed lengths of the text and binary cells of the named columns (a streaming
    pass that copies no cell)."""
    from dpdesk.core.loading.panics import quiet_panics, reader_errors, reader_message

    try:
        import polars as pl

        lf = pl.scan_parquet(path)
        with quiet_panics():
            schema = lf.collect_schema()
        named = [(n, t) for n, t in schema.items() if columns is None or n.strip() in columns]
        lengths = []
        for n, t in named:
            if t == pl.String:
                lengths.append(pl.col(n).str.len_bytes())
            elif t == pl.Binary:
                lengths.append(pl.col(n).bin.size())
            elif isinstance(t, pl.Categorical):
                lengths.append(pl.col(n).cat.len_bytes())
        total = 16 * rows * len(named)
        sums = [e.cast(pl.Int64).sum().alias(f"l{i}") for i, e in enumerate(lengths)]
        for start in range(0, rows if sums else 0, SCAN_ROWS):  # in-memory engine: no threads of its own
            with quiet_panics():
                total += sum(int(v or 0) for v in lf.slice(start, SCAN_ROWS).select(sums).collect().row(0))
    except reader_errors() as exc:  # polars raises many exception types (and panics) for malformed files
        raise InputError(str(path), f"cannot read this parquet file ({reader_message(exc)})") from None
    return total


def row_bytes(frame: pl.DataFrame) -> np.ndarray:
    """Each row's decoded size in bytes (int64): 8 bytes a cell, plus a string or binary cell's length (a nested
    cell its column's share). Polars decodes a dictionary-encoded column as views of its
    dictionary (16 bytes a row), so a small file can stand for gigabytes of text that only a copy (trimming,
    casting, joining) makes real: this is that size, measured on the views, before anything copies them."""
    import polars as pl

    n = frame.height
    out = np.full(n, 8 * frame.width, dtype=np.int64)
    for s in frame.iter_columns():
        if s.dtype == pl.String:
            out += s.str.len_bytes().fill_null(0).to_numpy().astype(np.int64)
        elif s.dtype == pl.Binary:
            out += s.bin.size().fill_null(0).to_numpy().astype(np.int64)
        elif s.dtype.is_nested() or isinstance(s.dtype, (pl.Categorical, pl.Enum, pl.Object)):
            out += int(s.estimated_size()) // max(n, 1)
    return out


def _check_decoded(path: Path, total: int) -> None:
    size = max(os.path.getsize(path), 1)
    if total > MAX_PARQUET_DECODED and total > MAX_PARQUET_RATIO * size:
        raise LimitError(
            str(path),
            _(
                "its columns decode to at least {decoded} MiB from a {size} MiB file (more than its "
                "metadata says); refused as a possible decompression bomb (limit: {limit} MiB, or {ratio} times "
                "the file's size)"
            ).format(
                decoded=f"{total / 2**20:,.0f}",
                size=f"{size / 2**20:.1f}",
                limit=MAX_PARQUET_DECODED // 2**20,
                ratio=MAX_PARQUET_RATIO,
            ),
        )


def bounded_batches(
    path: Path, frames: Iterable[pl.DataFrame], max_rows: int, max_bytes: int = MAX_BATCH_BYTES
) -> Iterator[pl.DataFrame]:
    """The frames of a Parquet file's reader in slices of at most ``max_rows`` rows and ``max_bytes`` decoded
    bytes (:func:`row_bytes`; a slice holds at least one row), refusing the file once its decoded total passes
    the limits :func:`check_parquet` states for its metadata. The metadata can understate a dictionary-encoded
    column (one long value repeated: 12 KB on disk, gigabytes once copied); this measures the decoded views."""
    total = 0
    for frame in frames:
        sizes = row_bytes(frame)
        total += int(sizes.sum())
        _check_decoded(path, total)
        ends = np.cumsum(sizes)
        start = 0
        while start < frame.height:
            before = int(ends[start - 1]) if start else 0
            stop = int(np.searchsorted(ends, before + max_bytes, side="right"))
            stop = min(max(stop, start + 1), start + max_rows, frame.height)
            yield frame.slice(start, stop - start)
            start = stop


def parquet_rows(path: Path) -> int:
    """The number of rows a Parquet file's metadata declares (read without decoding anything)."""
    return max(0, _parquet_metadata(path)[0])


def _parquet_metadata(path: Path) -> tuple[int, list[tuple[int, list[tuple[str, int, int]]]], int]:
    """A Parquet file's row count and row groups (rows and column chunks) from its footer, and its size."""
    damaged = _("is not a valid Parquet file (its metadata is damaged)")
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size < 12:
                raise InputError(str(path), damaged)
            f.seek(size - 8)
            tail = f.read(8)
            if tail[4:] != b"PAR1":
                raise InputError(str(path), _("is not a Parquet file (it does not end in PAR1)"))
            length = int.from_bytes(tail[:4], "little")
            if length > MAX_PARQUET_FOOTER or length > size - 12:
                raise InputError(str(path), damaged)
            f.seek(size - 8 - length)
            footer = f.read(length)
    except OSError as exc:
        raise InputError(
            str(path), _("cannot read the file: {err}").format(err=exc.strerror or exc)
        ) from None
    try:
        rows, chunks = _ThriftCompact(footer).file_metadata()
    except (IndexError, ValueError, RecursionError):
        raise InputError(str(path), damaged) from None
    return rows, chunks, size


class _ThriftCompact:
    """Just enough of Thrift's compact protocol to read a Parquet footer's row counts and column chunk sizes;
    everything else is skipped. Every length is checked against the bytes left (IndexError/ValueError)."""

    MAX_DEPTH = 64

    def __init__(self, data: bytes) -> None:
        self.d = data
        self.i = 0

    def byte(self) -> int:
        b = self.d[self.i]
        self.i += 1
        return b

    def varint(self) -> int:
        out = shift = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 70:
                raise ValueError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self) -> bytes:
        n = self.varint()
        if n > len(self.d) - self.i:
            raise ValueError("binary past the end")
        out = self.d[self.i : self.i + n]
        self.i += n
        return out

    def fields(self) -> Iterator[tuple[int, int]]:
        """A struct's (field id, type) pairs; the caller reads or skips each value."""
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return
            delta, kind = head >> 4, head & 0x0F
            last = last + delta if delta else self.zigzag()
            yield last, kind

    def list_head(self) -> tuple[int, int]:
        head = self.byte()
        n, kind = head >> 4, head & 0x0F
        if n == 15:
            n = self.varint()
        if n > len(self.d) - self.i:  # every element takes at least a byte
            raise ValueError("list past the end")
        return n, kind

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > self.MAX_DEPTH:
            raise ValueError("nested too deeply")
        if kind in (1, 2):
            return
        if kind == 3:
            self.i += 1
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.i += 8
        elif kind == 8:
            self.binary()
        elif kind in (9, 10):
            n, elem = self.list_head()
            for _ in range(n):
                if elem in (1, 2):
                    self.byte()
                else:
                    self.skip(elem, depth + 1)
        elif kind == 11:
            n = self.varint()
            if n > len(self.d) - self.i:
                raise ValueError("map past the end")
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.skip(kv >> 4, depth + 1)
                    self.skip(kv & 0x0F, depth + 1)
        elif kind == 12:
            for _, k in self.fields():
                self.skip(k, depth + 1)
        else:
            raise ValueError(f"unknown type {kind}")
        if self.i > len(self.d):
            raise ValueError("past the end")

    def file_metadata(self) -> tuple[int, list[tuple[int, list[tuple[str, int, int]]]]]:
        """FileMetaData: (num_rows, [(row group num_rows, [(column name, num_values, uncompressed size)])])."""
        rows, groups = 0, []
        for fid, kind in self.fields():
            if fid == 3 and kind == 6:
                rows = self.zigzag()
            elif fid == 4 and kind == 9:
                n, elem = self.list_head()
                if elem != 12:
                    raise ValueError("row groups are not structs")
                groups = [self._row_group() for _ in range(n)]
            else:
                self.skip(kind)
        return rows, groups

    def _row_group(self) -> tuple[int, list[tuple[str, int, int]]]:
        rows, cols = 0, []
        for fid, kind in self.fields():
            if fid == 1 and kind == 9:
                n, elem = self.list_head()
                if elem != 12:
                    raise ValueError("column chunks are not structs")
                cols = [self._column_chunk() for _ in range(n)]
            elif fid == 3 and kind == 6:
                rows = self.zigzag()
            else:
                self.skip(kind)
        return rows, cols

    def _column_chunk(self) -> tuple[str, int, int]:
        out = ("", 0, 0)
        for fid, kind in self.fields():
            if fid == 3 and kind == 12:
                out = self._column_meta()
            else:
                self.skip(kind)
        return out

    def _column_meta(self) -> tuple[str, int, int]:
        name, values, uncompressed = "", 0, 0
        for fid, kind in self.fields():
            if fid == 3 and kind == 9:
                n, elem = self.list_head()
                parts = [self.binary().decode("utf-8", "replace") for _ in range(n)] if elem == 8 else []
                if elem != 8:
                    for _ in range(n):
                        self.skip(elem)
                name = parts[0] if parts else ""
            elif fid == 5 and kind == 6:
                values = self.zigzag()
            elif fid == 6 and kind == 6:
                uncompressed = self.zigzag()
            else:
                self.skip(kind)
        return name, values, uncompressed
