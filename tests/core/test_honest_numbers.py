"""Honest numbers (issue 34 items 1, 2): a mean's or a proportion's accuracy is charged for its noise, not for
the rounding of its whole range, and its published value keeps the digits its noise leaves it.

The references here are computed independently of dpdesk's bound: the exact failure probability of the worst
table (every value at a bound, |S| = h n) summed over the count's noise in 40 digits (mpmath), with the closed-form
discrete Laplace tails.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import accuracy as acc
from dpdesk.core.dp import accuracy_base as accb
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.loading import Column, Table
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import steps as rel

mpmath.mp.dps = 40

SURVEY_ROWS = 28_155  # the survey of the issue; its share of about 0.08
SHARE_ROWS = 2_233  # 2,233 / 28,155 = 0.0793


def _plan(q: dict[str, Any], rows: int | None = 28_000, lo: float = 0.0, hi: float = 5000.0) -> Any:
    d: dict[str, Any] = {
        "version": 1,
        "budget": {"epsilon": 100.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove"},
        "columns": {
            "wage": {"type": "float", "bounds": [lo, hi]},
            "flag": {"type": "int", "bounds": [0, 1]},
            "region": {"type": "category", "categories": ["a", "b"]},
        },
        "queries": [{"name": "q", **q}],
    }
    if rows is not None:
        d["expected_rows"] = rows
    return parse_plan(d)


def _mean(**over: Any) -> dict[str, Any]:
    return {"statistic": "mean", "column": "wage", "mechanism": "laplace", **over}


def _worst_failure(design: Any, n: int, h: float, t: float, r: float | None = None) -> Any:
    """P(|S~/n~ - S/n| > t) for the table with S = r n (default r = h: every value at the upper bound), Laplace
    noise, summed over the count's noise y in 40 digits: P(Z_s g > t (n + y) + r y) + P(Z_s g < r y - t (n + y))."""
    count_c, sum_c = design.components
    r = h if r is None else r
    tn_ = mpmath.mpf(count_c.scale / count_c.grid) * (1 + accb.SCALE_MARGIN)
    ts_ = mpmath.mpf(sum_c.scale / sum_c.grid) * (1 + accb.SCALE_MARGIN)
    rn, rs = mpmath.exp(-1 / tn_), mpmath.exp(-1 / ts_)
    gs, gn = mpmath.mpf(sum_c.grid), mpmath.mpf(count_c.grid)

    def above(x: Any) -> Any:  # P(Z_s g > x)
        k = mpmath.floor(x / gs)
        if k >= 0:
            return rs ** (k + 1) / (1 + rs)
        return 1 - rs ** (-k) / (1 + rs)

    top = int(45 * tn_) + 2  # beyond: mass below 1e-19
    total = mpmath.mpf(0)
    for yk in range(-top, top + 1):
        y = yk * gn
        p = (1 - rn) / (1 + rn) * rn ** abs(yk)
        if n + y < 1:
            total += p
            continue
        thr = t * (n + y)
        total += p * min(1, above(thr + r * y) + above(thr - r * y))
    return total


def _worst_at(q: dict[str, Any], n: int, h: float, error: float, eps: float) -> Any:
    """The worst table's exact failure at this epsilon."""
    plan = _plan({**q, "epsilon": eps}, n)
    return _worst_failure(design_query(plan.queries[0], plan), n, h, error)


def test_a_mean_target_is_charged_for_its_noise_not_for_its_range() -> None:
    """The issue's numbers: ±6 and ±3 at 95% on a wage bounded [0, 5000] with 28,000 expected rows cost below
    0.4 and 1 (they cost 1.322 and 'no epsilon up to 100' before), and the solved epsilon is within 15% of the
    smallest that the worst table meets exactly."""
    for error, below in ((6.0, 0.4), (3.0, 1.0)):
        plan = _plan(_mean(accuracy={"error": error}))
        eps = plan.queries[0].epsilon
        assert eps < below, (error, eps)
        # the smallest epsilon the worst table meets exactly lies in [eps / 1.15, eps]
        assert _worst_at(_mean(), 28_000, 2500.0, error, eps) <= 0.05
        assert _worst_at(_mean(), 28_000, 2500.0, error, eps / 1.15) > 0.05
    # ±5 was refused outright (the rounding of the range alone was ±5)
    assert _plan(_mean(accuracy={"error": 5})).queries[0].epsilon < 0.4


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_the_mean_bound_holds_for_every_table_and_is_tight(eps: float) -> None:
    """At the stated error, the exact failure of tables at the bound, at half of it and at the middle is at
    most 5%; at 0.95 of it the worst table fails more than 5% (the bound overstates the error by under 5%)."""
    plan = _plan(_mean(epsilon=eps), 2_000)
    d = design_query(plan.queries[0], plan)
    got = acc.query_accuracy(d, plan).error
    assert got is not None and got < 5000
    for r in (2500.0, 1250.0, 0.0, -2500.0):
        assert _worst_failure(d, 2_000, 2500.0, got, r) <= 0.05
    assert _worst_failure(d, 2_000, 2500.0, 0.95 * got) > 0.05


SHARE_Q = {"statistic": "proportion", "column": "region", "categories": ["a"], "mechanism": "laplace"}


