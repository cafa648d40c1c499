"""Release a plan on a table: check the table (nothing charged), then charge the ledger and only then reveal
(the order is :func:`dpdesk.core.release.steps.release`'s: spend before reveal)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.dp.values import Row
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.core.ledger.entries import SpendEntry
    from dpdesk.core.loading import Table
    from dpdesk.core.model.spec import Plan
    from dpdesk.core.release.datacheck import DataCheck
    from dpdesk.core.release.engines.spark.session import SparkTarget
    from dpdesk.core.release.steps import PreparedRelease


@dataclass(frozen=True)
class CheckRequest:
    """Load a table as the plan declares it and check it; nothing is charged or revealed."""

    plan: Plan
    data: str | Path
    #: the release's memory limit in bytes (None: a fraction of the machine's memory); a table that would not
    #: fit under it is streamed (see :mod:`dpdesk.core.release.streaming`)
    memory_limit: int | None = None
    #: the dpdesk home the table is released from: its content identity is computed in the same read
    home: Path | None = None


@dataclass(frozen=True)
class CheckedTable:
    """The loaded table and its data check (the check's counts are for the curator's screen only)."""

    table: Table
    check: DataCheck


def check_table(request: CheckRequest, progress: Progress = NULL_PROGRESS) -> CheckedTable:
    """Load the table and run the data check (:func:`dpdesk.core.release.datacheck.check_data`), before any charge."""
    from dpdesk.core.identity.recognition import load_secret
    from dpdesk.core.release.datacheck import check_data
    from dpdesk.core.release.steps import id_key
    from dpdesk.core.release.streaming import load_for_release

    plan = request.plan
    table = load_for_release(
        plan,
        request.data,
        memory_limit=request.memory_limit,
        progress=progress,
        identity_secret=load_secret(request.home, request.data) if request.home is not None else None,
        id_key=id_key(plan, request.home) if request.home is not None else None,
    )
    return CheckedTable(table, check_data(table, plan))


@dataclass(frozen=True)
class ReleaseRequest:
    """Release ``plan`` on the table in ``data``; with ``out``, write the package there (a new or empty folder).

    ``table`` is the table already loaded by :func:`check_table` (then ``data`` is not read again);
    ``accept_data_problems`` releases although the data check found values outside the categories or
    unparsable values (the curator saw the counts); ``bom`` writes release.csv with a UTF-8 BOM.
    """

    plan: Plan
    data: str | Path
    home: Path
    out: Path | None = None
    table: Table | None = None
    encoding: str | None = None
    delimiter: str | None = None
    bom: bool = False
    accept_data_problems: bool = False
    #: the officer's approval of this plan, which a dataset whose policy requires signed plans needs
    approval: Path | None = None
    #: the release's memory limit in bytes (None: a fraction of the machine's memory); a table that would not
    #: fit under it is streamed: its exact aggregates are computed in one pass (see :mod:`dpdesk.core.release.streaming`)
    memory_limit: int | None = None
    #: aggregate with Spark where the table lies (``--engine spark``) instead of reading it here
    spark: SparkTarget | None = None


@dataclass(frozen=True)
class Released:
    """What a release produced: its noisy rows, its ledger entry, where its package went (if anywhere), the load
    report's lines (for the curator's screen only) and the ledger's migration notice, if opening it migrated it."""

    rows: tuple[Row, ...]
    entry: SpendEntry
    out: Path | None
    notes: tuple[str, ...]
    migration: str | None = None
    #: whether the table was streamed (it would not fit under the memory limit) rather than loaded whole
    streamed: bool = False


def _approval(request: ReleaseRequest) -> bytes | None:
    """The officer's approval file's bytes, read before anything is charged (None without one)."""
    if request.approval is None:
        return None
    from dpdesk.core.governance.officer import read_approval_file

    return read_approval_file(request.approval)


