"""Issue 27: a team release killed with SIGKILL at its durable steps, and the server stopped in the middle of one.

The steps of a team release are learnt with ``DPDESK_FAULT=trace:FILE`` (:mod:`dpdesk.core.common.faults`): the
identity record, the appends to the team ledger (the spend, later the package entry) and the package's files. The
real CLI (``python -m dpdesk release``, ``DPDESK_LEDGER`` naming a real PostgreSQL) is then killed at each of them
(``kill:N``). Afterwards:

- the team ledger's chain verifies (``dpdesk ledger verify --data DATA``);
- the database's budget (``dpdesk.releases``) states exactly the spends of the chain, never more;
- a kill before the spend's append charges nothing, a kill after it has charged the release;
- no value is revealed without its spend in the chain: ``--out`` is absent (the package's files stay in the
  ``.NAME.dpdesk-writing`` folder beside it) or complete, and then its values' hash is a spend's;
- the next command sees a charged release whose package was not written as it sees one of the file store (the
  same entries, the same budget), and ``ledger export-release`` writes its package at no cost.

The server stopped (``pg_ctl stop -m immediate``) while a release is held between its check and its charge
(``stop:N`` at the spend's append: the process stops itself, the test stops the server and lets it go on): exit
5, a message naming the server, nothing charged or revealed. Stopped after the charge, before the package entry:
the release was charged, and the message says so (exit 4), never that nothing was charged.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dpdesk.core.common import faults
from dpdesk.core.dp.values import Row, rows_hash
from tests.conftest import SAMPLES
from tests.pgserver import PgServer
from tests.team.conftest import Team

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]
PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
APPEND = "append to the team ledger"


def env_for(home: Path, ledger: str | None, fault: str | None = None) -> dict[str, str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    env.pop("DPDESK_LEDGER", None)
    env.pop(faults.ENV, None)
    if ledger is not None:
        env["DPDESK_LEDGER"] = ledger
    if fault is not None:
        env[faults.ENV] = fault
    return env


def cli(
    home: Path, *args: object, ledger: str | None = None, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=env_for(home, ledger, fault),
        timeout=300,
        check=False,
    )


def release(
    home: Path, plan: Path, out: Path, *, ledger: str | None, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    return cli(home, "release", plan, "--data", DATA, "--out", out, ledger=ledger, fault=fault)


def big_plan(tmp_path: Path) -> Path:
    """The sample plan with room for every release of a test (each kill after the charge spends 0.9)."""
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 100.0
    plan["budget"]["delta"] = 1e-4  # each release spends delta 1e-7
    out = tmp_path / "plan.json"
    out.write_text(json.dumps(plan), encoding="utf-8")
    return out


def verified(home: Path, ledger: str | None) -> list[dict[str, object]]:
    """The dataset's entries, after ``ledger verify`` said the chain verifies."""
    r = cli(home, "ledger", "verify", "--data", DATA, "--json", ledger=ledger)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-1000:])
    entries = json.loads(r.stdout)["entries"]
    assert isinstance(entries, list)
    return entries


def spends(entries: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in entries if e["type"] == "spend"]


def chain_epsilon(entries: list[dict[str, object]]) -> float:
    costs: list[dict[str, float]] = [c for e in spends(entries) for c in e["costs"]]  # type: ignore[attr-defined]
    return sum((float(c["epsilon"]) for c in costs), 0.0)


def traced(home: Path, plan: Path, tmp_path: Path, ledger: str | None) -> list[str]:
    """The names of the durable steps of a release on a known dataset, in order: the same for two releases in a
    row (the home keeps a record of the data file's contents once, after the dataset's first release: a release
    traced before that would count more steps than the ones killed). Three releases are made."""
    assert release(home, plan, tmp_path / "second", ledger=ledger).returncode == 0
    found = []
    for n in (1, 2):
        trace = tmp_path / f"trace{n}.txt"
        r = release(home, plan, tmp_path / "traced", ledger=ledger, fault=f"trace:{trace}")
        assert r.returncode == 0, r.stderr[-1000:]
        shutil.rmtree(tmp_path / "traced")
        found.append([line.split(" ", 1)[1] for line in trace.read_text(encoding="utf-8").splitlines()])
    assert found[0] == found[1], found
    return found[1]


def read_rows(csv_file: Path) -> list[Row]:
    lines = csv_file.read_text(encoding="utf-8").splitlines()
    return [Row(*next(iter(csv.reader([ln])))) for ln in lines[1:]]