@pytest.mark.parametrize("n,eps", [(200, 0.2), (100, 0.3)])
def test_the_mean_bound_holds_when_the_count_s_noise_is_a_large_part_of_the_rows(n: int, eps: float) -> None:
    """With a noisy count of scale 10 or more against 100-200 rows, the denominator n + y matters: the stated
    error still holds for tables at either bound and in the middle."""
    plan = _plan(_mean(epsilon=eps), n)
    d = design_query(plan.queries[0], plan)
    got = acc.query_accuracy(d, plan).error
    assert got is not None and got < 5000
    for r in (2500.0, -2500.0, 1250.0, 0.0):
        assert _worst_failure(d, n, 2500.0, got, r) <= 0.05


@pytest.mark.parametrize(
    "q,n,h",
    [(_mean(accuracy={"error": 20}), 2_000, 2500.0), ({**SHARE_Q, "accuracy": {"error": 0.01}}, 2_000, 0.5)],
)
def test_85_percent_of_a_solved_ratio_epsilon_misses_the_target(q: dict[str, Any], n: int, h: float) -> None:
    """The solver is tight for means and proportions: at 0.85 of the solved epsilon the worst table's exact
    failure exceeds 1 - c."""
    plan = _plan(q, n)
    spec = plan.queries[0]
    target = spec.accuracy
    assert target is not None
    lower = {k: v for k, v in q.items() if k != "accuracy"}
    p85 = _plan({**lower, "epsilon": 0.85 * spec.epsilon}, n)
    d85 = design_query(p85.queries[0], p85)
    assert _worst_failure(d85, n, h, target.error) > 1 - target.confidence


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_85_percent_of_a_solved_sum_epsilon_misses_the_target(mechanism: str) -> None:
    """Counts were shown tight (test_accuracy); a sum too, with the rounding of its own noise."""
    q: dict[str, Any] = {"statistic": "sum", "column": "wage", "mechanism": mechanism}
    if mechanism == "gaussian":
        q.update(delta=1e-7, calibration="analytic")
    plan = _plan({**q, "accuracy": {"error": 2000.0}})
    eps = plan.queries[0].epsilon
    p85 = _plan({**q, "epsilon": 0.85 * eps})
    d85 = design_query(p85.queries[0], p85)
    assert acc.value_error(d85, 0.95) > 2000.0


def test_the_rounding_follows_the_noise_at_every_epsilon() -> None:
    """The stated error of a mean is its noise's plus at most 1% for rounding, from epsilon 0.01 to 100 (it
    was ±5 for rounding alone, so ±5.007 at epsilon 100)."""
    for eps in (0.01, 0.3, 3.0, 30.0, 100.0):
        plan = _plan(_mean(epsilon=eps))
        d = design_query(plan.queries[0], plan)
        err = acc.query_accuracy(d, plan).error
        rounding = accb.ratio_rounding(d, 2500.0, 5000.0, 28_000, 0.95)
        assert err is not None and rounding <= 0.01 * err + 1e-6, (eps, err, rounding)
    plan = _plan(_mean(epsilon=100.0))
    assert (acc.query_accuracy(design_query(plan.queries[0], plan), plan).error or 9) < 0.5


def _share_releases(eps: float, draws: int, column: str = "region") -> list[float]:
    q: dict[str, Any] = (
        {"statistic": "proportion", "column": "region", "categories": ["a"], "mechanism": "laplace"}
        if column == "region"
        else {"statistic": "mean", "column": "flag", "mechanism": "laplace"}
    )
    plan = _plan({**q, "epsilon": eps}, SURVEY_ROWS)
    design = design_query(plan.queries[0], plan)
    g = np.zeros(SURVEY_ROWS, dtype=np.int64)
    g[SHARE_ROWS:] = 1  # category "a" in the first 2,233 rows
    x = (g == 0).astype(np.float64)
    cols = {"region": Column(plan.columns["region"], g), "flag": Column(plan.columns["flag"], x)}
    table = Table("t", "", SURVEY_ROWS, cols)
    exact = exact_statistic(design, table, np.ones(SURVEY_ROWS, dtype=bool), plan.columns)
    return [float(rel.noisy_rows(design, exact, plan)[0].value) for _ in range(draws)]


@pytest.mark.slow
@pytest.mark.statistical
def test_a_share_at_epsilon_10_keeps_its_digits() -> None:
    """1,000 releases of a share of 0.0793 of 28,155 rows at epsilon 10 (add/remove) through the release's own
    noise and rounding are all within ±0.01 (none is 0 or 1; before, all 4,000 of 4,000 were 0). A release is off
    by 0.01 only if a noise is off by about 140 of its steps, at scale 0.2 steps: probability below 1e-100, so
    this test fails by chance with probability below 1e-97."""
    truth = SHARE_ROWS / SURVEY_ROWS
    values = _share_releases(10.0, 1_000)
    assert all(abs(v - truth) <= 0.01 for v in values)
    assert all(0.0 < v < 1.0 for v in values)
    # the mean of a 0/1 column at epsilon 20 is not published as 0
    assert all(abs(v - truth) <= 0.01 for v in _share_releases(20.0, 50, column="flag"))


def test_an_unreachable_target_says_why() -> None:
    """Refused only when no epsilon up to 100 meets it, saying what epsilon 100 reaches with the expected rows."""
    with pytest.raises(PlanError) as err:
        _plan(_mean(accuracy={"error": 0.01}), 20)
    text = str(err.value)
    assert "no epsilon up to 100" in text and "20 expected rows" in text
    reached = float(text.split("gives only ±")[1].split()[0])
    best = acc.query_accuracy(*_at(_mean(epsilon=100.0), 20))
    assert best.error is not None and reached == pytest.approx(best.error, rel=1e-3)


def _at(q: dict[str, Any], rows: int) -> tuple[Any, Any]:
    plan = _plan(q, rows)
    return design_query(plan.queries[0], plan), plan
