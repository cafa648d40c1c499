"""Durable file writes and the exclusive lock the ledger's writers hold: the file primitives under the ledger, the
register (:mod:`dpdesk.core.ledger.anchor`), governance and the content identities, kept apart so that none of them
imports the ledger to write a file."""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from dpdesk.core.common import faults


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block: every writer of a ledger, its key
    index or the register holds one, so two processes never interleave their check-then-write."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows builds
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def truncate_partial(path: Path, _length: int) -> None:
    """Best effort after a failed append: the verifier reports an incomplete last line otherwise."""
    with contextlib.suppress(OSError):
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            cut = raw.rfind(b"\n") + 1
            with path.open("r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())


def fsync_dir(folder: Path) -> None:
    if sys.platform == "win32":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file via a temporary file, so it is never seen half-written: write and fsync the temporary file,
    fsync the folder, rename it over ``path``, fsync the folder again (each a :func:`dpdesk.core.common.faults.step`).

    An interruption leaves ``path`` as it was or as ``data``, never anything else; on an error the temporary
    file is removed and the error raised.
    """
    # a name of its own: two writers of the same file (two processes repairing the same key index) must not
    # rename each other's temporary file away (FileNotFoundError in the one that comes second)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    f: IO[bytes]
    try:
        faults.step(f"write {path.name}")
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            faults.step(f"fsync {path.name}")
            os.fsync(f.fileno())
        faults.step(f"fsync the folder of {path.name}")
        fsync_dir(path.parent)
        faults.step(f"rename {path.name}")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # the file is in place: a failure here is best effort, as the fsync's
        faults.step(f"fsync the folder after {path.name}")
        fsync_dir(path.parent)
