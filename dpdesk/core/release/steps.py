"""Releases: validate, load, compute exactly, charge the ledger, draw noise, and only then reveal.

Order of a release (spend before reveal):

1. the output folder is checked and claimed (:func:`dpdesk.core.publish.outputs.claim_out_dir`); the plan's designs are
   computed from public facts;
2. the data is loaded (its SHA-256 names its ledger) and the exact statistics computed by the engine that read it
   (:mod:`dpdesk.core.release.engines`: in memory, or streamed), rows bounded per person by a keyed hash;
3. under the ledger's exclusive lock: the chain is verified, the dataset's settings checked, the
   remaining budget checked, the noise drawn (OpenDP), and the spend entry with the noisy values
   appended and fsynced;
4. only then are the values written (``release.csv``, ``plan.json``) or returned for display: the package is
   built in the claimed temporary folder beside its place and renamed into place whole; a failure there leaves
   nothing at ``--out`` and names the free way to write it again (``dpdesk ledger export-release SEQ``).

A crash before step 3 ends charges nothing and reveals nothing; a crash after it has charged the
release, whose values stay in the ledger and can be re-exported at no cost.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import BudgetExceeded, DpdeskError, LedgerError, UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.common.shown import plain
from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates_base import Exact
from dpdesk.core.dp.bounding import BoundKey, derive_key
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.queries_base import QueryDesign, grid_bounds
from dpdesk.core.dp.values import CSV_COLUMNS, Row, rows_hash
from dpdesk.core.identity.recognition import ledger_for
from dpdesk.core.ledger.book import Ledger, LedgerTransaction
from dpdesk.core.ledger.budget import BudgetReport, budget_report, design_to_dict, plan_costs
from dpdesk.core.ledger.contents import home_secret
from dpdesk.core.ledger.entries import FIRST_RELEASE_REASON, RECOST_REASON, Entry, SpendEntry
from dpdesk.core.ledger.team import TeamLedgerError
from dpdesk.core.loading import Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.publish.outputs import ClaimedFolder, claim_out_dir
from dpdesk.core.release.datacheck import DataCheck, DataProblems
from dpdesk.core.release.engines.base import AggregationEngine
from dpdesk.core.release.engines.memory import InMemoryEngine
from dpdesk.core.release.engines.streamed import StreamingEngine
from dpdesk.core.release.streaming import StreamedAggregates, check_streamed, close_streamed, load_for_release
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.governance.officer import VerifiedApproval
    from dpdesk.core.identity.recognition import Resolution
    from dpdesk.core.ledger.checkpoint import State
    from dpdesk.core.release.engines.spark.session import SparkTarget


class SettingsMismatch(DpdeskError):
    """The plan's budget, unit of privacy or accounting method differs from the dataset's ledger."""


# ----------------------------------------------------------------------------- noise


NoiseFn = Callable[[list[int], Any], list[int]]
PickFn = Callable[[list[float], Any], int]


#: the reason recorded by a dataset's first release, in English whatever the writer's language (a ledger is read
#: by others: the app shows it translated, see dpdesk.gui.models)


def _opendp_noise(values: list[int], comp: Any) -> list[int]:
    """Noisy integers on the component's noise grid (exact integers refined onto it first)."""
    f = comp.refine
    scaled = [v * f for v in values] if f != 1 else values
    if comp.mechanism == "laplace":
        l1 = round(comp.l1 / comp.grid)
        noisy, _ = mech.draw_laplace(scaled, l1, comp.epsilon)
        return noisy
    noisy, _ = mech.draw_gaussian(scaled, comp.l2 / comp.grid, comp.scale / comp.grid)
    return noisy


def _opendp_pick(utilities: list[float], comp: Any) -> int:
    return mech.draw_exponential(utilities, comp.l1, comp.epsilon)


def noisy_rows(
    design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn = _opendp_noise, pick: PickFn = _opendp_pick
) -> list[Row]:
    """Noise one query's exact statistic and format its rows (the only place values are made): its
    statistic's post-processing (:meth:`~dpdesk.core.dp.statistics.base.Statistic.release_rows`)."""
    return statistics.get(design.spec.statistic).release_rows(design, exact, plan, noise, pick)


# ----------------------------------------------------------------------------- release


