"""Every claimed sensitivity against neighbouring tables built here.

For each statistic, relation (add/remove, replace) and k (rows per person), the test builds the
worst-case neighbour it knows and checks that the observed change of the exact statistic reaches
the claimed sensitivity (so the claim is tight), and random neighbours check it is never exceeded.
Sensitivities are compared in natural units (grid integers times the grid resolution).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan

CATS = ["a", "b", "c"]


def make_plan(
    query: dict[str, Any],
    *,
    relation: str,
    k: int,
    bounds: tuple[float, float] = (-7.0, 3.0),
    xtype: str = "float",
) -> Plan:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": relation, "max_rows_per_person": k},
            "columns": {
                "x": {"type": xtype, "bounds": list(bounds)},
                "g": {"type": "category", "categories": CATS},
            },
            "queries": [{"name": "q", "epsilon": 0.5, **query}],
        }
    )


def make_table(plan: Plan, xs: list[float], gs: list[int]) -> Table:
    x = np.asarray(xs, dtype=np.float64)
    if plan.columns["x"].type == "int":
        x = x.astype(np.int64)
    cols = {
        "x": Column(plan.columns["x"], x),
        "g": Column(plan.columns["g"], np.asarray(gs, dtype=np.int16)),
    }
    return Table("t", "", len(xs), cols)


def outputs(plan: Plan, xs: list[float], gs: list[int]) -> list[np.ndarray]:
    """The exact statistic's components in natural units (or the utility vector for EM)."""
    design = design_query(plan.queries[0], plan)
    table = make_table(plan, xs, gs)
    ex = exact_statistic(design, table, np.ones(len(xs), dtype=bool), plan.columns)
    if ex.utilities is not None:
        return [np.asarray(ex.utilities)]
    return [
        np.asarray(v, dtype=np.float64) * c.unit for v, c in zip(ex.vectors, design.components, strict=True)
    ]


def change(
    plan: Plan, a: tuple[list[float], list[int]], b: tuple[list[float], list[int]]
) -> list[tuple[float, float, float]]:
    """(L1, L2, Linf) change of each component between two tables."""
    out = []
    for va, vb in zip(outputs(plan, *a), outputs(plan, *b), strict=True):
        d = va - vb
        out.append((float(np.abs(d).sum()), float(np.sqrt((d * d).sum())), float(np.abs(d).max())))
    return out


BASE = ([1.0, -2.0, 0.5, 3.0, -7.0, 2.0], [0, 1, 2, 0, 1, 2])


def add_rows(k: int, x: float, g: int) -> tuple[list[float], list[int]]:
    return BASE[0] + [x] * k, BASE[1] + [g] * k


def replace_rows(
    k: int, old: tuple[float, int], new: tuple[float, int]
) -> tuple[tuple[list[float], list[int]], ...]:
    a = (BASE[0] + [old[0]] * k, BASE[1] + [old[1]] * k)
    b = (BASE[0] + [new[0]] * k, BASE[1] + [new[1]] * k)
    return a, b


def claimed(plan: Plan) -> list[tuple[float, float]]:
    d = design_query(plan.queries[0], plan)
    return [(c.l1, c.l2) for c in d.components]


