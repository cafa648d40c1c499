"""proportion: the share of rows in a public set of categories of a category column, or whose numeric value
meets a public condition (at least a, at most b, or both; inclusive), in total or per group.

Definition. Let R be the rows of the query: the rows kept under the unit of privacy (at most k rows per
person, none with an empty id) that have a value in the column (and in the group_by column, if any).
What "has a value" means is the column's missing policy, as for every statistic: under ``"drop"`` a
missing value (empty, unparsable, NaN, or a category outside the declared ones) leaves the row out of R,
numerator and denominator alike; under ``{"impute": v}`` the row takes the value v and is judged like
any other. A numeric value is clamped to the public bounds [L, U] first, as everywhere in dpdesk. For a
row r of R, its indicator is z_r = 1 if its category is one of the listed ones (numeric: if
a <= x_r <= b, with a = at_least or L and b = at_most or U), and z_r = 0 otherwise. The proportion is

    p = sum over R of z_r / |R|      (per group: over the rows of R in that group),

the mean of the indicator z, whose public bounds are [0, 1]. The condition is public (written in the
plan, never read off the data) and z_r depends on row r alone.

Release. As the mean (statistics/mean.py) with L = 0, U = 1 and mid = 1/2: a noisy count n~ of R and a
noisy sum S~ of z - 1/2, each with half the query's epsilon and delta (sequential composition), and the
share p~ = 1/2 + S~ / max(1, n~), clamped to [0, 1] (post-processing). Its 95% interval combines the
two components' 97.5% half-widths e_n and e_s (a union bound): the four ratios 1/2 + (S~ +- e_s) /
(n~ +- e_n), clamped to [0, 1]; [0, 1] when n~ - e_n <= 0. Before any data is read, for a table of n
rows the share's stated error (:func:`share_error95`, the query's accuracy) bounds |p~ - p| = |n S_e -
S n_e| / (n (n + n_e)) with |S| <= n/2, where S_e and n_e are the noises, from the two noises' own
distributions (:func:`dpdesk.core.dp.accuracy_base.ratio_failure`); clamping to [0, 1] (where p lies)
only brings p~ closer.

Sensitivity, with k = max_rows_per_person (L1 for Laplace, L2 for Gaussian):

* the count of R is the count of the count's module: ungrouped k under either relation (under replace a
  row of R may leave it, its value turning missing, while its replacement joins it: |B| - |A| lies in
  [-k, k]); grouped, add_remove L1 = L2 = k; replace L1 = 2k, L2 = sqrt(2) k;
* the sum of z - 1/2, |z - 1/2| = 1/2 for every row:

  - add_remove: k rows added or removed change it by at most k/2 (grouped: in total over the groups,
    L1 = L2 = k/2, since a row belongs to one group);
  - replace: a replaced row's z - 1/2 moves from +-1/2 to -+1/2, at most 1: k. Rows that drop out: a
    replace neighbour removes a set A of R's rows and adds a set B, |A|, |B| <= k, which changes the
    sum by at most |A|/2 + |B|/2 <= k, as booked. Grouped: a row that moves from group g to group h
    changes cell g by at most 1/2 and cell h by at most 1/2, so L1 <= k/2 + k/2 = k over all cells and
    L2 <= L1 = k, as booked.

On the grid: the centred indicator c = 2 z - 1 is an integer in {-1, 1} in units of 1/2, so the
sensitivities are k (add_remove) and 2k (replace) grid units, exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpdesk.core.dp.statistics.count import GROUP_BY, count_component
from dpdesk.core.dp.statistics.kit import (
    CATEGORY,
    MAX_CATEGORIES,
    NUMERIC,
    AuditExample,
    ColumnSpec,
    ColumnType,
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
    check_field,
    fmt_formula,
    group_cells,
    json_type,
    listed_twice,
    noise_component,
    num_out,
    parse_param,
    quoted,
    ratio_error,
)
from dpdesk.core.dp.statistics.mean import centered_exact, ratio_rows

#: The indicator z as a column: whole numbers with public bounds [0, 1] (grid exponent 0).
INDICATOR = ColumnSpec("indicator", ColumnType.INT, (0.0, 1.0))


@dataclass(frozen=True)
class ProportionQuery(QuerySpec):
    """A proportion: the listed categories (category column) or the inclusive bounds (numeric column)."""

    categories: tuple[str, ...] | None = None
    at_least: float | None = None
    at_most: float | None = None

    def _check(self) -> None:
        """Categories, or a condition of at_least and at_most; whether they fit the column (its type, its
        categories, its bounds) is the plan's to check."""
        super()._check()
        bounded = self.at_least is not None or self.at_most is not None
        if self.categories is None and not bounded:
            raise PlanError(
                "query.categories",
                _("a proportion needs the categories it counts, or a condition: at_least, at_most or both"),
            )
        if self.categories is not None:
            if bounded:
                raise PlanError(
                    "query.at_least" if self.at_least is not None else "query.at_most",
                    _("give categories or a condition (at_least, at_most), not both"),
                )
            object.__setattr__(self, "categories", _labels(self.categories))
            return
        for param in (AT_LEAST, AT_MOST):
            if getattr(self, param.key) is not None:
                check_field(self, param, getattr(self, param.key))
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise PlanError("query.at_most", _empty_condition(self.at_least, self.at_most))


