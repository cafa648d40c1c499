"""The whole ``dpdesk release`` (statistics, PDF report, package, fsynced ledger) against a bare polars + numpy
baseline, before and after a change, in one run; and large plans on a small table.

Every measurement is a fresh process, interleaved round by round (before, after, baseline; the order rotates),
with its peak RSS from ``os.wait4`` and the CPU used by other processes meanwhile ("other cores"). The two
dpdesk versions are ``git archive`` snapshots (``--before``, default: the merge base with main; ``--after``,
default: HEAD) imported through ``PYTHONPATH``; each release gets a fresh dpdesk home and output folder.

* big tables: ``python -m dpdesk.cli release plan20.json --data census_10M.csv --out OUT`` (and 1M), the
  20-query plan of ``bench.py``, against the baseline: a fresh process that starts Python, imports polars and
  numpy, loads the same CSV with polars (declared schema: Enum, Int16, Float64), computes the same 20
  statistics exactly with numpy (``bench.numpy_queries``, copied into the baseline script) and adds numpy noise
  (Laplace for the counts and sums, Gumbel-max for the quantiles and the mode). Nothing is written.
* large plans: releases of 100 and 1,000 queries (the 20 queries repeated) on the 2,000-row sample table:
  time, and the PDF's size per query.
* the split: one extra instrumented run per version and case (not in the timed rounds) times the statistics
  (exact values and noise), the ledger charge (its own bookkeeping and fsync, statistics excluded), the report,
  the rest of the package, and the imports (process time before ``main`` starts).

Run from the repository root (about 10 minutes on 2 cores with the default rounds)::

    /work/main/.venv/bin/python benchmarks/release_report.py [--rounds 3] [--small-rounds 3] [--no-10m]

Writes ``benchmarks/RESULTS-report.md`` (``--results``) and raw numbers to ``--out`` (default
``benchmarks/out/release_report/``, gitignored).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
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
sys.path.insert(0, str(HERE))

import bench  # noqa: E402  (the 20-query plan, the schema, the numpy statistics, the load helpers)

DATA = {
    "10M": Path("/work/main/benchmarks/out/census_10M.csv"),
    "1M": Path("/work/main/benchmarks/out/census_1M.csv"),
}
SMALL = REPO / "resources" / "samples" / "census_sample.csv"

BASELINE_TEMPLATE = '''"""Bare baseline, written by release_report.py: load with polars, the 20 statistics with numpy, numpy noise."""
from __future__ import annotations
import sys, json, time
import numpy as np
import polars as pl

AGE_BINS = {age_bins!r}
WAGE_BINS = {wage_bins!r}
SCHEMA = {schema!r}

{numpy_queries}

def main():
    dtypes = {{n: pl.Enum(d["categories"]) if d["type"] == "category" else (pl.Int16 if d["type"] == "int" else pl.Float64)
              for n, d in SCHEMA.items()}}
    df = pl.read_csv(sys.argv[1], schema=dtypes)
    cols = {{n: (df[n].to_physical() if SCHEMA[n]["type"] == "category" else df[n]).to_numpy() for n in SCHEMA}}
    rng = np.random.default_rng()
    out = {{}}
    for name, fn in numpy_queries(cols).items():
        v = fn()
        if name in ("median age", "wage p90"):
            out[name] = int(np.argmax(v + rng.gumbel(size=len(v))))
        elif name == "commonest occupation":
            out[name] = int(np.argmax(np.bincount(cols["occupation"], minlength=15) + rng.gumbel(size=15)))
        elif isinstance(v, tuple):
            out[name] = [float(np.sum(np.asarray(x, dtype=float) + rng.laplace(size=np.shape(x)))) for x in v]
        else:
            out[name] = float(np.sum(np.asarray(v, dtype=float) + rng.laplace(size=np.shape(v))))
    print(json.dumps({{"rows": len(cols["age"])}}))

main()
'''

SPLIT = r"""
import json, os, sys, time
t_main = time.perf_counter()
from pathlib import Path
import dpdesk.core.release.steps as rel
import dpdesk.core.publish.package as pkg
import dpdesk.core.publish.report as rep
import dpdesk.core.loading as loading
import dpdesk.core.identity.recognition as recognition
T = {"statistics": 0.0, "charge": 0.0, "package": 0.0, "report": 0.0, "load": 0.0, "identity": 0.0}
INSIDE = {"charge": 0}
WITHIN = {"statistics": 0.0, "load": 0.0, "identity": 0.0}  # the parts of the charge timed separately
def timed(mod, name, key):
    fn = getattr(mod, name, None)
    if fn is None:  # a version without it (the engine boundary of issue 30 computes the statistics)
        return
    def wrapper(*a, **k):
        t = time.perf_counter()
        INSIDE[key] = INSIDE.get(key, 0) + 1
        try:
            return fn(*a, **k)
        finally:
            INSIDE[key] -= 1
            dt = time.perf_counter() - t
            T[key] += dt
            if key in WITHIN and INSIDE["charge"] > 0:
                WITHIN[key] += dt
    setattr(mod, name, wrapper)
