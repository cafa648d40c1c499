"""variance: the sample variance of a numeric column's values clamped to [L, U], in total or per group.

The estimator is the SAMPLE variance, as Excel's VAR.S and pandas' ``var()`` compute it: V = sum (x - xbar)^2 /
(n - 1), of the values clamped to [L, U] (on the column's fixed-point grid). With the centred values
c = x - mid (mid = (L + U)/2, |c| <= h = (U - L)/2), S = sum c and Q = sum c^2, V = (Q - S^2/n) / (n - 1).

Released as three noise components under sequential composition, each with a third of the query's epsilon
and delta: a noisy count n~, a noisy sum S~ of the centred values (as the mean's, :mod:`.mean`) and a noisy
sum Q~ of the squared centred values. Post-processing: m = max(2, n~), v = (Q~ - S~^2/m) / (m - 1), clamped
to [0, 2 h^2]; the standard deviation (:mod:`.stddev`) is sqrt(v).

Why 2 h^2 = (U - L)^2/2: for n values in [L, U], sum (x - xbar)^2 <= n h^2 (each |x - mid| <= h and the
sum of squares about the mean is at most that about mid), so V <= h^2 n / (n - 1) <= 2 h^2 for n >= 2, the
maximum reached at n = 2 by the values L and U. (h^2 = (U - L)^2/4 alone is exceeded for small n.)

Sensitivity, with k = max_rows_per_person: the count is a count (k; grouped: see :mod:`.count`), the sum of
centred values is the mean's (add_remove k h, replace 2 k h, also where rows drop out). The square sum: each
row adds r(c) in [0, R], R = r(h) its largest value (the rounded square of the largest centred value, below):

* add_remove: the rows add or remove at most k R (every r >= 0): k R;
* replace: each row's r moves within [0, R]: k R. Where rows can drop out, a neighbour removes a set A and
  adds a set B of at most k rows each: sum_B r - sum_A r lies in [-k R, k R]: still k R (r >= 0, so removing
  and adding never add up on one side);
* grouped, add_remove: k R in total over the groups: L1 = L2 = k R;
* grouped, replace (and rows that drop out): the change vector's positive part (the rows of B, at most k R
  in L1) and negative part (the rows of A, at most k R) have disjoint supports after cancelling per cell, so
  L1 <= 2 k R and L2 <= sqrt((k R)^2 + (k R)^2) = sqrt(2) k R; a row at a bound in one group replaced by one at
  a bound in another reaches both.

The square grid: c is an integer in units of 2^-(s+1) with |c| <= W = U_int - L_int <= 2^31, so c^2 <=
2^62 fits an int64 but its sum over rows does not. Each square is rounded, deterministically from the row,
to r(c) = round(c^2 / 2^t) (half up, integer arithmetic), t the smallest shift with W^2 / 2^t < 2^30, in
units u_q = 2^(t - 2(s+1)): r <= 2^30, so sums over 2^31 rows stay exact in int64 and the chunked float64
sums (:func:`~dpdesk.core.dp.aggregates_base.exact_sum`, ``group_sum``). The sensitivity above is of these
rounded values (R = r(W)); the rounding moves Q by at most n u_q / 2, which the accuracy counts.

Accuracy (:func:`~dpdesk.core.dp.accuracy_base.spread_error`): a union bound over the three noises' half-widths
and a worst case over every table of n rows (:func:`~dpdesk.core.dp.accuracy_base.spread_bound`), plus the
published value's rounding; with a grouped query, n is expected_rows split evenly among the groups.

Privacy audit (tests/trust/test_audit.py, ``audit_examples``): an added row at L moves all three parts by their
sensitivities at once, so the pair reaches the claimed epsilon; with half the noise, eps_lower = 1.63-1.71 against
the claimed 1, margin z = 12.8-17.2 over 3 repetitions each of variance and stddev (a miss: about Phi(-12) <
1e-30); the correct mechanism gave eps_lower 0.69-0.76.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from dpdesk.core.dp.statistics.count import GROUP_BY, count_component
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
    rounded_row,
    spread_interval,
    to_grid,
    to_natural,
)
from dpdesk.core.dp.statistics.mean import centered_exact, centered_sum_component
from dpdesk.core.dp.statistics.sum import NUMERIC_COLUMN

#: Each row's rounded square is at most 2^SQUARE_BITS on its grid.
SQUARE_BITS = 30


def square_grid(col: ColumnSpec) -> tuple[int, int, int, float]:
    """(t, W, R, u_q): the square's shift t, the largest centred value W = U_int - L_int (units 2^-(s+1)), the
    largest rounded square R = r(W) and the squares' unit u_q = 2^(t - 2(s+1)) in natural units."""
    s, lo_i, hi_i = grid_bounds(col)
    w = hi_i - lo_i
    t = max(0, (w * w).bit_length() - SQUARE_BITS)
    return t, w, rounded_square(w, t), math.ldexp(1.0, t - 2 * (s + 1))


