"""Accuracy in the statistic's own units and accuracy first (issue 15 items 3, 4): dpdesk/core/dp/accuracy.py.

The tails are checked against 40-digit references (mpmath); the solved epsilons against the accuracy the
real release code achieves, for every statistic's examples and mechanisms, on stand-in tables of
expected_rows rows (the worst case where the statement is a bound).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import mpmath
import numpy as np
import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import accuracy as acc
from dpdesk.core.dp import accuracy_base as accb
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.values import fmt_number
from dpdesk.core.loading import Column, Table
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import steps as rel

mpmath.mp.dps = 40
BOUNDS = (-7.0, 3.0)
ROWS = 300  # expected_rows of the stand-in tables (a multiple of 3: the groups are equal)


def _plan(queries: list[dict[str, Any]], expected_rows: int | None = ROWS, **over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "version": 1,
        "budget": {"epsilon": 100.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove"},
        "columns": {
            "x": {"type": "float", "bounds": list(BOUNDS)},
            "g": {"type": "category", "categories": ["a", "b", "c"]},
        },
        "queries": queries,
    }
    if expected_rows is not None:
        d["expected_rows"] = expected_rows
    d.update(over)
    return d


def _ref_dlap_tail(t: float, k: int) -> Any:
    """P(|Z| > k), Z discrete Laplace of scale t, summed term by term (40 digits)."""
    r = mpmath.exp(-1 / mpmath.mpf(t))
    z = (1 + r) / (1 - r)
    return 2 * mpmath.nsum(lambda x: r**x, [k + 1, mpmath.inf]) / z


def _ref_dgauss_tail(s: float, k: int) -> Any:
    w = lambda x: mpmath.exp(-(x**2) / (2 * mpmath.mpf(s) ** 2))  # noqa: E731
    z = 1 + 2 * mpmath.nsum(w, [1, mpmath.inf])
    return 2 * mpmath.nsum(w, [k + 1, mpmath.inf]) / z


@pytest.mark.parametrize("t,k", [(0.3, 0), (1.0, 2), (10.0, 30), (3.7, 11), (250.0, 700)])
def test_the_discrete_laplace_tail_is_exact(t: float, k: int) -> None:
    ref = _ref_dlap_tail(t, k)
    assert abs(accb.dlap_tail(t, k) - float(ref)) <= 1e-13 * float(ref)
    # and it is the discrete tail, not the continuous one (exp(-k/t)), which differs at small scales
    if t < 5:
        assert abs(math.exp(-k / t) - float(ref)) > 1e-3 * float(ref)


@pytest.mark.parametrize("s,k", [(0.8, 1), (2.0, 4), (9.69, 19), (40.0, 80)])
def test_the_discrete_gaussian_tail_is_exact_when_summed(s: float, k: int) -> None:
    ref = _ref_dgauss_tail(s, k)
    assert abs(accb.dgauss_tail(s, k) - float(ref)) <= 1e-12 * float(ref)


def test_the_discrete_gaussian_bound_above_1000_is_an_upper_bound_within_one_step() -> None:
    s, k = 1500.0, 2940
    w = [math.exp(-(x * x) / (2 * s * s)) for x in range(80_000)]
    total = w[0] + 2 * math.fsum(w[1:])
    ref = 2 * math.fsum(w[k + 1 :]) / total
    bound = accb.dgauss_tail(s, k)
    assert ref <= bound <= 2 * math.fsum(w[k:]) / total


def _design(q: dict[str, Any], expected_rows: int | None = ROWS) -> tuple[Any, Any]:
    plan = parse_plan(_plan([{"name": "q", **q}], expected_rows))
    return design_query(plan.queries[0], plan), plan


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 4.0])
def test_a_count_s_solved_epsilon_is_the_smallest_exactly(eps: float) -> None:
    """The solved epsilon meets the target by the 40-digit tail, and 0.9 of it misses it."""
    target = {"error": 20, "confidence": 0.95}
    d, plan = _design({"statistic": "count", "mechanism": "laplace", "accuracy": target})
    e = d.spec.epsilon
    k = 20
    assert float(_ref_dlap_tail(1 / e, k)) <= 0.05
    assert float(_ref_dlap_tail(1 / (0.9 * e), k)) > 0.05
    assert float(_ref_dlap_tail(1 / (0.999 * e), k)) > 0.05 or e == acc.round_up(e)
    # the accuracy statement at a stated epsilon agrees with the reference
    d2, _ = _design({"statistic": "count", "mechanism": "laplace", "epsilon": eps})
    got = acc.query_accuracy(d2, plan).error
    assert got is not None
    kk = int(got)
    assert float(_ref_dlap_tail(1 / eps, kk)) <= 0.05 < float(_ref_dlap_tail(1 / eps, kk - 1)) or kk == 0


def test_all_cells_together_is_p_each_to_the_cells() -> None:
    base = {"statistic": "histogram", "column": "g", "mechanism": "laplace"}
    each, _ = _design({**base, "accuracy": {"error": 10, "confidence": 0.9}})
    both, _ = _design({**base, "accuracy": {"error": 10, "confidence": 0.9, "cells": "all"}})
    assert both.spec.epsilon > each.spec.epsilon
    t = both.components[0].scale
    p_all = (1 - float(_ref_dlap_tail(t, 10))) ** 3
    assert p_all >= 0.9
    t9 = 1 / (0.9 * both.spec.epsilon)
    assert (1 - float(_ref_dlap_tail(t9, 10))) ** 3 < 0.9


def test_the_mean_bound_is_tighter_than_the_union_bound_and_no_tighter_than_either_part() -> None:
    """The stated error lies between the larger part alone and the union bound (a_s + h a_n)/(n - a_n) at
    97.5% each plus rounding (its exactness: tests/core/test_honest_numbers.py)."""
    d, plan = _design({"statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 1.0})
    count_c, sum_c = d.components
    h = (BOUNDS[1] - BOUNDS[0]) / 2
    a_n, a_s = accb.noise_halfwidth(count_c, 0.975), accb.noise_halfwidth(sum_c, 0.975)
    union = (a_s + h * a_n) / (ROWS - a_n)
    alone = max(accb.noise_halfwidth(sum_c, 0.95), h * accb.noise_halfwidth(count_c, 0.95)) / ROWS
    got = acc.query_accuracy(d, plan).error
    assert got is not None and alone < got < union


def test_the_mode_lead_formula_is_the_exponential_mechanism_s() -> None:
    """P(best) >= 1/(1 + (m-1) exp(-eps L / (2 Du))), with equality when the others tie L below."""
    d, _ = _design({"statistic": "mode", "column": "g", "mechanism": "exponential", "epsilon": 0.3})
    for lead in (0.0, 5.0, 17.0, 40.0):
        exact = mech.em_probabilities([lead, 0.0, 0.0], 0.3, 1.0)[0]
        assert acc.lead_probability(d, lead) == pytest.approx(exact, rel=1e-9)
        assert acc.lead_probability(d, lead) <= exact
    lead95 = acc.lead_for(d, 0.95)
    assert mech.em_probabilities([lead95, 0.0, 0.0], 0.3, 1.0)[0] == pytest.approx(0.95, rel=1e-9)


def test_round_up_never_rounds_down() -> None:
    assert acc.round_up(0.123412) == 0.1235
    assert acc.round_up(0.1234) == 0.1234
    assert acc.round_up(12.00001) == 12.01
    rng = np.random.default_rng(1)
    for x in rng.uniform(1e-6, 90, 500):
        assert acc.round_up(float(x)) >= x


def test_the_target_round_trips_and_the_hash_of_a_plan_without_expected_rows_is_unchanged() -> None:
    target = {"error": 5, "confidence": 0.9}
    data = _plan([{"name": "n", "statistic": "count", "mechanism": "laplace", "accuracy": target}])
    plan = parse_plan(data)
    out = plan.to_dict()
    assert out["queries"][0]["accuracy"] == target and "epsilon" not in out["queries"][0]
    assert out["expected_rows"] == ROWS
    assert parse_plan(copy.deepcopy(out)) == plan
    plain = _plan([{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.5}], None)
    assert "expected_rows" not in parse_plan(plain).to_dict()


@pytest.mark.parametrize(
    "query,expected_rows,where,words",
    [
        ({"epsilon": 1, "accuracy": {"error": 5}}, ROWS, "queries[0].epsilon", "not both"),
        ({"accuracy": {"error": 5, "confidence": 1}}, ROWS, "queries[0].accuracy.confidence", "certainty"),
        ({"accuracy": {"error": 0.5}}, ROWS, "queries[0].accuracy.error", "step"),
        ({"accuracy": {"error": 5, "cells": "some"}}, ROWS, "queries[0].accuracy.cells", "each"),
        ({}, ROWS, "queries[0].epsilon", "accuracy target"),
    ],
)
def test_impossible_targets_are_plan_errors_naming_the_query(
    query: dict[str, Any], expected_rows: int, where: str, words: str
) -> None:
    q = {"name": "n", "statistic": "count", "mechanism": "laplace", **query}
    with pytest.raises(PlanError) as err:
        parse_plan(_plan([q], expected_rows))
    assert err.value.key == where and words in str(err.value)


def test_a_mean_target_needs_expected_rows_and_a_mode_more_than_chance() -> None:
    mean = {"name": "m", "statistic": "mean", "column": "x", "mechanism": "laplace", "accuracy": {"error": 1}}
    with pytest.raises(PlanError, match="expected_rows"):
        parse_plan(_plan([mean], None))
    mode = {"name": "m", "statistic": "mode", "column": "g", "mechanism": "exponential"}
    with pytest.raises(PlanError, match="at random"):
        parse_plan(_plan([{**mode, "accuracy": {"error": 5, "confidence": 0.3}}]))
    with pytest.raises(PlanError, match="no epsilon up to 100"):
        parse_plan(_plan([{**mode, "accuracy": {"error": 0.01, "confidence": 0.999}}]))
    for bad in (0, -3, 2.5, True, "10"):
        with pytest.raises(PlanError) as err:
            parse_plan(_plan([{**mean, "accuracy": None, "epsilon": 1}], bad))  # type: ignore[arg-type]
        assert err.value.key == "expected_rows"


# ----------------------------------------------------------------------------- coverage of the solved epsilon

#: The one-sided binomial test's false-failure rate per case (about 40 cases: the whole set fails by chance
#: with probability below 5e-5).
ALPHA = 1e-6
DRAWS = 2_000


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) <= k), summed in log space."""
    terms = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
        for i in range(k + 1)
    ]
    top = max(terms)
    return math.exp(top) * math.fsum(math.exp(t - top) for t in terms)


