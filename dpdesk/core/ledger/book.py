"""The durable, hash-chained budget ledger, one per dataset.

A data file is recognised by the SHA-256 of its bytes (its *key*; a re-saved copy of a table is a
new dataset with a ledger of its own). The key never leaves the curator's machine: a deterministic
hash of the table is a confirmation oracle (whoever knows every other row can test candidates for
the missing one). Everything that is published names a dataset by its **public id**, ``ds-`` and
128 random bits made when its ledger is first written, and no entry holds the key, so no entry or
chain hash commits to it.

Files under ``<home>/ledgers/``: ``keys/<sha256>`` holds the public id of that file's dataset
(local only); ``<id>.jsonl`` is its ledger, JSON lines, every entry carrying the hash of the
previous one and its own hash over its canonical JSON, so an edited, reordered or truncated ledger
is detected. A ledger from before public ids (``<sha256>.jsonl``, entries naming the key) is
migrated when it is next opened: its chain is rebuilt under a new id, the old file kept as
evidence, and a ``migrate`` entry lists the releases whose packages exposed the hash.

Writes are append-only, made under an exclusive lock (``<id>.lock``, held for the whole
check-then-charge of a release so that two processes can never overspend together), and fsynced
before the caller may reveal anything (spend before reveal).

Which dataset a new file belongs to is decided once for the whole home: ``ledgers/keys.lock`` is held while a
file's key is written, and a file with no key yet is checked again under it, by content and by resemblance
(``Ledger.decide_new``, which every ledger opened by a data file for a release or a ``ledger`` verb carries:
:func:`dpdesk.core.identity.recognition.ledger_for`), before a new dataset is made; the new dataset's content is recorded
before the lock is released. **Lock order** (all OS advisory locks, released when the process ends,
however): ``ledgers/keys.lock``, then an old-format ledger's ``<sha256>.lock`` (migration), then
``identity/identity.lock``, then ``ledgers/heads.lock`` (the register); a ledger's ``<id>.lock`` is taken only
with neither ``keys.lock`` nor ``identity.lock`` held (:meth:`Ledger.transaction` makes the id first), and then
only ``heads.lock`` inside it; several ledgers' locks are taken in the order of their ids. A lock is never taken
twice by one process (``flock`` on a second descriptor would wait for itself).

Entry types: ``spend`` (a release: plan, costs, totals and the released values), ``simulate``
(uncharged simulation runs on the data, written by versions before simulations were limited to
stand-in and public tables; still read, and charged by a correction), ``settings`` (budget, unit of
privacy and accounting fixed at the first release, or changed later by a privacy officer with a
reason), ``acknowledge`` (a broken ledger accepted by an officer), ``package`` (the files of a release
package), ``migrate`` (the rebuild of a ledger from before public ids), ``correction`` (a charge added
for spends booked too low by an earlier version; see :mod:`dpdesk.core.ledger.recost`), ``govern`` (the dataset placed
under a privacy officer's key, or its policy or key changed with their approval; see
:mod:`dpdesk.core.ledger.governed`), ``link`` (a near-copy of the table, a new local key, charged to this ledger from
now on), ``declare_new`` (a near-copy declared a new dataset, naming it; with the officer's approval when
governed) and ``declared_new`` (the first entry of that new dataset, naming the one it resembles), and
``forget_identity`` (the home's content identities forgotten, with the officer's approval when governed), and
``checkpoint`` (what the history before it adds up to, so that commands read the tail of the ledger: see
:mod:`dpdesk.core.ledger.checkpoint`). None of them records an overlap count or anything else derived from the rows (see :mod:`dpdesk.core.identity.recognition`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.common.fsio import fsync_dir as _fsync_dir
from dpdesk.core.common.fsio import locked as _locked
from dpdesk.core.common.fsio import write_atomic
from dpdesk.core.common.text import shown
from dpdesk.core.ledger import anchor
from dpdesk.core.ledger.entries import (
    GENESIS,
    MIGRATION_REASON,
    Entry,
    entry_hash,
    is_dataset_id,
    loads_entries,
    new_dataset_id,
    parse_entry,
    read_chain,
    stored_hash_matches,
    written_by,
    written_entry,
)
from dpdesk.core.ledger.entries import checked_line as _checked_line
from dpdesk.core.ledger.entries import now as _now
from dpdesk.core.ledger.filestore import FileStore
from dpdesk.core.model.spec import canonical_json
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.carryover import Assessment, StatedCost
    from dpdesk.core.ledger.checkpoint import State
    from dpdesk.core.ledger.pgstore import PgStore
    from dpdesk.core.ledger.store import ChainStore

_KEY_RE = re.compile(r"[0-9a-f]{64}")

#: (home, a file's SHA-256) -> (the dataset it belongs to, or None; a refusal to raise once the key lock is
#: released, or None): called with ``ledgers/keys.lock`` held, it takes no lock but ``identity.lock`` and
#: ``heads.lock`` (:func:`dpdesk.core.identity.recognition.recheck_new`)
DecideNew = Callable[[Path, str], tuple[str | None, Callable[[], LedgerError] | None]]


@dataclass
class Ledger:
    """The ledger of one dataset.

    ``dataset`` is the public id (None for a data file that has no ledger yet: the id is made when
    the first entry is written); ``key`` is the local SHA-256 of the data file (never written into
    an entry); ``legacy`` marks a ledger from before public ids that could not be migrated because
    its chain is broken (only :meth:`verify`, which names the problem, and :meth:`acknowledge`,
    which migrates it, work on it).
    """

    dataset: str | None
    path: Path | None
    key: str | None = None
    home: Path | None = None
    legacy: bool = False
    #: The ``migrate`` entry, when opening this ledger rebuilt it from the old format just now.
    migrated: Entry | None = None
    #: How a file with no dataset yet is decided again under the key lock before a new dataset is made for it
    #: (:func:`dpdesk.core.identity.recognition.ledger_for` sets it): the dataset of the same content, or a refusal to
    #: raise (a near-copy); None: by its bytes alone (a ledger opened without the content identities)
    decide_new: DecideNew | None = field(default=None, repr=False, compare=False)
    #: the home's own file, even when the home uses a team's ledger (``dpdesk team import`` reads it from there)
    own_files: bool = field(default=False, compare=False)

    @property
    def store(self) -> ChainStore:
        """Where this ledger's chain is kept (:mod:`dpdesk.core.ledger.store`): the team's database when the home
        uses a team ledger (:mod:`dpdesk.core.ledger.team`), else the file store of its folder."""
        team = self.team
        if team is not None:
            return team
        assert self.path is not None
        return FileStore.of_file(self.path)[0]

    @property
    def team(self) -> PgStore | None:
        """The team ledger's store when this dataset of a home is kept there (never for an exported copy, which
        has no home, or an old-format ledger, which only a home's files hold)."""
        if self.home is None or self.legacy or self.own_files:
            return None
        from dpdesk.core.ledger.pgstore import team_store

        return team_store(self.home)

    @property
    def _chain(self) -> str:
        """The chain's name in its store: the public id (an old-format ledger's: the data file's SHA-256; an
        exported copy's: its file's name)."""
        assert self.path is not None
        return FileStore.of_file(self.path)[1]

    @staticmethod
    def of(home: Path, dataset: str) -> Ledger:
        """The ledger of a known dataset of a dpdesk home, by its public id (nothing is created); a
        :class:`LedgerError` for anything that is not a public id (a name never reaches outside the ledgers)."""
        if not is_dataset_id(dataset):
            raise LedgerError(_("{dataset} is not a dataset id").format(dataset=shown(dataset)))
        return Ledger(dataset, FileStore(home / "ledgers").path(dataset), home=home)

    def raw(self) -> bytes:
        """The chain's bytes as stored (b"" when nothing was recorded); :class:`OSError` when it cannot be read."""
        if self.path is None or (self.dataset is None and self.team is not None):
            return b""
        return self.store.read(self._chain)

    @staticmethod
    def for_dataset(home: Path, sha256: str) -> Ledger:
        """The ledger of the data file with this SHA-256 under a dpdesk home folder (nothing is created): in the
        team's ledger when the home uses one (the team's dataset of the file, by its keyed hash)."""
        folder = home / "ledgers"
        from dpdesk.core.ledger.pgstore import team_store

        team = team_store(home)
        if team is not None:
            known = team.dataset_of(sha256)
            return Ledger(known, folder / f"{known}.jsonl" if known else None, sha256, home)
        try:
            (folder / "keys").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerError(
                _("cannot use the ledger folder {folder}: {err}; nothing was charged or revealed").format(
                    folder=folder, err=exc.strerror or exc
                )
            ) from None
        _anchor_home(home)
        known = _read_key(folder, sha256)
        if known is not None:
            return Ledger(known, folder / f"{known}.jsonl", sha256, home)
        if (folder / f"{sha256}.jsonl").exists():
            with _locked(folder / "keys.lock"):
                known = _read_key(folder, sha256)
                if known is not None:
                    return Ledger(known, folder / f"{known}.jsonl", sha256, home)
                return _migrate(home, sha256)
        return Ledger(None, None, sha256, home)

    def _name(self) -> str:
        """How messages name this ledger: its file name, which holds only the public id."""
        if self.legacy or self.path is None:
            return _("this dataset's ledger (older format)")
        return self.path.name

    def _refresh(self) -> None:
        """Pick up the public id another writer gave this dataset since this object was made."""
        if self.dataset is None and not self.legacy and self.home is not None and self.key is not None:
            team = self.team
            if team is not None:
                known = team.dataset_of(self.key)
                if known is not None:
                    self.dataset, self.path = known, self.home / "ledgers" / f"{known}.jsonl"
                return
            known = _read_key(self.home / "ledgers", self.key)
            if known is not None:
                self.dataset, self.path = known, self.home / "ledgers" / f"{known}.jsonl"

    def ensure_id(self) -> None:
        """Give a dataset with no ledger yet its public id (once, under the key folder's lock)."""
        if self.dataset is not None:
            return
        if self.legacy:
            raise LedgerError(
                _(
                    "{name} is broken: a privacy officer must acknowledge it first (dpdesk ledger acknowledge "
                    '--data FILE --reason "...")'
                ).format(name=self._name())
            )
        assert self.home is not None and self.key is not None
        folder = self.home / "ledgers"
        team = self.team
        if team is not None:  # the team's database decides, for every home of the team at once
            claimed = team.claim(self.key, new_dataset_id())
            self.dataset, self.path = claimed, folder / f"{claimed}.jsonl"
            return
        refusal: Callable[[], LedgerError] | None = None
        with _locked(folder / "keys.lock"):
            known = _read_key(folder, self.key)
            if known is None and self.decide_new is not None:
                # the file's dataset is decided again here, under the home-wide key lock, and its content is
                # recorded before the lock is released: two saves of one table first used at once find one
                # dataset (the unlocked resolution before the release only saw what was known then)
                known, refusal = self.decide_new(self.home, self.key)
                if known is not None:
                    _link_locked(folder, self.key, known)
            if known is None and refusal is None:
                known = new_dataset_id()
                _write_key(folder, self.key, known)
        if known is None:
            assert refusal is not None
            raise refusal()  # built outside the lock: it reads the resembled datasets' ledgers
        self.dataset, self.path = known, folder / f"{known}.jsonl"

    @property
    def lock_path(self) -> Path:
        """The lock file guarding this ledger's writers."""
        assert self.path is not None
        return self.path.with_suffix(".lock")

    @contextlib.contextmanager
    def transaction(self, *, retired: bool = False, moving: bool = False) -> Iterator[LedgerTransaction]:
        """Hold the ledger's exclusive lock, read it (:meth:`read`: from its last checkpoint when that is bound to
        the recorded head, else verified whole), and allow appends until the block ends.

        A dataset merged into another (its last entry ``merged_into``) is refused (:class:`LedgerError`, exit 3):
        nothing is charged to it any more (``retired``: the merge itself, which reads it). So is a home's ledger
        imported into a team's (its last entry ``moved``, or its register's record; ``moving``: the import itself)."""
        if self.legacy:
            self.verify()  # an old-format ledger is only left unmigrated when broken: this names the problem
        if not moving:
            self.refuse_unimported()
        if self.dataset is None:
            self.ensure_id()
        try:
            lock = self.store.locked(self._chain)
            lock.__enter__()
        except OSError as exc:
            raise LedgerError(
                _("cannot lock the ledger {path}: {err}; nothing was charged or revealed").format(
                    path=self.lock_path, err=exc.strerror or exc
                )
            ) from None
        try:
            state = self.read()
            if state.retired_into is not None and not retired:
                raise LedgerError(
                    _(
                        "dataset {dataset} was merged into dataset {into} (two datasets of one table): nothing is "
                        "charged to it any more; its releases count in the ledger of {into}. Run the command again: "
                        "the table's files are charged to {into} from now on (dpdesk ledger merge --data FILE moves "
                        "them at once)"
                    ).format(dataset=self.dataset, into=state.retired_into)
                )
            moved = state.moved_to
            if moved is None and self.team is None and self.home is not None and self.dataset is not None:
                moved = anchor.moved_to(self.home, self.dataset)
            if moved is not None and not moving:
                raise LedgerError(
                    _(
                        "dataset {dataset} of this dpdesk home was imported into a team's ledger (as dataset "
                        "{to}): its budget is the team's now, and nothing is charged to this home's own ledger of "
                        "it any more. Release it through the team's ledger (dpdesk team connect URL)"
                    ).format(dataset=self.dataset, to=moved)
                )
            yield LedgerTransaction(self, state.tail if state.full else None, state=state)
        finally:
            lock.__exit__(None, None, None)

    def refuse_unimported(self) -> None:
        """In a home that uses a team's ledger, refuse a table whose history is still in the home's own ledger (by
        the file's bytes, or its rows when the home knows them): released in the team before that history was
        imported (``dpdesk team import``), it would start a second budget there."""
        if self.home is None or self.key is None or self.legacy or self.team is None:
            return
        local = unimported_dataset(self.home, self.key)
        if local is not None:
            raise LedgerError(
                _(
                    "this table has history in this dpdesk home's own ledger (dataset {dataset}), which the team's "
                    "ledger does not hold yet: released here, it would start a second budget in the team. Import "
                    "it first: dpdesk team import --data FILE; nothing was charged or revealed"
                ).format(dataset=local)
            )

    def acknowledge(
        self,
        reason: str,
        *,
        costs: Sequence[StatedCost] = (),
        settings: Mapping[str, Any] | None = None,
        head: tuple[int, str] | None = None,
        exported: Sequence[Mapping[str, Any]] = (),
        gate: Callable[[Assessment, Sequence[StatedCost], Mapping[str, Any] | None], Mapping[str, Any]]
        | None = None,
    ) -> Entry:
        """A privacy officer's answer to a broken ledger: keep it as evidence and start a new chain.

        What is carried over is never less than what was spent (:mod:`dpdesk.core.ledger.carryover`): the entries that
        still verify as they are, and, for every entry that does not and every gap in the sequence numbers (up to
        ``head``, by default the head recorded for this ledger in the register), the cost the officer states in
        ``costs``; the settings of the last settings entry that verifies, or ``settings`` (the officer's) when
        none does. Without them :class:`~dpdesk.core.ledger.carryover.CostsNeeded` is raised with the offers, and
        nothing is written. ``exported`` are the entries of exported copies of the ledger (they add offers).

        The broken file is copied as evidence (never deleted); the new chain opens with an ``acknowledge`` entry
        holding the reason, what was wrong, the evidence file's name and SHA-256, the releases carried over, the
        stated costs and the settings. The evidence copy and then the new chain are written and synced (file and
        folder) before the new chain replaces the broken one in one rename: an interruption at any point leaves
        either the broken ledger (which refuses releases and can be acknowledged again) or the new chain, never
        a ledger that reads as less spent; the new chain's first entry is recorded in the register as pending
        before the rename, so that the new chain is accepted even when the process dies before its head is
        recorded (:func:`dpdesk.core.ledger.anchor.begin_reset`). A broken ledger from before public ids gets its public id here, and
        nothing carried over names the data file's SHA-256.

        ``gate`` (a governed dataset's check, :mod:`dpdesk.core.ledger.governed`) is called under the lock with the
        assessment, the stated costs and settings before anything is written; it raises to refuse, or returns
        fields added to the ``acknowledge`` entry (the governance carried over and the approval).
        """
        if not reason.strip():
            raise LedgerError(_("an acknowledgement needs a reason"))
        args = (reason, costs, settings, head, exported, gate)  # the recorded head is read under the lock
        if self.legacy:
            assert self.home is not None and self.key is not None
            with _locked(self.home / "ledgers" / "keys.lock"):
                if _read_key(self.home / "ledgers", self.key) is not None:
                    raise LedgerError(_("this dataset's ledger was already acknowledged; open it again"))
                return self._acknowledge_locked(*args)
        if self.path is None:
            raise LedgerError(
                _("nothing has been recorded for this dataset: there is nothing to acknowledge")
            )
        with self.store.locked(self._chain):
            return self._acknowledge_locked(*args)

    def _head_to_reach(self, head: tuple[int, str] | None) -> tuple[int, str] | None:
        """``head`` if given, else the head recorded in the register (:func:`dpdesk.core.ledger.anchor.recorded_head`):
        entries missing up to it are a gap whose cost the officer states, never nothing spent. Read under the
        ledger's lock, after the ledger was verified (which may have recorded an interrupted acknowledgement's
        head)."""
        if head is not None or self.home is None or self.dataset is None:
            return head
        recorded = anchor.recorded_head(self.home, self.dataset)
        return (recorded.seq, recorded.hash) if recorded is not None and recorded.seq > 0 else None

    def assess_broken(
        self, *, head: tuple[int, str] | None = None, exported: Sequence[Mapping[str, Any]] = ()
    ) -> Assessment:
        """What an acknowledgement of this broken ledger could carry over, and what needs a stated cost
        (:func:`dpdesk.core.ledger.carryover.assess`); a :class:`LedgerError` when the ledger verifies."""
        from dpdesk.core.ledger.carryover import assess

        assert self.path is not None
        try:
            entries = (
                self.verify()
            )  # checked against the recorded head too (a ledger behind it does not verify)
        except LedgerError as exc:
            problem = str(exc)
            head = self._head_to_reach(head)
        else:
            at_head = entries[head[0] - 1].hash if head is not None and 1 <= head[0] <= len(entries) else None
            if head is None or at_head == head[1]:
                raise LedgerError(
                    _("the ledger {path} verifies: there is nothing to acknowledge").format(path=self.path)
                )
            problem = _("ledger {path}: it does not hold its recorded head (entry {seq})").format(
                path=self.path, seq=head[0]
            )
        try:
            raw = self.store.read(self._chain)  # b"" for a deleted ledger of a known dataset
        except OSError as exc:
            raise LedgerError(
                _("ledger {path}: cannot read it: {err}").format(path=self._name(), err=exc.strerror or exc)
            ) from None
        expected = self.key if self.legacy else self.dataset
        return assess(raw, expected, problem, head=head, exported=exported)

    def _acknowledge_locked(
        self,
        reason: str,
        costs: Sequence[StatedCost],
        stated_settings: Mapping[str, Any] | None,
        head: tuple[int, str] | None,
        exported: Sequence[Mapping[str, Any]],
        gate: Callable[[Assessment, Sequence[StatedCost], Mapping[str, Any] | None], Mapping[str, Any]]
        | None = None,
    ) -> Entry:
        from dpdesk.core.ledger.carryover import carry_over

        assert self.path is not None
        found = self.assess_broken(head=head, exported=exported)
        raw = self.store.read(self._chain)  # b"" for a deleted ledger of a known dataset
        carried, settings, stated = carry_over(found, costs, stated_settings)
        governed = dict(gate(found, costs, stated_settings)) if gate is not None else {}
        settings_from = "stated" if found.settings is None else "verified"
        if self.legacy:
            assert self.home is not None and self.key is not None
            dataset = new_dataset_id()
            carried, settings = _scrub(carried, self.key, dataset), _scrub(settings, self.key, dataset)
            stated = _scrub(stated, self.key, dataset)
            path = self.home / "ledgers" / f"{dataset}.jsonl"
        else:
            assert self.dataset is not None
            dataset, path = self.dataset, self.path
        stamp = _now().replace(":", "").replace("+", "_")
        store = FileStore(path.parent)
        try:
            evidence = store.keep_evidence(dataset, raw, "broken", stamp)
            return self._replace_chain(
                store,
                path,
                dataset,
                {
                    "reason": reason.strip(),
                    "problem": found.problem,
                    "broken_file": evidence,
                    "broken_sha256": hashlib.sha256(raw).hexdigest() if not self.legacy else None,
                    "carried": carried,
                    "settings": settings,
                    "settings_from": settings_from,
                    "stated": stated,
                    **governed,
                },
            )
        except OSError as exc:
            raise LedgerError(
                _(
                    "could not write the acknowledgement ({err}); the broken ledger is unchanged and still refuses "
                    "releases"
                ).format(err=exc.strerror or exc)
            ) from None

    def _replace_chain(self, store: ChainStore, path: Path, dataset: str, payload: dict[str, Any]) -> Entry:
        """Start the chain of ``dataset`` again with an ``acknowledge`` entry holding ``payload`` (the broken chain
        was kept as evidence first)."""
        old_path = self.path
        assert old_path is not None
        entry: dict[str, Any] = {
            "seq": 1,
            "type": "acknowledge",
            "time": _now(),
            "dataset": dataset,
            "prev": GENESIS,
            **payload,
            **written_by(),
        }
        entry["hash"] = entry_hash(entry)
        first = anchor.Head(1, entry["hash"])
        # The new chain is behind the head recorded for the broken ledger. Its first entry is recorded as the
        # pending head before the chain replaces the broken ledger, and made the head after: a crash in between
        # leaves a ledger that holds the pending entry, which verification accepts as this new chain and whose
        # head it then records (no second acknowledgement, no gap stated and charged twice); a crash before the
        # replace leaves the broken ledger, still checked against the old head (anchor.begin_reset says why).
        if self.home is not None:
            anchor.begin_reset(self.home, dataset, first)
        store.replace(dataset, (canonical_json(entry) + "\n").encode("utf-8"))
        if self.home is not None:
            with contextlib.suppress(
                OSError
            ):  # the new chain is in place: verification records its head then
                anchor.finish_reset(self.home, dataset, first, first, entry.get("governance"))
        if self.legacy:
            assert self.home is not None and self.key is not None
            _write_key(self.home / "ledgers", self.key, dataset)
            with contextlib.suppress(OSError):
                old_path.unlink()  # its copy is the evidence
            _fsync_dir(path.parent)
            self.dataset, self.path, self.legacy = dataset, path, False
        return parse_entry(entry)

    def exists(self) -> bool:
        """Whether anything was ever recorded for this dataset."""
        self._refresh()
        return self.path is not None and self.store.exists(self._chain)

    def entries(self) -> list[Entry]:
        """All entries, verified (raises :class:`LedgerError` if the chain is broken)."""
        return self.verify()

    def verify(self) -> list[Entry]:
        """Read and check the whole chain, and return its typed entries; raise :class:`LedgerError` naming the first
        bad line.

        Messages name the ledger by its path, which holds only the public id (an old-format ledger,
        whose file name is the data's SHA-256, is named in words), so they can be shown and recorded.
        """
        self._refresh()
        anchored, before = self._recorded()
        if self.path is None or not self.store.has(self._chain):
            if anchored:
                assert self.home is not None and self.dataset is not None
                anchor.check_ledger(self.home, self.dataset, str(self.path), before, [])
            return []
        label = self._name() if self.legacy else self.store.label(self._chain)
        expected = self.key if self.legacy else self.dataset
        try:
            raw = self.store.read(self._chain)
        except OSError as exc:
            raise LedgerError(
                _("ledger {path}: cannot read it: {err}").format(path=label, err=exc.strerror or exc)
            ) from None
        entries = read_chain(raw, label, expected)
        if anchored:
            from dpdesk.core.ledger.governed import check_approved

            assert self.home is not None and self.dataset is not None
            anchor.check_ledger(self.home, self.dataset, label, before, entries)
            check_approved(label, entries)  # a governed dataset's changes, whatever its policy on plans
        return entries

    def read(self) -> State:
        """What the history holds (:class:`dpdesk.core.ledger.checkpoint.State`), read from the end of the file: the last
        checkpoint and the entries after it, trusted only when bound to the head the register recorded
        (:meth:`_read_from_checkpoint`); otherwise the whole chain, verified exactly as :meth:`verify` does (raises
        :class:`LedgerError` if it is broken)."""
        from dpdesk.core.ledger import checkpoint as ck

        self._refresh()
        state = self._read_from_checkpoint()
        if state is None:
            entries = self.verify()
            state = ck.state_of(entries)
        return state

    def back_to(self, state: State, seq: int) -> tuple[str, list[Entry]] | None:
        """The hash of this chain's entry ``seq`` and the verified entries after it, up to the head of ``state`` (a
        history read by :meth:`read` or a transaction); None when the chain holds no entry ``seq``.

        What a plan approval needs of the chain (:func:`dpdesk.core.ledger.governed.require_plan_with`): that the head
        it names is in the chain, and the nonces used since (an approval is only ever used after the head it was
        signed at, so a replayed one is among them, whatever a checkpoint says). Read from the entries ``state``
        holds when they reach back that far (the checkpoint links to the entry before it), else read back from the
        end of the file to entry ``seq``, each line verified as a link of the chain that ends at ``state``'s head:
        the cost is the distance to that entry, not the length of the history. The whole chain is verified instead
        when that cannot be done (a team's chain, a file changed since, damage, which the full verification names).
        """
        if not 1 <= seq <= state.seq:
            return None
        first = state.tail[0] if state.tail else None
        if first is not None and first.seq <= seq + 1:
            after = [e for e in state.tail if e.seq > seq]
            return (after[0].prev if after else state.hash), after
        if not state.full and self.team is None:
            got = self._read_back(state, seq)
            if got is not None:
                return got[0].hash, got[1:]
        entries = self.verify()
        if seq > len(entries):
            return None
        return entries[seq - 1].hash, list(entries[seq:])

    def _read_back(self, state: State, seq: int) -> list[Entry] | None:
        """Entries ``seq`` to ``state``'s head read from the end of the file, each verified as a link of a chain
        ending at that head (its sequence number and hash); None when they are not (the caller verifies all)."""
        from dpdesk.core.ledger import checkpoint as ck

        if self.path is None or self.legacy:
            return None
        count = state.seq - seq + 1
        try:
            lines = ck.read_last(self.path, count)
        except OSError:
            return None
        if lines is None or len(lines) != count:
            return None
        try:
            first = loads_entries(lines[0].decode("utf-8"))
            prev = first.get("prev") if isinstance(first, dict) else None
            if not isinstance(prev, str):
                return None
            out: list[Entry] = []
            for n, line in enumerate(lines, start=seq):
                entry = _checked_line(line, str(n), prev, n, self.dataset)
                prev = entry.hash
                out.append(entry)
        except (ValueError, LedgerError):
            return None
        if prev != state.hash:
            return None  # not the chain whose head the history was read at
        return out

    def _read_from_checkpoint(self) -> State | None:
        """The state from the last checkpoint and the entries after it, or None (then the caller verifies the whole
        chain, which names whatever is wrong). Only the file's tail is read (:func:`dpdesk.core.ledger.checkpoint.read_tail`).

        Trusted only when: the home is anchored and the dataset's register file is readable, holds a head, no
        pending acknowledgement, a known governance and was never moved back; the checkpoint line and every line
        after it verify as a chain (hash, link, sequence numbers, dataset, type); the last entry is the recorded
        head (sequence number and hash); the governance in force is the register's and the home's copy's; and the
        checkpoint is this code's, of the entry before it, with entries after it whose effect is known
        (:func:`dpdesk.core.ledger.checkpoint.from_checkpoint`)."""
        from dpdesk.core.governance.officer import GovernanceRecord
        from dpdesk.core.ledger import checkpoint as ck
        from dpdesk.core.ledger.governed import check_copy

        if self.path is None or self.legacy:
            return None
        if self.team is not None:
            return self._team_from_checkpoint()
        try:
            anchored, before = self._recorded()
        except LedgerError:
            return None
        if not anchored or before is None or before.head is None or before.pending is not None:
            return None
        if not before.governance_known or before.head.seq < before.ever or before.head.seq == 0:
            return None
        try:
            got = self.store.read_tail(self._chain)
        except OSError:
            return None
        if got is None:
            return None
        lines, _offset = got
        checked = _checked_tail(lines, self.dataset)
        if checked is None:
            return None
        checkpoint, tail = checked
        last = tail[-1] if tail else checkpoint
        if last.seq != before.head.seq or last.hash != before.head.hash:
            return None  # not bound to the recorded head: the whole chain is verified (and names why)
        try:
            state = ck.from_checkpoint(checkpoint, tail)
            payload = state.governance_entry.get("governance") if state.governance_entry else None
            found = GovernanceRecord.from_payload(payload) if payload is not None else None
            recorded = before.governance
            if found != (GovernanceRecord.from_payload(recorded) if recorded is not None else None):
                return None
            assert self.home is not None and self.dataset is not None
            check_copy(self.home, self.dataset, str(self.path), found)
        except (ck.Unusable, LedgerError):
            return None
        return state

    def _team_from_checkpoint(self) -> State | None:
        """A team's chain read from its last checkpoint (None: no usable one, the whole chain is read). No home's
        register is needed: the team's database linked and hashed every line as it was appended, nobody edits or
        removes one, and it refused a checkpoint that does not state the entry before it, the settings and the
        governance in force, and at least the releases' stated costs (:mod:`dpdesk.core.ledger.pgschema`). The
        lines read are verified as a chain here too, and the checkpoint is used only when it is this code's, with
        entries after it whose effect is known (:func:`dpdesk.core.ledger.checkpoint.from_checkpoint`)."""
        from dpdesk.core.ledger import checkpoint as ck

        assert self.dataset is not None
        got = self.store.read_tail(self._chain)
        if got is None:
            return None
        checked = _checked_tail(got[0], self.dataset)
        if checked is None:
            return None
        try:
            return ck.from_checkpoint(*checked)
        except ck.Unusable:
            return None

    def _recorded(self) -> tuple[bool, anchor.Record | None]:
        """Whether this ledger is checked against the register, and its register file, read *before* the ledger
        (an append made meanwhile can then only put the ledger ahead of it, never behind).

        Not for a ledger outside a home (an exported copy under review), an old-format one, a data file with no
        id yet, or a home whose register cannot be written (nothing was recorded there to check against).
        """
        if self.home is None or self.dataset is None or self.legacy or self.team is not None:
            return (
                False,
                None,
            )  # a team's chains are append-only in its database: no home's register guards them
        _anchor_home(self.home)
        if not anchor.is_anchored(self.home):
            return False, None
        return True, anchor.read_before(self.home, self.dataset, str(self.path))


