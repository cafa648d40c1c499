"""The app's Team dashboard (Tools > Team dashboard…) on real widgets and a real PostgreSQL: two curators release from
their own homes, the officer sees both releases with the ledger's numbers and changes the dataset's budget through
its button; a curator and the auditor see the same with the officer's buttons disabled; a server that cannot be
reached is said in words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.core.common import shown as numfmt
from dpdesk.gui.app import build
from dpdesk.gui.views.team_dashboard import COLUMNS, TeamDashboard, TeamDatasetsModel, health, short_id
from tests.pgserver import free_port
from tests.team.conftest import Team
from tests.team.test_team_release import DATA, dpdesk, plan_with_budget

pytestmark = pytest.mark.timeout(400)


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)


@pytest.fixture
def released(team: Team, tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    """Alice and Bob each release once from the same table, each from their own home (the dataset's id and its
    spend entries, as the team's chain holds them, oldest first)."""
    plan = plan_with_budget(tmp_path, 2.0)
    for n, who in enumerate(("alice", "bob")):
        home = team.home(tmp_path, who)
        r = dpdesk(
            "release",
            str(plan),
            "--data",
            str(DATA),
            "--out",
            str(tmp_path / f"out{n}"),
            home=home,
            ledger=team.url(team.users[who]),
        )
        assert r.returncode == 0, r.stderr
    rows = team.sql(
        "SELECT dataset, convert_from(line, 'UTF8'), appended_by FROM dpdesk.entries WHERE type = 'spend' "
        "ORDER BY seq"
    )
    datasets = {str(r[0]) for r in rows}
    assert len(datasets) == 1
    spends = [{**json.loads(str(line)), "appended_by": str(by)} for _d, line, by in rows]
    return datasets.pop(), spends


def open_dashboard(qtbot: Any, win: Any) -> TeamDashboard:
    """Tools > Team dashboard…, as a person opens it (the menu's action), once the server has answered."""
    win.dashboard_action.trigger()
    dashboard = win.team_dashboard
    assert dashboard is not None and dashboard.isVisible()
    qtbot.waitUntil(lambda: dashboard.worker is None, timeout=60_000)
    return dashboard


def cells(dashboard: TeamDashboard, row: int = 0) -> dict[str, str]:
    model = dashboard.table.model()
    return {col: model.index(row, c).data() for c, col in enumerate(COLUMNS)}


def latest_rows(dashboard: TeamDashboard) -> list[list[str]]:
    t = dashboard.latest
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def test_the_officer_sees_both_curators_releases_with_the_ledgers_numbers(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dataset, spends = released
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["olga"]))
    dashboard = open_dashboard(qtbot, win)
    assert dashboard.message.text() == ""
    summary = dashboard.summary.text()
    assert team.users["olga"] in summary and "privacy officer" in summary and "1 dataset(s)" in summary
    row = cells(dashboard)
    assert row["dataset"] == short_id(dataset) and dataset.startswith(row["dataset"].rstrip("…"))
    assert dashboard.table.model().index(0, 0).data(3) == dataset  # the whole id in the tooltip
    # spent is the sum of what the chain's releases were charged (sequential), rounded up; left is the rest, down
    spent_e = sum(e["charged"]["epsilon"] for e in spends)
    spent_d = sum(e["charged"]["delta"] for e in spends)
    assert row["spent"] == f"ε {numfmt.epsilon(spent_e, 'up')}, δ {numfmt.delta(spent_d, 'up')}"
    assert row["left"].startswith(f"ε {numfmt.epsilon(2.0 - spent_e, 'down')}, δ ")
    assert row["budget"].startswith("ε 2, δ ") and row["releases"] == str(len(spends)) == "2"
    assert row["method"] == "sequential" and row["status"] == "in order"
    # the latest releases, newest first: who released and what each was charged, as the chain says
    rows = latest_rows(dashboard)
    assert [r[0] for r in rows] == [e["appended_by"] for e in reversed(spends)]
    assert {r[0] for r in rows} == {team.users["alice"], team.users["bob"]}
    assert [r[2] for r in rows] == [numfmt.epsilon(e["charged"]["epsilon"], "up") for e in reversed(spends)]
    assert [r[4] for r in rows] == [e["release_id"] for e in reversed(spends)]
    assert all(len(r[1]) == len("2026-01-01 12:00") for r in rows)
    assert dataset in dashboard.latest_label.text()
    for button in (dashboard.settings_button, dashboard.approve_button):
        assert button.isEnabled(), button.text()
    assert not dashboard.acknowledge_button.isEnabled()  # nothing is broken
    assert "Only a broken dataset" in dashboard.acknowledge_button.toolTip()
    assert dashboard.table.accessibleName() and dashboard.latest.accessibleName()


