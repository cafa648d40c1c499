"""Issue 15 items 3 and 4 in the app: the query form takes the epsilon OR the accuracy needed and shows the other,
the Data tab asks for a public estimate of the number of rows (never counted from the table), and the preview
states the accuracy in the statistic's own units and what it depends on."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QLabel, QLineEdit, QMessageBox

from dpdesk.core.dp import statistics
from dpdesk.core.dp.queries import design_query
from dpdesk.core.plan.reader import parse_plan
from dpdesk.gui.app import build
from dpdesk.gui.models import QUERY_COLUMNS
from dpdesk.gui.state import AppState
from dpdesk.gui.views.preview_panel import PreviewPanel
from dpdesk.gui.views.query_form import QueryForm
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)

PLAN: dict[str, Any] = {
    "version": 1,
    "budget": {"epsilon": 1.0, "delta": 1e-5},
    "privacy_unit": {"neighbouring": "add_remove"},
    "columns": {
        "x": {"type": "float", "bounds": [0, 10]},
        "g": {"type": "category", "categories": ["a", "b"]},
    },
    "queries": [
        {"name": "people", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
        {"name": "mean x", "statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 0.2},
        {
            "name": "median x",
            "statistic": "quantile",
            "column": "x",
            "q": 0.5,
            "mechanism": "exponential",
            "epsilon": 0.2,
        },
    ],
}


@pytest.fixture
def state(dpdesk_home: Path) -> AppState:
    s = AppState(dpdesk_home)
    s.load_plan_data(PLAN, None)
    return s


@pytest.fixture
def form(qtbot: Any, state: AppState) -> QueryForm:
    f = QueryForm(state)
    qtbot.addWidget(f)
    f.select_row(0)
    return f


def type_into(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    edit.clearFocus()


def engine_sentence(plan_data: dict[str, Any], row: int) -> tuple[float, str]:
    """The engine's own epsilon and accuracy sentence for the query (the plan read as the CLI reads it)."""
    plan = parse_plan(plan_data)
    spec = plan.queries[row]
    design = design_query(spec, plan)
    return spec.epsilon, statistics.get(spec.statistic).value_accuracy(design, plan).sentence()


def test_typing_a_target_shows_the_solved_epsilon_and_the_plan_gets_accuracy_only(
    qtbot: Any, form: QueryForm
) -> None:
    state = form.state
    assert not form.target_error.isVisibleTo(form)  # the epsilon side first
    form.know_accuracy.click()
    assert form.target_error.isVisibleTo(form) and form.target_confidence.isVisibleTo(form)
    assert form.epsilon.isReadOnly()
    type_into(qtbot, form.target_error, "12")
    q = state.plan_data["queries"][0]
    assert "epsilon" not in q and q["accuracy"] == {"error": 12, "confidence": 0.95}
    assert state.plan is not None, state.plan_error
    solved, sentence = engine_sentence(state.plan_data, 0)
    assert state.plan.queries[0].epsilon == solved
    assert form.epsilon.text() == f"{solved:g} (solved)"
    assert "±12 " in form.accuracy_text.text() or "±1" in form.accuracy_text.text()
    assert sentence in form.accuracy_text.text()
    cell = form.model.data(form.model.index(0, QUERY_COLUMNS.index("epsilon")))
    assert cell == f"{solved:g} (solved)"
    # a tighter target costs more: the solved epsilon follows the typing
    type_into(qtbot, form.target_error, "6")
    assert state.plan is not None
    assert state.plan.queries[0].epsilon > solved
    type_into(qtbot, form.target_confidence, "0.99")
    assert state.plan_data["queries"][0]["accuracy"] == {"error": 6, "confidence": 0.99}
    assert "99%" in form.accuracy_text.text()


def test_typing_an_epsilon_shows_the_accuracy_in_the_statistic_s_units(qtbot: Any, form: QueryForm) -> None:
    type_into(qtbot, form.epsilon, "0.5")
    q = form.state.plan_data["queries"][0]
    assert q["epsilon"] == 0.5 and "accuracy" not in q
    eps, sentence = engine_sentence(form.state.plan_data, 0)
    assert form.accuracy_text.text() == f"With ε = {eps:g}, {sentence}."
    assert "within ±" in sentence


