"""Shared set-up of the app's tests: a window of the app with the sample plan and table open, released or not."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from tests.conftest import SAMPLES


class Desk:
    """A built window (``win``) on the sample plan and a copy of the sample table (``data``); the confirmations
    it asked (title, text) in ``asked`` (each answered yes); errors it showed in ``win.errors``."""

    def __init__(self, qtbot: Any, home: Path, folder: Path) -> None:
        from dpdesk.gui.app import build

        self.qtbot = qtbot
        _app, self.win = build(home)
        qtbot.addWidget(self.win)
        self.asked: list[tuple[str, str]] = []
        win = self.win
        win.errors = []
        win.show_error = lambda message, details="": win.errors.append(message)
        win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard

        def confirm(title: str, text: str) -> bool:
            self.asked.append((title, text))
            return True

        win.ask_confirm = confirm
        win.show()
        self.data = folder / "census.csv"
        shutil.copy(SAMPLES / "census_sample.csv", self.data)
        assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
        win.open_data(str(self.data))
        self.idle()

    def idle(self) -> None:
        """Wait until the window's job (a load, a release, an export) is done."""
        self.qtbot.waitUntil(lambda: self.win.job is None, timeout=120_000)

    def release(self) -> None:
        assert self.win.release() is not None
        self.idle()
        QThreadPool.globalInstance().waitForDone(30_000)
        assert self.win.state.results and not self.win.errors, self.win.errors

    def close(self) -> None:
        QThreadPool.globalInstance().waitForDone(30_000)
        self.win.state.undo_stack.setClean()
        self.win.state.clean_index = self.win.state.undo_stack.index()


@pytest.fixture
def desk(qtbot: Any, dpdesk_home: Path, tmp_path: Path) -> Iterator[Callable[[], Desk]]:
    """A factory of :class:`Desk` (called after any language is set), closed cleanly after the test."""
    made: list[Desk] = []

    def make() -> Desk:
        made.append(Desk(qtbot, dpdesk_home, tmp_path))
        return made[-1]

    yield make
    for d in made:
        d.close()
