#!/usr/bin/env python3
"""The Spark engine on one machine (issue 32, item 4): the whole ``dpdesk release`` of one 10-query plan over a
generated Parquet table of 1M, 10M and 50M rows, with the streaming engine (``--memory-limit 256MiB``), Spark
``local[1]`` and Spark ``local[2]``.

A script, not a test (see benchmarks/README.md, "The Spark engine"). Results go to ``benchmarks/RESULTS-spark.md``,
raw figures to ``<scratch>/spark-results.json``. Methodology as in bench.py: every run is a fresh process (a fresh
dpdesk home, so the ledger never refuses a run), the engines are interleaved round by round in rotated order, and
the machine's load during each run is recorded.

**The process tree.** With ``local[N]`` Spark's JVM is a child of the dpdesk process (py4j starts it), so the
``ru_maxrss`` of one ``os.wait4`` is not the memory of the run: Linux reports the maximum over the process and its
reaped descendants, not their sum, and a JVM still alive when Python exits is not reaped by it at all. This script
therefore (1) makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so that orphans of the run come
back to it and are reaped, and takes the run's CPU time as the growth of its own ``RUSAGE_CHILDREN`` (every process
of the tree, exactly); (2) samples ``/proc`` every 0.1 s for the run's process tree (every process whose parent
chain leads to the run) and records the peak of the *sum* of their RSS (``VmRSS``; pages shared between processes
count twice, an overstatement of at most the shared libraries), beside ``ru_maxrss`` of the reaped processes
(the largest single process). The "other cores" figure is the CPU other processes used during the run
((machine busy time from ``/proc/stat`` - the run's CPU) / wall time; 2.0 = the whole 2-core machine).

``--profile`` also runs one in-process release per engine and size with timers around the phases
(``SparkEngine.__init__``: SHA-256 of the file, session start with the canary, reading the source; ``check``; and
``aggregate``), printed and written to the results.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCRATCH = Path("/work/scratch-spark")
RESULTS = HERE / "RESULTS-spark.md"
ENGINES = ("stream", "spark1", "spark2")
CATS = {
    "region": ("north", "south", "east", "west", "centre"),
    "sector": tuple(f"sector {i:02d}" for i in range(20)),
    "sex": ("female", "male"),
}
AGE_BINS = [0, 18, 30, 45, 65, 100]


# ----------------------------------------------------------------------------- the plan and the table


def plan_dict() -> dict[str, Any]:
    """10 queries, no id column: counts, sums, means by group, a histogram, a quantile, a proportion."""
    lap = {"mechanism": "laplace", "epsilon": 1.0}
    gau = {"mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-7, "calibration": "analytic"}
    exp = {"mechanism": "exponential", "epsilon": 1.0}
    queries: list[dict[str, Any]] = [
        {"name": "people", "statistic": "count", **lap},
        {"name": "people by region", "statistic": "count", "group_by": "region", **gau},
        {"name": "total income", "statistic": "sum", "column": "income", **lap},
        {"name": "hours by sector", "statistic": "sum", "column": "hours", "group_by": "sector", **lap},
        {
            "name": "mean income by region",
            "statistic": "mean",
            "column": "income",
            "group_by": "region",
            **lap,
        },
        {"name": "mean age by sex", "statistic": "mean", "column": "age", "group_by": "sex", **gau},
        {"name": "age bands", "statistic": "histogram", "column": "age", "bins": AGE_BINS, **lap},
        {"name": "sectors", "statistic": "histogram", "column": "sector", **lap},
        {"name": "median income", "statistic": "quantile", "column": "income", "q": 0.5, **exp},
        {"name": "share working 40+", "statistic": "proportion", "column": "hours", "at_least": 40, **lap},
    ]
    return {
        "version": 1,
        "title": "benchmark: Spark on one machine",
        "budget": {"epsilon": 1000, "delta": 1e-3},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {
            "age": {"type": "int", "bounds": [0, 100]},
            "hours": {"type": "int", "bounds": [0, 99]},
            "income": {"type": "float", "bounds": [0, 200000]},
            "region": {"type": "category", "categories": list(CATS["region"])},
            "sector": {"type": "category", "categories": list(CATS["sector"])},
            "sex": {"type": "category", "categories": list(CATS["sex"])},
        },
        "queries": queries,
    }


def make_table(path: Path, rows: int, seed: int = 32) -> None:
    """A seeded Parquet table: int, float and text (category) columns, about 1% missing in each (child process)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    block = 5_000_000
    tmp = path.with_suffix(".tmp")
    parts = []
    for start in range(0, rows, block):
        n = min(block, rows - start)
        miss = rng.random((3, n)) < 0.01
        age = rng.integers(0, 101, n).astype(np.float64)
        age[miss[0]] = np.nan
        income = rng.lognormal(10.3, 0.8, n)
        income[miss[1]] = np.nan
        df = pl.DataFrame(
            {
                "age": pl.Series(age).fill_nan(None).cast(pl.Int64),
                "hours": pl.Series(rng.integers(0, 80, n), dtype=pl.Int64),
                "income": pl.Series(income).fill_nan(None),
                "region": pl.Series(np.array(CATS["region"])[rng.integers(0, 5, n)]),
                "sector": pl.Series(np.array(CATS["sector"])[rng.integers(0, 20, n)]),
                "sex": pl.Series(np.array(CATS["sex"])[rng.integers(0, 2, n)]),
                "weight": pl.Series(rng.random(n)),
            }
        )
        parts.append(
            df.with_columns(
                pl.when(pl.Series(miss[2])).then(None).otherwise(pl.col("sector")).alias("sector")
            )
        )
    pl.concat(parts).write_parquet(tmp, row_group_size=1_000_000)
    tmp.rename(path)