def _targets(stat: Any) -> tuple[dict[str, Any], ...]:
    kind = stat.accuracy_kind
    if kind == acc.VALUE:
        return ({"error": 12, "confidence": 0.9}, {"error": 12, "confidence": 0.9, "cells": "all"})
    if kind == acc.RATIO:
        return ({"error": 0.6 if stat.name == "mean" else 0.12, "confidence": 0.9},)
    if kind == acc.SPREAD:  # a variance in the column's units squared, a standard deviation in its units
        return ({"error": 6.0 if stat.name == "variance" else 2.0, "confidence": 0.9},)
    if kind == acc.RANK:
        return ({"error": 60, "confidence": 0.9},)
    return ({"error": 20, "confidence": 0.9},)


def _cases() -> list[Any]:
    """Every statistic's examples, mechanisms and targets; the fast loop runs the first case of each statistic
    whose noise is added to its value (a count, sum, mean, histogram, proportion; the selections take seconds)."""
    out = []
    for stat in statistics.statistics():
        first = stat.accuracy_kind in ("value", "ratio")
        if stat.composite:  # no accuracy target: its epsilon is stated (tests/core/test_synthetic_query.py)
            continue
        for ex_name, ex in stat.examples(BOUNDS).items():
            for mechanism in stat.mechanisms:
                for target in _targets(stat):
                    q = {**ex, "mechanism": mechanism, "accuracy": target}
                    if mechanism == "gaussian":
                        q.update(delta=1e-7, calibration="analytic")
                    marks = () if first else (pytest.mark.slow,)
                    first = False
                    out.append(
                        pytest.param(
                            stat.name,
                            q,
                            id=f"{ex_name}-{mechanism}-{target.get('cells', 'each')}",
                            marks=marks,
                        )
                    )
    return out


