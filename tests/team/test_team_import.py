"""Issue 29, item 1: a curator joins a team with history. ``dpdesk team import --data FILE`` carries a table's
releases from a home's own ledger into the team's, exactly; the home's ledger can no longer be spent from; two
curators importing one table give it one budget, the smaller; a home cannot release a table through the team before
its history is imported (a real PostgreSQL)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.team.conftest import Team
from tests.team.test_team_release import DATA, dpdesk
from tests.team.test_team_release import plan_with_budget as _plan_in


def plan_with_budget(folder: Path, epsilon: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return _plan_in(folder, epsilon)


def _spent_in_own_ledger(home: Path) -> tuple[Decimal, int, str]:
    """What the home's own ledger of DATA spent (exact decimal sum of its releases' charges), its release count, and
    its dataset id, read from the file."""
    files = sorted((home / "ledgers").glob("ds-*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(x) for x in files[0].read_text(encoding="utf-8").splitlines()]
    spends = [e for e in lines if e["type"] == "spend"]
    return (
        sum((Decimal(repr(e["charged"]["epsilon"])) for e in spends), Decimal(0)),
        len(spends),
        files[0].stem,
    )


def _release(plan: Path, home: Path, out: Path, ledger: str | None = None) -> int:
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(out), home=home, ledger=ledger)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode


def _team_totals(team: Team) -> tuple[Decimal, Decimal, int]:
    """The team's one dataset: its budget's epsilon, its spent epsilon and its releases, as the database states."""
    rows = team.sql("SELECT o_budget_epsilon, o_spent_epsilon, o_releases FROM dpdesk.overview()")
    assert len(rows) == 1
    budget, spent, n = rows[0]
    return Decimal(str(budget)), Decimal(str(spent)), int(str(n))


def test_a_curator_imports_a_table_with_history_and_its_home_ledger_is_closed(
    team: Team, tmp_path: Path
) -> None:
    plan = plan_with_budget(tmp_path, 3.0)  # each release costs 0.9
    home = team.home(tmp_path, "alice")
    for n in range(2):
        assert _release(plan, home, tmp_path / f"local{n}") == 0
    spent, releases, local = _spent_in_own_ledger(home)
    assert releases == 2
    url = team.url(team.users["alice"])
    # connecting names the import
    r = dpdesk("team", "connect", url, home=home)
    assert r.returncode == 2 and "dpdesk team import --data FILE" in r.stderr
    # before the import, the team refuses the table: it would start a second budget
    r = dpdesk(
        "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "early"), home=home, ledger=url
    )
    assert r.returncode == 3 and "dpdesk team import" in r.stderr and not (tmp_path / "early").exists()
    assert team.sql("SELECT count(*) FROM dpdesk.entries") == [(0,)]

    r = dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url)
    assert r.returncode == 0, r.stderr
    assert (
        f"Imported dataset {local}" in r.stdout and "Releases carried into the team's ledger: 2." in r.stdout
    )
    budget, team_spent, team_releases = _team_totals(team)
    assert (budget, team_spent, team_releases) == (Decimal("3.0"), spent, 2)
    # the team's import entry names the home's dataset and its last head
    (line,) = [bytes(x[0]) for x in team.sql("SELECT line FROM dpdesk.entries WHERE type = 'import'")]
    entry = json.loads(line)
    own = [
        json.loads(x) for x in (home / "ledgers" / f"{local}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert entry["from"] == local and entry["home_head"] == {"seq": own[-2]["seq"], "hash": own[-2]["hash"]}
    assert own[-1]["type"] == "moved" and own[-1]["team_entry"]["hash"] == entry["hash"]

    # importing again changes nothing
    r = dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url)
    assert r.returncode == 0 and "before; nothing was changed" in r.stdout, r.stderr
    assert _team_totals(team)[1:] == (spent, 2)
    # the home's own ledger is closed: disconnected, it refuses the table
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "after"), home=home)
    assert (
        r.returncode == 3
        and "imported into a team's ledger" in r.stderr
        and not (tmp_path / "after").exists()
    )
    # through the team the table is released from what is left: 3 - 1.8 leaves room for one more 0.9
    assert _release(plan, home, tmp_path / "team0", ledger=url) == 0
    assert _release(plan, home, tmp_path / "team1", ledger=url) == 1
    # and the home may now connect (nothing of it is left outside the team)
    r = dpdesk("team", "connect", url, home=home)
    assert r.returncode == 0, r.stderr


def test_two_curators_import_one_table_one_budget_the_smaller(team: Team, tmp_path: Path) -> None:
    homes = {"alice": team.home(tmp_path, "alice"), "bob": team.home(tmp_path, "bob")}
    plans = {"alice": plan_with_budget(tmp_path / "a", 3.0), "bob": plan_with_budget(tmp_path / "b", 2.0)}
    for who, n in (("alice", 2), ("bob", 1)):
        for k in range(n):
            assert _release(plans[who], homes[who], tmp_path / f"{who}{k}") == 0
    spent_a, n_a, _a = _spent_in_own_ledger(homes["alice"])
    spent_b, n_b, _b = _spent_in_own_ledger(homes["bob"])
    for who in ("alice", "bob"):
        r = dpdesk("team", "import", "--data", str(DATA), home=homes[who], ledger=team.url(team.users[who]))
        assert r.returncode == 0, r.stderr
    assert "The team already held this table" in r.stdout and "spent more than its budget" in r.stdout
    budget, spent, releases = _team_totals(team)
    assert budget == Decimal("2.0") and spent == spent_a + spent_b and releases == n_a + n_b
    # 2.7 spent of 2: every release is refused, by the client and by the database
    r = dpdesk(
        "release",
        str(plans["bob"]),
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "refused"),
        home=homes["bob"],
        ledger=team.url(team.users["bob"]),
    )
    assert r.returncode == 1 and not (tmp_path / "refused").exists()


def test_a_larger_budget_never_comes_with_a_later_import(team: Team, tmp_path: Path) -> None:
    """The team's dataset keeps the smaller budget whichever curator imports first."""
    homes = {"alice": team.home(tmp_path, "alice"), "bob": team.home(tmp_path, "bob")}
    plans = {"alice": plan_with_budget(tmp_path / "a", 2.0), "bob": plan_with_budget(tmp_path / "b", 5.0)}
    for who in homes:
        assert _release(plans[who], homes[who], tmp_path / who) == 0
    for who in ("alice", "bob"):
        r = dpdesk("team", "import", "--data", str(DATA), home=homes[who], ledger=team.url(team.users[who]))
        assert r.returncode == 0, r.stderr
    assert _team_totals(team)[0] == Decimal("2.0")


