"""The app on a ledger behind the head dpdesk recorded for it: the error is shown and Release is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger.book import Ledger
from dpdesk.core.loading import file_sha256
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.release.steps import release
from tests.gui.test_app import PLAN, data, open_table, win

__all__ = ["data", "win"]  # the fixtures, shared with the app's tests

pytestmark = pytest.mark.timeout(300)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["cut", "deleted"])
def test_the_app_shows_a_ledger_cut_or_deleted_and_refuses_to_release(
    qtbot: Any, win: Any, data: Path, dpdesk_home: Path, tmp_path: Path, damage: str
) -> None:
    release(load_plan(PLAN), data, dpdesk_home, tmp_path / "r1")
    lg = Ledger.for_dataset(dpdesk_home, file_sha256(data))
    assert lg.path is not None
    if damage == "cut":
        lg.path.write_bytes(lg.path.read_bytes().split(b"\n")[0] + b"\n")
        found = "ends at entry 1 but entry 3"
    else:
        lg.path.unlink()
        lg.path.with_suffix(".key").unlink()
        found = "missing or empty, but dpdesk recorded 3 entries"
    open_table(qtbot, win, data)
    assert win.state.ledger_error is not None and found in win.state.ledger_error
    assert found in win.ledger_view.status.text()
    ok, why = win.state.can_release()
    assert not ok and "broken" in why
