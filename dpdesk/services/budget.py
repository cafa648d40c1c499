"""The plan's budget: sensitivity, noise and cost of every query from the plan alone, and, with a dataset,
what its ledger already holds subtracted (the data file is only hashed, never read as a table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpdesk.core.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.plan import Plan
    from dpdesk.services.common import Dataset, Notify


@dataclass(frozen=True)
class BudgetRequest:
    """A plan, and optionally the dataset whose ledger's spends count against its budget."""

    plan: Plan
    dataset: Dataset | None = None


@dataclass(frozen=True)
class BudgetResult:
    """The budget report (with the dataset's public id under ``"dataset"`` once it has a ledger)."""

    report: dict[str, Any]

    @property
    def fits(self) -> bool:
        """Whether the plan fits in what is left of the budget."""
        return bool(self.report["fits"])


def plan_budget(
    request: BudgetRequest, progress: Progress = NULL_PROGRESS, *, notify: Notify | None = None
) -> BudgetResult:
    """The plan's budget report; with a dataset, its verified ledger counts and its settings must match.

    Raises :class:`~dpdesk.core.errors.LedgerError` (broken ledger) and
    :class:`~dpdesk.core.release.SettingsMismatch` (the plan's budget, unit or method differ from the ledger's).
    """
    from dpdesk.core.budget import budget_report

    entries: list[dict[str, Any]] = []
    dataset = None
    if request.dataset is not None:
        from dpdesk.core.ledger import settings_in_force
        from dpdesk.core.release import _check_settings

        ledger = request.dataset.open_ledger(notify)
        entries, dataset = ledger.verify(), ledger.dataset
        _check_settings(request.plan, settings_in_force(entries))
    progress.check_cancelled()
    report = budget_report(request.plan, entries)
    if dataset:
        report["dataset"] = dataset
    return BudgetResult(report)
