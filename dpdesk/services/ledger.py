"""The ledger's actions: list and verify, export it for an officer, export a past release again, write the
budget statement, the privacy officer's actions (acknowledge a broken ledger, change the dataset's settings,
govern it, forget the home's content identities), and a near-copy's two ways on: link it to the dataset it
resembles, or declare it new."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.ledger.entries import Entry, SpendEntry
from dpdesk.i18n import _

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from dpdesk.core.governance.officer import GovernanceRecord, LedgerHead
    from dpdesk.core.ledger.book import Ledger, LedgerTransaction
    from dpdesk.core.ledger.budget import EpsilonDelta
    from dpdesk.core.ledger.carryover import Assessment, StatedCost
    from dpdesk.services.common import Dataset, Notify


# ----------------------------------------------------------------------------- list and verify
@dataclass(frozen=True)
class LedgerStatus:
    """One dataset's ledger as verified: its entries (none when broken), why it is broken (``error``), the
    settings in force, how many releases it holds, the budget left after them (None before the first
    release) and how many past releases cost more than they were booked at (the next release corrects them)."""

    dataset: str | None
    entries: tuple[Entry, ...]
    error: str | None
    settings: dict[str, Any] | None
    releases: int
    left: EpsilonDelta | None
    pending: int
    #: one line: who governs the dataset, or that it is ungoverned (empty when the chain is broken)
    governance: str = ""
    #: the dataset this one was merged into (closed: nothing is charged to it, its releases count there)
    merged_into: str | None = None

    @property
    def verified(self) -> bool:
        """Whether the hash chain verified."""
        return self.error is None

    @property
    def exit_code(self) -> int:
        """0 verified, 3 broken (the command line's exit code)."""
        return 0 if self.error is None else 3


def ledger_status(ledger: Ledger, *, full: bool = True) -> LedgerStatus:
    """Verify a ledger and sum up what it holds. ``full``: verify the whole chain (and its last checkpoint against
    it) and list every entry; else read it from its last checkpoint when that is bound to the recorded head
    (:meth:`dpdesk.core.ledger.book.Ledger.read`; ``entries`` then holds the checkpoint and the entries after it)."""
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.ledger.budget import left_of
    from dpdesk.core.ledger.checkpoint import State, check_checkpoint, state_of
    from dpdesk.core.ledger.governed import describe
    from dpdesk.core.ledger.recost import pending_corrections

    state: State | None = None
    try:
        if full:
            state = state_of(ledger.verify())
            bad = check_checkpoint(state.tail)
            if bad is not None:
                raise LedgerError(_checkpoint_error(ledger, bad))
        else:
            state = ledger.read()
        error = None
    except LedgerError as exc:
        state, error = None, str(exc)
    if state is None:
        return LedgerStatus(ledger.dataset, (), error, None, 0, None, 0, "")
    if state.full:
        pending = pending_corrections(state.tail)
    else:
        pending = pending_corrections(state.tail, settings=state.settings)
    gov = [state.governance_entry] if state.governance_entry is not None else []
    who = describe(gov)
    team = ledger.team
    if not gov and team is not None:  # not "whoever runs dpdesk": the team's database decides
        who = _(
            "Kept in the team ledger at {server}: only the team's privacy officers may change this dataset's budget "
            "and settings, and the database enforces it."
        ).format(server=team.server)
    return LedgerStatus(
        ledger.dataset,
        tuple(state.tail),
        error,
        state.settings,
        state.spent.releases,
        left_of(state),
        len(pending),
        who,
        state.retired_into,
    )


def _checkpoint_error(ledger: Ledger, seq: str) -> str:
    return _(
        "ledger {path}, entry {seq}: the checkpoint does not hold what the entries before it add up to (it was "
        "edited or forged). A privacy officer must acknowledge it before anything else is released"
    ).format(path=ledger.path, seq=seq)


@dataclass(frozen=True)
class VerifyRequest:
    """Verify one dataset's ledger."""

    dataset: Dataset


def verify_ledger(
    request: VerifyRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> LedgerStatus:
    """One dataset's ledger, verified (a broken chain is reported in the status, not raised)."""
    ledger = request.dataset.open_ledger(notify)
    progress.check_cancelled()
    return ledger_status(ledger)


@dataclass(frozen=True)
class ListRequest:
    """Every dataset's ledger under a dpdesk home folder."""

    home: Path


@dataclass(frozen=True)
class LedgerList:
    """The ledgers folder and every ledger in it, verified."""

    folder: Path
    ledgers: tuple[LedgerStatus, ...]

    @property
    def exit_code(self) -> int:
        """3 if any ledger is broken, else 0."""
        return max((s.exit_code for s in self.ledgers), default=0)


def list_ledgers(request: ListRequest, progress: Progress = NULL_PROGRESS) -> LedgerList:
    """Verify every ledger under the home folder (old-format ledgers are migrated first)."""
    from dpdesk.core.ledger.book import list_ledgers as all_ledgers

    out = []
    for ledger in all_ledgers(request.home):
        progress.check_cancelled()
        out.append(ledger_status(ledger, full=False))  # in brief: from each ledger's last checkpoint
    return LedgerList(request.home / "ledgers", tuple(out))


def _check_out(dataset: Dataset, out: Path, force: bool) -> None:
    """An output file is never the data file nor under the home; an existing one only with ``force``."""
    from dpdesk.core.publish.outputs import check_out_file

    reads = (dataset.data,) if dataset.data is not None else ()
    check_out_file(out, force=force, home=dataset.home, reads=reads)


# ----------------------------------------------------------------------------- export the ledger
@dataclass(frozen=True)
class ExportLedgerRequest:
    """Write the dataset's whole ledger (verified first) to ``out``, for a privacy officer; an existing ``out``
    only with ``force``, never the data file or anything under the dpdesk home."""

    dataset: Dataset
    out: Path
    force: bool = False


@dataclass(frozen=True)
class LedgerExported:
    """Where the ledger went, how many entries it holds and its head (the last entry's ``seq`` and ``hash``: the
    officer keeps it, and a later export must still reach it)."""

    out: Path
    entries: int
    head: dict[str, Any]


def export_ledger(
    request: ExportLedgerRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> LedgerExported:
    """Copy the verified ledger atomically; refused (:class:`UsageError`) when nothing was recorded yet."""
    from dpdesk.core.publish.outputs import write_out_file

    _check_out(request.dataset, request.out, request.force)
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.ledger.checkpoint import check_checkpoint

    ledger = request.dataset.open_ledger(notify)
    entries = ledger.verify()  # always the whole chain, and its last checkpoint against it
    if not entries:
        raise UsageError(_("nothing has been recorded for {path} yet").format(path=request.dataset.data))
    bad = check_checkpoint(entries)
    if bad is not None:
        raise LedgerError(_checkpoint_error(ledger, bad))
    progress.update(0, 1, "writing")
    raw = ledger.raw()
    exported = raw.split(b"\n")[: len(entries)]  # the entries verified (an append made since is left out)
    out = b"".join(line + b"\n" for line in exported)
    from dpdesk.core.ledger.entries import read_chain

    try:  # the bytes written are the chain verified, entry for entry (not a file that changed in between)
        same = [e.hash for e in read_chain(out, str(request.out), ledger.dataset)] == [
            e.hash for e in entries
        ]
    except LedgerError:
        same = False
    if not same:
        raise LedgerError(
            _("the ledger changed while it was being exported; nothing was written. Run the command again")
        )
    write_out_file(request.out, out)
    return LedgerExported(request.out, len(entries), {"seq": entries[-1].seq, "hash": entries[-1].hash})


# ----------------------------------------------------------------------------- export a past release again
@dataclass(frozen=True)
class ReexportRequest:
    """Write the package of the past release recorded as ledger entry ``seq`` into ``out`` (costs nothing)."""

    dataset: Dataset
    seq: int
    out: Path


@dataclass(frozen=True)
class Reexported:
    """Which release was written again, and where."""

    seq: int
    out: Path


def reexport_release(
    request: ReexportRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> Reexported:
    """Verify the ledger, find the release, and write its package again from its entry (no budget spent)."""
    from dpdesk.services.export import write_recorded_release

    ledger = request.dataset.open_ledger(notify)
    entries = ledger.verify()
    match = [e for e in entries if e.seq == request.seq and isinstance(e, SpendEntry)]
    if not match:
        raise UsageError(_("ledger entry {seq} is not a release of this dataset").format(seq=request.seq))
    write_recorded_release(request.out, match[0], ledger, request.dataset.display_name, progress)
    return Reexported(request.seq, request.out)


# ----------------------------------------------------------------------------- the budget statement
@dataclass(frozen=True)
class StatementRequest:
    """Write the dataset's budget statement (all releases, all accounting methods) as a PDF to ``out``; an
    existing ``out`` only with ``force``, never the data file or anything under the dpdesk home."""

    dataset: Dataset
    out: Path
    force: bool = False


@dataclass(frozen=True)
class StatementWritten:
    """Where the statement went, how many ledger entries it covers (none when the chain is broken) and the
    chain's status as the statement states it."""

    out: Path
    entries: int
    chain_status: str


def write_statement(
    request: StatementRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> StatementWritten:
    """Verify the ledger and write the statement; a broken chain is stated in it (its entries are not used)."""
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.ledger.budget import budget_report
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.publish.report import write_budget_statement

    _check_out(request.dataset, request.out, request.force)
    ledger = request.dataset.open_ledger(notify)
    try:
        entries = ledger.verify()
        status = _("chain verified")
    except LedgerError as exc:
        entries, status = [], _("BROKEN: {err}").format(err=exc)
    progress.update(0, 1, "writing")
    spends = [e for e in entries if isinstance(e, SpendEntry)]
    rep = budget_report(parse_plan(spends[-1].plan), entries) if spends else None
    write_budget_statement(
        request.out,
        dataset_name=request.dataset.display_name,
        entries=entries,
        report=rep,
        chain_status=status,
    )
    return StatementWritten(request.out, len(entries), status)


# ----------------------------------------------------------------------------- the privacy officer's actions
@dataclass(frozen=True)
class AcknowledgeRequest:
    """(Privacy officer) accept the dataset's broken ledger for ``reason``.

    ``costs``: the officer's stated cost of each entry that does not verify and each gap (see
    :mod:`dpdesk.core.ledger.carryover`); ``settings_plan``: a plan file whose budget, unit of privacy and accounting
    become the settings when no settings entry verifies; ``exported``: exported copies of the ledger (ledger
    files or release packages), which add offers; ``head``: the ledger's recorded head (sequence number, hash),
    when known, so that entries missing up to it count as a gap.
    """

    dataset: Dataset
    reason: str
    costs: tuple[StatedCost, ...] = ()
    settings_plan: Path | None = None
    exported: tuple[Path, ...] = ()
    head: tuple[int, str] | None = None
    #: the officer's signed approval, which a governed dataset's acknowledgement needs
    approval: Path | None = None


@dataclass(frozen=True)
class Acknowledged:
    """The ``acknowledge`` entry that opens the new chain (its evidence file and the spends carried over)."""

    entry: Entry


def assess_acknowledgement(
    request: AcknowledgeRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> Assessment:
    """What acknowledging the broken ledger would carry over, and which entries need a stated cost (with the
    offers); nothing is written. A :class:`~dpdesk.core.common.errors.LedgerError` when the ledger verifies."""
    from dpdesk.core.ledger.carryover import exported_entries

    ledger = request.dataset.open_ledger(notify)
    if ledger.path is None:
        raise UsageError(_("nothing has been recorded for {path} yet").format(path=request.dataset.data))
    progress.check_cancelled()
    copies = [e for p in request.exported for e in exported_entries(p)]
    return ledger.assess_broken(head=request.head, exported=copies)


def acknowledge(
    request: AcknowledgeRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> Acknowledged:
    """Keep the broken ledger as evidence and start a new chain carrying over what was spent
    (:meth:`dpdesk.core.ledger.book.Ledger.acknowledge`: a blank reason is refused with a ledger error; missing stated
    costs or settings with :class:`~dpdesk.core.ledger.carryover.CostsNeeded`, which holds the offers)."""
    from dpdesk.core.identity.recognition import DuplicateDatasets
    from dpdesk.core.ledger.carryover import exported_entries

    try:
        ledger = request.dataset.open_ledger(notify)
    except DuplicateDatasets:
        # a broken ledger of a table that two datasets hold: acknowledged as the file's own dataset (by its bytes;
        # a repair that charges nothing and carries every spend over), so that the two can then be merged (a
        # merge verifies both; until it, every release of the table is still refused)
        ledger = request.dataset.own_ledger()
    settings = None
    if request.settings_plan is not None:
        from dpdesk.core.plan.reader import load_plan

        settings = load_plan(request.settings_plan).settings()
    copies = [e for p in request.exported for e in exported_entries(p)]
    doc = _read_approval(request.approval)
    progress.check_cancelled()

    def gate(
        found: Assessment, costs: Sequence[StatedCost], stated: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        from dpdesk.core.ledger.governed import acknowledge_params, require_with

        record = governance_for_acknowledgement(ledger, found)
        verified = require_with(
            record,
            acknowledgement_head(ledger, found),
            used_nonces(found.confirmed),
            "acknowledge",
            acknowledge_params(request.reason, [c.to_dict() for c in costs], stated),
            doc,
            source=str(request.approval) if request.approval is not None else None,
            what=_("an acknowledgement"),
        )
        if record is None or verified is None:
            return {}
        return {"governance": record.to_payload(), "approval": verified.to_record()}

    from dpdesk.core.ledger.governed import used_nonces

    entry = ledger.acknowledge(
        request.reason, costs=request.costs, settings=settings, head=request.head, exported=copies, gate=gate
    )
    return Acknowledged(entry)


def governance_for_acknowledgement(ledger: Ledger, found: Assessment) -> GovernanceRecord | None:
    """Whose approval a broken ledger's acknowledgement needs (None: ungoverned): the governance the register
    recorded for the dataset with its head, never the home's copy over it
    (:func:`dpdesk.core.ledger.governed.for_broken_ledger`)."""
    from dpdesk.core.ledger import anchor
    from dpdesk.core.ledger.governed import for_broken_ledger

    register: tuple[bool, Mapping[str, Any] | None, int] | None = None
    if ledger.home is not None and ledger.dataset is not None:
        try:
            rec = anchor.read_record(ledger.home, ledger.dataset)
        except anchor.DamagedRecord:
            rec = None
        if rec is not None:
            register = (rec.governance_known, rec.governance, rec.head.seq if rec.head is not None else 0)
    try:
        raw = ledger.raw()
    except OSError:
        raw = b""
    return for_broken_ledger(ledger.home, ledger.dataset, found.confirmed, raw, register)


def acknowledgement_head(ledger: Ledger, found: Assessment) -> LedgerHead:
    """The head an acknowledgement's approval is signed for: the head recorded for the dataset in the home's
    register, else the last entry that still verifies (0 and zeros when none does)."""
    from dpdesk.core.governance.officer import LedgerHead
    from dpdesk.core.ledger import anchor
    from dpdesk.core.ledger.governed import head_of

    if ledger.home is not None and ledger.dataset is not None:
        recorded = anchor.recorded_head(ledger.home, ledger.dataset)
        if recorded is not None and recorded.seq > 0:
            return LedgerHead(recorded.seq, recorded.hash)
    return head_of(sorted(found.confirmed, key=lambda e: e.seq))


def _read_approval(path: Path | None) -> bytes | None:
    """An approval file's bytes (size-capped), or None."""
    if path is None:
        return None
    from dpdesk.core.governance.officer import read_approval_file

    return read_approval_file(path)


@dataclass(frozen=True)
class ChangeSettingsRequest:
    """(Privacy officer) take the budget, the unit of privacy and the accounting method from the plan file
    ``plan`` for the dataset, recording ``reason`` in its ledger."""

    dataset: Dataset
    plan: Path
    reason: str
    #: the officer's signed approval of these settings, which a governed dataset needs
    approval: Path | None = None


@dataclass(frozen=True)
class SettingsChanged:
    """The ``settings`` entry; the past releases re-costed under a new unit of privacy and the ``correction``
    entry that charges what they cost more (None when nothing had to be corrected)."""

    dataset: str | None
    entry: Entry
    rescaled: tuple[dict[str, Any], ...]
    correction: Entry | None
    #: how much the correction raised the dataset's total epsilon under its accounting method
    #: (:func:`dpdesk.core.ledger.recost.correction_changes`); None without a correction
    added_total: float | None = None


def change_settings(
    request: ChangeSettingsRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> SettingsChanged:
    """Record new settings under the ledger's lock, with the corrections a new unit of privacy requires.

    Refused (:class:`UsageError`) without a reason, or when a new unit would give a past release with no trace
    an unbounded cost.
    """
    ledger = request.dataset.open_ledger(notify)
    reason = request.reason.strip()
    if not reason:
        raise UsageError(_('--change-settings needs --reason "..." (it is recorded in the ledger)'))
    from dpdesk.core.ledger.recost import UnboundedChange, check_unit_change
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.release.steps import record_corrections

    new = load_plan(request.plan)
    doc = _read_approval(request.approval)
    progress.check_cancelled()
    with ledger.transaction() as tx:
        from dpdesk.core.governance.officer import settings_params
        from dpdesk.core.ledger.governed import require

        approved = require(
            tx.entries,
            "change_settings",
            settings_params(new.settings()),
            doc,
            source=str(request.approval) if request.approval is not None else None,
            what=_("a change of settings"),
        )
        try:
            rescaled = check_unit_change(tx.entries, new.settings()["privacy_unit"])
        except UnboundedChange:
            raise UsageError(
                _(
                    "this change of the unit of privacy cannot be accepted: a past release carried over from a broken "
                    "ledger has no trace, and its cost under the new unit has no bound. Keep the current unit, or "
                    "start a new dataset"
                )
            ) from None
        if approved is not None and record_corrections(tx) is not None:
            # the approval was for the head before the correction: the change is refused, the correction stays
            raise UsageError(
                _(
                    "past releases had to be corrected first (ledger entry {seq}), which moved the ledger's head: ask "
                    "the officer for an approval at the new head (dpdesk ledger head)"
                ).format(seq=tx.entries[-1].seq)
            )
        record_corrections(tx)
        payload: dict[str, Any] = {"settings": new.settings(), "reason": reason}
        if approved is not None:
            payload["approval"] = approved.to_record()
        entry = tx.append("settings", payload)
        correction = record_corrections(tx)
        added_total = None
        if correction is not None:
            from dpdesk.core.ledger.recost import correction_changes

            added_total = correction_changes(tx.entries)[correction.seq]
    return SettingsChanged(ledger.dataset, entry, tuple(rescaled), correction, added_total)


# ----------------------------------------------------------------------------- governance
@dataclass(frozen=True)
class HeadRequest:
    """The dataset's public name and its ledger's head, for the officer to sign an approval against."""

    dataset: Dataset


@dataclass(frozen=True)
class HeadInfo:
    """The dataset's public name (None before anything was recorded), its ledger head (for a broken ledger: the
    head an acknowledgement is approved at), who governs it, and why the ledger is broken (None if it verifies)."""

    dataset: str | None
    head: LedgerHead
    governance: str
    error: str | None

    @property
    def exit_code(self) -> int:
        """0 verified, 3 broken."""
        return 0 if self.error is None else 3


def ledger_head(
    request: HeadRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> HeadInfo:
    """The head an approval for this dataset is signed against (nothing is written)."""
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.governance.officer import describe_governance
    from dpdesk.core.ledger.governed import describe, head_of

    ledger = request.dataset.open_ledger(notify)
    progress.check_cancelled()
    try:
        entries = ledger.verify()
    except LedgerError as exc:
        found = ledger.assess_broken()
        record = governance_for_acknowledgement(ledger, found)
        return HeadInfo(
            ledger.dataset, acknowledgement_head(ledger, found), describe_governance(record), str(exc)
        )
    return HeadInfo(ledger.dataset, head_of(entries), describe(entries), None)


@dataclass(frozen=True)
class GovernRequest:
    """Place the dataset under the officer whose public key file is ``officer`` (policy: ``require_signed_plans``).

    On a governed dataset this changes the policy (an approval of ``change_policy`` by the officer) or the key (an
    approval of ``rotate_key`` signed by the recovery key), given as ``approval``.
    """

    dataset: Dataset
    officer: Path
    require_signed_plans: bool = False
    approval: Path | None = None


@dataclass(frozen=True)
class Governed:
    """The ``govern`` entry written and the governance record now in force."""

    entry: Entry
    record: GovernanceRecord


def govern_dataset(
    request: GovernRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> Governed:
    """Record a ``govern`` entry under the ledger's lock (the first needs no approval; a change of policy or key
    needs the officer's, verified against the governance in force, the head and the nonces used)."""
    from dpdesk.core.governance.officer import govern, load_officer_public_key, rotate_params
    from dpdesk.core.ledger.governed import governance_of, remember, require

    officer = load_officer_public_key(request.officer)
    doc = _read_approval(request.approval)
    ledger = request.dataset.open_ledger(notify)
    progress.check_cancelled()
    with ledger.transaction() as tx:
        assert ledger.dataset is not None
        record = govern(ledger.dataset, officer, require_signed_plans=request.require_signed_plans)
        current = governance_of(tx.entries)
        payload: dict[str, Any] = {"governance": record.to_payload()}
        if current is None:
            if doc is not None:
                raise UsageError(
                    _("this dataset is ungoverned: placing it under an officer's key needs no approval")
                )
        else:
            now = current.record
            if record == now:
                raise UsageError(_("this dataset is already governed so: nothing to change"))
            if officer.key != now.officer.key:
                if record.policy != now.policy:
                    raise UsageError(
                        _("change the officer's key and the policy one at a time (each has its own approval)")
                    )
                action, params, what = (
                    "rotate_key",
                    rotate_params(officer),
                    _("a change of the officer's key"),
                )
            else:
                action, params, what = (
                    "change_policy",
                    {"policy": record.policy.to_payload()},
                    _("a change of policy"),
                )
            approved = require(
                tx.entries,
                action,
                params,
                doc,
                source=str(request.approval) if request.approval is not None else None,
                what=what,
            )
            assert approved is not None
            payload["approval"] = approved.to_record()
        entry = tx.append("govern", payload)
        assert ledger.home is not None
        remember(ledger.home, record)  # under the lock: a verification compares it with the chain
    return Governed(entry, record)


# ----------------------------------------------------------------------------- near-copies
def _known_ledger(home: Path, dataset: str) -> Ledger:
    """A known dataset's ledger by its public name (refused, :class:`UsageError`, when there is none)."""
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.entries import is_dataset_id

    if not is_dataset_id(dataset) or not Ledger.of(home, dataset).store.has(dataset):
        raise UsageError(
            _("{dataset} is not a dataset with a ledger in this dpdesk home").format(dataset=dataset)
        )
    return Ledger.of(home, dataset)


@dataclass(frozen=True)
class LinkRequest:
    """Charge the table ``dataset.data`` (a near-copy) to the known dataset ``to`` from now on."""

    dataset: Dataset
    to: str


@dataclass(frozen=True)
class Linked:
    """The ``link`` entry written in the known dataset's ledger (None when the file was linked already)."""

    dataset: str
    entry: Entry | None


def link_dataset(request: LinkRequest, progress: Progress = NULL_PROGRESS) -> Linked:
    """Link a new table to a known dataset: a ``link`` entry in its ledger (who decided, nothing about the
    file), then the file's key and content become that dataset's, so its releases are charged there.

    Refused (:class:`UsageError`) when the file already belongs to another dataset or ``to`` is unknown.
    """
    from dpdesk.core.identity.recognition import identities_of
    from dpdesk.core.ledger.book import link_key
    from dpdesk.core.ledger.contents import record_content

    home = request.dataset.home
    resolution = request.dataset.resolve(progress)
    if resolution is None:
        raise UsageError(_("linking needs the data file (--data FILE)"))
    if resolution.dataset is not None:
        if resolution.dataset == request.to:
            return Linked(request.to, None)
        raise UsageError(
            _("this table already belongs to dataset {dataset}: it cannot be linked to another").format(
                dataset=resolution.dataset
            )
        )
    if resolution.ledger.team is not None:
        raise UsageError(
            _(
                "in a team ledger a near-copy is not linked from one curator's machine yet: ask a privacy officer of "
                "the team to declare it a new dataset (dpdesk ledger declare-new --data FILE --resembles {dataset} "
                '--reason "..."), or release from the table the team already knows'
            ).format(dataset=request.to)
        )
    ledger = _known_ledger(home, request.to)
    assert request.dataset.data is not None
    # the table's identities before anything is written: one that cannot be read refuses the link, not half of it
    idents = identities_of(home, request.dataset.data, sha256=resolution.sha256)
    progress.check_cancelled()
    with ledger.transaction() as tx:
        # recorded first (durably): the link is never in force without its entry
        entry = tx.append("link", {"decided_by": "curator"})
    link_key(home, resolution.sha256, request.to)
    for ident in idents:
        record_content(home, request.to, ident.key, ident.sketch, ident.columns)
    return Linked(request.to, entry)


@dataclass(frozen=True)
class DeclareNewRequest:
    """(Privacy officer) declare the table ``dataset.data``, which resembles the known dataset ``resembles``, a
    new dataset, recording ``reason`` in both ledgers; ``approval`` when ``resembles`` is governed."""

    dataset: Dataset
    resembles: str
    reason: str
    approval: Path | None = None


@dataclass(frozen=True)
class DeclaredNew:
    """The new dataset's public name, the ``declare_new`` entry in the known ledger and the ``declared_new``
    entry that opens the new one."""

    dataset: str
    entry: Entry
    first: Entry


def new_dataset_name(dataset: Dataset) -> str:
    """The public name a near-copy gets if declared new (fixed now, for the officer's approval to name it)."""
    from dpdesk.core.identity.recognition import pending_dataset

    resolution = dataset.resolve()
    if resolution is None:
        raise UsageError(_("declaring a new dataset needs the data file (--data FILE)"))
    if resolution.dataset is not None:
        raise UsageError(
            _("this table already belongs to dataset {dataset}: there is nothing to declare").format(
                dataset=resolution.dataset
            )
        )
    return pending_dataset(dataset.home, resolution.sha256)


def declare_new(request: DeclareNewRequest, progress: Progress = NULL_PROGRESS) -> DeclaredNew:
    """Declare a near-copy a new dataset: a ``declare_new`` entry in the known dataset's ledger (with the
    officer's approval of ``declare_new`` naming the new dataset, when it is governed), then the file's key
    under the new name and a ``declared_new`` entry naming the known dataset. Nothing derived from the rows
    is recorded.

    Refused (:class:`UsageError`) without a reason, when the file belongs to a dataset already or does not
    resemble ``resembles``; :class:`~dpdesk.core.governance.officer.ApprovalError` when the approval is missing or wrong.
    """
    from dpdesk.core.identity.recognition import pending_dataset
    from dpdesk.core.ledger.book import Ledger, assign_key
    from dpdesk.core.ledger.governed import require

    reason = request.reason.strip()
    if not reason:
        raise UsageError(_('declaring a new dataset needs --reason "..." (it is recorded in both ledgers)'))
    home = request.dataset.home
    resolution = request.dataset.resolve(progress)
    if resolution is None:
        raise UsageError(_("declaring a new dataset needs the data file (--data FILE)"))
    if resolution.dataset is not None:
        raise UsageError(
            _("this table already belongs to dataset {dataset}: there is nothing to declare").format(
                dataset=resolution.dataset
            )
        )
    if request.resembles not in {r.dataset for r in resolution.resembles}:
        raise UsageError(
            _("this table does not resemble dataset {dataset}: there is nothing to declare").format(
                dataset=request.resembles
            )
        )
    known = _known_ledger(home, request.resembles)
    new = pending_dataset(home, resolution.sha256)
    doc = _read_approval(request.approval)
    progress.check_cancelled()
    with known.transaction() as tx:
        approved = require(
            tx.entries,
            "declare_new",
            {"new_dataset": new},
            doc,
            source=str(request.approval) if request.approval is not None else None,
            what=_("declaring a near-copy a new dataset"),
        )
        payload: dict[str, Any] = {
            "new_dataset": new,
            "reason": reason,
            "decided_by": "officer" if approved is not None else "curator",
        }
        if approved is not None:
            payload["approval"] = approved.to_record()
        entry = tx.append("declare_new", payload)
    team = resolution.ledger.team
    if team is not None:  # the team's database files the table under the id the entry just written names
        team.claim(resolution.sha256, new)
    else:
        assign_key(home, resolution.sha256, new)
    ledger = Ledger.for_dataset(home, resolution.sha256)
    with ledger.transaction() as tx:
        first = tx.append("declared_new", {"resembles": request.resembles, "reason": reason})
    return DeclaredNew(new, entry, first)


@dataclass(frozen=True)
class ForgetIdentityRequest:
    """(Privacy officer) forget the home's content identities; ``approvals``: one approval of
    ``forget_identity`` with this reason for each governed dataset whose identity is forgotten."""

    home: Path
    reason: str
    approvals: tuple[Path, ...] = ()


def _approval_dataset(doc: bytes) -> str | None:
    """The dataset an approval file names (read only to match it to a ledger: it is verified there)."""
    from dpdesk.core.common import jsonin

    try:
        raw = jsonin.read_json(doc, jsonin.OFFICER)
        name = raw["payload"]["dataset"]
    except (ValueError, TypeError, KeyError):
        return None
    return name if isinstance(name, str) else None


def forget_identity(request: ForgetIdentityRequest) -> list[str]:
    """The officer's way out when the home's identity secret is lost for good
    (:func:`dpdesk.core.ledger.contents.forget_identities`); a blank reason is refused.

    Each governed dataset whose content identity is forgotten needs the officer's approval of
    ``forget_identity`` (with this reason, at its head): all are verified under their ledgers' locks and a
    ``forget_identity`` entry recording each is written before anything is forgotten.
    """
    import contextlib

    from dpdesk.core.ledger import anchor
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.governed import governance_of, require

    reason = request.reason.strip()
    if not reason:
        raise UsageError(_("a reason is required"))
    from dpdesk.core.ledger.contents import forget_identities

    home = request.home
    docs: dict[str, tuple[bytes, Path]] = {}
    for path in request.approvals:
        doc = _read_approval(path)
        assert doc is not None
        name = _approval_dataset(doc)
        if name is None or name in docs:
            raise UsageError(_("{path}: not an approval for one more dataset").format(path=path))
        docs[name] = (doc, path)
    from dpdesk.core.common.fsio import locked

    (home / "ledgers").mkdir(parents=True, exist_ok=True)
    # under the home-wide key lock, first in the lock order: no first release decides a new dataset (and records
    # its content) between the register's identities being dropped and the identity folder being moved aside
    with locked(home / "ledgers" / "keys.lock"), contextlib.ExitStack() as stack:
        gated: list[tuple[LedgerTransaction, dict[str, Any]]] = []
        for dataset in sorted(anchor.recorded_identities(home)):
            tx = stack.enter_context(Ledger.of(home, dataset).transaction(retired=True))
            if tx.state.retired_into is not None or governance_of(tx.entries) is None:
                continue  # a dataset merged into another is closed: its merge is its last entry
            doc, source = docs.pop(dataset, (None, None))
            approved = require(
                tx.entries,
                "forget_identity",
                {"reason": reason},
                doc,
                source=str(source) if source is not None else None,
                what=_("forgetting the content identities of this home"),
            )
            assert approved is not None
            gated.append((tx, {"reason": reason, "approval": approved.to_record()}))
        if docs:
            raise UsageError(
                _("an approval names dataset {dataset}, whose content identity is not forgotten here").format(
                    dataset=", ".join(sorted(docs))
                )
            )
        # recorded first: an approval is used once, and what was done is on record
        for tx, payload in gated:
            tx.append("forget_identity", payload)
        return forget_identities(home, reason)


# ----------------------------------------------------------------------------- two datasets of one table
@dataclass(frozen=True)
class MergeRequest:
    """Merge every dataset that holds the table ``dataset.data`` (made by saves of it first released at once by a
    version before issue 24's fix) into one; ``approvals``: the officer's approval of ``merge`` for each governed
    one, bound to its head."""

    dataset: Dataset
    approvals: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Merged:
    """What a merge did: the dataset that charges the table from now on (None when the table has no dataset),
    the datasets retired into it now or before, the ``merge`` entries written, what the survivor's history spent
    under its accounting method, and whether that is more than its budget (then every release is refused)."""

    into: str | None
    retired: tuple[str, ...]
    entries: tuple[Entry, ...]
    spent: Any = None
    overspent: bool = False


def _merge_rank(entries: Sequence[Entry], dataset: str) -> tuple[bool, float, float, str]:
    """Which dataset survives a merge: a governed one first (its governance is kept), then the smaller budget,
    then the more spent, then the public name (so that two runs choose alike)."""
    from dpdesk.core.ledger.budget import spent_of
    from dpdesk.core.ledger.checkpoint import state_of
    from dpdesk.core.ledger.governed import governance_of

    h = spent_of(state_of(entries))
    budget = h.budget.epsilon if h is not None else float("inf")
    spent = h.spent_epsilon if h is not None else 0.0
    return (governance_of(entries) is None, budget, -spent, dataset)


def _merged_settings(
    into: Mapping[str, Any] | None, other: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The settings of the merged dataset: the survivor's unit of privacy and accounting, the smaller epsilon and
    the smaller delta of the two budgets (one table, one budget: never the larger)."""
    if into is None:
        return dict(other) if other is not None else None
    if other is None:
        return dict(into)
    a, b = into["budget"], other["budget"]
    budget = {
        **dict(a),
        "epsilon": min(float(a["epsilon"]), float(b["epsilon"])),
        "delta": min(float(a["delta"]), float(b["delta"])),
    }
    return {**dict(into), "budget": budget}


def _totals(dataset: str, entries: Sequence[Entry]) -> dict[str, Any]:
    """A dataset's head and what it spent, as a merge entry records it (both sides)."""
    from dpdesk.core.ledger.budget import spent_of
    from dpdesk.core.ledger.checkpoint import state_of

    state = state_of(entries)
    h = spent_of(state)
    return {
        "dataset": dataset,
        "head": {"seq": state.seq, "hash": state.hash},
        "releases": h.releases if h is not None else 0,
        "spent": h.spent.to_dict() if h is not None else None,
        "budget": h.budget.to_dict() if h is not None else None,
    }


def _carried(retired: str, entries: Sequence[Entry], done: set[str]) -> list[dict[str, Any]]:
    """The retired dataset's releases (spends, carried and simulated ones) at what they cost there now, except
    those a merge entry carried already (a merge resumed after a crash)."""
    from dpdesk.core.ledger.recost import effective

    out = []
    for eff in effective(entries):
        rid = eff.release_id if not eff.release_id.startswith("simulate-") else f"{retired}/{eff.release_id}"
        if rid in done:
            continue
        out.append(
            {
                "release_id": rid,
                "seq": eff.seq,
                "from": retired,
                "costs": [c.to_dict() for c in eff.costs],
                "delta_prime": eff.delta_prime,
                "plan": eff.plan,
                "trace": eff.trace,
                "unit": eff.unit,
            }
        )
    return out


def _merge_pair(home: Path, into: str, retired: str, docs: dict[str, tuple[bytes, Path]]) -> Entry | None:
    """Merge dataset ``retired`` into ``into``: both ledgers locked (in the order of their ids) and verified whole;
    the officers' approvals checked; a ``merge`` entry in ``into`` (the retired releases carried, both heads and
    totals, the smaller budget), then a ``merged_into`` entry closing ``retired``. Each durable step is a
    :func:`dpdesk.core.common.faults.step`: a crash before the ``merge`` entry changes nothing, one after it leaves both
    ledgers' releases counted in ``into`` (and the table refused until the merge is run again, which carries
    nothing twice and closes ``retired``)."""
    import contextlib

    from dpdesk.core.common import faults
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.entries import settings_in_force
    from dpdesk.core.ledger.governed import require

    ledgers = {d: Ledger.of(home, d) for d in (into, retired)}
    with contextlib.ExitStack() as stack:
        txs = {d: stack.enter_context(ledgers[d].transaction(retired=d == retired)) for d in sorted(ledgers)}
        a, b = txs[into].entries, txs[retired].entries
        if txs[retired].state.retired_into is not None:
            return None  # closed already (by another run)
        params = {"retired": retired, "into": into}
        approved = {}
        for d, entries in ((into, a), (retired, b)):
            doc, source = docs.pop(d, (None, None))
            approved[d] = require(
                entries,
                "merge",
                params,
                doc,
                source=str(source) if source is not None else None,
                what=_("merging two datasets of one table"),
            )
        done = {
            str(r.get("release_id"))
            for e in a
            if e.type == "merge" and e.get("merged") == retired
            for r in e.get("carried", [])
        }
        carried = _carried(retired, b, done)
        entry: Entry | None = None
        if carried or not any(e.type == "merge" and e.get("merged") == retired for e in a):
            payload: dict[str, Any] = {
                "merged": retired,
                "reason": "two datasets of one table (its saves first released at once by an older version): "
                "every release of both is charged here, under the smaller budget",
                "this": _totals(into, a),
                "other": _totals(retired, b),
                "carried": carried,
                "decided_by": "officer" if approved[into] is not None else "curator",
            }
            merged = _merged_settings(settings_in_force(a), settings_in_force(b))
            if merged is not None and merged != settings_in_force(a):
                payload["settings"] = merged
            signed = approved[into]
            if signed is not None:
                payload["approval"] = signed.to_record()
            faults.step("merge: append the merge entry")
            entry = txs[into].append("merge", payload)
        closing: dict[str, Any] = {
            "into": into,
            "into_head": {"seq": txs[into].state.seq, "hash": txs[into].state.hash},
            "decided_by": "officer" if approved[retired] is not None else "curator",
        }
        signed = approved[retired]
        if signed is not None:
            closing["approval"] = signed.to_record()
        faults.step("merge: append the merged_into entry")
        txs[retired].append("merged_into", closing)
        return entry


def _move_table(home: Path, retired: str, into: str) -> None:
    """After ``retired`` was closed: its tables' contents recorded for ``into`` and its files' keys moved there
    (idempotent; until done, a file of it is followed to ``into`` when it is opened)."""
    from dpdesk.core.common import faults
    from dpdesk.core.ledger.book import keys_of, relink_key
    from dpdesk.core.ledger.contents import content_records, record_content
    from dpdesk.core.loading.identity import Sketch

    raw = content_records(home).get(retired, {})
    found = raw.get("columns")
    columns: dict[str, Any] = found if isinstance(found, dict) else {}
    from dpdesk.core.ledger.contents import columns_of

    faults.step("merge: record the contents")
    for content, sketch in raw.get("contents", {}).items():
        try:
            record_content(home, into, content, Sketch.from_json(sketch), columns_of(columns.get(content)))
        except (TypeError, KeyError, ValueError):
            continue
    faults.step("merge: move the keys")
    for sha in keys_of(home, retired):
        relink_key(home, sha, into)


@dataclass(frozen=True)
class _MergePlan:
    home: Path
    closed: dict[str, str | None]  # every dataset of the table -> the one it was merged into (None: live)
    live: list[str]
    into: str | None


def _merge_plan(request: MergeRequest, progress: Progress) -> _MergePlan:
    """The datasets of the request's table (by its content, and by its bytes), which are live, and the survivor:
    a governed one if any (its governance is kept), else the one with the smaller budget (:func:`_merge_rank`)."""
    from dpdesk.core.identity.recognition import identities_of, retired_into
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.contents import check_identity, datasets_of_content
    from dpdesk.core.loading import file_sha256

    home, data = request.dataset.home, request.dataset.data
    if data is None:
        raise UsageError(_("merging needs the data file (--data FILE)"))
    sha = request.dataset.sha256 or file_sha256(data, progress)
    check_identity(home)
    idents = identities_of(home, data, sha256=sha, progress=progress)
    by_key = Ledger.for_dataset(home, sha).dataset
    by_content = {d for ident in idents for d in datasets_of_content(home, ident.key)}
    owners = sorted({*by_content, *([by_key] if by_key else [])})
    closed = {d: retired_into(home, d) for d in owners}
    live = [d for d in owners if closed[d] is None]
    into: str | None = live[0] if live else None
    if len(live) > 1:
        ranks = {d: _merge_rank(Ledger.of(home, d).verify(), d) for d in live}
        into = min(live, key=lambda d: ranks[d])
    return _MergePlan(home, closed, live, into)


def merge_approvals_needed(request: MergeRequest) -> list[tuple[str, str, str, str]]:
    """For the officer: each governed dataset a merge needs an approval for, as (dataset, its head ``SEQ:HASH``,
    the dataset retired, the one it is merged into)."""
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.governed import governance_of

    plan = _merge_plan(request, NULL_PROGRESS)
    out = []
    for other in sorted(d for d in plan.live if d != plan.into):
        assert plan.into is not None
        for d in (plan.into, other):
            entries = Ledger.of(plan.home, d).verify()
            if governance_of(entries) is not None:
                head = f"{entries[-1].seq}:{entries[-1].hash}" if entries else "0:" + "0" * 64
                out.append((d, head, other, plan.into))
    return out


def merge_datasets(request: MergeRequest, progress: Progress = NULL_PROGRESS) -> Merged:
    """Merge the datasets of one table (:class:`MergeRequest`): the survivor is a governed one if any (its
    governance is kept), else the one with the smaller budget; each other is merged into it
    (:func:`_merge_pair`) and its files moved there. Nothing to merge: ``Merged`` names the one dataset.

    Refused: without the data file (:class:`UsageError`); a governed side without its officer's approval
    (:class:`~dpdesk.core.governance.officer.ApprovalError`); a broken ledger (:class:`LedgerError`, exit 3: acknowledged
    first)."""
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.budget import spent_of

    plan = _merge_plan(request, progress)
    home, closed, into = plan.home, dict(plan.closed), plan.into
    docs: dict[str, tuple[bytes, Path]] = {}
    for path in request.approvals:
        doc = _read_approval(path)
        assert doc is not None
        name = _approval_dataset(doc)
        if name is None or name in docs:
            raise UsageError(_("{path}: not an approval for one more dataset").format(path=path))
        docs[name] = (doc, path)
    written: list[Entry] = []
    if into is not None:
        for other in sorted(d for d in plan.live if d != into):
            progress.check_cancelled()
            entry = _merge_pair(home, into, other, docs)
            if entry is not None:
                written.append(entry)
            closed[other] = into
    if docs:
        raise UsageError(
            _("an approval names dataset {dataset}, which is not merged here").format(
                dataset=", ".join(sorted(docs))
            )
        )
    for d, target in sorted(closed.items()):
        if target is not None:
            _move_table(home, d, target)
    spent = None
    if into is not None:
        spent = spent_of(Ledger.of(home, into).read())
    overspent = spent is not None and (
        spent.spent_epsilon > spent.budget.epsilon or spent.spent.delta > spent.budget.delta
    )
    retired = tuple(sorted(d for d, t in closed.items() if t is not None))
    return Merged(into, retired, tuple(written), spent, overspent)
