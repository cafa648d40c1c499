"""The durable, hash-chained budget ledger, one per dataset.

A dataset is identified by the SHA-256 of its file's bytes: a re-saved copy of a table is a new
dataset with a ledger of its own. The ledger of a dataset is a JSON-lines file
``<home>/ledgers/<sha256>.jsonl``; every entry carries the hash of the previous one and its own
hash over its canonical JSON, so an edited, reordered or truncated ledger is detected.

Writes are append-only, made under an exclusive lock (``<sha256>.lock``, held for the whole
check-then-charge of a release so that two processes can never overspend together), and fsynced
before the caller may reveal anything (spend before reveal).

Entry types: ``spend`` (a release: plan, costs, totals and the released values), ``simulate``
(uncharged simulation runs on the data, written by versions before simulations were limited to
stand-in and public tables; still read), ``settings`` (budget, unit of privacy and accounting fixed at the
first release, or changed later by a privacy officer with a reason).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dpdesk.core.errors import LedgerError
from dpdesk.core.plan import canonical_json
from dpdesk.i18n import _

GENESIS = "0" * 64
ENTRY_TYPES = ("settings", "spend", "simulate", "acknowledge", "package")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def entry_hash(entry: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of an entry without its ``hash`` field."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
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


@dataclass
class Ledger:
    """The ledger of one dataset."""

    dataset: str
    path: Path

    @staticmethod
    def for_dataset(home: Path, sha256: str) -> Ledger:
        """The ledger of the dataset with this SHA-256 under a dpdesk home folder."""
        folder = home / "ledgers"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerError(
                _("cannot use the ledger folder {folder}: {err}; nothing was charged or revealed").format(
                    folder=folder, err=exc.strerror or exc)
            ) from None  # fmt: skip
        return Ledger(sha256, folder / f"{sha256}.jsonl")

    @property
    def lock_path(self) -> Path:
        """The lock file guarding this ledger's writers."""
        return self.path.with_suffix(".lock")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[LedgerTransaction]:
        """Hold the ledger's exclusive lock, verify it, and allow appends until the block ends."""
        try:
            lock = _locked(self.lock_path)
            lock.__enter__()
        except OSError as exc:
            raise LedgerError(
                _("cannot lock the ledger {path}: {err}; nothing was charged or revealed").format(
                    path=self.lock_path, err=exc.strerror or exc)
            ) from None  # fmt: skip
        try:
            entries = self.verify()
            yield LedgerTransaction(self, entries)
        finally:
            lock.__exit__(None, None, None)

    def acknowledge(self, reason: str) -> dict[str, Any]:
        """A privacy officer's answer to a broken ledger: keep it as evidence and start a new chain.

        The broken file is renamed (never deleted); the new chain opens with an ``acknowledge`` entry
        holding the reason, what was wrong, the broken file's SHA-256 and, carried over, every spend
        and the settings that could still be read from it, so the spent budget is never reset.
        """
        if not reason.strip():
            raise LedgerError(_("an acknowledgement needs a reason"))
        with _locked(self.lock_path):
            try:
                self.verify()
            except LedgerError as exc:
                problem = str(exc)
            else:
                raise LedgerError(_("the ledger {path} verifies: there is nothing to acknowledge").format(path=self.path))
            raw = self.path.read_bytes()
            carried: list[dict[str, Any]] = []
            settings: dict[str, Any] | None = None
            for line in raw.split(b"\n"):
                try:
                    e = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue
                if not isinstance(e, dict):
                    continue
                if e.get("type") == "spend" and isinstance(e.get("costs"), list):
                    carried.append({"costs": e["costs"], "delta_prime": e.get("delta_prime"),
                                    "release_id": e.get("release_id"), "seq": e.get("seq")})  # fmt: skip
                carried.extend(e.get("carried", []) if e.get("type") == "acknowledge" else [])
                if e.get("type") in ("settings", "acknowledge") and isinstance(e.get("settings"), dict):
                    settings = e["settings"]
            stamp = _now().replace(":", "").replace("+", "_")
            evidence = self.path.with_name(f"{self.dataset}.broken-{stamp}.jsonl")
            os.replace(self.path, evidence)
            _fsync_dir(self.path.parent)
            tx = LedgerTransaction(self, [])
            return tx.append(
                "acknowledge",
                {"reason": reason.strip(), "problem": problem, "broken_file": evidence.name,
                 "broken_sha256": hashlib.sha256(raw).hexdigest(), "carried": carried, "settings": settings},
            )  # fmt: skip

    def exists(self) -> bool:
        """Whether anything was ever recorded for this dataset."""
        return self.path.exists() and self.path.stat().st_size > 0

    def entries(self) -> list[dict[str, Any]]:
        """All entries, verified (raises :class:`LedgerError` if the chain is broken)."""
        return self.verify()

    def verify(self) -> list[dict[str, Any]]:
        """Read and check the whole chain; raise :class:`LedgerError` naming the first bad line."""
        if not self.path.exists():
            return []
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise LedgerError(_("ledger {path}: cannot read it: {err}").format(path=self.path,
                                                                                err=exc.strerror or exc)) from None
        if raw and not raw.endswith(b"\n"):
            raise LedgerError(_("ledger {path}: the last entry is incomplete (the file was truncated)").format(
                path=self.path))  # fmt: skip
        entries: list[dict[str, Any]] = []
        prev = GENESIS
        for lineno, line in enumerate(raw.split(b"\n")[:-1] if raw else [], start=1):
            where = _("ledger {path}, line {line}").format(path=self.path, line=lineno)
            try:
                entry = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise LedgerError(_("{where}: not a valid entry (damaged or edited)").format(where=where)) from None
            if not isinstance(entry, dict) or "hash" not in entry:
                raise LedgerError(_("{where}: not a valid entry (damaged or edited)").format(where=where))
            if entry.get("prev") != prev:
                raise LedgerError(_("{where}: the chain is broken (an entry was removed, reordered or edited)").format(
                    where=where))  # fmt: skip
            if entry.get("seq") != lineno:
                raise LedgerError(_("{where}: wrong sequence number (entries were removed or reordered)").format(
                    where=where))  # fmt: skip
            if entry.get("dataset") != self.dataset:
                raise LedgerError(_("{where}: the entry belongs to another dataset").format(where=where))
            if entry.get("type") not in ENTRY_TYPES:
                raise LedgerError(_("{where}: unknown entry type {type}").format(where=where,
                                                                               type=repr(entry.get("type"))))  # fmt: skip
            if entry_hash(entry) != entry["hash"]:
                raise LedgerError(_("{where}: the entry's content does not match its hash (it was edited)").format(
                    where=where))  # fmt: skip
            prev = entry["hash"]
            entries.append(entry)
        return entries


