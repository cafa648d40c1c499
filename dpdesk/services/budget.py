"""The plan's budget: sensitivity, noise and cost of every query from the plan alone, and, with a dataset,
what its ledger already holds subtracted (the data file is only hashed, never read as a table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpdesk.core.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.budget import BudgetReport
    from dpdesk.core.plan import Plan
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
        return out


def plan_budget(
    request: BudgetRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> BudgetResult:
    """The plan's budget report; with a dataset, its verified ledger counts and its settings must match.

    Raises :class:`~dpdesk.core.errors.LedgerError` (broken ledger) and
    :class:`~dpdesk.core.release.SettingsMismatch` (the plan's budget, unit or method differ from the ledger's).
    """
    from dpdesk.core.budget import budget_report

    entries: list[dict[str, Any]] = []
    dataset = governance = None
    if request.dataset is not None:
        from dpdesk.core.governance import describe
        from dpdesk.core.ledger import settings_in_force
        from dpdesk.core.release import _check_settings

        ledger = request.dataset.open_ledger(notify)
        entries, dataset = ledger.verify(), ledger.dataset
        _check_settings(request.plan, settings_in_force(entries))
        governance = describe(entries)
    progress.check_cancelled()
    return BudgetResult(budget_report(request.plan, entries), dataset or None, governance)
