"""The file store: each dataset's chain is ``<home>/ledgers/<id>.jsonl``, append-only, under ``<id>.lock``.

The :class:`~dpdesk.core.ledger.store.ChainStore` dpdesk has always had, now behind the store boundary: an OS advisory
lock per chain (released when the process ends, however), appends written with ``O_APPEND`` and fsynced (the
folder too when the file is new), a partial line left by a failed write cut off, evidence copies named by kind and
time (never overwriting other evidence), and a chain replaced by an atomic rename.
"""

from __future__ import annotations

import contextlib
import os
from contextlib import AbstractContextManager
from pathlib import Path

from dpdesk.core.common.fsio import fsync_dir, locked, truncate_partial, write_atomic
from dpdesk.core.ledger.entries import is_dataset_id


class FileStore:
    """The chains kept as JSON-lines files in one folder (a home's ``ledgers/``, or the folder of an exported copy)."""

    def __init__(self, folder: Path, suffix: str = ".jsonl") -> None:
        self.folder = folder
        #: how a chain's file name ends: ``.jsonl`` in a home; an exported copy under review keeps its own name
        self.suffix = suffix

    @staticmethod
    def of_file(path: Path) -> tuple[FileStore, str]:
        """The store holding exactly this file, and the chain's name in it (an exported copy may be named anything)."""
        return FileStore(path.parent, path.suffix), path.name.removesuffix(path.suffix)

    def path(self, name: str) -> Path:
        """The file of a chain."""
        return self.folder / f"{name}{self.suffix}"

    def label(self, name: str) -> str:
        return str(self.path(name))

    def has(self, name: str) -> bool:
        return self.path(name).exists()

    def exists(self, name: str) -> bool:
        p = self.path(name)
        return p.exists() and p.stat().st_size > 0

    def read(self, name: str) -> bytes:
        p = self.path(name)
        return p.read_bytes() if p.exists() else b""

    def read_tail(self, name: str) -> tuple[list[bytes], int] | None:
        from dpdesk.core.ledger import checkpoint as ck  # the tail's format is the checkpoint's

        return ck.read_tail(self.path(name))

    def locked(self, name: str) -> AbstractContextManager[None]:
        return locked(self.path(name).with_suffix(".lock"))

    def append(self, name: str, line: bytes) -> None:
        path = self.path(name)
        new_file = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        before = os.fstat(fd).st_size  # the writer's lock is held: nothing else appends meanwhile
        try:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):  # best effort: the chain then ends as it did before the append
                os.ftruncate(fd, before)
                os.fsync(fd)
            os.close(fd)
            truncate_partial(path, len(line))  # and never with an incomplete line
            raise
        os.close(fd)
        if new_file:
            fsync_dir(path.parent)

    def keep_evidence(self, name: str, raw: bytes, kind: str, stamp: str) -> str:
        evidence = self.folder / f"{name}.{kind}-{stamp}.jsonl"
        n = 1
        while evidence.exists() and evidence.read_bytes() != raw:  # never overwrite other evidence
            n += 1
            evidence = self.folder / f"{name}.{kind}-{stamp}-{n}.jsonl"
        write_atomic(evidence, raw)
        return evidence.name

    def replace(self, name: str, data: bytes) -> None:
        write_atomic(self.path(name), data)

    def datasets(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("ds-*.jsonl") if is_dataset_id(p.stem))
