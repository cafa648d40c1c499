"""Issue 28 item 2: a release that reads like one. The confirmation's buttons are verbs ("Spend ε 0.9 and
release", "Cancel"; Return and Escape still cancel), and export, the budget statement and a saved synthetic table
say their outcome in the window, in a box that stays until closed and opens the folder, not only in the status
line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


def test_the_confirmation_says_what_yes_does_and_export_says_where_it_went(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.errors = []
    win.show_error = lambda message, details="": win.errors.append(message)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    boxes: list[QMessageBox] = []

    def confirm(title: str, text: str) -> bool:
        boxes.append(win.confirm_box(title, text))
        return True

    win.ask_confirm = confirm
    win.show()
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    assert win.release() is not None or boxes
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    (box,) = boxes
    yes, no = box.button(QMessageBox.StandardButton.Yes), box.button(QMessageBox.StandardButton.No)
    assert yes.text() == "Spend ε 0.9 and release" and no.text() == "Cancel", (yes.text(), no.text())
    assert box.defaultButton() is no and box.escapeButton() is no  # Return and Escape never spend
    assert win.state.results and not win.errors, win.errors
    # the next question (not a release) has plain Yes and No again
    assert win.confirm_box("t", "x").button(QMessageBox.StandardButton.Yes).text() != yes.text()

    for do, where in (
        (win.export_release, tmp_path / "out"),
        (lambda: win.export_statement(str(tmp_path / "statement.pdf")), tmp_path / "statement.pdf"),
    ):
        win.ask_folder = lambda *_a: str(tmp_path / "out")
        assert do() is not None
        qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
        assert not win.errors, win.errors
        outcome = win.outcome_box
        assert outcome is not None and outcome.isVisible() and not outcome.isModal()
        assert str(where) in outcome.text() and win.status_label.text() == outcome.text()
        buttons = [b.text() for b in outcome.buttons()]
        assert "Open folder" in buttons, buttons
    QThreadPool.globalInstance().waitForDone(30_000)
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
