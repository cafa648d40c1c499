"""Issue 28 item 4, first step: the Results table names each value's mechanism in the user's language (it showed
the plan file's word, "laplace", in the Chinese window); release.csv keeps the word itself."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(300)


def test_the_results_name_the_mechanism_in_chinese(
    desk: Callable[[], Any], qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    d = desk()
    win = d.win
    d.release()
    model = win.results_view.table.model()
    shown = {model.data(model.index(r, 5)) for r in range(model.rowCount())}
    words = {row[5] for row in win.state.results}
    assert words >= {"laplace"}, words  # the release's own words (as in release.csv)
    assert not shown & {"laplace", "gaussian"}, shown
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in s) for s in shown), shown
    win.ask_folder = lambda *_a: str(tmp_path / "out")
    assert win.export_release() is not None
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    with (tmp_path / "out" / "release.csv").open(encoding="utf-8") as f:
        assert "laplace" in {row["mechanism"] for row in csv.DictReader(f)}
