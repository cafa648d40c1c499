"""Issue 28 item 3: Tab leaves a table (the arrows move within it), so a person driving the window with keys only
is never trapped in the data preview, the declarations, the queries or the results."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QMessageBox, QTableView

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
GUI = Path(__file__).resolve().parents[2] / "dpdesk" / "gui"


def test_tab_moves_focus_out_of_every_table_of_the_window(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.show_error = lambda message, details="": None
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.show()
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    QThreadPool.globalInstance().waitForDone(30_000)
    win.activateWindow()
    tables = [t for t in win.findChildren(QTableView) if t.model() is not None and t.model().rowCount() > 0]
    assert len(tables) >= 3, [t.objectName() for t in tables]  # the preview, the declarations, the queries
    trapped = []
    for table in tables:
        table.setFocus(Qt.FocusReason.OtherFocusReason)
        table.setCurrentIndex(table.model().index(0, 0))
        qtbot.waitUntil(table.hasFocus, timeout=5_000)
        qtbot.keyClick(table, Qt.Key.Key_Tab)
        if table.hasFocus() or table.currentIndex().column() != 0:
            trapped.append(table.objectName())
    assert not trapped, f"Tab stayed in {trapped}"
    assert not [t.objectName() for t in tables if t.tabKeyNavigation()]
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()


def test_every_table_the_app_makes_lets_tab_leave() -> None:
    """Tables made in dialogs (review, fit) and any new one: each is created with Tab navigation off (Qt's table
    views take Tab for themselves by default)."""
    made = 0
    for path in GUI.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\s*([\w.]+) = (QTableWidget|QTableView)\(", line)
            if m:
                made += 1
                assert f"{m.group(1)}.setTabKeyNavigation(False)" in lines[i + 1], f"{path.name}:{i + 1}"
    assert made >= 10
