"""Building a window in English after one in Chinese gives Qt's own dialogs English buttons again (the Chinese Qt
translator used to stay installed, so a later English window's confirmation said 是(&Y)); and a table in a deeply
nested folder keeps the Data tab within 1024x700 (the label names the file; the whole path is its tooltip)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication, QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


def _yes_text() -> str:
    box = QMessageBox(QMessageBox.Icon.Question, "t", "t", QMessageBox.StandardButton.Yes)
    text = box.button(QMessageBox.StandardButton.Yes).text()
    box.deleteLater()
    return text


def test_an_english_window_after_a_chinese_one_has_english_qt_buttons(
    qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    _app, zh = build(dpdesk_home)
    qtbot.addWidget(zh)
    chinese = _yes_text()
    monkeypatch.setenv("DPDESK_LANG", "en")
    _app, en = build(dpdesk_home)
    qtbot.addWidget(en)
    assert "Yes" in _yes_text(), (_yes_text(), chinese)


def test_a_long_path_is_named_by_its_file_and_the_data_tab_still_fits(qtbot: Any, dpdesk_home: Path) -> None:
    folder = dpdesk_home.parent / ("a_rather_long_folder_name_" * 4) / ("and_another_one_" * 4)
    folder.mkdir(parents=True)
    data = folder / "census_sample.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    win.show_main()
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    QThreadPool.globalInstance().waitForDone(30_000)
    for _ in range(5):
        QApplication.processEvents()
    win.tabs.setCurrentWidget(win.schema_view)
    label = win.schema_view.file_label
    assert label.text().startswith("census_sample.csv"), label.text()
    assert label.toolTip() == str(data)
    assert (
        label.height() <= 2 * label.fontMetrics().height() + 8
    )  # one line, not the path wrapped over several
