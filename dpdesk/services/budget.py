"""The plan's budget: sensitivity, noise and cost of every query from the plan alone, and, with a dataset,
what its ledger already holds subtracted (the data file is only hashed, never read as a table)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.core.ledger.entries import Entry
    from dpdesk.core.ledger.fit import FitResult
    from dpdesk.core.model.spec import Plan, QuerySpec
    from dpdesk.services.common import Dataset, Notify


@dataclass(frozen=True)
class BudgetRequest:
    """A plan, and optionally the dataset whose ledger's spends count against its budget."""

    plan: Plan
    dataset: Dataset | None = None


@dataclass(frozen=True)
class BudgetResult:
    """The budget report, and the dataset's public id once it has a ledger."""

    report: BudgetReport
    dataset: str | None = None
    #: with a dataset: one line saying who governs it, or that it is ungoverned
    governance: str | None = None
    #: a fit: what it did to the queries it kept below their mechanism's limit (:func:`dpdesk.core.ledger.fit.capped_note`)
    notes: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        """Whether the plan fits in what is left of the budget."""
        return self.report.fits

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (``dpdesk budget --json``), with ``"dataset"`` when there is one."""
        out = self.report.to_dict()
        if self.dataset:
            out["dataset"] = self.dataset
        if self.governance is not None:
            out["governance"] = self.governance
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def plan_budget(
    request: BudgetRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> BudgetResult:
    """The plan's budget report; with a dataset, its verified ledger counts and its settings must match.

    Raises :class:`~dpdesk.core.common.errors.LedgerError` (broken ledger) and
    :class:`~dpdesk.core.release.steps.SettingsMismatch` (the plan's budget, unit or method differ from the ledger's).
    """
    from dpdesk.core.ledger.budget import budget_report

    if request.dataset is None:
        return BudgetResult(budget_of_entries(request.plan, []))
    from dpdesk.core.ledger.governed import describe
    from dpdesk.core.release.steps import check_settings

    # the history from the ledger's last checkpoint (bound to the recorded head), else the whole chain verified
    ledger = request.dataset.open_ledger(notify)
    state = ledger.read()
    check_settings(request.plan, state.settings)
    progress.check_cancelled()
    gov = [state.governance_entry] if state.governance_entry is not None else []
    return BudgetResult(budget_report(request.plan, state=state), ledger.dataset or None, describe(gov))


def budget_of_entries(plan: Plan, entries: Sequence[Entry]) -> BudgetReport:
    """The plan's budget report against a dataset's ledger entries already read and verified (the app's live
    meter, recomputed after every edit from the entries it read when the table was opened; no file is read).
    With no entries, the plan's own budget; with them, the settings and spends they record."""
    from dpdesk.core.ledger.budget import budget_report

    return budget_report(plan, entries)


def keeps_epsilon(query: QuerySpec) -> bool:
    """Whether fitting a plan to its budget keeps this query's epsilon whatever its lock and weight: it states the
    accuracy it needs, so its epsilon is what that accuracy costs."""
    return getattr(query, "accuracy", None) is not None


def fit_entries(
    plan: Plan,
    entries: Sequence[Entry],
    *,
    weights: Sequence[float],
    locked: Sequence[bool],
    reserve: float = 0.0,
) -> FitResult:
    """Fit ``plan``'s free queries to what ``entries`` (a dataset's verified ledger, already read) leave of the
    budget: weights and locks by position, a query that states its accuracy locked (:func:`keeps_epsilon`).
    Raises :class:`~dpdesk.core.ledger.fit.FitError` when nothing can be fitted."""
    from dpdesk.core.ledger.fit import fit_to_budget

    return fit_to_budget(
        plan,
        entries,
        weights=weights,
        locked=[bool(lock) or keeps_epsilon(q) for q, lock in zip(plan.queries, locked, strict=True)],
        reserve=reserve,
    )


def _dataset_ledger(
    request: BudgetRequest, notify: Notify | None
) -> tuple[list[Entry], str | None, str | None]:
    """The dataset's verified entries (checked against the plan's settings), its id and who governs it."""
    if request.dataset is None:
        return [], None, None
    from dpdesk.core.ledger.entries import settings_in_force
    from dpdesk.core.ledger.governed import describe
    from dpdesk.core.release.steps import check_settings

    ledger = request.dataset.open_ledger(notify)
    entries = ledger.verify()
    check_settings(request.plan, settings_in_force(entries))
    return entries, ledger.dataset or None, describe(entries)


@dataclass(frozen=True)
class FitRequest:
    """Fit a plan to what is left of its budget: weights and locks by query name, a reserve kept for later."""

    budget: BudgetRequest
    weights: dict[str, float]
    locked: frozenset[str]
    reserve: float = 0.0


def fit_plan(request: FitRequest, *, notify: Notify | None = None) -> tuple[Plan, BudgetResult]:
    """The plan with its free queries' epsilons fitted (see :func:`dpdesk.core.ledger.fit.fit_to_budget`), and its
    budget. Queries that state the accuracy they need keep their epsilon. Raises
    :class:`~dpdesk.core.ledger.fit.FitError` when nothing can be fitted and :class:`~dpdesk.core.common.errors.PlanError`
    for a weight or lock naming no query."""
    import dataclasses

    from dpdesk.core.common.errors import PlanError
    from dpdesk.i18n import _

    entries, dataset, governance = _dataset_ledger(request.budget, notify)  # read once
    plan = request.budget.plan
    names = [q.name for q in plan.queries]
    for name in [*request.weights, *request.locked]:
        if name not in names:
            raise PlanError(
                "",
                _("no query is named {name!r} (the queries: {names})").format(
                    name=name, names=", ".join(repr(n) for n in names)
                ),
            )
    fit = fit_entries(
        plan,
        entries,
        weights=[request.weights.get(q.name, 1.0) for q in plan.queries],
        locked=[q.name in request.locked for q in plan.queries],
        reserve=request.reserve,
    )
    queries = tuple(
        dataclasses.replace(q, epsilon=e) for q, e in zip(plan.queries, fit.epsilons, strict=True)
    )
    fitted = dataclasses.replace(plan, queries=queries)
    from dpdesk.core.ledger.fit import capped_note

    notes = tuple(capped_note(q) for q in fitted.queries if q.name in fit.capped)
    return fitted, BudgetResult(fit.report, dataset, governance, notes)