@pytest.mark.parametrize("k", [1, 3])
class TestWorstCases:
    """L = -7, U = 3, so M = 7, U - L = 10."""

    def test_count(self, k: int) -> None:
        q = {"statistic": "count", "mechanism": "laplace"}
        p = make_plan(q, relation="add_remove", k=k)
        assert claimed(p) == [(k, k)]
        assert change(p, BASE, add_rows(k, 0.0, 0))[0][:2] == (k, k)
        p = make_plan(q, relation="replace", k=k)
        assert claimed(p) == [(k, k)]  # conservative: replace keeps n
        a, b = replace_rows(k, (0.0, 0), (1.0, 1))
        assert change(p, a, b)[0][0] <= k

    def test_sum(self, k: int) -> None:
        q = {"statistic": "sum", "column": "x", "mechanism": "laplace"}
        p = make_plan(q, relation="add_remove", k=k)
        assert claimed(p) == [(7 * k, 7 * k)]
        assert change(p, BASE, add_rows(k, -7.0, 0))[0][0] == pytest.approx(7 * k)
        p = make_plan(q, relation="replace", k=k)
        assert claimed(p) == [(10 * k, 10 * k)]
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))
        assert change(p, a, b)[0][0] == pytest.approx(10 * k)

    def test_values_outside_bounds_are_clamped_before_summing(self, k: int) -> None:
        p = make_plan({"statistic": "sum", "column": "x", "mechanism": "laplace"}, relation="add_remove", k=k)
        assert change(p, BASE, add_rows(k, -1e12, 0))[0][0] == pytest.approx(7 * k)
        assert change(p, BASE, add_rows(k, math.inf, 0))[0][0] == pytest.approx(3 * k)

    def test_histogram_and_grouped_count(self, k: int) -> None:
        for q in (
            {"statistic": "histogram", "column": "g", "mechanism": "laplace"},
            {"statistic": "count", "group_by": "g", "mechanism": "gaussian", "delta": 1e-6},
        ):
            p = make_plan(q, relation="add_remove", k=k)
            assert claimed(p) == [(k, k)]
            assert change(p, BASE, add_rows(k, 0.0, 1))[0][:2] == pytest.approx((k, k))
            p = make_plan(q, relation="replace", k=k)
            assert claimed(p) == [(2 * k, pytest.approx(math.sqrt(2) * k))]
            a, b = replace_rows(k, (0.0, 0), (0.0, 2))
            assert change(p, a, b)[0][:2] == pytest.approx((2 * k, math.sqrt(2) * k))

    def test_numeric_histogram_clamps_into_end_bins(self, k: int) -> None:
        q = {"statistic": "histogram", "column": "x", "bins": [-5, 0, 2], "mechanism": "laplace"}
        p = make_plan(q, relation="add_remove", k=k)
        assert claimed(p) == [(k, k)]
        assert change(p, BASE, add_rows(k, -100.0, 0))[0][:2] == pytest.approx((k, k))
        p = make_plan(q, relation="replace", k=k)
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))
        assert change(p, a, b)[0][:2] == pytest.approx((2 * k, math.sqrt(2) * k))

    def test_grouped_sum(self, k: int) -> None:
        q = {"statistic": "sum", "column": "x", "group_by": "g", "mechanism": "gaussian", "delta": 1e-6}
        p = make_plan(q, relation="add_remove", k=k)
        assert claimed(p) == [(7 * k, 7 * k)]
        assert change(p, BASE, add_rows(k, -7.0, 2))[0][:2] == pytest.approx((7 * k, 7 * k))
        p = make_plan(q, relation="replace", k=k)
        # L1 = 2kM, L2 = k max(U - L, sqrt(2) M) = 10k here (U - L = 10 > sqrt(2) 7 = 9.9)
        assert claimed(p) == [(pytest.approx(14 * k), pytest.approx(10 * k))]
        a, b = replace_rows(k, (-7.0, 0), (-7.0, 1))  # moves groups: L1 = 2kM
        assert change(p, a, b)[0][0] == pytest.approx(14 * k)
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))  # same group, L to U: L2 = k (U - L)
        assert change(p, a, b)[0][1] == pytest.approx(10 * k)

    def test_grouped_sum_replace_l2_with_positive_bounds_is_sqrt2_m(self, k: int) -> None:
        q = {"statistic": "sum", "column": "x", "group_by": "g", "mechanism": "gaussian", "delta": 1e-6}
        p = make_plan(q, relation="replace", k=k, bounds=(0.0, 5.0))
        assert claimed(p)[0][1] == pytest.approx(math.sqrt(2) * 5 * k)
        base = ([1.0, 2.0], [0, 1])
        a = (base[0] + [5.0] * k, base[1] + [0] * k)
        b = (base[0] + [5.0] * k, base[1] + [1] * k)
        assert change(p, a, b)[0][1] == pytest.approx(math.sqrt(2) * 5 * k)

    def test_mean_components(self, k: int) -> None:
        q = {"statistic": "mean", "column": "x", "mechanism": "laplace"}
        p = make_plan(q, relation="add_remove", k=k)
        (c_l1, _), (s_l1, _) = claimed(p)
        assert (c_l1, s_l1) == (k, pytest.approx(5 * k))  # k (U - L) / 2
        ch = change(p, BASE, add_rows(k, 3.0, 0))
        assert ch[0][0] == k and ch[1][0] == pytest.approx(5 * k)
        p = make_plan(q, relation="replace", k=k)
        assert claimed(p)[1][0] == pytest.approx(10 * k)  # k (U - L)
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))
        assert change(p, a, b)[1][0] == pytest.approx(10 * k)

    def test_mode_utility(self, k: int) -> None:
        q = {"statistic": "mode", "column": "g", "mechanism": "exponential"}
        for rel in ("add_remove", "replace"):
            p = make_plan(q, relation=rel, k=k)
            assert claimed(p) == [(k, k)]
        p = make_plan(q, relation="add_remove", k=k)
        assert change(p, BASE, add_rows(k, 0.0, 1))[0][2] == k
        p = make_plan(q, relation="replace", k=k)
        a, b = replace_rows(k, (0.0, 0), (0.0, 1))
        assert change(p, a, b)[0][2] == k

    @pytest.mark.parametrize("qv", [0.5, 0.3, 0.9])
    def test_quantile_score(self, k: int, qv: float) -> None:
        q = {
            "statistic": "quantile",
            "column": "x",
            "q": qv,
            "candidates": [-5, -1, 0, 2],
            "mechanism": "exponential",
        }
        p = make_plan(q, relation="add_remove", k=k)
        du = k * max(qv, 1 - qv)
        assert claimed(p)[0][0] == pytest.approx(du)
        worst = max(change(p, BASE, add_rows(k, x, 0))[0][2] for x in (-7.0, 3.0))
        assert worst == pytest.approx(du)
        p = make_plan(q, relation="replace", k=k)
        assert claimed(p)[0][0] == k
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))
        assert change(p, a, b)[0][2] == pytest.approx(k)

    def test_select_revenue(self, k: int) -> None:
        q = {
            "statistic": "select",
            "column": "x",
            "candidates": [0.5, 1, 2.5],
            "utility": "revenue",
            "mechanism": "exponential",
        }
        for rel in ("add_remove", "replace"):
            assert claimed(make_plan(q, relation=rel, k=k))[0][0] == pytest.approx(2.5 * k)
        p = make_plan(q, relation="add_remove", k=k)
        assert change(p, BASE, add_rows(k, 3.0, 0))[0][2] == pytest.approx(2.5 * k)
        p = make_plan(q, relation="replace", k=k)
        a, b = replace_rows(k, (-7.0, 0), (3.0, 0))
        assert change(p, a, b)[0][2] == pytest.approx(2.5 * k)


