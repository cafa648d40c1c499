"""The register of ledger heads: what dpdesk already recorded for each dataset, so that a ledger that went back is seen.

A hash chain detects an edited, reordered or removed entry, but not a ledger cut at an entry boundary, an older
copy put back (a backup restore does this by accident) or a deleted file: each is a valid chain, shorter or
empty. So, beside the ledgers, the home keeps a **register**:

- ``<home>/ledgers/heads/<id>.json`` for every dataset: its public id, the **head** of its ledger (the sequence
  number and hash of its last entry, ``seq`` 0 before the first) and every local key (the data file's SHA-256)
  that names it. It is written when the dataset gets its id (before its first entry, with ``seq`` 0) and after
  every entry is appended, under the ledger's lock: the entry is fsynced first, then the head (written to a
  temporary file, fsynced, renamed, the folder fsynced). A crash between the two leaves the ledger one entry
  *ahead* of its head, which is accepted, and the head is moved up the next time the ledger is verified. What
  is accepted from that window is only what cannot lower the spent total or change what the dataset is
  (:func:`check_window`): spends, packages, corrections and old simulations, which only add cost; a checkpoint
  only when it holds exactly what the entries before it add up to; any other entry (settings, governance,
  acknowledgement, link, declare-new, forget-identity) only when its hash was recorded in the register as an
  **intent** before it was appended (:func:`record_intent`). A line appended by hand is otherwise broken.
- An acknowledgement replaces the ledger by a new chain, which is *behind* the old head. So that a crash between
  the replace and the new head cannot leave that chain refused (and an acknowledgement again charge the same gap
  twice), the new chain's first entry is recorded as the register file's **pending** head *before* the chain
  replaces the broken ledger (:func:`begin_reset`), and made the head after (:func:`finish_reset`). A ledger that
  holds the pending entry is that new chain, and is checked against it (the head is then moved to it); any other
  ledger (the broken one, when the replace never happened) is checked against the old head, as before.
- ``<home>/ledgers/anchored``: written once, after every ledger of the home was registered at its head, the first
  time this version opened the home (a home from before the register takes its ledgers as they are then).

Verifying a ledger (:meth:`dpdesk.core.ledger.book.Ledger.verify`) then also checks it against its head: a ledger that
ends before its recorded head (cut, or restored from an older copy), whose entry at the head's sequence number is
another one (replaced), or that is missing while the dataset is known, is broken (exit 3, named) until a privacy
officer acknowledges it; so is a dataset of an anchored home whose register file is missing or damaged (the
register was removed or edited, so a rollback cannot be ruled out). Because the register also lists each
dataset's keys, a data file whose ledger, ``<id>.key`` sidecar and ``keys/`` entry were all deleted is still
recognised as that dataset.

What one machine cannot see: a rollback of the whole home, register included (restoring the dpdesk folder from a
backup), or someone who deletes the ``anchored`` marker, the register and a ledger together. The officer's own
copies catch these: every release package and exported ledger carries the head it was made at, and
``dpdesk review PACKAGE --against LATER_EXPORT`` shows a later ledger that no longer reaches it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.common.jsonin import REGISTER, read_json
from dpdesk.core.ledger.entries import Entry
from dpdesk.i18n import _

_ID_RE = re.compile(r"ds-[0-9a-f]{32}")
_HEX_RE = re.compile(r"[0-9a-f]{64}")
_ZERO = "0" * 64
#: The largest register file read (a few keys and a head: far smaller).
_MAX_RECORD = REGISTER.max_bytes


@dataclass(frozen=True)
class Head:
    """A ledger's head: the sequence number and hash of its last entry (``seq`` 0 and zeros before the first)."""

    seq: int
    hash: str

    def to_dict(self) -> dict[str, int | str]:
        """As written into a register file, a package's ``ledger.json`` and the review's summary."""
        return {"seq": self.seq, "hash": self.hash}

    @staticmethod
    def from_dict(raw: object) -> Head:
        """A head read back; ValueError when it is not one."""
        if not isinstance(raw, dict):
            raise ValueError("not a head")
        seq, digest = raw.get("seq"), raw.get("hash")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ValueError("not a head")
        if not isinstance(digest, str) or _HEX_RE.fullmatch(digest) is None:
            raise ValueError("not a head")
        return Head(seq, digest)


