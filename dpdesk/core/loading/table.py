"""The types a load produces: the table, its columns, and what the loader noticed (for the curator only)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.model.spec import ColumnSpec

#: Read size when hashing a whole file (the same block size as the CSV reader's).
HASH_BLOCK_BYTES = 8 * 1024 * 1024


@dataclass
class ColumnIssues:
    """Per-column counts for the curator: what became missing, and where the first one was; for int columns,
    also how many values were clamped to the bounds as they were stored (float values are clamped later, at
    query time: see :func:`dpdesk.core.release.datacheck.check_data`)."""

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


class BatchSink(Protocol):
    """Where a streamed load hands its batches (see :class:`~dpdesk.core.loading.columns.TableBuilder`)."""

    def add(self, batch: Table) -> None:
        """Take one batch of rows (a table of its own; its values are not kept after the call returns)."""


@dataclass
class Table:
    """The declared columns of a loaded data file, and its SHA-256 (the dataset's ledger key).

    A streamed table (``streamed`` set: see :mod:`dpdesk.core.release.streaming`) has columns without values: its
    rows went batch by batch to the sink, which holds what the release needs of them."""

    path: str
    sha256: str
    n_rows: int
    columns: dict[str, Column]
    ids: np.ndarray | None = None
    ids_missing: np.ndarray | None = None
    report: LoadReport = field(default_factory=LoadReport)
    streamed: BatchSink | None = None
    #: the content identity (scheme 2) computed in the same read, and the secret it is keyed with (in memory
    #: only: the caller checks it is the secret it resolves with); None when the reader did not compute it
    identity: Any = (
        None  # a ContentIdentity (dpdesk.core.loading.identity, which reads tables through this package)
    )
    identity_secret: bytes | None = field(default=None, repr=False)

    def specs(self) -> dict[str, ColumnSpec]:
        """The column declarations the table was loaded with."""
        return {n: c.spec for n, c in self.columns.items()}


def file_sha256(path: str | Path, progress: Progress = NULL_PROGRESS) -> str:
    """SHA-256 of a file's bytes (the dataset key), read in blocks with progress."""
    from dpdesk.core.loading.guards import check_regular_file

    p = Path(path)
    check_regular_file(p)  # /dev/zero would be hashed for ever, a FIFO would block the open
    h = hashlib.sha256()
    try:
        total = p.stat().st_size
        done = 0
        with p.open("rb") as f:
            while block := f.read(HASH_BLOCK_BYTES):
                h.update(block)
                done += len(block)
                progress.update(done, total, "hashing")
    except OSError as exc:
        raise InputError(str(p), f"cannot read the file: {exc.strerror or exc}") from None
    return h.hexdigest()
