"""The exact statistics against brute force in Python integers (fast paths and chunked paths alike)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from dpdesk.core.dp import aggregates as agg
from dpdesk.core.dp import aggregates_base
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.queries_base import grid_bounds
from dpdesk.core.dp.statistics.quantile import quantile_candidates
from dpdesk.core.loading import Column, Table
from dpdesk.core.plan.reader import parse_plan


def setup(
    xtype: str, bounds: list[float], query: dict[str, Any], n: int, seed: int
) -> tuple[Any, Table, Any]:
    rng = np.random.default_rng(seed)  # test data only
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {
                "x": {"type": xtype, "bounds": bounds},
                "g": {"type": "category", "categories": ["a", "b", "c"]},
            },
            "queries": [{"name": "q", "epsilon": 1.0, "mechanism": "laplace", **query}],
        }
    )
    lo, hi = bounds
    span = hi - lo
    if xtype == "int":
        x = rng.integers(int(lo - span / 4), int(hi + span / 4) + 1, n)  # some outside the bounds
    else:
        x = rng.uniform(lo - span / 4, hi + span / 4, n)
        x[rng.integers(0, n, max(1, n // 50))] = rng.choice([np.inf, -np.inf, 1e300, -1e300])
    g = rng.integers(0, 3, n).astype(np.int16)
    cols = {"x": Column(plan.columns["x"], x), "g": Column(plan.columns["g"], g)}
    return plan, Table("t", "", n, cols), design_query(plan.queries[0], plan)


def brute_grid(x: float, spec: Any) -> int:
    s, lo_i, hi_i = grid_bounds(spec)
    lo, hi = spec.bounds
    return min(hi_i, max(lo_i, round(math.ldexp(min(hi, max(lo, x)), s))))


@pytest.mark.parametrize(
    "xtype,bounds", [("float", [-1e6, 3e6]), ("float", [0, 0.001]), ("int", [-50, 200]), ("int", [0, 10**12])]
)
@pytest.mark.parametrize("grouped", [False, True])
def test_sums_are_exact_also_in_chunks(
    xtype: str, bounds: list[float], grouped: bool, monkeypatch: Any
) -> None:
    monkeypatch.setattr(aggregates_base, "_chunk_rows", lambda bits: 97)  # force many chunks
    q = {"statistic": "sum", "column": "x", **({"group_by": "g"} if grouped else {})}
    plan, table, design = setup(xtype, bounds, q, 5000, 1)
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    spec = plan.columns["x"]
    xs, gs = table.columns["x"].values.tolist(), table.columns["g"].values.tolist()
    if grouped:
        want = [sum(brute_grid(v, spec) for v, gg in zip(xs, gs, strict=True) if gg == k) for k in range(3)]
    else:
        want = [sum(brute_grid(v, spec) for v in xs)]
    assert ex.vectors[0] == want


@pytest.mark.parametrize("xtype,bounds", [("float", [-10.0, 30.0]), ("int", [0, 18])])
def test_mean_components_are_exact(xtype: str, bounds: list[float]) -> None:
    plan, table, design = setup(xtype, bounds, {"statistic": "mean", "column": "x", "group_by": "g"}, 3000, 2)
    keep = np.random.default_rng(3).random(table.n_rows) < 0.8
    ex = agg.exact_statistic(design, table, keep, plan.columns)
    spec = plan.columns["x"]
    _s, lo_i, hi_i = grid_bounds(spec)
    xs, gs = table.columns["x"].values.tolist(), table.columns["g"].values.tolist()
    counts = [sum(1 for gg, k in zip(gs, keep, strict=True) if k and gg == j) for j in range(3)]
    sums = [
        sum(
            2 * brute_grid(v, spec) - (lo_i + hi_i)
            for v, gg, k in zip(xs, gs, keep, strict=True)
            if k and gg == j
        )
        for j in range(3)
    ]
    assert ex.vectors == [counts, sums]


@pytest.mark.parametrize(
    "xtype,bounds,extra",
    [
        ("int", [0, 100], {}),
        ("int", [0, 100], {"candidates": [0, 10.5, 50, 99]}),
        ("float", [-5.0, 5.0], {"candidates": [-4, -1, 0, 0.5, 3]}),
        ("float", [-5.0, 5.0], {"grid_step": 0.5}),
    ],
)
def test_quantile_scores_match_brute_force(xtype: str, bounds: list[float], extra: dict[str, Any]) -> None:
    plan, table, design = setup(
        xtype,
        bounds,
        {"statistic": "quantile", "column": "x", "q": 0.3, "mechanism": "exponential", **extra},
        2000,
        4,
    )
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    lo, hi = bounds
    xs = [min(hi, max(lo, float(v))) for v in table.columns["x"].values.tolist()]
    if xtype == "int":
        xs = [round(v) for v in xs]
    cands = quantile_candidates(plan.queries[0], plan.columns["x"])
    q, n = Fraction(3, 10), len(xs)
    want = [-max(0, sum(v < c for v in xs) - q * n, q * n - sum(v <= c for v in xs)) for c in cands]
    assert ex.utilities == [float(w) for w in want]


def true_quantiles(xs: list[float], cands: list[float], q: Fraction) -> set[float]:
    """The brute-force definition: c is a q-quantile iff #(x<c) <= q n <= #(x<=c)."""
    n = len(xs)
    return {c for c in cands if sum(v < c for v in xs) <= q * n <= sum(v <= c for v in xs)}