NO_ENTRY = Head(0, _ZERO)


@dataclass(frozen=True)
class Record:
    """One dataset's register file: its public id, its ledger's head and the local keys that name it."""

    dataset: str
    #: None for a ledger that was already broken when the register was first made (it has no usable head)
    head: Head | None
    keys: tuple[str, ...] = field(default=())
    #: the first entry of an acknowledgement's new chain, recorded before that chain replaced the broken ledger
    #: (:func:`begin_reset`); None once it is the head (or when no acknowledgement is under way)
    pending: Head | None = None
    #: the governance record in force (its payload: the officer's key, recovery key and policy), None when the
    #: dataset is ungoverned; written with the head of every ``govern`` entry (:func:`advance_head`)
    governance: dict[str, Any] | None = None
    #: whether ``governance`` was recorded (False: a register file from before this field, which takes the
    #: governance of the next chain that verifies against its head)
    governance_known: bool = True
    #: the largest sequence number ever recorded as the head (since the last acknowledgement): a head below it
    #: was moved back by hand
    ever: int = 0
    #: entries after the head that dpdesk recorded before appending them (:func:`record_intent`): only these,
    #: among the entries that could change the settings, the governance or the identity, are accepted after it
    intents: tuple[Head, ...] = ()

    def with_head(self, head: Head | None, pending: Head | None) -> Record:
        """This record with another head and pending head (the keys, the governance and the intents kept)."""
        return Record(
            self.dataset,
            head,
            self.keys,
            pending,
            self.governance,
            self.governance_known,
            self.ever,
            self.intents,
        )


class DamagedRecord(Exception):
    """A register file that exists but cannot be read as one."""


def register_folder(home: Path) -> Path:
    """Where the register files are: ``<home>/ledgers/heads``."""
    return home / "ledgers" / "heads"


def _record_path(home: Path, dataset: str) -> Path:
    return register_folder(home) / f"{dataset}.json"


def _marker(home: Path) -> Path:
    return home / "ledgers" / "anchored"


def is_anchored(home: Path) -> bool:
    """Whether the home's ledgers are registered (the marker is written once, after every ledger was)."""
    return _marker(home).exists()


