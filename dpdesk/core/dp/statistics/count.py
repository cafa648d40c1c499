"""count: the number of rows, in total or per category of a group_by column.

Sensitivity, with k = max_rows_per_person (L1 for Laplace, L2 for Gaussian):

* ungrouped, add_remove: one person adds or removes at most k rows: k;
* ungrouped, replace: n does not change, so k is conservative; where a row can drop out (a missing
  value of the group_by column under "drop", an empty id), a replace neighbour removes a set A of rows
  and adds a set B with |A|, |B| <= k, so |B| - |A| lies in [-k, k]: k, as booked;
* grouped (and every histogram cell), add_remove: the counts change by k in total: L1 = L2 = k;
* grouped, replace: up to k rows move from one cell to another: L1 = 2k, L2 = sqrt(2) k. Where rows
  can drop out, at most k cells lose and k cells gain one per row: L1 <= 2k; the positive and negative
  parts of the change each have L1, hence L2, at most k: L2 <= sqrt(2) k.

The count-like component here is shared by the histogram and the mean (its noisy count).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpdesk.core.dp.statistics.kit import (
    AuditExample,
    Component,
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
    fmt_formula,
    group_cells,
    noise_component,
)

GROUP_BY = Param(
    "group_by",
    ParamKind.GROUP_BY,
    lambda: _("Grouped by"),
    lambda: _(
        "Compute the statistic separately for each category of this column; the whole "
        "table costs this query's epsilon once (parallel composition)."
    ),
)


def count_component(
    label: str, spec: QuerySpec, ctx: DesignContext, eps: float, delta: float, vector: bool
) -> Component:
    """The noisy count of rows (per cell when ``vector``), with its sensitivity and derivation."""
    k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
    if vector:
        l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))
        if replace:
            why = _(
                "{rel}, {who}: each cell counts rows; replacing moves up to {k} rows from one cell to "
                "another, L1 = 2k = {l1}, L2 = sqrt(2) k = {l2}"
            ).format(rel=rel, who=who, k=k, l1=fmt_formula(l1), l2=fmt_formula(l2))
            if drops:
                why += "; " + _(
                    "a row that drops out ({causes}) leaves its cell without joining another: at "
                    "most k rows leave cells and k join, so L1 <= 2k and L2 <= sqrt(2) k still hold"
                ).format(causes=causes)
        else:
            why = _(
                "{rel}, {who}: each cell counts rows; adding or removing changes the counts by {k} in "
                "total, L1 = L2 = k = {k}"
            ).format(rel=rel, who=who, k=k)
    else:
        l1 = l2 = float(k)
        why = _("{rel}, {who}: the count changes by at most k = {k}").format(rel=rel, who=who, k=k)
        if drops:
            why += "; " + _(
                "a row can drop out ({causes}), so replacing can change the count by up to k"
            ).format(causes=causes)
        elif replace:
            why += " " + _("(conservative: replace keeps n)")
    return noise_component(label, "count", spec.mechanism, spec.calibration, eps, delta, l1, l2, 1.0, why)


def group_counts(rows: Rows) -> list[int]:
    """The number of kept rows, in total or per group."""
    if rows.groups is None:
        return [rows.n_kept]
    return list(np.bincount(rows.groups, minlength=rows.n_groups).astype(np.int64).tolist())


class Count(Statistic):
    """The number of rows."""

    name = "count"
    order = 10
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (GROUP_BY,)

    def no_column_message(self) -> str:
        return _("a count takes no column (it counts rows)")

    def label(self) -> str:
        return _("count of rows")

    def word(self) -> str:
        return _("count")

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        groups = group_cells(spec, plan)
        cells = tuple(groups) if groups else ("",)
        vector = len(cells) > 1 or groups is not None
        comp = count_component(spec.statistic, spec, ctx, spec.epsilon, spec.delta, vector)
        return QueryDesign(spec, (comp,), cells, None, tuple(ctx.notes))

    def exact(self, rows: Rows) -> Exact:
        return Exact([group_counts(rows)])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lap = {"mechanism": "laplace"}
        lo, hi = bounds
        return {
            "count": {"statistic": "count", **lap},
            "count_by": {"statistic": "count", "group_by": "g", **lap},
            # a public row condition on the numeric column: from 0 (or the midpoint) to U
            "count_where": {
                "statistic": "count",
                "where": {"column": "x", "between": [0.0 if lo <= 0.0 <= hi else (lo + hi) / 2.0, hi]},
                **lap,
            },
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                "count/laplace",
                {"statistic": "count", "mechanism": "laplace", "epsilon": 1.0},
                "add_remove",
                rows,
                (*rows, (0.0, 0)),
                40_000,
            ),
        )


STATISTIC = Count()