HAND_PICKED = [
    {"statistic": "count", "mechanism": "laplace"},
    {"statistic": "count", "group_by": "g", "mechanism": "laplace"},
    {"statistic": "sum", "column": "x", "mechanism": "laplace"},
    {"statistic": "sum", "column": "x", "group_by": "g", "mechanism": "laplace"},
    {"statistic": "mean", "column": "x", "mechanism": "laplace"},
    {"statistic": "mean", "column": "x", "group_by": "g", "mechanism": "laplace"},
    {"statistic": "histogram", "column": "g", "mechanism": "laplace"},
    {"statistic": "histogram", "column": "x", "bins": [-5, -1, 0, 1], "mechanism": "laplace"},
    {"statistic": "histogram", "column": "x", "bins": [-5, 0, 1], "group_by": "g", "mechanism": "laplace"},
    {"statistic": "mode", "column": "g", "mechanism": "exponential"},
    {"statistic": "quantile", "column": "x", "q": 0.25, "mechanism": "exponential"},
    {
        "statistic": "select",
        "column": "x",
        "candidates": [0, 1, 2],
        "utility": "revenue",
        "mechanism": "exponential",
    },
]
#: The hand-picked queries and every statistic's own examples (from the registry), on bounds [-7, 3].
ALL_QUERIES = HAND_PICKED + [
    q
    for stat in statistics.REGISTRY.values()
    if not stat.composite  # the synthesiser's parts: tests/core/test_synthetic_query.py
    for q in stat.examples((-7.0, 3.0)).values()
]