timed(rel, "exact_statistic", "statistics")
try:  # since issue 30: the statistics through the aggregation engines
    import dpdesk.core.release.engines.memory as mem
    import dpdesk.core.release.engines.streamed as streamed_engine
    timed(mem.InMemoryEngine, "aggregate", "statistics")
    timed(streamed_engine.StreamingEngine, "aggregate", "statistics")
except ImportError:
    pass
timed(rel, "noisy_rows", "statistics")
timed(rel, "_charge", "charge")
timed(pkg, "write_package", "package")
timed(rep, "write_release_report", "report")
timed(loading, "load_table", "load")
try:  # since tables larger than memory: the release loads through streaming.load_for_release
    import dpdesk.core.release.streaming as streaming
    timed(streaming, "load_table", "load")
except ImportError:
    pass
timed(recognition, "content_identity", "identity")
from dpdesk.cli import main
t0 = time.perf_counter()
rc = main(sys.argv[1:])
total = time.perf_counter() - t0
with open("/proc/self/stat") as f:
    start = int(f.read().rsplit(")", 1)[1].split()[19])
with open("/proc/uptime") as f:
    since_start = float(f.read().split()[0]) - start / os.sysconf("SC_CLK_TCK")
T["ledger"] = T.pop("charge") - sum(WITHIN.values())
T["package"] -= T["report"]
print(json.dumps({"rc": rc, "main_s": total, "imports_s": since_start - total, **T}))
"""


def small_plan(n: int) -> dict[str, Any]:
    """``n`` queries: the 20 of bench.py repeated (numbered), each at epsilon 0.001."""
    base = bench.plan_dict()
    queries: list[dict[str, Any]] = []
    i = 0
    while len(queries) < n:
        for q in base["queries"]:
            if len(queries) < n:
                queries.append({**q, "name": f"{q['name']} #{i}", "epsilon": 0.001})
        i += 1
    return {**base, "title": f"{n} queries", "budget": {"epsilon": 1000, "delta": 1e-3}, "queries": queries}


def snapshot(rev: str, into: Path) -> Path:
    """``git archive rev`` of dpdesk/ and resources/ into a folder (reused when it exists)."""
    if not (into / "dpdesk").is_dir():
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "dpdesk", "resources"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


CWD = [Path(tempfile.gettempdir())]


def check_imports(version: Path) -> None:
    """The child imports the snapshot's dpdesk (not the repository's or the venv's)."""
    r = subprocess.run(
        [sys.executable, "-c", "import dpdesk; print(dpdesk.__file__)"],
        env={**os.environ, "PYTHONPATH": str(version)},
        cwd=CWD[0],
        capture_output=True,
        text=True,
        check=True,
    )
    if not Path(r.stdout.strip()).resolve().is_relative_to(version.resolve()):
        raise RuntimeError(f"{version}: the child imported {r.stdout.strip()}")