@dataclass
class ReleaseResult:
    """What a release produced: its rows, its ledger entry and where its files went."""

    rows: list[Row]
    entry: SpendEntry
    out_dir: Path | None
    report_lines: list[str]
    ledger: Ledger | None = None
    data_check: DataCheck | None = None  # for the curator's screen only; never written anywhere
    #: how the file was resolved to its dataset, when the release resolved it (its ledger may have migrated)
    resolution: Resolution | None = None


def check_out_dir(out_dir: Path) -> None:
    """The output folder must not exist, or be empty."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise UsageError(_("{path} exists and is not a folder").format(path=out_dir))
        if any(out_dir.iterdir()):
            raise UsageError(
                _("{path} is not empty; choose a new folder for the release").format(path=out_dir)
            )


def bound_key(plan: Plan, home: Path) -> BoundKey | None:
    """The key a release bounds rows per person under (None without an id column): derived from the home's
    identity secret (:func:`~dpdesk.core.ledger.contents.home_secret`; see :mod:`dpdesk.core.dp.bounding` and
    docs/bounding.md), so that every engine, and every release of the home, keeps the same rows of a table."""
    if plan.privacy_unit.id_column is None:
        return None
    return derive_key(home_secret(home))


def id_key(plan: Plan, home: Path) -> bytes | None:
    """The key a release's loader hashes person ids under (None without an id column): derived from the home's
    identity secret, so that a person's id hash, and so the rows kept of them, are the same in every process and
    engine of the home (:func:`dpdesk.core.loading.columns.id_hashes`)."""
    if plan.privacy_unit.id_column is None:
        return None
    return hashlib.blake2b(b"person ids", key=home_secret(home), person=b"dpdesk-idkey-v1").digest()


def _engine_for(table: Table, plan: Plan, designs: Sequence[QueryDesign]) -> AggregationEngine:
    """The engine that read the table: streamed (its rows went batch by batch to a sink) or in memory."""
    if isinstance(table.streamed, StreamedAggregates):
        return StreamingEngine(table, plan)
    return InMemoryEngine(table, plan, list(designs))


def check_settings(plan: Plan, ledger_settings: dict[str, Any] | None) -> None:
    if ledger_settings is None:
        return
    mine = plan.settings()
    for key, message in (
        (
            "budget",
            _(
                "this dataset's total budget was fixed at its first release as {fixed}; the plan says {plan}. "
                "Only a privacy officer can change it (dpdesk ledger change-settings PLAN --data FILE "
                '--reason "...")'
            ),
        ),
        (
            "privacy_unit",
            _(
                "this dataset's unit of privacy was fixed at its first release as {fixed}; the plan says "
                "{plan}. Only a privacy officer can change it (dpdesk ledger change-settings PLAN --data FILE "
                '--reason "...")'
            ),
        ),
    ):
        if mine[key] != ledger_settings[key]:
            raise SettingsMismatch(
                message.format(fixed=json.dumps(ledger_settings[key]), plan=json.dumps(mine[key]))
            )
    if mine["accounting"]["method"] != ledger_settings["accounting"]["method"]:
        raise SettingsMismatch(
            _(
                "this dataset uses {fixed} accounting since its first release; the plan asks for {plan}. Only a "
                'privacy officer can change it (dpdesk ledger change-settings PLAN --data FILE --reason "...")'
            ).format(fixed=ledger_settings["accounting"]["method"], plan=mine["accounting"]["method"])
        )


def release(
    plan: Plan,
    data_path: str | Path,
    home: Path,
    out_dir: Path | None = None,
    *,
    progress: Progress = NULL_PROGRESS,
    table: Table | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    bom: bool = False,
    accept_data_problems: bool = False,
    on_data_check: Callable[[DataCheck], None] | None = None,
    approval: bytes | None = None,
    approval_source: str | None = None,
    memory_limit: int | None = None,
    resolve: bool = False,
    spark: SparkTarget | None = None,
) -> ReleaseResult:
    """Run a whole release: :func:`prepare_release`, then :func:`commit_release` (spend before reveal). Writes
    ``out_dir`` (if given) only after the ledger.

    A table that would not fit under ``memory_limit`` bytes (None: the default, a fraction of the machine's
    memory) is streamed: its exact aggregates are computed in one pass (:mod:`dpdesk.core.release.streaming`).

    ``bom`` writes release.csv with a UTF-8 byte-order mark, so that Excel shows Chinese labels.
    After loading and before the ledger is touched, the table is checked (:func:`check_data`) and
    ``on_data_check`` shown the counts; a declared column with values outside its categories or
    unparsable values stops the release (:class:`DataProblems`, nothing charged) unless
    ``accept_data_problems`` (the curator saw the counts and goes ahead: those values count as missing).

    On a governed dataset (:mod:`dpdesk.core.ledger.governed`) the officer fixes the settings: the first release needs
    settings recorded with their approval; when the policy requires signed plans, ``approval`` (an approval file's
    bytes, named ``approval_source``) must approve this plan and its budget, and is recorded in the spend entry.
    """
    claim, out_refused = None, None
    if out_dir is not None:  # checked and claimed before any charge
        try:
            claim = claim_out_dir(out_dir)
        except UsageError as exc:
            if approval is None:
                raise
            # said after the approval is checked (its refusal first), still before any charge
            out_refused = exc
    try:
        prepared = prepare_release(
            plan,
            data_path,
            home,
            progress=progress,
            table=table,
            encoding=encoding,
            delimiter=delimiter,
            accept_data_problems=accept_data_problems,
            on_data_check=on_data_check,
            approval=approval,
            approval_source=approval_source,
            memory_limit=memory_limit,
            read_ledger=False,  # the ledger is read once, under its lock, by the commit
            resolve=resolve,
            spark=spark,
        )
    except BaseException:
        if claim is not None:
            claim.abandon()
        raise
    result = commit_release(prepared, claim, bom=bom, progress=progress, out_refused=out_refused)
    result.out_dir = out_dir  # as the caller named it
    return result


@dataclass(frozen=True)
class PreparedRelease:
    """A release checked and computed, nothing charged or written (:func:`prepare_release`): the table loaded and
    checked, the exact statistics computed (in memory, never shown), the plan designed and costed, and, when the
    ledger was read, the budget as it stood and the ledger's head then. :func:`commit_release` charges it."""

    plan: Plan
    data_path: str | Path
    home: Path
    table: Table
    designs: tuple[QueryDesign, ...]
    exacts: tuple[Exact, ...]
    #: the data check's counts, for the curator's screen only (never written anywhere)
    check: DataCheck
    ledger: Ledger
    approval: bytes | None = None
    approval_source: str | None = None
    #: the budget report against the ledger as it stood (None: the ledger was not read)
    report: BudgetReport | None = None
    #: the ledger's head (sequence number, hash) the report was made at (None: not read; (0, "") for a new one)
    head: tuple[int, str] | None = None
    #: how the file was resolved to its dataset (None: not resolved here)
    resolution: Resolution | None = None

    def close(self) -> None:
        """Give up the prepared release: a streamed table's partition files are removed (nothing was charged)."""
        close_streamed(self.table)


