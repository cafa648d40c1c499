"""mode: the most frequent category of a category column, chosen by the exponential mechanism.

Utility u(c) = the number of rows in category c. Each category's count changes by b_c - a_c in [-k, k]
(k = max_rows_per_person) under either relation, also where rows drop out (a row that drops out lowers
one count by 1 and its neighbour raises one by at most 1): Du = k.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpdesk.core.dp.statistics.kit import (
    CATEGORY,
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
    em_curve,
    exponential_component,
)


class Mode(Statistic):
    """The most frequent category."""

    name = "mode"
    order = 60
    mechanisms = (Mechanism.EXPONENTIAL,)
    params = (
        Param(
            "column",
            ParamKind.COLUMN,
            lambda: _("Column"),
            lambda: _("The column the statistic is computed on (declared columns of the right type)."),
            column_types=CATEGORY,
        ),
    )
    figure = "selection"
    accuracy_kind = "lead"
    accuracy_unit = "rows"  # its utility is a category's count

    def label(self) -> str:
        return _("most frequent category")

    def word(self) -> str:
        return _("most frequent")

    def lead_help(self) -> str:
        return _("How many more rows than every other the largest category has when it must be chosen.")

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        k, rel, who, drops, causes = ctx.k, ctx.rel, ctx.who, ctx.drops, ctx.causes
        col = plan.columns[spec.column or ""]
        assert col.categories is not None
        du = float(k)
        why = _("{rel}, {who}: a category's count changes by at most k = {k}").format(rel=rel, who=who, k=k)
        if drops:
            why += "; " + _(
                "a row that drops out ({causes}) lowers one count by 1 and its neighbour raises one by at "
                "most 1: each count still moves by at most k"
            ).format(causes=causes)
        cands: tuple[Any, ...] = col.categories
        util = _("u(c) = number of rows in category c")
        comp = exponential_component(spec.statistic, spec.epsilon, du, len(cands), util, why)
        return QueryDesign(spec, (comp,), ("",), cands, tuple(ctx.notes), em_curve(spec.epsilon, du))

    def exact(self, rows: Rows) -> Exact:
        return self.from_partial(rows.design, self.partial(rows))

    def partial(self, rows: Rows) -> list[list[int]]:
        col, x = rows.column, rows.x
        assert col is not None and col.categories is not None and x is not None
        return [np.bincount(x, minlength=len(col.categories)).astype(np.int64).tolist()]

    def from_partial(self, design: QueryDesign, state: list[list[int]]) -> Exact:
        (per_category,) = state
        return Exact([], [float(c) for c in per_category])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        return {"mode": {"statistic": "mode", "column": "g", "mechanism": "exponential"}}

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # under add/remove the mode's utilities only grow (the mechanism is then eps/2-DP): replace is tight
        return (
            AuditExample(
                "mode/exponential",
                {"statistic": "mode", "column": "g", "mechanism": "exponential", "epsilon": 2.0},
                "replace",
                ((0.0, 0),) * 2 + ((0.0, 1),) * 4,
                ((0.0, 0),) * 3 + ((0.0, 1),) * 3,
                8_000,
            ),
        )


STATISTIC = Mode()
