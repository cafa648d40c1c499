"""mean: the average of a numeric column's values clamped to [L, U], in total or per group.

Released as a noisy count and a noisy sum of the centred values x - mid (mid = (L + U)/2), each with
half the query's epsilon and delta (sequential composition), and the post-processed ratio
mid + sum / max(1, count), clamped to [L, U].

Sensitivity, with k = max_rows_per_person: the count is a count (k; grouped: see the count's module),
and the sum of x - mid, with |x - mid| <= (U - L)/2 per row:

* add_remove: k (U - L)/2;
* replace: x - mid moves within [-(U - L)/2, (U - L)/2]: k (U - L). Where rows can drop out, a replace
  neighbour removes at most k rows (each |x - mid| <= (U - L)/2) and adds at most k: still at most
  k (U - L)/2 + k (U - L)/2 = k (U - L), as booked;
* grouped: the same per group and in total, since a row belongs to one group.

The centred values are exact integers on the fixed-point grid: c = 2 q - (L_int + U_int) in units of
2^-(s+1), |c| <= U_int - L_int.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpdesk.core.dp.statistics.count import GROUP_BY, count_component, group_counts
from dpdesk.core.dp.statistics.kit import (
    AuditExample,
    ColumnSpec,
    Component,
    DesignContext,
    Exact,
    Mechanism,
    NoiseFn,
    PickFn,
    Plan,
    QueryDesign,
    QuerySpec,
    Row,
    Rows,
    Statistic,
    _,
    exact_sum,
    fmt_formula,
    fmt_number,
    grid_bounds,
    group_cells,
    group_sum,
    noise_component,
    ratio_halfwidths,
    ratio_interval,
    rounded_row,
    to_grid,
    to_natural,
)
from dpdesk.core.dp.statistics.sum import NUMERIC_COLUMN


def centered_sum_component(
    label: str, spec: QuerySpec, col: ColumnSpec, ctx: DesignContext, eps: float, delta: float, vector: bool
) -> Component:
    """The noisy sum of the centred values x - mid of a column with bounds [L, U]."""
    k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
    assert col.bounds is not None
    s, lo_i, hi_i = grid_bounds(col)
    lo, hi = col.bounds
    # centred values c = 2 q - (L_int + U_int) in units of 2^-(s+1), |c| <= U_int - L_int
    unit_v = math.ldexp(1.0, -(s + 1))
    w = float(hi_i - lo_i)
    if replace:
        l1_i = l2_i = 2.0 * k * w
        why = _("{rel}, {who}: x - mid moves within [-(U-L)/2, (U-L)/2], k (U - L) = {x}").format(
            rel=rel, who=who, x=fmt_formula(k * (hi - lo))
        )
        if drops:
            why += "; " + _(
                "a row that drops out ({causes}) removes at most (U - L)/2 and its neighbour "
                "adds at most (U - L)/2: still k (U - L)"
            ).format(causes=causes)
    else:
        l1_i = l2_i = k * w
        why = _("{rel}, {who}: |x - mid| <= (U - L)/2, k (U - L)/2 = {x}").format(
            rel=rel, who=who, x=fmt_formula(k * (hi - lo) / 2)
        )
    if vector:
        why += " " + _("(per group and in total: a row belongs to one group)")
    return noise_component(
        label,
        "centered_sum",
        spec.mechanism,
        spec.calibration,
        eps,
        delta,
        l1_i * unit_v,
        l2_i * unit_v,
        unit_v,
        why,
    )


def ratio_design(
    spec: QuerySpec, plan: Plan, ctx: DesignContext, col: ColumnSpec, sum_label: str
) -> QueryDesign:
    """A noisy count and a noisy centred sum, each with half the query's epsilon and delta."""
    groups = group_cells(spec, plan)
    cells = tuple(groups) if groups else ("",)
    vector = len(cells) > 1 or groups is not None
    eps, delta = spec.epsilon, spec.delta
    eps, delta = eps / 2.0, delta / 2.0
    count = count_component(_("noisy count"), spec, ctx, eps, delta, vector)
    total = centered_sum_component(sum_label, spec, col, ctx, eps, delta, vector)
    return QueryDesign(spec, (count, total), cells, None, tuple(ctx.notes))


