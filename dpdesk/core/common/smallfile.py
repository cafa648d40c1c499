"""One reader for the small files dpdesk reads whole: plans, codebooks, keys, approvals, stated costs.

Such a file is read into memory at once, so it must be a regular file (a device such as /dev/zero never ends, a
FIFO blocks the reader) and no larger than a stated cap (:data:`MAX_PLAN_BYTES` for a plan or a codebook). The
file is opened without blocking and checked on the open descriptor before a byte is read; then at most the cap
and one byte more are read (a file that grows meanwhile is still refused). A refusal is an :class:`OSError`
whose ``strerror`` is a sentence in the user's language, so every caller's "cannot read {path}: {why}" says why.

The members of a package under review (:mod:`dpdesk.core.publish.review`) are read with ``nofollow``: a symbolic link is
refused as such, never followed (to /dev/zero, say), and :func:`hash_small_file` hashes one in blocks, bounded
the same way, without holding it in memory.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

from dpdesk.i18n import _

#: A plan or a codebook larger than this is refused before it is read (16 MiB; docs/data-loading.md's limits say so).
MAX_PLAN_BYTES: Final = 16 * 1024 * 1024


class NotSmallFile(OSError):
    """A file refused by :func:`read_small_file` (not a regular file, or larger than its cap)."""


def read_small_file(path: str | Path, limit: int = MAX_PLAN_BYTES, *, nofollow: bool = False) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; :class:`OSError` otherwise (a missing file,
    a folder, a device, pipe or socket, or a larger file: :class:`NotSmallFile`), before it is read.
    ``nofollow``: a symbolic link is refused too (:class:`NotSmallFile`), not followed."""
    chunks: list[bytes] = []
    _read_bounded(path, limit, nofollow, chunks.append)
    return b"".join(chunks)


def hash_small_file(path: str | Path, limit: int, *, nofollow: bool = False) -> str:
    """The SHA-256 (hex) of a regular file of at most ``limit`` bytes, read in blocks; refused as
    :func:`read_small_file` refuses, before a byte is read."""
    digest = hashlib.sha256()
    _read_bounded(path, limit, nofollow, digest.update)
    return digest.hexdigest()


def _read_bounded(path: str | Path, limit: int, nofollow: bool, take: Callable[[bytes], object]) -> None:
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    if nofollow:
        # Windows has no O_NOFOLLOW: look first
        if not getattr(os, "O_NOFOLLOW", 0) and stat.S_ISLNK(os.lstat(path).st_mode):  # pragma: no cover
            raise NotSmallFile(errno.ELOOP, _symlink())
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if nofollow and exc.errno in (
            errno.ELOOP,
            getattr(errno, "EMLINK", -1),
            getattr(errno, "EFTYPE", -1),
        ):
            raise NotSmallFile(errno.ELOOP, _symlink()) from None
        raise
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
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1024 * 1024))
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise NotSmallFile(errno.EFBIG, _too_large(size, limit))
            take(chunk)
    finally:
        os.close(fd)


def _symlink() -> str:
    return _("it is a symbolic link, not a file; dpdesk does not follow links here")


def _too_large(size: int, limit: int) -> str:
    return _("it holds {size} bytes, more than the {limit} dpdesk reads from such a file").format(
        size=f"{size:,}", limit=f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit:,} bytes"
    )
