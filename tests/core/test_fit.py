"""Fit to the budget: what is left, less a reserve, split by weight in the accounting method's own unit."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.budget import budget_report
from dpdesk.core.fit import FitError, fit_to_budget, round_down
from dpdesk.core.plan import load_plan, parse_plan
from dpdesk.core.queries import design_plan
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
