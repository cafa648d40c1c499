"""At first start the window fits the screen it opens on (a 1024×700 screen showed it cut at the right edge: the
preferred 1320×820 was set whatever the screen), and a geometry saved on a larger screen is brought within a
smaller one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from dpdesk.gui.app import build

#: the least room a frame and a title bar need around the window's contents (resize() does not count them)
FRAME = (8, 30)


def room(win: Any) -> tuple[int, int]:
    r = win.screen().availableGeometry()
    return r.width() - FRAME[0], r.height() - FRAME[1]


def test_the_first_window_fits_the_screen(qtbot: Any, dpdesk_home: Path) -> None:
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    w, h = room(win)
    assert w < 1320 or h < 820  # offscreen: 800×600, smaller than the preferred size
    assert win.width() <= w and win.height() <= h, (win.size(), w, h)
    assert win.width() >= w - 40 and win.height() >= h - 40  # the room is used, not a small window


def test_a_geometry_saved_on_a_larger_screen_is_brought_within_this_one(
    qtbot: Any, dpdesk_home: Path
) -> None:
    _app, first = build(dpdesk_home)
    qtbot.addWidget(first)
    first.resize(2400, 1500)
    settings = QSettings(str(dpdesk_home / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue("window/geometry", first.saveGeometry())
    settings.sync()
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    w, h = room(win)
    assert win.width() <= w and win.height() <= h, (win.size(), w, h)


def test_the_status_line_stays_one_line(qtbot: Any, dpdesk_home: Path) -> None:
    """A table opened without a plan listed the plan's problems on three lines in the status bar, which took the
    room of the column declarations at 1024×700; the line is one line, the list in a popup behind "show"."""
    from PySide6.QtCore import QThreadPool

    from dpdesk.resources import resource

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.show()
    win.open_data(str(resource("samples", "census_sample.csv")))
    qtbot.waitUntil(lambda: win.job is None, timeout=60_000)
    QThreadPool.globalInstance().waitForDone(30_000)
    text = win.status_label.text()
    assert text == "The plan has 2 problems", text  # the count; the list one click away (issue 28)
    assert win.status_more.isVisible()
    popup = win.show_status_details()
    assert popup.informativeText().splitlines() == [
        "• declare at least one column",
        "• list at least one query",
    ], popup.informativeText()
    popup.close()
    assert win.statusBar().height() < 2.2 * win.status_label.fontMetrics().height() + 12


def test_why_bounds_must_be_public_links_to_its_guide_page(qtbot: Any, dpdesk_home: Path) -> None:
    """The Data tab's one-line reason (the whole of it in its tooltip) opens the guide at its page."""
    from PySide6.QtWidgets import QLabel

    from dpdesk.gui.views.guide import GuideWindow

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.build_views()
    why = win.findChild(QLabel, "why_public")
    assert why is not None and "href=" in why.text() and "clamped" in why.toolTip()
    link = why.text().split('href="', 1)[1].split('"', 1)[0]
    why.linkActivated.emit(link)
    guides = win.findChildren(GuideWindow)
    assert guides, "no guide window opened"
    page = guides[0].pages[guides[0].page_list.currentRow()]
    assert page.stem == "03_public_bounds_and_categories"
