"""The fast inner loop: ``pytest -m "not slow"`` on this tree against a baseline commit, in fresh processes.

CONTRIBUTING.md and the README promise a fast loop under a minute. This times it: the baseline commit is unpacked
with ``git archive`` into a temporary folder, and the two trees' fast loops run alternately, round by round
(baseline first in odd rounds, this tree first in even ones), each with ``PYTHONPATH`` set to its tree. Per run:
wall time from the parent, the child's CPU (user + system, all its processes) and peak RSS from ``os.wait4``, how
many tests passed. "Other cores" is the CPU other processes used meanwhile (from /proc/stat; 2.0 = the whole
machine): on a shared machine the wall time grows with it, the CPU time much less.

Run from the repository root: python benchmarks/fast_loop.py [--against main] [--rounds 2] [test files]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _busy() -> float:
    with open("/proc/stat") as f:
        parts = [float(x) for x in f.readline().split()[1:]]
    return (sum(parts) - parts[3] - parts[4]) / os.sysconf("SC_CLK_TCK")


def run(tree: Path, paths: list[str]) -> dict[str, float]:
    """One fast loop in ``tree``: wall and CPU seconds, peak RSS (MiB), tests passed, other cores busy."""
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *paths]
    b0, t0 = _busy(), time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode(errors="replace")
    cpu = usage.ru_utime + usage.ru_stime
    passed = re.search(r"(\d+) passed", text)
    return {
        "wall": wall,
        "cpu": cpu,
        "rss": usage.ru_maxrss / 1024,
        "passed": float(passed.group(1)) if passed else 0.0,
        "failed": float(os.waitstatus_to_exitcode(status) != 0),
        "other": max(0.0, (_busy() - b0 - cpu) / wall),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", default="main", help="the baseline commit (default: main)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("paths", nargs="*", help="test files only (a quick check of the script); default: all")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="fast-loop-"))
    archive = subprocess.run(
        ["git", "archive", args.against], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    trees = {f"baseline ({args.against})": base, "this tree": ROOT}
    res: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    names = list(trees)
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            res[name].append(one := run(trees[name], args.paths))
            print(
                f"round {r + 1} {name}: wall {one['wall']:.1f} s, CPU {one['cpu']:.1f} s, "
                f"{one['passed']:.0f} passed{' (FAILED)' if one['failed'] else ''}, other cores {one['other']:.2f}",
                flush=True,
            )
    shutil.rmtree(base, ignore_errors=True)
    print(f"\n{args.rounds} alternating rounds, fresh processes")
    print(
        "| tree | tests | wall median s | wall min s | CPU median s | CPU min s | peak RSS MiB | other cores |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in res.items():
        walls, cpus = [x["wall"] for x in runs], [x["cpu"] for x in runs]
        print(
            f"| {name} | {runs[0]['passed']:.0f} | {statistics.median(walls):.1f} | {min(walls):.1f} | "
            f"{statistics.median(cpus):.1f} | {min(cpus):.1f} | {statistics.median(x['rss'] for x in runs):.0f} | "
            f"{statistics.median(x['other'] for x in runs):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