def prepare_release(
    plan: Plan,
    data_path: str | Path,
    home: Path,
    *,
    progress: Progress = NULL_PROGRESS,
    table: Table | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    accept_data_problems: bool = False,
    on_data_check: Callable[[DataCheck], None] | None = None,
    approval: bytes | None = None,
    approval_source: str | None = None,
    memory_limit: int | None = None,
    read_ledger: bool = True,
    resolve: bool = True,
    spark: SparkTarget | None = None,
) -> PreparedRelease:
    """The first step of a release, nothing charged: load and check the table (``on_data_check`` is shown the
    counts; :class:`DataProblems` unless ``accept_data_problems``), compute exactly, design and cost the plan;
    with ``read_ledger``, also read the dataset's ledger (never written) and check the plan's settings, its
    governance (an approval verifies) and the budget as it stands (``report``; a plan that does not fit is
    refused by the commit). With ``resolve`` (once the data check lets the release go on), the file is resolved to
    its dataset: a re-saved copy of a known table is linked to its ledger, and a table that resembles a known
    dataset is refused (:class:`~dpdesk.core.identity.recognition.NearCopy`) until it is linked or declared new.
    :func:`commit_release` checks all of it again under the ledger's lock."""
    designs = design_plan(plan)
    if read_ledger or resolve:
        from dpdesk.core.ledger.pgstore import warm_up

        warm_up(home)  # a team ledger's client and connection, made while the table loads
    engine: AggregationEngine
    if spark is not None and table is None:  # aggregated where the table lies (nothing of it read here)
        from dpdesk.core.release.engines.spark.engine import SparkEngine

        spark_engine = SparkEngine(
            str(data_path),
            plan,
            designs,
            spark,
            encoding=encoding,
            delimiter=delimiter,
            id_key=id_key(plan, home),
            identity_secret=_load_secret(home, None),
            progress=progress,
        )
        table, engine = spark_engine.table, spark_engine
        if spark_engine.cluster_only:
            from dpdesk.core.ledger.contents import remember_cluster_table, remember_file

            in_team = _check_cluster_table(home, data_path)
            # the identity kept by its key before the hint names the key: a release refused later (data problems, a
            # near-copy) leaves a hint that budget, ledger, ledger link and declare-new can follow; in a team home
            # the hint names the team's secret the identity was keyed with (never taken for another's)
            if table.identity is not None:
                remember_file(home, table.identity)
            remember_cluster_table(home, data_path, table.sha256, table.identity_secret if in_team else None)
    else:
        if table is None:
            table = load_for_release(
                plan,
                data_path,
                memory_limit=memory_limit,
                designs=designs,
                progress=progress,
                encoding=encoding,
                delimiter=delimiter,
                identity_secret=_load_secret(home, data_path) if resolve else None,
                id_key=id_key(plan, home),
            )
        engine = _engine_for(table, plan, designs)
    try:
        _check_table(table, plan)
        check_streamed(table, designs)
        check = engine.check()
        if spark is not None and table.identity is None:  # a file named by its bytes: dpdesk reads it too
            _same_rows_here(home, data_path, table, check, encoding, delimiter, progress)
        if on_data_check is not None:
            on_data_check(check)
        if check.problems and not accept_data_problems:
            raise DataProblems(check)
        # a table larger than memory: merged batch by batch (its partition files removed here)
        exacts = list(engine.aggregate(bound_key(plan, home), progress).exacts)
    except BaseException:
        engine.close()  # a streamed table's partition files, if any, are removed now
        raise
    progress.check_cancelled()
    resolution = None
    if resolve:
        from dpdesk.core.identity import recognition

        try:
            resolution = recognition.resolve(
                home,
                data_path,
                sha256=table.sha256,
                progress=progress,
                computed=table.identity,
                computed_secret=table.identity_secret,
                cluster_table=spark is not None and table.identity is not None,
            )
            recognition.refuse_near_copy(resolution)
        except BaseException:
            close_streamed(table)
            raise
    ledger = ledger_for(home, table.sha256)  # a new dataset is decided again under the home-wide key lock
    report, head = None, None
    if read_ledger:
        state = ledger.read()  # the history from its last checkpoint, bound to the recorded head
        check_settings(plan, state.settings)
        report = budget_report(plan, state=state)  # report.fits: whether it would fit now
        # as the commit checks it: a governed dataset's approvals against what its history holds
        _check_governance(ledger, state, plan, approval, approval_source)
        head = (state.seq, state.hash)
    return PreparedRelease(
        plan,
        data_path,
        home,
        table,
        tuple(designs),
        tuple(exacts),
        check,
        ledger,
        approval,
        approval_source,
        report,
        head,
        resolution,
    )


