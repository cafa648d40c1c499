"""Issue 29, item 1: ``dpdesk team import`` killed with SIGKILL at each of its durable steps never loses or doubles
a spend (a real PostgreSQL).

The steps are learnt with ``DPDESK_FAULT=trace:FILE``; for each, a copy of a home with two releases in its own
ledger is imported into a fresh team ledger with ``kill:N``. After every kill:

- the team's chain verifies, and the database counts either none of the home's releases or all of them, at exactly
  what the home's ledger charged (never part of them, never twice);
- the home's own ledger verifies;
- the table cannot be released through the team while the home's history is not wholly there and marked moved;
- running the import again finishes it: the team counts each release of the home once, the home's ledger is closed.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tests.pgserver import PgServer
from tests.team.conftest import make_team
from tests.team.test_team_crash import DATA, PLAN, cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


def _own_spends(home: Path) -> tuple[list[str], Decimal, list[str]]:
    """The home's own ledger of the table: its release ids, their charged epsilon (exact sum), its entry types."""
    (path,) = sorted((home / "ledgers").glob("ds-*.jsonl"))
    entries = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    spends = [e for e in entries if e["type"] == "spend"]
    total = sum((Decimal(repr(e["charged"]["epsilon"])) for e in spends), Decimal(0))
    return [e["release_id"] for e in spends], total, [e["type"] for e in entries]


def test_sigkill_at_each_step_of_a_team_import(pg_server: PgServer, tmp_path: Path) -> None:
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 10.0
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    template = tmp_path / "template"
    for n in range(2):
        r = cli(template, "release", plan_file, "--data", DATA, "--out", tmp_path / f"own{n}")
        assert r.returncode == 0, r.stderr[-500:]
    ids, spent, types = _own_spends(template)
    assert len(ids) == 2 and types[-1] != "moved"

    # the steps of an import
    first = make_team(pg_server)
    home = tmp_path / "traced"
    shutil.copytree(template, home)
    trace = tmp_path / "trace.txt"
    url = first.url(first.users["alice"])
    r = cli(home, "team", "import", "--data", DATA, ledger=url, fault=f"trace:{trace}")
    assert r.returncode == 0, r.stderr[-500:]
    steps = [line.split(" ", 1)[1] for line in trace.read_text(encoding="utf-8").splitlines()]
    names = (
        "team import: append the import entry",
        "team import: record the move",
        "team import: append the moved",
    )
    assert all(any(s.startswith(n) for s in steps) for n in names), steps
    # the import entry's own append to the database: a kill at it (before it runs) or before leaves the team as it was
    mine = next(i for i, s in enumerate(steps, 1) if s.startswith(names[0]))
    team_append = next(i for i, s in enumerate(steps, 1) if i > mine and s == "append to the team ledger")

    for n in range(1, len(steps) + 1):
        where = f"kill:{n} ({steps[n - 1]})"
        team = make_team(pg_server)
        url = team.url(team.users["alice"])
        home = tmp_path / f"home{n}"
        shutil.copytree(template, home)
        r = cli(home, "team", "import", "--data", DATA, ledger=url, fault=f"kill:{n}")
        assert r.returncode == -signal.SIGKILL, (where, r.returncode, r.stderr[-500:])
        # the home's own ledger verifies (read as a disconnected home reads it)
        v = cli(home, "ledger", "verify", "--data", DATA)
        assert v.returncode == 0, (where, v.stderr[-500:])
        # the team counts none of the home's releases or all of them, at exactly what they charged
        rows = team.sql("SELECT release_id, epsilon FROM dpdesk.releases ORDER BY release_id")
        assert len(rows) in (0, 2), (where, rows)
        if rows:
            assert n > team_append, where
            assert sorted(str(x[0]) for x in rows) == sorted(ids), where
            assert sum((Decimal(str(x[1])) for x in rows), Decimal(0)) == spent, where
            t = cli(home, "ledger", "verify", "--data", DATA, ledger=url)
            assert t.returncode == 0, (where, t.stderr[-500:])
        else:
            assert n <= team_append, where
        # until the team holds the home's history and the home has recorded that it moved, the table is not
        # released through the team
        (register,) = (home / "ledgers" / "heads").glob("ds-*.json")
        marked = "moved_to" in json.loads(register.read_text(encoding="utf-8"))
        assert not marked or rows, where
        if _own_spends(home)[2][-1] != "moved":
            out = tmp_path / f"early{n}"
            e = cli(home, "release", plan_file, "--data", DATA, "--out", out, ledger=url)
            assert e.returncode == 3 and "team import" in e.stderr and not out.exists(), (
                where,
                e.stderr[-300:],
            )
        # the import run again finishes it, carrying nothing twice
        again = cli(home, "team", "import", "--data", DATA, ledger=url)
        assert again.returncode == 0, (where, again.stderr[-500:])
        rows = team.sql("SELECT release_id, epsilon FROM dpdesk.releases")
        assert sorted(str(x[0]) for x in rows) == sorted(ids), where
        assert sum((Decimal(str(x[1])) for x in rows), Decimal(0)) == spent, where
        (entries_count,) = team.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'import'")[0]
        assert entries_count == 1, (where, entries_count)
        assert _own_spends(home)[2][-1] == "moved", where
        closed = cli(home, "release", plan_file, "--data", DATA, "--out", tmp_path / f"closed{n}")
        assert closed.returncode == 3 and "imported into a team's ledger" in closed.stderr, where
