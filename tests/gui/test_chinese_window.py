"""Issue 28 item 4: everything in the user's language. In the Chinese window, after a release, an export and the
package's review, no English word is left in anything the user reads (every tab's labels, buttons, group titles,
tab names, lists, table headers and cells, the menus, the release's confirmation and the review window) but the
names the plan and the table give and a short allow-list."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QTabWidget,
    QWidget,
)

from tests.conftest import SAMPLES
from tests.services.test_report_language import ALLOWED, names_of

pytestmark = pytest.mark.timeout(300)


def visible_texts(root: QWidget) -> list[str]:
    """What a person can read in ``root``: visible labels, buttons, group titles, tabs, lists, table cells."""
    out = [w.text() for w in root.findChildren(QLabel) if w.isVisible()]
    out += [w.text() for w in root.findChildren(QAbstractButton) if w.isVisible()]
    out += [w.title() for w in root.findChildren(QGroupBox) if w.isVisible()]
    out += [w.text() for w in root.findChildren(QLineEdit) if w.isVisible()]
    for tabs in root.findChildren(QTabWidget):
        if tabs.isVisible():
            out += [tabs.tabText(i) for i in range(tabs.count())]
    for box in root.findChildren(QComboBox):
        if box.isVisible():
            out += [box.itemText(i) for i in range(box.count())]
    for view in root.findChildren(QAbstractItemView):
        model = view.model()
        if model is None or not view.isVisible():
            continue
        for c in range(model.columnCount()):
            out.append(str(model.headerData(c, Qt.Orientation.Horizontal) or ""))
        for r in range(model.rowCount()):
            for c in range(model.columnCount()):
                v = model.data(model.index(r, c))
                if isinstance(v, str):
                    out.append(v)
    return out


def english(texts: list[str], allowed: set[str]) -> set[str]:
    found: set[str] = set()
    for t in texts:
        t = re.sub(r"<[^>]+>", " ", t)  # rich text's tags and links
        t = re.sub(r"[\w.-]+\.(csv|json|pdf|jsonl)\b", " ", t)  # file names
        t = re.sub(r"(ds-)?[0-9a-f]{12,}…?", " ", t)  # ids and hashes
        t = re.sub(r"&(?=\w)", "", t)  # a menu's accelerator mark
        t = re.sub(r"dpdesk [a-z][^。<\n]*", " ", t)  # a command line to type
        found.update(w for w in re.findall(r"[A-Za-z]{2,}", t) if w not in allowed)
    return found


def test_the_chinese_window_shows_no_english_but_names(
    desk: Callable[[], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qtbot: Any
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    d = desk()
    win = d.win
    d.release()
    seen: list[str] = []
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        seen += visible_texts(win)
    for menu_action in win.menuBar().actions():
        seen.append(menu_action.text())
        menu = menu_action.menu()
        if menu is not None:
            seen += [a.text() for a in menu.actions()]
    seen += [part for asked in d.asked for part in asked]  # the release's confirmation
    assert d.asked
    win.ask_folder = lambda *_a: str(tmp_path / "package")
    assert win.export_release() is not None
    d.idle()
    win.review_window = None
    assert win.review(str(tmp_path / "package")) is not None
    qtbot.waitUntil(lambda: win.job is None and win.review_window is not None, timeout=60_000)
    review = visible_texts(win.review_window)
    assert review
    seen += review
    win.review_window.close()
    assert not win.errors, win.errors
    values = set(re.findall(r"[A-Za-z]+", d.data.read_text(encoding="utf-8")))  # the preview shows the table
    allowed = (
        ALLOWED
        | names_of(SAMPLES / "cps_wages_plan.json", d.data)
        | values
        | {"Ctrl", "Shift", "Del", "Language", "Spark"}
    )  # Language: the way back, named in English too; Spark: a product's name (File > Open Spark table)
    left = english(seen, allowed)
    assert not left, sorted(left)
