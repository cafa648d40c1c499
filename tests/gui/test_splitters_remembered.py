"""Issue 28 item 1: splitters whose positions are remembered. Where the user puts the Data tab's splitter (or the
Results tab's) is where it is the next time the app starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication, QMessageBox, QSplitter

from dpdesk.gui.app import build

pytestmark = pytest.mark.timeout(300)


def _window(qtbot: Any, home: Path) -> Any:
    _app, win = build(home)
    qtbot.addWidget(win)
    win.show_error = lambda message, details="": None
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.show()
    win.resize(1200, 800)
    win.open_sample()
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    QThreadPool.globalInstance().waitForDone(30_000)
    for _ in range(5):
        QApplication.processEvents()
    return win


def _close(win: Any) -> None:
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
    win.close()


def test_a_moved_splitter_is_where_the_user_left_it_next_time(qtbot: Any, dpdesk_home: Path) -> None:
    win = _window(qtbot, dpdesk_home)
    split = win.findChild(QSplitter, "data_split")
    assert split is not None
    first = split.sizes()
    moved = [first[0] + 60, first[1] - 60, *first[2:]]
    split.setSizes(moved)
    moved = split.sizes()
    split.splitterMoved.emit(moved[0], 1)  # as a drag of its handle says
    _close(win)

    again = _window(qtbot, dpdesk_home)
    assert again.findChild(QSplitter, "data_split").sizes() == moved, (moved, first)
    assert {s.objectName() for s in again.findChildren(QSplitter)} >= {
        "data_split",
        "results_split",
        "main_split",
    }
    _close(again)
