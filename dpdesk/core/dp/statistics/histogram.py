"""histogram: the number of rows per category of a category column, or per bin of a numeric column.

A numeric column's bins are [e_i, e_i+1) for the public edges e_0 < ... < e_m; values below e_1 go to
the first bin and values from e_m-1 on to the last (so the first and last bins are open). Grouped, the
cells are every (group, bin) pair.

Sensitivity: each cell counts rows, so the histogram is a grouped count (see the count's module):
add_remove L1 = L2 = k; replace L1 = 2k, L2 = sqrt(2) k, also where rows drop out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpdesk.core.dp.statistics.count import GROUP_BY, count_component
from dpdesk.core.dp.statistics.kit import (
    MAX_BINS,
    NUMERIC,
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
    bin_index,
    check_field,
    fmt_formula,
    group_cells,
    parse_param,
)


@dataclass(frozen=True)
class HistogramQuery(QuerySpec):
    """A histogram: bin edges for a numeric column (None for a category column)."""

    bins: tuple[float, ...] | None = None

    def _check(self) -> None:
        super()._check()  # whether the column takes bins is the plan's to check (it knows the column's type)
        if self.bins is not None:
            check_field(self, BINS, self.bins)


BINS = Param(
    "bins",
    ParamKind.NUMBER_LIST,
    lambda: _("Bin edges"),
    lambda: _(
        "Bin edges for a numeric histogram, e.g. 0, 10, 20, 50. Values outside go to the first or last bin."
    ),
    column_types=NUMERIC,
    min_len=2,
    max_len=MAX_BINS + 1,
)


def histogram_labels(spec: HistogramQuery, col: ColumnSpec) -> tuple[str, ...]:
    """The bins' labels: the categories, or the intervals between the edges."""
    if col.type == "category":
        assert col.categories is not None
        return col.categories
    assert spec.bins is not None
    edges = spec.bins
    labels = []
    for i in range(len(edges) - 1):
        left = "(-inf" if i == 0 else f"[{fmt_formula(edges[i])}"
        right = "+inf)" if i == len(edges) - 2 else f"{fmt_formula(edges[i + 1])})"
        labels.append(f"{left}, {right}")
    return tuple(labels)


class Histogram(Statistic):
    """Counts per category or bin."""

    name = "histogram"
    order = 40
    several_cells = True  # one count per category or bin
    mechanisms = (Mechanism.LAPLACE, Mechanism.GAUSSIAN)
    params = (
        Param(
            "column",
            ParamKind.COLUMN,
            lambda: _("Column"),
            lambda: _("The column the statistic is computed on (declared columns of the right type)."),
            column_types=("int", "float", "category"),
            prefer=("category", "int", "float"),
        ),
        GROUP_BY,
        BINS,
    )
    query_type = HistogramQuery

    def label(self) -> str:
        return _("histogram (counts per category or bin)")

    def word(self) -> str:
        return _("histogram")

    def parse(
        self, obj: dict[str, Any], key: str, common: dict[str, Any], col: ColumnSpec | None
    ) -> QuerySpec:
        assert col is not None
        bins = None
        if col.type == "category":
            if "bins" in obj:
                raise PlanError(
                    f"{key}.bins",
                    _("a category column is counted over its declared categories: it takes no bins"),
                    hint=_("remove {field}").format(field="bins"),
                )
        else:
            if "bins" not in obj:
                raise PlanError(
                    f"{key}.bins",
                    _("a histogram of a numeric column needs bin edges, e.g. {example}").format(
                        example="[0, 10, 20]"
                    ),
                )
            bins = parse_param(BINS, obj["bins"], f"{key}.bins")
        return HistogramQuery(**common, bins=bins)

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        from dpdesk.core.dp.statistics.kit import num_out

        bins = cast(HistogramQuery, spec).bins
        return {} if bins is None else {"bins": [num_out(b) for b in bins]}

    def n_cells(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        col = columns[spec.column or ""]
        bins = cast(HistogramQuery, spec).bins
        per_group = len(col.categories or ()) if col.type == "category" else len(bins or ()) - 1
        return super().n_cells(spec, columns) * per_group

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        col = plan.columns[spec.column or ""]
        groups = group_cells(spec, plan)
        bins = histogram_labels(cast(HistogramQuery, spec), col)
        cells = tuple(f"{g} / {b}" for g in groups for b in bins) if groups else bins
        comp = count_component(spec.statistic, spec, ctx, spec.epsilon, spec.delta, True)
        return QueryDesign(spec, (comp,), cells, None, tuple(ctx.notes))

    def exact(self, rows: Rows) -> Exact:
        spec = cast(HistogramQuery, rows.design.spec)
        col, x, g = rows.column, rows.x, rows.groups
        assert col is not None and x is not None
        if col.type == "category":
            assert col.categories is not None
            b = x
            n_bins = len(col.categories)
        else:
            assert spec.bins is not None
            b = bin_index(x, spec.bins, col)
            n_bins = len(spec.bins) - 1
        cell = b if g is None else g.astype(np.intp) * n_bins + b
        return Exact([np.bincount(cell, minlength=rows.n_groups * n_bins).astype(np.int64).tolist()])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lo, hi = bounds
        w = hi - lo
        bins = [lo + w / 4, lo + w / 2, lo + 3 * w / 4]
        lap = {"mechanism": "laplace"}
        return {
            "histogram_category": {"statistic": "histogram", "column": "g", **lap},
            "histogram_bins": {"statistic": "histogram", "column": "x", "bins": bins, **lap},
            "histogram_bins_by": {
                "statistic": "histogram",
                "column": "x",
                "bins": bins,
                "group_by": "g",
                **lap,
            },
        }

    def audit_examples(self) -> tuple[AuditExample, ...]:
        rows = tuple((-1.0 + (i % 4), i % 3) for i in range(40))
        return (
            AuditExample(
                "histogram/gaussian",
                {
                    "statistic": "histogram",
                    "column": "x",
                    "bins": [-7, 0, 3],
                    "mechanism": "gaussian",
                    "epsilon": 2.0,
                    "delta": 1e-3,
                    "calibration": "analytic",
                },
                "add_remove",
                rows,
                (*rows, (-1.0, 0)),
                60_000,
            ),
        )


STATISTIC = Histogram()