def _labels(value: Any) -> tuple[str, ...]:
    """Distinct category labels (text, or whole numbers read as their text), at least one."""
    key = "query.categories"
    if not isinstance(value, (tuple, list)):
        raise PlanError(
            key,
            _("{field} must be a list of categories, not {kind}").format(
                field="categories", kind=json_type(value)
            ),
        )
    if not 1 <= len(value) <= MAX_CATEGORIES:
        raise PlanError(
            key,
            _("{field} must list from {lo} to {hi} categories (you gave {n})").format(
                field="categories", lo=1, hi=MAX_CATEGORIES, n=len(value)
            ),
        )
    out: list[str] = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise PlanError(f"{key}[{i}]", _("a category label must be text (or a whole number)"))
        if str(v) in out:
            raise PlanError(f"{key}[{i}]", listed_twice(str(v)))
        out.append(str(v))
    return tuple(out)


def _empty_condition(a: float, b: float) -> str:
    return _("at_most ({b}) is below at_least ({a}): no value meets both").format(b=f"{b:g}", a=f"{a:g}")


CATEGORIES = Param(
    "categories",
    ParamKind.CATEGORY_SET,
    lambda: _("Categories counted"),
    lambda: _("The categories whose share of the rows is released, e.g. yes (several: separated by commas)."),
    column_types=CATEGORY,
)
AT_LEAST = Param(
    "at_least",
    ParamKind.NUMBER,
    lambda: _("At least"),
    lambda: _("Count the rows whose value is at least this public number (inclusive)."),
    column_types=NUMERIC,
)
AT_MOST = Param(
    "at_most",
    ParamKind.NUMBER,
    lambda: _("At most"),
    lambda: _("Count the rows whose value is at most this public number (inclusive)."),
    column_types=NUMERIC,
)


def share_error95(design: QueryDesign, n_rows: int) -> float:
    """The 95% error of the released share for a table of ``n_rows`` rows (share units; 1 when n_rows is
    too small for the noisy count to bound it), from public quantities: the same statement as the query's
    accuracy (:func:`dpdesk.core.dp.accuracy_base.ratio_error`, h = 1/2, U - L = 1)."""
    return ratio_error(design, 0.5, 1.0, n_rows, 0.95)


