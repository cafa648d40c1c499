"""One reader for the small files dpdesk reads whole: plans, codebooks, keys, approvals, stated costs.

Such a file is read into memory at once, so it must be a regular file (a device such as /dev/zero never ends, a
FIFO blocks the reader) and no larger than a stated cap (:data:`MAX_PLAN_BYTES` for a plan or a codebook). The
file is opened without blocking and checked on the open descriptor before a byte is read; then at most the cap
and one byte more are read (a file that grows meanwhile is still refused). A refusal is an :class:`OSError`
whose ``strerror`` is a sentence in the user's language, so every caller's "cannot read {path}: {why}" says why.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from dpdesk.i18n import _

#: A plan or a codebook larger than this is refused before it is read (16 MiB; the README's limits say so).
MAX_PLAN_BYTES: Final = 16 * 1024 * 1024


class NotSmallFile(OSError):
    """A file refused by :func:`read_small_file` (not a regular file, or larger than its cap)."""


def read_small_file(path: str | Path, limit: int = MAX_PLAN_BYTES) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; :class:`OSError` otherwise (a missing file,
    a folder, a device, pipe or socket, or a larger file: :class:`NotSmallFile`), before it is read."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, _("it is a folder, not a file"))
        if not stat.S_ISREG(st.st_mode):
            raise NotSmallFile(
                errno.EINVAL,
                _("it is not a regular file (a device, pipe or socket); dpdesk reads it only from a file"),
            )
        if st.st_size > limit:
            raise NotSmallFile(errno.EFBIG, _too_large(st.st_size, limit))
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise NotSmallFile(errno.EFBIG, _too_large(size, limit))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_large(size: int, limit: int) -> str:
    return _("it holds {size} bytes, more than the {limit} dpdesk reads from such a file").format(
        size=f"{size:,}", limit=f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit:,} bytes"
    )
