"""Typed ledger entries against the code before them: the whole-chain work of a long ledger.

Issue 12 ("JSON only at the edges") made every ledger entry a typed, immutable object (``dpdesk.core.ledger.entries``)
instead of a dict. What that can cost is the reading of a long ledger: ``Ledger.verify()`` (each line parsed,
chain-checked and now typed), then what every command computes from the entries (the state a checkpoint holds,
``checkpoint.state_of``, and the budget report). Both codes do the same work on the same file: a ledger built by
this tree's code (one real release, then ``--entries`` - 1 copies of its spend appended, with no checkpoint, so
that neither code reads from one), read by each code in fresh processes, interleaved round by round (the order
alternating), peak RSS from ``os.wait4``, the load average recorded. The budget spent, printed by both, must agree.

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/entries.py --old 3d32e7c --entries 5000 --rounds 6
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BUILD = """
import os, sys
from pathlib import Path
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.plan.reader import load_plan, parse_plan
from dpdesk.core.release.steps import release
home, n = Path(sys.argv[1]), int(sys.argv[2])
d = load_plan("resources/samples/cps_wages_plan.json").to_dict()
d["budget"] = {"epsilon": 100000.0, "delta": 1e-3}
res = release(parse_plan(d), "resources/samples/census_sample.csv", home)
stored = res.entry.to_dict()
payload = {k: v for k, v in stored.items() if k not in ("seq", "type", "time", "dataset", "prev", "hash")}
os.fsync = lambda fd: None  # durability is not what is measured here
with Ledger(res.ledger.dataset, res.ledger.path).transaction() as tx:  # no home: plain appends, no checkpoint
    for i in range(n - 1):
        tx.append("spend", {**payload, "release_id": f"copy-{i}"})
print(res.ledger.path)
"""

READ = """
import sys, time
from pathlib import Path
try:  # the tree in wings
    from dpdesk.core.ledger.budget import budget_report
    from dpdesk.core.ledger.checkpoint import state_of
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.plan.reader import load_plan
except ImportError:  # a baseline from before the wings (flat dpdesk/core modules)
    from dpdesk.core.budget import budget_report
    from dpdesk.core.checkpoint import state_of
    from dpdesk.core.ledger import Ledger
    from dpdesk.core.plan import load_plan
path = Path(sys.argv[1])
plan = load_plan(sys.argv[2])
t0 = time.perf_counter()
entries = Ledger(path.stem, path).verify()
t1 = time.perf_counter()
state_of(entries)
report = budget_report(plan, entries)
t2 = time.perf_counter()
print(f"{t1 - t0} {t2 - t1} {report.in_force.spent.epsilon!r}")
"""


def run(tree: Path, code: str, *args: str) -> tuple[str, int]:
    """stdout of ``code`` run in a fresh interpreter on ``tree``, and its peak RSS in KiB."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, env=env, cwd=ROOT, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak RSS
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child failed ({proc.returncode})")
    return out.strip(), usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="3d32e7c", help="the 'before' revision")
    ap.add_argument("--entries", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dpdesk-entries-"))
    try:
        old = scratch / "old"
        old.mkdir()
        archive = subprocess.run(["git", "archive", args.old], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        ledger, _ = run(ROOT, BUILD, str(scratch / "home"), str(args.entries))
        plan = str(ROOT / "resources/samples/cps_wages_plan.json")
        times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        rss: dict[str, list[int]] = {"before": [], "after": []}
        spent: dict[str, set[str]] = {"before": set(), "after": set()}
        for r in range(args.rounds):
            order = [("before", old), ("after", ROOT)]
            for name, tree in order if r % 2 == 0 else order[::-1]:
                out, kib = run(tree, READ, ledger, plan)
                verify, rest, eps = out.split()
                times[name].append((float(verify), float(rest)))
                rss[name].append(kib)
                spent[name].add(eps)
        assert spent["before"] == spent["after"], spent
        print(f"{args.entries} entries, {args.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
        for name in ("before", "after"):
            v = [t[0] for t in times[name]]
            total = [t[0] + t[1] for t in times[name]]
            print(
                f"{name:<7} verify median {statistics.median(v):.3f} s (min {min(v):.3f}); verify + state + "
                f"budget median {statistics.median(total):.3f} s (min {min(total):.3f}); "
                f"peak {max(rss[name]) / 1024:.0f} MiB"
            )
        b = [t[0] for t in times["before"]]
        a = [t[0] for t in times["after"]]
        bt = [t[0] + t[1] for t in times["before"]]
        at = [t[0] + t[1] for t in times["after"]]
        print(
            f"after / before: verify {statistics.median(a) / statistics.median(b):.2f}x, whole "
            f"{statistics.median(at) / statistics.median(bt):.2f}x (medians)"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
