"""The app's officer actions (pytest-qt, offscreen): Tools › Approve a plan… signs the open plan with the officer's
key; File › Import an approval… attaches it to the next release of a dataset that requires signed plans; the
ledger tab says whether the dataset is governed."""

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
from dpdesk.core.ledger.governed import parse_head
from dpdesk.gui.app import build
from dpdesk.services.common import Dataset
from dpdesk.services.ledger import (
    ChangeSettingsRequest,
    GovernRequest,
    HeadRequest,
    change_settings,
    govern_dataset,
    ledger_head,
)
from dpdesk.services.officer import ApproveRequest, approve, settings_approval
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more
PLAN = SAMPLES / "cps_wages_plan.json"
PASS, RPASS = "officer passphrase", "recovery passphrase"


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.infos = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.show_info = lambda title, text: window.infos.append(text)
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


@pytest.fixture
def keys(tmp_path: Path) -> of.OfficerKeyFiles:
    return of.create_officer(tmp_path / "keys", "Ann", "ann@example.org", PASS, RPASS)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", p)
    return p


def big_plan(tmp_path: Path) -> Path:
    d = json.loads(PLAN.read_text(encoding="utf-8"))
    d["budget"]["epsilon"] = 5.0
    p = tmp_path / "big.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


def test_approve_a_plan_signs_the_open_plan_for_the_dataset_and_head_given(
    qtbot: Any, win: Any, keys: of.OfficerKeyFiles, tmp_path: Path
) -> None:
    dataset, head = "ds-" + "3" * 32, "5:" + "ab" * 32
    out = tmp_path / "approval.json"
    assert win.open_plan(str(PLAN))
    win.ask_text = lambda *_a: f"{dataset} {head}"
    win.ask_open_path = lambda *_a: str(keys.private)
    win.ask_passphrase = lambda *_a: PASS
    win.ask_save_path = lambda *_a: str(out)
    win.approve_plan_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and out.exists() and bool(win.infos), timeout=60_000)
    assert not win.errors
    gov = of.govern(dataset, of.load_officer_public_key(keys.public), require_signed_plans=True)
    plan = of.plan_params(win.state.plan)
    verified = of.verify_approval(out.read_bytes(), gov, parse_head(head), set(), "approve_plan", plan)
    assert verified.fingerprint == gov.officer.fingerprint
    # a wrong passphrase is named, and nothing is written
    other = tmp_path / "other.json"
    win.ask_passphrase = lambda *_a: "wrong passphrase"
    win.ask_save_path = lambda *_a: str(other)
    win.approve_plan_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "wrong passphrase" in win.errors[0] and not other.exists()


def test_import_an_approval_attaches_it_to_the_next_release_of_a_signed_plans_dataset(
    qtbot: Any, win: Any, keys: of.OfficerKeyFiles, data: Path, dpdesk_home: Path, tmp_path: Path
) -> None:
    ds = Dataset(dpdesk_home, data)
    big = big_plan(tmp_path)
    govern_dataset(GovernRequest(ds, keys.public, require_signed_plans=True))

    def sign(action: str, params: dict[str, Any], out: Path) -> Path:
        h = ledger_head(HeadRequest(ds))
        assert h.dataset is not None
        approve(ApproveRequest(keys.private, PASS, h.dataset, h.head, action, params, out))
        return out

    change_settings(
        ChangeSettingsRequest(
            ds,
            big,
            "set by the officer",
            sign("change_settings", settings_approval(big), tmp_path / "s.json"),
        )
    )
    open_table(qtbot, win, data)
    assert "Governed by Ann" in win.ledger_view.status.text()
    assert win.open_plan(str(big))
    win.release()  # unsigned: refused, nothing charged
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "only plans they signed" in win.errors[-1]

    def spends() -> list[dict[str, Any]]:
        return [e for e in Ledger.for_dataset(dpdesk_home, win.state.sha256).verify() if e.type == "spend"]

    assert spends() == []
    approval = sign("approve_plan", of.plan_params(win.state.plan), tmp_path / "p.json")
    win.ask_open_path = lambda *_a: str(approval)
    win.import_approval_action.trigger()
    assert win.pending_approval == approval
    win.release()
    qtbot.waitUntil(lambda: bool(win.state.results) and win.job is None, timeout=60_000)
    assert [s.fields["approval"]["payload"] for s in spends()] == [
        json.loads(approval.read_text())["payload"]
    ]
    assert win.pending_approval is None  # good for one release


def open_table(qtbot: Any, win: Any, path: Path) -> None:
    win.open_data(str(path))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