def read_record(home: Path, dataset: str) -> Record | None:
    """The register file of a dataset; None when it has none; :class:`DamagedRecord` when it cannot be read."""
    path = _record_path(home, dataset)
    try:
        with path.open("rb") as f:
            raw = f.read(_MAX_RECORD + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DamagedRecord(str(exc.strerror or exc)) from None
    try:
        if len(raw) > _MAX_RECORD:
            raise ValueError("too large")
        data = read_json(raw, REGISTER)
        if not isinstance(data, dict) or data.get("dataset") != dataset:
            raise ValueError("another dataset")
        keys = data.get("keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) and _HEX_RE.fullmatch(k) for k in keys):
            raise ValueError("keys")
        raw_head, raw_pending = data.get("head"), data.get("pending")
        governance = data.get("governance")
        if governance is not None and not isinstance(governance, dict):
            raise ValueError("governance")
        intents = data.get("intents", [])
        if not isinstance(intents, list):
            raise ValueError("intents")
        return Record(
            dataset,
            None if raw_head is None else Head.from_dict(raw_head),
            tuple(keys),
            None if raw_pending is None else Head.from_dict(raw_pending),
            governance,
            "governance" in data,
            _int_field(data, "ever"),
            tuple(Head.from_dict(x) for x in intents),
        )
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise DamagedRecord(path.name) from None


def recorded_head(home: Path, dataset: str) -> Head | None:
    """The head dpdesk recorded for a dataset's ledger: what the ledger must still reach.

    None when nothing can be read (no register file, a damaged one, or one made for a ledger already broken
    then: the caller cannot rely on it, and an acknowledgement must not take that as "nothing was spent").
    ``Head(0, ...)`` when the dataset has an id but no
    entry was ever recorded. For the acknowledgement: entries missing up to this head are a gap.
    """
    try:
        rec = read_record(home, dataset)
    except DamagedRecord:
        return None
    if rec is not None and rec.head is not None and rec.head.seq < rec.ever:
        return None  # the head was moved back by hand: it cannot be relied on
    return rec.head if rec is not None else None


def _write_record(home: Path, rec: Record, *, restart: bool = False) -> None:
    from dpdesk.core.common.fsio import fsync_dir as _fsync_dir
    from dpdesk.core.common.fsio import write_atomic

    folder = register_folder(home)
    new_folder = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    if new_folder:
        _fsync_dir(folder.parent)
    body: dict[str, Any] = {
        "dataset": rec.dataset,
        "head": None if rec.head is None else rec.head.to_dict(),
        "keys": sorted(set(rec.keys)),
    }
    if rec.pending is not None:
        body["pending"] = rec.pending.to_dict()
    after = rec.head.seq if rec.head is not None else 0
    intents = [h.to_dict() for h in rec.intents if h.seq > after]  # those the head reached are done
    if intents:
        body["intents"] = intents
    body.update(_kept_fields(home, rec, restart=restart))
    if rec.governance_known:
        body["governance"] = rec.governance
        if rec.governance is not None:
            body["governed_by"] = _fingerprints(rec.governance)
    write_atomic(_record_path(home, rec.dataset), (json.dumps(body, sort_keys=True) + "\n").encode("utf-8"))
    _fsync_dir(folder)


def _stored(home: Path, dataset: str) -> dict[str, Any]:
    """A register file as stored (empty when it is missing or cannot be read): for the fields kept across writes."""
    try:
        with _record_path(home, dataset).open("rb") as f:
            data = read_json(f.read(_MAX_RECORD + 1), REGISTER)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _kept_fields(home: Path, rec: Record, *, restart: bool) -> dict[str, Any]:
    """The fields every write keeps (under the register lock): ``ever``, the largest sequence number ever recorded
    as the head (only an acknowledgement's new chain restarts it), and the content identity's record
    (``identity``: a keyed fingerprint of the home's identity secret, ``contents``: how many content keys were
    recorded for the dataset; :func:`record_identity`)."""
    old = _stored(home, rec.dataset)
    out: dict[str, Any] = {}
    ever = _int_field(old, "ever")
    seq = rec.head.seq if rec.head is not None else 0
    out["ever"] = seq if restart else max(ever, seq)
    fingerprint = old.get("identity")
    if isinstance(fingerprint, str) and _HEX_RE.fullmatch(fingerprint):
        out["identity"] = fingerprint
        out["contents"] = _int_field(old, "contents")
    moved = old.get("moved_to")
    if isinstance(moved, str) and moved:
        out["moved_to"] = moved  # never cleared: not by a new chain, not by an acknowledgement
    return out


def record_moved(home: Path, dataset: str, to: str) -> None:
    """Record that a dataset's ledger was imported into a team's dataset ``to`` (``dpdesk team import``), before its
    ``moved`` entry is appended: from then on nothing is charged to it in this home, even if its chain is replaced
    (an acknowledgement keeps the record). Raises OSError when it cannot be written (then nothing is moved)."""
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is None:
            return
        path = _record_path(home, dataset)
        body = _stored(home, dataset)
        body["moved_to"] = to
        from dpdesk.core.common.fsio import write_atomic

        write_atomic(path, (json.dumps(body, sort_keys=True) + "\n").encode("utf-8"))


def moved_to(home: Path, dataset: str) -> str | None:
    """The team's dataset this home's dataset was imported into, as its register file records it, else None."""
    value = _stored(home, dataset).get("moved_to")
    return value if isinstance(value, str) and value else None


def _int_field(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def record_identity(home: Path, dataset: str, fingerprint: str, contents: int) -> None:
    """Record, in the dataset's register file, the fingerprint of the home's identity secret (a keyed hash of a
    constant under it, never the secret) and that ``contents`` content keys are recorded for the dataset.

    Called after ``identity/datasets/<id>.json`` was written, under the identity lock; the count only grows (a
    crash between the two leaves the identity file ahead of the register, which is accepted). A dataset with no
    register file is not registered here (its ledger registers it). Raises OSError when it cannot be written.
    """
    with _register_lock(home):
        old = _stored(home, dataset)
        rec = _current(home, dataset)
        if rec is None:
            return
        if old.get("identity") not in (None, fingerprint):
            return  # another secret was recorded: never overwritten here (the check refuses until it is resolved)
        count = max(contents, _int_field(old, "contents"))
        if old.get("identity") == fingerprint and _int_field(old, "contents") == count:
            return
        from dpdesk.core.common.fsio import write_atomic

        body = dict(old)
        body["identity"], body["contents"] = fingerprint, count
        body.setdefault("ever", rec.head.seq if rec.head is not None else 0)
        write_atomic(_record_path(home, dataset), (json.dumps(body, sort_keys=True) + "\n").encode("utf-8"))


def recorded_identities(home: Path) -> dict[str, tuple[str, int]]:
    """Every registered dataset whose content was recorded: public id -> (secret fingerprint, content keys)."""
    out: dict[str, tuple[str, int]] = {}
    for dataset in registered_datasets(home):
        old = _stored(home, dataset)
        fingerprint = old.get("identity")
        if isinstance(fingerprint, str):
            out[dataset] = (fingerprint, _int_field(old, "contents"))
    return out


def forget_identities(home: Path) -> list[str]:
    """Drop the record of the content identity from every register file (an officer's way out when the identity
    secret is lost for good: the content identities start over under a new secret). Returns the datasets."""
    from dpdesk.core.common.fsio import write_atomic

    done: list[str] = []
    with _register_lock(home):
        for dataset in registered_datasets(home):
            old = _stored(home, dataset)
            if "identity" not in old and "contents" not in old:
                continue
            body = {k: v for k, v in old.items() if k not in ("identity", "contents")}
            write_atomic(
                _record_path(home, dataset), (json.dumps(body, sort_keys=True) + "\n").encode("utf-8")
            )
            done.append(dataset)
    return done


@contextlib.contextmanager
def _register_lock(home: Path) -> Iterator[None]:
    """A short lock around each read-compare-write of a register file (never held while taking another lock)."""
    from dpdesk.core.common.fsio import locked as _locked

    (home / "ledgers").mkdir(parents=True, exist_ok=True)
    with _locked(home / "ledgers" / "heads.lock"):
        yield


def _current(home: Path, dataset: str) -> Record | None:
    try:
        return read_record(home, dataset)
    except DamagedRecord:
        return None  # rewritten below: only an acknowledgement or a forward move writes it


def advance_head(
    home: Path,
    dataset: str,
    head: Head,
    *,
    governance: Mapping[str, Any] | None = None,
    governs: bool = False,
) -> None:
    """Record ``head`` as the dataset's head if it is further on than the one recorded (never moves it back).

    ``governs``: the entry at ``head`` is a ``govern`` entry, whose ``governance`` is recorded in the same write
    (written to a temporary file, fsynced, renamed, the folder fsynced). Called after an entry is fsynced, under
    the ledger's lock, and when a verified ledger is found ahead of its head (an interrupted append). Raises
    OSError when the register cannot be written.
    """
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is not None and (rec.head is None or rec.head.seq >= head.seq):
            return  # never back; a head-less (broken) record changes only by an acknowledgement
        if rec is None:  # a new dataset (head 0) is ungoverned; otherwise its chain's governance is taken
            rec = Record(dataset, head, governance_known=head.seq == 0)
        new = rec.with_head(head, rec.pending)
        if governs:
            new = replace(new, governance=dict(governance) if governance is not None else None)
            new = replace(new, governance_known=True)
        _write_record(home, new)


#: Entry types that can only add to what was spent (or record a package): accepted after the recorded head without
#: an intent. A checkpoint is accepted there only when recomputed; every other type needs its intent.
ADDS_ONLY = frozenset({"spend", "package", "correction", "simulate"})


def needs_intent(entry_type: str) -> bool:
    """Whether an entry of this type is recorded in the register (:func:`record_intent`) before it is appended."""
    return entry_type not in ADDS_ONLY and entry_type != "checkpoint"


def record_intent(home: Path, dataset: str, intent: Head) -> None:
    """Record, before an entry that could change the settings, the governance or the identity is appended (under
    the ledger's lock), its sequence number and hash: if the process dies after the append and before its head is
    recorded, the entry is then known as dpdesk's own (:func:`check_window`), while the same line appended by
    hand is not. Nothing is recorded for a dataset without a register file or without a head (its ledger is
    broken or not anchored: verification says so). Raises OSError when the register cannot be written (then
    nothing may be appended)."""
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is None or rec.head is None:
            return
        _write_record(home, replace(rec, intents=(*rec.intents, intent)))


def check_window(
    home: Path, name: str, entries: Sequence[Entry], since: int, intents: Sequence[Head]
) -> None:
    """The entries after the recorded head ``since`` (an append interrupted before its head was recorded, or lines
    added by hand) must be ones that cannot lower what was spent or change the dataset: entries that only add
    cost (:data:`ADDS_ONLY`), a checkpoint that holds exactly what the entries before it add up to, a change of a
    governed dataset's governance (whose approval :func:`dpdesk.core.ledger.governed.settle` verified before), or an
    entry whose intent dpdesk recorded before appending it. A :class:`LedgerError` naming the first that is not."""
    from dpdesk.core.ledger.checkpoint import state_of
    from dpdesk.core.ledger.governed import governance_of

    for i in range(max(since, 0), len(entries)):
        e = entries[i]
        if e.type in ADDS_ONLY or Head(e.seq, e.hash) in intents:
            continue
        if e.type == "govern" and governance_of(entries[:i]) is not None:
            continue  # a change of a governed dataset's governance: its approval was verified (settle)
        if e.type == "checkpoint":
            if state_of(entries[:i]).to_dict()["state"] == e.get("state"):
                continue
            raise LedgerError(
                _(
                    "ledger {name}, entry {seq}: the checkpoint does not hold what the entries before it add up "
                    "to (it was edited or forged). {fix}"
                ).format(name=name, seq=e.seq, fix=_fix())
            )
        raise LedgerError(
            _(
                "ledger {name}, entry {seq}: this {type} entry was added after the last entry dpdesk recorded "
                "(entry {head}), and dpdesk did not write it: a line was appended to the ledger by hand. {fix}"
            ).format(name=name, seq=e.seq, type=e.type, head=since, fix=_fix())
        )


def record_governance(home: Path, dataset: str, governance: Mapping[str, Any] | None) -> None:
    """Record the governance in force (a payload, None: ungoverned) of a chain that verified against its head:
    one whose register file did not record it yet, or whose ``govern`` entry was appended (and its approval
    checked) after the recorded head (:func:`dpdesk.core.ledger.governed.settle`). Raises OSError when it cannot be
    written."""
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is None:
            return
        gov = dict(governance) if governance is not None else None
        _write_record(home, replace(rec, governance=gov, governance_known=True))


def begin_reset(home: Path, dataset: str, first: Head) -> None:
    """Record ``first``, the first entry of the new chain an officer's acknowledgement is about to put in place of
    the broken ledger, as the dataset's *pending* head; the head itself is kept (registered at ``seq`` 0 when the
    dataset had no register file: a new id for an old-format ledger).

    Called under the ledger's lock, after the new chain is made and before it replaces the broken ledger. Why this
    is conservative at every instant: until the replace, the ledger is the broken one, which does not hold
    ``first`` (a new entry, of a new time), so it is still checked against the old head and still refuses (and an
    acknowledgement again reaches the same old head: the same gap, the same stated costs); from the replace on, the
    ledger holds ``first`` and is the new chain, which carries over what the old head's ledger spent (every entry
    missing up to that head was a gap the officer stated). Raises OSError when the register cannot be written
    (then nothing was replaced).
    """
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is None:
            rec = Record(dataset, NO_ENTRY, governance_known=False)
        _write_record(home, rec.with_head(rec.head, first))


def finish_reset(
    home: Path, dataset: str, pending: Head, head: Head, governance: Mapping[str, Any] | None
) -> None:
    """Make ``head`` (the new chain's last entry, at or after ``pending``) the dataset's head, if ``pending`` is
    still the pending head (else someone finished it already, and the head may have moved on since);
    ``governance`` is the one the new chain's acknowledgement carries over (checked against the register's
    before: :func:`check_governance`)."""
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is None or rec.pending != pending:
            return
        gov = dict(governance) if governance is not None else None
        _write_record(home, Record(dataset, head, rec.keys, None, gov, True), restart=True)


def register_key(home: Path, dataset: str, key: str) -> None:
    """Remember that the local key ``key`` (a data file's SHA-256) names ``dataset`` (registering it, head 0)."""
    with _register_lock(home):
        rec = _current(home, dataset)
        if rec is not None and key in rec.keys:
            return
        if rec is None:
            _write_record(home, Record(dataset, NO_ENTRY, (key,)))
            return
        _write_record(home, replace(rec, keys=(*rec.keys, key)))


def dataset_of_key(home: Path, key: str) -> str | None:
    """The dataset the register lists ``key`` under, or None (the last resort when ``keys/`` and the sidecars
    were lost)."""
    folder = register_folder(home)
    if not folder.is_dir():
        return None
    for p in sorted(folder.glob("ds-*.json")):
        dataset = p.name.removesuffix(".json")
        if _ID_RE.fullmatch(dataset) is None:
            continue
        rec = _current(home, dataset)
        if rec is not None and key in rec.keys:
            return dataset
    return None


def registered_datasets(home: Path) -> list[str]:
    """Every dataset the register knows (including those whose ledger is gone)."""
    folder = register_folder(home)
    if not folder.is_dir():
        return []
    out = [p.name.removesuffix(".json") for p in sorted(folder.glob("ds-*.json"))]
    return [d for d in out if _ID_RE.fullmatch(d)]


def ensure_anchored(home: Path) -> None:
    """Register every ledger of a home from before the register at its head, then mark the home anchored.

    A no-op once the marker exists. A ledger whose chain does not verify is registered with its keys but no head
    (it is broken anyway; its acknowledgement records the new chain's head). Run under the key folder's lock.
    """
    if is_anchored(home):
        return
    folder = home / "ledgers"
    if not folder.is_dir():
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            _write_marker(home)
        return
    from dpdesk.core.common.fsio import locked as _locked
    from dpdesk.core.ledger.entries import is_dataset_id, read_chain

    with _locked(folder / "keys.lock"):
        if is_anchored(home):
            return
        keys: dict[str, set[str]] = {}
        for side in folder.glob("ds-*.key"):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                k = side.read_text(encoding="ascii").strip()
                if is_dataset_id(side.stem) and _HEX_RE.fullmatch(k):
                    keys.setdefault(side.stem, set()).add(k)
        if (folder / "keys").is_dir():
            for kf in (folder / "keys").iterdir():
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    d = kf.read_text(encoding="ascii").strip()
                    if is_dataset_id(d) and _HEX_RE.fullmatch(kf.name):
                        keys.setdefault(d, set()).add(kf.name)
        for p in folder.glob("ds-*.jsonl"):
            if is_dataset_id(p.stem):
                keys.setdefault(p.stem, set())
        for dataset, ks in sorted(keys.items()):
            path = folder / f"{dataset}.jsonl"
            head: Head | None = NO_ENTRY
            if path.exists():
                try:
                    entries = read_chain(path.read_bytes(), str(path), dataset)  # the chain alone
                    head = Head(entries[-1].seq, entries[-1].hash) if entries else NO_ENTRY
                except (OSError, LedgerError):
                    head = None  # broken already: it stays known (its keys), and broken until acknowledged
            with _register_lock(home):
                rec = _current(home, dataset)
                merged = tuple(sorted(ks | set(rec.keys if rec is not None else ())))
                if rec is not None and rec.head is not None and (head is None or rec.head.seq >= head.seq):
                    head = rec.head
                if rec is None:  # its governance is taken from its chain when that next verifies
                    rec = Record(dataset, head, governance_known=False)
                _write_record(home, replace(rec.with_head(head, rec.pending), keys=merged))
        _write_marker(home)


def _write_marker(home: Path) -> None:
    from dpdesk.core.common.fsio import fsync_dir as _fsync_dir
    from dpdesk.core.common.fsio import write_atomic

    write_atomic(
        _marker(home),
        b"dpdesk records every ledger's head in heads/ since this file was written; do not delete either\n",
    )
    _fsync_dir(home / "ledgers")


def _fingerprints(governance: Mapping[str, Any]) -> dict[str, str]:
    """The officer's and the recovery key's fingerprints of a governance payload (for whoever reads the file)."""
    from dpdesk.core.governance.officer import GovernanceError, GovernanceRecord

    try:
        rec = GovernanceRecord.from_payload(governance)
    except GovernanceError:
        return {}
    return {"officer": rec.officer.fingerprint, "recovery": rec.officer.recovery_fingerprint}


def _settle_governance(
    home: Path, dataset: str, name: str, before: Record, entries: Sequence[Entry], since: int
) -> None:
    """Check a verified chain's governance against the register's and the home's copy (a :class:`LedgerError`
    naming the disagreement), and record it when the register did not hold it yet."""
    from dpdesk.core.ledger.governed import check_copy, settle

    found = settle(name, before.governance_known, before.governance, entries, since)
    check_copy(home, dataset, name, found)
    payload = found.to_payload() if found is not None else None
    if not before.governance_known or payload != before.governance:
        with contextlib.suppress(OSError):  # a read-only home still verifies; it is recorded next time
            record_governance(home, dataset, payload)


def _short(digest: str) -> str:
    return digest[:16]


def _fix() -> str:
    return _(
        'A privacy officer must acknowledge it (dpdesk ledger acknowledge --data FILE --reason "...") before '
        "anything else is released"
    )


def check_ledger(
    home: Path, dataset: str, name: str, before: Record | None, entries: Sequence[Entry]
) -> None:
    """Check a verified chain (``entries``; empty when the file is missing) against the head recorded for it.

    ``before`` is the register file read *before* the ledger was (so that an append made meanwhile can only put
    the ledger ahead of it). Raises :class:`LedgerError` naming what was found; moves the head up when the ledger
    is ahead of it (an append interrupted between the entry and its head). A ledger that holds the register's
    pending head is the new chain of an acknowledgement interrupted before it recorded its head: it is accepted,
    and its head recorded (:func:`begin_reset` says why that is conservative).
    """
    pending = before.pending if before is not None else None
    if pending is not None and _holds(entries, pending):
        from dpdesk.core.ledger.governed import check_copy, settle

        assert before is not None  # the pending head is read from it
        found = settle(name, before.governance_known, before.governance, entries, 0)
        check_copy(home, dataset, name, found)
        check_window(home, name, entries, pending.seq, before.intents)
        with contextlib.suppress(OSError):  # a read-only home still verifies; the head is recorded next time
            finish_reset(
                home,
                dataset,
                pending,
                Head(entries[-1].seq, entries[-1].hash),
                found.to_payload() if found is not None else None,
            )
        return
    if before is None:
        raise LedgerError(
            _(
                "ledger {name}: dpdesk has no recorded head for this dataset, although it records one for every "
                "ledger of this home: the register ({folder}) was removed or edited, so the ledger may have been "
                "cut or replaced. {fix}"
            ).format(name=name, folder=register_folder(home), fix=_fix())
        )
    head = before.head
    if head is None:
        raise LedgerError(
            _(
                "ledger {name} was already broken when dpdesk first recorded the heads of this home's ledgers. "
                "{fix}"
            ).format(name=name, fix=_fix())
        )
    ever = before.ever
    if head.seq < ever:
        raise LedgerError(
            _(
                "ledger {name}: dpdesk recorded {ever} entries for this dataset, but its recorded head now says "
                "{seq}: the register ({path}) was edited, so the ledger may have been cut or replaced. {fix}"
            ).format(name=name, ever=ever, seq=head.seq, path=_record_path(home, dataset), fix=_fix())
        )
    if not entries and head.seq > 0:
        raise LedgerError(
            _(
                "ledger {name}: the ledger is missing or empty, but dpdesk recorded {seq} entries for this dataset "
                "(the last one with hash {hash}): it was deleted or replaced. {fix}"
            ).format(name=name, seq=head.seq, hash=_short(head.hash), fix=_fix())
        )
    last = entries[-1].seq if entries else 0
    if last < head.seq:
        raise LedgerError(
            _(
                "ledger {name}: the ledger ends at entry {last} but entry {seq} (hash {hash}) was recorded: it was "
                "truncated or restored from an older copy. {fix}"
            ).format(name=name, last=last, seq=head.seq, hash=_short(head.hash), fix=_fix())
        )
    if head.seq > 0 and entries[head.seq - 1].hash != head.hash:
        raise LedgerError(
            _(
                "ledger {name}: entry {seq} has hash {found} but dpdesk recorded {hash}: the ledger was replaced "
                "by another one. {fix}"
            ).format(
                name=name,
                seq=head.seq,
                found=_short(entries[head.seq - 1].hash),
                hash=_short(head.hash),
                fix=_fix(),
            )
        )
    _settle_governance(home, dataset, name, before, entries, head.seq)  # names an unapproved governance first
    check_window(home, name, entries, head.seq, before.intents)
    if last > head.seq:
        with contextlib.suppress(OSError):  # a read-only home still verifies; the head moves up next time
            advance_head(home, dataset, Head(last, entries[-1].hash))


def _holds(entries: Sequence[Entry], head: Head) -> bool:
    """Whether a verified chain holds ``head`` (its entry at the head's sequence number has the head's hash)."""
    return 1 <= head.seq <= len(entries) and entries[head.seq - 1].hash == head.hash


def read_before(home: Path, dataset: str, name: str) -> Record | None:
    """The register file of a dataset, read before its ledger is; broken (:class:`LedgerError`) when damaged.

    None when the dataset has no register file (:func:`check_ledger` says what that means).
    """
    try:
        return read_record(home, dataset)
    except DamagedRecord:
        raise LedgerError(
            _(
                "ledger {name}: the head dpdesk recorded for this dataset ({path}) cannot be read: the register "
                "was damaged or edited, so the ledger may have been cut or replaced. {fix}"
            ).format(name=name, path=_record_path(home, dataset), fix=_fix())
        ) from None
