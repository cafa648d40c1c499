#!/usr/bin/env python3
"""The in-memory engine (issue 30, item 1) against the exact statistics it replaced, in one process.

A script, not a test. On bench.py's 20-query plan and its 1M-row table (``benchmarks/out/census_1M.csv``, made by
``bench.py``; ``--data`` another), the exact statistics are computed by ``exact_statistic`` query by query (the
release's path before) and by :class:`~dpdesk.core.release.engines.memory.InMemoryEngine` (the mergeable states,
then ``from_partial``), alternately in rotated order; both must agree exactly. Prints CPU-time medians and minimums.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench

    from dpdesk.core.common.progress import NULL_PROGRESS
    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.engines.memory import InMemoryEngine

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(ROOT / "benchmarks" / "out" / "census_1M.csv"))
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    plan = parse_plan(bench.plan_dict())
    designs = design_plan(plan)
    table = load_table(a.data, plan.columns)
    keep = np.ones(table.n_rows, dtype=bool)
    times: dict[str, list[float]] = {"exact_statistic": [], "engine": []}
    for r in range(a.rounds):
        for which in ("exact_statistic", "engine") if r % 2 == 0 else ("engine", "exact_statistic"):
            t0 = time.process_time()
            if which == "engine":
                got = InMemoryEngine(table, plan, designs).aggregate(None, NULL_PROGRESS).exacts
                new = [(e.vectors, e.utilities) for e in got]
            else:
                old = [
                    (e.vectors, e.utilities)
                    for e in (exact_statistic(d, table, keep, plan.columns) for d in designs)
                ]
            times[which].append(time.process_time() - t0)
    assert old == new, "the engine's exact statistics differ"
    print(f"{table.n_rows:,} rows, {len(designs)} queries, {a.rounds} rounds; CPU seconds:")
    for which, ts in times.items():
        print(f"  {which}: median {statistics.median(ts):.3f}, min {min(ts):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