def test_the_officer_changes_the_budget_through_the_button_and_sees_it_after_refresh(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    dataset, spends = released
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["olga"]))
    dashboard = open_dashboard(qtbot, win)
    (tmp_path / "wider").mkdir()
    wider = plan_with_budget(tmp_path / "wider", 3.5)
    asked: list[str] = []
    win.ask_open_path = lambda title, *_a: asked.append(title) or str(wider)
    win.ask_text = lambda title, *_a: asked.append(title) or "the board raised the budget"
    dashboard.settings_button.click()
    assert dashboard.worker is not None or dashboard.message.text()  # in the worker, never on the GUI thread
    qtbot.waitUntil(
        lambda: dashboard.worker is None and "New settings" in dashboard.message.text(), timeout=60_000
    )
    assert asked == ["The plan with the new settings", "Change settings"]
    # the ledger holds the officer's settings entry, and the dashboard shows what the server now says
    last = team.sql(
        f"SELECT type, appended_by, convert_from(line, 'UTF8') FROM dpdesk.entries WHERE dataset = '{dataset}' "
        "ORDER BY seq DESC LIMIT 1"
    )[0]
    assert last[0] == "settings" and last[1] == team.users["olga"]
    entry = json.loads(str(last[2]))
    assert entry["settings"]["budget"]["epsilon"] == 3.5 and entry["reason"] == "the board raised the budget"
    row = cells(dashboard)
    spent_e = sum(e["charged"]["epsilon"] for e in spends)
    assert row["budget"].startswith("ε 3.5, δ ")
    assert row["left"].startswith(f"ε {numfmt.epsilon(3.5 - spent_e, 'down')}, δ ")
    # Refresh asks again and shows the same
    dashboard.refresh_button.click()
    qtbot.waitUntil(lambda: dashboard.worker is None, timeout=60_000)
    assert cells(dashboard) == row


@pytest.mark.parametrize(("who", "role"), [("audrey", "auditor (read only)"), ("alice", "curator")])
def test_a_curator_and_the_auditor_see_the_same_with_the_officers_buttons_disabled(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    who: str,
    role: str,
) -> None:
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["olga"]))
    officer = open_dashboard(qtbot, win)
    seen = (cells(officer), latest_rows(officer))
    officer.close()
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users[who]))
    dashboard = open_dashboard(qtbot, win)
    assert f"{team.users[who]}, {role}" in dashboard.summary.text()
    assert (cells(dashboard), latest_rows(dashboard)) == seen
    for button in (dashboard.settings_button, dashboard.acknowledge_button, dashboard.approve_button):
        assert not button.isEnabled(), button.text()
        assert "Only the team's privacy officers may do this" in button.toolTip()
        assert role in button.toolTip()
    assert dashboard.refresh_button.isEnabled()
    # a click that reaches the slot anyway does nothing and asks nothing
    win.ask_open_path = lambda *_a: pytest.fail("asked for a file")
    win.ask_text = lambda *_a: pytest.fail("asked for a reason")
    assert dashboard.change_settings() is None and dashboard.acknowledge() is None
    assert dashboard.approve_plan() is None


