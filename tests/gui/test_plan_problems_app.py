"""The app with a plan that has problems (issue 15, item 6): the meter and the previews keep working for the
valid queries, the problems are counted in words (not in red), and the offending query and field are marked."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from dpdesk.gui.state import AppState
from dpdesk.gui.views.budget_meter import BudgetMeter
from dpdesk.gui.views.preview_panel import PreviewPanel
from dpdesk.gui.views.query_form import PROBLEM_MARK, QueryForm
from tests.conftest import SAMPLES

EXAMPLE = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))


@pytest.fixture
def views(qtbot: Any, dpdesk_home: Path) -> tuple[AppState, BudgetMeter, QueryForm, PreviewPanel]:
    state = AppState(dpdesk_home)
    meter, form, preview = BudgetMeter(state), QueryForm(state), PreviewPanel(state)
    for w in (meter, form, preview):
        qtbot.addWidget(w)
    form.selection_changed.connect(preview.show_query)
    data = copy.deepcopy(EXAMPLE)
    data["queries"][1]["column"] = "wag"  # query 2, "mean wage" (epsilon 0.2)
    data["queries"][4]["epsilon"] = "0.1x"  # query 5, "median education" (epsilon 0.1)
    state.load_plan_data(data, None)
    return state, meter, form, preview


def test_the_meter_counts_the_valid_queries_and_lists_the_problems_in_words(
    views: tuple[AppState, BudgetMeter, QueryForm, PreviewPanel],
) -> None:
    state, meter, _form, _preview = views
    assert state.plan is None  # nothing can be released while a query has a problem
    assert state.valid_rows == (0, 2, 3, 5)
    assert state.report is not None
    # the valid queries' epsilons: 0.1 + 0.2 + 0.2 + 0.1 (not the broken 0.2 and 0.1)
    assert [q.name for q in state.report.queries] == ["people", "regions", "wage by region", "largest region"]
    assert "this plan 0.6," in meter.headline.text()
    assert "2 queries have problems" in meter.headline.text()
    assert "c0392b" not in meter.headline.styleSheet()
    listed = meter.problems.text().splitlines()
    assert listed == [
        '• query 2 ("mean wage"): column "wag" is not declared in columns; did you mean "wage"?',
        (
            '• query 5 ("median education"): epsilon must be a number, not text (you wrote "0.1x"); '
            "write the number 0.1 without quotes"
        ),
    ]
    assert (
        meter.problems.isHidden()
    )  # listed once, behind the status line's "show", not in the meter (issue 28)
    assert (state.plan_error or "").startswith(
        "The plan has 2 problems:"
    )  # the status line and Release say so
    assert state.plan_error_key == "queries[1].column"


def test_the_offending_row_and_field_are_marked_and_valid_queries_are_previewed(
    views: tuple[AppState, BudgetMeter, QueryForm, PreviewPanel],
) -> None:
    state, _meter, form, preview = views
    model = form.model
    tip = Qt.ItemDataRole.ToolTipRole
    icon = Qt.ItemDataRole.DecorationRole
    assert model.data(model.index(1, 0), icon) is not None
    assert (
        model.data(model.index(1, 0), tip) == 'column "wag" is not declared in columns; did you mean "wage"?'
    )
    assert model.data(model.index(0, 0), icon) is None and model.data(model.index(0, 0), tip) is None
    assert model.data(model.index(1, 0), Qt.ItemDataRole.ForegroundRole) is None  # not red

    form.select_row(4)
    label, widget = form.rows["epsilon"]
    assert label.text().startswith(PROBLEM_MARK)
    assert widget.toolTip().startswith('epsilon must be a number, not text (you wrote "0.1x")')
    assert not form.rows["name"][0].text().startswith(PROBLEM_MARK)
    assert "Select a complete query" in preview.title.text()

    form.select_row(3)  # a valid query after a broken one: its own preview, not its neighbour's
    assert not label.text().startswith(PROBLEM_MARK) and not widget.toolTip().startswith("epsilon must")
    assert "wage by region" in preview.title.text()
    assert preview.canvases

    # fixing the problems makes the plan whole again, and the marks go away
    fixed = state.draft()
    fixed["queries"][1]["column"] = "wage"
    fixed["queries"][4]["epsilon"] = 0.1
    state.edit(fixed, "fix")
    assert state.plan is not None and state.plan_problems == ()
    form.select_row(4)
    assert not form.rows["epsilon"][0].text().startswith(PROBLEM_MARK)
    assert model.data(model.index(1, 0), icon) is None
