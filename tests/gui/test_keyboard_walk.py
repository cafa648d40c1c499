"""Issue 28 item 3: the whole flow by keyboard only, at 1008x660 (1024x700 less a window manager's decorations), in
English and Chinese. From the welcome page Tab reaches "Try the sample" and Space presses it; Ctrl+2 shows the
queries; Ctrl+N adds a query with its name ready to type, Ctrl+Z takes it back; Ctrl+R asks to release, and in the
question Tab reaches the spending button and Space presses it (Return alone cancels); Ctrl+3 shows the results;
Ctrl+E exports; Ctrl+/ lists the shortcuts, which name every key used here; Esc closes it. Every input the walk
passes has an accessible name, and the focused control wears a visible ring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from dpdesk.gui import access, focus
from dpdesk.gui.app import build

pytestmark = pytest.mark.timeout(400)


def key(key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """One key press, sent where the keyboard's focus is (as the window system does)."""
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    QTest.keyClick(target, key, modifier)
    QApplication.processEvents()


def tab_to(widget: Any, limit: int = 60) -> None:
    """Press Tab until ``widget`` has the focus (as a person does, looking at the ring)."""
    for _ in range(limit):
        if QApplication.focusWidget() is widget:
            return
        key(Qt.Key.Key_Tab)
    raise AssertionError(f"Tab never reached {widget!r}; it stopped at {QApplication.focusWidget()!r}")


def ringed(widget: Any) -> bool:
    """Whether a ring of the focus colour, two pixels thick, goes round ``widget`` (the platform's own mark, a
    one-pixel tint of a field's frame or nothing on a button, is not enough)."""
    return ring_pixels(widget) > 1.5 * 2 * (widget.width() + widget.height())


def ring_pixels(widget: Any) -> int:
    """How many pixels of ``widget`` are drawn in the focus ring's colour."""
    img = widget.grab().toImage()
    c = QColor(focus.FOCUS_COLOUR)
    n = 0
    for y in range(img.height()):
        for x in range(img.width()):
            p = img.pixelColor(x, y)
            n += (
                abs(p.red() - c.red()) < 30
                and abs(p.green() - c.green()) < 30
                and abs(p.blue() - c.blue()) < 30
            )
    return n


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_whole_flow_by_keyboard_only(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str
) -> None:
    monkeypatch.setenv("DPDESK_LANG", language)
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.errors = []
    win.show_error = lambda message, details="": win.errors.append(message)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard  # closing after a failed step
    win.ask_folder = lambda *_a: str(tmp_path / "package")  # the folder dialog is the system's, typed into
    win.resize(1008, 660)
    win.show()
    win.activateWindow()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)

    # the welcome page: Tab to the sample, Space presses it
    sample = win.welcome.sample_button
    tab_to(sample)
    key(Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.job is None and win.state.plan is not None, timeout=120_000)
    assert win.pages.currentWidget() is win.main_page

    # the queries: Ctrl+2, Ctrl+N adds one with its name ready to type, Ctrl+Z takes it back
    key(Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.currentWidget() is win.query_form
    n = len(win.state.plan_data["queries"])
    key(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert len(win.state.plan_data["queries"]) == n + 1
    name = win.query_form.name
    assert QApplication.focusWidget() is name
    assert ringed(name)  # the ring is drawn around the focused field
    key(Qt.Key.Key_Escape)  # leaves the name as it is
    win.query_form.table.setFocus()
    assert ring_pixels(name) < name.width() / 4  # and only around it
    add = win.query_form.add_button
    tab_to(add)
    assert ringed(add)  # and around a focused button
    key(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(win.state.plan_data["queries"]) == n
    assert not access.unnamed(win), [w.objectName() or type(w).__name__ for w in access.unnamed(win)]

    # release: Ctrl+R asks; Return alone would cancel; Tab to the spending button, Space
    pressed: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, answer)
            return
        spend = box.button(QMessageBox.StandardButton.Yes)
        assert QApplication.focusWidget() is not spend  # the focus starts on Cancel
        tab_to(spend, 10)
        pressed.append(spend.text())
        key(Qt.Key.Key_Space)

    QTimer.singleShot(0, answer)
    key(Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.job is None and bool(win.state.results), timeout=120_000)
    assert pressed and "0.9" in pressed[0], pressed
    assert not win.errors, win.errors

    # the results, then export (the window manager gives the window back its focus when the question closes;
    # the offscreen platform has none, so the test does it)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    key(Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.currentWidget() is win.results_view
    assert not access.unnamed(win), [w.objectName() or type(w).__name__ for w in access.unnamed(win)]
    key(Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.job is None and (tmp_path / "package").exists(), timeout=120_000)
    assert win.outcome_box is not None and win.outcome_box.isVisible()
    win.outcome_box.close()

    # the list of shortcuts names every key this walk used
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    key(Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    dialog = win.shortcuts_dialog
    assert dialog.isVisible()
    table = dialog.table
    listed = {table.item(r, 1).text() for r in range(table.rowCount())}
    for used in ("Ctrl+2", "Ctrl+N", "Ctrl+R", "Ctrl+3", "Ctrl+E", "Ctrl+/"):
        assert used in listed, (used, sorted(listed))
    for b in dialog.findChildren(QPushButton):
        assert b.text()
    QThreadPool.globalInstance().waitForDone(30_000)
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