class LedgerTransaction:
    """Appends to a locked, verified ledger: its whole chain (``entries``), or the state read from its last
    checkpoint (``state``; the whole chain is then verified only if :attr:`entries` is asked for)."""

    def __init__(
        self, ledger: Ledger, entries: list[Entry] | None = None, *, state: State | None = None
    ) -> None:
        self.ledger = ledger
        self._entries = entries
        self._state = state

    @property
    def entries(self) -> list[Entry]:
        """Every entry, verified (read and verified whole on first use when only the tail was read)."""
        if self._entries is None:
            self._entries = self.ledger.verify()
        return self._entries

    @property
    def state(self) -> State:
        """What the history holds (:class:`dpdesk.core.ledger.checkpoint.State`), with the entries appended since."""
        if self._state is None:
            from dpdesk.core.ledger.checkpoint import state_of

            self._state = state_of(self.entries)
        return self._state

    def settings(self) -> dict[str, Any] | None:
        """The settings in force, or None before the first release."""
        return self.state.settings

    def pending_corrections(self) -> list[dict[str, Any]]:
        """:func:`dpdesk.core.ledger.recost.pending_corrections` of the history: of the whole chain when it was read, else
        of the entries after the checkpoint (none before it is pending: a checkpoint is made after the
        corrections of its transaction, by the same costing code)."""
        from dpdesk.core.ledger.recost import pending_corrections

        if self._entries is not None or self.state.full:
            return pending_corrections(self.entries)
        return pending_corrections(self.state.tail, settings=self.state.settings)

    def checkpoint_if_due(self) -> Entry | None:
        """Append a ``checkpoint`` entry holding the state as of the last entry when :data:`CHECKPOINT_EVERY`
        entries followed the last checkpoint this transaction could trust (or none was); called in the same locked
        transaction as a spend, after it. None when none is due (or an entry appended since changed the settings).
        """
        from dpdesk.core.ledger.checkpoint import CHECKPOINT_EVERY

        state = self.state
        if state.stale or state.seq - state.checkpoint_seq < CHECKPOINT_EVERY:
            return None
        return self.append("checkpoint", state.to_dict())

    def append(self, entry_type: str, payload: dict[str, Any]) -> Entry:
        """Append one entry durably (write, flush, fsync) and return it, typed, with its hash."""
        assert self.ledger.path is not None and self.ledger.dataset is not None
        if self._entries is not None:
            seq, prev = len(self._entries) + 1, (self._entries[-1].hash if self._entries else GENESIS)
        else:
            seq, prev = self.state.seq + 1, self.state.hash
        team = self.ledger.team
        stored: dict[str, Any] = {
            "seq": seq,
            "type": entry_type,
            "time": _now(),
            "dataset": self.ledger.dataset,
            "prev": prev,
            **payload,
            **written_by(),
            **(team.entry_fields() if team is not None else {}),
        }
        stored["hash"] = entry_hash(stored)
        entry = written_entry(stored, self.ledger.path)
        line = (canonical_json(stored) + "\n").encode("utf-8")
        home = self.ledger.home if team is None else None  # a team's chain has no home's register
        if home is not None and anchor.needs_intent(entry_type) and anchor.is_anchored(home):
            # recorded first: an entry that could change the settings, the governance or the identity is accepted
            # after the recorded head (a crash before its head) only as dpdesk's own (anchor.check_window)
            try:
                anchor.record_intent(home, self.ledger.dataset, anchor.Head(seq, stored["hash"]))
            except OSError as exc:
                raise LedgerError(
                    _("ledger {path}: could not record its {kind} entry ({err})").format(
                        path=self.ledger.path, err=exc.strerror or exc, kind=entry_type
                    )
                ) from None
        try:
            self.ledger.store.append(self.ledger._chain, line)
        except OSError as exc:
            # only a spend comes before a reveal; a later entry (a package's) may follow files already written
            message = (
                _("ledger {path}: could not record the release ({err}); nothing was revealed")
                if entry_type == "spend"
                else _("ledger {path}: could not record its {kind} entry ({err})")
            )
            raise LedgerError(
                message.format(path=self.ledger.path, err=exc.strerror or exc, kind=entry_type)
            ) from None
        if self._entries is not None:
            self._entries.append(entry)
        if self._state is not None:
            from dpdesk.core.ledger.checkpoint import extended

            self._state = extended(self._state, entry)
        if home is not None:
            # then the head (the entry is durable first: a crash between leaves the ledger ahead of its head, which
            # the next verification accepts and repairs; a register that cannot be written is repaired likewise)
            # a govern entry's governance is recorded in the same write as its head (a crash before it leaves the
            # entry after the recorded head, whose approval the next verification checks before recording it)
            with contextlib.suppress(OSError):
                anchor.advance_head(
                    home,
                    self.ledger.dataset,
                    anchor.Head(entry.seq, entry.hash),
                    governance=entry.get("governance"),
                    governs=entry_type == "govern",
                )
        return entry


