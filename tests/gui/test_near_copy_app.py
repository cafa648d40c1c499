"""The app and a table that is a re-saved copy or a near-copy of a known dataset (pytest-qt, offscreen).

Opening a table resolves its dataset in the worker (by bytes, then by content): a re-saved copy shows its dataset's
ledger and budget; a near-copy (one row added) is named on the ledger tab with its estimated shares, Release is
refused, and the tab offers "Use that dataset's ledger" (link) and "Declare it a new dataset…" (reason, approval file
when governed). Deterministic: one row added to 2,000 leaves both estimated shares near 100%.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.core.governance import officer as of
from dpdesk.core.ledger.book import Ledger
from dpdesk.gui.app import build
from dpdesk.services.common import Dataset
from dpdesk.services.ledger import GovernRequest, HeadRequest, govern_dataset, ledger_head
from dpdesk.services.officer import ApproveRequest, approve, declare_new_approval
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
PASS, RPASS = "officer passphrase", "recovery passphrase"


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.show_info = lambda title, text: None
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


@pytest.fixture
def known(dpdesk_home: Path, tmp_path: Path) -> str:
    from dpdesk.core.plan.reader import load_plan

    data = tmp_path / "census.csv"
    shutil.copy(DATA, data)
    done = release_plan(ReleaseRequest(load_plan(PLAN), data, dpdesk_home, tmp_path / "first"))
    return str(done.entry.dataset)


def _near(tmp_path: Path) -> Path:
    near = tmp_path / "near.csv"
    near.write_text(
        DATA.read_text(encoding="utf-8") + "33,female,12,arts,40,2000.5,west,state_01,1.2345\n",
        encoding="utf-8",
    )
    return near


def open_table(qtbot: Any, win: Any, path: Path) -> None:
    win.open_data(str(path))
    qtbot.waitUntil(lambda: win.state.data_path == path and win.job is None, timeout=60_000)


def test_a_resaved_copy_shows_its_datasets_ledger_and_budget(
    qtbot: Any, win: Any, known: str, tmp_path: Path
) -> None:
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(DATA.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    open_table(qtbot, win, crlf)
    assert win.state.dataset_id == known and win.state.ledger_entries
    assert not win.ledger_view.link_button.isVisible()


@pytest.mark.slow
def test_a_near_copy_is_named_and_refused_until_linked(
    qtbot: Any, win: Any, known: str, tmp_path: Path, dpdesk_home: Path
) -> None:
    near = _near(tmp_path)
    open_table(qtbot, win, near)
    text = win.ledger_view.status.text()
    assert f"resembles dataset {known}" in text and "%" in text, text
    # how much of that dataset was spent (the issue: "say ... how much of it was spent"), from the curator's ledger
    assert "That dataset has spent ε 0.9 of its budget of 1 in 1 release(s)." in text, text
    win.tabs.setCurrentWidget(win.ledger_view)
    assert win.ledger_view.link_button.isVisible() and win.ledger_view.declare_button.isVisible()
    assert win.open_plan(str(PLAN))
    ok, why = win.state.can_release()
    assert not ok and "resembles a known dataset" in why
    assert win.release() is None and win.errors
    win.ledger_view.link_button.click()
    qtbot.waitUntil(lambda: win.job is None and win.state.dataset_id == known, timeout=60_000)
    assert not win.ledger_view.link_button.isVisible()
    entries = Ledger.for_dataset(dpdesk_home, win.state.sha256).verify()
    assert entries[-1].type == "link" and entries[-1].dataset == known
    # the meter: that dataset's budget (one release already spent)
    assert win.state.report is not None and win.state.report.releases_so_far == 1


@pytest.mark.slow
def test_declare_new_on_a_governed_dataset_asks_for_the_officers_approval(
    qtbot: Any, win: Any, known: str, tmp_path: Path, dpdesk_home: Path
) -> None:
    keys = of.create_officer(tmp_path / "keys", "Ann", "ann@example.org", PASS, RPASS)
    ds = Dataset(dpdesk_home, tmp_path / "census.csv")
    govern_dataset(GovernRequest(ds, keys.public))
    near = _near(tmp_path)
    open_table(qtbot, win, near)
    win.ask_text = lambda *_a: "the 2025 wave"
    win.ask_open_path = lambda *_a: ""  # no approval file
    win.ledger_view.declare_button.click()
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "approval" in win.errors[-1] and win.state.dataset_id is None
    new = win.errors[-1].split("naming the new dataset ")[1].split(".")[0]
    h = ledger_head(HeadRequest(ds))
    assert h.dataset == known
    approval = tmp_path / "a.json"
    approve(
        ApproveRequest(keys.private, PASS, known, h.head, "declare_new", declare_new_approval(new), approval)
    )
    win.ask_open_path = lambda *_a: str(approval)
    win.ledger_view.declare_button.click()
    qtbot.waitUntil(lambda: win.job is None and win.state.dataset_id == new, timeout=60_000)
    assert [e.type for e in win.state.ledger_entries] == ["declared_new"]
    last = (dpdesk_home / "ledgers" / f"{known}.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    entry = json.loads(last)
    assert entry["type"] == "declare_new" and entry["new_dataset"] == new
    assert json.loads(approval.read_text())["payload"]["nonce"] == entry["approval"]["payload"]["nonce"]
    assert win.open_plan(str(PLAN))
    assert win.state.report is not None and win.state.report.releases_so_far == 0  # a budget of its own
    assert win.state.can_release()[0]
