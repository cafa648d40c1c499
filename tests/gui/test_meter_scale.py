"""Next to the meter: the plan's total epsilon compared with real deployments (issue 15, item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


def test_the_meter_offers_the_scale_with_the_plans_total(qtbot: Any, dpdesk_home: Path) -> None:
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard  # closing never asks (no one answers)
    win.build_views()
    assert not win.meter.compare.isVisible()  # no plan: nothing to compare
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.state.undo_stack.setClean()
    meter = win.meter
    assert meter.compare.isVisibleTo(meter) and "0.9" in meter.compare.text()
    assert meter.compare.text().startswith("<a href=")  # a link
    meter.compare.linkActivated.emit("#scale")  # the link opens the dialog
    dialog = meter.scale_window
    qtbot.addWidget(dialog)
    scale = dialog.findChild(object, "epsilon_scale")
    assert scale is not None and scale.epsilon() == pytest.approx(0.9)
    text = dialog.findChild(object, "deployments_text").text()
    assert "0.9" in text and "not directly comparable" in text
    # a bigger plan moves the marker and the comparison warns
    data = dict(win.state.plan_data)
    data["budget"] = {"epsilon": 10.0, "delta": 1e-6}
    data["queries"] = [dict(q, epsilon=1.0) for q in data["queries"]]
    win.state.load_plan_data(data, None)
    assert "6" in meter.compare.text()
    dialog2 = meter.scale_dialog()
    qtbot.addWidget(dialog2)
    assert dialog2.findChild(object, "epsilon_scale").epsilon() == pytest.approx(6.0)
    assert "5 or more" in dialog2.findChild(object, "deployments_text").text()
    opened: list[Any] = []
    from dpdesk.gui.views import guide

    original = guide.open_guide
    guide.open_guide = lambda parent, page=None: opened.append(page)  # type: ignore[assignment]
    try:
        from PySide6.QtWidgets import QPushButton

        help_button = [b for b in dialog2.findChildren(QPushButton) if "guide" in b.text().lower()][0]
        qtbot.mouseClick(help_button, Qt.MouseButton.LeftButton)
    finally:
        guide.open_guide = original
    assert opened == ["choosing_epsilon"]
    win.state.undo_stack.setClean()
    QThreadPool.globalInstance().waitForDone(30_000)
