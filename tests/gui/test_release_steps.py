"""The app's release in two steps (issue 26, item 3): the confirmation shows what the first step read from the
ledger then, and the second step charges nothing if the ledger moved while the curator was deciding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.gui import test_shell as shell
from tests.gui.test_shell import open_both, wait_idle, write_plan

win = shell.win  # the app as test_shell drives it (its fixtures)
data = shell.data

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def spends(home: Path) -> int:
    return sum(
        1
        for f in (home / "ledgers").glob("*.jsonl")
        for line in f.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") == "spend"
    )


def test_a_release_confirmed_after_the_ledger_moved_charges_nothing(
    qtbot: Any,
    win: Any,
    data: Path,
    tmp_path: Path,
    dpdesk_home: Path,
) -> None:
    plan = write_plan(tmp_path, first_epsilon=0.05)  # epsilon 0.85: room for nothing more after it
    open_both(qtbot, win, data, plan)
    small = json.loads(plan.read_text(encoding="utf-8"))
    small["queries"] = small["queries"][:1]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(small), encoding="utf-8")
    asked: list[str] = []

    def ask(title: str, text: str) -> bool:
        asked.append(text)
        # while the curator reads the question, another release of the same table is charged
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "dpdesk",
                "release",
                str(other),
                "--data",
                str(data),
                "--out",
                str(tmp_path / "o"),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "DPDESK_HOME": str(dpdesk_home)},
            check=False,
        )
        assert r.returncode == 0, r.stderr[-800:]
        return True

    win.ask_confirm = ask
    assert win.release() is not None
    qtbot.waitUntil(lambda: bool(asked) and win.job is None and bool(win.errors), timeout=120_000)
    wait_idle(qtbot, win)
    assert "ε 0.85" in asked[0] and "ε 0.15" in asked[0]  # what the first step read: nothing spent yet
    assert any("nothing was charged" in e for e in win.errors), win.errors
    assert spends(dpdesk_home) == 1  # only the release in between
    assert not win.state.results
