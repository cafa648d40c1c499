"""select: the best of public candidate prices by a named utility (revenue), by the exponential mechanism.

Utility (revenue) u(p) = p #(x >= p), p >= 0 a candidate price and x the bids (clamped to the bounds).
A row changes #(x >= p) by at most 1, so k rows (k = max_rows_per_person) change u(p) by at most k p,
under either relation and where rows drop out: Du = k max(candidates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpdesk.core.dp.statistics.kit import (
    AuditExample,
    ColumnSpec,
    DesignContext,
    Exact,
    Mechanism,
    Param,
    ParamKind,
    Plan,
    PlanError,
    QueryDesign,
    QuerySpec,
    Rows,
    Statistic,
    _,
    below_at_most,
    check_field,
    em_curve,
    exponential_component,
    fmt_formula,
    num_out,
    parse_param,
)
from dpdesk.core.dp.statistics.quantile import CANDIDATES  # the same parameter: public candidates
from dpdesk.core.dp.statistics.sum import NUMERIC_COLUMN

UTILITIES = ("revenue",)


@dataclass(frozen=True)
class SelectQuery(QuerySpec):
    """A selection: the candidates and the named utility."""

    candidates: tuple[float, ...] | None = None
    utility: str | None = None

    def _check(self) -> None:
        super()._check()
        if self.candidates is None:
            raise PlanError("query.candidates", _candidates_required())
        candidates = check_field(self, CANDIDATES, self.candidates)
        if self.utility is None:
            raise PlanError("query.utility", _utility_required())
        check_field(self, UTILITY, self.utility)
        if candidates[0] < 0:
            raise PlanError("query.candidates", _negative_price())


def _candidates_required() -> str:
    return _("select needs a declared list of candidates")


def _utility_required() -> str:
    return _("select needs a named utility ({names})").format(names=", ".join(UTILITIES))


def _negative_price() -> str:
    return _("revenue candidates are prices and must not be negative")


UTILITY = Param(
    "utility",
    ParamKind.CHOICE,
    lambda: _("Utility"),
    lambda: _("What the chosen candidate should make large."),
    choices=UTILITIES,
)


class Select(Statistic):
    """The best price."""

    name = "select"
    order = 70
    mechanisms = (Mechanism.EXPONENTIAL,)
    params = (NUMERIC_COLUMN, CANDIDATES, UTILITY)
    query_type = SelectQuery
    figure = "selection"
    accuracy_kind = "lead"

    def label(self) -> str:
        return _("best price (exponential mechanism)")

    def word(self) -> str:
        return _("best price")

    def parse(
        self, obj: dict[str, Any], key: str, common: dict[str, Any], col: ColumnSpec | None
    ) -> QuerySpec:
        assert col is not None and col.bounds is not None
        if "candidates" not in obj:
            raise PlanError(f"{key}.candidates", _candidates_required())
        candidates = parse_param(CANDIDATES, obj["candidates"], f"{key}.candidates")
        if "utility" not in obj:
            raise PlanError(f"{key}.utility", _utility_required())
        utility = parse_param(UTILITY, obj["utility"], f"{key}.utility")
        if candidates[0] < 0:
            raise PlanError(f"{key}.candidates", _negative_price())
        return SelectQuery(**common, candidates=candidates, utility=utility)

    def n_candidates(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        return len(cast(SelectQuery, spec).candidates or ())

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        ss = cast(SelectQuery, spec)
        assert ss.candidates is not None
        return {"candidates": [num_out(c) for c in ss.candidates], "utility": ss.utility}

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        k, rel, who, drops, causes = ctx.k, ctx.rel, ctx.who, ctx.drops, ctx.causes
        ss = cast(SelectQuery, spec)
        assert ss.candidates is not None
        cands = ss.candidates
        du = k * max(abs(c) for c in cands)
        why = _(
            "{rel}, {who}: u(p) = p x #(bids >= p); a row changes each count by at most 1, so "
            "Du = k max(p) = {du}"
        ).format(rel=rel, who=who, du=fmt_formula(du))
        if drops:
            why += "; " + _("a row that drops out ({causes}) also changes each count by at most 1").format(
                causes=causes
            )
        util = _("u(p) = p x number of bids at or above p (revenue)")
        comp = exponential_component(spec.statistic, spec.epsilon, du, len(cands), util, why)
        return QueryDesign(spec, (comp,), ("",), cands, tuple(ctx.notes), em_curve(spec.epsilon, du))

    def exact(self, rows: Rows) -> Exact:
        return self.from_partial(rows.design, self.partial(rows))

    def partial(self, rows: Rows) -> list[list[int]]:
        """#(x < p) for every candidate p, and n: counts, which add up over batches of rows."""
        design, col, x = rows.design, rows.column, rows.x
        assert design.candidates is not None and col is not None and col.bounds is not None and x is not None
        cands = np.asarray(design.candidates, dtype=np.float64)
        xv = np.clip(x, col.bounds[0], col.bounds[1])
        below, _at_most = below_at_most(xv, cands, col)
        return [below.tolist(), [len(xv)]]

    def from_partial(self, design: QueryDesign, state: list[list[int]]) -> Exact:
        assert design.candidates is not None
        below, (n,) = state
        # select, revenue: u(p) = p * #(x >= p) = p * (n - #(x < p))
        at_or_above = n - np.asarray(below, dtype=np.int64)
        return Exact([], [float(c) * float(a) for c, a in zip(design.candidates, at_or_above, strict=True)])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lo, hi = bounds
        w = hi - lo
        prices = [0.0, 1.0, 3.0] if hi < 50 else [lo, lo + w / 2, hi]
        return {
            "select": {
                "statistic": "select",
                "column": "x",
                "candidates": prices,
                "utility": "revenue",
                "mechanism": "exponential",
            }
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # the added bid at the highest price raises every u(p) by p: the utilities only grow, so the
        # mechanism is then about eps/2-DP and halving the noise need not be caught (tight=False)
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                "select/exponential",
                {
                    "statistic": "select",
                    "column": "x",
                    "candidates": [0, 1, 3],
                    "utility": "revenue",
                    "mechanism": "exponential",
                    "epsilon": 2.0,
                },
                "add_remove",
                rows,
                (*rows, (3.0, 0)),
                8_000,
                tight=False,
            ),
        )


STATISTIC = Select()
