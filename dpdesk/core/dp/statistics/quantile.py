"""quantile: a q-quantile (the median at q = 0.5) of a numeric column, chosen by the exponential mechanism
among public candidates (declared, every grid_step between the bounds, or a default grid).

The score. With n the number of rows that have a value, B(c) = #(x < c) and E(c) = #(x <= c), a
candidate c is a q-quantile iff B(c) <= q n <= E(c). The score is

    u(c) = -max(0, a, b),   a = B(c) - q n,   b = q n - E(c),

so u(c) <= 0, and u(c) = 0 iff c is a q-quantile: the best candidates are exactly the true
q-quantiles, ties included (rows equal to c count in E but not in B). Where u(c) < 0 its value is
the distance in ranks from q n to the ranks [B(c), E(c)] that c occupies. The old score
-|(1-q) #(x<c) - q #(x>c)| ignored rows equal to c and missed the median of tied data.

Sensitivity. u = -max(0, a, b) is 1-Lipschitz in the max-norm of (a, b): |max(0, a, b) -
max(0, a', b')| <= max(|a - a'|, |b - b'|). So it suffices to bound how far each term moves.

* Adding one row of value x (n -> n + 1, q n -> q n + q): if x < c, B and E grow by 1, so a moves
  by 1 - q and b by q - 1; if x = c, B stays, E grows by 1: a moves by -q, b by q - 1; if x > c,
  B and E stay: a moves by -q, b by +q. Each term moves by at most max(q, 1 - q); removing a row
  is the same step backwards. k rows: Du = k max(q, 1 - q) under add_remove.
* Replacing one row (n fixed): B and E each change by at most 1 and q n not at all, so each term
  moves by at most 1; k rows: Du = k under replace.
* Rows that drop out (a missing value under ``missing: "drop"``, an empty id) are removals: under
  add_remove a dropped row adds or removes nothing; under replace each removed or added row moves
  a and b by an amount in [-q, 1 - q] or its negative, so k removed and k added rows move them by at
  most k q + k (1 - q) = k, and the score by no more: Du = k still holds.

By group (``group_by``): one exponential mechanism per declared category g of the group column, each
with the query's epsilon and the same Du, choosing among the same candidates; the score of group g is
u_g(c), computed as above on the rows of group g only (n_g, #(x < c) and #(x <= c) within the group).

Privacy (parallel composition, proved here for the scores' dependence on rows): let D, D' be neighbours
and Delta_g = max_c |u_g(c; D) - u_g(c; D')| the change of group g's score. The exponential mechanism
run with (eps, Du) is (eps Delta_g / Du)-DP against that change (P(c) is proportional to
exp(eps u_g(c) / (2 Du)): the numerator moves by at most eps Delta_g / (2 Du), the normaliser by as
much again), and the groups' mechanisms use independent randomness, so the product over groups is
(eps sum_g Delta_g / Du)-DP. Booking Du >= max over neighbours of sum_g Delta_g makes it eps-DP: the
ledger is charged eps once for all the groups. Bounding sum_g Delta_g, with the per-row steps above
(an added row moves group g's terms a_g, b_g by at most max(q, 1-q), a removed one likewise, a row
replaced inside its group by at most q + (1 - q) = 1):

* add_remove: the k rows added (or removed) land in some groups, k_g of them in group g with
  sum_g k_g <= k; Delta_g <= k_g max(q, 1-q), so sum_g Delta_g <= k max(q, 1-q): Du = k max(q, 1-q),
  as ungrouped. Rows that drop out are rows not added: nothing more.
* replace: each of the k replaced rows either stays in its group (that group's terms move by at most
  1), or moves from group A to group B (a removal in A and an addition in B: max(q, 1-q) in each,
  2 max(q, 1-q) in all), or drops out or comes in (a missing value under "drop", an empty id, an
  undeclared category, a value moved across the query's ``where``: a removal or an addition in one group,
  max(q, 1-q)). Since 2 max(q, 1-q) >= 1,
  each row adds at most 2 max(q, 1-q) to sum_g Delta_g (the triangle inequality adds the rows' steps):
  Du = 2 k max(q, 1-q) when grouped. It is reached (tests/core/test_bruteforce.py): a row below every
  candidate moving from group a to group b moves a candidate's score in each group by max(q, 1-q). At
  q = 0.5 it is k, the ungrouped replace bound.

Exact arithmetic: q is read as the decimal written in the plan (0.1 is 1/10, not the binary
double; at most 10^9 in the denominator, see :func:`~dpdesk.core.dp.queries.quantile_fraction`), and
den * a, den * b are exact integers, so a candidate with u = 0 is never lost to rounding; Du is
computed from the same fraction and rounded up to a float. The utilities handed to OpenDP are floats,
-N/den correctly rounded: exact when den is a power of two (q = 0.5, 0.25, 0.75, ...), otherwise
within half an ulp of |u| <= n (below 2^-22 at the 2^31-row cap), as were the previous score's.

Rank accuracy. The exponential mechanism's chosen utility is within R = 2 Du (ln m + ln 20) / eps
of the best of m candidates with probability at least 95% (McSherry & Talwar 2007). When some
candidate is an exact q-quantile (the best utility is 0), the released c has u(c) >= -R, that is
B(c) <= q n + R and E(c) >= q n - R: its rank is within +-R of q n. This needs only public
quantities. An int column whose candidates are every whole number in its (whole) bounds always
has an exact q-quantile among them (the smallest data value v with #(x <= v) >= q n, or any
candidate when n = 0); other candidates do not guarantee it, and the design says so. By group the
same R holds for each group on its own (each group's released value's rank within +-R of q n_g with
probability 95%; not all groups at once).

Memory: the exact state holds #(x < c) and #(x <= c) per group and candidate, so the plan counts a
grouped quantile's candidates times its groups against its total (:data:`MAX_PLAN_CANDIDATES`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpdesk.core.dp.statistics.count import GROUP_BY
from dpdesk.core.dp.statistics.kit import (
    LN20,
    MAX_CANDIDATES,
    AuditExample,
    ColumnSpec,
    DesignContext,
    Exact,
    Mechanism,
    NoiseFn,
    Param,
    ParamKind,
    PickFn,
    Plan,
    PlanError,
    QueryDesign,
    QuerySpec,
    Row,
    Rows,
    Statistic,
    _,
    below_at_most,
    check_field,
    covers_every_whole_number,
    em_curve,
    exponential_component,
    float_up,
    fmt_formula,
    fmt_number,
    group_cells,
    inside_bounds,
    num_out,
    parse_param,
    quantile_fraction,
    quantile_utilities,
)
from dpdesk.core.dp.statistics.sum import NUMERIC_COLUMN


@dataclass(frozen=True)
class QuantileQuery(QuerySpec):
    """A quantile: q, and its candidates (declared, every grid_step, or the default grid)."""

    q: float = 0.5
    candidates: tuple[float, ...] | None = None
    grid_step: float | None = None

    def _check(self) -> None:
        super()._check()
        check_field(self, Q, self.q)
        if self.candidates is not None and self.grid_step is not None:
            raise PlanError("query.grid_step", _both_given())
        if self.candidates is not None:
            check_field(self, CANDIDATES, self.candidates)
        if self.grid_step is not None:
            check_field(self, GRID_STEP, self.grid_step)


def _both_given() -> str:
    return _("give candidates or grid_step, not both")


Q = Param(
    "q",
    ParamKind.FRACTION,
    lambda: _("Quantile q"),
    lambda: _("Which quantile: 0.5 is the median, 0.25 the lower quartile."),
    shown_default=0.5,
)
CANDIDATES = Param(
    "candidates",
    ParamKind.NUMBER_LIST,
    lambda: _("Candidates"),
    lambda: _("The values the mechanism may choose from, e.g. 1, 2, 5, 10."),
    min_len=2,
    max_len=MAX_CANDIDATES,
)
GRID_STEP = Param(
    "grid_step",
    ParamKind.POSITIVE,
    lambda: _("Grid step"),
    lambda: _(
        "Quantile candidates every this much between the bounds (default: every whole "
        "number for an int column)."
    ),
)


def quantile_candidates(spec: QuantileQuery, col: ColumnSpec) -> tuple[float, ...]:
    """The candidates of a quantile query: declared, or a grid inside the public bounds.

    Without ``candidates`` or ``grid_step``, an int column uses every whole number in its bounds
    (if there are at most 100,000) and a float column 1,001 evenly spaced points.
    """
    if spec.candidates is not None:
        return spec.candidates
    assert col.bounds is not None
    lo, hi = col.bounds
    step = spec.grid_step
    if step is None:
        step = 1.0 if col.type == "int" and hi - lo <= 100_000 else (hi - lo) / 1000.0
    n = math.floor((hi - lo) / step + 1e-9) + 1
    return tuple(lo + i * step for i in range(n))


def n_quantile_candidates(spec: QuantileQuery, col: ColumnSpec) -> int:
    """len(quantile_candidates(spec, col)), without making them."""
    if spec.candidates is not None:
        return len(spec.candidates)
    assert col.bounds is not None
    lo, hi = col.bounds
    step = spec.grid_step
    if step is None:
        step = 1.0 if col.type == "int" and hi - lo <= 100_000 else (hi - lo) / 1000.0
    return math.floor((hi - lo) / step + 1e-9) + 1


class Quantile(Statistic):
    """A q-quantile."""

    name = "quantile"
    order = 50
    mechanisms = (Mechanism.EXPONENTIAL,)
    params = (NUMERIC_COLUMN, GROUP_BY, Q, CANDIDATES, GRID_STEP)
    query_type = QuantileQuery
    figure = "selection"
    additive = False
    accuracy_kind = "rank"

    def label(self) -> str:
        return _("quantile / median")

    def word(self) -> str:
        return _("quantile")

    def parse(
        self, obj: dict[str, Any], key: str, common: dict[str, Any], col: ColumnSpec | None
    ) -> QuerySpec:
        assert col is not None and col.bounds is not None
        q = 0.5
        candidates: tuple[float, ...] | None = None
        grid_step: float | None = None
        if "q" in obj:
            q = parse_param(Q, obj["q"], f"{key}.q")
        if "candidates" in obj and "grid_step" in obj:
            raise PlanError(f"{key}.grid_step", _both_given())
        if "candidates" in obj:
            candidates = parse_param(CANDIDATES, obj["candidates"], f"{key}.candidates")
            inside_bounds(candidates, col.bounds, f"{key}.candidates")
        elif "grid_step" in obj:
            grid_step = parse_param(GRID_STEP, obj["grid_step"], f"{key}.grid_step")
            ratio = (col.bounds[1] - col.bounds[0]) / grid_step  # infinite for a tiny step
            if ratio >= MAX_CANDIDATES:
                raise PlanError(
                    f"{key}.grid_step",
                    _("grid_step gives more than {n} candidates: use a larger step").format(n=MAX_CANDIDATES),
                )
            n = math.floor(ratio) + 1
            if n < 2:
                raise PlanError(
                    f"{key}.grid_step", _("grid_step is wider than the bounds; it gives a single candidate")
                )
        return QuantileQuery(**common, q=q, candidates=candidates, grid_step=grid_step)

    def n_candidates(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        return n_quantile_candidates(cast(QuantileQuery, spec), columns[spec.column or ""])

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        qs = cast(QuantileQuery, spec)
        d: dict[str, Any] = {"q": qs.q}
        if qs.candidates is not None:
            d["candidates"] = [num_out(c) for c in qs.candidates]
        if qs.grid_step is not None:
            d["grid_step"] = num_out(qs.grid_step)
        return d

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
        qs = cast(QuantileQuery, spec)
        col = plan.columns[spec.column or ""]
        notes = ctx.notes
        cands = quantile_candidates(qs, col)
        qf = quantile_fraction(qs.q)
        groups = group_cells(spec, plan)
        if replace and groups is not None:
            du = float_up(2 * k * max(qf, 1 - qf))
            why = _(
                "{rel}, {who}: u_g(c) = -max(0, #(x<c) - q n_g, q n_g - #(x<=c)) in each group g; one "
                "exponential mechanism per group, each with epsilon and Du, is epsilon-DP when Du bounds the "
                "sum over groups of each group's score change (parallel composition). A replaced row that "
                "stays in its group moves that group's score by at most 1; a row that moves from one group "
                "to another is a removal in one and an addition in the other, max(q, 1-q) each, and "
                "2 max(q, 1-q) >= 1: Du = 2k max(q, 1-q) = {du}"
            ).format(rel=rel, who=who, du=fmt_formula(du))
        elif replace:
            du = float(k)
            why = _(
                "{rel}, {who}: u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)); replacing a row (n fixed) "
                "moves #(x<c) and #(x<=c) by at most 1 each, so Du = k = {k}"
            ).format(rel=rel, who=who, k=k)
        else:
            du = float_up(k * max(qf, 1 - qf))
            why = _(
                "{rel}, {who}: u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)); adding a row moves "
                "#(x<c) - qn by -q or 1-q and qn - #(x<=c) by q or q-1, so Du = k max(q, 1-q) = "
                "{du}"
            ).format(rel=rel, who=who, du=fmt_formula(du))
            if groups is not None:
                why += "; " + _(
                    "by group, one exponential mechanism per group with epsilon and Du: the k rows land in "
                    "some groups and move their scores by max(q, 1-q) each, k max(q, 1-q) summed over the "
                    "groups, so epsilon is spent once (parallel composition)"
                )
        if drops and groups is not None:
            why += "; " + _(
                "a row that drops out ({causes}) is removed from its group or added to one: max(q, 1-q), "
                "within the 2 max(q, 1-q) a row may move"
            ).format(causes=causes)
        elif drops:
            why += "; " + _(
                "a row that drops out ({causes}) is removed without being replaced: each removed or added "
                "row moves the score by at most q or 1 - q, in opposite directions, so k rows removed and k "
                "added move it by at most k q + k (1 - q) = k"
            ).format(causes=causes)
        util = f"u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)), q = {fmt_formula(qs.q)}"
        rank_exact = covers_every_whole_number(cands, col)
        if not rank_exact:
            notes.append(
                _(
                    "The rank accuracy holds when some candidate is an exact q-quantile, which "
                    "these candidates do not guarantee (only every whole number in the bounds of "
                    "an int column does); otherwise the released value's rank may also be off by "
                    "the distance from q·n to the nearest candidate's ranks."
                )
            )
        eps = spec.epsilon
        n = len(cands)
        comp = exponential_component(spec.statistic, eps, du, n, util, why)
        rank95 = 2.0 * du * (math.log(n) + LN20) / eps
        if groups is None:
            rank_text = _(
                "This score's utility is minus a distance in ranks, so R = {r}: the released value's rank "
                "is within ±R of q·n with 95% probability (n: the rows with a value)"
            ).format(r=fmt_formula(rank95))
        else:
            rank_text = _(
                "This score's utility is minus a distance in ranks, so R = {r}: each group's released value's "
                "rank is within ±R of q·n_g with 95% probability (n_g: the group's rows with a value)"
            ).format(r=fmt_formula(rank95))
        comp = dataclasses.replace(comp, formula=comp.formula + ". " + rank_text)
        cells = tuple(groups) if groups is not None else ("",)
        return QueryDesign(spec, (comp,), cells, cands, tuple(notes), em_curve(eps, du), rank95, rank_exact)

    def exact(self, rows: Rows) -> Exact:
        return self.from_partial(rows.design, self.partial(rows))

    def partial(self, rows: Rows) -> list[list[int]]:
        """#(x < c) and #(x <= c) for every candidate c, and n: counts, which add up over batches of rows.

        By group, the same per group, group after group: #(x < c) of every (group, candidate) in one
        vector (group-major), #(x <= c) likewise, and n per group."""
        design, col, x = rows.design, rows.column, rows.x
        assert design.candidates is not None and col is not None and col.bounds is not None and x is not None
        cands = np.asarray(design.candidates, dtype=np.float64)
        xv = np.clip(x, col.bounds[0], col.bounds[1])
        if rows.groups is None:
            below, at_most = below_at_most(xv, cands, col)
            return [below.tolist(), at_most.tolist(), [len(xv)]]
        codes = np.asarray(rows.groups, dtype=np.intp)
        order = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes, minlength=rows.n_groups)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        below_all: list[int] = []
        at_most_all: list[int] = []
        for g in range(rows.n_groups):
            part = xv[order[bounds[g] : bounds[g + 1]]]
            below, at_most = below_at_most(part, cands, col)
            below_all += below.tolist()
            at_most_all += at_most.tolist()
        return [below_all, at_most_all, sizes.astype(np.int64).tolist()]

    def from_partial(self, design: QueryDesign, state: list[list[int]]) -> Exact:
        """The utilities of every candidate, group after group when grouped (one block of candidates per group)."""
        spec = cast(QuantileQuery, design.spec)
        below, at_most, ns = state
        assert design.candidates is not None
        m = len(design.candidates)
        utilities: list[float] = []
        for g, n in enumerate(ns):
            part = slice(g * m, (g + 1) * m)
            utilities += quantile_utilities(np.asarray(below[part]), np.asarray(at_most[part]), n, spec.q)
        return Exact([], utilities)

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        """One candidate per group (or one), each picked by the release's exponential mechanism (``pick``)
        from its own group's utilities only."""
        spec = design.spec
        assert exact.utilities is not None and design.candidates is not None
        m = len(design.candidates)
        assert len(exact.utilities) == m * len(design.cells)
        eps_s, delta_s = fmt_number(spec.epsilon), fmt_number(spec.delta)
        rows: list[Row] = []
        for g, cell in enumerate(design.cells):
            idx = pick(exact.utilities[g * m : (g + 1) * m], design.components[0])
            value = fmt_number(design.candidates[idx])
            rows.append(Row(spec.name, cell, value, "", "", spec.mechanism, eps_s, delta_s))
        return rows

    def accuracy(self, design: QueryDesign) -> dict[str, float | None]:
        return {"rank_error95": design.rank_error95}

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lo, hi = bounds
        w = hi - lo
        mid = 0.0 if lo <= 0.0 <= hi else (lo + hi) / 2.0
        cands = sorted({lo, lo + w / 4, mid, hi})
        em = {"mechanism": "exponential"}
        return {
            "quantile_0.25": {"statistic": "quantile", "column": "x", "q": 0.25, "candidates": cands, **em},
            "quantile_0.5": {"statistic": "quantile", "column": "x", "q": 0.5, "candidates": cands, **em},
            # q = 0.25: under replace the grouped Du, 2k max(q, 1-q) = 1.5k, differs from the ungrouped k
            "quantile_by": {
                "statistic": "quantile",
                "column": "x",
                "group_by": "g",
                "q": 0.25,
                "candidates": cands,
                **em,
            },
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # q = 0.25 (Du = max(q, 1-q) = 0.75 under add/remove) on tied data: three rows equal to the candidate
        # 1. Adding a row below every candidate moves u(-2) up by 0.75 and u(-1), u(0), u(1) down by 0.75
        # (utilities (-1, 0, 0, 0) -> (-0.25, -0.75, -0.75, -0.75)): the claim is reached in opposite
        # directions, so eps is tight and half the Gumbel scale is a violation.
        d = ((-1.5, 0), (1.0, 0), (1.0, 1), (1.0, 2))
        return (
            AuditExample(
                "quantile/exponential",
                {
                    "statistic": "quantile",
                    "column": "x",
                    "q": 0.25,
                    "candidates": [-2, -1, 0, 1],
                    "mechanism": "exponential",
                    "epsilon": 2.0,
                },
                "add_remove",
                d,
                (*d, (-7.0, 0)),
                12_000,
            ),
            # By group under replace (Du = 2 max(q, 1-q) = 1.5): a row below every candidate moves from group a
            # to group b, which moves a candidate's score by 0.75 in each group, 1.5 in all (the claimed Du).
            # The groups' bases differ (a mirror image would cancel the normalisers and spend only eps/2), so
            # the privacy loss reaches about 0.6 eps and half the Gumbel scale (1.2 eps) is caught.
            AuditExample(
                "quantile by group/exponential",
                {
                    "statistic": "quantile",
                    "column": "x",
                    "group_by": "g",
                    "q": 0.25,
                    "candidates": [-2, -1, 0, 1],
                    "mechanism": "exponential",
                    "epsilon": 3.0,
                },
                "replace",
                ((-1.5, 0), (-1.5, 0), (0.5, 0), (-7.0, 0), (-1.5, 1), (1.0, 1), (1.0, 1)),
                ((-1.5, 0), (-1.5, 0), (0.5, 0), (-7.0, 1), (-1.5, 1), (1.0, 1), (1.0, 1)),
                20_000,
            ),
        )


STATISTIC = Quantile()
