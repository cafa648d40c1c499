"""The team ledger as curators use it: two homes on two "machines" releasing from one table until the team's budget
is used up, the commands of ``dpdesk team``, and failing closed when the server is gone (a real PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.pgserver import PgServer
from tests.team.conftest import Team

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def dpdesk(*args: str, home: Path, ledger: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    env.pop("DPDESK_LEDGER", None)
    if ledger is not None:
        env["DPDESK_LEDGER"] = ledger
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def plan_with_budget(tmp_path: Path, epsilon: float) -> Path:
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = epsilon
    out = tmp_path / "plan.json"
    out.write_text(json.dumps(plan), encoding="utf-8")
    return out


def test_two_curators_on_two_homes_share_one_budget(team: Team, tmp_path: Path) -> None:
    plan = plan_with_budget(tmp_path, 2.0)  # the plan costs 0.9: two releases fit, a third does not
    homes = {who: team.home(tmp_path, who) for who in ("alice", "bob")}
    for who, home in homes.items():
        r = dpdesk("team", "connect", team.url(team.users[who]), home=home)
        assert r.returncode == 0, r.stderr
        assert f"as {team.users[who]}" in r.stdout
    done = []
    for n, who in enumerate(["alice", "bob", "alice", "bob"]):
        r = dpdesk(
            "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / f"out{n}"), home=homes[who]
        )
        done.append(r.returncode)
        if r.returncode == 1:
            assert "over budget" in r.stderr and not (tmp_path / f"out{n}").exists()
    assert done == [0, 0, 1, 1]
    # each home sees the same ledger: two releases, by two authors, 0.2 left
    for home in homes.values():
        r = dpdesk("ledger", "--data", str(DATA), home=home)
        assert r.returncode == 0, r.stderr
        assert "2 release(s); left: epsilon 0.2" in r.stdout and "chain verified" in r.stdout
        assert "only the team's privacy officers may change" in r.stdout and "ungoverned" not in r.stdout
    authors = team.sql("SELECT DISTINCT appended_by FROM dpdesk.entries WHERE type = 'spend' ORDER BY 1")
    assert authors == [(team.users["alice"],), (team.users["bob"],)]
    # the homes' own folders hold no chain: the budget lives in the database only
    for home in homes.values():
        assert not list((home / "ledgers").glob("ds-*.jsonl")) if (home / "ledgers").exists() else True


def test_a_team_export_verifies_and_reviews_like_a_file_ledger(team: Team, tmp_path: Path) -> None:
    home = team.home(tmp_path, "alice")
    url = team.url(team.users["alice"])
    out = tmp_path / "out"
    r = dpdesk("release", str(PLAN), "--data", str(DATA), "--out", str(out), home=home, ledger=url)
    assert r.returncode == 0, r.stderr
    exported = tmp_path / "team-ledger.jsonl"
    r = dpdesk("ledger", "export", "--data", str(DATA), "--out", str(exported), home=home, ledger=url)
    assert r.returncode == 0, r.stderr + r.stdout
    raw = b"".join(bytes(x[0]) for x in team.sql("SELECT line FROM dpdesk.entries ORDER BY seq"))
    assert exported.read_bytes() == raw
    r = dpdesk("review", str(exported), home=tmp_path / "officer-home")
    assert r.returncode == 0, r.stderr + r.stdout
    r = dpdesk("review", str(out), "--against", str(exported), home=tmp_path / "officer-home")
    assert r.returncode == 0, r.stderr + r.stdout


def test_an_unreachable_server_charges_nothing_and_never_falls_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    nowhere = f"postgresql://alice@/team?host={tmp_path}&port=1"
    out = tmp_path / "out"
    r = dpdesk("release", str(PLAN), "--data", str(DATA), "--out", str(out), home=home, ledger=nowhere)
    assert r.returncode == 5, (r.returncode, r.stderr)
    assert "cannot reach the team ledger at postgresql://alice@" in r.stderr
    assert "nothing was charged or revealed" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    assert not list(home.rglob("ds-*.jsonl"))  # no local ledger was made instead
    r = dpdesk("ledger", "--data", str(DATA), home=home, ledger=nowhere)
    assert r.returncode == 5 and "cannot reach the team ledger" in r.stderr


def test_a_server_stopped_before_the_charge_charges_nothing(team: Team, tmp_path: Path) -> None:
    server = PgServer().start()
    try:
        from dpdesk.core.ledger.pgstore import create_team, grant

        create_team(server.url(), "solo")
        grant(server.url(), "carol", "curator")
        url = server.url("carol")
        home = tmp_path / "home"
        r = dpdesk(
            "release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "a"), home=home, ledger=url
        )
        assert r.returncode == 0, r.stderr
        server.stop()
        r = dpdesk(
            "release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "b"), home=home, ledger=url
        )
        assert r.returncode == 5 and not (tmp_path / "b").exists()
        server.start_again()
        assert server.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'spend'") == [(1,)]
    finally:
        server.remove()


def test_team_commands(team: Team, tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = dpdesk("team", "status", home=home)
    assert r.returncode == 0 and "its own ledgers" in r.stdout
    r = dpdesk("team", "init", "--print-sql", "--prefix", "stats", home=home)
    assert r.returncode == 0 and "SECURITY DEFINER" in r.stdout and "stats_curator" in r.stdout
    r = dpdesk("team", "init", "--print-sql", "--prefix", "Robert'); DROP", home=home)
    assert r.returncode == 5 and "not a role prefix" in r.stderr
    r = dpdesk("team", "connect", "postgresql://alice:secret@host/db", home=home)
    assert r.returncode == 5 and "password" in r.stderr and "secret" not in r.stderr
    r = dpdesk("team", "connect", team.url(team.users["mallory"]), home=home)
    assert r.returncode == 5 and not (home / "team.json").exists()
    r = dpdesk("team", "connect", team.url(team.users["audrey"]), home=home)
    assert r.returncode == 5 and "not a curator" in r.stderr
    r = dpdesk("team", "connect", team.url(team.users["olga"]), home=home)
    assert r.returncode == 0, r.stderr
    r = dpdesk("team", "status", home=home)
    assert r.returncode == 0 and "(officer)" in r.stdout and team.users["olga"] in r.stdout
    r = dpdesk("team", "init", team.admin, home=home)
    assert r.returncode == 0 and "is up to date; nothing was changed" in r.stdout  # run again: nothing to do
    r = dpdesk("team", "disconnect", home=home)
    assert r.returncode == 0 and not (home / "team.json").exists()
    (home / "team.json").write_text("{not json", encoding="utf-8")
    r = dpdesk("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o"), home=home)
    assert r.returncode == 5 and "cannot be read" in r.stderr and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_sixteen_releases_from_four_homes_never_overspend(team: Team, tmp_path: Path) -> None:
    """16 processes, 4 homes (two curators each of two), one dataset whose budget takes 2 of them."""
    plan = plan_with_budget(tmp_path, 2.0)
    procs = []
    for n in range(16):
        who = "alice" if n % 2 else "bob"
        home = tmp_path / f"home{n % 4}"
        env = {
            **os.environ,
            "DPDESK_HOME": str(home),
            "LANGUAGE": "en",
            "DPDESK_LEDGER": team.url(team.users[who]),
        }
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dpdesk",
                    "release",
                    str(plan),
                    "--data",
                    str(DATA),
                    "--out",
                    str(tmp_path / f"out{n}"),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    codes = [p.wait(timeout=600) for p in procs]
    for p in procs:
        p.communicate()
    assert sorted(codes) == [0, 0] + [1] * 14, codes
    spent = team.sql("SELECT sum(epsilon) FROM dpdesk.releases")
    assert float(spent[0][0]) == pytest.approx(1.8)  # type: ignore[arg-type]
    assert sum((tmp_path / f"out{n}").exists() for n in range(16)) == 2


def test_a_resaved_copy_on_another_home_is_the_same_dataset_of_the_team(team: Team, tmp_path: Path) -> None:
    """The rows, not the bytes: bob's copy has its rows reversed and Windows line endings, and is charged to the
    dataset alice released from (content keys made with the team's identity secret, the same on both machines)."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    copy = tmp_path / "copy.csv"
    copy.write_bytes(("\r\n".join([lines[0], *reversed(lines[1:])]) + "\r\n").encode("utf-8"))
    alice = team.url(team.users["alice"])
    bob = team.url(team.users["bob"])
    r = dpdesk(
        "release",
        str(PLAN),
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "a"),
        home=tmp_path / "home-a",
        ledger=alice,
    )
    assert r.returncode == 0, r.stderr
    r = dpdesk("ledger", "--data", str(copy), home=tmp_path / "home-b", ledger=bob)
    assert r.returncode == 0, r.stderr
    assert "1 release(s); left: epsilon 0.1" in r.stdout
    r = dpdesk(
        "release",
        str(PLAN),
        "--data",
        str(copy),
        "--out",
        str(tmp_path / "b"),
        home=tmp_path / "home-b",
        ledger=bob,
    )
    assert r.returncode == 1 and "over budget" in r.stderr, r.stderr
    datasets = team.sql("SELECT count(*) FROM dpdesk.datasets")
    keys = team.sql("SELECT count(DISTINCT dataset), count(*) FROM dpdesk.keys")
    assert datasets == [(1,)] and keys == [
        (1, 4)
    ]  # alice's file, its rows (two schemes), bob's file: one dataset


