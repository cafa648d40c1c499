"""Statistical tests of the release sampler (OpenDP, unseeded: the release sampler is never seeded).

Each test states its false-failure rate: the probability that a correct sampler fails it.
Thresholds are set so that the whole module fails by chance less than once in 10^5 runs.

* Variances are checked with a z-test at |z| < 5.5 on N draws (two-sided normal tail 3.8e-8;
  the sample variance of N >= 20,000 draws is close to normal).
* Interval coverage is checked with an exact-binomial-style z bound at |z| < 5.5.
* Exponential-mechanism frequencies use a chi-square test with 2 degrees of freedom at
  p < 1e-7 (critical value -2 ln(1e-7) = 32.24).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp.queries import design_query
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import steps as rel

pytestmark = [pytest.mark.statistical, pytest.mark.slow]
Z = 5.5


def discrete_laplace_var(b: float) -> float:
    """Var of P(x) ~ exp(-|x|/b) on the integers: 2 r / (1 - r)^2 with r = exp(-1/b)."""
    r = math.exp(-1.0 / b)
    return 2 * r / (1 - r) ** 2


def test_laplace_draws_have_the_calibrated_scale() -> None:
    """N = 40,000 draws at b = 10 (one vector release of zeros). False failure < 4e-8."""
    n = 40_000
    x = np.asarray(mech.draw_laplace([0] * n, 1, 0.1)[0], dtype=np.float64)
    var = discrete_laplace_var(10.0)  # 199.83 (continuous: 2 b^2 = 200)
    # Var(s^2) ~ (mu4 - var^2)/n with mu4 ~ 24 b^4 for Laplace
    se = math.sqrt((24 * 10.0**4 - var**2) / n)
    assert abs(x.var() - var) < Z * se
    assert abs(x.mean()) < Z * math.sqrt(var / n)


def test_laplace_at_half_scale_would_be_caught() -> None:
    """The same check rejects noise of half the scale (power: z of about 100, certain)."""
    n = 40_000
    x = np.asarray(
        mech.draw_laplace([0] * n, 1, 0.2)[0], dtype=np.float64
    )  # b = 5, as if sensitivity were halved
    se = math.sqrt((24 * 10.0**4 - discrete_laplace_var(10.0) ** 2) / n)
    assert abs(x.var() - discrete_laplace_var(10.0)) > Z * se


def test_gaussian_draws_have_the_calibrated_sigma() -> None:
    """N = 20,000 draws at sigma = 9.69 (classic, D = 1, eps 0.5, delta 1e-5). False failure < 4e-8."""
    n = 20_000
    sigma = mech.classic_sigma(1, 0.5, 1e-5)
    x = np.asarray(mech.draw_gaussian([0] * n, 1.0, sigma)[0], dtype=np.float64)
    # discrete Gaussian variance at sigma ~ 9.7 equals sigma^2 to within 1e-30
    se = math.sqrt(2 * sigma**4 / n)
    assert abs(x.var() - sigma**2) < Z * se


def test_fixed_point_sum_noise_has_the_natural_scale() -> None:
    """A float sum's noise, in natural units, has Laplace scale M / eps. N = 20,000; false failure < 4e-8."""
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1.0},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {
                "x": {"type": "float", "bounds": [0, 250.5]},
                "g": {"type": "category", "categories": ["a"]},
            },
            "queries": [
                {"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.5}
            ],
        }
    )
    (comp,) = design_query(plan.queries[0], plan).components
    assert comp.scale == pytest.approx(250.5 / 0.5)
    n = 20_000
    noisy = rel._opendp_noise([0] * n, comp)
    x = np.asarray(noisy, dtype=np.float64) * comp.grid
    b = comp.scale
    se = math.sqrt(20 * b**4 / n)  # (mu4 - var^2)/n = (24 - 4) b^4 / n
    assert abs(x.var() - 2 * b**2) < Z * se


def test_released_intervals_cover_95_percent() -> None:
    """Coverage of the count interval over N = 20,000 vector draws at b = 1/0.3.

    The interval is exact for the discrete noise: coverage p = 1 - 2 e^{-11/b}/(1 + e^{-1/b}) = 0.9566.
    False failure < 4e-8 (|z| < 5.5 with the binomial standard error).
    """
    n = 20_000
    b = 1 / 0.3
    half = mech.discrete_laplace_halfwidth(b)
    x = np.asarray(mech.draw_laplace([0] * n, 1, 0.3)[0])
    p = 1 - 2 * math.exp(-(half + 1) / b) / (1 + math.exp(-1 / b))
    assert p >= 0.95
    cover = float(np.mean(np.abs(x) <= half))
    assert abs(cover - p) < Z * math.sqrt(p * (1 - p) / n)