def test_an_unreachable_server_is_said_in_words(
    qtbot: Any, win: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LEDGER", f"postgresql://olga@127.0.0.1:{free_port()}/team")
    dashboard = open_dashboard(qtbot, win)
    text = dashboard.message.text()
    assert (
        dashboard.message.isVisible()
        and "cannot reach the team ledger at postgresql://olga@127.0.0.1" in text
    )
    assert "Traceback" not in text and "Error:" not in text
    assert dashboard.model.rowCount() == 0 and not dashboard.settings_button.isEnabled()
    assert dashboard.refresh_button.isEnabled() and not win.errors


def test_a_home_without_a_team_ledger_is_told_how_to_connect(qtbot: Any, win: Any) -> None:
    dashboard = open_dashboard(qtbot, win)
    assert "Tools > Team ledger" in dashboard.summary.text() and dashboard.model.rowCount() == 0
    assert not dashboard.settings_button.isEnabled()


def test_the_shortcut_opens_the_dashboard(win: Any) -> None:
    assert win.dashboard_action.shortcut().toString() == "Ctrl+Shift+D"
    menus = [a.menu() for a in win.menuBar().actions() if a.menu() is not None]
    assert any(win.dashboard_action in m.actions() for m in menus)
    assert win.dashboard_action.toolTip()


def dataset_of(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "dataset": "ds-" + "ab" * 16,
        "entries": 4,
        "method": "zcdp",
        "budget": {"epsilon": 1.0, "delta": 1e-06},
        "spent": {"epsilon": 0.30000000000000004, "delta": 1e-07},
        "left": {"epsilon": 0.6999999999999999, "delta": 9e-07},
        "releases": 2,
        "latest": [],
        "problems": [],
    }
    return {**base, **over}


def test_the_model_rounds_spent_up_and_left_down_in_plain_words(qtmodeltester: Any) -> None:
    model = TeamDatasetsModel()
    model.set_datasets(
        [
            dataset_of(
                spent={"epsilon": 0.12341, "delta": 1.011e-07}, left={"epsilon": 0.87659, "delta": 8.999e-07}
            ),
            dataset_of(method=None, budget=None, spent=None, left=None, problems=["no_budget"]),
            dataset_of(problems=["overspent"]),
            dataset_of(problems=["merged"]),
        ]
    )
    qtmodeltester.check(model)
    text = [[model.index(r, c).data() for c in range(len(COLUMNS))] for r in range(4)]
    assert text[0][2] == "ε 0.1235, δ 0.000000102" and text[0][3] == "ε 0.8765, δ 0.000000899"
    assert text[0][4] == "zCDP" and "e-0" not in "".join(text[0])
    assert text[1][1:5] == ["—", "—", "—", "—"] and text[1][6] == "pending: no budget fixed yet"
    assert text[2][6].startswith("broken") and text[3][6].startswith("closed")
    assert model.index(0, 6).data(8) is None  # in order: no tint
    assert model.index(2, 6).data(8) is not None and model.index(2, 6).data(1) is not None  # tint and icon
    assert [health(d).kind for d in model.datasets] == ["ok", "pending", "broken", "closed"]


def test_a_pending_dataset_is_open_to_first_settings_and_a_broken_one_to_acknowledge(
    qtbot: Any, win: Any
) -> None:
    from dpdesk.services.team import TeamStatus

    dashboard = open_dashboard(qtbot, win)  # a home with no team: nothing asked of a server
    details = {"server": "db", "user": "olga", "officer": True, "curator": True}
    dashboard.show_status(
        TeamStatus(
            "postgresql://olga@db/team",
            details,
            [
                dataset_of(method=None, budget=None, spent=None, left=None, problems=["no_budget"]),
                dataset_of(dataset="ds-" + "cd" * 16, problems=["total_unknown"], spent=None, left=None),
                dataset_of(dataset="ds-" + "ef" * 16, problems=["merged"]),
            ],
        )
    )
    assert dashboard.settings_button.isEnabled() and not dashboard.acknowledge_button.isEnabled()
    dashboard.table.selectRow(1)
    assert dashboard.acknowledge_button.isEnabled() and dashboard.settings_button.isEnabled()
    dashboard.table.selectRow(2)
    assert not any(
        b.isEnabled()
        for b in (dashboard.settings_button, dashboard.acknowledge_button, dashboard.approve_button)
    )


def test_the_officer_signs_an_approval_for_the_dataset_at_its_team_head(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from dpdesk.core.governance import officer as of

    dataset, _spends = released
    keys = of.create_officer(
        tmp_path / "keys", "Olga", "olga@example.org", "officer passphrase", "recovery pass"
    )
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["olga"]))
    dashboard = open_dashboard(qtbot, win)
    plan = plan_with_budget(tmp_path, 2.0)
    out = tmp_path / "approval.json"
    paths = iter([str(plan), str(keys.private)])
    win.ask_open_path = lambda *_a: next(paths)
    win.ask_passphrase = lambda *_a: "officer passphrase"
    win.ask_save_path = lambda *_a: str(out)
    dashboard.approve_button.click()
    qtbot.waitUntil(lambda: dashboard.worker is None and out.exists(), timeout=60_000)
    assert dashboard.message.text().startswith(f"Wrote {out}") and dataset in dashboard.message.text()
    payload = json.loads(out.read_text(encoding="utf-8"))["payload"]
    seq, digest = team.sql(
        f"SELECT seq, hash FROM dpdesk.entries WHERE dataset = '{dataset}' ORDER BY seq DESC LIMIT 1"
    )[0]
    assert payload["dataset"] == dataset and payload["action"] == "approve_plan"
    assert payload["head"] == {"seq": seq, "hash": digest}  # the team chain's head, read by the dashboard


