"""A team's chain is read from its last checkpoint (``budget`` and ``ledger`` do not read the whole history), and
the database refuses a checkpoint that understates what was spent or misstates the settings or the governance. A real
PostgreSQL; releases run in this process through the command line's entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dpdesk.cli import main
from dpdesk.core.common.errors import LedgerError
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.checkpoint import state_of
from dpdesk.core.ledger.entries import entry_hash
from dpdesk.core.ledger.pgstore import team_store
from dpdesk.core.model.spec import canonical_json
from tests.conftest import SAMPLES
from tests.team.conftest import Team

DATA = SAMPLES / "census_sample.csv"


def _releases(team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> tuple[Path, str]:
    plan = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 1000.0
    plan["queries"] = plan["queries"][:1]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    home = tmp_path / "home"
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users["alice"]))
    for i in range(n):
        assert main(["release", str(path), "--data", str(DATA), "--out", str(tmp_path / f"out{i}")]) == 0
    (dataset,) = team.sql("SELECT dataset FROM dpdesk.datasets WHERE seq > 0")[0]
    return home, str(dataset)


@pytest.mark.slow
def test_a_team_chain_is_read_from_its_checkpoint_which_the_database_checked(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, dataset = _releases(
        team, tmp_path, monkeypatch, 9
    )  # settings, 9 x (spend, package): a checkpoint at 17
    kinds = [
        r[0] for r in team.sql(f"SELECT type FROM dpdesk.entries WHERE dataset = '{dataset}' ORDER BY seq")
    ]
    assert "checkpoint" in kinds  # the engine's own checkpoint passed the database's check
    ledger = Ledger.of(home, dataset)
    whole = state_of(ledger.verify())
    state = ledger.read()
    assert not state.full and state.spent == whole.spent and state.seq == whole.seq
    # an early line changed behind the database's back (an administrator's edit): the whole chain names it, and
    # reading from the checkpoint does not read that far back
    team.sql(
        f"UPDATE dpdesk.entries SET line = convert_to(replace(convert_from(line, 'UTF8'), 'CPS', 'XYZ'), 'UTF8') "
        f"WHERE dataset = '{dataset}' AND seq = 2"
    )
    with pytest.raises(LedgerError):
        ledger.verify()
    assert ledger.read().spent == whole.spent
    store = team_store(home)
    assert store is not None


@pytest.mark.slow
def test_a_checkpoint_that_understates_the_spending_is_refused(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, dataset = _releases(team, tmp_path, monkeypatch, 2)
    rows = team.sql(f"SELECT seq, head FROM dpdesk.datasets WHERE dataset = '{dataset}'")
    seq, head = int(rows[0][0]), str(rows[0][1])  # type: ignore[call-overload]
    honest = Ledger.of(home, dataset).read().to_dict()

    def forged(change: Any) -> bytes:
        state = json.loads(json.dumps(honest))
        change(state["state"])
        stored = {
            "seq": seq + 1,
            "type": "checkpoint",
            "time": "2026-11-28T12:00:00+00:00",
            "dataset": dataset,
            "prev": head,
            "author": team.users["alice"],
            **state,
        }
        stored["hash"] = entry_hash(stored)
        return (canonical_json(stored) + "\n").encode()

    def lower(st: dict[str, Any]) -> None:
        st["spent"]["sequential"]["epsilon"] = "0.1"

    def fewer(st: dict[str, Any]) -> None:
        st["spent"]["releases"] = 0

    def budget(st: dict[str, Any]) -> None:
        st["settings"]["budget"]["epsilon"] = 1e9

    def another_entry(st: dict[str, Any]) -> None:
        st["seq"] = seq - 1

    def governed(st: dict[str, Any]) -> None:
        st["governance_entry"] = {"seq": 1, "type": "govern", "hash": "0" * 64}

    with psycopg.connect(team.url(team.users["alice"]), autocommit=True) as conn:
        for change in (lower, fewer, budget, another_entry, governed):
            with pytest.raises(psycopg.Error) as info:
                conn.execute("SELECT dpdesk.append(%s, %s)", (dataset, forged(change)))
            assert info.value.sqlstate == "DP009", (change.__name__, info.value)
        conn.execute("SELECT dpdesk.append(%s, %s)", (dataset, forged(lambda st: None)))  # the honest one