TIED = {1: 3, 2: 1, 3: 6, 4: 37, 5: 2, 6: 11, 7: 30, 8: 10}  # value: rows (100 rows, Likert-like)


@pytest.mark.parametrize("qv", [0.1, 0.25, 0.5, 0.75, 0.9, 0.03, 0.04, 0.29, 0.57])
@pytest.mark.parametrize("xtype", ["int", "float"])
@pytest.mark.parametrize("rows", [TIED, {1: 29, 2: 28, 3: 43}, {4: 5}, {2: 10, 6: 10}, {0: 1, 9: 9}])
def test_best_quantile_candidates_are_exactly_the_true_quantiles_on_tied_data(
    qv: float, xtype: str, rows: dict[int, int]
) -> None:
    """Heavily tied columns: the candidates of maximal utility are exactly the true q-quantiles.

    q n is a whole number for most (q, n) here and often a boundary of a tie (TIED: 3, 4, 10, 90 rows
    at or below 1, 2, 3, 7), so a candidate whose ranks end exactly at q n must count. In floats
    0.29 x 100 = 28.999999999999996 and 0.57 x 100 = 56.99999999999999, which would lose the
    candidate 2 of {1: 29, 2: 28, 3: 43}; q is read as written. {2: 10, 6: 10} has a whole interval
    of medians (every candidate from 2 to 6).
    """
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {"x": {"type": xtype, "bounds": [0, 9]}},
            "queries": [
                {
                    "name": "q",
                    "statistic": "quantile",
                    "column": "x",
                    "q": qv,
                    "mechanism": "exponential",
                    "epsilon": 1.0,
                    **({} if xtype == "int" else {"grid_step": 0.5}),
                }
            ],
        }
    )
    xs = [float(v) for v, c in rows.items() for _ in range(c)]
    arr = np.asarray(xs, dtype=np.int64 if xtype == "int" else np.float64)
    table = Table("t", "", len(xs), {"x": Column(plan.columns["x"], arr)})
    design = design_query(plan.queries[0], plan)
    ex = agg.exact_statistic(design, table, np.ones(len(xs), dtype=bool), plan.columns)
    assert ex.utilities is not None
    cands = [float(c) for c in design.candidates]
    best = max(ex.utilities)
    chosen = {c for c, u in zip(cands, ex.utilities, strict=True) if u == best}
    want = true_quantiles(xs, cands, Fraction(repr(qv)))
    assert want, "every whole number is a candidate, so some candidate is a q-quantile"
    assert best == 0.0 and chosen == want


