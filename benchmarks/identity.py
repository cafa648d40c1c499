#!/usr/bin/env python3
"""The content identity's cost (issue 13, item 3): first time and repeated, against a plain ``load_table``.

A script, not a test. Each measurement is a fresh process (``identity.py --worker MODE FILE HOME [TREE]``), the
modes interleaved round by round in rotated order, page cache warm, peak RSS from ``os.wait4``, the other load
on the machine recorded (busy cores outside the child, from ``/proc/stat``):

* ``load``: ``load_table`` of the plan's 9 declared columns (what a release reads anyway);
* ``first``: ``recognition.resolve`` in a home that has never seen the file (its SHA-256, then the content
  identity of every column, then the cache written);
* ``first-old``: the same with the code before (``git archive`` of ``--old``, default ``git merge-base main
  HEAD``), unless ``--no-old``;
* ``repeat``: ``recognition.resolve`` in a home that has seen it (the SHA-256 and the cache lookup only).

Before the rounds, the content identity of each table under one fixed secret is computed by both trees and must
be equal (key and sketch), or the script stops.

Usage (from the repository root): ``python benchmarks/identity.py [--rows 1000000 10000000] [--rounds 3]
[--no-old] [--old REV] [--data-dir DIR] [--results FILE]``. Tables come from
``dpdesk.core.preview.sample.write_census_csv`` into ``--data-dir`` (default ``benchmarks/out/``; reused when present).
"""

from __future__ import annotations

import argparse
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
MODES = ("load", "first", "first-old", "repeat")
SCRATCH = Path(os.environ.get("DPDESK_BENCH_SCRATCH", "/work/scratch-idfast"))


def worker(mode: str, data: str, home: str) -> None:
    sys.path.insert(0, str(HERE))
    from bench import column_specs

    from dpdesk.core.identity.recognition import resolve
    from dpdesk.core.loading import load_table
    from dpdesk.core.loading.identity import content_identity

    start = time.perf_counter()
    if mode == "load":
        load_table(data, column_specs())
    elif mode == "key":
        ident = content_identity(data, bytes(range(32)))
        print(json.dumps({"key": ident.key, "sketch": ident.sketch.to_json()}))
        return
    else:
        resolve(Path(home), data)
    print(json.dumps({"s": time.perf_counter() - start}))


def _busy_s() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    return (sum(parts[:8]) - parts[3] - parts[4]) / os.sysconf("SC_CLK_TCK")


def run(mode: str, data: Path, home: Path, tree: Path) -> dict[str, Any]:
    """One fresh process of ``mode`` with ``tree``'s dpdesk (its JSON result)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", mode, str(data), str(home)]
    p = subprocess.run(cmd, capture_output=True, env=env, cwd=tree, check=False)
    if p.returncode:
        raise RuntimeError(f"{mode} failed:\n{p.stderr.decode(errors='replace')[-3000:]}")
    res: dict[str, Any] = json.loads(p.stdout.decode().strip().splitlines()[-1])
    return res


def run_rss(mode: str, data: Path, home: Path, tree: Path) -> dict[str, Any]:
    """:func:`run` with the child's peak RSS (``ru_maxrss`` from ``os.wait4``) and CPU seconds."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", mode, str(data), str(home)]
    busy0, t0 = _busy_s(), time.perf_counter()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        p = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, cwd=tree)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        busy = _busy_s() - busy0
        out_f.seek(0)
        err_f.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"{mode} failed:\n{err_f.read().decode(errors='replace')[-3000:]}")
        res: dict[str, Any] = json.loads(out_f.read().decode().strip().splitlines()[-1])
    cpu = ru.ru_utime + ru.ru_stime
    return {
        **res,
        "rss_mib": ru.ru_maxrss / 1024.0,
        "cpu_s": cpu,
        "other_cores": max(0.0, (busy - cpu) / wall),
    }


def _hwm_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def old_tree(rev: str) -> Path:
    """``git archive`` of ``rev`` into the scratch folder (reused)."""
    dst = SCRATCH / f"old-{rev[:12]}"
    if not (dst / "dpdesk").is_dir():
        dst.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive.stdout, check=True)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--old", default=None, help="the 'before' revision (default: git merge-base main HEAD)")
    ap.add_argument("--no-old", action="store_true")
    ap.add_argument(
        "--data-dir", default=str(HERE / "out"), help="where census_<N>M.csv are (made if missing)"
    )
    ap.add_argument("--results", default=None, help="also append the table and raw numbers to this file")
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    trees = {"load": REPO, "first": REPO, "repeat": REPO}
    modes = [m for m in MODES if m != "first-old" or not args.no_old]
    rev = ""
    if not args.no_old:
        rev = (
            args.old
            or subprocess.run(
                ["git", "-C", str(REPO), "merge-base", "main", "HEAD"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )
        trees["first-old"] = old_tree(rev)
    out = Path(args.data_dir)
    out.mkdir(exist_ok=True)
    cpu = platform.processor() or platform.machine()
    start_load = os.getloadavg()
    lines = [
        f"machine: {cpu}, {os.cpu_count()} cores; load average at start {start_load}; before = {rev[:12] or '-'}",
        f"peak RSS: the child's ru_maxrss (it includes the parent's RSS at the start, {_hwm_mib():.0f} MiB)",
        "",
        "| rows | mode | median s | min s | x load (median) | peak RSS MiB (median) | CPU s | other busy cores |",
        "|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    raw: dict[str, Any] = {}
    for n in args.rows:
        data = out / f"census_{n // 1_000_000}M.csv"
        if not data.exists():
            sys.path.insert(0, str(REPO))
            from dpdesk.core.preview.sample import write_census_csv

            write_census_csv(data, n)
        # warm the page cache in small reads: a child's ru_maxrss counts the parent's RSS when it was started
        buf = bytearray(1 << 20)
        with data.open("rb", buffering=0) as f:
            while f.readinto(buf):
                pass
        if "first-old" in trees:  # the same identity from both trees, or no figures
            same = [run("key", data, Path("-"), trees[m]) for m in ("first", "first-old")]
            if same[0] != same[1]:
                raise SystemExit(f"the content identity of {data} differs between the trees")
            print(f"{n:,} rows: the same key and sketch from both trees", flush=True)
        seen = Path(tempfile.mkdtemp(prefix="dpdesk-id-seen-"))
        run("first", data, seen, REPO)  # the home that has seen the file
        results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
        for r in range(args.rounds):
            k = r % len(modes)
            for m in modes[k:] + modes[:k]:
                fresh = Path(tempfile.mkdtemp(prefix="dpdesk-id-fresh-"))
                results[m].append(run_rss(m, data, seen if m == "repeat" else fresh, trees[m]))
                shutil.rmtree(fresh)
        shutil.rmtree(seen)
        load_med = statistics.median(x["s"] for x in results["load"])
        for m in modes:
            xs = results[m]
            s = [x["s"] for x in xs]
            row = (
                f"| {n:,} | {m} | {statistics.median(s):.3f} | {min(s):.3f} | "
                f"{statistics.median(s) / load_med:.2f} | {statistics.median(x['rss_mib'] for x in xs):.0f} | "
                f"{statistics.median(x['cpu_s'] for x in xs):.2f} | "
                f"{statistics.median(x['other_cores'] for x in xs):.2f} |"
            )
            lines.append(row)
            print(row, flush=True)
        raw[str(n)] = results
    if args.results:
        with open(args.results, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n<!-- raw: " + json.dumps(raw) + " -->\n")


if __name__ == "__main__":
    main()