class Proportion(Statistic):
    """The share of rows in some categories or meeting a condition."""

    name = "proportion"
    order = 80
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (
        Param(
            "column",
            ParamKind.COLUMN,
            lambda: _("Column"),
            lambda: _("The column the statistic is computed on (declared columns of the right type)."),
            column_types=("category", "int", "float"),
        ),
        GROUP_BY,
        CATEGORIES,
        AT_LEAST,
        AT_MOST,
    )
    query_type = ProportionQuery
    accuracy_kind = "ratio"
    accuracy_unit = "share"  # a share of the rows, from 0 to 1

    def ratio_shape(self, spec: QuerySpec, plan: Plan) -> tuple[float, float]:
        """|z - 1/2| = 1/2 for every row, and the share lies in [0, 1]."""
        return 0.5, 1.0

    def label(self) -> str:
        return _("proportion (share of rows in categories or meeting a condition)")

    def word(self) -> str:
        return _("proportion")

    def help(self) -> str:
        return _(
            "The share of rows, from 0 to 1, whose value is in the listed categories or meets the condition."
        )

    def parse(
        self, obj: dict[str, Any], key: str, common: dict[str, Any], col: ColumnSpec | None
    ) -> QuerySpec:
        assert col is not None
        if col.type == "category":
            assert col.categories is not None
            for opt in ("at_least", "at_most"):
                if opt in obj:
                    raise PlanError(
                        f"{key}.{opt}",
                        _(
                            "{field} applies to a numeric column; {name} is a category column (list the "
                            "categories to count instead)"
                        ).format(field=opt, name=quoted(col.name)),
                    )
            if "categories" not in obj:
                raise PlanError(
                    f"{key}.categories",
                    _(
                        "a proportion of a category column needs the categories it counts, e.g. {example}"
                    ).format(example=f'["{col.categories[0]}"]'),
                )
            cats = parse_param(CATEGORIES, obj["categories"], f"{key}.categories", col)
            if len(cats) == len(col.categories):
                raise PlanError(
                    f"{key}.categories",
                    _("categories lists every declared category: the share would always be 1"),
                )
            return ProportionQuery(**common, categories=cats)
        assert col.bounds is not None
        lo, hi = col.bounds
        if "categories" in obj:
            raise PlanError(
                f"{key}.categories",
                _(
                    "categories applies to a category column; {name} is numeric (give at_least, at_most "
                    "or both)"
                ).format(name=quoted(col.name)),
            )
        if "at_least" not in obj and "at_most" not in obj:
            raise PlanError(
                f"{key}.at_least",
                _(
                    "a proportion of a numeric column needs a condition: at_least, at_most or both "
                    "(inclusive), e.g. at_least 18"
                ),
            )
        bounds: dict[str, float | None] = {"at_least": None, "at_most": None}
        for opt, param in (("at_least", AT_LEAST), ("at_most", AT_MOST)):
            if opt in obj:
                x = parse_param(param, obj[opt], f"{key}.{opt}")
                if not lo <= x <= hi:
                    raise PlanError(
                        f"{key}.{opt}",
                        _("{x} lies outside the column bounds [{lo}, {hi}]").format(
                            x=f"{x:g}", lo=f"{lo:g}", hi=f"{hi:g}"
                        ),
                    )
                bounds[opt] = x
        a, b = bounds["at_least"], bounds["at_most"]
        if a is not None and b is not None and a > b:
            raise PlanError(f"{key}.at_most", _empty_condition(a, b))
        if (a is None or a <= lo) and (b is None or b >= hi):
            raise PlanError(
                f"{key}.{'at_least' if a is not None else 'at_most'}",
                _(
                    "every value within the bounds [{lo}, {hi}] meets the condition: the share would always be 1"
                ).format(lo=f"{lo:g}", hi=f"{hi:g}"),
            )
        return ProportionQuery(**common, at_least=a, at_most=b)

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        ps = cast(ProportionQuery, spec)
        d: dict[str, Any] = {}
        if ps.categories is not None:
            d["categories"] = list(ps.categories)
        if ps.at_least is not None:
            d["at_least"] = num_out(ps.at_least)
        if ps.at_most is not None:
            d["at_most"] = num_out(ps.at_most)
        return d

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        k, replace, rel, who, drops, causes = ctx.k, ctx.replace, ctx.rel, ctx.who, ctx.drops, ctx.causes
        groups = group_cells(spec, plan)
        cells = tuple(groups) if groups else ("",)
        vector = len(cells) > 1 or groups is not None
        eps, delta = spec.epsilon / 2.0, spec.delta / 2.0
        count = count_component(_("noisy count"), spec, ctx, eps, delta, vector)
        # the centred indicator 2 z - 1 in {-1, 1}, in units of 1/2
        if replace:
            l1 = l2 = float(k)
            why = _(
                "{rel}, {who}: the indicator z is 1 for a row that meets the condition and 0 otherwise; "
                "replacing a row moves z - 1/2 between -1/2 and 1/2, by at most 1: k = {x}"
            ).format(rel=rel, who=who, x=fmt_formula(l1))
            if drops:
                why += "; " + _(
                    "a row that drops out ({causes}) removes at most 1/2 and its neighbour adds at most 1/2: "
                    "still k"
                ).format(causes=causes)
        else:
            l1 = l2 = 0.5 * k
            why = _(
                "{rel}, {who}: the indicator z is 1 for a row that meets the condition and 0 otherwise; "
                "a row adds z - 1/2, at most 1/2 in size: k/2 = {x}"
            ).format(rel=rel, who=who, x=fmt_formula(l1))
        if vector:
            why += " " + _("(per group and in total: a row belongs to one group)")
        total = noise_component(
            _("noisy sum of (z - 1/2)"),
            "centered_sum",
            spec.mechanism,
            spec.calibration,
            eps,
            delta,
            l1,
            l2,
            0.5,
            why,
        )
        return QueryDesign(spec, (count, total), cells, None, tuple(ctx.notes))

    def exact(self, rows: Rows) -> Exact:
        spec = cast(ProportionQuery, rows.design.spec)
        col, x = rows.column, rows.x
        assert col is not None and x is not None
        if col.type == "category":
            assert col.categories is not None and spec.categories is not None
            codes = [col.categories.index(c) for c in spec.categories]
            z = np.isin(x, np.asarray(codes, dtype=x.dtype))
        else:
            assert col.bounds is not None
            xv = np.clip(x, col.bounds[0], col.bounds[1])
            z = np.ones(len(xv), dtype=bool)
            if spec.at_least is not None:
                z &= xv >= spec.at_least
            if spec.at_most is not None:
                z &= xv <= spec.at_most
        return centered_exact(rows, INDICATOR, z.astype(np.int64))

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        return ratio_rows(design, exact, (0.0, 1.0), noise)

    def accuracy(self, design: QueryDesign) -> dict[str, float | None]:
        return {f"share_error95_at_{n}_rows": share_error95(design, n) for n in (100, 1000, 10000)}

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lo, hi = bounds
        w = hi - lo
        lap = {"mechanism": "laplace"}
        return {
            "proportion_category": {"statistic": "proportion", "column": "g", "categories": ["a"], **lap},
            "proportion_categories": {
                "statistic": "proportion",
                "column": "g",
                "categories": ["a", "c"],
                **lap,
            },
            "proportion_at_least": {"statistic": "proportion", "column": "x", "at_least": lo + w / 2, **lap},
            "proportion_between_by": {
                "statistic": "proportion",
                "column": "x",
                "at_least": lo + w / 4,
                "at_most": lo + 3 * w / 4,
                "group_by": "g",
                **lap,
            },
            "proportion_at_most_upper": {"statistic": "proportion", "column": "x", "at_most": lo, **lap},
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        # the added row (-7, below at_least) moves the count by 1 and the sum of z - 1/2 by 1/2: both
        # components reach their sensitivity under add/remove. Measured (tests/trust/test_audit.py): the correct
        # mechanism gave eps_lower 0.85-0.89 <= 1 and half the noise z = 31.5-32.4 over 3 runs each (a miss
        # then has probability far below 1e-10); a chance false alarm adds 2 alpha = 2e-8 to the file's rate
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                "proportion/laplace",
                {
                    "statistic": "proportion",
                    "column": "x",
                    "at_least": 0,
                    "mechanism": "laplace",
                    "epsilon": 1.0,
                },
                "add_remove",
                rows,
                (*rows, (-7.0, 0)),
                30_000,
            ),
        )


STATISTIC = Proportion()
