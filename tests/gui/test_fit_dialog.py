"""'Fit to the budget' in the app: weights, locks and a reserve, applied as one undoable edit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more
PLAN = SAMPLES / "cps_wages_plan.json"


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path, tmp_path: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: (
        QMessageBox.StandardButton.Discard
    )  # closing never asks (no one answers)
    data = tmp_path / "cps.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    window.open_data(str(data))
    qtbot.waitUntil(lambda: window.state.sha256 is not None and window.job is None, timeout=60_000)
    assert window.open_plan(str(PLAN))
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


def test_fit_with_weights_a_lock_and_a_reserve(qtbot: Any, win: Any) -> None:
    form = win.query_form
    seen: list[Any] = []

    def drive(dialog: Any) -> bool:
        dialog.weights[0].setValue(2.0)  # people: twice the share
        dialog.locks[4].setChecked(True)  # median education keeps 0.1
        dialog.reserve.setText("0.2")
        dialog.recompute()
        seen.append(dialog.status.text())
        assert dialog.apply_button.isEnabled(), dialog.status.text()
        return True

    form.exec_dialog = drive
    form.fit_to_budget()
    eps = [q["epsilon"] for q in win.state.plan_data["queries"]]
    assert eps[4] == 0.1
    free = [e for i, e in enumerate(eps) if i != 4]
    assert sum(free) <= 1.0 - 0.2 - 0.1 + 1e-12 and sum(free) >= 0.7 * (1 - 1e-5)
    assert eps[0] == pytest.approx(2 * eps[1], rel=1e-5)
    assert win.state.report.fits and win.state.report.remaining_after.epsilon >= 0.2
    assert "0.2" in seen[0]  # the status says what is left after
    win.undo_action.trigger()  # one undoable edit
    assert win.state.plan_data["queries"][0]["epsilon"] == 0.1


def test_a_reserve_larger_than_what_is_left_is_explained_not_applied(qtbot: Any, win: Any) -> None:
    form = win.query_form

    def drive(dialog: Any) -> bool:
        dialog.reserve.setText("5")
        dialog.recompute()
        assert not dialog.apply_button.isEnabled()
        assert "nothing is left" in dialog.status.text().lower()
        return True

    form.exec_dialog = drive
    form.fit_to_budget()
    assert [q["epsilon"] for q in win.state.plan_data["queries"]] == [0.1, 0.2, 0.2, 0.2, 0.1, 0.1]


def test_a_query_that_states_its_accuracy_keeps_it(qtbot: Any, win: Any) -> None:
    """Fit shares what the accuracy-first query leaves; that query keeps its target (never gets an epsilon too)."""
    data = dict(win.state.plan_data)
    queries = [dict(q) for q in data["queries"]]
    del queries[0]["epsilon"]
    queries[0]["accuracy"] = {"error": 50, "confidence": 0.95}  # people: a count within ±50
    data["queries"] = queries
    win.state.load_plan_data(data, None)
    assert win.state.plan is not None, win.state.plan_error
    solved = win.state.plan.queries[0].epsilon
    form = win.query_form

    def drive(dialog: Any) -> bool:
        assert dialog.locks[0].isChecked() and not dialog.locks[0].isEnabled()
        dialog.recompute()
        return bool(dialog.apply_button.isEnabled())

    form.exec_dialog = drive
    form.fit_to_budget()
    qs = win.state.plan_data["queries"]
    assert "epsilon" not in qs[0] and qs[0]["accuracy"] == {"error": 50, "confidence": 0.95}
    assert win.state.plan is not None and win.state.plan.queries[0].epsilon == solved
    rest = sum(q["epsilon"] for q in qs[1:])
    assert 1.0 - solved - 1e-12 <= rest + solved <= 1.0 and rest >= (1.0 - solved) * (1 - 1e-5)
    assert win.state.report.fits