class LedgerMoved(DpdeskError):
    """The ledger changed between a release's check and its charge (another release, a settings change): nothing
    was charged; the curator checks again. Exit 2, as for anything refused before a charge."""

    exit_code = 2


def commit_release(
    prepared: PreparedRelease,
    out: Path | ClaimedFolder | None = None,
    *,
    bom: bool = False,
    progress: Progress = NULL_PROGRESS,
    out_refused: UsageError | None = None,
    same_head: bool = False,
) -> ReleaseResult:
    """The second step of a release: under the ledger's lock, check the settings, the governance and the budget
    again, charge durably, draw the noise, and only then write the package to ``out`` (a new or empty folder, or
    one already claimed). With ``same_head`` (the curator confirmed what :func:`prepare_release` showed), nothing
    is charged if the ledger moved since then (:class:`LedgerMoved`)."""
    claim: ClaimedFolder | None = None
    try:
        claim = claim_out_dir(out) if isinstance(out, Path) else out
        rows, entry, before = _charge(
            prepared, progress=progress, out_refused=out_refused, same_head=same_head
        )
    except BaseException:
        if claim is not None:
            claim.abandon()
        raise
    table, plan, ledger = prepared.table, prepared.plan, prepared.ledger
    # revealed only now, after the spend entry is durable
    if claim is not None:
        try:
            write_release_dir(claim, rows, plan, entry, ledger, Path(table.path).name, bom=bom, before=before)
        except (OSError, DpdeskError) as exc:
            raise ReleaseNotWritten(
                _(
                    "the release was charged and recorded as ledger entry {seq}, but its package could not be "
                    "written to {out} ({err}); nothing was left there. Its values are kept in the ledger: write "
                    "them again at no cost with dpdesk ledger export-release {seq} --data {data} --out NEW_FOLDER"
                ).format(seq=entry.seq, out=claim.final, err=_os_err(exc), data=prepared.data_path)
            ) from None
    out_dir = claim.final if claim is not None else None
    return ReleaseResult(
        rows, entry, out_dir, table.report.lines(), ledger, prepared.check, prepared.resolution
    )


