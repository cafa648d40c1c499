"""What a team ledger adds to a release: ``dpdesk release`` with the home's files against the same release with a
team ledger in PostgreSQL over loopback (TCP on 127.0.0.1), as fresh processes interleaved round by round.

Target (issue 27): the team ledger adds at most 50 ms to a release (median of the per-round differences). Each
round runs both, in alternating order, on the bundled 2,000-row sample with the sample plan (its budget raised so
that every round fits); each process is timed from its start to its exit (``time.perf_counter`` around
``subprocess.run``), and the child's CPU time is recorded. Also reported: the median of the two, and their ratio.

Run from the repository root (the product venv is enough; PostgreSQL's server programs must be installed)::

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/team_release.py --rounds 9

Writes ``benchmarks/RESULTS-team.md`` (``--results``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.pgserver import PgServer  # noqa: E402

SAMPLES = REPO / "resources" / "samples"
CSV = SAMPLES / "census_sample.csv"
PLAN = SAMPLES / "cps_wages_plan.json"
TARGET_MS = 50.0


def run_release(home: Path, out: Path, plan: Path, ledger: str | None) -> tuple[float, float]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en", "PYTHONPATH": str(REPO)}
    env.pop("DPDESK_LEDGER", None)
    if ledger is not None:
        env["DPDESK_LEDGER"] = ledger
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "release", str(plan), "--data", str(CSV), "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"release failed ({'team' if ledger else 'files'}): {r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def ledger_work(plan_path: Path, scratch: Path, team: str, rounds: int) -> dict[str, list[float]]:
    """The ledger's own work in a release, in this process: :func:`commit_release` of a prepared release (the lock,
    the ledger read, the checks again, the spend appended; no package), timed alone, file store and team store
    interleaved; the table is loaded once."""
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.release.steps import commit_release, prepare_release
    from dpdesk.core.release.streaming import load_for_release

    plan = load_plan(plan_path)
    table = load_for_release(plan, CSV)
    times: dict[str, list[float]] = {"files": [], "team": []}
    for n in range(rounds + 1):
        for kind in ["files", "team"] if n % 2 == 0 else ["team", "files"]:
            if kind == "team":
                os.environ["DPDESK_LEDGER"] = team
            else:
                os.environ.pop("DPDESK_LEDGER", None)
            prepared = prepare_release(plan, CSV, scratch / f"inproc-{kind}", table=table)
            t0 = time.perf_counter()
            commit_release(prepared, None)
            if n:  # the first round warms up (imports, the first connection)
                times[kind].append(time.perf_counter() - t0)
    os.environ.pop("DPDESK_LEDGER", None)
    return times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--results", default=str(HERE / "RESULTS-team.md"))
    a = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dpdesk-team-bench-"))
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 10_000.0
    plan["budget"]["delta"] = 0.5  # room for every round's delta
    plan_path = scratch / "plan.json"
    plan_path.write_text(json.dumps(plan), encoding="utf-8")
    server = PgServer(tcp=True).start()
    try:
        from dpdesk.core.ledger.pgstore import create_team, grant

        admin = f"postgresql://admin@127.0.0.1:{server.port}/postgres"
        create_team(admin, "bench")
        grant(admin, "alice", "curator")
        team = f"postgresql://alice@127.0.0.1:{server.port}/postgres"
        rows: dict[str, list[tuple[float, float]]] = {"files": [], "team": []}
        # one warm-up of each (page cache, the server's first connection), not counted
        run_release(scratch / "home-files", scratch / "warm-f", plan_path, None)
        run_release(scratch / "home-team", scratch / "warm-t", plan_path, team)
        for n in range(a.rounds):
            order = ["files", "team"] if n % 2 == 0 else ["team", "files"]
            for kind in order:
                out = scratch / f"{kind}-{n}"
                rows[kind].append(
                    run_release(scratch / f"home-{kind}", out, plan_path, team if kind == "team" else None)
                )
        inproc = ledger_work(plan_path, scratch, team, a.rounds * 3)
    finally:
        server.remove()
    in_diffs = [(t - f) * 1000 for f, t in zip(inproc["files"], inproc["team"], strict=True)]
    files_wall = [w for w, _ in rows["files"]]
    team_wall = [w for w, _ in rows["team"]]
    diffs = [(t - f) * 1000 for f, t in zip(files_wall, team_wall, strict=True)]
    med_diff = statistics.median(diffs)
    lines = [
        "# A team ledger's cost in a release",
        "",
        (
            f"`benchmarks/team_release.py --rounds {a.rounds}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}; PostgreSQL on 127.0.0.1 (TCP, loopback), a fresh process per "
            "release, interleaved."
        ),
        "",
        "| | median wall (s) | median CPU (s) |",
        "|---|---|---|",
        f"| file ledger | {statistics.median(files_wall):.3f} | {statistics.median(c for _, c in rows['files']):.3f} |",
        f"| team ledger | {statistics.median(team_wall):.3f} | {statistics.median(c for _, c in rows['team']):.3f} |",
        "",
        f"Per-round difference (team - files): median **{med_diff:.1f} ms** (target ≤ {TARGET_MS:.0f} ms: "
        f"{'met' if med_diff <= TARGET_MS else 'NOT met'}); all rounds: "
        + ", ".join(f"{d:.0f}" for d in diffs)
        + " ms. Ratio of medians: "
        + f"{statistics.median(team_wall) / statistics.median(files_wall):.3f}.",
        "",
        (
            f"The ledger's own work alone (`commit_release` of a prepared release, no package, in one process, "
            f"{len(in_diffs)} interleaved rounds): file store median {statistics.median(inproc['files']) * 1000:.1f} ms, "
            f"team store {statistics.median(inproc['team']) * 1000:.1f} ms; per-round difference median "
            f"**{statistics.median(in_diffs):.1f} ms** (target ≤ {TARGET_MS:.0f} ms: "
            f"{'met' if statistics.median(in_diffs) <= TARGET_MS else 'NOT met'})."
        ),
        "",
    ]
    Path(a.results).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if med_diff <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
