"""The numbered tabs as a guided sequence: what each step still needs, in words (shown in neutral colours)."""

from __future__ import annotations

from typing import Any

from dpdesk.gui.state import AppState
from dpdesk.i18n import _

DATA, QUERIES, RESULTS, LEDGER = range(4)


def undeclared(columns: dict[str, Any]) -> str | None:
    """What the first ticked column still lacks before it can be used (its public bounds or categories)."""
    for name, spec in columns.items():
        if not isinstance(spec, dict):
            continue
        kind = spec.get("type")
        if kind in ("int", "float") and not spec.get("bounds"):
            return _(
                "Declare bounds for {col} before using it: its smallest and largest possible values."
            ).format(col=name)
        if kind == "category" and not spec.get("categories"):
            return _(
                "Declare the categories of {col} before using it (type them, or import a codebook)."
            ).format(col=name)
    return None


def _budget_problem(state: AppState) -> str | None:
    rep = state.report
    if rep is None or rep.fits:
        return None
    from dpdesk.core.ledger.budget import used_up

    if used_up(rep.remaining_before.epsilon, rep.budget.epsilon):
        return _("The budget of this dataset is used up: no further release is possible.")
    return _(
        "The plan needs more than the budget has left: Fit to the budget shares what is left across the "
        "queries, or remove some."
    )


def what_is_missing(state: AppState, step: int) -> str:
    """One or two sentences for the step's banner: what it needs before the next step, or what to do in it."""
    columns = state.plan_data.get("columns") or {}
    queries = state.plan_data.get("queries") or []
    has_table = state.data_path is not None
    if step == DATA:
        if not has_table:
            return _("Step 1: open your table (File > Open table…, or drop the file on this window).")
        if not columns:
            return _(
                "Step 1: tick the columns you will use, then give each its public bounds or categories, the unit "
                "of privacy and the budget."
            )
        return undeclared(columns) or _(
            "Step 1 is done: the columns are declared. Next: step 2, the queries."
        )
    if step == QUERIES:
        if not columns:
            if not has_table:
                return _("Step 2 needs a table: open one in step 1.")
            return _("Step 2 needs declared columns: tick them in step 1.")
        missing = undeclared(columns)
        if missing:
            return _("Step 2 needs step 1 finished. {what}").format(what=missing)
        if not queries:
            return _("Step 2: add a statistic with Add, then choose what it computes and its epsilon.")
        if state.plan is None:
            return _("A query is not complete yet: see the message under the form.")
        return _budget_problem(state) or _(
            "Step 2 is done: the plan fits the budget. Next: step 3, Release (Ctrl+R)."
        )
    if step == RESULTS:
        if state.results:
            return _(
                "Export writes the release package (CSV, PDF report, plan, ledger copy); it costs nothing."
            )
        if not has_table:
            return _("Step 3 needs a table: open one in step 1.")
        ok, why = state.can_release()
        if ok:
            return _(
                "Step 3: press Release (Ctrl+R). You are shown what it spends and what remains before anything is "
                "charged."
            )
        return _budget_problem(state) or _("Step 3 needs: {why}").format(why=why)
    if not has_table:
        return _("Step 4 shows a table's ledger: open one in step 1.")
    return _("Every release of this dataset, in order. Showing a past release again costs nothing.")
