"""The review window names the accounting methods in the reader's language (it showed "sequential", "advanced"
and "zcdp", the package's own keys, to a Chinese reader)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QTableWidget

from dpdesk.resources import resource

pytestmark = pytest.mark.slow  # a release in a child process


def test_the_review_window_names_the_methods_in_chinese(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "pkg"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(resource("samples", "cps_wages_plan.json")),
            "--data",
            str(resource("samples", "census_sample.csv")),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(dpdesk_home)},
        check=False,
    )
    assert r.returncode == 0, r.stderr[-1000:]
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    from dpdesk.gui.app import build

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.review_window = None
    assert win.review(str(out)) is not None
    qtbot.waitUntil(lambda: win.job is None and win.review_window is not None, timeout=60_000)
    w = win.review_window
    table = next(
        t
        for t in w.findChildren(QTableWidget)
        if t.rowCount() == 3
        and t.columnCount() == 2
        and t.item(0, 1) is not None
        and t.item(0, 1).text().startswith("ε")
    )
    names = [table.item(i, 0).text() for i in range(3)]
    assert not any(n.split()[0] in ("sequential", "advanced", "zcdp") for n in names), names
    assert any("顺序组合" in n and "▶" in n for n in names), names  # the dataset's method, marked
