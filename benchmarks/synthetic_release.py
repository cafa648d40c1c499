"""A release with a 1M-row synthetic table, and a release of a 1,000-query plan, before and after a change, in one run
(issue 30, item 3).

Every measurement is a fresh ``python -m dpdesk.cli release`` process with a fresh dpdesk home and output folder,
interleaved round by round (the order rotates), with its peak RSS from ``os.wait4`` and the CPU other processes
used meanwhile ("other cores"; 2.0 = the whole 2-core machine). The two versions are ``git archive`` snapshots
(``--before``, default: the merge base with main; ``--after``, default: HEAD), as in ``release_report.py``, whose
helpers this script uses. One extra instrumented run per version and case (not in the timed rounds) splits the
time into the package (release.csv, the synthetic CSV, plan.json, ledger.json) and the PDF report.

Cases, both on ``resources/samples/census_sample.csv`` (2,000 rows):

* ``synthetic 1M``: one synthetic query over age, sex, occupation, hours, wage and region with ``rows``
  1,000,000 (the package's CSV is about 36 MB);
* ``1000 queries``: the 20 queries of ``bench.py`` repeated to 1,000 (``release_report.small_plan``).

Run from the repository root::

    /work/main/.venv/bin/python benchmarks/synthetic_release.py [--rounds 3]

Writes ``benchmarks/RESULTS-synthetic-release.md`` (``--results``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import release_report as rr  # noqa: E402

SMALL = REPO / "resources" / "samples" / "census_sample.csv"


def synthetic_plan(rows: int) -> dict[str, Any]:
    base = bench.plan_dict()
    query = {
        "name": "synth",
        "statistic": "synthetic",
        "columns": ["age", "sex", "occupation", "hours", "wage", "region"],
        "epsilon": 1.0,
        "delta": 1e-6,
        "rows": rows,
    }
    return {**base, "title": f"synthetic {rows:,} rows", "queries": [query]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default=None, help="git revision of 'before' (default: merge base with main)")
    ap.add_argument("--after", default="HEAD")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cases", default="synthetic 1M,1000 queries", help="comma-separated cases to run")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "synthetic_release")
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS-synthetic-release.md")
    a = ap.parse_args()
    before = (
        a.before
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    revs = {
        v: subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short=12", r], check=True, capture_output=True, text=True
        ).stdout.strip()
        for v, r in (("before", before), ("after", a.after))
    }
    a.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=a.out, prefix="run-"))
    rr.CWD[0] = scratch
    versions = {v: rr.snapshot(rev, a.out / f"src-{rev}") for v, rev in revs.items()}
    for path in versions.values():
        rr.check_imports(path)
    plans = {
        "synthetic 1M": synthetic_plan(a.rows),
        "1000 queries": rr.small_plan(1000),
    }
    plans = {c: p for c, p in plans.items() if c in a.cases.split(",")}
    plan_files = {}
    for name, plan in plans.items():
        p = scratch / (name.replace(" ", "_") + ".json")
        p.write_text(json.dumps(plan), encoding="utf-8")
        plan_files[name] = p
    res: dict[str, dict[str, list[dict[str, Any]]]] = {c: {"before": [], "after": []} for c in plans}
    splits: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in plans}
    for case, plan in plan_files.items():
        for v, path in versions.items():
            splits[case][v] = rr.split(path, plan, SMALL, scratch)
            print(case, v, "split", {k: round(x, 2) for k, x in splits[case][v].items()}, flush=True)
    for r in range(a.rounds):
        for case, plan in plan_files.items():
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for v in order:
                one = rr.one(v, versions[v], plan, SMALL, scratch, Path("/nonexistent"))
                res[case][v].append(one)
                print(
                    f"round {r + 1} {case} {v}: {one['wall_s']:.2f} s, {one['peak_rss_mib']:.0f} MiB, "
                    f"other cores {one['other_cores']:.2f}",
                    flush=True,
                )
    shutil.rmtree(scratch, ignore_errors=True)
    (a.out / "results.json").write_text(json.dumps({"res": res, "splits": splits, "revs": revs}, indent=1))
    a.results.write_text(report(res, splits, revs, a), encoding="utf-8")
    print(f"wrote {a.results}")
    return 0


def report(
    res: dict[str, dict[str, list[dict[str, Any]]]],
    splits: dict[str, dict[str, dict[str, Any]]],
    revs: dict[str, str],
    a: argparse.Namespace,
) -> str:
    med = rr.med
    md = [
        "# A 1M-row synthetic table and a 1,000-query plan: the release before and after (issue 30, item 3)\n",
        (
            f"Written by `benchmarks/synthetic_release.py` on {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; "
            f"before = `{revs['before']}`, after = `{revs['after']}`; {a.rounds} rounds. Each figure is a fresh "
            "`dpdesk release` process (fresh home and output folder), before and after interleaved in alternating "
            "order; seconds are wall time from spawn to exit; peak RSS from `os.wait4`; other cores = CPU used by other "
            "processes meanwhile (2.0 = the whole 2-core machine, shared with other sessions' tests).\n"
        ),
        (
            "| case | version | runs | median s | min s | after / before (medians) | peak RSS MiB (median) | "
            "other cores (median) |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for case, by_v in res.items():
        b = med([x["wall_s"] for x in by_v["before"]])
        for v, runs in by_v.items():
            m = med([x["wall_s"] for x in runs])
            ratio = f"{m / b:.2f}x" if v == "after" else ""
            md.append(
                f"| {case} | {v} | {len(runs)} | {m:.2f} | {min(x['wall_s'] for x in runs):.2f} | {ratio} | "
                f"{med([x['peak_rss_mib'] for x in runs]):.0f} | {med([x['other_cores'] for x in runs]):.2f} |"
            )
    md += [
        "\n## Where the time goes (one instrumented run each, in-process seconds)\n",
        (
            "package = release.csv, the synthetic CSV, plan.json and ledger.json (the report excluded); report = the PDF "
            "(for the synthetic table: its section, which drew the table a second time before).\n"
        ),
        "| case | version | main | statistics | ledger | package | report |",
        "|---|---|---|---|---|---|---|",
    ]
    for case, by_v in splits.items():
        for v, s in by_v.items():
            md.append(
                f"| {case} | {v} | {s['main_s']:.2f} | {s.get('statistics', 0):.2f} | {s.get('ledger', 0):.2f} | "
                f"{s.get('package', 0):.2f} | {s.get('report', 0):.2f} |"
            )
    return "\n".join(md) + "\n"


if __name__ == "__main__":
    sys.exit(main())