def run_measured(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """As :func:`run`, with the child's peak RSS and CPU from ``os.wait4`` (the child is reaped here)."""
    busy0 = bench._cpu_busy_s()
    t0 = time.perf_counter()
    # cwd: a scratch folder, never the repository (``python -m``/``-c`` put the cwd before PYTHONPATH)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=CWD[0])
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    busy1 = bench._cpu_busy_s()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode})")
    cpu = ru.ru_utime + ru.ru_stime
    return {
        "wall_s": wall,
        "peak_rss_mib": ru.ru_maxrss / 1024.0,
        "cpu_s": cpu,
        "other_cores": max(0.0, (busy1 - busy0 - cpu) / wall),
        "stdout": out.decode(errors="replace").strip(),
    }


#: ``--known``: one dpdesk home per (version, data file), primed by an untimed first release, then reused, so that
#: every timed release is a later release of a known dataset (its content identity is looked up, not computed:
#: what a curator's second and later releases cost). Empty: a fresh home per release (a file's first release).
KNOWN_HOMES: dict[tuple[str, str], Path] = {}
KNOWN = [False]


def _home(version: Path, plan: Path, data: Path, scratch: Path, known: bool = False) -> Path:
    if not (KNOWN[0] or known):
        return Path(tempfile.mkdtemp(dir=scratch, prefix="home-"))
    key = (str(version), str(data))
    if key not in KNOWN_HOMES:
        home = Path(tempfile.mkdtemp(dir=scratch, prefix="known-"))
        KNOWN_HOMES[key] = home
        out = Path(tempfile.mkdtemp(dir=scratch, prefix="out-")) / "release"
        env = {**os.environ, "PYTHONPATH": str(version), "DPDESK_HOME": str(home), "LANGUAGE": "en"}
        cmd = [
            sys.executable,
            "-m",
            "dpdesk.cli",
            "release",
            str(plan),
            "--data",
            str(data),
            "--out",
            str(out),
        ]
        run_measured(cmd, env)  # the first release: computes and records the table's content identity
        shutil.rmtree(out.parent, ignore_errors=True)
    return KNOWN_HOMES[key]


def release_cmd(
    version: Path, plan: Path, data: Path, scratch: Path, known: bool = False
) -> tuple[list[str], dict[str, str], Path]:
    home = _home(version, plan, data, scratch, known)
    out = Path(tempfile.mkdtemp(dir=scratch, prefix="out-")) / "release"
    env = {**os.environ, "PYTHONPATH": str(version), "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    return (
        [sys.executable, "-m", "dpdesk.cli", "release", str(plan), "--data", str(data), "--out", str(out)],
        env,
        out,
    )


def one(
    kind: str, version: Path | None, plan: Path, data: Path, scratch: Path, baseline: Path
) -> dict[str, Any]:
    if kind == "baseline":
        return run_measured([sys.executable, str(baseline), str(data)], {**os.environ, "PYTHONPATH": ""})
    assert version is not None
    known = kind == "later"  # --first-later: the after version's later releases of a known dataset
    cmd, env, out = release_cmd(version, plan, data, scratch, known)
    r = run_measured(cmd, env)
    r["pdf_bytes"] = (out / "report.pdf").stat().st_size
    shutil.rmtree(out.parent, ignore_errors=True)
    if not (KNOWN[0] or known):
        shutil.rmtree(env["DPDESK_HOME"], ignore_errors=True)
    return r


