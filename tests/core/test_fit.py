"""Fit to the budget: what is left, less a reserve, split by weight in the accounting method's own unit."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.dp.queries import design_plan
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.fit import FitError, fit_to_budget, round_down
from dpdesk.core.plan.reader import load_plan, parse_plan
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"


def plan_with(**changes: Any) -> Any:
    data = json.loads(PLAN.read_text())
    data.update(changes)
    return parse_plan(data)


def test_sequential_split_spends_what_is_left_less_the_reserve_by_weight() -> None:
    plan = load_plan(PLAN)
    weights = [1, 2, 1, 1, 3, 1]
    locked = [False, False, True, False, False, False]
    fit = fit_to_budget(plan, weights=weights, locked=locked, reserve=0.1)
    eps = fit.epsilons
    assert eps[2] == plan.queries[2].epsilon  # locked
    free = [i for i in range(6) if not locked[i]]
    target = plan.budget.epsilon - 0.1 - plan.queries[2].epsilon
    assert sum(eps[i] for i in free) <= target + 1e-12
    assert sum(eps[i] for i in free) >= target * (1 - 1e-5)  # all of it, up to rounding down
    for i in free:  # in proportion to the weights
        assert eps[i] / weights[i] == pytest.approx(eps[0] / weights[0], rel=1e-5)
    rep = budget_report(
        dataclasses.replace(
            plan,
            queries=tuple(dataclasses.replace(q, epsilon=e) for q, e in zip(plan.queries, eps, strict=True)),
        )
    )
    assert rep.fits and rep.remaining_after.epsilon >= 0.1
    assert fit.unit == "epsilon" and fit.left_after == pytest.approx(0.1, rel=1e-4)


def test_zcdp_splits_rho_by_weight_and_fits() -> None:
    plan = plan_with(accounting={"method": "zcdp"})
    fit = fit_to_budget(plan, weights=[1, 1, 2, 1, 1, 1])
    assert fit.unit == "rho" and fit.report.fits
    fitted = dataclasses.replace(
        plan,
        queries=tuple(
            dataclasses.replace(q, epsilon=e) for q, e in zip(plan.queries, fit.epsilons, strict=True)
        ),
    )
    rhos = [d.rho for d in design_plan(fitted)]
    # shares of rho follow the weights (epsilons are rounded down to 6 digits: rho to about 2e-6 relative)
    assert rhos[2] == pytest.approx(2 * rhos[0], rel=1e-4)
    assert rhos[1] == pytest.approx(rhos[0], rel=1e-4)  # a mean (two components) gets the same rho as a count
    # it spends nearly everything: a bit more on every query would not fit
    more = dataclasses.replace(
        plan,
        queries=tuple(
            dataclasses.replace(q, epsilon=e * 1.001) for q, e in zip(plan.queries, fit.epsilons, strict=True)
        ),
    )
    assert not budget_report(more).fits or budget_report(more).remaining_after.epsilon < 0
    # and the zCDP split gives more epsilon in total than a sequential split of the same budget
    assert sum(fit.epsilons) > plan.budget.epsilon


@pytest.mark.slow
def test_past_releases_are_counted(dpdesk_home: Path, tmp_path: Path) -> None:
    from tests.cli.test_anchor_cli import ledger_of, release_once
    from tests.cli.test_cli import DATA

    release_once(PLAN, DATA, tmp_path / "r1", dpdesk_home)  # spends 0.9 of 1.0
    entries = ledger_of(dpdesk_home, DATA).verify()
    plan = load_plan(PLAN)
    fit = fit_to_budget(plan, entries)
    assert sum(fit.epsilons) <= 0.1 + 1e-12 and sum(fit.epsilons) >= 0.1 * (1 - 1e-5)
    assert fit.report.fits
    with pytest.raises(FitError):
        fit_to_budget(plan, entries, reserve=0.1)  # nothing left once the reserve is kept


def test_nothing_to_fit_is_refused() -> None:
    plan = load_plan(PLAN)
    with pytest.raises(FitError):
        fit_to_budget(plan, locked=[True] * 6)
    with pytest.raises(FitError):
        fit_to_budget(plan, weights=[0] * 6)
    with pytest.raises(FitError):
        fit_to_budget(plan, locked=[True] * 5 + [False], reserve=0.2)  # 0.8 locked + 0.2 kept: nothing left


@pytest.mark.parametrize("x", [1.0, 0.1666666666, 123456789.0, 3.3e-7, 0.999999999])
def test_round_down_never_rounds_up(x: float) -> None:
    y = round_down(x)
    assert y <= x and y >= x * (1 - 1e-5)


MECHANISM_QUERIES: list[dict[str, Any]] = [
    {"name": "n laplace", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
    {"name": "n classic", "statistic": "count", "mechanism": "gaussian", "epsilon": 0.1, "delta": 1e-7},
    {
        "name": "n analytic",
        "statistic": "count",
        "mechanism": "gaussian",
        "calibration": "analytic",
        "epsilon": 0.1,
        "delta": 1e-7,
    },
    {
        "name": "m classic",
        "statistic": "mean",
        "column": "x",
        "mechanism": "gaussian",
        "epsilon": 0.1,
        "delta": 1e-7,
    },
    {
        "name": "med",
        "statistic": "quantile",
        "column": "x",
        "q": 0.5,
        "mechanism": "exponential",
        "epsilon": 0.1,
    },
    {"name": "syn pure", "statistic": "synthetic", "columns": ["x", "g"], "epsilon": 0.1},
    {"name": "syn zcdp", "statistic": "synthetic", "columns": ["x", "g"], "epsilon": 0.1, "delta": 1e-7},
]


def _mechanism_plan(method: str, epsilon: float, queries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "version": 1,
        "title": "fit",
        "budget": {"epsilon": epsilon, "delta": 1e-5},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "accounting": {"method": method} | ({"delta_prime": 1e-7} if method == "advanced" else {}),
        "columns": {
            "x": {"type": "float", "bounds": [0, 10]},
            "g": {"type": "category", "categories": ["a", "b"]},
        },
        "queries": queries,
    }


@pytest.mark.parametrize("method", ["sequential", "advanced", "zcdp"])
@pytest.mark.parametrize(
    "queries",
    [
        pytest.param(MECHANISM_QUERIES, id="every-mechanism", marks=pytest.mark.slow),
        pytest.param([MECHANISM_QUERIES[1]], id="classic-alone"),
        pytest.param(MECHANISM_QUERIES[1:3], id="classic-and-analytic", marks=pytest.mark.slow),
    ],
)
def test_a_fitted_plan_is_one_release_accepts(
    method: str, queries: list[dict[str, Any]], tmp_path: Path, dpdesk_home: Path
) -> None:
    """Issue 34, item 4: ``budget --fit --write`` writes a plan that release reads (its reader, on the written
    file). A classic Gaussian query whose share is epsilon 1 or more (its formula holds only below 1) is kept at the
    largest epsilon below 1 and said so; the rest goes to the other free queries, and the plan still fits."""
    from dpdesk.cli.inputs import read_plan  # what release reads a plan with

    if (
        method == "zcdp"
    ):  # a synthetic table with delta takes about a minute to fit under zCDP (noted in issue 34)
        queries = [q for q in queries if not (q["statistic"] == "synthetic" and q.get("delta"))]
    src = tmp_path / "plan.json"
    src.write_text(json.dumps(_mechanism_plan(method, 40.0, queries)), encoding="utf-8")
    out = tmp_path / "fitted.json"
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(src), "--fit", "--write", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(dpdesk_home), "LANGUAGE": "en"},
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    fitted = read_plan(str(out), None)  # raises PlanError when release would refuse it
    from dpdesk.core.plan.reader import largest_epsilon

    rep = budget_report(fitted)
    assert rep.fits
    original = parse_plan(json.loads(src.read_text()))
    capped = {
        q.name for q in fitted.queries if f"{q.name}: the classic Gaussian formula holds only" in r.stderr
    }
    for q, before in zip(fitted.queries, original.queries, strict=True):
        assert (
            q.epsilon <= largest_epsilon(q) and q.epsilon > before.epsilon
        )  # every free query got its share
        if q.name in capped:  # kept just below its mechanism's limit, and said so
            assert q.epsilon == round_down(largest_epsilon(q))
    # with 40 to share, the classic queries always reach their limit (zCDP: a classic share of rho is worth more)
    classic = {q.name for q in fitted.queries if q.mechanism == "gaussian" and q.calibration == "classic"}
    assert classic and classic == capped
    # what the capped queries could not take went to the others (when there are any)
    if len(fitted.queries) > len(capped):
        assert rep.remaining_after.epsilon <= 40.0 * 1e-3


def test_a_fitted_classic_gaussian_never_reaches_1_under_zcdp() -> None:
    """The report's case: zCDP with one classic Gaussian count among others gave it epsilon 1.639."""
    p = parse_plan(_mechanism_plan("zcdp", 3.0, MECHANISM_QUERIES[:3]))
    fit = fit_to_budget(p)
    classic = fit.epsilons[1]
    assert classic < 1 and fit.capped == ("n classic",)
    fitted = dataclasses.replace(
        p,
        queries=tuple(
            dataclasses.replace(q, epsilon=e) for q, e in zip(p.queries, fit.epsilons, strict=True)
        ),
    )
    parse_plan(fitted.to_dict())  # as written and read back