def _checked_tail(lines: Sequence[bytes], dataset: str | None) -> tuple[Entry, list[Entry]] | None:
    """The checkpoint entry that ``lines`` start with and the entries after it, each verified as a link of the chain
    (hash, link, sequence number, dataset, type); None when they are not."""
    try:
        cp = loads_entries(lines[0].decode("utf-8"))
        if not isinstance(cp, dict) or cp.get("type") != "checkpoint" or cp.get("dataset") != dataset:
            return None
        seq = cp.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            return None
        if not isinstance(cp.get("prev"), str) or (
            entry_hash(cp) != cp.get("hash") and not stored_hash_matches(lines[0], cp.get("hash"))
        ):
            return None
        checkpoint = parse_entry(cp)
        tail: list[Entry] = []
        prev = checkpoint.hash
        for n, line in enumerate(lines[1:], start=seq + 1):
            entry = _checked_line(line, str(n), prev, n, dataset)
            prev = entry.hash
            tail.append(entry)
    except (ValueError, LedgerError):
        return None
    return checkpoint, tail


def migration_notice(entry: Entry) -> str:
    """What the curator is told once, when a ledger from before public ids was migrated."""
    lines = [
        _(
            "This dataset's ledger was upgraded: it is now named {id}, a random id. Older versions of dpdesk "
            "wrote the SHA-256 of the data file into release packages, exported ledgers and statements; "
            "with it, someone who knows every other row can test guesses of a missing row. The old ledger "
            "was kept as {file}."
        ).format(id=entry.dataset, file=entry.get("evidence_file", "?"))
    ]
    exposed = entry.get("exposed_packages") or []
    if exposed:
        lines.append(
            _(
                "Release packages that carried the hash (replace them by re-exporting, dpdesk ledger "
                "--export-release SEQ, at no cost, and withdraw the old ones where you can): {list}"
            ).format(
                list=", ".join(
                    _("release {seq} ({rid})").format(seq=x.get("spend_seq"), rid=x.get("release_id"))
                    for x in exposed
                )
            )
        )
    return "\n".join(lines)