def rounded_square(c: int, t: int) -> int:
    """r(c) = round(c^2 / 2^t), half up, in integer arithmetic (non-decreasing in |c|)."""
    return (c * c + ((1 << t) >> 1)) >> t


def square_sum_component(
    label: str, spec: QuerySpec, col: ColumnSpec, ctx: DesignContext, eps: float, delta: float, vector: bool
) -> Component:
    """The noisy sum of the rounded squared centred values (module docstring: k R, grouped replace 2k R and
    sqrt(2) k R)."""
    k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
    _t, _w, big_r, unit_q = square_grid(col)
    per_row = float(big_r)  # R: every row's rounded square lies in [0, R]
    r_nat = big_r * unit_q
    if vector and replace:  # a row may leave one group and join another
        l1_i, l2_i = 2.0 * k * per_row, math.sqrt(2.0) * k * per_row
        why = _(
            "{rel}, {who}: each row adds (x - mid)^2 in [0, R], R = ((U - L)/2)^2 = {r} on the squares' grid; "
            "a row may leave one group and join another: L1 = 2k R = {l1}, L2 = sqrt(2) k R = {l2}"
        ).format(
            rel=rel,
            who=who,
            r=fmt_formula(r_nat),
            l1=fmt_formula(2 * k * r_nat),
            l2=fmt_formula(l2_i * unit_q),
        )
    elif replace:  # sum_B r - sum_A r lies in [-k R, k R] (rows that drop out included)
        l1_i = l2_i = k * per_row
        why = _(
            "{rel}, {who}: each row's (x - mid)^2 moves within [0, R], R = ((U - L)/2)^2 = {r} on the "
            "squares' grid: k R = {x}"
        ).format(rel=rel, who=who, r=fmt_formula(r_nat), x=fmt_formula(k * r_nat))
    else:  # add_remove, grouped or not: at most k R in total
        l1_i = l2_i = float(k) * per_row
        why = _(
            "{rel}, {who}: each row adds (x - mid)^2 in [0, R], R = ((U - L)/2)^2 = {r} on the squares' "
            "grid: k R = {x}"
        ).format(rel=rel, who=who, r=fmt_formula(r_nat), x=fmt_formula(k * r_nat))
        if vector:
            why += " " + _("over all groups, L1 = L2 = k R")
    if replace and drops:
        why += "; " + _(
            "a row that drops out ({causes}) removes at most R and its neighbour adds at most R; squares are "
            "never negative, so k rows removed and k added stay within these bounds"
        ).format(causes=causes)
    return noise_component(
        label,
        "square_sum",
        spec.mechanism,
        spec.calibration,
        eps,
        delta,
        l1_i * unit_q,
        l2_i * unit_q,
        unit_q,
        why,
    )


