"""The exact statistics against brute force in Python integers (fast paths and chunked paths alike)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dpdesk.core import aggregates as agg
from dpdesk.core.data import Column, Table
from dpdesk.core.plan import parse_plan
from dpdesk.core.queries import design_query, grid_bounds, quantile_candidates


def setup(xtype: str, bounds: list[float], query: dict[str, Any], n: int, seed: int) -> tuple[Any, Table, Any]:
    rng = np.random.default_rng(seed)  # test data only
    plan = parse_plan({
        "version": 1, "budget": {"epsilon": 10.0}, "privacy_unit": {"neighbouring": "add_remove"},
        "columns": {"x": {"type": xtype, "bounds": bounds}, "g": {"type": "category", "categories": ["a", "b", "c"]}},
        "queries": [{"name": "q", "epsilon": 1.0, "mechanism": "laplace", **query}],
    })  # fmt: skip
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


@pytest.mark.parametrize("xtype,bounds", [("float", [-1e6, 3e6]), ("float", [0, 0.001]), ("int", [-50, 200]),
                                          ("int", [0, 10**12])])  # fmt: skip
@pytest.mark.parametrize("grouped", [False, True])
def test_sums_are_exact_also_in_chunks(xtype: str, bounds: list[float], grouped: bool, monkeypatch: Any) -> None:
    monkeypatch.setattr(agg, "_chunk_rows", lambda bits: 97)  # force many chunks
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
    sums = [sum(2 * brute_grid(v, spec) - (lo_i + hi_i) for v, gg, k in zip(xs, gs, keep, strict=True) if k and gg == j)
            for j in range(3)]  # fmt: skip
    assert ex.vectors == [counts, sums]


@pytest.mark.parametrize("xtype,bounds,extra", [
    ("int", [0, 100], {}), ("int", [0, 100], {"candidates": [0, 10.5, 50, 99]}),
    ("float", [-5.0, 5.0], {"candidates": [-4, -1, 0, 0.5, 3]}), ("float", [-5.0, 5.0], {"grid_step": 0.5}),
])  # fmt: skip
def test_quantile_scores_match_brute_force(xtype: str, bounds: list[float], extra: dict[str, Any]) -> None:
    plan, table, design = setup(xtype, bounds, {"statistic": "quantile", "column": "x", "q": 0.3,
                                                "mechanism": "exponential", **extra}, 2000, 4)  # fmt: skip
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    lo, hi = bounds
    xs = [min(hi, max(lo, float(v))) for v in table.columns["x"].values.tolist()]
    if xtype == "int":
        xs = [round(v) for v in xs]
    cands = quantile_candidates(plan.queries[0], plan.columns["x"])
    want = [-abs(0.7 * sum(v < c for v in xs) - 0.3 * sum(v > c for v in xs)) for c in cands]
    assert ex.utilities == pytest.approx(want)


@pytest.mark.parametrize("xtype,bounds", [("int", [-20, 40]), ("float", [-20.0, 40.0])])
def test_numeric_histogram_matches_brute_force(xtype: str, bounds: list[float]) -> None:
    edges = [-10, 0, 5, 25]
    plan, table, design = setup(xtype, bounds, {"statistic": "histogram", "column": "x", "bins": edges}, 2000, 5)
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    want = [0, 0, 0]
    for v in table.columns["x"].values.tolist():
        v = min(bounds[1], max(bounds[0], v))
        i = sum(1 for e in edges if v >= e) - 1
        want[min(2, max(0, i))] += 1
    assert ex.vectors[0] == want


def test_select_revenue_matches_brute_force() -> None:
    q = {"statistic": "select", "column": "x", "candidates": [1, 2.5, 7], "utility": "revenue", "mechanism": "exponential"}
    plan, table, design = setup("float", [0.0, 10.0], q, 1500, 6)
    ex = agg.exact_statistic(design, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    xs = [min(10.0, max(0.0, v)) for v in table.columns["x"].values.tolist()]
    assert ex.utilities == pytest.approx([p * sum(v >= p for v in xs) for p in (1, 2.5, 7)])


def test_people_whose_ids_share_one_half_of_the_hash_stay_apart() -> None:
    """Issue 11, item 8: rows are bounded per 128-bit id; ids agreeing on 64 bits are still two people."""
    from dpdesk.core.aggregates import bound_rows_per_person
    from dpdesk.core.data import Column, Table
    from dpdesk.core.plan import ColumnSpec

    spec = ColumnSpec("x", "int", (0, 10))
    ids = np.array([[7, 1], [7, 2], [7, 1], [7, 2]], dtype=np.uint64)
    t = Table("t", "", 4, {"x": Column(spec, np.arange(4))}, ids, np.zeros(4, dtype=bool))
    keep = bound_rows_per_person(t, 1)
    assert keep.sum() == 2 and keep[[0, 2]].sum() == 1 and keep[[1, 3]].sum() == 1
