"""The query form offers the proportion and writes its plan fields (built from its declared parameters)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from dpdesk.gui.state import AppState
from dpdesk.gui.views.query_form import QueryForm

PLAN = {
    "version": 1,
    "budget": {"epsilon": 1.0, "delta": 1e-5},
    "privacy_unit": {"neighbouring": "add_remove"},
    "columns": {
        "age": {"type": "int", "bounds": [0, 120]},
        "smoker": {"type": "category", "categories": ["yes", "no", "former"]},
    },
    "queries": [{"name": "q1", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}],
}


@pytest.fixture
def form(qtbot: Any, dpdesk_home: Path) -> QueryForm:
    state = AppState(dpdesk_home)
    state.load_plan_data(PLAN, None)
    f = QueryForm(state)
    qtbot.addWidget(f)
    f.select_row(0)
    return f


def type_into(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.clear()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_the_form_offers_the_proportion_and_writes_its_fields(qtbot: Any, form: QueryForm) -> None:
    i = form.statistic.findData("proportion")
    assert i >= 0 and "proportion" in form.statistic.itemText(i)
    form.statistic.setCurrentIndex(i)
    form.statistic.activated.emit(i)
    query = form.state.plan_data["queries"][0]
    assert query["statistic"] == "proportion" and query["column"] == "smoker"  # a category column first
    assert form.shown["categories"] and not form.shown["at_least"] and not form.shown["at_most"]
    assert form.shown["group_by"] and form.mechanism.count() == 2
    type_into(qtbot, form.params["categories"], "yes, former")  # type: ignore[arg-type]
    assert form.state.plan_data["queries"][0]["categories"] == ["yes", "former"]
    assert form.state.plan is not None, form.state.plan_error

    form.column.setCurrentIndex(form.column.findData("age"))
    form.column.activated.emit(form.column.currentIndex())
    assert form.shown["at_least"] and form.shown["at_most"] and not form.shown["categories"]
    type_into(qtbot, form.params["at_least"], "18")  # type: ignore[arg-type]
    query = form.state.plan_data["queries"][0]
    assert query["column"] == "age" and query["at_least"] == 18 and "at_most" not in query
    assert "categories" not in query  # a hidden parameter is dropped with the next edit
    assert form.state.plan is not None, form.state.plan_error
    type_into(qtbot, form.params["at_most"], "10")  # type: ignore[arg-type]
    assert form.state.plan is None and "below at_least" in (form.state.plan_error or "")
