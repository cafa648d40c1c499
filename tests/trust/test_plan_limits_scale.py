"""Issue 24 item 6: a plan within the limits charged, then hung.

A 16 KB plan of one grouped histogram of 1000 x 999 cells (under the old limit of 10^6) on a 2,000-row file was
charged, wrote a 55 MB ledger line, then built its PDF for more than 600 s at 3.4 GB, and every later command on
the dataset cost about 750 MB. Now the limit is what a release can finish (100,000 cells, refused when the plan is
read, before anything is charged) and the report shows at most 200 values of a query and 2,000 in all (release.csv
holds every value). The largest accepted plan is released, reported, listed, budgeted and reviewed through the real
command line in a fresh process whose children's peak memory is measured against the bound the README states.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from dpdesk.core.model.spec import MAX_PLAN_CELLS
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="measures children with POSIX rusage")

#: The bound the README states for the largest plan's release and the commands that read its ledger afterwards.
MEMORY_BOUND = 1024**3

#: A fresh process that runs each command as a child of its own and prints the children's peak RSS (bytes):
#: nothing the test process ran before counts.
METER = r"""
import json, os, resource, subprocess, sys
out = []
for args in json.loads(sys.argv[1]):
    try:  # the child is killed when it overruns (its peak still counts)
        r = subprocess.run(
            [sys.executable, "-m", "dpdesk", *args], capture_output=True, text=True, check=False,
            timeout=float(sys.argv[2]),
        )
        out.append({"args": args, "rc": r.returncode, "stderr": r.stderr[-2000:]})
    except subprocess.TimeoutExpired:
        out.append({"args": args, "rc": None, "stderr": "killed: it ran longer than the test allows"})
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
print(json.dumps({"runs": out, "peak": peak}))
"""


def grouped_plan(path: Path, groups: int, bins: int, extra: list[dict[str, Any]] | None = None) -> Path:
    cats = [f"g{i}" for i in range(groups)]
    plan = {
        "version": 1,
        "title": "large",
        "budget": {"epsilon": 1.0, "delta": 0},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {"a": {"type": "float", "bounds": [0, 1]}, "g": {"type": "category", "categories": cats}},
        "queries": [
            {
                "name": "h",
                "statistic": "histogram",
                "column": "a",
                "group_by": "g",
                "bins": [i / bins for i in range(bins + 1)],
                "mechanism": "laplace",
                "epsilon": 0.5,
            },
            *(extra or []),
        ],
    }
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def data_file(path: Path, groups: int, n: int = 2000) -> Path:
    rng = random.Random(24)
    path.write_text(
        "a,g\n" + "".join(f"{rng.random():.4f},g{rng.randrange(groups)}\n" for _ in range(n)),
        encoding="utf-8",
    )
    return path


def metered(home: Path, *commands: list[str], timeout: float) -> dict[str, Any]:
    env = {**os.environ, "DPDESK_HOME": str(home)}
    r = subprocess.run(
        [sys.executable, "-c", METER, json.dumps(commands), str(timeout)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout * len(commands) + 60,
        check=True,
    )
    result: dict[str, Any] = json.loads(r.stdout)
    return result


def spend_lines(home: Path) -> list[str]:
    return [
        line
        for f in (home / "ledgers").glob("*.jsonl")
        for line in f.read_text(encoding="utf-8").splitlines()
        if '"spend"' in line
    ]


@pytest.mark.slow
def test_a_plan_over_the_cell_limit_is_refused_before_anything_is_charged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    count = {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}
    plan = grouped_plan(tmp_path / "p.json", 100, 1000, [count])  # 100,000 + 1 cells
    data = data_file(tmp_path / "d.csv", 100)
    out = tmp_path / "out"
    res = metered(home, ["release", str(plan), "--data", str(data), "--out", str(out)], timeout=120)
    (run,) = res["runs"]
    assert run["rc"] == 2, run
    assert "Traceback" not in run["stderr"], run["stderr"]
    # the message names the limit and the fix
    assert f"{MAX_PLAN_CELLS:,} cells" in run["stderr"] and "100,000" in run["stderr"], run["stderr"]
    assert "split it into smaller plans" in run["stderr"], run["stderr"]
    assert not out.exists()
    assert not (home / "ledgers").exists() or spend_lines(home) == []


@pytest.mark.slow
@pytest.mark.timeout(1100)
def test_the_largest_accepted_plan_releases_reports_and_is_reread_within_the_stated_memory(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    plan = grouped_plan(tmp_path / "p.json", 100, 1000)  # exactly the limit
    data = data_file(tmp_path / "d.csv", 100)
    out = tmp_path / "out"
    res = metered(
        home,
        ["release", str(plan), "--data", str(data), "--out", str(out)],
        ["ledger", "--data", str(data)],
        ["budget", str(plan), "--data", str(data)],
        ["review", str(out)],
        timeout=240,
    )
    for run in res["runs"]:
        assert run["rc"] == 0, run
        assert "Traceback" not in run["stderr"], run
    assert res["peak"] < MEMORY_BOUND, f"peak RSS {res['peak'] / 2**20:.0f} MiB"
    with (out / "release.csv").open(encoding="utf-8") as f:
        assert sum(1 for _ in csv.reader(f)) == 1 + 100 * 1000
    (line,) = spend_lines(home)
    assert len(line.encode()) < 16 * 2**20  # the README: about 65 bytes a cell
    text = "\n".join(p.extract_text() or "" for p in PdfReader(str(out / "report.pdf")).pages)
    assert "The first 200 of this query's 100,000 values are shown" in " ".join(text.split()), text[:3000]


@pytest.mark.slow
def test_the_report_shows_a_bounded_part_of_large_tables(tmp_path: Path) -> None:
    """One query of 250 cells shows its first 200; then nine of 200 fill the report's 2,000; the last one shows
    none of its values, says where they are, and still has its section (mechanism, sensitivity)."""
    wide = [f"w{i:03d}" for i in range(250)]
    mid = [f"m{i:03d}" for i in range(200)]
    rng = random.Random(6)
    data = tmp_path / "d.csv"
    data.write_text(
        "w,m,s\n"
        + "".join(f"{rng.choice(wide)},{rng.choice(mid)},{rng.choice('xyz')}\n" for _ in range(500)),
        encoding="utf-8",
    )
    queries: list[dict[str, Any]] = [
        {"name": "wide", "statistic": "histogram", "column": "w", "mechanism": "laplace", "epsilon": 0.05},
        *(
            {
                "name": f"mid{i}",
                "statistic": "histogram",
                "column": "m",
                "mechanism": "laplace",
                "epsilon": 0.05,
            }
            for i in range(9)
        ),
        {"name": "last", "statistic": "histogram", "column": "s", "mechanism": "laplace", "epsilon": 0.05},
    ]
    plan = parse_plan(
        {
            "version": 1,
            "title": "t",
            "budget": {"epsilon": 1.0, "delta": 0},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "columns": {
                "w": {"type": "category", "categories": wide},
                "m": {"type": "category", "categories": mid},
                "s": {"type": "category", "categories": ["x", "y", "z"]},
            },
            "queries": queries,
        }
    )
    out = tmp_path / "out"
    release(plan, data, tmp_path / "home", out)
    with (out / "release.csv").open(encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    assert len(rows) == 250 + 9 * 200 + 3
    text = " ".join(
        " ".join(p.extract_text() or "" for p in PdfReader(str(out / "report.pdf")).pages).split()
    )
    assert "The first 200 of this query's 250 values are shown; release.csv holds all of them" in text
    assert "w199" in text and "w200" not in text and "w249" not in text
    assert "w000, w001" in text and "w029 and 220 more (plan.json lists them all)" in text  # the plan's list
    assert "m199" in text  # the nine tables of 200 are whole: 200 + 9 x 200 = 2,000
    assert "This report shows at most 2,000 values in all; this query's 3 values are in release.csv." in text
    assert text.count("Mechanism: Laplace") >= 11  # every query keeps its section


def quantile_plan(path: Path, queries: int, candidates_each: int = 100_000) -> Path:
    """``queries`` quantiles of ``candidates_each`` grid candidates each (the per-query limit's maximum)."""
    plan = {
        "version": 1,
        "title": "many candidates",
        "budget": {"epsilon": 10.0, "delta": 0},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {
            "a": {"type": "float", "bounds": [0, 1]},
            "g": {"type": "category", "categories": ["g0"]},
        },
        "queries": [
            {
                "name": f"q{i}",
                "statistic": "quantile",
                "column": "a",
                "q": 0.5,
                "grid_step": 1 / (candidates_each - 1) * 1.0000001,
                "mechanism": "exponential",
                "epsilon": 0.01,
            }
            for i in range(queries)
        ],
    }
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def test_a_plan_over_the_candidate_limit_is_refused_when_read(tmp_path: Path) -> None:
    """150 quantiles of 100,000 candidates each (each under the per-query limit) reached 1.8 GB in a release;
    the plan's candidates are bounded as a whole, named with the fix when the plan is read."""
    from dpdesk.core.common.errors import PlanError
    from dpdesk.core.model.spec import MAX_PLAN_CANDIDATES
    from dpdesk.core.plan.reader import load_plan

    per = 100_000
    fits = MAX_PLAN_CANDIDATES // (per - 1)  # the grid holds per - 1 or per candidates
    plan = load_plan(quantile_plan(tmp_path / "ok.json", fits - 1, per))
    assert len(plan.queries) == fits - 1
    with pytest.raises(PlanError) as exc:
        load_plan(quantile_plan(tmp_path / "over.json", fits + 1, per))
    text = str(exc.value)
    assert f"{MAX_PLAN_CANDIDATES:,} candidates" in text and "grid_step" in text, text


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_largest_candidate_plan_releases_within_the_stated_memory(tmp_path: Path) -> None:
    """The largest plan of quantiles the reader accepts releases, and is reread, within the stated bound; one
    quantile more is refused before anything is charged (exit 2)."""
    from dpdesk.core.model.spec import MAX_PLAN_CANDIDATES

    home = tmp_path / "home"
    per = 100_000
    n = MAX_PLAN_CANDIDATES // per
    data = data_file(tmp_path / "d.csv", 1)
    over = quantile_plan(tmp_path / "over.json", n + 1, per)
    plan = quantile_plan(tmp_path / "p.json", n, per)
    out = tmp_path / "out"
    res = metered(
        home,
        ["release", str(over), "--data", str(data), "--out", str(tmp_path / "refused")],
        ["release", str(plan), "--data", str(data), "--out", str(out)],
        ["budget", str(plan), "--data", str(data)],
        timeout=300,
    )
    refused, released, budget = res["runs"]
    assert refused["rc"] == 2 and "candidates" in refused["stderr"], refused
    assert released["rc"] == 0 and budget["rc"] in (0, 1), res["runs"]
    assert len(spend_lines(home)) == 1  # only the plan within the limit was charged
    assert res["peak"] < MEMORY_BOUND, f"peak RSS {res['peak'] / 2**20:.0f} MiB"