class LedgerTransaction:
    """Appends to a locked, verified ledger."""

    def __init__(self, ledger: Ledger, entries: list[dict[str, Any]]) -> None:
        self.ledger = ledger
        self.entries = entries

    def settings(self) -> dict[str, Any] | None:
        """The settings in force, or None before the first release."""
        return settings_in_force(self.entries)

    def append(self, entry_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Append one entry durably (write, flush, fsync) and return it with its hash."""
        prev = self.entries[-1]["hash"] if self.entries else GENESIS
        entry: dict[str, Any] = {
            "seq": len(self.entries) + 1,
            "type": entry_type,
            "time": _now(),
            "dataset": self.ledger.dataset,
            "prev": prev,
            **payload,
        }
        entry["hash"] = entry_hash(entry)
        line = (canonical_json(entry) + "\n").encode("utf-8")
        new_file = not self.ledger.path.exists()
        fd = os.open(self.ledger.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            _truncate_partial(self.ledger.path, len(line))
            raise LedgerError(
                _("ledger {path}: could not record the release ({err}); nothing was revealed").format(
                    path=self.ledger.path, err=exc.strerror or exc)
            ) from None  # fmt: skip
        os.close(fd)
        if new_file:
            _fsync_dir(self.ledger.path.parent)
        self.entries.append(entry)
        return entry


def _truncate_partial(path: Path, _length: int) -> None:
    """Best effort after a failed append: the verifier reports an incomplete last line otherwise."""
    with contextlib.suppress(OSError):
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            cut = raw.rfind(b"\n") + 1
            with path.open("r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())


def _fsync_dir(folder: Path) -> None:
    if sys.platform == "win32":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file via a temporary file, fsync and rename, so it is never seen half-written."""
    tmp = path.with_name(f".{path.name}.tmp")
    f: IO[bytes]
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def settings_in_force(entries: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The budget, unit of privacy and accounting fixed for a dataset (last settings or acknowledgement)."""
    for e in reversed(entries):
        if e["type"] in ("settings", "acknowledge") and isinstance(e.get("settings"), dict):
            return dict(e["settings"])
    return None


def is_known_dataset(home: Path, path_or_sha: str | Path) -> bool:
    """Whether a file (a :class:`~pathlib.Path`, hashed here) or the dataset with this SHA-256 (a str of 64
    hex digits) has a ledger under a dpdesk home: a dataset dpdesk releases from, hence private.

    The one place that answers it (simulations refuse such a file as "public"), so that the ledger's naming
    can change behind it.
    """
    if isinstance(path_or_sha, str) and re.fullmatch(r"[0-9a-f]{64}", path_or_sha):
        sha = path_or_sha
    else:
        from dpdesk.core.data import file_sha256

        sha = file_sha256(path_or_sha)
    return (home / "ledgers" / f"{sha}.jsonl").exists()


def list_ledgers(home: Path) -> list[Ledger]:
    """All dataset ledgers under a dpdesk home folder."""
    folder = home / "ledgers"
    if not folder.exists():
        return []
    return [Ledger(p.stem, p) for p in sorted(folder.glob("*.jsonl"))]