def test_exponential_mechanism_matches_the_textbook_probabilities() -> None:
    """u = (50, 20, 30), Du = 1, eps = 0.1: P = (0.629, 0.140, 0.231). N = 6,000 OpenDP draws.

    Chi-square with 2 degrees of freedom, false failure 1e-7. Permute-and-flip (what OpenDP's pure
    measure samples: 0.732, 0.098, 0.170) gives a chi-square near 300 at this N, so it is caught.
    """
    n = 6_000
    p = np.asarray(mech.em_probabilities([50, 20, 30], 0.1, 1))
    counts = np.bincount([mech.draw_exponential([50, 20, 30], 1.0, 0.1) for _ in range(n)], minlength=3)
    chi2 = float(((counts - n * p) ** 2 / (n * p)).sum())
    assert chi2 < -2 * math.log(1e-7)
    pf = np.asarray([0.732, 0.098, 0.170])
    assert float(((n * pf - n * p) ** 2 / (n * p)).sum()) > 100


def test_gaussian_count_noise_is_drawn_on_a_fine_grid_with_the_calibrated_sigma() -> None:
    """Analytic Gaussian count (sigma ~ 2.23 at eps 2): noise on a grid >= 2^20 x finer than sigma.

    N = 20,000 draws; variance z-test at |z| < 5.5, false failure < 4e-8.
    """
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 5.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {"g": {"type": "category", "categories": ["a"]}},
            "queries": [
                {
                    "name": "n",
                    "statistic": "count",
                    "mechanism": "gaussian",
                    "calibration": "analytic",
                    "epsilon": 2.0,
                    "delta": 1e-6,
                }
            ],
        }
    )
    (comp,) = design_query(plan.queries[0], plan).components
    assert comp.scale == pytest.approx(mech.analytic_sigma(1, 2.0, 1e-6))
    assert comp.scale / comp.grid >= 2**20 and comp.unit == 1.0 and comp.refine == round(1 / comp.grid)
    n = 20_000
    x = np.asarray(rel._opendp_noise([3] * n, comp), dtype=np.float64) * comp.grid - 3
    assert abs(x.var() - comp.scale**2) < Z * math.sqrt(2 * comp.scale**4 / n)
    assert np.mean(x != np.round(x)) > 0.99  # not integer noise


def test_float_outputs_lie_on_one_lattice_whatever_the_input() -> None:
    """Mironov's attack reads the input off which floats a naive Laplace can output.

    Here every noisy sum is an integer multiple of the public grid 2^-s for any true value, so the set
    of possible outputs does not depend on the data. A naive float sampler (value + numpy Laplace) is
    shown to fail the same check. Deterministic apart from the noise: no false failures.
    """
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1.0},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {
                "x": {"type": "float", "bounds": [0, 1000.0]},
                "g": {"type": "category", "categories": ["a"]},
            },
            "queries": [
                {"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.5}
            ],
        }
    )
    (comp,) = design_query(plan.queries[0], plan).components
    inv = round(1 / comp.grid)  # the grid is a power of two: multiplying by its inverse is exact
    for true in (0, 123_456_789, 2**40 + 3):  # exact sums in grid units
        noisy = rel._opendp_noise([true] * 5_000, comp)
        out = np.asarray(noisy, dtype=np.float64) * comp.grid
        assert np.all(out * inv == np.round(out * inv))  # every output on the lattice
    naive = 0.1 + np.random.default_rng(0).laplace(0, comp.scale, 5_000)  # what dpdesk does not do
    assert not np.all(naive * inv == np.round(naive * inv))


# --------------------------------------------------------------------------- quantiles on tied data

#: Years of schooling in a wage survey, 1,000 rows: 37% twelve years. The true median is 12
#: (200 rows below 12, 570 at or below it); the old score -|(1-q) #(x<c) - q #(x>c)| preferred 13.
EDUCATION = {8: 40, 9: 30, 10: 50, 11: 80, 12: 370, 13: 50, 14: 120, 15: 40, 16: 140, 17: 20, 18: 60}


