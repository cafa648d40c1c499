"""Listing and statements, linear with a small constant (issue 30, item 3): the Gaussian's epsilon a past release is
re-costed at is solved once for each (sigma, sensitivity, delta), not once an entry; what is shown is the same.

The cache is :func:`dpdesk.core.ledger.recost.gaussian_epsilon`'s ``lru_cache``. These tests compare what dpdesk
shows with it and without it (its ``__wrapped__`` function, the bisection itself) on a ledger of mixed mechanisms
whose Gaussians are re-solved at a new unit of privacy, at several deltas: the listing, the budget report and the
effective costs, exactly.
"""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from dpdesk.cli import main as cli
from dpdesk.core.ledger import recost
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.loading import load_table
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release

pytestmark = pytest.mark.slow

PLAN: dict[str, Any] = {
    "version": 1,
    "title": "mixed",
    "budget": {"epsilon": 100.0, "delta": 1e-4},
    "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
    "columns": {
        "x": {"type": "float", "bounds": [0, 10], "missing": {"impute": 5}},
        "g": {"type": "category", "categories": ["a", "b"], "missing": {"impute": "a"}},
    },
    "queries": [
        {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
        {
            "name": "s",
            "statistic": "sum",
            "column": "x",
            "mechanism": "gaussian",
            "epsilon": 0.2,
            "delta": 1e-7,
        },
        {
            "name": "h",
            "statistic": "histogram",
            "column": "g",
            "mechanism": "gaussian",
            "calibration": "analytic",
            "epsilon": 0.3,
            "delta": 1e-8,
        },
        {"name": "m", "statistic": "mode", "column": "g", "mechanism": "exponential", "epsilon": 0.1},
    ],
}


def _shown(data: Path, home: Path) -> tuple[str, Any, list[Any]]:
    """What dpdesk shows of the dataset: the listing's text, the budget report's totals, the effective costs."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli(["ledger", "--data", str(data)]) == 0
    entries = Ledger.for_dataset(home, load_table(data, parse_plan(PLAN).columns).sha256).verify()
    unit = {**PLAN, "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 2}}
    report = budget_report(parse_plan(unit), entries)
    totals = {m: (v.spent.to_dict() if v else None) for m, v in report.methods.items()}
    costs = [[(c.epsilon, c.delta, c.rho) for c in e.costs] for e in recost.effective(entries)]
    return buf.getvalue(), totals, costs


def test_listing_report_and_costs_are_the_same_with_and_without_the_cache(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGUAGE", "en")
    data = tmp_path / "d.csv"
    data.write_text(
        "x,g\n" + "\n".join(f"{i % 10},{'ab'[i % 2]}" for i in range(40)) + "\n", encoding="utf-8"
    )
    plans = []
    for i, delta in enumerate((1e-7, 3e-7, 1e-6)):  # Gaussians at several deltas and sigmas
        p = copy.deepcopy(PLAN)
        p["queries"][1]["delta"] = delta
        p["queries"][1]["epsilon"] = 0.2 + 0.05 * i
        plans.append(parse_plan(p))
    table = load_table(data, plans[0].columns)
    for _ in range(3):
        for p in plans:
            release(p, data, dpdesk_home, None, table=table)
    raised = tmp_path / "k2.json"  # every past Gaussian re-solved at twice its sensitivity
    raised.write_text(
        json.dumps({**PLAN, "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 2}}),
        encoding="utf-8",
    )
    with redirect_stdout(io.StringIO()):
        assert cli(["ledger", "--data", str(data), "--change-settings", str(raised), "--reason", "k"]) == 0
    recost.gaussian_epsilon.cache_clear()
    cached = _shown(data, dpdesk_home)
    info = recost.gaussian_epsilon.cache_info()
    assert info.hits > info.misses > 0, info  # the same questions asked again: answered from the cache
    monkeypatch.setattr(recost, "gaussian_epsilon", recost.gaussian_epsilon.__wrapped__)
    plain = _shown(data, dpdesk_home)
    assert cached == plain
    # the Gaussians were re-solved: the unit change raised each booked epsilon (the sum's 0.2, 0.25, 0.3, the
    # histogram's 0.3) by more than 40% (and the Laplace count doubled, 0.1 to 0.2)
    booked = [0.2, 0.25, 0.3] * 3
    assert len(cached[2]) == 9, cached[2]
    assert all(c[1][0] > 1.4 * b and c[2][0] > 1.4 * 0.3 for c, b in zip(cached[2], booked, strict=True))


def test_the_cached_solve_is_the_bisection_for_every_argument() -> None:
    args = [(s, d, delta) for s in (0.5, 1.0, 7.25) for d in (1.0, 2.0, 3) for delta in (1e-9, 1e-7, 0.0)]
    for a in args + args:
        assert recost.gaussian_epsilon(*a) == recost.gaussian_epsilon.__wrapped__(*a)
    assert recost.gaussian_epsilon(1.0, 3, 1e-7) == recost.gaussian_epsilon.__wrapped__(1.0, 3, 1e-7)
