"""Textbook formulas and composition totals against hand-computed numbers.

The reference numbers are the ones in shared/notes/opendp-and-accounting.md §2, each checked there
two or three independent ways (diffprivlib, dp-accounting, OpenDP), and recomputed by hand below.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import mpmath
import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import mechanisms as mech


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
        ws = {
            x: math.exp(-(x * x) / (2 * sigma * sigma))
            for x in range(-int(20 * sigma) - 5, int(20 * sigma) + 6)
        }
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
        assert acc.fits(
            acc.sequential([acc.QueryCost(str(i), s, 0, 0) for i, s in enumerate(shares)]), total, 0
        )
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
    from dpdesk.core.dp.queries_base import DISCRETE_MARGIN

    steps_per_sigma = sigma * 4096  # sigma in grid steps at h = 4096
    extrapolated = gaps[3] * (steps_per_sigma / 2**20) ** 2  # the (h/sigma)^2 trend, at 2^20 steps
    assert extrapolated < DISCRETE_MARGIN / 100


def test_classic_gaussian_leaves_slack_for_the_discrete_gap() -> None:
    for eps in (0.5, 0.9, 0.999):
        for delta in (1e-5, 1e-9):
            sigma = mech.classic_sigma(1, eps, delta)
            assert mech.gaussian_delta(sigma, 1, eps) < 0.9 * delta


def test_gaussian_grid_rule() -> None:
    from dpdesk.core.dp.queries_base import gaussian_grid

    for sigma, unit in ((2.23, 1.0), (1e6, 1.0), (3e-3, 2.0**-10), (123.0, 4.0)):
        h = gaussian_grid(sigma, unit)
        assert sigma / h >= 2**20 and h <= unit and math.log2(unit / h) == int(math.log2(unit / h))


# ----------------------------------------------------------------------------- analytic Gaussian
# mpmath is a test-only dependency (the `test` extra); dpdesk never imports it.

_EPSILONS = (1e-6, 1e-4, 0.01, 0.03, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0)
#: 1e-3 down to the plan's floor 1e-30, and half of it (a mean gives each of its two parts half the delta)
_DELTAS = ("1e-3", "1e-5", "1e-7", "1e-9", "1e-12", "1e-16", "1e-20", "1e-25", "1e-30", "5e-31")


def _mp_delta(sigma: Any, sens: Any, eps: Any) -> Any:
    """Balle & Wang's exact delta, Phi(a - b) - e^eps Phi(-a - b), at 60 significant digits."""
    with mpmath.workdps(60):
        sigma, sens, eps = mpmath.mpf(sigma), mpmath.mpf(sens), mpmath.mpf(eps)
        a, b = sens / (2 * sigma), eps * sigma / sens
        return mpmath.ncdf(a - b) - mpmath.exp(eps) * mpmath.ncdf(-a - b)


@cache
def _mp_sigma(eps: float, delta: str) -> Any:
    """The exact smallest sigma for sensitivity 1: 60-digit bisection to 2^-120 (relative 1e-36)."""
    with mpmath.workdps(60):
        target = mpmath.mpf(delta)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while _mp_delta(hi, 1, eps) > target:
            lo, hi = hi, 2 * hi
        for _ in range(130):
            mid = (lo + hi) / 2
            if _mp_delta(mid, 1, eps) > target:
                lo = mid
            else:
                hi = mid
        return hi