def is_known_dataset(home: Path, path_or_sha: str | Path) -> bool:
    """Whether a file (a :class:`~pathlib.Path`, hashed here) or the dataset with this SHA-256 (a str of 64
    hex digits) has a ledger under a dpdesk home: a dataset dpdesk releases from, hence private.

    The one place that answers it (simulations refuse such a file as "public"), so that the ledger's naming
    can change behind it.
    """
    if isinstance(path_or_sha, str) and re.fullmatch(r"[0-9a-f]{64}", path_or_sha):
        sha = path_or_sha
    else:
        from dpdesk.core.loading import file_sha256

        sha = file_sha256(path_or_sha)
    folder = home / "ledgers"
    from dpdesk.core.ledger.pgstore import team_store

    team = team_store(home)
    if team is not None and team.dataset_of(sha) is not None:
        return True
    return _read_key(folder, sha) is not None or (folder / f"{sha}.jsonl").exists()


def list_ledgers(home: Path) -> list[Ledger]:
    """All dataset ledgers under a dpdesk home folder (old-format ledgers are migrated first); a home that uses a
    team ledger: the team's datasets."""
    folder = home / "ledgers"
    from dpdesk.core.ledger.pgstore import team_store

    team = team_store(home)
    if team is not None:
        return [Ledger(dataset, folder / f"{dataset}.jsonl", home=home) for dataset in team.datasets()]
    if not folder.exists():
        return []
    _anchor_home(home)
    for p in sorted(folder.glob("*.jsonl")):
        if _KEY_RE.fullmatch(p.stem):
            Ledger.for_dataset(home, p.stem)
    store = FileStore(folder)
    out = [Ledger(dataset, store.path(dataset), home=home) for dataset in store.datasets()]
    # known, and its ledger gone: listed as broken (not one that got its id but never an entry)
    for dataset in anchor.registered_datasets(home):
        p = folder / f"{dataset}.jsonl"
        head = anchor.recorded_head(home, dataset)
        if not p.exists() and (head is None or head.seq > 0):
            out.append(Ledger(dataset, p, home=home))
    for p in sorted(folder.glob("*.jsonl")):  # old-format ledgers left broken (not migrated)
        if _KEY_RE.fullmatch(p.stem) and _read_key(folder, p.stem) is None:
            out.append(Ledger(None, p, p.stem, home, legacy=True))
    return out