def test_switching_back_and_forth_is_one_undoable_edit_each(qtbot: Any, form: QueryForm) -> None:
    state = form.state
    before = state.undo_stack.count()
    form.know_accuracy.click()  # starts from the accuracy the epsilon gives
    q = state.plan_data["queries"][0]
    assert set(q) & {"epsilon", "accuracy"} == {"accuracy"}
    assert state.plan is not None and state.plan.queries[0].epsilon <= 0.1  # 3 digits of the error, rounded
    solved = state.plan.queries[0].epsilon
    form.know_epsilon.click()  # and back: the solved epsilon becomes the stated one
    q = state.plan_data["queries"][0]
    assert set(q) & {"epsilon", "accuracy"} == {"epsilon"} and q["epsilon"] == solved
    assert form.know_epsilon.isChecked() and not form.epsilon.isReadOnly()
    assert state.undo_stack.count() == before + 2
    state.undo_stack.undo()
    assert "accuracy" in state.plan_data["queries"][0] and "epsilon" not in state.plan_data["queries"][0]
    assert form.know_accuracy.isChecked()
    state.undo_stack.undo()
    assert state.plan_data["queries"][0] == PLAN["queries"][0]
    assert form.know_epsilon.isChecked() and form.epsilon.text() == "0.1"
    state.undo_stack.redo()
    assert form.know_accuracy.isChecked() and form.epsilon.text() == f"{solved:g} (solved)"


def test_a_histogram_target_for_all_cells_together(qtbot: Any, form: QueryForm, state: AppState) -> None:
    draft = state.draft()
    draft["queries"][0] = {
        "name": "by g",
        "statistic": "count",
        "group_by": "g",
        "mechanism": "laplace",
        "epsilon": 0.1,
    }
    state.edit(draft, "grouped")
    form.select_row(0)
    form.know_accuracy.click()
    assert form.target_cells.isVisibleTo(form)
    type_into(qtbot, form.target_error, "20")
    each = state.solved_epsilon(0)
    form.target_cells.setCurrentIndex(form.target_cells.findData("all"))
    form.target_cells.activated.emit(form.target_cells.currentIndex())
    assert state.plan_data["queries"][0]["accuracy"] == {"error": 20, "confidence": 0.95, "cells": "all"}
    together = state.solved_epsilon(0)
    assert each is not None and together is not None and together > each
    assert "all 2 cells" in form.accuracy_text.text()


def test_the_error_field_speaks_the_statistic_s_units(form: QueryForm) -> None:
    form.select_row(2)
    form.know_accuracy.click()
    assert form.rows["accuracy"][0].text().startswith("Rank error")
    assert "rank" in form.accuracy_text.text()


@pytest.mark.slow
def test_the_preview_states_the_accuracy_and_what_it_depends_on(qtbot: Any, state: AppState) -> None:
    panel = PreviewPanel(state)
    qtbot.addWidget(panel)

    def texts() -> str:
        return "\n".join(w.text() for w in panel.body.findChildren(QLabel, "preview_accuracy"))

    panel.show_query(1)  # a mean without expected_rows: its parts, and what to give
    assert "depends on the number of rows" in texts() and "Expected rows" in texts()
    draft = state.draft()
    draft["expected_rows"] = 2000
    state.edit(draft, "rows")
    panel.refresh()
    _eps, sentence = engine_sentence(state.plan_data, 1)
    assert sentence in texts() and "stated for 2,000 rows" in texts()
    panel.show_query(2)  # a quantile: ranks, percentiles for the estimate, values only by simulating
    _eps, sentence = engine_sentence(state.plan_data, 2)
    assert sentence in texts() and "percentile" in sentence
    assert "Simulate" in texts() and "never computes it from your table" in texts()
    panel.show_query(0)  # a count: in rows, no dependence on the number of rows
    assert "within ±" in texts() and "number of rows" not in texts()


# ----------------------------------------------------------------------------- the whole window


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


@pytest.mark.slow
def test_opening_a_table_never_fills_in_the_expected_rows(qtbot: Any, win: Any, tmp_path: Path) -> None:
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
    assert win.state.peek is not None and win.state.peek.rows  # the table is open
    field = win.schema_view.expected_rows
    assert field.text() == "" and "expected_rows" not in win.state.plan_data
    assert "never counted from the data" in field.toolTip()
    type_into(qtbot, field, "12,000")  # the user's public estimate
    assert win.state.plan_data["expected_rows"] == 12000
    assert not [p for p in win.state.plan_problems if p.key == "expected_rows"]
    type_into(qtbot, field, "12.5")  # no whole number: the plan check names it
    assert [p for p in win.state.plan_problems if p.key == "expected_rows"]
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)  # cleared: the plan states none
    assert "expected_rows" not in win.state.plan_data