def test_dpdesk_never_imports_mpmath() -> None:
    """mpmath is a test reference only: the installed app must compute the tails without it."""
    from pathlib import Path

    import dpdesk

    for path in Path(dpdesk.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import mpmath" not in text and "from mpmath" not in text, path


@pytest.mark.slow
def test_mills_ratio_meets_its_stated_error_bound() -> None:
    """R(x) = Q(x)/phi(x) and g = 1 - x R(x), the pieces of the cancellation-free delta, against mpmath."""
    worst_r = worst_g = 0.0
    for i in range(-1500, 3001):
        x = i / 50.0 + 0.003 * (i % 7)  # steps of 0.02, shifted off the round numbers
        r, g = mech._mills(x)
        with mpmath.workdps(60):
            xm = mpmath.mpf(x)
            rr = mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(xm / mpmath.sqrt(2)) * mpmath.exp(xm**2 / 2)
            gg = 1 - x * rr
            worst_r = max(worst_r, float(abs(r / rr - 1)))
            worst_g = max(worst_g, float(abs(g / gg - 1)))
    assert worst_r <= mech.MILLS_REL_ERROR / 4  # the bound gaussian_delta adds is 4x what is measured
    assert worst_g <= 2.0**-40  # far inside the 2^-30 rounding-up of gaussian_delta


@pytest.mark.slow
@pytest.mark.parametrize("eps", _EPSILONS)
def test_gaussian_delta_is_an_upper_bound_within_1e_7_of_the_exact_delta(eps: float) -> None:
    for delta in _DELTAS:
        s = float(_mp_sigma(eps, delta))
        for factor in (0.25, 0.5, 0.9, 0.99, 1.0, 1.01, 1.1, 2.0):
            for sens in (1.0, 0.37, 1000.0):
                exact = _mp_delta(s * factor * sens, sens, eps)
                if exact < 1e-290:
                    continue
                ratio = float(mpmath.mpf(mech.gaussian_delta(s * factor * sens, sens, eps)) / exact)
                assert 1.0 <= ratio <= 1.0 + 1e-7, (eps, delta, factor, sens, ratio)


@pytest.mark.parametrize(
    "eps",  # the smallest and 1 in the fast loop, every epsilon in the whole suite
    [e if e in (1e-6, 1.0) else pytest.param(e, marks=pytest.mark.slow) for e in _EPSILONS],
)
def test_analytic_sigma_is_never_below_the_exact_sigma(eps: float) -> None:
    """Every (epsilon, delta) a plan accepts, 1e-3 .. 1e-30: sigma_dpdesk >= sigma_exact, within 1e-7."""
    for delta in _DELTAS:
        exact = _mp_sigma(eps, delta)
        for sens in (1.0, 0.37, 3.0, 1000.0, 2.0**-20 * 3):
            got = mech.analytic_sigma(sens, eps, float(delta))
            rel = float(mpmath.mpf(got) / (exact * mpmath.mpf(sens)) - 1)
            assert 0.0 <= rel <= 1e-7, (eps, delta, sens, rel)


def test_analytic_sigma_at_small_delta_where_erf_lost_the_tail() -> None:
    """The issue's numbers: Phi as 0.5 (1 + erf) gave 7.9516 at (1, 1e-20) and 2.2830467 at (3, 1e-12)."""
    exact = float(_mp_sigma(1.0, "1e-20"))
    assert exact == pytest.approx(8.838226921980, rel=1e-12)
    assert exact <= mech.analytic_sigma(1, 1.0, 1e-20) <= exact * (1 + 1e-8)
    exact = float(_mp_sigma(3.0, "1e-12"))
    assert exact == pytest.approx(2.283052984869, rel=1e-12)
    assert exact <= mech.analytic_sigma(1, 3.0, 1e-12) <= exact * (1 + 1e-8)
    # the true delta at dpdesk's sigma is at most the target
    assert _mp_delta(mech.analytic_sigma(1, 1.0, 1e-20), 1, 1.0) <= mpmath.mpf("1e-20")


def test_analytic_sigma_refuses_deltas_outside_floating_point() -> None:
    with pytest.raises(ValueError):
        mech.analytic_sigma(1, 1.0, 1e-301)
    with pytest.raises(ValueError):
        mech.analytic_sigma(1, 1.0, 1.0)
    # far below the plan's floor it still holds (spot checks)
    for delta in ("1e-100", "1e-300"):
        got = mech.analytic_sigma(1, 0.5, float(delta))
        assert 0 <= float(mpmath.mpf(got) / _mp_sigma(0.5, delta) - 1) <= 1e-7


# ----------------------------------------------------------------------------- the discrete Gaussian drawn


def _mp_dg_total(sigma: Any) -> Any:
    """sum_z exp(-z^2 / (2 s^2)) over all integers = s sqrt(2 pi) (1 + 2 sum_k e^(-2 pi^2 s^2 k^2))."""
    s = mpmath.mpf(sigma)
    waves = mpmath.fsum(mpmath.exp(-2 * mpmath.pi**2 * s**2 * k * k) for k in (1, 2, 3))
    return s * mpmath.sqrt(2 * mpmath.pi) * (1 + 2 * waves)


def _mp_dg_tail(sigma: Any, n: int, terms: int = 20) -> Any:
    """sum_{z >= n} exp(-z^2 / (2 sigma^2)) by Euler-Maclaurin: integral + f(n)/2 - sum B_2k/(2k)! f^(2k-1)(n)

    f = exp(-al z^2) has f^(j) = f P_j(y), y = -2 al z, P_{j+1} = y P_j - 2 al j P_{j-1} (Hermite).
    """
    s = mpmath.mpf(sigma)
    if n <= 0:
        return _mp_dg_total(s) - _mp_dg_tail(s, 1 - n, terms)
    al = 1 / (2 * s * s)
    f = mpmath.exp(-al * n * n)
    integral = mpmath.sqrt(mpmath.pi / al) / 2 * mpmath.erfc(mpmath.sqrt(al) * n)
    y = -2 * al * n
    p = [mpmath.mpf(1), y]
    for j in range(1, 2 * terms):
        p.append(y * p[j] - 2 * al * j * p[j - 1])
    corr = mpmath.fsum(
        mpmath.bernoulli(2 * k) / mpmath.factorial(2 * k) * f * p[2 * k - 1] for k in range(1, terms + 1)
    )
    return integral + f / 2 - corr


def _mp_discrete_delta(sigma: float, shift: int, eps: float) -> Any:
    """Exact delta of the discrete Gaussian (scale sigma, integer shift D) at eps (CKS 2020, Thm 7).

    delta = P[Z > eps sigma^2/D - D/2] - e^eps P[Z > eps sigma^2/D + D/2], Z the discrete Gaussian.
    """
    with mpmath.workdps(60):
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        a = e * s * s / shift - mpmath.mpf(shift) / 2
        b = a + shift
        tail_a = _mp_dg_tail(s, int(mpmath.floor(a)) + 1)
        tail_b = _mp_dg_tail(s, int(mpmath.floor(b)) + 1)
        return (tail_a - mpmath.exp(e) * tail_b) / _mp_dg_total(s)


def test_discrete_gaussian_reference_matches_a_direct_sum() -> None:
    """The Euler-Maclaurin tail (used below at sigma ~ 2^20, too far to sum) against brute force."""
    with mpmath.workdps(60):
        for sigma in (20, 37.5):
            s = mpmath.mpf(sigma)
            for n in (-40, 0, 1, 13, 50, 150):
                zs = range(n, n + int(80 * sigma))
                direct = mpmath.fsum(mpmath.exp(-(mpmath.mpf(z) ** 2) / (2 * s * s)) for z in zs)
                assert abs(_mp_dg_tail(s, n) / direct - 1) < mpmath.mpf("1e-50")
        # and the whole delta against the floating-point brute force above, at a small sigma
        brute = _discrete_gaussian_delta(30.0, 7, 0.5)
        assert float(_mp_discrete_delta(30.0, 7, 0.5)) == pytest.approx(brute, rel=1e-9)


def _plan(queries: list[dict[str, Any]], k: int) -> Any:
    from dpdesk.core.plan.reader import parse_plan

    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 100, "delta": 0.5},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": k},
            "columns": {
                "wage": {"type": "float", "bounds": [0, 5000]},
                "age": {"type": "int", "bounds": [0, 18]},
            },
            "queries": queries,
        }
    )


