"""A median by group released through the command line: one row per declared group, epsilon charged once.

The groups' exponential mechanisms compose in parallel (statistics/quantile.py): the ledger books the query's
epsilon once, not once per group. Before issue 31 the plan refused the query ("quantile cannot be grouped").
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUPS = ["north", "south", "east"]


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def write_case(tmp_path: Path) -> tuple[Path, Path]:
    plan = {
        "version": 1,
        "budget": {"epsilon": 2.0},
        "privacy_unit": {"neighbouring": "replace", "max_rows_per_person": 1},
        "columns": {
            "wage": {"type": "int", "bounds": [0, 100]},
            "region": {"type": "category", "categories": GROUPS},
        },
        "queries": [
            {
                "name": "median wage",
                "statistic": "quantile",
                "column": "wage",
                "group_by": "region",
                "q": 0.5,
                "mechanism": "exponential",
                "epsilon": 0.5,
            }
        ],
    }
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    lines = ["wage,region"]
    # public test data: each region's wages around its own level
    for i, (region, level) in enumerate(zip(GROUPS, (20, 50, 80), strict=True)):
        lines += [f"{level + (j % 7) - 3},{region}" for j in range(40 + 10 * i)]
    d = tmp_path / "wages.csv"
    d.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p, d


@pytest.mark.slow
def test_a_grouped_median_releases_one_row_per_group_and_charges_epsilon_once(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    plan, data = write_case(tmp_path)
    b = run("budget", str(plan), home=dpdesk_home)
    assert b.returncode == 0, b.stderr  # the old code refused the plan: "quantile cannot be grouped"
    assert "cannot be grouped" not in b.stdout + b.stderr
    assert "95% rank error" in b.stdout and "per group: each group's released value's rank" in b.stdout
    out = tmp_path / "out"
    r = run("release", str(plan), "--data", str(data), "--out", str(out), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "charged epsilon 0.5" in r.stdout
    with (out / "release.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [row["group"] for row in rows] == GROUPS
    for row in rows:
        assert row["query"] == "median wage" and row["epsilon"] == "0.5"
        assert 0 <= float(row["value"]) <= 100
    lg = run("ledger", "--data", str(data), home=dpdesk_home)
    assert lg.returncode == 0, lg.stderr
    assert "release  epsilon 0.5" in lg.stdout
    assert "left: epsilon 1.5" in lg.stdout  # 2 - 0.5 once; a charge per group would leave 0.5