def split(version: Path, plan: Path, data: Path, scratch: Path, known: bool = False) -> dict[str, Any]:
    cmd, env, out = release_cmd(version, plan, data, scratch, known)
    r = run_measured([sys.executable, "-c", SPLIT, *cmd[3:]], env)
    res: dict[str, Any] = json.loads(r["stdout"].splitlines()[-1])
    res["wall_s"] = r["wall_s"]
    shutil.rmtree(out.parent, ignore_errors=True)
    if not (KNOWN[0] or known):
        shutil.rmtree(env["DPDESK_HOME"], ignore_errors=True)
    return res


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--before", default=None, help="git revision of the 'before' version (default: merge base with main)"
    )
    ap.add_argument("--after", default="HEAD", help="git revision of the 'after' version")
    ap.add_argument("--rounds", type=int, default=3, help="rounds at 10M and 1M rows")
    ap.add_argument("--small-rounds", type=int, default=3, help="rounds of the 100- and 1,000-query releases")
    ap.add_argument(
        "--before-1000-rounds", type=int, default=1, help="rounds of the slow 'before' 1,000-query release"
    )
    ap.add_argument("--no-10m", action="store_true")
    ap.add_argument(
        "--known",
        action="store_true",
        help="time later releases of a known dataset (one primed home per version and file) instead of first ones",
    )
    ap.add_argument(
        "--big-only", action="store_true", help="only the 10M/1M cases (no 100/1,000-query plans)"
    )
    ap.add_argument(
        "--first-later",
        action="store_true",
        help="time, in the same rounds, the before and after versions' first releases (a fresh home each) and the "
        "after version's later releases of a known dataset (issue 30: the first release as fast as a later one)",
    )
    ap.add_argument("--out", type=Path, default=HERE / "out" / "release_report")
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS-report.md")
    a = ap.parse_args()

    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    before_rev = (
        a.before
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    after_rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", a.after], check=True, capture_output=True, text=True
    ).stdout.strip()
    versions = {
        "before": snapshot(before_rev, out / f"src-{before_rev[:12]}"),
        "after": snapshot(after_rev, out / f"src-{after_rev[:12]}"),
    }
    if a.first_later:
        versions["later"] = versions["after"]
    scratch = out / "scratch"
    scratch.mkdir(exist_ok=True)
    CWD[0] = scratch
    for v in versions.values():
        check_imports(v)
    baseline = out / "baseline.py"
    baseline.write_text(
        BASELINE_TEMPLATE.format(
            age_bins=bench.AGE_BINS,
            wage_bins=bench.WAGE_BINS,
            schema=bench.schema(),
            numpy_queries=inspect.getsource(bench.numpy_queries),
        ),
        encoding="utf-8",
    )
    plans = {"20": out / "plan20.json", "100": out / "plan100.json", "1000": out / "plan1000.json"}
    KNOWN[0] = a.known
    plan20 = bench.plan_dict()
    if a.known or a.first_later:  # room for every timed release in one dataset's budget
        plan20["budget"] = {**plan20["budget"], "epsilon": 10_000}
    plans["20"].write_text(json.dumps(plan20), encoding="utf-8")
    for n in ("100", "1000"):
        plans[n].write_text(json.dumps(small_plan(int(n))), encoding="utf-8")

    sizes = [s for s in ("10M", "1M") if not (a.no_10m and s == "10M")]
    results: dict[str, Any] = {"before": before_rev, "after": after_rev, "cases": {}}
    log: list[str] = []

    def case(name: str, kinds: list[str], plan: Path, data: Path, rounds: int, only: dict[str, int]) -> None:
        bench.warm_cache(data)
        got: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        for r in range(rounds):
            order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
            for k in order:
                if r >= only.get(k, rounds):
                    continue
                res = one(k, versions.get(k), plan, data, scratch, baseline)
                got[k].append(res)
                line = f"{name} round {r + 1} {k}: {res['wall_s']:.2f} s, {res['peak_rss_mib']:.0f} MiB, other cores {res['other_cores']:.2f}"
                print(line, flush=True)
                log.append(line)
        splits = {
            k: split(versions[k], plan, data, scratch, k == "later")
            for k in kinds
            if k != "baseline" and only.get(k, 1)
        }
        for k, s in splits.items():
            print(f"{name} split {k}: {s}", flush=True)
        results["cases"][name] = {"runs": got, "split": splits}
        (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")  # after every case

    kinds = ["before", "after", "later", "baseline"] if a.first_later else ["before", "after", "baseline"]
    for size in sizes:
        case(size, kinds, plans["20"], DATA[size], a.rounds, {})
    if a.big_only:
        (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
        a.results.write_text(report_md(results, sizes), encoding="utf-8")
        return 0
    case("100 queries", ["before", "after"], plans["100"], SMALL, a.small_rounds, {})
    case(
        "1000 queries",
        ["before", "after"],
        plans["1000"],
        SMALL,
        a.small_rounds,
        {"before": a.before_1000_rounds},
    )
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    a.results.write_text(report_md(results, sizes), encoding="utf-8")
    print(f"wrote {a.results}")
    return 0


def report_md(res: dict[str, Any], sizes: list[str]) -> str:
    first_later = any("later" in c["runs"] for c in res["cases"].values())
    lines = [
        "# A file's first release and a later one (issue 30, item 2)"
        if first_later
        else "# The release report: before and after (issue 16, item 1)",
        "",
        (
            f"Written by `benchmarks/release_report.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"before = `{res['before'][:12]}`, after = `{res['after'][:12]}`. Machine: {bench.machine()}."
        ),
        "",
        (
            "Each figure is a fresh process, interleaved round by round; seconds are wall time from spawn to exit "
            '(process start and imports included); peak RSS from `os.wait4`; "other cores" is the CPU other '
            "processes used meanwhile (2.0 = the whole 2-core machine, which is shared: expect noise)."
        ),
        "",
        (
            "**The baseline** (a fresh process): start Python, import polars and numpy, load the CSV with polars "
            "(declared schema: Enum, Int16, Float64), compute the same 20 statistics exactly with numpy "
            "(`bench.numpy_queries`), add numpy noise (Laplace, Gumbel-max for quantiles and the mode). It writes nothing. "
            "`dpdesk release` also checks the data, charges and fsyncs the ledger, writes release.csv, the PDF report, "
            "plan.json and ledger.json."
        ),
        "",
        *(
            [
                (
                    "**before** = a first release by the code before (a fresh home: the content identity read every "
                    "column again as text), **after** = a first release by this code (a fresh home: the identity "
                    "computed in the load's own read), **later** = a later release by this code (a home that knows "
                    "the dataset)."
                ),
                "",
            ]
            if first_later
            else []
        ),
        "| case | version | runs | median s | min s | ratio to baseline (medians) | peak RSS MiB | other cores (median) | PDF KB | PDF KB / query |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    queries = {"10M": 20, "1M": 20, "100 queries": 100, "1000 queries": 1000}
    for name, c in res["cases"].items():
        base = c["runs"].get("baseline", [])
        b = med([r["wall_s"] for r in base])
        for k, runs in c["runs"].items():
            if not runs:
                continue
            m = med([r["wall_s"] for r in runs])
            ratio = f"{m / b:.2f}x" if base and k != "baseline" else ""
            pdf = med([r.get("pdf_bytes", float("nan")) for r in runs]) / 1e3
            per = f"{pdf / queries[name]:.1f}" if k != "baseline" else ""
            lines.append(
                f"| {name} | {k} | {len(runs)} | {m:.2f} | {min(r['wall_s'] for r in runs):.2f} | {ratio} | "
                f"{med([r['peak_rss_mib'] for r in runs]):.0f} | {med([r['other_cores'] for r in runs]):.2f} | "
                + (f"{pdf:.0f} | {per} |" if k != "baseline" else " | |")
            )
    lines += [
        "",
        "## Where a release's time goes (one instrumented run each, in-process seconds)",
        "",
        (
            "imports and start = process time before `main`; statistics = exact values and noise; ledger = the charge "
            "without its statistics, loading and content identity (plan checks, budget, the fsynced entry); content identity = "
            "the table's content key and resemblance sketch (issue 13: computed at a file's first release, then cached "
            "by its SHA-256 in the dpdesk home; "
            + (
                "here every timed release is a later release of a known dataset (`--known`: one home per version and "
                "file, primed by an untimed first release), so it is looked up, not computed"
                if KNOWN[0]
                else "every run here has a fresh home, so every run pays it"
            )
            + "); package = release.csv, "
            "plan.json, ledger.json and the package entry; report = the PDF. Overhead = ledger + package + report, "
            "against the target 0.3 s + 15 ms per query."
        ),
        "",
        "| case | version | imports and start | main | load | content identity | statistics | ledger | package | report | overhead | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in res["cases"].items():
        for k, s in c["split"].items():
            over = s["ledger"] + s["package"] + s["report"]
            lines.append(
                f"| {name} | {k} | {s['imports_s']:.2f} | {s['main_s']:.2f} | {s['load']:.2f} | {s['identity']:.2f} | {s['statistics']:.2f} | {s['ledger']:.2f} | "
                f"{s['package']:.2f} | {s['report']:.2f} | {over:.2f} | {0.3 + 0.015 * queries[name]:.2f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