@pytest.mark.parametrize("delta", [1e-6, 1e-12, 1e-20, 1e-30])
def test_booked_delta_covers_the_exact_delta_of_the_discrete_gaussian_drawn(delta: float) -> None:
    """OpenDP draws a discrete Gaussian on the grid: its exact delta must not exceed the booked delta."""
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.dp.queries_base import DISCRETE_MARGIN

    checked = 0
    for eps in (0.1, 0.5, 0.9, 1.0, 3.0, 10.0):
        for calibration in ("classic", "analytic") if eps < 1 else ("analytic",):
            queries = [
                {"name": "n", "statistic": "count"},
                {"name": "s", "statistic": "sum", "column": "age"},
                {"name": "m", "statistic": "mean", "column": "wage"},
                {"name": "v", "statistic": "variance", "column": "wage"},
            ]
            for q in queries:
                q.update(mechanism="gaussian", calibration=calibration, epsilon=eps, delta=delta)
            for k in (1, 3):
                for design in design_plan(_plan(queries, k)):
                    for c in design.components:
                        sigma, shift = c.scale / c.grid, c.l2 / c.grid  # what draw_gaussian hands OpenDP
                        assert shift == int(shift) and sigma >= 2**20
                        exact = _mp_discrete_delta(sigma, int(shift), c.epsilon)
                        where = (eps, delta, calibration, k, c.label, float(exact / c.delta))
                        assert exact <= mpmath.mpf(c.delta), where
                        if calibration == "analytic":  # the discrete gap stays far inside the margin
                            gap = abs(exact / _mp_delta(sigma, int(shift), c.epsilon) - 1)
                            assert gap < DISCRETE_MARGIN / 100
                        checked += 1
    assert checked == (3 * 2 + 3) * 2 * 7  # 3 epsilons x 2 calibrations, 3 analytic only; 2 k; 7 components