def test_nothing_to_import_and_no_team_are_plain_refusals(team: Team, tmp_path: Path) -> None:
    home = team.home(tmp_path, "alice")
    r = dpdesk("team", "import", "--data", str(DATA), home=home, ledger=team.url(team.users["alice"]))
    assert r.returncode == 2 and "nothing to import" in r.stderr and "Traceback" not in r.stderr
    r = dpdesk("team", "import", "--data", str(DATA), home=home)
    assert r.returncode == 2 and "not connected" in r.stderr and "Traceback" not in r.stderr


def test_team_init_upgrades_an_older_team_and_is_idempotent(team: Team, tmp_path: Path) -> None:
    """A team made by the schema before imports (version 1: no 'import' entries) is upgraded in place by ``team
    init``, its entries kept; a second run changes nothing."""
    home = team.home(tmp_path, "alice")
    url = team.url(team.users["alice"])
    plan = plan_with_budget(tmp_path, 3.0)
    assert _release(plan, home, tmp_path / "one", ledger=url) == 0
    before = team.sql("SELECT seq, hash FROM dpdesk.entries ORDER BY seq")
    # made older: version 1, whose append refused import entries
    team.sql(f"SET ROLE {team.prefix}_owner; UPDATE dpdesk.team SET schema_version = 1; RESET ROLE")
    r = dpdesk(
        "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "old"), home=home, ledger=url
    )
    assert r.returncode == 5 and "dpdesk team init URL" in r.stderr and not (tmp_path / "old").exists()
    r = dpdesk("team", "init", team.admin, "--prefix", team.prefix, home=tmp_path / "admin")
    assert r.returncode == 0 and "Upgraded" in r.stdout, r.stderr
    r = dpdesk("team", "init", team.admin, "--prefix", team.prefix, home=tmp_path / "admin")
    assert r.returncode == 0 and "up to date" in r.stdout, r.stderr
    assert team.sql("SELECT seq, hash FROM dpdesk.entries ORDER BY seq") == before
    assert _release(plan, home, tmp_path / "two", ledger=url) == 0


def test_the_database_refuses_a_curators_import_that_raises_the_budget(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A modified client's ``import`` entry that would raise a dataset's budget (or set one the officer left
    pending) is refused by the database itself; the same entry lowering it is accepted."""
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.loading import file_sha256

    home = team.home(tmp_path, "alice")
    url = team.url(team.users["alice"])
    plan = plan_with_budget(tmp_path, 2.0)
    assert _release(plan, home, tmp_path / "one", ledger=url) == 0
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("DPDESK_LEDGER", url)
    ledger = Ledger.for_dataset(home, file_sha256(DATA))
    with ledger.transaction(moving=True) as tx:
        settings = dict(tx.settings() or {})
    raised = {**settings, "budget": {**settings["budget"], "epsilon": 50.0}}
    lowered = {**settings, "budget": {**settings["budget"], "epsilon": 1.5}}
    forged = {"from": "ds-" + "0" * 32, "home_head": {"seq": 0, "hash": "0" * 64}, "carried": []}
    refused = "only a privacy officer of this team may import under a larger budget"
    with pytest.raises(DpdeskError, match=refused), ledger.transaction(moving=True) as tx:
        tx.append("import", {**forged, "settings": raised})
    assert _team_totals(team)[0] == Decimal("2.0")
    with ledger.transaction(moving=True) as tx:
        tx.append("import", {**forged, "settings": lowered})
    assert _team_totals(team)[0] == Decimal("1.5")