def _quantile_setup(
    counts: dict[int, int], q: float, epsilon: float, bounds: tuple[int, int] = (0, 20)
) -> tuple[Any, Any, Any, np.ndarray]:
    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.loading import Column, Table

    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 100.0},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {"educ": {"type": "int", "bounds": list(bounds)}},
            "queries": [
                {
                    "name": "m",
                    "statistic": "quantile",
                    "column": "educ",
                    "q": q,
                    "mechanism": "exponential",
                    "epsilon": epsilon,
                }
            ],
        }
    )
    xs = np.repeat(np.asarray(list(counts), dtype=np.int64), list(counts.values()))
    table = Table("t", "", len(xs), {"educ": Column(plan.columns["educ"], xs)})
    design = design_query(plan.queries[0], plan)
    exact = exact_statistic(design, table, np.ones(len(xs), dtype=bool), plan.columns)
    return plan, design, exact, xs


def test_the_released_median_of_a_tied_column_is_the_true_median() -> None:
    """The 37%-ties example at epsilon 1 (a large epsilon for 1,000 rows): 300 releases, every one 12.

    Through ``noisy_rows`` with OpenDP's sampler, as a release makes its value. Candidates 0..20,
    Du = 1/2; the next best candidate, 13, is 70 ranks from the median, so a correct release misses 12
    with probability sum exp(eps (u(c) - 0) / (2 Du)) < 21 e^-70 per draw: false failure below 10^-26
    over the 300 draws (computed below). The old score gave 13 a better utility than 12 (by 20):
    it released 13 every time.
    """
    plan, design, exact, xs = _quantile_setup(EDUCATION, 0.5, 1.0)
    p = mech.em_probabilities(exact.utilities, 1.0, design.components[0].l1)
    miss = 1.0 - p[design.candidates.index(12.0)]
    assert 300 * miss < 1e-26
    old = [-abs(0.5 * np.sum(xs < c) - 0.5 * np.sum(xs > c)) for c in design.candidates]
    assert design.candidates[int(np.argmax(old))] == 13.0  # the data reproduce the defect
    released = [rel.noisy_rows(design, exact, plan)[0].value for _ in range(300)]
    assert set(released) == {"12"}


def _ranks(xs: np.ndarray, c: float) -> tuple[int, int]:
    return int(np.sum(xs < c)), int(np.sum(xs <= c))


@pytest.mark.parametrize(
    "counts,q,epsilon",
    [
        (EDUCATION, 0.5, 0.1),
        (EDUCATION, 0.1, 0.05),
        (EDUCATION, 0.9, 0.2),
        (EDUCATION, 0.25, 0.02),
        ({7: 12}, 0.5, 1.0),
        ({3: 5, 4: 5}, 0.75, 0.5),
        ({12: 370, 13: 630}, 0.37, 0.01),
    ],
)
def test_the_rank_interval_covers_95_percent(counts: dict[int, int], q: float, epsilon: float) -> None:
    """The stated R: P(the released value's rank is within +-R of q n) >= 95%, computed exactly.

    "Within +-R": at most q n + R rows below the released value and at least q n - R at or below it.
    The probabilities are the exponential mechanism's own (em_probabilities, checked against OpenDP's
    sampler in test_exponential_mechanism_matches_the_textbook_probabilities); ranks by brute force.
    Deterministic: no false failures. {7: 12} over candidates 0..100 is built so that R/2 is too small:
    every other candidate is 6 ranks away and R = 7.6 at epsilon 1, so half of R covers only 80%.
    """
    bounds = (0, 100) if counts == {7: 12} else (0, 20)
    _plan, design, exact, xs = _quantile_setup(counts, q, epsilon, bounds)
    r, m, du = design.rank_error95, len(design.candidates), design.components[0].l1
    assert design.rank_exact and r == pytest.approx(2 * du * (math.log(m) + math.log(20)) / epsilon)
    p = mech.em_probabilities(exact.utilities, epsilon, design.components[0].l1)
    qn = q * len(xs)

    def cover(radius: float) -> float:
        ranks = [_ranks(xs, c) for c in design.candidates]
        return sum(pi for pi, (b, e) in zip(p, ranks, strict=True) if b <= qn + radius and e >= qn - radius)

    assert cover(r) >= 0.95
    if counts == {7: 12}:
        assert cover(r / 2) < 0.85
