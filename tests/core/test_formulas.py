"""Textbook formulas and composition totals against hand-computed numbers.

The reference numbers are the ones in shared/notes/opendp-and-accounting.md §2, each checked there
two or three independent ways (diffprivlib, dp-accounting, OpenDP), and recomputed by hand below.
"""

from __future__ import annotations

import math

import pytest

from dpdesk.core import accounting as acc
from dpdesk.core import mechanisms as mech


def test_laplace_scale_and_95_bound() -> None:
    assert mech.laplace_scale(1, 0.1) == 10.0
    assert mech.laplace_bound(10.0) == pytest.approx(10 * math.log(20))
    # Laplace CDF: P(|X| <= b ln 20) = 1 - exp(-ln 20) = 0.95
    assert 1 - math.exp(-mech.laplace_bound(7.0) / 7.0) == pytest.approx(0.95)


def test_classic_gaussian_sigma_worked_numbers() -> None:
    assert mech.classic_sigma(1, 0.5, 1e-5) == pytest.approx(9.689611, abs=1e-6)
    # sqrt(2 ln(1.25e6)) / 0.5
    assert mech.classic_sigma(1, 0.5, 1e-6) == pytest.approx(10.597605, abs=1e-6)
    assert mech.classic_sigma(3, 0.5, 1e-6) == pytest.approx(3 * 10.597605, abs=1e-5)


def test_analytic_gaussian_is_the_smallest_sigma_meeting_delta() -> None:
    sigma = mech.analytic_sigma(1, 0.5, 1e-5)
    assert sigma == pytest.approx(7.031827, abs=1e-6)
    assert mech.gaussian_delta(sigma, 1, 0.5) <= 1e-5
    assert mech.gaussian_delta(sigma * (1 - 1e-6), 1, 0.5) > 1e-5
    # it is never larger than the classic sigma where both apply
    for eps in (0.1, 0.5, 0.9):
        assert mech.analytic_sigma(1, eps, 1e-6) < mech.classic_sigma(1, eps, 1e-6)
    # scales linearly in the sensitivity
    assert mech.analytic_sigma(4, 0.5, 1e-5) == pytest.approx(4 * 7.031827, rel=1e-6)


def test_exponential_mechanism_worked_probabilities() -> None:
    p = mech.em_probabilities([50, 20, 30], 0.1, 1)
    assert [round(x, 3) for x in p] == [0.629, 0.140, 0.231]
    assert sum(p) == pytest.approx(1.0)
    # by hand: exp(0.05 u) normalised
    w = [math.exp(0.05 * u) for u in (50, 20, 30)]
    assert p == pytest.approx([x / sum(w) for x in w])


def test_em_gap_for_95_percent() -> None:
    g = mech.em_gap_for(0.95, 0.1, 1)
    assert mech.em_probabilities([g, 0], 0.1, 1)[0] == pytest.approx(0.95)


def test_discrete_interval_halfwidths_cover_95_percent_exactly() -> None:
    for b in (0.5, 1.0, 3.0, 10.0, 123.4):
        t = mech.discrete_laplace_halfwidth(b)
        tail = lambda s: 2 * math.exp(-(s + 1) / b) / (1 + math.exp(-1 / b))  # noqa: E731
        assert tail(t) <= 0.05 < (tail(t - 1) if t > 0 else 1.0)
    for sigma in (0.3, 1.0, 5.0, 40.0):
        t = mech.discrete_gaussian_halfwidth(sigma)
        ws = {x: math.exp(-(x * x) / (2 * sigma * sigma)) for x in range(-int(20 * sigma) - 5, int(20 * sigma) + 6)}
        z = sum(ws.values())
        cover = lambda s: sum(w for x, w in ws.items() if abs(x) <= s) / z  # noqa: E731
        assert cover(t) >= 0.95 and (t == 0 or cover(t - 1) < 0.95)


def test_advanced_composition_worked_numbers() -> None:
    t = acc.advanced([acc.QueryCost("q", 0.1, 0.0, 0.0)] * 100, 1e-6)
    # sqrt(2*100*ln(1e6))*0.1 + 100*0.1*(e^0.1 - 1) = 5.256521 + 1.051709
    assert t.epsilon == pytest.approx(6.308231, abs=1e-6)
    assert t.delta == pytest.approx(1e-6)
    # heterogeneous: sqrt(2 ln(1/d') sum eps^2) + sum eps (e^eps - 1), deltas add
    costs = [acc.QueryCost("a", 0.1, 1e-7, 0), acc.QueryCost("b", 0.3, 0, 0)]
    t = acc.advanced(costs, 1e-6)
    by_hand = math.sqrt(2 * math.log(1e6) * (0.01 + 0.09)) + 0.1 * math.expm1(0.1) + 0.3 * math.expm1(0.3)
    assert t.epsilon == pytest.approx(by_hand)
    assert t.delta == pytest.approx(1.1e-6)


def test_sequential_is_exact_in_decimals() -> None:
    costs = [acc.QueryCost(str(i), 0.1, 0.0, 0) for i in range(10)]
    t = acc.sequential(costs)
    assert str(t.epsilon_decimal) == "1.0"
    assert acc.fits(t, 1.0, 0.0)  # 10 x 0.1 is exactly the budget, not 1.0000000000000002
    assert not acc.fits(acc.sequential([*costs, acc.QueryCost("x", 1e-12, 0, 0)]), 1.0, 0.0)
    t = acc.sequential([acc.QueryCost("a", 0.1, 1e-7, 0), acc.QueryCost("b", 0.2, 2e-7, 0)])
    assert t.epsilon == pytest.approx(0.3) and t.delta == pytest.approx(3e-7)


