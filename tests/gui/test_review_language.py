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


def test_the_ledger_tab_shows_dpdesks_own_reason_and_method_in_chinese(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first release records its settings' reason in English whatever the writer's language (a ledger is read
    by others); the ledger tab shows it, and the method, in the reader's language."""
    data = resource("samples", "census_sample.csv")
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home), "DPDESK_LANG": "zh_CN"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(resource("samples", "cps_wages_plan.json")),
            "--data",
            str(data),
            "--out",
            str(tmp_path / "pkg"),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-1000:]
    ledgers = list((dpdesk_home).rglob("*.jsonl"))
    text = "".join(p.read_text(encoding="utf-8") for p in ledgers)
    assert "fixed at the dataset's first release" in text  # English, though written by a Chinese session
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    from dpdesk.gui.app import build

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.show()
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None and win.ledger_view.model.rowCount() >= 3, timeout=60_000)
    model = win.ledger_view.model
    what = [str(model.data(model.index(i, model.columnCount() - 1))) for i in range(model.rowCount())]
    settings = next(w for w in what if "ε" in w and "δ" in w)
    assert "首次发布" in settings and "顺序组合" in settings, settings
    assert "fixed at" not in settings and "sequential" not in settings, settings