def centered_exact(rows: Rows, col: ColumnSpec, x: np.ndarray) -> Exact:
    """The exact counts and centred sums (grid units) of values ``x`` of a column with bounds [L, U]."""
    q, bits = to_grid(x, col)
    _s, lo_i, hi_i = grid_bounds(col)
    q = 2 * q.astype(np.float64 if q.dtype.kind == "f" else np.int64) - (lo_i + hi_i)
    bits += 2
    if rows.groups is None:
        sums = [exact_sum(q, bits)]
    else:
        qf = q if q.dtype.kind == "f" else q.astype(np.float64)
        sums = group_sum(rows.groups, qf, rows.n_groups, bits)
    return Exact([group_counts(rows), sums])


def ratio_rows(design: QueryDesign, exact: Exact, bounds: tuple[float, float], noise: NoiseFn) -> list[Row]:
    """Released rows mid + noisy sum / max(1, noisy count), clamped to the bounds, with a 95% interval
    from the two components' 97.5% half-widths, rounded to 3 significant digits of the spread of their noise
    (:func:`~dpdesk.core.dp.queries_base.ratio_halfwidths`; post-processing only)."""

    spec = design.spec
    eps_s, delta_s = fmt_number(spec.epsilon), fmt_number(spec.delta)
    rows: list[Row] = []
    count_c, sum_c = design.components
    counts = noise(exact.vectors[0], count_c)
    sums = noise(exact.vectors[1], sum_c)
    lo, hi = bounds
    mid = (lo + hi) / 2.0
    e_n, e_s, r_n, r_s = ratio_halfwidths(count_c, sum_c)
    for cell, n_g, s in zip(design.cells, counts, sums, strict=True):
        s_nat = to_natural(s, sum_c)
        n = to_natural(n_g, count_c)
        m = min(hi, max(lo, mid + s_nat / max(1, n)))
        low, high = ratio_interval(s_nat, n, e_s, e_n, bounds)
        # the rounding step follows the noise: the interval's spread with at least one step of each noise
        r_low, r_high = ratio_interval(s_nat, n, r_s, r_n, bounds)
        spread = max(m - r_low, r_high - m)
        rows.append(rounded_row(spec.name, cell, m, low, high, spec.mechanism, eps_s, delta_s, spread))
    return rows


class Mean(Statistic):
    """The average of a numeric column."""

    name = "mean"
    order = 30
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (NUMERIC_COLUMN, GROUP_BY)
    accuracy_kind = "ratio"

    def label(self) -> str:
        return _("mean")

    def word(self) -> str:
        return _("mean")

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        col = plan.columns[spec.column or ""]
        return ratio_design(spec, plan, ctx, col, _("noisy sum of (x - mid)"))

    def exact(self, rows: Rows) -> Exact:
        assert rows.column is not None and rows.x is not None
        return centered_exact(rows, rows.column, rows.x)

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        col = plan.columns[design.spec.column or ""]
        assert col.bounds is not None
        return ratio_rows(design, exact, col.bounds, noise)

    def ratio_shape(self, spec: QuerySpec, plan: Plan) -> tuple[float, float]:
        """h = (U_int - L_int) 2^-(s+1), the largest centred value on the grid, and U - L."""
        col = plan.columns[spec.column or ""]
        assert col.bounds is not None
        s, lo_i, hi_i = grid_bounds(col)
        return (hi_i - lo_i) * math.ldexp(1.0, -(s + 1)), col.bounds[1] - col.bounds[0]

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lap = {"mechanism": "laplace"}
        return {
            "mean": {"statistic": "mean", "column": "x", **lap},
            "mean_by": {"statistic": "mean", "column": "x", "group_by": "g", **lap},
            # a public row condition, with the query's own public estimate of the rows that meet it
            "mean_where": {
                "statistic": "mean",
                "column": "x",
                "where": {"column": "g", "in": ["a", "c"]},
                "expected_rows": 200,
                **lap,
            },
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # both components reach their sensitivity: the added row at L moves the count by 1 and the
        # centred sum by (U - L)/2 = 5
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                "mean/laplace",
                {"statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
                "add_remove",
                rows,
                (*rows, (-7.0, 0)),
                30_000,
            ),
        )


STATISTIC = Mean()