@pytest.mark.parametrize("xtype,bounds", [("int", [-20, 40]), ("float", [-20.0, 40.0])])
def test_numeric_histogram_matches_brute_force(xtype: str, bounds: list[float]) -> None:
    edges = [-10, 0, 5, 25]
    plan, table, design = setup(
        xtype, bounds, {"statistic": "histogram", "column": "x", "bins": edges}, 2000, 5
    )
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    want = [0, 0, 0]
    for v in table.columns["x"].values.tolist():
        v = min(bounds[1], max(bounds[0], v))
        i = sum(1 for e in edges if v >= e) - 1
        want[min(2, max(0, i))] += 1
    assert ex.vectors[0] == want


def test_select_revenue_matches_brute_force() -> None:
    q = {
        "statistic": "select",
        "column": "x",
        "candidates": [1, 2.5, 7],
        "utility": "revenue",
        "mechanism": "exponential",
    }
    plan, table, design = setup("float", [0.0, 10.0], q, 1500, 6)
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    xs = [min(10.0, max(0.0, v)) for v in table.columns["x"].values.tolist()]
    assert ex.utilities == pytest.approx([p * sum(v >= p for v in xs) for p in (1, 2.5, 7)])


def test_people_whose_ids_share_one_half_of_the_hash_stay_apart() -> None:
    """Issue 11, item 8: rows are bounded per 128-bit id; ids agreeing on 64 bits are still two people."""
    from dpdesk.core.dp.aggregates import bound_rows_per_person
    from dpdesk.core.loading import Column, Table
    from dpdesk.core.model.spec import ColumnSpec

    spec = ColumnSpec("x", "int", (0, 10))
    ids = np.array([[7, 1], [7, 2], [7, 1], [7, 2]], dtype=np.uint64)
    t = Table("t", "", 4, {"x": Column(spec, np.arange(4))}, ids, np.zeros(4, dtype=bool))
    from dpdesk.core.dp.bounding import derive_key

    keep = bound_rows_per_person(t, 1, derive_key(b"test"))
    assert keep.sum() == 2 and keep[[0, 2]].sum() == 1 and keep[[1, 3]].sum() == 1


def test_the_grid_search_of_quantile_candidates_is_the_binary_search_exactly() -> None:
    """``_candidates_below`` finds positions by arithmetic on an even grid and checks every one; on grids,
    rounded grids, uneven candidates, values at, just above and just below every candidate, it gives exactly
    ``np.searchsorted(cands, x, side="left")`` (the quantile's counts, hence its released value, depend on it)."""
    import numpy as np

    from dpdesk.core.dp.aggregates_base import _candidates_below

    rng = np.random.default_rng(20261124)
    for trial in range(200):
        m = int(rng.integers(16, 3000))
        lo = float(rng.normal() * 1e3)
        hi = lo + float(rng.exponential(1e4)) + 1e-6
        kind = trial % 4
        if kind == 0:
            c = np.linspace(lo, hi, m)
        elif kind == 1:
            c = lo + np.arange(m) * ((hi - lo) / (m - 1))
        elif kind == 2:
            c = np.sort(rng.uniform(lo, hi, m))  # uneven: the arithmetic guess fails, the check falls back
        else:
            c = np.unique(np.round(np.linspace(lo, hi, m), 2))
        x = np.concatenate(
            [
                rng.uniform(lo, hi, 5000),
                c,
                np.nextafter(c, np.inf),
                np.nextafter(c, -np.inf),
                rng.choice(c, 3000),
            ]
        )
        x = np.clip(x, lo, hi)
        assert (_candidates_below(c, x) == np.searchsorted(c, x, side="left")).all(), trial
