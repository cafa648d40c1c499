#!/usr/bin/env python3
"""Bounding rows per person (issue 30, item 1): the keyed-hash choice against the random choice it replaced.

A script, not a test. Each measurement is a fresh process (the parent imports neither numpy nor polars) that
builds a table of ``--rows`` rows as the loader represents it (a 128-bit id hash, a float, an int with a missing
mask and a category column; people with 1 to 6 rows), then times ``bound_rows_per_person`` once (CPU time of the
child) and reports its peak RSS (``ru_maxrss`` from ``os.wait4``). ``old`` is the random choice of the code before
(a tie-break from ``secrets`` sorted with the id), re-stated here; ``new`` is this tree's keyed hash. Runs are
interleaved round by round in rotated order, and the CPU used by other processes meanwhile is recorded (the
machine is shared); medians and minimums are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import resource, secrets, sys, time
import numpy as np
from dpdesk.core.dp.bounding import derive_key, keep_smallest
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import ColumnSpec

n, which = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)  # benchmark data only
people = np.repeat(np.arange(n), rng.integers(1, 7, n))[:n]
p64 = people.astype(np.uint64)
ids = np.column_stack([p64 * np.uint64(0x9E3779B97F4A7C15), p64 ^ np.uint64(0x5555)])
x = rng.uniform(-9, 5, n)
nn = rng.integers(0, 20, n).astype(np.int8)
g = rng.integers(-1, 3, n).astype(np.int16)
cols = {
    "x": Column(ColumnSpec("x", "float", (-7.0, 3.0)), x),
    "n": Column(ColumnSpec("n", "int", (0, 20)), nn, rng.random(n) < 0.05),
    "g": Column(ColumnSpec("g", "category", categories=("a", "b", "c")), g),
}
t = Table("t", "", n, cols, ids, np.zeros(n, dtype=bool))


def old(table, k):
    tiebreak = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
    i = table.ids.reshape(n, -1)
    order = np.lexsort((tiebreak, *(i[:, j] for j in reversed(range(i.shape[1])))))
    s = i[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (s[1:] != s[:-1]).any(axis=1)
    start_idx = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.arange(n) - start_idx
    keep = np.empty(n, dtype=bool)
    keep[order] = rank < k
    return keep & ~table.ids_missing


base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.process_time()
if which == "old":
    keep = old(t, 2)
else:
    keep = keep_smallest(t, 2, derive_key(b"benchmark"))
print(time.process_time() - t0, base, int(keep.sum()))
"""


def other_cpu() -> float:
    """CPU seconds used by every process so far (from /proc/stat), to subtract our own share."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    return sum(int(v) for v in fields[:3]) / os.sysconf("SC_CLK_TCK")


def run(rows: int, which: str) -> tuple[float, float, float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before_all, t0 = other_cpu(), time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(rows), which], stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    out = p.stdout.read().decode()
    _pid, status, usage = os.wait4(p.pid, 0)
    assert status == 0, out
    wall = time.perf_counter() - t0
    cpu_s, base_kib, _kept = out.split()
    own = usage.ru_utime + usage.ru_stime
    others = max(0.0, other_cpu() - before_all - own)
    return float(cpu_s), usage.ru_maxrss / 1024, int(base_kib) / 1024, others / wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    got: dict[str, list[tuple[float, float, float, float]]] = {"old": [], "new": []}
    for r in range(a.rounds):
        for which in ["old", "new"] if r % 2 == 0 else ["new", "old"]:
            got[which].append(run(a.rows, which))
    print(f"{a.rows:,} rows, {a.rounds} rounds, interleaved, fresh processes")
    print(
        "| choice | CPU s (median) | CPU s (min) | peak MiB (median) | before bounding MiB | other cores busy |"
    )
    print("|---|---|---|---|---|---|")
    for which, rs in got.items():
        print(
            f"| {which} | {statistics.median(r[0] for r in rs):.2f} | {min(r[0] for r in rs):.2f} | "
            f"{statistics.median(r[1] for r in rs):.0f} | {statistics.median(r[2] for r in rs):.0f} | "
            f"{statistics.median(r[3] for r in rs):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