def unpackaged(entries: list[dict[str, object]]) -> list[int]:
    """The sequence numbers of the spends no package entry follows (charged releases whose package was not
    written, as the ledger shows them)."""
    packaged = {e.get("spend_seq") for e in entries if e["type"] == "package"}
    return [int(e["seq"]) for e in spends(entries) if e["seq"] not in packaged]  # type: ignore[call-overload]


def test_sigkill_at_each_step_of_a_team_release(team: Team, tmp_path: Path) -> None:
    url = team.url(team.users["alice"])
    home = team.home(tmp_path, "alice")
    plan = big_plan(tmp_path)
    assert release(home, plan, tmp_path / "first", ledger=url).returncode == 0  # the dataset and its settings
    steps = traced(home, plan, tmp_path, url)
    # a release on a known dataset: the spend's append, the package's files, the package entry's append, the rename
    assert steps.count(APPEND) == 2, steps
    charge = steps.index(APPEND) + 1  # kill:charge stops the process just before the spend is appended
    assert "write release.csv" in steps[charge:] and steps[-2] == "rename traced", steps
    # every step that starts something (the fsyncs between them leave the same state as their neighbours)
    chosen = [n for n, s in enumerate(steps, 1) if s.startswith(("append", "write", "rename"))] + [len(steps)]
    assert charge in chosen and len(chosen) >= 8, chosen
    before = verified(home, url)
    for n in chosen:
        where = f"kill:{n} ({steps[n - 1]})"
        out = tmp_path / f"out{n}"
        r = release(home, plan, out, ledger=url, fault=f"kill:{n}")
        assert r.returncode == -signal.SIGKILL, (where, r.returncode, r.stderr[-500:])
        entries = verified(home, url)  # the chain survives every kill
        new = len(spends(entries)) - len(spends(before))
        assert new == (0 if n <= charge else 1), (where, new)
        # the database's budget states the chain's spends: no more (nor fewer) releases, no more epsilon
        count, epsilon = team.sql("SELECT count(*), coalesce(sum(epsilon), 0) FROM dpdesk.releases")[0]
        assert count == len(spends(entries)), (where, count)
        assert float(epsilon) == pytest.approx(chain_epsilon(entries)), where  # type: ignore[arg-type]
        recorded = {e["values_hash"] for e in spends(entries)}
        if out.exists():  # renamed into place: whole, and charged before it was written
            assert n == len(steps), where
            assert {p.name for p in out.iterdir()} >= {"release.csv", "plan.json", "ledger.json"}, where
            assert rows_hash(read_rows(out / "release.csv")) in recorded, where
        else:  # whatever was written waits in the marked folder beside it, never at --out
            assert not out.exists(), where
        before = entries
    # every kill after the charge and before the package entry left a charged release without its package, as the
    # ledger shows it; the next commands count it, and write its package at no cost
    waiting = unpackaged(before)
    assert len(waiting) == sum(1 for n in chosen if charge < n <= steps.index(APPEND, charge) + 1), waiting
    r = cli(home, "budget", plan, "--data", DATA, "--json", ledger=url)
    assert r.returncode == 0, r.stderr[-500:]
    assert json.loads(r.stdout)["releases_so_far"] == len(spends(before))
    again = tmp_path / "again"
    r = cli(home, "ledger", "export-release", waiting[0], "--data", DATA, "--out", again, ledger=url)
    assert r.returncode == 0, r.stderr[-500:]
    spend = next(e for e in before if e["seq"] == waiting[0])
    assert rows_hash(read_rows(again / "release.csv")) == spend["values_hash"]
    assert len(spends(verified(home, url))) == len(spends(before))  # re-exported at no cost
    # and the next release charges and reveals as usual (no lock is left held by a killed process)
    r = release(home, plan, tmp_path / "after", ledger=url)
    assert r.returncode == 0, r.stderr[-500:]
    assert len(spends(verified(home, url))) == len(spends(before)) + 1


