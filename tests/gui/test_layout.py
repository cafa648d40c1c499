"""Issue 15 items 1 and 7: the empty window is a welcome page that leads (the sample in one click), the numbered
tabs say what each step still needs in neutral words, and every tab fits 1024×700 in English and Chinese."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QMessageBox, QWidget

from dpdesk.gui.app import build
from dpdesk.gui.models import QUERY_COLUMNS

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more
SIZE = (1024, 700)


@pytest.fixture(params=["en", "zh_CN"])
def win(request: Any, qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("DPDESK_LANG", request.param)
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.resize(*SIZE)
    window.show()
    window.lang = request.param
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


def settle(qtbot: Any, win: Any) -> None:
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    for _ in range(5):
        QApplication.processEvents()


def in_scrolled_content(w: QWidget) -> bool:
    """Inside a scroll area's viewport: such a widget may extend past its parent (it scrolls)."""
    p = w.parentWidget()
    while p is not None:
        area = p.parentWidget()
        if isinstance(area, QAbstractScrollArea) and p is area.viewport():
            return True
        p = area
    return False


def clipped(win: Any) -> list[str]:
    """Visible widgets that lie outside their visible parent, or are smaller than their minimum size hint."""
    bad = []
    for w in win.findChildren(QWidget):
        if not w.isVisible() or w.isWindow() or w.objectName().startswith("qt_") or in_scrolled_content(w):
            continue  # Qt's own parts of a composite widget (a spin box's line edit) are placed by it
        parent = w.parentWidget()
        if parent is None or isinstance(parent, QAbstractScrollArea):
            continue  # a scroll area's own parts (viewport, scroll bars) are placed by it
        name = f"{type(w).__name__} {w.objectName()!r} {getattr(w, 'text', lambda: '')()!r:.40}"
        if not parent.rect().contains(w.geometry()):
            bad.append(f"{name}: {w.geometry()} outside {parent.rect()}")
        hint = w.minimumSizeHint()
        if hint.isValid() and (w.width() < hint.width() or w.height() < hint.height()):
            bad.append(f"{name}: {w.size()} smaller than its minimum {hint}")
    return bad


def fits(win: Any) -> None:
    hint = win.minimumSizeHint()
    assert hint.width() <= SIZE[0] and hint.height() <= SIZE[1], hint
    assert (win.width(), win.height()) == SIZE  # nothing made the window grow
    problems = clipped(win)
    assert not problems, "\n".join(problems)


def test_welcome_page_sample_in_one_click_and_every_tab_fits_1024_by_700(qtbot: Any, win: Any) -> None:
    # the empty window: a welcome page, not an error in red
    assert win.pages.currentWidget() is win.welcome
    fits(win)
    about = win.welcome.findChild(QWidget, "welcome_about")
    assert (about is not None and "differential" in about.text()) or win.lang == "zh_CN"
    # a step that needs an earlier one says so in words, in neutral colours
    win.show_main()
    win.tabs.setCurrentWidget(win.query_form)
    assert win.step_label.text() == win.step_label.text().strip() != ""
    if win.lang == "en":
        assert win.step_label.text() == "Step 2 needs a table: open one in step 1."
    assert "#c0392b" not in win.step_label.styleSheet() and "#c0392b" not in win.meter.headline.styleSheet()

    win.pages.setCurrentWidget(win.welcome)
    qtbot.mouseClick(win.welcome.sample_button, Qt.MouseButton.LeftButton)
    settle(qtbot, win)
    assert not win.errors, win.errors
    s = win.state
    assert s.data_path is not None and s.data_path.name == "census_sample.csv"
    assert s.plan is not None and len(s.plan.queries) == 6, s.plan_error
    assert s.plan_path is None  # Save asks where: the bundled plan is never written over
    assert win.pages.currentWidget() is win.main_page

    draft = s.draft()  # a long name must not push the ε column out of sight
    draft["queries"][0]["name"] = "number of people in the whole table, all regions together"
    s.edit(draft, "rename")
    table = win.query_form.table
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        if win.tabs.currentWidget() is win.query_form:
            win.query_form.select_row(3)
            win.preview.refresh()
        settle(qtbot, win)
        fits(win)
        assert win.step_label.text()
        if win.tabs.currentWidget() is win.query_form:  # ε and δ are never scrolled out of sight
            for col in (QUERY_COLUMNS.index("epsilon"), QUERY_COLUMNS.index("delta")):
                x = table.columnViewportPosition(col)
                assert x >= 0 and x + table.columnWidth(col) <= table.viewport().width(), col
    assert win.release() is not None
    settle(qtbot, win)
    assert s.results, win.errors
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        settle(qtbot, win)
        fits(win)
    # the recent files are listed on the welcome page
    win.pages.setCurrentWidget(win.welcome)
    assert win.welcome.recent.count() >= 1
    assert win.welcome.recent.item(0).data(Qt.ItemDataRole.UserRole).endswith("census_sample.csv")
    fits(win)


def test_the_welcome_page_opens_the_guide(qtbot: Any, win: Any) -> None:
    from dpdesk.gui.views import guide

    opened: list[Any] = []
    original = guide.open_guide
    guide.open_guide = lambda parent, page=None: opened.append((parent, page))  # type: ignore[assignment]
    try:
        qtbot.mouseClick(win.welcome.guide_button, Qt.MouseButton.LeftButton)
    finally:
        guide.open_guide = original
    assert opened == [(win, None)]


def test_the_data_tab_gives_its_height_to_the_column_declarations_not_the_unit_box(
    qtbot: Any, win: Any
) -> None:
    """At 1024×700 the column declarations show at least three rows, and the unit-of-privacy box is no taller
    than its rows need (it used to take a third of the tab, mostly empty, and the declarations showed two rows)."""
    qtbot.mouseClick(win.welcome.sample_button, Qt.MouseButton.LeftButton)
    settle(qtbot, win)
    win.tabs.setCurrentWidget(win.schema_view)
    settle(qtbot, win)
    view = win.schema_view
    rows_shown = view.schema.viewport().height() / max(1, view.schema.rowHeight(0))
    assert rows_shown >= 3, rows_shown
    unit = view._unit_box
    assert unit.height() <= unit.sizeHint().height() + 4, (unit.height(), unit.sizeHint().height())


def test_the_categories_column_keeps_a_readable_width(qtbot: Any, win: Any) -> None:
    """Issue 28 item 4: at zh 1024×700 the Categories column of the declarations collapsed to 15 px (it stretched
    into what the fixed columns left); it keeps at least 160 px, the table scrolling sideways if it must."""
    qtbot.mouseClick(win.welcome.sample_button, Qt.MouseButton.LeftButton)
    settle(qtbot, win)
    win.tabs.setCurrentWidget(win.schema_view)
    settle(qtbot, win)
    width = win.schema_view.schema.columnWidth(5)
    assert width >= 160, width