# ----------------------------------------------------------------------------- measuring a process tree


def _subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _cpu_busy_s() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _tree_rss_kib(root: int) -> tuple[int, int]:
    """The sum of VmRSS over ``root``'s process tree (by parent links in /proc), and the number of processes."""
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2 :].split()
            parent[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError):
            continue
    me = os.getpid()
    total = n = 0
    for pid in rss:
        p, hops = pid, 0
        while p not in (0, 1, me) and p != root and hops < 64:
            p = parent.get(p, 0)
            hops += 1
        if p == root:
            total += rss[pid]
            n += 1
    # orphans re-parented to this script during the run belong to the tree too (nothing else runs under it)
    for pid, p in parent.items():
        if p == me and pid != root and pid in rss:
            total += rss[pid]
            n += 1
    return total, n


def run_tree(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """A fresh process and all its descendants: wall time, CPU of the whole tree, peak RSS of the tree (sampled),
    the largest single process's ``ru_maxrss``, the other processes' CPU meanwhile."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = _cpu_busy_s()
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    peak = {"kib": 0, "procs": 0}
    stop = threading.Event()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env)

        def sample() -> None:
            while not stop.is_set():
                kib, n = _tree_rss_kib(p.pid)
                if kib > peak["kib"]:
                    peak["kib"] = kib
                peak["procs"] = max(peak["procs"], n)
                stop.wait(0.1)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        main_exit = time.perf_counter() - t0
        # the orphans (a JVM outliving its Python) come back to this subreaper: wait for every one
        biggest = ru.ru_maxrss
        while True:
            try:
                _, _, ru_o = os.wait4(-1, 0)
            except ChildProcessError:
                break
            biggest = max(biggest, ru_o.ru_maxrss)
        wall = time.perf_counter() - t0
        stop.set()
        th.join()
        busy1 = _cpu_busy_s()
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode}):\n{err.decode(errors='replace')[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res: dict[str, Any] = {}
    lines = out.decode().strip().splitlines()
    if lines and lines[-1].startswith("{"):
        res = json.loads(lines[-1])
    res.update(
        wall_s=wall,
        main_exit_s=main_exit,
        cpu_s=cpu,
        tree_peak_mib=peak["kib"] / 1024,
        tree_procs=peak["procs"],
        max_single_rss_mib=biggest / 1024,
        other_cores=max(0.0, (busy1 - busy0 - cpu) / wall) if wall > 0 else float("nan"),
        load_before=load0[0],
        load_after=os.getloadavg()[0],
    )
    return res


# ----------------------------------------------------------------------------- the phases (in process)


def worker_profile(engine: str, plan_path: str, data: str) -> dict[str, Any]:
    """One release in this process with timers around the Spark engine's phases (or the streaming pass)."""
    home = tempfile.mkdtemp(prefix="home-", dir=str(SCRATCH))
    os.environ["DPDESK_HOME"] = home
    t_start = time.perf_counter()
    from dpdesk.core.release.engines.spark import engine as sengine
    from dpdesk.core.release.engines.spark import session as ssession

    phases: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - t

        return wrapper

    cls = sengine.SparkEngine
    cls.__init__ = timed("engine init (all)", cls.__init__)  # type: ignore[method-assign]
    cls._file_key = timed("  SHA-256 of the file", cls._file_key)  # type: ignore[method-assign]
    sengine.start = timed("  session start + canary", ssession.start)
    sengine.read = timed("  read (schema)", ssession.read)
    cls.check = timed("check (data check pass)", cls.check)  # type: ignore[method-assign]
    cls.aggregate = timed("aggregate (states pass)", cls.aggregate)  # type: ignore[method-assign]
    from dpdesk.cli.program import main as cli_main

    args = ["release", plan_path, "--data", data, "--out", os.path.join(home, "out")]
    if engine == "stream":
        args += ["--memory-limit", "256MiB"]
    else:
        args += ["--engine", "spark", "--spark-master", f"local[{engine[-1]}]"]
    t0 = time.perf_counter()
    rc = cli_main(args)
    phases["release (all)"] = time.perf_counter() - t0
    phases["imports before the release"] = t0 - t_start
    shutil.rmtree(home, ignore_errors=True)
    return {"rc": rc, "phases": phases}


# ----------------------------------------------------------------------------- driver


def release_cmd(engine: str, plan: Path, data: Path, home: Path) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "dpdesk",
        "release",
        str(plan),
        "--data",
        str(data),
        "--out",
        str(home / "out"),
    ]
    if engine == "stream":
        return [*cmd, "--memory-limit", "256MiB"]
    if engine.endswith("dir"):  # the same table as a folder: a source only the cluster reads
        cmd[cmd.index("--data") + 1] = str(folder_of(data))
    cores = "".join(c for c in engine if c.isdigit())
    return [*cmd, "--engine", "spark", "--spark-master", f"local[{cores}]"]