def own_dataset_of_file(home: Path, sha256: str) -> str | None:
    """The dataset of a data file (by its bytes' SHA-256) in the home's own ledgers, whichever ledger the home uses
    (None when the home's own ledgers do not know the file)."""
    folder = home / "ledgers"
    return _read_key(folder, sha256) if (folder / "keys").is_dir() else None


def _read_key(folder: Path, sha256: str) -> str | None:
    """The public id recorded for a data file's SHA-256, or None.

    The link is kept twice: ``keys/<sha256>`` (the index) and ``<id>.key`` beside each ledger (holding the
    SHA-256). A lost index is rebuilt from the sidecars, so deleting ``keys/`` does not start a fresh budget.
    """
    try:
        text = (folder / "keys" / sha256).read_text(encoding="ascii").strip()
        if is_dataset_id(text):
            return text
    except (OSError, UnicodeDecodeError):
        pass
    for side in sorted(folder.glob("ds-*.key")):
        try:
            if side.read_text(encoding="ascii").strip() == sha256 and is_dataset_id(side.stem):
                with contextlib.suppress(OSError):
                    _write_key(folder, sha256, side.stem)
                return side.stem
        except (OSError, UnicodeDecodeError):
            continue
    known = anchor.dataset_of_key(folder.parent, sha256)  # the register remembers it when both were lost
    if known is not None:
        with contextlib.suppress(OSError):
            _write_key(folder, sha256, known)
    return known