class ReleaseNotWritten(DpdeskError):
    """The release was charged, but its package could not be written (its values stay in the ledger): exit 4,
    never 2, which says that nothing was charged."""

    exit_code = 4


def _os_err(exc: BaseException) -> str:
    if isinstance(exc, TeamLedgerError):  # what went wrong, never its "nothing was charged": this release was
        return exc.reason
    return str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)


def _over_budget(report: BudgetReport) -> BudgetExceeded:
    rem = report.remaining_before
    name = acc.method_name(report.method)
    after = report.in_force.plan
    return BudgetExceeded(
        _(
            "over budget: this plan needs epsilon {e}, delta {d} under {method}; this dataset has epsilon "
            "{left_e} and delta {left_d} left of its budget (epsilon {budget_e}, delta {budget_d})"
        ).format(
            e=plain(after.epsilon, 6, "up"),
            d=plain(after.delta, 3, "up"),
            method=name,
            left_e=plain(max(0.0, rem.epsilon), 6, "down"),
            left_d=plain(rem.delta, 3, "down"),
            budget_e=plain(report.budget.epsilon, 6),
            budget_d=plain(report.budget.delta, 6),
        )
    )


def _charge(
    prepared: PreparedRelease,
    *,
    progress: Progress,
    out_refused: UsageError | None = None,
    same_head: bool = False,
) -> tuple[list[Row], SpendEntry, tuple[Entry | None, Entry | None]]:
    """Under the ledger's lock charge the prepared release and draw the noise; also returns the settings and
    governance entries in force at the spend (its package copies them)."""
    plan, designs, exacts, ledger = prepared.plan, prepared.designs, prepared.exacts, prepared.ledger
    approval, approval_source = prepared.approval, prepared.approval_source
    costs = plan_costs(designs)
    with ledger.transaction() as tx:
        if same_head and prepared.head is not None and (tx.state.seq, tx.state.hash) != prepared.head:
            raise LedgerMoved(
                _(
                    "the dataset's ledger changed after this release was checked (it is at entry {seq} now, was at "
                    "{was}: another release or a settings change); nothing was charged: check the release again"
                ).format(seq=tx.state.seq, was=prepared.head[0])
            )
        settings = tx.settings()
        check_settings(plan, settings)
        record_corrections(tx)
        report = budget_report(plan, state=tx.state)
        # a governed dataset's approvals: against the checkpoint and the entries after it, read back further only
        # to the head a plan approval names (never the whole chain unless the tail cannot be trusted)
        approved = _check_governance(ledger, tx.state, plan, approval, approval_source)
        if out_refused is not None:  # the output folder, refused before: now that the approval verified
            raise out_refused
        if not report.fits:
            raise _over_budget(report)
        progress.check_cancelled()  # the last point at which a cancel is honoured
        rows: list[Row] = []
        for d, ex in zip(designs, exacts, strict=True):
            rows.extend(noisy_rows(d, ex, plan))
        kept = [
            (d.spec.name, statistics.get(d.spec.statistic).ledger_fields(ex))
            for d, ex in zip(designs, exacts, strict=True)
        ]
        synthetic = {name: f for name, f in kept if f is not None}  # noisy marginals and seeds
        if settings is None:
            tx.append("settings", {"settings": plan.settings(), "reason": FIRST_RELEASE_REASON})
        method = report.method
        entry = tx.append(
            "spend",
            {
                "release_id": uuid.uuid4().hex,
                "title": plan.title,
                "plan_hash": plan.plan_hash(),
                "plan": plan.to_dict(),
                "method": method,
                "delta_prime": plan.accounting.delta_prime,
                "costs": [c.to_dict() for c in costs],
                "charged": report.in_force.plan.to_dict(),
                "budget": report.budget.to_dict(),
                "spent_after": report.in_force.after.to_dict(),
                "totals": {m: (v.plan.to_dict() if v else None) for m, v in report.methods.items()},
                "trace": [design_to_dict(d) for d in designs],
                "columns": list(CSV_COLUMNS),
                "values": [r.as_list() for r in rows],
                "values_hash": rows_hash(rows),
                **({"synthetic": synthetic} if synthetic else {}),
                **({"approval": approved.to_record()} if approved is not None else {}),
            },
        )
        assert isinstance(entry, SpendEntry)
        tx.checkpoint_if_due()  # in the same locked transaction, after the spend (durable first)
        before = (tx.state.settings_entry, tx.state.governance_entry)
    return rows, entry, before