def test_a_home_with_its_own_releases_connects_only_when_told_their_budget_is_not_carried(
    team: Team, tmp_path: Path
) -> None:
    """TA-9: a home that released from a table with its own ledger, then connected, would start that table afresh
    in the team's ledger: connect refuses (exit 2) and says so, unless --leave-local-ledgers."""
    home = tmp_path / "home"
    r = dpdesk("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "local"), home=home)
    assert r.returncode == 0, r.stderr
    url = team.url(team.users["alice"])
    r = dpdesk("team", "connect", url, home=home)
    assert (
        r.returncode == 2
        and "not in the team's ledger yet" in r.stderr
        and "--leave-local-ledgers" in r.stderr
        and "dpdesk team import --data FILE" in r.stderr
    )
    assert not (home / "team.json").exists()
    r = dpdesk("team", "connect", url, "--leave-local-ledgers", home=home)
    assert r.returncode == 0, r.stderr
    r = dpdesk("team", "disconnect", home=home)
    assert r.returncode == 0 and "not in them" in r.stdout


@pytest.mark.slow
def test_the_readmes_walk_through_runs_as_written(pg_server: PgServer, tmp_path: Path) -> None:
    """The team's walk-through the README points to (docs/team-ledger.md, "A team's budget in a dozen commands"):
    each command, as written, by the person its comment names (a home each), with
    the example server replaced by this test's, plan.json by the sample plan under a budget two releases fit, and
    survey.csv by the sample table; every command succeeds but the one the README says is refused (exit 1)."""
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "team-ledger.md").read_text(encoding="utf-8")
    block = page.split("## A team's budget in a dozen commands", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    plan = plan_with_budget(tmp_path, 2.0)
    database = pg_server.new_database("walkthrough")
    users = {"alice": "walk_alice", "bob": "walk_bob", "olga": "walk_olga"}
    who = ""
    ran = []
    for line in block.strip().splitlines():
        if line.startswith("#"):
            who = line[2:].split(",")[0].split(" ")[0]  # "the", "alice", "bob"
            continue
        command, _sep, comment = line.partition("#")
        words = command.split()
        assert words[0] == "dpdesk", line
        args = []
        for w in words[1:]:
            if w.startswith("postgresql://"):
                user = w.split("//", 1)[1].split("@", 1)[0]
                w = pg_server.url(users.get(user, user), database)
            elif w == "plan.json":
                w = str(plan)
            elif w == "survey.csv":
                w = str(DATA)
            elif w.startswith("release-") or w.endswith(".pdf"):
                w = str(tmp_path / w)
            elif w in users:
                w = users[w]
            args.append(w)
        r = dpdesk(*args, home=tmp_path / f"home-{who}")
        expected = 1 if "refused (exit 1)" in comment else 0
        assert r.returncode == expected, (line, r.returncode, r.stderr)
        ran.append(" ".join(words[1:3]))
        if words[1:3] == [
            "team",
            "status",
        ]:  # the officer sees both curators': alice's imported, bob's released
            assert "imported " in r.stdout and f"by {users['alice']}: 1 release(s)" in r.stdout, r.stdout
            assert "released " in r.stdout and f"by {users['bob']}: epsilon 0.9" in r.stdout, r.stdout
    assert [r.split()[0] for r in ran].count("release") == 3
    assert (
        ran.count("team connect") == 3 and ran.count("team init") == 1 and ran.count("team add-curator") == 2
    )
    assert (
        ran.count("team status") == 1 and ran.count("team import") == 1 and ran.count("team add-officer") == 1
    )
    assert ran.count("team statement") == 1 and (tmp_path / "team-statement.pdf").stat().st_size > 0
