"""dpdesk's engine: no Qt, importable with PySide6 uninstalled, light to import (each module loads its heavy
libraries when it needs them).

The layers, enforced by import-linter (``[tool.importlinter]`` in pyproject.toml, run by
``tests/test_layers.py``): the app (``dpdesk.gui``) and the command line (``dpdesk.cli``) over the services
(``dpdesk.services``) over this engine; no Qt here; noise only through the OpenDP adapter
``dpdesk.core.mechanisms``; nothing on the release path imports ``dpdesk.core.simulate`` (numpy's generator, for
previews only).

The engine's public API is :data:`__all__`: the plan and its values, the errors, loading a table, the ledger and its typed entries,
the budget report and the fit, the release's outputs, the review, progress. ``import dpdesk.core`` loads none
of them: each name is imported from its module when it is first used (``from dpdesk.core import parse_plan``),
so the command line's start-up does not grow. The release itself and the review are the modules
:mod:`dpdesk.core.release` (``release.release``) and :mod:`dpdesk.core.review` (``review.review``): a function
cannot share its name with a module of this package, whose import sets that name to the module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module that defines it.
_HOMES = {
    # the plan and its values
    "Accounting": "plan",
    "Budget": "plan",
    "ColumnSpec": "plan",
    "Plan": "plan",
    "PrivacyUnit": "plan",
    "QuerySpec": "plan",
    "apply_codebook": "plan",
    "check_plan": "plan",
    "load_plan": "plan",
    "parse_plan": "plan",
    "parse_plan_text": "plan",
    "read_codebook": "plan",
    "save_plan": "plan",
    # the errors a user is shown (each with its exit code)
    "BudgetExceeded": "errors",
    "Cancelled": "errors",
    "DpdeskError": "errors",
    "InputError": "errors",
    "LedgerError": "errors",
    "PlanError": "errors",
    "PlanErrors": "errors",
    "UsageError": "errors",
    # a table
    "Table": "loading",
    "load_table": "loading",
    "peek": "loading.peek",
    "suggest_types": "loading",
    "load_for_release": "streaming",
    # the ledger, the budget and the fit
    "Ledger": "ledger",
    "Entry": "entries",
    "EntryType": "entries",
    "SettingsEntry": "entries",
    "SpendEntry": "entries",
    "BudgetReport": "budget",
    "budget_report": "budget",
    "report_warnings": "budget",
    "FitError": "fit",
    "FitResult": "fit",
    "fit_to_budget": "fit",
    # a release's outputs and their review
    "Row": "values",
    "rows_from_entry": "values",
    "check_out_dir": "release",
    "write_release_dir": "release",
    "Review": "review",
    "review_summary": "review",
    # progress and the home folder
    "NULL_PROGRESS": "progress",
    "Progress": "progress",
    "dpdesk_home": "home",
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
    from dpdesk.core.budget import BudgetReport, budget_report, report_warnings
    from dpdesk.core.entries import Entry, EntryType, SettingsEntry, SpendEntry
    from dpdesk.core.errors import (
        BudgetExceeded,
        Cancelled,
        DpdeskError,
        InputError,
        LedgerError,
        PlanError,
        PlanErrors,
        UsageError,
    )
    from dpdesk.core.fit import FitError, FitResult, fit_to_budget
    from dpdesk.core.home import dpdesk_home
    from dpdesk.core.ledger import Ledger
    from dpdesk.core.loading import Table, load_table, suggest_types
    from dpdesk.core.loading.peek import peek
    from dpdesk.core.plan import (
        Accounting,
        Budget,
        ColumnSpec,
        Plan,
        PrivacyUnit,
        QuerySpec,
        apply_codebook,
        check_plan,
        load_plan,
        parse_plan,
        parse_plan_text,
        read_codebook,
        save_plan,
    )
    from dpdesk.core.progress import NULL_PROGRESS, Progress
    from dpdesk.core.release import check_out_dir, write_release_dir
    from dpdesk.core.review import Review, review_summary
    from dpdesk.core.streaming import load_for_release
    from dpdesk.core.values import Row, rows_from_entry
