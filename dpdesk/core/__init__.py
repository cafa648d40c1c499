"""dpdesk's engine: no Qt, importable with PySide6 uninstalled, light to import (each module loads its heavy
libraries when it needs them).

The layers, enforced by import-linter (``[tool.importlinter]`` in pyproject.toml, run by
``tests/test_layers.py``): the app (``dpdesk.gui``) and the command line (``dpdesk.cli``) over the services
(``dpdesk.services``) over this engine; no Qt here; noise only through the OpenDP adapter
``dpdesk.core.dp.mechanisms``; nothing on the release path imports ``dpdesk.core.preview.simulate`` (numpy's generator, for
previews only).

The engine's public API is :data:`__all__`: the plan and its values, the errors, loading a table, the ledger and its typed entries,
the budget report and the fit, the release's outputs, the review, progress. ``import dpdesk.core`` loads none
of them: each name is imported from its module when it is first used (``from dpdesk.core import parse_plan``),
so the command line's start-up does not grow. The release itself and the review are the modules
:mod:`dpdesk.core.release.steps` (``release.release``) and :mod:`dpdesk.core.publish.review` (``review.review``): a function
cannot share its name with a module of this package, whose import sets that name to the module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.
_HOMES = {
    # the plan and its values
    "Accounting": "model.spec",
    "Budget": "model.spec",
    "ColumnSpec": "model.spec",
    "Plan": "model.spec",
    "PrivacyUnit": "model.spec",
    "QuerySpec": "model.spec",
    "apply_codebook": "plan.reader",
    "check_plan": "plan.reader",
    "load_plan": "plan.reader",
    "parse_plan": "plan.reader",
    "parse_plan_text": "plan.reader",
    "read_codebook": "plan.reader",
    "save_plan": "plan.reader",
    # the errors a user is shown (each with its exit code)
    "BudgetExceeded": "common.errors",
    "Cancelled": "common.errors",
    "DpdeskError": "common.errors",
    "InputError": "common.errors",
    "LedgerError": "common.errors",
    "PlanError": "common.errors",
    "PlanErrors": "common.errors",
    "UsageError": "common.errors",
    # a table
    "Table": "loading.table",
    "load_table": "loading.load",
    "peek": "loading.peek",
    "suggest_types": "loading.suggest",
    "load_for_release": "release.streaming",
    # the ledger, the budget and the fit
    "Ledger": "ledger.book",
    "Entry": "ledger.entries",
    "EntryType": "ledger.entries",
    "SettingsEntry": "ledger.entries",
    "SpendEntry": "ledger.entries",
    "BudgetReport": "ledger.budget",
    "budget_report": "ledger.budget",
    "report_warnings": "ledger.budget",
    "FitError": "ledger.fit",
    "FitResult": "ledger.fit",
    "fit_to_budget": "ledger.fit",
    # a release's outputs and their review
    "Row": "dp.values",
    "rows_from_entry": "ledger.entries",
    "check_out_dir": "release.steps",
    "write_release_dir": "release.steps",
    "Review": "publish.review",
    "review_summary": "publish.review",
    # progress and the home folder
    "NULL_PROGRESS": "common.progress",
    "Progress": "common.progress",
    "dpdesk_home": "common.home",
}

__all__ = [
    "NULL_PROGRESS",
    "Accounting",
    "Budget",
    "BudgetExceeded",
    "BudgetReport",
    "Cancelled",
    "ColumnSpec",
    "DpdeskError",
    "Entry",
    "EntryType",
    "FitError",
    "FitResult",
    "InputError",
    "Ledger",
    "LedgerError",
    "Plan",
    "PlanError",
    "PlanErrors",
    "PrivacyUnit",
    "Progress",
    "QuerySpec",
    "Review",
    "Row",
    "SettingsEntry",
    "SpendEntry",
    "Table",
    "UsageError",
    "apply_codebook",
    "budget_report",
    "check_out_dir",
    "check_plan",
    "dpdesk_home",
    "fit_to_budget",
    "load_for_release",
    "load_plan",
    "load_table",
    "parse_plan",
    "parse_plan_text",
    "peek",
    "read_codebook",
    "report_warnings",
    "review_summary",
    "rows_from_entry",
    "save_plan",
    "suggest_types",
    "write_release_dir",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # what the type checkers see; at run time __getattr__ imports each name when it is used
    from dpdesk.core.common.errors import (
        BudgetExceeded,
        Cancelled,
        DpdeskError,
        InputError,
        LedgerError,
        PlanError,
        PlanErrors,
        UsageError,
    )
    from dpdesk.core.common.home import dpdesk_home
    from dpdesk.core.common.progress import NULL_PROGRESS, Progress
    from dpdesk.core.dp.values import Row
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.budget import BudgetReport, budget_report, report_warnings
    from dpdesk.core.ledger.entries import Entry, EntryType, SettingsEntry, SpendEntry, rows_from_entry
    from dpdesk.core.ledger.fit import FitError, FitResult, fit_to_budget
    from dpdesk.core.loading import Table, load_table, suggest_types
    from dpdesk.core.loading.peek import peek
    from dpdesk.core.model.spec import Accounting, Budget, ColumnSpec, Plan, PrivacyUnit, QuerySpec
    from dpdesk.core.plan.reader import (
        apply_codebook,
        check_plan,
        load_plan,
        parse_plan,
        parse_plan_text,
        read_codebook,
        save_plan,
    )
    from dpdesk.core.publish.review import Review, review_summary
    from dpdesk.core.release.steps import check_out_dir, write_release_dir
    from dpdesk.core.release.streaming import load_for_release
