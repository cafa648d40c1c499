"""Issue 15 items 5 and 7 in the app: the status line during jobs, release numbers, a used-up budget, a safe
confirmation, recent files, "Show this release", export folders and the report's title, spending warnings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", p)
    return p


def write_plan(tmp_path: Path, first_epsilon: float = 0.1) -> Path:
    """The sample plan (ε 0.9 of 1), its first query's epsilon changed (0.2: the plan spends the whole budget)."""
    plan = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    plan["queries"][0]["epsilon"] = first_epsilon
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    return p


def wait_idle(qtbot: Any, win: Any) -> None:
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)


def open_both(qtbot: Any, win: Any, data: Path, plan: Path) -> None:
    assert win.open_plan(str(plan))
    win.open_data(str(data))
    wait_idle(qtbot, win)
    assert win.state.plan is not None, win.state.plan_error


def release(qtbot: Any, win: Any) -> list[str]:
    """Release; returns the status line as it read right after each of the two jobs started."""
    seen: list[str] = []
    charge = win._charge_and_release

    def charging(*args: Any) -> Any:
        worker = charge(*args)
        seen.append(win.status_label.text())
        return worker

    win._charge_and_release = charging
    assert win.release() is not None
    seen.insert(0, win.status_label.text())
    qtbot.waitUntil(lambda: len(seen) == 2 and win.job is None, timeout=120_000)
    assert not win.errors, win.errors
    return seen


@pytest.mark.slow
def test_status_line_release_numbers_and_show_this_release(
    qtbot: Any, win: Any, data: Path, tmp_path: Path
) -> None:
    open_both(qtbot, win, data, write_plan(tmp_path))
    checking, releasing = release(qtbot, win)
    assert checking == "Checking census.csv…"  # not overwritten by "Ready to release." while the job runs
    assert releasing == "Releasing…"
    # the ledger's entry numbers count the settings entry too: the first release is still release #1
    assert win.state.results_title.startswith("Release #1:"), win.state.results_title
    assert win.status_label.text().startswith("Release #1:")
    assert win.tabs.currentWidget() is win.results_view

    win.tabs.setCurrentWidget(win.ledger_view)
    view = win.ledger_view
    row = next(i for i, e in enumerate(win.state.ledger_entries) if e.type == "spend")
    view.table.selectRow(row)
    qtbot.mouseClick(view.show_button, Qt.MouseButton.LeftButton)
    assert win.state.results_title.startswith("Release #1 of"), win.state.results_title
    assert win.tabs.currentWidget() is win.results_view  # "Show this release" goes to the results

    # export: the status line says so while it runs; a folder that is not empty gets a new folder in it
    busy = tmp_path / "documents"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    win.ask_folder = lambda *_a: str(busy)
    assert win.results_view.report_title.text() == "CPS wages"  # the plan's title by default
    win.results_view.report_title.setText("Wages 2024, published")
    assert win.export_release() is not None
    assert win.status_label.text() == "Writing the release package…"
    wait_idle(qtbot, win)
    assert not win.errors, win.errors
    out = busy / "census_release_1"  # named after the table and the release
    assert (out / "report.pdf").is_file() and (busy / "notes.txt").read_text(encoding="utf-8") == "mine"
    from pypdf import PdfReader

    first = PdfReader(str(out / "report.pdf")).pages[0].extract_text() or ""
    assert "Wages 2024, published" in first
    assert json.loads((out / "plan.json").read_text(encoding="utf-8"))["title"] == "CPS wages"
    # a folder that does not exist yet is made
    new = tmp_path / "a" / "new" / "folder"
    win.ask_folder = lambda *_a: str(new)
    win.export_release()
    wait_idle(qtbot, win)
    assert not win.errors, win.errors
    assert (new / "release.csv").is_file()


@pytest.mark.slow
def test_a_plan_that_spends_everything_left_is_warned_about_and_the_meter_says_it_is_used_up(
    qtbot: Any, win: Any, data: Path, tmp_path: Path
) -> None:
    open_both(qtbot, win, data, write_plan(tmp_path, first_epsilon=0.2))
    assert win.meter.warning.isVisibleTo(win.meter)
    assert "everything that is left" in win.meter.warning.text()
    asked: list[str] = []
    win.ask_confirm = lambda title, text: asked.append(text) or True
    release(qtbot, win)
    assert "everything that is left" in asked[0]  # in the confirmation, before anything is charged
    headline = win.meter.headline.text()
    assert "used up" in headline and "lower some epsilons" not in headline, headline


@pytest.mark.slow
def test_a_plan_of_epsilon_five_or_more_is_warned_about(
    qtbot: Any, win: Any, data: Path, tmp_path: Path
) -> None:
    plan = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 20.0
    plan["queries"][0]["epsilon"] = 5.0
    p = tmp_path / "high.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    open_both(qtbot, win, data, p)
    assert "ε 5.8" in win.meter.warning.text() and win.meter.warning.isVisibleTo(win.meter)
    asked: list[str] = []
    win.ask_confirm = lambda title, text: asked.append(text) and False
    assert win.release() is not None
    qtbot.waitUntil(lambda: bool(asked) and win.job is None, timeout=120_000)
    assert "ε 5.8" in asked[0]


def test_return_in_the_confirmation_does_not_spend(qtbot: Any, dpdesk_home: Path) -> None:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    pressed: list[bool] = []

    def press_return() -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, press_return)
            return
        pressed.append(True)
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(20, press_return)
    assert window.ask_confirm("Release", "Release now?") is False
    assert pressed


@pytest.mark.slow
def test_recent_files_are_stored_with_absolute_paths(
    qtbot: Any, win: Any, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(data.parent)
    win.open_data(data.name)
    wait_idle(qtbot, win)
    assert win.recent_files()[0] == str(data.resolve())
    plan = write_plan(tmp_path)
    assert win.open_plan(plan.name)
    assert win.recent_files()[:2] == [str(plan.resolve()), str(data.resolve())]


@pytest.mark.slow
def test_after_a_release_the_meter_says_what_was_spent_and_what_is_left_calmly(
    qtbot: Any, win: Any, data: Path, tmp_path: Path
) -> None:
    """Issue 28, item 2: right after a release the meter read "Over budget ... Release is disabled" in red (the
    released plan would not fit again). It says what was spent and what is left, without red; an edit to the plan
    brings the over-budget words back, since the edited plan is a new release."""
    open_both(qtbot, win, data, write_plan(tmp_path))  # ε 0.9 of 1
    win.ask_confirm = lambda title, text: True
    release(qtbot, win)
    headline, style = win.meter.headline.text(), win.meter.headline.styleSheet()
    assert "Released — ε 0.9 spent of 1, 0.1 left." in headline, headline
    assert "Over budget" not in headline and "#c0392b" not in style
    assert not win.release_action.isEnabled()  # running it again would cost again: still not offered
    labels = win.meter.method_labels  # the ledger's totals, this release counted once, none "over"
    assert labels[(1, 2)].text().startswith("ε 0.9,") and labels[(1, 3)].text() == "✓", labels[(1, 2)].text()
    edited = win.state.draft()
    edited["queries"][0]["epsilon"] = 0.05
    win.state.edit(edited, "epsilon")
    assert "Over budget" in win.meter.headline.text() and "#c0392b" in win.meter.headline.styleSheet()