def test_every_statistic_is_checked_against_random_neighbours() -> None:
    assert {q["statistic"] for q in ALL_QUERIES} == {
        s.name for s in statistics.statistics() if not s.composite
    }


@pytest.mark.parametrize(
    "query", ALL_QUERIES, ids=lambda q: q["statistic"] + ("_by" if "group_by" in q else "")
)
@pytest.mark.slow
@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("xtype", ["float", "int"])
def test_random_neighbours_never_exceed_the_claim(query: dict[str, Any], relation: str, xtype: str) -> None:
    """300 random neighbouring pairs per case (k = 2); numpy's generator is seeded: this is test data."""
    rng = np.random.default_rng(12345)
    k = 2
    p = make_plan(query, relation=relation, k=k, xtype=xtype)
    design = design_query(p.queries[0], p)
    for _ in range(300):
        n = int(rng.integers(0, 12))
        xs = list(rng.choice([-9.0, -7.0, -3.5, -1.0, 0.0, 0.25, 2.0, 3.0, 8.0], size=n))
        gs = list(rng.integers(0, 3, size=n))
        j = int(rng.integers(1, k + 1))
        new_x = list(rng.choice([-9.0, -7.0, 0.0, 1.5, 3.0, 9.0], size=j))
        new_g = list(rng.integers(0, 3, size=j))
        if relation == "add_remove":
            a, b = (xs, gs), (xs + new_x, gs + new_g)
        else:
            old_x = list(rng.choice([-9.0, -7.0, 0.0, 1.5, 3.0, 9.0], size=j))
            old_g = list(rng.integers(0, 3, size=j))
            a, b = (xs + old_x, gs + old_g), (xs + new_x, gs + new_g)
        for (l1, l2, linf), comp in zip(change(p, a, b), design.components, strict=True):
            if comp.mechanism == "exponential":
                assert linf <= comp.l1 + 1e-9
            else:
                assert l1 <= comp.l1 + 1e-9
                assert l2 <= comp.l2 + 1e-9


# --------------------------------------------------------------------------- the tie-aware quantile score

QUANTILE_QS = [0.1, 0.25, 0.5, 0.7, 0.9]
#: Values of a tied column with bounds [0, 3]: whole numbers, one outside the bounds (clamped to 3) and,
#: in the float column, NaN (missing, dropped: a row that drops out acts as a removal).
TIED_VALUES = {"int": (0, 1, 2, 3, 5), "float": (0.0, 1.0, 2.0, 3.0, 5.0, math.nan)}


def tied_plan(qv: float, relation: str, k: int, xtype: str) -> Plan:
    """A quantile over a [0, 3] column whose candidates are every whole number (the int default)."""
    q = {
        "statistic": "quantile",
        "column": "x",
        "q": qv,
        "mechanism": "exponential",
        **({"grid_step": 1.0} if xtype == "float" else {}),
    }
    return make_plan(q, relation=relation, k=k, bounds=(0.0, 3.0), xtype=xtype)


