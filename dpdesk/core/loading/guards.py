"""Read limits and the .xlsx bomb guard (security code): what a file may not make the loader do.

An .xlsx workbook is a zip archive: before calamine reads one, :func:`check_xlsx` inflates every part itself,
counting the real bytes against the declared sizes and the limits here, and writes the checked parts to a copy,
which is all calamine ever reads (see tests/trust/test_xlsx_bomb.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import zipfile
from pathlib import Path

from dpdesk.core.errors import InputError

#: Public cap on the number of rows; it keeps fixed-point sums exact in int64 (see queries.py).
MAX_ROWS = 2**31 - 1
MAX_RECORD_BYTES = 256 * 1024 * 1024
#: An .xlsx whose parts would unpack to more than this is refused (zip bombs).
MAX_XLSX_UNPACKED = 2 * 1024**3
MAX_XLSX_RATIO = 200
#: Read and inflate size when checking an .xlsx part's real size (bounds the check's memory).
XLSX_CHECK_CHUNK = 1024 * 1024


def check_rows(path: Path, n_rows: int) -> None:
    """Refuse a table of more than :data:`MAX_ROWS` rows."""
    if n_rows > MAX_ROWS:
        raise InputError(str(path), f"more than {MAX_ROWS} rows; dpdesk handles at most that many")


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