def test_zcdp_total_of_ten_gaussians() -> None:
    sigma = mech.classic_sigma(1, 0.5, 1e-6)
    rho = mech.gaussian_rho(1, sigma)
    assert rho == pytest.approx(0.004452, abs=1e-6)
    t = acc.zcdp(10 * rho, 1e-6)
    assert t.rho == pytest.approx(0.044520, abs=1e-6)
    assert t.epsilon == pytest.approx(1.3824, abs=1e-4)  # CKS20 (OpenDP)
    assert t.epsilon_simple == pytest.approx(1.6130, abs=1e-4)  # rho + 2 sqrt(rho ln(1/delta))
    assert acc.zcdp(10 * rho, 1e-5).epsilon == pytest.approx(1.2277, abs=1e-4)


def test_zcdp_of_pure_laplace_queries() -> None:
    # 100 Laplace queries at eps 0.1: rho = 100 * 0.1^2 / 2 = 0.5 -> 5.2215 at delta 1e-6
    assert acc.zcdp(100 * 0.1**2 / 2, 1e-6).epsilon == pytest.approx(5.221534, abs=1e-5)


def test_rho_budget_inverts_the_conversion() -> None:
    r = acc.rho_budget(1.0, 1e-6)
    assert mech.rho_to_epsilon(r, 1e-6) <= 1.0
    assert mech.rho_to_epsilon(r * 1.001, 1e-6) > 1.0


def test_dataset_total_on_advanced_adds_releases_sequentially() -> None:
    r = acc.Release((acc.QueryCost("q", 0.1, 0, 0),) * 100, 1e-6)
    one = acc.advanced(r.costs, 1e-6).epsilon
    two = acc.dataset_total("advanced", [r, r], 1e-5)
    assert two.epsilon == pytest.approx(2 * one)
    assert two.delta == pytest.approx(2e-6)


def test_split_budget_never_exceeds_the_total() -> None:
    from decimal import Decimal

    for total, weights in ((1.0, [1, 1, 1]), (0.7, [3, 1, 2, 5]), (2.0, [1] * 7), (0.3, [0.1, 0.2])):
        shares = acc.split_budget(total, weights)
        assert sum(Decimal(repr(s)) for s in shares) <= Decimal(repr(total))
        assert sum(shares) == pytest.approx(total, abs=1e-5)
        assert acc.fits(acc.sequential([acc.QueryCost(str(i), s, 0, 0) for i, s in enumerate(shares)]), total, 0)
    assert acc.split_budget(1.0, [1, 3]) == [0.25, 0.75]
    with pytest.raises(ValueError):
        acc.split_budget(1.0, [0, 0])


def _discrete_gaussian_delta(sigma: float, shift: int, eps: float) -> float:
    """Exact delta of the discrete Gaussian on the integers for an integer shift (CKS20, Thm 7)."""
    import numpy as np

    top = int(40 * sigma) + shift + 5
    x = np.arange(-top, top + 1)
    w = np.exp(-(x**2) / (2 * sigma**2))
    w /= w.sum()
    a, b = eps * sigma**2 / shift - shift / 2, eps * sigma**2 / shift + shift / 2
    return float(w[x > a].sum() - math.exp(eps) * w[x > b].sum())


def test_why_gaussian_noise_is_not_drawn_on_the_integers() -> None:
    """At the analytic sigma, integer-grid discrete Gaussian noise would exceed the promised delta by 10%."""
    sigma = mech.analytic_sigma(1, 2.0, 1e-6)
    assert mech.gaussian_delta(sigma, 1, 2.0) <= 1e-6
    assert _discrete_gaussian_delta(sigma, 1, 2.0) > 1.05e-6
    # on finer grids the relative gap shrinks about like (h/sigma)^2: measured here up to h = 4096
    cont = mech.gaussian_delta(sigma, 1, 2.0)
    gaps = [abs(_discrete_gaussian_delta(sigma * h, h, 2.0) - cont) / cont for h in (1, 16, 256, 4096)]
    assert gaps[0] > 0.05 and gaps[1] < 1e-3 and gaps[2] < 1e-6 and gaps[3] < 1e-7
    # dpdesk's grid is >= 2^20 / sigma finer (gap ~1e-12); the analytic calibration keeps a 1e-9 margin
    from dpdesk.core.queries import DISCRETE_MARGIN

    steps_per_sigma = sigma * 4096  # sigma in grid steps at h = 4096
    extrapolated = gaps[3] * (steps_per_sigma / 2**20) ** 2  # the (h/sigma)^2 trend, at 2^20 steps
    assert extrapolated < DISCRETE_MARGIN / 100


def test_classic_gaussian_leaves_slack_for_the_discrete_gap() -> None:
    for eps in (0.5, 0.9, 0.999):
        for delta in (1e-5, 1e-9):
            sigma = mech.classic_sigma(1, eps, delta)
            assert mech.gaussian_delta(sigma, 1, eps) < 0.9 * delta


def test_gaussian_grid_rule() -> None:
    from dpdesk.core.queries import gaussian_grid

    for sigma, unit in ((2.23, 1.0), (1e6, 1.0), (3e-3, 2.0**-10), (123.0, 4.0)):
        h = gaussian_grid(sigma, unit)
        assert sigma / h >= 2**20 and h <= unit and math.log2(unit / h) == int(math.log2(unit / h))