def spread_design(spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
    """A noisy count, a noisy centred sum and a noisy square sum, each with a third of the query's epsilon and
    delta (sequential composition)."""
    col = plan.columns[spec.column or ""]
    groups = group_cells(spec, plan)
    cells = tuple(groups) if groups else ("",)
    vector = len(cells) > 1 or groups is not None
    eps, delta = spec.epsilon / 3.0, spec.delta / 3.0
    composition = _(
        "sequential composition of three parts, each with epsilon/3 = {e} and delta/3 = {d}: epsilon = "
        "{e} + {e} + {e}, delta = {d} + {d} + {d}"
    ).format(e=fmt_formula(eps), d=f"{delta:g}")
    count = count_component(_("noisy count"), spec, ctx, eps, delta, vector)
    total = centered_sum_component(_("noisy sum of (x - mid)"), spec, col, ctx, eps, delta, vector)
    squares = square_sum_component(_("noisy sum of (x - mid)^2"), spec, col, ctx, eps, delta, vector)
    comps = tuple(
        dataclasses.replace(c, formula=f"{c.formula}; {composition}") for c in (count, total, squares)
    )
    estimator = _(
        "the sample variance, divisor n - 1 (as Excel's VAR.S and pandas compute it), of the values clamped to "
        "[L, U]: v = (Q - S^2/n) / (n - 1) from the noisy count n, the noisy sum S of x - mid and the noisy sum Q "
        "of (x - mid)^2, with n at least 2, clamped to [0, (U - L)^2/2] (the largest sample variance in [L, U]); "
        "the standard deviation is its square root"
    )
    return QueryDesign(spec, comps, cells, None, (*ctx.notes, estimator))


def spread_exact(rows: Rows) -> Exact:
    """The exact counts, centred sums and rounded square sums (grid units) of the kept rows."""
    assert rows.column is not None and rows.x is not None
    col = rows.column
    base = centered_exact(rows, col, rows.x)
    q, _bits = to_grid(rows.x, col)
    _s, lo_i, hi_i = grid_bounds(col)
    t, _w, _r, _u = square_grid(col)
    c = 2 * q.astype(np.int64) - (lo_i + hi_i)  # |c| <= W <= 2^31: c^2 <= 2^62 in int64
    r = (c * c + ((1 << t) >> 1)) >> t  # rounded_square, elementwise: r <= 2^30
    if rows.groups is None:
        squares = [exact_sum(r, SQUARE_BITS + 1)]
    else:
        squares = group_sum(rows.groups, r.astype(np.float64), rows.n_groups, SQUARE_BITS + 1)
    return Exact([*base.vectors, squares])


def spread_shape(spec: QuerySpec, plan: Plan) -> tuple[float, float]:
    """(h, 2 h^2): the largest centred value on the grid and the largest sample variance."""
    col = plan.columns[spec.column or ""]
    s, lo_i, hi_i = grid_bounds(col)
    h = (hi_i - lo_i) * math.ldexp(1.0, -(s + 1))
    return h, 2.0 * h * h


def spread_rows(design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, root: bool) -> list[Row]:
    """Released rows: v = (Q~ - S~^2/m) / (m - 1), m = max(2, n~), clamped to [0, 2 h^2] (``root``: its square
    root), with a 95% interval v -+ B95(m) (:func:`~dpdesk.core.dp.accuracy_base.spread_interval`, post-processing
    of the noisy count), rounded to 3 significant digits of that half-width (of its square root for ``root``)."""
    spec = design.spec
    eps_s, delta_s = fmt_number(spec.epsilon), fmt_number(spec.delta)
    count_c, sum_c, sq_c = design.components
    counts = noise(exact.vectors[0], count_c)
    sums = noise(exact.vectors[1], sum_c)
    squares = noise(exact.vectors[2], sq_c)
    h, width = spread_shape(spec, plan)
    rows: list[Row] = []
    for cell, n_g, s_g, q_g in zip(design.cells, counts, sums, squares, strict=True):
        m = max(2.0, float(to_natural(n_g, count_c)))
        s = float(to_natural(s_g, sum_c))
        q = float(to_natural(q_g, sq_c))
        v = min(width, max(0.0, (q - s * s / m) / (m - 1.0)))
        half = min(width, spread_interval(design, h, m))
        low, high = max(0.0, v - half), min(width, v + half)
        if root:
            top = math.sqrt(width)
            rows.append(
                rounded_row(
                    spec.name,
                    cell,
                    math.sqrt(v),
                    math.sqrt(low),
                    math.sqrt(high),
                    spec.mechanism,
                    eps_s,
                    delta_s,
                    min(top, math.sqrt(half)),
                )
            )
        else:
            rows.append(rounded_row(spec.name, cell, v, low, high, spec.mechanism, eps_s, delta_s, half))
    return rows


class Variance(Statistic):
    """The sample variance of a numeric column."""

    name = "variance"
    order = 82
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (NUMERIC_COLUMN, GROUP_BY)
    accuracy_kind = "spread"
    accuracy_unit = "squared"  # the column's units squared

    def label(self) -> str:
        return _("variance")

    def word(self) -> str:
        return _("variance")

    def help(self) -> str:
        return _(
            "The sample variance (divisor n - 1, as Excel's VAR.S and pandas compute it) of the column's values "
            "clamped to its bounds, from a noisy count, a noisy sum and a noisy sum of squares."
        )

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        return spread_design(spec, plan, ctx)

    def exact(self, rows: Rows) -> Exact:
        return spread_exact(rows)

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        return spread_rows(design, exact, plan, noise, root=False)

    def ratio_shape(self, spec: QuerySpec, plan: Plan) -> tuple[float, float]:
        """(h, 2 h^2): the largest centred value and the largest sample variance."""
        return spread_shape(spec, plan)

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lap = {"mechanism": "laplace"}
        return {
            self.name: {"statistic": self.name, "column": "x", **lap},
            f"{self.name}_by": {"statistic": self.name, "column": "x", "group_by": "g", **lap},
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # all three parts reach their sensitivity at once (tight): the added row at L = -7 (x - mid = -5) moves
        # the count by 1, the centred sum by (U - L)/2 = 5 and the square sum by R = 25
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                f"{self.name}/laplace",
                {"statistic": self.name, "column": "x", "mechanism": "laplace", "epsilon": 1.0},
                "add_remove",
                rows,
                (*rows, (-7.0, 0)),
                30_000,
            ),
        )


STATISTIC = Variance()