# ----------------------------------------------------------------------------- exponential mechanism


def test_exponential_scale_is_certified_by_opendps_zcdp_map() -> None:
    nudged = 0
    for eps in (0.01, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.3, 2.0, 3.0, 5.0, 10.0):
        for du in (0.1, 0.25, 0.5, 0.7, 0.9, 1.0, 1.5, 2.0, 3.0, 7.0, 100.0):
            m, scale = mech.exponential_measurement(du, eps)
            assert m.map(du) <= eps**2 / 8  # what the zCDP accountant books for it
            textbook = 2.0 * du / eps
            assert textbook <= scale <= textbook + 8 * math.ulp(textbook)
            nudged += scale > textbook
    # division alone leaves OpenDP's certified rho one ulp above eps^2/8 in many of these cases
    assert nudged > 10


def test_variance_worked_numbers_three_thirds_of_epsilon_and_delta() -> None:
    """A variance over [0, 10] (h = 5, R = h^2 = 25), epsilon 0.9, add/remove, one row: three Laplace parts with
    epsilon 0.3 each, b = 1/0.3, 5/0.3 and 25/0.3 (count, sum of x - mid, sum of (x - mid)^2); the Gaussian
    variant books delta/3 per part; the totals compose sequentially back to the query's epsilon and delta."""
    from dpdesk.core.dp.queries import design_query
    from dpdesk.core.plan.reader import parse_plan

    def design(**q: Any) -> Any:
        plan = parse_plan(
            {
                "version": 1,
                "budget": {"epsilon": 10.0, "delta": 1e-5},
                "privacy_unit": {"neighbouring": "add_remove"},
                "columns": {"x": {"type": "float", "bounds": [0, 10]}},
                "queries": [{"name": "v", "statistic": "variance", "column": "x", "epsilon": 0.9, **q}],
            }
        )
        return design_query(plan.queries[0], plan)

    lap = design(mechanism="laplace")
    assert [c.epsilon for c in lap.components] == pytest.approx([0.3, 0.3, 0.3])
    assert [c.l1 for c in lap.components] == pytest.approx([1.0, 5.0, 25.0])
    assert [c.scale for c in lap.components] == pytest.approx([1 / 0.3, 5 / 0.3, 25 / 0.3])
    assert all("epsilon/3 = 0.3" in c.formula for c in lap.components)
    gauss = design(mechanism="gaussian", delta=3e-6)
    assert [c.delta for c in gauss.components] == pytest.approx([1e-6, 1e-6, 1e-6])
    assert sum(c.delta for c in gauss.components) == pytest.approx(gauss.delta)
    assert gauss.components[2].scale == pytest.approx(mech.classic_sigma(25.0, 0.3, 1e-6))