def test_tab_walks_the_tables_then_the_actions_then_refresh(qtbot: Any, win: Any) -> None:
    dashboard = open_dashboard(qtbot, win)
    dashboard.activateWindow()
    order = []
    dashboard.table.setFocus()
    qtbot.waitUntil(dashboard.table.hasFocus, timeout=5_000)
    for _ in range(3):
        qtbot.keyClick(dashboard.focusWidget(), Qt.Key.Key_Tab)
        order.append(dashboard.focusWidget())
    assert order[0] is dashboard.latest  # the buttons on a home with no team are disabled: skipped
    assert order[1] is dashboard.refresh_button and order[2] is dashboard.close_button
    assert win.dashboard_action.shortcut().toString() == "Ctrl+Shift+D"


def test_the_officer_fixes_the_first_settings_of_a_pending_dataset(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A near-copy the officer declared a new dataset has an entry and no budget: pending, until the officer's
    Change settings… gives it its first settings."""
    known, _spends = released
    lines = DATA.read_text(encoding="utf-8").splitlines()
    near = tmp_path / "near.csv"
    near.write_text("\n".join([lines[0], *lines[1 : len(lines) * 9 // 10]]) + "\n", encoding="utf-8")
    olga = team.url(team.users["olga"])
    r = dpdesk(
        "ledger",
        "declare-new",
        "--data",
        str(near),
        "--resembles",
        known,
        "--reason",
        "the 2025 wave",
        home=team.home(tmp_path, "olga"),
        ledger=olga,
    )
    assert r.returncode == 0, r.stderr
    named = next(str(d) for (d,) in team.sql("SELECT dataset FROM dpdesk.datasets") if str(d) != known)
    monkeypatch.setenv("DPDESK_LEDGER", olga)
    dashboard = open_dashboard(qtbot, win)
    ids = [d["dataset"] for d in dashboard.model.datasets]
    row = ids.index(named)
    dashboard.table.selectRow(row)
    pending = cells(dashboard, row)
    assert pending["status"] == "pending: no budget fixed yet" and pending["budget"] == "—"
    assert pending["spent"] == pending["left"] == pending["method"] == "—"
    assert (
        dashboard.model.index(row, COLUMNS.index("status")).data(Qt.ItemDataRole.BackgroundRole) is not None
    )
    assert dashboard.settings_button.isEnabled() and not dashboard.acknowledge_button.isEnabled()
    (tmp_path / "first").mkdir()
    first = plan_with_budget(tmp_path / "first", 1.5)
    win.ask_open_path = lambda *_a: str(first)
    win.ask_text = lambda *_a: "the 2025 wave's own budget"
    qtbot.mouseClick(dashboard.settings_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: dashboard.worker is None and "New settings" in dashboard.message.text(), timeout=60_000
    )
    kinds = team.sql(f"SELECT type, appended_by FROM dpdesk.entries WHERE dataset = '{named}' ORDER BY seq")
    assert kinds == [("declared_new", team.users["olga"]), ("settings", team.users["olga"])]
    assert dashboard.selected() is not None and dashboard.selected()["dataset"] == named  # kept selected
    fixed = cells(dashboard, [d["dataset"] for d in dashboard.model.datasets].index(named))
    assert fixed["status"] == "in order" and fixed["budget"].startswith("ε 1.5, δ ")
    assert fixed["spent"] == "ε 0, δ 0" and fixed["left"].startswith("ε 1.5, δ ")


def test_the_auditor_writes_the_teams_statement_from_the_dashboard(
    qtbot: Any,
    win: Any,
    team: Team,
    released: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["audrey"]))
    dashboard = open_dashboard(qtbot, win)
    assert dashboard.statement_button.isEnabled() and not dashboard.settings_button.isEnabled()
    out = tmp_path / "team.pdf"
    win.ask_save_path = lambda *_a: str(out)
    qtbot.mouseClick(dashboard.statement_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dashboard.worker is None, timeout=120_000)
    assert out.read_bytes().startswith(b"%PDF") and dashboard.message.text().startswith(f"Wrote {out}")
    assert "1 dataset(s)" in dashboard.message.text()


def test_a_curator_imports_history_and_the_officer_sees_both_curators_and_approves_a_plan(
    qtbot: Any, win: Any, team: Team, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's walk-through in the app: alice released the table in her own home and imports it, bob releases
    through the team; the officer's dashboard shows alice's import (her release, at what it was charged) and bob's
    release, and the officer approves a plan at the team's head."""
    from dpdesk.core.governance import officer as of

    plan = plan_with_budget(tmp_path, 2.0)
    alice, bob = team.home(tmp_path, "alice"), team.home(tmp_path, "bob")
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "own"), home=alice)
    assert r.returncode == 0, r.stderr
    own = [json.loads(x) for x in next((alice / "ledgers").glob("ds-*.jsonl")).read_text().splitlines()]
    (own_spend,) = [e for e in own if e["type"] == "spend"]
    r = dpdesk("team", "import", "--data", str(DATA), home=alice, ledger=team.url(team.users["alice"]))
    assert r.returncode == 0, r.stderr
    r = dpdesk(
        "release",
        str(plan),
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "b"),
        home=bob,
        ledger=team.url(team.users["bob"]),
    )
    assert r.returncode == 0, r.stderr
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["olga"]))
    dashboard = open_dashboard(qtbot, win)
    row = cells(dashboard)
    assert row["releases"] == "2"
    spent = own_spend["charged"]["epsilon"] + 0.9
    assert row["spent"].startswith(f"ε {numfmt.epsilon(spent, 'up')}, ")
    rows = latest_rows(dashboard)
    assert [r[0] for r in rows] == [team.users["bob"], team.users["alice"]]
    assert rows[1][2] == numfmt.epsilon(own_spend["charged"]["epsilon"], "up")
    assert rows[1][4] == f"imported: 1 release(s) of their home's dataset {own[0]['dataset']}"
    # the officer approves a plan for the dataset, at the team chain's head
    keys = of.create_officer(tmp_path / "keys", "Olga", "olga@example.org", "officer passphrase", "recovery")
    out = tmp_path / "approval.json"
    paths = iter([str(plan), str(keys.private)])
    win.ask_open_path = lambda *_a: next(paths)
    win.ask_passphrase = lambda *_a: "officer passphrase"
    win.ask_save_path = lambda *_a: str(out)
    dashboard.approve_button.click()
    qtbot.waitUntil(lambda: dashboard.worker is None and out.exists(), timeout=60_000)
    seq, digest = team.sql("SELECT seq, hash FROM dpdesk.entries ORDER BY seq DESC LIMIT 1")[0]
    assert json.loads(out.read_text(encoding="utf-8"))["payload"]["head"] == {"seq": seq, "hash": digest}
