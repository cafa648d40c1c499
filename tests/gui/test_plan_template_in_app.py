"""Issue 28 item 8 in the app: a plan template (``dpdesk plan new``) opens, its "?" listed as the plan's problems
in plain words (no traceback, nothing released), and its columns shown in the Data tab with their "?" to fill."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.gui.app import build
from dpdesk.services.plans import NewPlanRequest, new_plan
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)


def test_a_template_opens_with_its_blanks_listed_as_problems(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    made = new_plan(NewPlanRequest(data=data, home=dpdesk_home, epsilon=1.0))
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    errors: list[str] = []
    win.show_error = lambda message, details="": errors.append(message)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.show()
    try:
        win.open_data(str(data))
        qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
        assert win.open_plan(str(made.path))
        state = win.state
        assert errors == [] and state.plan is None
        texts = [str(p) for p in state.plan_problems]
        assert texts[0].startswith('column "age": the type is still to fill in: write int')
        assert len(texts) == 10 and texts[-1] == "list at least one query"  # nine columns, no query
        assert win.status_label.text().startswith("The plan has 10 problems")
        assert win.status_more.isVisible()
        model = win.schema_view.schema_model
        cells = [
            [model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole) for c in range(model.columnCount())]
            for r in range(model.rowCount())
        ]
        age = next(row for row in cells if row[1] == "age")
        assert age[2] == "?" and age[3] == "?" and age[4] == "?"
        assert json.loads(made.path.read_text(encoding="utf-8"))["columns"]["age"]["type"] == "?"
    finally:
        QThreadPool.globalInstance().waitForDone(30_000)
        win.state.undo_stack.setClean()
        win.state.clean_index = win.state.undo_stack.index()