def _anchor_home(home: Path) -> None:
    """Register the ledgers of a home from before the register at their heads, once (best effort: a home that
    cannot be written is not anchored, and nothing can be charged there either)."""
    with contextlib.suppress(OSError):
        anchor.ensure_anchored(home)


def _write_key(folder: Path, sha256: str, dataset: str) -> None:
    # first: the register knows the dataset before its files
    anchor.register_key(folder.parent, dataset, sha256)
    write_atomic(folder / f"{dataset}.key", sha256.encode("ascii"))
    (folder / "keys").mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "keys" / sha256, dataset.encode("ascii"))
    _fsync_dir(folder / "keys")
    _fsync_dir(folder)
    _remember_content(folder.parent, sha256, dataset)


def _remember_content(home: Path, sha256: str, dataset: str) -> None:
    """Hook: a file's SHA-256 now names a dataset; record the file's content for it if it is known (local)."""
    from dpdesk.core.ledger.contents import remember_key

    with contextlib.suppress(OSError):
        remember_key(home, sha256, dataset)


def link_key(home: Path, sha256: str, dataset: str) -> str:
    """Make a file's SHA-256 another local key of an existing dataset (a re-saved copy of its table), unless
    it names a dataset already; return the dataset it names. The ``<id>.key`` sidecar keeps the first file's."""
    folder = home / "ledgers"
    with _locked(folder / "keys.lock"):
        known = _read_key(folder, sha256)
        if known is not None:
            return known
        _link_locked(folder, sha256, dataset)
    return dataset


