"""sum: the total of a numeric column's values, clamped to the public bounds [L, U], in total or per group.

Sensitivity, with k = max_rows_per_person and M = max(|L|, |U|) (L1 for Laplace, L2 for Gaussian):

* ungrouped, add_remove: a row adds at most M: k M;
* ungrouped, replace: a row's value moves within [L, U]: k (U - L). Where rows can drop out (see
  :func:`~dpdesk.core.dp.queries.rows_can_drop`), a replace neighbour removes a set A of the statistic's
  rows and adds a set B, |A|, |B| <= k (not necessarily |A| = |B|); the change is sum(B) - sum(A) <=
  |B| U - |A| L, at most k max(U - L, M) (A empty and B at the bound farther from zero, or A at L and
  B at U). This exceeds k (U - L) only when the bounds exclude zero: the one statistic whose
  sensitivity changes (tests/core/test_bruteforce.py reaches it);
* grouped, add_remove: the rows add at most k M over all groups: L1 = L2 = k M;
* grouped, replace: a value may leave one group and join another: L1 = 2k M, L2 = k max(U - L,
  sqrt(2) M), not sqrt(2) k M: moving a value from L to U inside one group changes that cell by U - L,
  which exceeds sqrt(2) M when L < 0 < U. Where rows can drop out, L1 <= sum |x| over A and B <= 2k M.
  For L2, cell g changes by at most c_g = max(b_g U - a_g L, a_g U - b_g L) (a_g, b_g the rows of A
  and B in g); sum c_g^2 is convex in (a, b), so over {a >= 0, sum a <= k} x {b >= 0, sum b <= k} its
  maximum is at a vertex: nothing, all k in one cell (k M), A and B in one cell (k (U - L)) or in two
  cells (sqrt(2) k M); hence L2 <= k max(U - L, sqrt(2) M), as booked.

Values are summed exactly on the fixed-point grid of :mod:`dpdesk.core.dp.queries` (the sensitivity is an
exact integer in grid units).
"""

from __future__ import annotations

import math
from typing import Any

from dpdesk.core.dp.statistics.count import GROUP_BY
from dpdesk.core.dp.statistics.kit import (
    NUMERIC,
    AuditExample,
    DesignContext,
    Exact,
    Mechanism,
    Param,
    ParamKind,
    Plan,
    QueryDesign,
    QuerySpec,
    Rows,
    Statistic,
    _,
    exact_sum,
    fmt_formula,
    grid_bounds,
    group_cells,
    group_sum,
    noise_component,
    to_grid,
)

NUMERIC_COLUMN = Param(
    "column",
    ParamKind.COLUMN,
    lambda: _("Column"),
    lambda: _("The column the statistic is computed on (declared columns of the right type)."),
    column_types=NUMERIC,
)