def _check_governance(
    ledger: Ledger,
    state: State,
    plan: Plan,
    approval: bytes | None,
    source: str | None,
) -> VerifiedApproval | None:
    """A governed dataset's release: its settings were fixed with the officer's approval, and, when the policy
    requires signed plans, the plan's approval verifies (raises the :class:`~dpdesk.core.governance.officer.ApprovalError`
    naming why). Before anything is charged.

    Read from ``state`` (the last checkpoint and the entries after it: the governance in force, the head, the
    nonces used) and, for a plan approval, the entries from the head it names to the end
    (:meth:`dpdesk.core.ledger.book.Ledger.back_to`): the head must be in the chain, and its nonce not used by any of
    them, whatever the checkpoint records. The same refusals as against the whole chain, at a cost that does not
    grow with the history."""
    from dpdesk.core.governance.officer import GovernanceRecord, LedgerHead, plan_params
    from dpdesk.core.ledger.checkpoint import nonces_of
    from dpdesk.core.ledger.governed import ApprovalRequired, approved_head_seq, require_plan_with

    g = state.governance_entry
    record = GovernanceRecord.from_payload(g.get("governance")) if g is not None else None
    if record is not None and state.settings is None:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}), who fixes its budget: record its settings first with "
                "their approval (dpdesk ledger change-settings PLAN --approval FILE); nothing was charged"
            ).format(name=record.officer.shown_name, fp=record.officer.fingerprint)
        )
    seq = approved_head_seq(approval) if record is not None and record.policy.require_signed_plans else None
    back = ledger.back_to(state, seq) if seq is not None else None
    nonces = set(state.nonces)
    if back is not None:
        nonces |= nonces_of(back[1])
    return require_plan_with(
        record,
        LedgerHead(state.seq, state.hash),
        lambda n: back[0] if back is not None and n == seq else None,
        nonces,
        plan_params(plan),
        approval,
        source=source,
    )


def record_corrections(tx: LedgerTransaction) -> Entry | None:
    """Record what past releases cost above their booking (a ``correction`` entry), before anything else is charged."""
    pending = tx.pending_corrections()
    if not pending:
        return None
    return tx.append(
        "correction",
        {
            "reason": RECOST_REASON,
            "releases": pending,
            "added_epsilon": math.fsum(r["added_epsilon"] for r in pending),
        },
    )


def write_release_dir(
    out_dir: Path | ClaimedFolder,
    rows: Sequence[Row],
    plan: Plan,
    spend: SpendEntry,
    ledger: Ledger,
    dataset_name: str,
    *,
    bom: bool = False,
    title: str | None = None,
    before: tuple[Entry | None, Entry | None] | None = None,
) -> None:
    """Write the release package (release.csv, report.pdf, plan.json, ledger.json) into a new or empty folder:
    built in its claimed temporary sibling (:func:`~dpdesk.core.publish.outputs.claim_out_dir`) and renamed into place
    whole; on any failure the temporary folder is removed and the error raised (nothing is left at ``out_dir``)."""
    from dpdesk.core.publish.package import write_package

    claim = out_dir if isinstance(out_dir, ClaimedFolder) else claim_out_dir(out_dir)
    try:
        write_package(
            claim.work, rows, plan, spend, ledger, dataset_name, bom=bom, title=title, before=before
        )
        claim.finish()
    except BaseException:
        claim.abandon()
        raise


