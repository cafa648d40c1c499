#!/usr/bin/env python3
"""Tables larger than memory (issue 16, item 3): a streamed release under a memory limit, against polars' own
streaming engine, and the in-memory statistics' peak before and after the chunked statistics.

A script, not a test (see benchmarks/README.md, "Tables larger than memory"). Results go to
``benchmarks/RESULTS-stream.md``. Methodology as in bench.py: every measurement is a fresh process whose peak
RSS is ``ru_maxrss`` from ``os.wait4`` (the parent stays small: it imports neither numpy nor polars), runs are
interleaved round by round in rotated order, the CPU used by other processes meanwhile is recorded, and the
tables give medians and minimums.

Measured:

* ``release``: the whole ``dpdesk release PLAN --data BIG.csv --out DIR --memory-limit 512MiB`` (the 20-query
  plan of bench.py; a fresh dpdesk home each time, so the dataset is new: its identity pass, the data check,
  the ledger and the report are included);
* ``stream``: dpdesk's streaming pass alone (``load_for_release`` streamed + the exact aggregates, SHA-256
  included), the part that polars is compared with;
* ``polars``: ``pl.collect_all([...], engine="streaming")`` over ``pl.scan_csv`` with the declared schema,
  computing the same aggregates (counts, clipped sums, per-group counts and sums, the bins of the histograms,
  the value counts the quantiles need); no SHA-256, float sums (not fixed-point);
* ``stats-old`` / ``stats-new``: the in-memory 20 statistics on the 10M-row table (loaded whole), peak RSS after
  loading and after the statistics, with main's code (``--old-tree``) and this tree's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCRATCH = Path("/work/scratch-stream")
RESULTS = HERE / "RESULTS-stream.md"


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _cpu_busy_s() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def run_wait4(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """A fresh process reaped by ``os.wait4``: its wall time, peak RSS, CPU, the other processes' CPU meanwhile,
    and its last JSON line."""
    busy0 = _cpu_busy_s()
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        busy1 = _cpu_busy_s()
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode}):\n{err.decode(errors='replace')[-3000:]}")
    res: dict[str, Any] = {}
    lines = out.decode().strip().splitlines()
    if lines and lines[-1].startswith("{"):
        res = json.loads(lines[-1])
    cpu = ru.ru_utime + ru.ru_stime
    res.update(wall_s=wall, peak_rss_mib=ru.ru_maxrss / 1024.0, cpu_s=cpu)
    res["other_cores"] = max(0.0, (busy1 - busy0 - cpu) / wall) if wall > 0 else float("nan")
    return res


# ----------------------------------------------------------------------------- workers (child processes)


def plan_dict() -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import bench

    return bench.plan_dict()  # type: ignore[no-any-return]


def worker_stream(path: str, limit: str) -> dict[str, Any]:
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release import streaming as st

    plan = parse_plan(plan_dict())
    t = time.perf_counter()
    table = st.load_for_release(plan, path, memory_limit=st.parse_memory(limit))
    exacts = st.streamed_exacts(table)
    assert exacts is not None, "the table was not streamed"
    return {"seconds": time.perf_counter() - t, "rows": table.n_rows, "people": exacts[0].vectors[0][0]}


def worker_polars(path: str, engine: str = "streaming") -> dict[str, Any]:
    """The same aggregates as 8 lazy queries in one ``pl.collect_all``: polars' streaming engine (by default), or
    with ``engine`` "in-memory" (its default engine: the common scan is shared, the columns held in memory)."""
    import polars as pl

    sys.path.insert(0, str(HERE))
    import bench

    t = time.perf_counter()
    lf = pl.scan_csv(path, schema=bench._polars_schema(pl, False))
    w = pl.col("wage").clip(0.0, 5000.0)
    h = pl.col("hours").clip(0, 99).cast(pl.Int64)
    a = pl.col("age").clip(0, 100).cast(pl.Int64)
    bins = bench.WAGE_BINS
    queries = [
        lf.select(
            pl.len().alias("n"),
            w.sum().alias("wage"),
            h.sum().alias("hours"),
            a.sum().alias("age"),
            *[((w >= lo) & (w < hi)).sum().alias(f"wb{lo}") for lo, hi in itertools.pairwise(bins)],
        ),
        lf.group_by("region").agg(pl.len(), w.sum()),
        lf.group_by("occupation").agg(pl.len(), h.sum()),
        lf.group_by("sex").agg(pl.len(), w.sum()),
        lf.group_by("state").agg(pl.len(), h.sum()),
        lf.group_by("region", "occupation").agg(pl.len()),
        lf.group_by(a.alias("a")).agg(pl.len()),  # age bands and the median's candidate counts
        lf.group_by((w / 5.0).floor().alias("c")).agg(
            pl.len(), (w == (w / 5.0).floor() * 5.0).sum().alias("eq")
        ),
    ]
    frames = pl.collect_all(queries, engine=engine)  # type: ignore[arg-type]
    return {"seconds": time.perf_counter() - t, "rows": int(frames[0]["n"][0])}


def worker_polars_mem(path: str) -> dict[str, Any]:
    return worker_polars(path, "in-memory")


def worker_polars_scan(path: str) -> dict[str, Any]:
    """The floor of any one-pass polars computation: the streaming engine scans the file with the declared schema
    and computes only a count and one clipped sum."""
    import polars as pl

    sys.path.insert(0, str(HERE))
    import bench

    t = time.perf_counter()
    lf = pl.scan_csv(path, schema=bench._polars_schema(pl, False))
    frame = lf.select(pl.len().alias("n"), pl.col("wage").clip(0.0, 5000.0).sum()).collect(engine="streaming")
    return {"seconds": time.perf_counter() - t, "rows": int(frame["n"][0])}


def worker_stats(path: str) -> dict[str, Any]:
    """Load the table whole, then the 20 exact statistics: peak RSS after loading and after the statistics."""
    import numpy as np

    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan

    plan = parse_plan(plan_dict())
    table = load_table(path, plan.columns)
    after_load = _status_kib("VmHWM") / 1024.0
    keep = np.ones(table.n_rows, dtype=bool)
    t = time.perf_counter()
    for d in design_plan(plan):
        exact_statistic(d, table, keep, plan.columns)
    return {
        "seconds": time.perf_counter() - t,
        "after_load_mib": after_load,
        "after_stats_mib": _status_kib("VmHWM") / 1024.0,
    }


# ----------------------------------------------------------------------------- the parent


def make_big(path: Path, rows: int) -> None:
    if path.exists():
        return
    code = (
        "import os, sys; from dpdesk.core.preview.sample import write_census_csv; "
        f"write_census_csv({str(path) + '.part'!r}, {rows}); os.replace({str(path) + '.part'!r}, {str(path)!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def warm(path: Path) -> None:
    buf = bytearray(8 * 2**20)
    with path.open("rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", nargs="+")
    ap.add_argument("--rows", type=int, default=76_000_000, help="rows of the big CSV (76M: 4.38 GB)")
    ap.add_argument("--limit", default="512MiB")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--release-rounds", type=int, default=1, help="rounds that also run the whole release")
    ap.add_argument("--ten", default="/work/main/benchmarks/out/census_10M.csv", help="the 10M-row CSV")
    ap.add_argument("--old-tree", help="a copy of main's sources (git archive) for stats-old")
    ap.add_argument("--stats-rounds", type=int, default=2)
    ap.add_argument(
        "--kinds", default="stream,polars,polars-scan", help="the runs of each round, besides the release"
    )
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--data", help="an existing census CSV to use instead of generating census_<rows>M.csv")
    ap.add_argument("--scratch", default=str(SCRATCH), help="scratch folder (generated data, homes, outputs)")
    a = ap.parse_args()
    if a.worker:
        kind, *args = a.worker
        fn = {
            "stream": worker_stream,
            "polars": worker_polars,
            "polars-scan": worker_polars_scan,
            "polars-mem": worker_polars_mem,
            "stats": worker_stats,
        }[kind]
        print(json.dumps(fn(*args)))
        return 0

    scratch = Path(a.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    if a.data:
        big = Path(a.data)
        with big.open("rb") as f:
            a.rows = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(2**24), b"")) - 1
    else:
        big = scratch / f"census_{a.rows // 1_000_000}M.csv"
        make_big(big, a.rows)
    size = big.stat().st_size
    plan_path = scratch / "plan20.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    plan_path.write_text(
        subprocess.run(
            [
                sys.executable,
                "-c",
                (
                    "import json, sys; sys.path.insert(0, 'benchmarks'); import stream; "
                    "print(json.dumps(stream.plan_dict()))"
                ),
            ],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
        ).stdout
    )
    me = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    results: dict[str, list[dict[str, Any]]] = {
        "polars-scan": [],
        "polars-mem": [],
        "release": [],
        "stream": [],
        "polars": [],
        "stats-old": [],
        "stats-new": [],
    }
    log: list[str] = []

    def release_cmd() -> tuple[list[str], dict[str, str]]:
        home = Path(tempfile.mkdtemp(prefix="home-", dir=scratch))
        out = scratch / "release-out"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(plan_path),
            "--data",
            str(big),
            "--out",
            str(out),
            "--memory-limit",
            a.limit,
        ]
        return cmd, {**env, "DPDESK_HOME": str(home)}

    warm(big)
    for r in range(a.rounds):
        kinds = a.kinds.split(",") + (["release"] if r < a.release_rounds else [])
        kinds = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
        for kind in kinds:
            if kind == "release":
                cmd, e = release_cmd()
                res = run_wait4(cmd, e)
                shutil.rmtree(e["DPDESK_HOME"], ignore_errors=True)
            elif kind == "stream":
                res = run_wait4([*me, "stream", str(big), a.limit], env)
            else:
                res = run_wait4([*me, kind, str(big)], env)
            results[kind].append(res)
            line = f"round {r + 1} {kind}: {res['wall_s']:.1f} s, peak {res['peak_rss_mib']:.0f} MiB, other cores {res['other_cores']:.2f}"
            print(line, flush=True)
            log.append(line)
    if a.old_tree:
        ten = Path(a.ten)
        warm(ten)
        for r in range(a.stats_rounds):
            order = [("stats-old", a.old_tree), ("stats-new", str(REPO))]
            if r % 2:
                order.reverse()
            for kind, tree in order:
                res = run_wait4(
                    [sys.executable, str(Path(__file__).resolve()), "--worker", "stats", str(ten)],
                    {**os.environ, "PYTHONPATH": tree},
                )
                results[kind].append(res)
                line = (
                    f"round {r + 1} {kind}: after load {res['after_load_mib']:.0f} MiB, after statistics "
                    f"{res['after_stats_mib']:.0f} MiB, statistics {res['seconds']:.2f} s"
                )
                print(line, flush=True)
                log.append(line)
    (scratch / "stream-results.json").write_text(json.dumps(results, indent=1))
    write_md(results, a, big, size, log)
    return 0


def write_md(
    results: dict[str, list[dict[str, Any]]], a: argparse.Namespace, big: Path, size: int, log: list[str]
) -> None:
    from dpdesk.core.release.streaming import parse_memory

    limit = parse_memory(a.limit)
    git = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True
    ).stdout.strip()
    md = [
        "# Tables larger than memory (issue 16, item 3)\n",
        (
            f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC at {git}, {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}; `benchmarks/stream.py` (fresh processes, peak RSS from `os.wait4`, "
            'interleaved in rotated order; "other cores" is the CPU other processes used meanwhile, 2.0 = the whole '
            "machine). The machine is shared with other engineers' benchmarks: expect noise.\n"
        ),
        (
            f"Data: `{big.name}`, {a.rows:,} rows, {size / 1e9:.2f} GB ({size / 2**30:.2f} GiB, "
            f"{size / limit:.1f}x the memory limit of {a.limit}), "
            "written by `dpdesk.core.preview.sample.write_census_csv`; the 20-query plan of `bench.py`.\n"
        ),
        "| run | n | wall median (s) | wall min (s) | peak RSS median (MiB) | peak RSS max (MiB) | other cores (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ("release", "stream", "polars", "polars-scan", "polars-mem"):
        rs = results[kind]
        if not rs:
            continue
        md.append(
            f"| {kind} | {len(rs)} | {med([r['wall_s'] for r in rs]):.1f} | {min(r['wall_s'] for r in rs):.1f} | "
            f"{med([r['peak_rss_mib'] for r in rs]):.0f} | {max(r['peak_rss_mib'] for r in rs):.0f} | "
            f"{med([r['other_cores'] for r in rs]):.2f} |"
        )
    for ref in ("polars", "polars-scan", "polars-mem"):
        if results["stream"] and results.get(ref):
            ratio = med([r["wall_s"] for r in results["stream"]]) / med([r["wall_s"] for r in results[ref]])
            md.append(f"\ndpdesk's streaming pass / {ref}, wall time (medians): **{ratio:.2f}x**.")
    md.append("")
    if results["stats-old"]:
        md += [
            "\n## In-memory statistics on 10M rows: peak RSS before (main) and after (chunks of 1M rows)\n",
            "| code | n | after loading (MiB, median) | after the 20 statistics (MiB, median) | statistics (s, median) |",
            "|---|---|---|---|---|",
        ]
        for kind in ("stats-old", "stats-new"):
            rs = results[kind]
            md.append(
                f"| {kind} | {len(rs)} | {med([r['after_load_mib'] for r in rs]):.0f} | "
                f"{med([r['after_stats_mib'] for r in rs]):.0f} | {med([r['seconds'] for r in rs]):.2f} |"
            )
    md += ["\n## Log\n", "```", *log, "```", ""]
    Path(a.results).write_text("\n".join(md), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