def _stand_in(name: str, q: dict[str, Any], lead: float) -> tuple[np.ndarray, np.ndarray]:
    """The stand-in table: the worst case where the statement is a bound. Mean and proportion: every value
    at a bound (|x - mid| = h); variance: half of each group at each bound; standard deviation: every value at
    L (V = 0); quantile: every value at the first candidate (then the other candidates are
    far in rank); mode: the first category leads the others, tied, by the lead; select: every bid at the top."""
    if name == "mode":
        n0 = 50
        best = n0 + math.ceil(lead)
        g = np.asarray([0] * best + [1] * n0 + [2] * n0, dtype=np.int64)
        return np.full(len(g), BOUNDS[0]), g
    if name == "select":
        top = max(q["candidates"])
        second = sorted(q["candidates"])[-2]
        n = math.ceil(lead / (top - second)) + 1  # u(top) - u(second) = (top - second) n >= lead
        return np.full(n, float(top)), np.zeros(n, dtype=np.int64)
    if name == "variance":  # half of each group at each bound: the largest variance, |S| = 0
        i = np.arange(ROWS)
        return np.where((i // 3) % 2 == 0, BOUNDS[0], BOUNDS[1]), i.astype(np.int64) % 3
    # a standard deviation: every value at L (V = 0, where sqrt moves most)
    return np.full(ROWS, BOUNDS[0]), np.arange(ROWS, dtype=np.int64) % 3


class _Batch:
    """The release's own noise (``_opendp_noise``: OpenDP's sampler at the component's calibration), drawn
    for all the releases at once as one vector and handed out one release at a time."""

    def __init__(self) -> None:
        self.store: dict[int, list[int]] = {}

    def __call__(self, values: list[int], comp: Any) -> list[int]:
        key = id(comp)
        if key not in self.store or len(self.store[key]) < len(values):
            self.store[key] = rel._opendp_noise([0] * (DRAWS * len(values)), comp)
        noise, self.store[key] = self.store[key][: len(values)], self.store[key][len(values) :]
        return [v * comp.refine + z for v, z in zip(values, noise, strict=True)]


@pytest.mark.statistical
@pytest.mark.parametrize("name,query", _cases())
def test_the_solved_epsilon_reaches_the_target_in_releases(name: str, query: dict[str, Any]) -> None:
    """Solve epsilon for the target, release DRAWS times with the real release code (its noise, its
    post-processing and rounding) on the stand-in table, and test coverage >= confidence one-sidedly
    (false failure ALPHA = 1e-6 per case)."""
    plan = parse_plan(_plan([{"name": "q", **query}]))
    spec = plan.queries[0]
    design = design_query(spec, plan)
    assert acc.meets(design, plan, spec.accuracy)
    target = spec.accuracy
    assert target is not None
    x, g = _stand_in(name, query, target.error)
    table = Table("t", "", len(x), {"x": Column(plan.columns["x"], x), "g": Column(plan.columns["g"], g)})
    exact = exact_statistic(design, table, np.ones(len(x), dtype=bool), plan.columns)
    kind = statistics.get(name).accuracy_kind
    truth = _truth(name, spec, design, exact, x, g)
    noise = _Batch()
    hits = 0
    for _ in range(DRAWS):
        rows = rel.noisy_rows(design, exact, plan, noise=noise)
        if kind in (acc.VALUE, acc.RATIO, acc.SPREAD):
            errs = [abs(float(r.value) - t) for r, t in zip(rows, truth, strict=True)]
            hits += all(e <= target.error for e in errs) if target.cells == "all" else errs[0] <= target.error
        elif kind == acc.RANK:
            c = float(rows[0].value)
            below, at_most = int(np.sum(x < c)), int(np.sum(x <= c))
            qn = spec.q * len(x)  # type: ignore[attr-defined]
            hits += below <= qn + target.error and at_most >= qn - target.error
        else:
            hits += rows[0].value == truth[0]
    assert _binom_cdf(hits, DRAWS, target.confidence) >= ALPHA, (hits, DRAWS, spec.epsilon)


def _truth(name: str, spec: Any, design: Any, exact: Any, x: np.ndarray, g: np.ndarray) -> list[Any]:
    kind = statistics.get(name).accuracy_kind
    if kind == acc.VALUE:
        comp = design.components[0]
        return [v * comp.unit for v in exact.vectors[0]]
    if kind == acc.RATIO:
        counts, sums = exact.vectors
        lo, hi = (0.0, 1.0) if name == "proportion" else BOUNDS
        unit = design.components[1].unit
        return [(lo + hi) / 2 + s * unit / n for n, s in zip(counts, sums, strict=True)]
    if kind == acc.SPREAD:
        f = np.var if name == "variance" else np.std
        cells = [x[g == i] for i in range(3)] if spec.group_by is not None else [x]
        return [float(f(c, ddof=1)) for c in cells]
    if kind == acc.LEAD:
        best = int(np.argmax(exact.utilities))
        c = design.candidates[best]
        return [c if isinstance(c, str) else fmt_number(c)]
    return [None]