def keys_of(home: Path, dataset: str) -> list[str]:
    """The local keys (files' SHA-256) that name a dataset in the key index."""
    folder = home / "ledgers" / "keys"
    out = []
    for p in sorted(folder.glob("*")) if folder.is_dir() else []:
        try:
            if _KEY_RE.fullmatch(p.name) and p.read_text(encoding="ascii").strip() == dataset:
                out.append(p.name)
        except (OSError, UnicodeDecodeError):
            continue
    return out


def relink_key(home: Path, sha256: str, to: str) -> None:
    """Move a file's key to dataset ``to`` (the dataset its own was merged into), under the key folder's lock.
    Only a merge's survivor is given here (:func:`dpdesk.core.identity.recognition.settle_duplicates`): the dataset left
    is retired by its ledger, so nothing is charged to it either way."""
    folder = home / "ledgers"
    with _locked(folder / "keys.lock"):
        _link_locked(folder, sha256, to)


def _link_locked(folder: Path, sha256: str, to: str) -> None:
    """Write a file's key as another key of dataset ``to`` and record its content there (when the cache knows
    it), with the key folder's lock held: a file first used at the same moment then finds it by content."""
    (folder / "keys").mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "keys" / sha256, to.encode("ascii"))
    _fsync_dir(folder / "keys")
    _remember_content(folder.parent, sha256, to)