def _same_rows_here(
    home: Path,
    data_path: str | Path,
    table: Table,
    check: DataCheck,
    encoding: str | None,
    delimiter: str | None,
    progress: Progress,
) -> None:
    """A file Spark aggregated is a file dpdesk reads itself, with as many rows: its content identity (computed once
    here, then remembered by its bytes) must be readable, and count the rows Spark counted. Spark's CSV reader
    skips blank lines and cuts long rows where dpdesk reads a missing value or refuses the file: such a file is
    refused, never released with other rows than the ones its dataset is recognised by (nothing charged)."""
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.identity.recognition import identities_of

    try:
        ident = identities_of(
            home, data_path, sha256=table.sha256, encoding=encoding, delimiter=delimiter, progress=progress
        )[0]
    except InputError as exc:
        raise InputError(
            str(data_path),
            _(
                "dpdesk cannot read this file itself ({reason}), so what Spark reads of it cannot be checked; fix "
                "the file, or release it without --engine spark. Nothing was charged"
            ).format(reason=exc.message),
        ) from None
    rows = ident.sketch.rows
    if rows is not None and rows != check.rows:
        raise InputError(
            str(data_path),
            _(
                "Spark reads {spark} rows of this file where dpdesk reads {here} (blank lines in a one-column "
                "file, rows longer than the header or unusual line endings are read differently); save it as "
                "Parquet or as a plain CSV file, or release it without --engine spark. Nothing was charged"
            ).format(spark=check.rows, here=rows),
        )


def _check_table(table: Table, plan: Plan) -> None:
    for name, spec in plan.columns.items():
        if name not in table.columns or table.columns[name].spec != spec:
            raise UsageError(
                _("the loaded table does not match the plan's declaration of {name}; reload it").format(
                    name=repr(name)
                )
            )


def grid_info(plan: Plan, column: str) -> tuple[int, int, int]:
    """The fixed-point grid of a numeric column (exposed for the trace and tests)."""
    return grid_bounds(plan.columns[column])


def _check_cluster_table(home: Path, data_path: str | Path) -> bool:
    """A table only the cluster reads is found among the home's datasets, or its team's, by its scheme-2 content
    identity alone: while a dataset is known by a scheme-1 key only (recorded before scheme 2), a copy of its table
    would not be found (a second budget for its rows), so such a table is refused until that dataset's file has been
    opened again. Returns whether the home uses a team ledger (its identities are the team's, not kept in the
    home's register)."""
    from dpdesk.core.ledger.contents import needs_scheme1
    from dpdesk.core.ledger.pgstore import team_store

    team = team_store(home)
    if team is not None:
        from dpdesk.core.identity.recognition import team_scheme1_only

        old = team_scheme1_only(team)
        if old:
            raise UsageError(
                _(
                    "{source}: the team ledger still knows dataset(s) {datasets} by an older kind of content key "
                    "only, which a table read by Spark cannot be compared with; a curator releases or budgets that "
                    "dataset's file once with this dpdesk (dpdesk budget PLAN --data FILE records its newer key), "
                    "then release again. Nothing was charged"
                ).format(source=data_path, datasets=", ".join(old))
            )
        from dpdesk.core.ledger.book import unimported_dataset
        from dpdesk.core.ledger.contents import cluster_table_key

        # the key a release on the home's own ledger named this source with (keyed with the home's secret, which
        # the team's identity of it is not): its history there, not imported, would be a second budget here
        own = cluster_table_key(home, data_path)
        local = unimported_dataset(home, own) if own is not None else None
        if local is not None:
            raise LedgerError(
                _(
                    "{source} has history in this dpdesk home's own ledger (dataset {dataset}), which the team's "
                    "ledger does not hold yet: released here, it would start a second budget in the team. A table "
                    "only the cluster reads is not imported yet (dpdesk team import reads a file): import the file "
                    "of its rows (dpdesk team import --data FILE), or go on releasing it on this home's own ledger "
                    "(dpdesk team disconnect); nothing was charged or revealed"
                ).format(source=data_path, dataset=local)
            )
        return True
    if needs_scheme1(home):
        raise UsageError(
            _(
                "{source}: this home still knows a dataset by an older kind of content key only, which a table "
                "read by Spark cannot be compared with; open that dataset's file in dpdesk once (dpdesk budget "
                "PLAN --data FILE updates its key), then release again. Nothing was charged"
            ).format(source=data_path)
        )
    return False


def _load_secret(home: Path, data_path: str | Path | None) -> bytes | None:
    """The secret the loader keys the table's content identity with (:func:`~dpdesk.core.identity.recognition.load_secret`)."""
    from dpdesk.core.identity.recognition import load_secret

    return load_secret(home, data_path)
