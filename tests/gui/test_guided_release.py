"""The guided release, driven only through what a user sees (issue 15, Done when): from the first start,
the sample in one click, an accuracy-first query, "Fit to the budget…" and a release, at 1024x700.

Widgets are found by their visible text (buttons, tabs, form labels, table cells), never by attribute names;
modal dialogs are answered by clicking their visible buttons.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QThreadPool, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QTableView,
    QWidget,
)

from dpdesk.core.ledger.book import Ledger
from dpdesk.gui.app import build

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more


def plain(text: str) -> str:
    return text.replace("&", "").strip()


def button(root: QWidget, text: str) -> QAbstractButton:
    """The visible button whose text starts with ``text``."""
    found = [
        b for b in root.findChildren(QAbstractButton) if b.isVisible() and plain(b.text()).startswith(text)
    ]
    assert found, f"no visible button {text!r}: " + ", ".join(
        plain(b.text()) for b in root.findChildren(QAbstractButton) if b.isVisible()
    )
    return found[0]


def field(root: QWidget, label: str) -> QWidget:
    """The form field next to the visible label that starts with ``label``."""
    for lab in root.findChildren(QLabel):
        if lab.isVisible() and plain(lab.text()).startswith(label):
            layout = lab.parentWidget().layout()
            if isinstance(layout, QFormLayout):
                row, _role = layout.getWidgetPosition(lab)
                item = layout.itemAt(row, QFormLayout.ItemRole.FieldRole)
                if item is not None and item.widget() is not None:
                    return item.widget()
    raise AssertionError(f"no visible form label {label!r}")


def click(qtbot: Any, w: QWidget) -> None:
    qtbot.mouseClick(w, Qt.MouseButton.LeftButton)


def open_tab(qtbot: Any, win: QWidget, name: str) -> None:
    bar = win.tabs.tabBar()  # the steps' tabs (the Results tab has sub-tabs of its own)
    i = next(i for i in range(bar.count()) if name in bar.tabText(i))
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())


def click_row(qtbot: Any, win: QWidget, text: str) -> None:
    for view in win.findChildren(QTableView):
        if not view.isVisible():
            continue
        model = view.model()
        for r in range(model.rowCount()):
            for c in range(model.columnCount()):
                idx = model.index(r, c)
                if model.data(idx) == text:
                    qtbot.mouseClick(
                        view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(idx).center()
                    )
                    return
    raise AssertionError(f"no visible table cell {text!r}")


def type_text(qtbot: Any, edit: QWidget, text: str) -> None:
    assert isinstance(edit, QLineEdit) and edit.isEnabled() and not edit.isReadOnly()
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Tab)


def answer_next_dialog(qtbot: Any, press: str, seen: list[str], before: Any = None) -> None:
    """When the next modal dialog opens: note its text, optionally act on it, then press its button ``press``."""

    def act() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(50, act)
            return
        seen.append(" ".join(plain(lab.text()) for lab in dialog.findChildren(QLabel) if lab.isVisible()))
        if before is not None:
            before(dialog)
        click(qtbot, button(dialog, press))

    QTimer.singleShot(50, act)


def settle(qtbot: Any, win: Any) -> None:
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    QThreadPool.globalInstance().waitForDone(60_000)
    qtbot.wait(200)


def test_first_start_to_a_release_through_what_is_visible(qtbot: Any, dpdesk_home: Path) -> None:
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard  # closing never asks (no one answers)
    win.resize(1024, 700)
    win.show()
    qtbot.waitExposed(win)
    # 1. the first start is a welcome page; the sample opens in one click (its table and its plan)
    click(qtbot, button(win, "Try the sample"))
    settle(qtbot, win)
    assert win.state.plan is not None and len(win.state.plan.queries) == 6
    # 2. the first query, "people", states the accuracy it needs instead of an epsilon
    open_tab(qtbot, win, "Queries")
    click_row(qtbot, win, "people")
    click(qtbot, button(win, "I know the accuracy I need"))
    type_text(qtbot, field(win, "Error"), "40")
    type_text(qtbot, field(win, "Confidence"), "0.95")
    solved = field(win, "ε")
    assert isinstance(solved, QLineEdit) and "(solved)" in solved.text(), solved.text()
    eps_solved = float(solved.text().split()[0])
    accuracy = field(win, "Accuracy")
    assert isinstance(accuracy, QLabel) and "±40" in accuracy.text(), accuracy.text()
    # 3. "Fit to the budget…" shares what is left across the others; the accuracy-first query keeps its target
    seen: list[str] = []
    answer_next_dialog(qtbot, "Apply", seen)
    click(qtbot, button(win, "Fit to the budget"))
    qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
    assert "left" in seen[0], seen
    queries = win.state.plan_data["queries"]
    assert queries[0].get("accuracy", {}).get("error") == 40 and "epsilon" not in queries[0]
    others = [q["epsilon"] for q in queries[1:]]
    assert len(set(others)) == 1 and 1.0 - eps_solved - 1e-9 <= sum(others) + eps_solved <= 1.0 + 1e-12
    # the plan fits what is left, and the step banner says the next step is the release
    assert win.state.report is not None and win.state.report.fits
    banner = [
        plain(lab.text()) for lab in win.findChildren(QLabel) if lab.isVisible() and "Step" in lab.text()
    ]
    assert any("Release" in t for t in banner), banner
    # 4. Release: the confirmation's default is Cancel; the user clicks "Spend ε … and release"
    confirm: list[str] = []
    answer_next_dialog(qtbot, "Spend ε", confirm)
    click(qtbot, button(win, "Release"))
    qtbot.waitUntil(lambda: bool(confirm), timeout=30_000)
    settle(qtbot, win)
    assert any("epsilon" in c.lower() or "ε" in c for c in confirm), confirm
    # 5. the results: "Release #1", charged in the ledger
    open_tab(qtbot, win, "Results")
    texts = [plain(lab.text()) for lab in win.findChildren(QLabel) if lab.isVisible()]
    assert any(re.search(r"Release #1\b", t) for t in texts), texts
    entries = Ledger.for_dataset(dpdesk_home, win.state.sha256).verify()
    spend = [e for e in entries if e.type == "spend"]
    assert len(spend) == 1 and spend[0].charged.epsilon == pytest.approx(eps_solved + sum(others))
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