def assign_key(home: Path, sha256: str, dataset: str) -> None:
    """Give a file with no dataset yet the public name ``dataset`` (a near-copy declared new); refused
    (:class:`LedgerError`) when the file names another dataset already."""
    folder = home / "ledgers"
    with _locked(folder / "keys.lock"):
        known = _read_key(folder, sha256)
        if known is None:
            _write_key(folder, sha256, dataset)
        elif known != dataset:
            raise LedgerError(
                _("this table belongs to dataset {dataset} already; nothing was declared").format(
                    dataset=known
                )
            )


def _scrub(value: Any, key: str, dataset: str) -> Any:
    """A copy of ``value`` in which the data file's SHA-256 (and its 12- and 16-digit prefixes, as
    older versions printed them) is replaced by the public id; old evidence hashes are dropped."""
    if isinstance(value, str):
        for old in (key, key[:16], key[:12]):
            value = value.replace(old, dataset)
        return value
    if isinstance(value, list):
        return [_scrub(v, key, dataset) for v in value]
    if isinstance(value, dict):
        return {k: (None if k == "broken_sha256" else _scrub(v, key, dataset)) for k, v in value.items()}
    return value


def _interrupted_migration(folder: Path, raw: bytes) -> str | None:
    """The id of an earlier migration of these very bytes that stopped before linking its key, if any."""
    for ev in sorted(folder.glob("ds-*.pre-migration-*.jsonl")):
        dataset = ev.name.split(".", 1)[0]
        try:
            if is_dataset_id(dataset) and (folder / f"{dataset}.jsonl").exists() and ev.read_bytes() == raw:
                return dataset
        except OSError:
            continue
    return None


def _migrate(home: Path, sha256: str) -> Ledger:
    """Rebuild a ledger from before public ids (entries naming the data's SHA-256) under a new id.

    Called with the key folder's lock held. A verified chain is rebuilt entry by entry (content kept,
    the SHA-256 replaced by the id everywhere, hashes and links recomputed), closed by a ``migrate``
    entry that lists the releases whose packages published the hash; the old file is kept as
    evidence. A broken chain is left as it is, for a privacy officer to acknowledge.
    """
    folder = home / "ledgers"
    legacy_path = folder / f"{sha256}.jsonl"
    old = Ledger(None, legacy_path, sha256, home, legacy=True)
    with _locked(legacy_path.with_suffix(".lock")):
        try:
            entries = old.verify()
        except LedgerError:
            return old
        raw = legacy_path.read_bytes()
        dataset = _interrupted_migration(folder, raw) or new_dataset_id()
        path = folder / f"{dataset}.jsonl"
        stamp = _now().replace(":", "").replace("+", "_")
        evidence = path.with_name(f"{dataset}.pre-migration-{stamp}.jsonl")
        renamed: list[tuple[Path, Path]] = []
        for p in sorted(folder.glob(f"{sha256}.broken-*.jsonl")):  # older evidence, named by the hash
            renamed.append((p, p.with_name(p.name.replace(sha256, dataset))))
        new_hash: dict[str, str] = {}
        rebuilt: list[dict[str, Any]] = []
        prev = GENESIS
        for e in entries:
            n = _scrub({k: v for k, v in e.to_dict().items() if k != "hash"}, sha256, dataset)
            n["dataset"], n["prev"] = dataset, prev
            if n["type"] == "package" and e.get("spend_hash") in new_hash:
                n["spend_hash"] = new_hash[e.fields["spend_hash"]]
            if n["type"] == "package" and isinstance(n.get("files"), dict) and "report.pdf" in n["files"]:
                # the old report printed the data's hash: its own hash is a function of it, so it is not kept
                n["files"] = {**n["files"], "report.pdf": None}
            n["hash"] = entry_hash(n)
            new_hash[e.hash] = prev = n["hash"]
            rebuilt.append(n)
        exposed = [
            {
                "release_id": e.get("release_id"),
                "spend_seq": e.get("spend_seq"),
                "package_seq": e.seq,
                "time": e.time,
            }
            for e in entries
            if e.type == "package"
        ]
        mig: dict[str, Any] = {
            "seq": len(rebuilt) + 1,
            "type": "migrate",
            "time": _now(),
            "dataset": dataset,
            "prev": prev,
            "reason": MIGRATION_REASON,
            "evidence_file": evidence.name,
            "entries_migrated": len(rebuilt),
            "exposed_packages": exposed,
            **written_by(),
        }
        mig["hash"] = entry_hash(mig)
        rebuilt.append(mig)
        write_atomic(evidence, raw)
        anchor.advance_head(home, dataset, anchor.NO_ENTRY)  # registered before its ledger exists
        write_atomic(path, "".join(canonical_json(e) + "\n" for e in rebuilt).encode("utf-8"))
        _write_key(folder, sha256, dataset)
        anchor.advance_head(home, dataset, anchor.Head(mig["seq"], mig["hash"]))
        for src, dst in renamed:
            with contextlib.suppress(OSError):
                os.replace(src, dst)
        with contextlib.suppress(OSError):
            legacy_path.unlink()
        _fsync_dir(folder)
    return Ledger(dataset, path, sha256, home, migrated=parse_entry(mig))


def unimported_dataset(home: Path, key: str) -> str | None:
    """The dataset of the home's own ledgers that holds the table of ``key`` (by that key, else by the rows its
    cached identities name) and whose history was not imported into a team (its own chain does not say it moved),
    if any: released in the team, that table would start a second budget there."""
    from dpdesk.core.ledger.contents import cached_identities, datasets_of_content

    folder = home / "ledgers"
    if not (folder / "keys").is_dir():
        return None
    found = [d for d in [_read_key(folder, key)] if d is not None]
    if not found:
        for ident in cached_identities(home, key):
            found += [d for d in datasets_of_content(home, ident.key) if d not in found]
    for local in found:
        own = Ledger(local, FileStore(folder).path(local), home=home, own_files=True)
        if own.path is None or not own.path.exists():
            continue
        # imported only when its own chain says so (its register's mark alone is not enough: a file anyone can
        # edit, while a moved entry must verify against the head the register recorded)
        try:
            if own.read().moved_to is not None:
                continue
        except LedgerError:
            pass  # a broken own ledger still holds history: it is imported (acknowledged first), not ignored
        return local
    return None