def folder_of(data: Path) -> Path:
    """The table as a folder holding it as its one Parquet part (a hard link): Spark reads it as a source only the
    cluster reads, so the release snapshots it and computes its content identity in Spark (the ``spark1dir`` and
    ``spark2dir`` engines: what a catalog table costs beside a file named by its bytes)."""
    folder = data.parent / f"{data.stem}_parts"
    part = folder / "part-0.parquet"
    if not part.exists():
        folder.mkdir(exist_ok=True)
        os.link(data, part)
    return folder


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, *rest = sys.argv[2:]
        if kind == "make":
            make_table(Path(rest[0]), int(rest[1]))
            print(json.dumps({}))
        elif kind == "profile":
            print(json.dumps(worker_profile(*rest)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,50", help="millions of rows, comma-separated")
    ap.add_argument("--rounds", default="1:3,10:3,50:1", help="rounds per size, SIZE:N,...")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--scratch", default=str(SCRATCH))
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument(
        "--raw", default=None, help="raw JSON (default <scratch>/spark-results.json); appended to"
    )
    ap.add_argument(
        "--profile", action="store_true", help="also one in-process release per engine with timers"
    )
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    _subreaper()
    scratch = Path(a.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    raw_path = Path(a.raw) if a.raw else scratch / "spark-results.json"
    raw: dict[str, Any] = (
        json.loads(raw_path.read_text()) if raw_path.exists() else {"runs": [], "profiles": []}
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    plan = scratch / "plan.json"
    plan.write_text(json.dumps(plan_dict(), indent=1))
    rounds = {int(k): int(v) for k, v in (x.split(":") for x in a.rounds.split(","))}
    engines = a.engines.split(",")
    me = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    for size in (int(s) for s in a.sizes.split(",")):
        data = scratch / f"table_{size}M.parquet"
        if not data.exists():
            t = time.perf_counter()
            run_tree([*me, "make", str(data), str(size * 1_000_000)], env)
            print(
                f"made {data} ({data.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.0f} s",
                flush=True,
            )
        with open(data, "rb") as f:  # warm the page cache
            while f.read(1 << 24):
                pass
        for r in range(rounds.get(size, 1)):
            order = engines[r % len(engines) :] + engines[: r % len(engines)]
            for engine in order:
                home = Path(tempfile.mkdtemp(prefix="home-", dir=scratch))
                res = run_tree(release_cmd(engine, plan, data, home), {**env, "DPDESK_HOME": str(home)})
                shutil.rmtree(home, ignore_errors=True)
                res.update(size=size, engine=engine, round=r + 1, at=dt.datetime.now(dt.UTC).isoformat())
                raw["runs"].append(res)
                raw_path.write_text(json.dumps(raw, indent=1))
                print(
                    f"{size}M round {r + 1} {engine}: {res['wall_s']:.1f} s wall, {res['cpu_s']:.1f} s CPU, "
                    f"tree peak {res['tree_peak_mib']:.0f} MiB ({res['tree_procs']} procs), largest process "
                    f"{res['max_single_rss_mib']:.0f} MiB, other cores {res['other_cores']:.2f}, "
                    f"load {res['load_before']:.1f}",
                    flush=True,
                )
        if a.profile:
            for engine in engines:
                res = run_tree([*me, "profile", engine, str(plan), str(data)], env)
                res.update(size=size, engine=engine)
                raw["profiles"].append(res)
                raw_path.write_text(json.dumps(raw, indent=1))
                ph = ", ".join(f"{k.strip()} {v:.1f} s" for k, v in res["phases"].items())
                print(f"{size}M profile {engine}: {ph}", flush=True)
    if not a.no_write:
        write_md(raw, Path(a.results))
    return 0


NAMES = {
    "stream": "streaming (256 MiB)",
    "spark1": "Spark local[1]",
    "spark2": "Spark local[2]",
    "spark1dir": "Spark local[1], as a folder (snapshot and content identity)",
    "spark2dir": "Spark local[2], as a folder (snapshot and content identity)",
}


def write_md(raw: dict[str, Any], path: Path) -> None:
    runs = raw["runs"]
    sizes = sorted({r["size"] for r in runs})
    lines = [
        (
            "| rows | engine | runs | wall median (min) s | CPU median s | tree peak RSS MiB | largest process MiB "
            "| other cores (median) | load avg at start |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for size in sizes:
        for engine in ENGINES:
            rs = [r for r in runs if r["size"] == size and r["engine"] == engine]
            if not rs:
                continue
            w = [r["wall_s"] for r in rs]
            lines.append(
                f"| {size}M | {NAMES[engine]} | {len(rs)} | {med(w):.1f} ({min(w):.1f}) | "
                f"{med([r['cpu_s'] for r in rs]):.1f} | {max(r['tree_peak_mib'] for r in rs):.0f} | "
                f"{max(r['max_single_rss_mib'] for r in rs):.0f} | {med([r['other_cores'] for r in rs]):.2f} | "
                f"{med([r['load_before'] for r in rs]):.1f} |"
            )
    raw_lines = [
        "| rows | engine | round | wall s | CPU s | tree peak MiB | largest MiB | other cores | at (UTC) |"
    ]
    raw_lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in runs:
        raw_lines.append(
            f"| {r['size']}M | {NAMES[r['engine']]} | {r['round']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['tree_peak_mib']:.0f} | {r['max_single_rss_mib']:.0f} | {r['other_cores']:.2f} | {r['at'][11:19]} |"
        )
    prof = []
    for p in raw.get("profiles", []):
        ph = "; ".join(f"{k.strip()} {v:.1f} s" for k, v in p["phases"].items())
        prof.append(f"* {p['size']}M, {NAMES[p['engine']]}: {ph}")
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
        )
        revision = rev.stdout.strip()
    except OSError:
        revision = "?"
    notes = ""
    if path.exists():
        old = path.read_text()
        if "<!-- BEGIN NOTES -->" in old:
            notes = old[
                old.index("<!-- BEGIN NOTES -->") : old.index("<!-- END NOTES -->")
                + len("<!-- END NOTES -->")
            ]
    if not notes:
        notes = "<!-- BEGIN NOTES -->\n<!-- END NOTES -->"
    text = "\n".join(
        [
            "# The Spark engine on one machine (issue 32, item 4)",
            "",
            (
                f"`benchmarks/spark_scale.py`, revision {revision}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; "
                f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.machine()}."
            ),
            "",
            notes,
            "",
            "## Summary",
            "",
            *lines,
            "",
            "## In-process phases",
            "",
            *(prof or ["(not measured)"]),
            "",
            "## Raw figures",
            "",
            *raw_lines,
            "",
        ]
    )
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
