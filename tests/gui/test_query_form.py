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
