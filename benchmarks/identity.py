#!/usr/bin/env python3
"""The content identity's cost (issue 13, item 3): first time and repeated, against a plain ``load_table``.

A script, not a test. Each measurement is a fresh process (``identity.py --worker MODE FILE HOME``), the three
modes interleaved round by round in rotated order, page cache warm:

* ``load``: ``load_table`` of the plan's 9 declared columns (what a release reads anyway);
* ``first``: ``recognition.resolve`` in a home that has never seen the file (its SHA-256, then the content
  identity of every column, then the cache written);
* ``repeat``: ``recognition.resolve`` in a home that has seen it (the SHA-256 and the cache lookup only).

Usage (from the repository root): ``python benchmarks/identity.py [--rows 1000000 10000000] [--rounds 3]``.
Tables come from ``dpdesk.core.sample.write_census_csv`` into ``benchmarks/out/`` (reused when present).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODES = ("load", "first", "repeat")


def worker(mode: str, data: str, home: str) -> None:
    sys.path.insert(0, str(HERE))
    from bench import column_specs

    from dpdesk.core.loading import load_table
    from dpdesk.core.recognition import resolve

    start = time.perf_counter()
    if mode == "load":
        load_table(data, column_specs())
    else:
        resolve(Path(home), data)
    print(time.perf_counter() - start)


def timed(mode: str, data: Path, home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", mode, str(data), str(home)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    sys.path.insert(0, str(REPO))
    from dpdesk.core.sample import write_census_csv

    out = HERE / "out"
    out.mkdir(exist_ok=True)
    print("| rows | load_table s (median) | first time s | x load | repeated s | x load | rounds |")
    print("|---|---|---|---|---|---|---|")
    for n in args.rows:
        data = out / f"census_{n // 1_000_000}M.csv"
        if not data.exists():
            write_census_csv(data, n)
        data.read_bytes()  # warm the page cache
        seen = Path(tempfile.mkdtemp(prefix="dpdesk-id-seen-"))
        timed("first", data, seen)  # the home that has seen the file
        times: dict[str, list[float]] = {m: [] for m in MODES}
        for r in range(args.rounds):
            for m in MODES[r % 3 :] + MODES[: r % 3]:
                fresh = Path(tempfile.mkdtemp(prefix="dpdesk-id-fresh-"))
                times[m].append(timed(m, data, seen if m == "repeat" else fresh))
                shutil.rmtree(fresh)
        shutil.rmtree(seen)
        med = {m: statistics.median(v) for m, v in times.items()}
        print(
            f"| {n:,} | {med['load']:.3f} | {med['first']:.3f} | {med['first'] / med['load']:.2f} | "
            f"{med['repeat']:.3f} | {med['repeat'] / med['load']:.2f} | {args.rounds} |"
        )


if __name__ == "__main__":
    main()