def release_plan(
    request: ReleaseRequest,
    progress: Progress = NULL_PROGRESS,
    *,
    on_data_check: Callable[[DataCheck], None] | None = None,
) -> Released:
    """Charge the ledger, then reveal; ``on_data_check`` is shown the data check before anything is charged.

    Raises :class:`~dpdesk.core.common.errors.BudgetExceeded`, :class:`~dpdesk.core.release.datacheck.DataProblems`,
    :class:`~dpdesk.core.common.errors.LedgerError`, :class:`~dpdesk.core.common.errors.UsageError` (an output folder that
    is not empty), :class:`~dpdesk.core.common.errors.Cancelled`; nothing is charged or written when they are raised.
    """
    from dpdesk.core.identity.recognition import load_secret
    from dpdesk.core.ledger.book import migration_notice
    from dpdesk.core.release.steps import check_out_dir, id_key, release
    from dpdesk.core.release.streaming import load_for_release

    if (
        request.out is not None and request.approval is None
    ):  # with an approval: checked after it, before any charge
        check_out_dir(request.out)
    approval = _approval(request)
    table = request.table
    if table is None and request.spark is None:
        table = load_for_release(
            request.plan,
            request.data,
            memory_limit=request.memory_limit,
            progress=progress,
            encoding=request.encoding,
            delimiter=request.delimiter,
            identity_secret=load_secret(request.home, request.data),
            id_key=id_key(request.plan, request.home),
        )
    result = release(
        request.plan,
        request.data,
        request.home,
        request.out,
        progress=progress,
        table=table,
        encoding=request.encoding,
        delimiter=request.delimiter,
        bom=request.bom,
        accept_data_problems=request.accept_data_problems,
        on_data_check=on_data_check,  # shown the counts; the order of the steps is the engine's
        approval=approval,
        approval_source=str(request.approval) if request.approval is not None else None,
        # once the data check lets it go on: a re-saved copy of a known table is linked to its dataset, and a
        # table that resembles a known dataset is linked or declared new first, never charged afresh
        resolve=True,
        spark=request.spark,
    )
    migrated = result.ledger.migrated if result.ledger is not None else None
    if migrated is None and result.resolution is not None:
        migrated = result.resolution.ledger.migrated  # opened (and migrated) by the resolution
    return Released(
        tuple(result.rows),
        result.entry,
        result.out_dir,
        tuple(result.report_lines),
        migration_notice(migrated) if migrated is not None else None,
        streamed=table is not None and table.streamed is not None,
    )


def prepare_plan_release(
    request: ReleaseRequest,
    progress: Progress = NULL_PROGRESS,
    *,
    on_data_check: Callable[[DataCheck], None] | None = None,
) -> PreparedRelease:
    """The release's first step (the app asks the curator between the two): load and check the table, resolve its
    dataset, design and cost the plan, read the ledger; nothing charged or written. A table that does not pass the
    data check raises :class:`~dpdesk.core.release.datacheck.DataProblems` unless ``request.accept_data_problems``."""
    from dpdesk.core.release.steps import prepare_release

    approval = _approval(request)
    return prepare_release(
        request.plan,
        request.data,
        request.home,
        progress=progress,
        table=request.table,
        encoding=request.encoding,
        delimiter=request.delimiter,
        accept_data_problems=request.accept_data_problems,
        on_data_check=on_data_check,
        approval=approval,
        approval_source=str(request.approval) if request.approval is not None else None,
        memory_limit=request.memory_limit,
        read_ledger=True,
        resolve=True,
        spark=request.spark,
    )


def commit_plan_release(
    prepared: PreparedRelease,
    out: Path | None = None,
    *,
    bom: bool = False,
    progress: Progress = NULL_PROGRESS,
) -> Released:
    """The release's second step, after the curator confirmed what the first showed: charged only if the ledger
    is where it was then (:class:`~dpdesk.core.release.steps.LedgerMoved` otherwise, nothing charged), then revealed."""
    from dpdesk.core.ledger.book import migration_notice
    from dpdesk.core.release.steps import commit_release

    result = commit_release(prepared, out, bom=bom, progress=progress, same_head=True)
    migrated = result.ledger.migrated if result.ledger is not None else None
    if migrated is None and result.resolution is not None:
        migrated = result.resolution.ledger.migrated
    return Released(
        tuple(result.rows),
        result.entry,
        result.out_dir,
        tuple(result.report_lines),
        migration_notice(migrated) if migrated is not None else None,
        streamed=prepared.table.streamed is not None,
    )


@dataclass(frozen=True)
class CheckedRelease:
    """What a release would do, nothing charged or written: the data check (for the curator's screen only), the
    budget report against the dataset's ledger as it stands, and the dataset it would be charged to."""

    check: DataCheck
    report: BudgetReport
    dataset: str | None
    notes: tuple[str, ...]
    streamed: bool = False


def check_release(
    request: ReleaseRequest,
    progress: Progress = NULL_PROGRESS,
    *,
    on_data_check: Callable[[DataCheck], None] | None = None,
) -> CheckedRelease:
    """The release's first step alone (``dpdesk release --check``): load and check the table, resolve its dataset,
    design and cost the plan, and read the ledger (its settings, governance and what is left), charging nothing and
    writing nothing. Raises as :func:`release_plan` does before a charge; a plan over budget is reported
    (``report.fits``), not raised."""
    prepared = prepare_plan_release(request, progress, on_data_check=on_data_check)
    prepared.close()
    assert prepared.report is not None
    return CheckedRelease(
        prepared.check,
        prepared.report,
        prepared.ledger.dataset or None,
        tuple(prepared.table.report.lines()),
        streamed=prepared.table.streamed is not None,
    )
