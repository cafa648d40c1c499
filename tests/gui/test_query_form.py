"""The query form builds each statistic's parameter widgets from the registry's parameter kinds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget

from dpdesk.core.dp import statistics
from dpdesk.core.dp.statistics.base import ParamKind
from dpdesk.gui.state import AppState
from dpdesk.gui.views.query_form import PARAMS, BinEdges, QueryForm, form_key

PLAN = {
    "version": 1,
    "budget": {"epsilon": 1.0, "delta": 1e-5},
    "privacy_unit": {"neighbouring": "add_remove"},
    "columns": {
        "x": {"type": "float", "bounds": [0, 10]},
        "g": {"type": "category", "categories": ["a", "b"]},
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


def choose(form: QueryForm, name: str) -> dict[str, Any]:
    form.statistic.setCurrentIndex(form.statistic.findData(name))
    form.statistic.activated.emit(form.statistic.currentIndex())
    query: dict[str, Any] = form.state.plan_data["queries"][0]
    return query


def test_the_form_offers_every_statistic_of_the_registry(form: QueryForm) -> None:
    offered = [form.statistic.itemData(i) for i in range(form.statistic.count())]
    assert offered == [s.name for s in statistics.statistics() if s.in_form]
    for stat in (s for s in statistics.REGISTRY.values() if s.in_form):
        for p in stat.params:
            if p.kind not in (ParamKind.COLUMN, ParamKind.GROUP_BY):
                widget = form.params[form_key(p)]  # the plan key, or key:kind when another kind has it
                kinds = {
                    ParamKind.CHOICE: QComboBox,
                    ParamKind.COLUMN_LIST: QListWidget,
                    ParamKind.BIN_MAP: BinEdges,
                }
                assert isinstance(widget, kinds.get(p.kind, QLineEdit))


@pytest.mark.parametrize("name", [s.name for s in statistics.statistics() if s.in_form])
def test_choosing_a_statistic_shows_its_parameters_and_writes_a_valid_query(
    form: QueryForm, name: str
) -> None:
    stat = statistics.get(name)
    query = choose(form, name)
    assert query["statistic"] == name and query["mechanism"] == stat.mechanisms[0]
    columns: dict[str, Any] = PLAN["columns"]  # type: ignore[assignment]  # a JSON object
    col_type = columns.get(query.get("column", ""), {}).get("type")
    for key in PARAMS:
        declared = next(
            (p for p in stat.params if p.key == PARAMS[key].key and p.kind is PARAMS[key].kind), None
        )
        want = declared is not None and declared.applies_to(col_type)
        if declared is not None and declared.kind is ParamKind.CHOICE:
            want = want and len(declared.choices) > 1
        assert form.shown[key] == want, (name, key)
        assert form.rows[key][1].isVisibleTo(form) == want, (name, key)
    assert form.shown["column"] == (stat.column_param is not None)
    assert form.shown["group_by"] == stat.groupable
    mechs = [form.mechanism.itemData(i) for i in range(form.mechanism.count())]
    assert mechs == list(stat.mechanisms)


def test_a_row_condition_is_chosen_in_the_form_and_written_to_the_plan(form: QueryForm) -> None:
    """The form's "Only rows where": a category column takes its categories, a numeric one a range, and the
    query's own expected rows are offered once a condition is set; "(every row)" takes the condition away."""
    choose(form, "mean")
    assert form.shown["where"] and not form.shown["query_rows"]
    form.where_column.setCurrentIndex(form.where_column.findData("g"))
    form.where_column.activated.emit(form.where_column.currentIndex())
    form.where_values.setText("b")
    form.where_values.textEdited.emit("b")
    q = form.state.plan_data["queries"][0]
    assert q["where"] == {"column": "g", "in": ["b"]}
    assert form.shown["query_rows"] and "a, b" in form.where_values.placeholderText()
    form.query_rows.setText("1,200")
    form.query_rows.textEdited.emit("1,200")
    q = form.state.plan_data["queries"][0]
    assert q["expected_rows"] == 1200
    assert form.state.valid_plan is not None and form.state.valid_plan.queries[0].where[0].categories == (
        "b",
    )
    form.where_column.setCurrentIndex(form.where_column.findData("x"))
    form.where_column.activated.emit(form.where_column.currentIndex())
    assert form.where_values.text() == "" and "0, 10" in form.where_values.placeholderText()
    form.where_values.setText("2, 8")
    form.where_values.textEdited.emit("2, 8")
    q = form.state.plan_data["queries"][0]
    assert q["where"] == {"column": "x", "between": [2, 8]}
    form.where_column.setCurrentIndex(0)
    form.where_column.activated.emit(0)
    q = form.state.plan_data["queries"][0]
    assert "where" not in q and "expected_rows" not in q