class Sum(Statistic):
    """The total of a numeric column."""

    name = "sum"
    order = 20
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (NUMERIC_COLUMN, GROUP_BY)

    def label(self) -> str:
        return _("sum")

    def word(self) -> str:
        return _("sum")

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
        col = plan.columns[spec.column or ""]
        groups = group_cells(spec, plan)
        cells = tuple(groups) if groups else ("",)
        vector = len(cells) > 1 or groups is not None
        assert col.bounds is not None
        s, lo_i, hi_i = grid_bounds(col)
        lo, hi = col.bounds
        m = max(abs(lo), abs(hi))
        unit_v = math.ldexp(1.0, -s)
        m_i = max(abs(lo_i), abs(hi_i))
        if not vector:
            if drops:
                l1_i = l2_i = float(k * max(hi_i - lo_i, m_i))
                why = _(
                    "{rel}, {who}: a row's value moves within [L, U], or the row drops out "
                    "({causes}) while its neighbour, with a value, does not, which moves the sum by "
                    "up to M = max(|L|, |U|) = {m}: k max(U - L, M) = {x}"
                ).format(
                    rel=rel, who=who, causes=causes, m=fmt_formula(m), x=fmt_formula(k * max(hi - lo, m))
                )
            elif replace:
                l1_i = l2_i = float(k * (hi_i - lo_i))
                why = _("{rel}, {who}: a row's value moves within [L, U], k (U - L) = {x}").format(
                    rel=rel, who=who, x=fmt_formula(k * (hi - lo))
                )
            else:
                l1_i = l2_i = float(k * m_i)
                why = _("{rel}, {who}: a row adds at most M = max(|L|, |U|) = {m}, k M = {km}").format(
                    rel=rel, who=who, m=fmt_formula(m), km=fmt_formula(k * m)
                )
        elif replace:
            l1_i = 2.0 * k * m_i
            l2_i = k * max(float(hi_i - lo_i), math.sqrt(2.0) * m_i)
            why = _(
                "{rel}, {who}: a value may leave one group and join another, L1 = 2kM = {l1}, "
                "L2 = k max(U - L, sqrt(2) M) = {l2}"
            ).format(
                rel=rel,
                who=who,
                l1=fmt_formula(2 * k * m),
                l2=fmt_formula(k * max(hi - lo, math.sqrt(2) * m)),
            )
            if drops:
                why += "; " + _(
                    "a row that drops out ({causes}) only leaves its group: k rows leaving and k "
                    "joining stay within these bounds (the largest changes put them in one or two "
                    "groups)"
                ).format(causes=causes)
        else:
            l1_i = l2_i = float(k * m_i)
            why = _("{rel}, {who}: the rows add at most kM = {km} over all groups, L1 = L2 = kM").format(
                rel=rel, who=who, km=fmt_formula(k * m)
            )
        comp = noise_component(
            "sum",
            "sum",
            spec.mechanism,
            spec.calibration,
            spec.epsilon,
            spec.delta,
            l1_i * unit_v,
            l2_i * unit_v,
            unit_v,
            why,
        )
        return QueryDesign(spec, (comp,), cells, None, tuple(ctx.notes))

    def exact(self, rows: Rows) -> Exact:
        assert rows.column is not None and rows.x is not None
        q, bits = to_grid(rows.x, rows.column)
        if rows.groups is None:
            return Exact([[exact_sum(q, bits)]])
        qf = q if q.dtype.kind == "f" else q.astype("float64")
        return Exact([group_sum(rows.groups, qf, rows.n_groups, bits)])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lap = {"mechanism": "laplace"}
        return {
            "sum": {"statistic": "sum", "column": "x", **lap},
            "sum_by": {"statistic": "sum", "column": "x", "group_by": "g", **lap},
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        drop_rows = tuple((99.0 + (i % 5) / 4, i % 3) for i in range(40))
        return (
            AuditExample(
                "sum/laplace",
                {"statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
                "add_remove",
                rows,
                (*rows, (-7.0, 0)),
                30_000,
            ),
            # bounds excluding zero; the neighbour's row is missing (NaN) and drops out: the sum moves by M = 100
            AuditExample(
                "sum/laplace, a row drops out",
                {"statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
                "replace",
                (*drop_rows, (100.0, 0)),
                (*drop_rows, (math.nan, 0)),
                30_000,
                bounds=(99.0, 100.0),
            ),
            # a public row condition (g is a): the neighbour's row of 100 moves to b, out of the condition, and
            # the sum moves by M = 100, as a row that drops out (booked: k max(U - L, M))
            AuditExample(
                "sum/laplace, a row leaves the where",
                {
                    "statistic": "sum",
                    "column": "x",
                    "mechanism": "laplace",
                    "epsilon": 1.0,
                    "where": {"column": "g", "in": ["a"]},
                },
                "replace",
                (*drop_rows, (100.0, 0)),
                (*drop_rows, (100.0, 1)),
                30_000,
                bounds=(99.0, 100.0),
            ),
        )


STATISTIC = Sum()
