"""The team's people and its officer's view on the command line: ``dpdesk team add-curator`` and its kin (with
``--print-sql``), ``dpdesk team who`` and ``dpdesk team status`` listing every dataset's budget, spent and left, with
its latest releases (a real PostgreSQL, never a mock)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from tests.team.conftest import Team
from tests.team.test_team_release import DATA, dpdesk, plan_with_budget

pytestmark = pytest.mark.slow


def members(team: Team, role: str) -> list[str]:
    rows = team.sql(
        "SELECT m.rolname FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid "
        f"JOIN pg_roles m ON m.oid = a.member WHERE r.rolname = '{team.prefix}_{role}' ORDER BY 1"
    )
    return [str(r[0]) for r in rows]


def test_the_administrator_adds_and_removes_people_and_who_lists_them(team: Team, tmp_path: Path) -> None:
    home = tmp_path / "admin"
    carol, keyword = f"carol{team.prefix}", f"select{team.prefix}"
    r = dpdesk("team", "add-curator", carol, "--url", team.admin, home=home)
    assert r.returncode == 0, r.stderr
    assert f"Made the login role {carol}, without a password" in r.stdout and "pg_hba" in r.stdout
    assert carol in members(team, "curator")
    # a name PostgreSQL reads as a keyword is a role only when quoted as an identifier
    r = dpdesk("team", "add-auditor", "select", "--url", team.admin, home=home)
    assert r.returncode == 0, r.stderr
    assert "select" in members(team, "auditor")
    team.sql('REVOKE "' + f"{team.prefix}_auditor" + '" FROM "select"')
    r = dpdesk("team", "add-officer", team.users["bob"], "--url", team.admin, home=home)
    assert r.returncode == 0 and "Made the login role" not in r.stdout, r.stderr
    assert team.users["bob"] in members(team, "officer")
    r = dpdesk("team", "remove-officer", team.users["bob"], "--url", team.admin, home=home)
    assert r.returncode == 0 and "no longer an officer" in r.stdout, r.stderr
    assert team.users["bob"] not in members(team, "officer")
    r = dpdesk("team", "remove-officer", team.users["bob"], "--url", team.admin, home=home)
    assert r.returncode == 0 and "was not an officer of the team; nothing was changed" in r.stdout
    # the older verb still works
    r = dpdesk("team", "grant", team.admin, keyword, "--role", "auditor", home=home)
    assert r.returncode == 0 and keyword in members(team, "auditor"), r.stderr
    r = dpdesk("team", "remove-auditor", keyword, "--url", team.admin, home=home)
    assert r.returncode == 0 and keyword not in members(team, "auditor")
    # who, as a member of the team (its home's own URL)
    r = dpdesk("team", "who", "--json", home=home, ledger=team.url(team.users["audrey"]))
    assert r.returncode == 0, r.stderr
    who = json.loads(r.stdout)
    assert who["curator"] == sorted([team.users["alice"], team.users["bob"], carol])
    assert who["officer"] == [team.users["olga"]] and who["auditor"] == [team.users["audrey"]]
    r = dpdesk("team", "who", home=home, ledger=team.url(team.users["alice"]))
    assert r.returncode == 0 and f"Officers: {team.users['olga']}" in r.stdout, r.stderr
    r = dpdesk("team", "who", home=tmp_path / "nowhere")
    assert r.returncode == 2 and "--url URL" in r.stderr


def test_a_hostile_name_is_refused_and_nothing_is_made(team: Team, tmp_path: Path) -> None:
    home = tmp_path / "admin"
    before = team.sql("SELECT count(*) FROM pg_roles")
    for name in (f'eve{team.prefix}"; DROP ROLE "{team.users["alice"]}"; --', "Eve", "pg_monitor", "public"):
        r = dpdesk("team", "add-curator", name, "--url", team.admin, home=home)
        assert r.returncode == 5 and "is not a plain database user name" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        r = dpdesk("team", "add-curator", name, "--print-sql", home=home)
        assert r.returncode == 5 and "is not a plain database user name" in r.stderr and not r.stdout
    assert team.sql("SELECT count(*) FROM pg_roles") == before
    assert team.users["alice"] in members(team, "curator")


def test_a_curator_is_refused_add_curator_with_the_reason_and_the_fix(team: Team, tmp_path: Path) -> None:
    home = tmp_path / "alice"
    for verb, name in (("add-curator", f"dave{team.prefix}"), ("add-curator", team.users["mallory"])):
        r = dpdesk("team", verb, name, home=home, ledger=team.url(team.users["alice"]))
        assert r.returncode == 5, r.stderr
        assert "may not add or remove the team's people" in r.stderr and "--print-sql" in r.stderr
        assert "CREATEROLE" in r.stderr and "Traceback" not in r.stderr
    r = dpdesk("team", "remove-curator", team.users["bob"], home=home, ledger=team.url(team.users["olga"]))
    assert r.returncode == 5 and "may not add or remove the team's people" in r.stderr, r.stderr
    assert f"dpdesk team remove-curator {team.users['bob']} --print-sql" in r.stderr
    assert team.users["bob"] in members(team, "curator") and team.users["mallory"] not in members(
        team, "curator"
    )
    assert team.sql(f"SELECT 1 FROM pg_roles WHERE rolname = 'dave{team.prefix}'") == []


def test_print_sql_is_what_a_database_administrator_runs(team: Team, tmp_path: Path) -> None:
    home = tmp_path / "none"
    erin = f"erin{team.prefix}"
    r = dpdesk("team", "add-officer", erin, "--print-sql", "--prefix", team.prefix, home=home)
    assert r.returncode == 0, r.stderr
    assert (
        f'CREATE ROLE "{erin}" LOGIN' in r.stdout and f'GRANT "{team.prefix}_officer" TO "{erin}"' in r.stdout
    )
    assert "password" in r.stdout and "PASSWORD" not in r.stdout
    for _ in range(2):  # run twice: the same SQL makes the role once
        team.sql(r.stdout)
    assert erin in members(team, "officer")
    r = dpdesk("team", "remove-officer", erin, "--print-sql", "--prefix", team.prefix, home=home)
    assert r.returncode == 0 and f'REVOKE "{team.prefix}_officer" FROM "{erin}"' in r.stdout
    team.sql(r.stdout)
    assert erin not in members(team, "officer")


def test_status_lists_every_dataset_with_spent_and_left_and_a_removed_curators_entries_stay(
    team: Team, tmp_path: Path
) -> None:
    plan = plan_with_budget(tmp_path, 2.0)  # the plan costs 0.9
    homes = {who: team.home(tmp_path, who) for who in ("alice", "bob", "olga")}
    for who, home in homes.items():
        assert dpdesk("team", "connect", team.url(team.users[who]), home=home).returncode == 0
    for n, who in enumerate(["alice", "bob"]):
        r = dpdesk(
            "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / f"o{n}"), home=homes[who]
        )
        assert r.returncode == 0, r.stderr
    r = dpdesk("team", "status", "--json", home=homes["olga"])
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["officer"] is True and st["datasets"] == 1
    [ds] = st["team_datasets"]
    assert ds["method"] == "sequential" and ds["releases"] == 2 and ds["problems"] == []
    assert ds["budget"]["epsilon"] == pytest.approx(2.0)
    assert ds["spent"]["epsilon"] == pytest.approx(1.8) and ds["left"]["epsilon"] == pytest.approx(0.2)
    assert [x["released_by"] for x in ds["latest"]] == [team.users["bob"], team.users["alice"]]
    assert all(x["charged"]["epsilon"] == pytest.approx(0.9) for x in ds["latest"])
    assert set(ds["latest"][0]) == {"seq", "kind", "release_id", "released_by", "released", "charged"}
    assert ds["latest"][0]["kind"] == "spend"
    r = dpdesk("team", "status", "--json", "--latest", "1", home=homes["olga"])
    assert [x["released_by"] for x in json.loads(r.stdout)["team_datasets"][0]["latest"]] == [
        team.users["bob"]
    ]
    # the auditor sees the same, read only (through DPDESK_LEDGER: an auditor cannot connect a home)
    r = dpdesk("team", "status", home=tmp_path / "audrey", ledger=team.url(team.users["audrey"]))
    assert r.returncode == 0, r.stderr
    assert "auditor (read only)" in r.stdout and "2 release(s)" in r.stdout
    assert "spent: epsilon 1.8, delta 0.0000002; left: epsilon 0.2, delta " in r.stdout, r.stdout
    assert f"by {team.users['alice']}: epsilon 0.9" in r.stdout
    # a curator sees it too; a user of the server outside the team reads nothing
    r = dpdesk("team", "status", home=homes["bob"])
    assert r.returncode == 0 and "left: epsilon 0.2" in r.stdout, r.stderr
    with (
        psycopg.connect(team.url(team.users["mallory"]), autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("SELECT * FROM dpdesk.overview()")
    # alice leaves the team: her entry stays, still hers, and the chain still verifies
    r = dpdesk("team", "remove-curator", team.users["alice"], "--url", team.admin, home=tmp_path / "admin")
    assert r.returncode == 0 and "every entry they made stays" in r.stdout, r.stderr
    assert team.users["alice"] not in members(team, "curator")
    authors = team.sql("SELECT appended_by FROM dpdesk.entries WHERE type = 'spend' ORDER BY seq")
    assert authors == [(team.users["alice"],), (team.users["bob"],)]
    r = dpdesk("ledger", "--data", str(DATA), home=homes["bob"])
    assert r.returncode == 0 and "chain verified" in r.stdout and "2 release(s)" in r.stdout, r.stdout
    r = dpdesk("team", "status", "--json", home=homes["olga"])
    assert [x["released_by"] for x in json.loads(r.stdout)["team_datasets"][0]["latest"]] == [
        team.users["bob"],
        team.users["alice"],
    ]
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o9"), home=homes["alice"])
    assert r.returncode == 5 and not (tmp_path / "o9").exists()