def tied_utilities(plan: Plan, xs: tuple[float, ...]) -> np.ndarray:
    xtype = plan.columns["x"].type
    arr = np.asarray(xs, dtype=np.int64 if xtype == "int" else np.float64)
    table = Table("t", "", len(xs), {"x": Column(plan.columns["x"], arr)})
    design = design_query(plan.queries[0], plan)
    ex = exact_statistic(design, table, np.ones(len(xs), dtype=bool), plan.columns)
    assert ex.utilities is not None and len(ex.utilities) == 4
    return np.asarray(ex.utilities)


def neighbour_pairs(values: tuple[float, ...], relation: str, k: int, size: int) -> Any:
    """Every table of up to ``size`` rows over ``values`` (as a sorted multiset) with every neighbour.

    add_remove: the table and the table with j <= k more rows; replace: j <= k rows of the table
    replaced by j rows of any values (equal tables included, harmless).
    """
    import itertools

    for m in range(size + 1):
        for base in itertools.combinations_with_replacement(values, m):
            for j in range(1, k + 1):
                for extra in itertools.combinations_with_replacement(values, j):
                    if relation == "add_remove":
                        yield base, base + extra
                    elif j <= m:
                        for out in set(itertools.combinations(range(m), j)):
                            kept = tuple(v for i, v in enumerate(base) if i not in out)
                            yield base, kept + extra


@pytest.mark.slow
@pytest.mark.parametrize("xtype", ["int", "float"])
@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("qv", QUANTILE_QS)
def test_quantile_score_on_tied_data_every_neighbour(qv: float, k: int, relation: str, xtype: str) -> None:
    """Every table of up to 4 rows over a tied column against every neighbour: Du is reached, never exceeded.

    Du = k max(q, 1 - q) under add_remove and k under replace; rows dropping out as missing (NaN) or
    clamped (5 > U = 3) included. Equal values of x and c are the point: #(x <= c) counts them.
    """
    p = tied_plan(qv, relation, k, xtype)
    du = design_query(p.queries[0], p).components[0].l1
    assert du == pytest.approx(k * max(qv, 1 - qv) if relation == "add_remove" else k)
    cache: dict[tuple[float, ...], np.ndarray] = {}

    def util(xs: tuple[float, ...]) -> np.ndarray:
        key = tuple(sorted(xs, key=lambda v: (math.isnan(v), v)))
        if key not in cache:
            cache[key] = tied_utilities(p, key)
        return cache[key]

    worst = 0.0
    for a, b in neighbour_pairs(TIED_VALUES[xtype], relation, k, 4):
        worst = max(worst, float(np.abs(util(a) - util(b)).max()))
    assert worst <= du + 1e-12
    assert worst == pytest.approx(du)  # reached: the claim is tight on tied data


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("qv", [0.1, 0.25, 0.5, 0.75, 0.9, 0.33])
def test_quantile_score_random_neighbours_on_heavily_tied_data(qv: float, relation: str) -> None:
    """400 random neighbours of larger tied tables (up to 60 rows over 5 values plus NaN), k = 2."""
    rng = np.random.default_rng(2024)  # test data only
    k = 2
    p = tied_plan(qv, relation, k, "float")
    du = design_query(p.queries[0], p).components[0].l1
    values = np.asarray(TIED_VALUES["float"])
    for _ in range(400):
        base = tuple(rng.choice(values, size=int(rng.integers(0, 61)), p=[0.1, 0.45, 0.3, 0.1, 0.03, 0.02]))
        j = int(rng.integers(1, k + 1))
        new = tuple(rng.choice(values, size=j))
        if relation == "add_remove":
            a, b = base, base + new
        else:
            a, b = base + tuple(rng.choice(values, size=j)), base + new
        assert float(np.abs(tied_utilities(p, a) - tied_utilities(p, b)).max()) <= du + 1e-12
