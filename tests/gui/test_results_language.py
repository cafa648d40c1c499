"""Issue 28 item 4, first step: the Results table names each value's mechanism in the user's language (it showed
the plan file's word, "laplace", in the Chinese window); release.csv keeps the word itself."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


def test_the_results_name_the_mechanism_in_chinese(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.errors = []
    win.show_error = lambda message, details="": win.errors.append(message)
    win.ask_confirm = lambda *_a: True
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.show()
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    assert win.release() is not None
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    QThreadPool.globalInstance().waitForDone(30_000)
    assert win.state.results and not win.errors, win.errors
    model = win.results_view.table.model()
    shown = {model.data(model.index(r, 5)) for r in range(model.rowCount())}
    words = {row[5] for row in win.state.results}
    assert words >= {"laplace"}, words  # the release's own words (as in release.csv)
    assert not shown & {"laplace", "gaussian"}, shown
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in s) for s in shown), shown
    win.ask_folder = lambda *_a: str(tmp_path / "out")
    assert win.export_release() is not None
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    with (tmp_path / "out" / "release.csv").open(encoding="utf-8") as f:
        assert "laplace" in {row["mechanism"] for row in csv.DictReader(f)}
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