def test_a_charged_release_killed_before_its_package_reads_as_with_the_file_store(
    team: Team, tmp_path: Path
) -> None:
    """The same kill (just after the spend is durable) in a file-store home and a team home: the next commands
    read the same history and budget."""
    plan = big_plan(tmp_path)
    seen = {}
    for name, ledger in (("files", None), ("team", team.url(team.users["bob"]))):
        home = tmp_path / f"home-{name}"
        (tmp_path / name).mkdir()
        assert release(home, plan, tmp_path / f"{name}-first", ledger=ledger).returncode == 0
        steps = traced(home, plan, tmp_path / name, ledger)
        n = steps.index("write release.csv") + 1
        out = tmp_path / f"{name}-killed"
        r = release(home, plan, out, ledger=ledger, fault=f"kill:{n}")
        assert r.returncode == -signal.SIGKILL, r.stderr[-500:]
        assert not out.exists()
        entries = verified(home, ledger)
        b = cli(home, "budget", plan, "--data", DATA, "--json", ledger=ledger)
        assert b.returncode == 0, b.stderr[-500:]
        listing = cli(home, "ledger", "--data", DATA, ledger=ledger)
        assert listing.returncode == 0, listing.stderr[-500:]
        kinds = [line.split()[2] for line in listing.stdout.splitlines() if line.strip()[:1].isdigit()]
        seen[name] = (
            [e["type"] for e in entries],
            unpackaged(entries),
            json.loads(b.stdout)["releases_so_far"],
            kinds,
        )
    assert seen["team"] == seen["files"], seen
    types, waiting, so_far, _kinds = seen["team"]
    assert types == ["settings"] + ["spend", "package"] * 4 + ["spend"]
    assert waiting == [10] and so_far == 5


def _wait_stopped(pid: int) -> None:
    """Until the process has stopped itself (its state in /proc is T), or has ended."""
    import time

    stat = Path(f"/proc/{pid}/stat")
    while stat.exists():
        state = stat.read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
        if state in ("T", "t", "Z"):
            return
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state in /proc")
def test_the_server_stopped_between_the_check_and_the_charge(tmp_path: Path) -> None:
    server = PgServer().start()
    try:
        from dpdesk.core.ledger.pgstore import create_team, grant

        create_team(server.url(), "solo")
        grant(server.url(), "carol", "curator")
        url = server.url("carol")
        home = tmp_path / "home"
        plan = big_plan(tmp_path)
        assert release(home, plan, tmp_path / "first", ledger=url).returncode == 0
        steps = traced(home, plan, tmp_path, url)
        n = steps.index(APPEND) + 1  # the budget was checked, under the chain's lock; the spend is next
        out = tmp_path / "out"
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpdesk", "release", str(plan), "--data", str(DATA), "--out", str(out)],
            env=env_for(home, url, f"stop:{n}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_stopped(proc.pid)
            server.stop("immediate")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        _stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 5, (proc.returncode, stderr[-1000:])
        assert "cannot reach the team ledger at postgresql://carol@" in stderr, stderr[-1000:]
        assert "nothing was charged or revealed" in stderr and "Traceback" not in stderr, stderr[-1000:]
        assert not out.exists() and not list(tmp_path.glob(".out.dpdesk-writing/*"))
        server.start_again()
        entries = verified(home, url)
        assert len(spends(entries)) == 4 and unpackaged(entries) == []
        assert server.sql("SELECT count(*) FROM dpdesk.releases") == [(4,)]
        r = release(home, plan, tmp_path / "after", ledger=url)  # the lock went with the lost connection
        assert r.returncode == 0, r.stderr[-500:]
    finally:
        server.remove()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state in /proc")
def test_the_server_stopped_after_the_charge_says_the_release_was_charged(tmp_path: Path) -> None:
    """Stopped while the package is written (its entry cannot be appended): the spend is in the chain, so the
    message says the release was charged and how to write its package, never that nothing was charged."""
    server = PgServer().start()
    try:
        from dpdesk.core.ledger.pgstore import create_team, grant

        create_team(server.url(), "solo")
        grant(server.url(), "carol", "curator")
        url = server.url("carol")
        home = tmp_path / "home"
        plan = big_plan(tmp_path)
        assert release(home, plan, tmp_path / "first", ledger=url).returncode == 0
        steps = traced(home, plan, tmp_path, url)
        n = steps.index("write release.csv") + 1
        out = tmp_path / "out"
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpdesk", "release", str(plan), "--data", str(DATA), "--out", str(out)],
            env=env_for(home, url, f"stop:{n}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_stopped(proc.pid)
            server.stop("immediate")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        _stdout, stderr = proc.communicate(timeout=300)
        assert "Traceback" not in stderr, stderr[-2000:]
        assert proc.returncode == 4, (proc.returncode, stderr[-1000:])
        last = stderr.strip().splitlines()[-1]
        assert "was charged" in last and "export-release 10" in last, last
        assert "nothing was charged" not in last, last
        assert not out.exists()
        server.start_again()
        entries = verified(home, url)
        assert unpackaged(entries) == [10]
        r = cli(home, "ledger", "export-release", 10, "--data", DATA, "--out", tmp_path / "again", ledger=url)
        assert r.returncode == 0, r.stderr[-500:]
        assert rows_hash(read_rows(tmp_path / "again" / "release.csv")) == entries[9]["values_hash"]
    finally:
        server.remove()
