"""Every query's mergeable state (``Statistic.partial``), computed by Spark in one pass over the loaded frame.

Each kept row emits, per query, a few *entries* ``(query, key, n, s, s2)``: the key is a cell (a group, a
group's bin, a quantile's position among the candidates), ``n`` the row's count, ``s`` and ``s2`` its
fixed-point values (grid integers, the centred value ``2q - (L + U)``, its rounded square). The entries are
exploded and summed by (query, key), counts as bigint and sums as ``decimal(38, 0)`` (exact: no float, no
wrap; Spark returns null on an overflow, refused here), and only those sums come back. :func:`assemble` lays them
out as each statistic's ``partial`` does, so that ``from_partial`` makes the same :class:`Exact`, bit for bit
(tests/spark/test_spark_engine.py compares with the in-memory engine).

The rows a query reads are those :func:`dpdesk.core.dp.aggregates._rows` reads: the kept rows (bounded per person
first), meeting every ``where`` condition (:func:`meets`), with a value and a group under "drop" (an imputed one
under "impute"). Values are put on the grid as :func:`~dpdesk.core.dp.aggregates_base.to_grid` does: clamped,
scaled by 2^s (exact), rounded half to even (``rint``, Java's ``Math.rint``, as numpy's) and clamped again. A
position among sorted candidates or bin edges is found by a balanced comparison tree (:func:`count_below`):
as many comparisons as the binary search of ``np.searchsorted``, with the same binary64 comparisons.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpdesk.core.dp.queries_base import grid_bounds
from dpdesk.core.model.spec import ColumnSpec, ColumnType, Plan

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from dpdesk.core.dp.queries_base import QueryDesign
    from dpdesk.core.model.spec import Condition

#: The statistics whose states this module computes (the synthetic table reads whole columns: memory engines only).
STATISTICS = (
    "count",
    "sum",
    "mean",
    "proportion",
    "variance",
    "stddev",
    "histogram",
    "mode",
    "quantile",
    "select",
)
_INDICATOR = ColumnSpec("indicator", ColumnType.INT, (0.0, 1.0))


class NotOnSpark(Exception):
    """A query this engine does not compute (the synthetic table): the caller names it and the other engines."""


def count_below(x: Column, values: Sequence[float], strict: bool) -> Column:
    """How many of the sorted ``values`` are below ``x`` (``strict``: < x, else <= x), by a balanced comparison
    tree (an int)."""
    from pyspark.sql import functions as F

    def tree(lo: int, hi: int) -> Column:  # the answer lies in [lo, hi]
        if lo == hi:
            return F.lit(lo)
        mid = (lo + hi) // 2  # more than mid values are below x  <=>  values[mid] is
        v = F.lit(float(values[mid]))
        above = (v < x) if strict else (v <= x)
        return F.when(above, tree(mid + 1, hi)).otherwise(tree(lo, mid))

    return tree(0, len(values)).cast("int")


class Reader:
    """The loaded frame's columns as the statistics read them (see the module)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.index = {name: i for i, name in enumerate(plan.columns)}

    def missing(self, spec: ColumnSpec) -> Column:
        from pyspark.sql import functions as F

        c = F.col(f"c{self.index[spec.name]}")
        if spec.type == "category":
            return c < 0
        if spec.type == "float":
            return F.isnan(c)
        return F.col(f"m{self.index[spec.name]}")

    def value(self, spec: ColumnSpec) -> tuple[Column, Column | None]:
        """The column's values under its missing-value policy, and the condition a row must meet to have one
        (None: every row has one)."""
        from pyspark.sql import functions as F

        c = F.col(f"c{self.index[spec.name]}")
        if spec.missing.drops:
            return c, ~self.missing(spec)
        if spec.type == "category":
            assert spec.categories is not None
            fill = F.lit(spec.categories.index(str(spec.missing.impute)))
        elif spec.type == "int":
            fill = F.lit(int(float(spec.missing.impute or 0))).cast("bigint")
        else:
            fill = F.lit(float(spec.missing.impute or 0.0))
        return F.when(self.missing(spec), fill).otherwise(c), None

    def meets(self, cond: Condition) -> Column:
        """Whether a row meets a public condition (as :func:`dpdesk.core.dp.aggregates._meets`)."""
        from pyspark.sql import functions as F

        spec = self.plan.columns[cond.column]
        values, present = self.value(spec)
        if cond.categories is not None:
            assert spec.categories is not None
            hit = values.isin([spec.categories.index(c) for c in cond.categories])
        else:
            assert cond.between is not None and spec.bounds is not None
            v = clamped(values, spec)
            hit = (v >= F.lit(float(cond.between[0]))) & (v <= F.lit(float(cond.between[1])))
        return hit if present is None else hit & present


def clamped(x: Column, spec: ColumnSpec) -> Column:
    """A number clamped to the column's bounds, as a double."""
    from pyspark.sql import functions as F

    assert spec.bounds is not None
    lo, hi = spec.bounds
    return F.least(F.greatest(x.cast("double"), F.lit(float(lo))), F.lit(float(hi)))


def on_grid(x: Column, spec: ColumnSpec) -> Column:
    """The value on the column's fixed-point grid, a bigint (:func:`~dpdesk.core.dp.aggregates_base.to_grid`)."""
    from pyspark.sql import functions as F

    s, lo_i, hi_i = grid_bounds(spec)
    if spec.type == "int" and s == 0:
        return F.least(F.greatest(x.cast("bigint"), F.lit(lo_i)), F.lit(hi_i)).cast("bigint")
    q = F.rint(clamped(x, spec) * F.lit(2.0**s))
    return F.least(F.greatest(q, F.lit(float(lo_i))), F.lit(float(hi_i))).cast("bigint")


def centred(x: Column, spec: ColumnSpec) -> Column:
    """2q - (L_int + U_int): the centred grid value of :func:`~dpdesk.core.dp.statistics.mean.centered_exact`."""
    from pyspark.sql import functions as F

    _s, lo_i, hi_i = grid_bounds(spec)
    return on_grid(x, spec) * 2 - F.lit(lo_i + hi_i)


def _entry(q: int, key: Column, s: Column | None = None, s2: Column | None = None) -> Column:
    from pyspark.sql import functions as F

    zero = F.lit(0).cast("bigint")
    return F.struct(
        F.lit(q).alias("q"),
        key.cast("bigint").alias("k"),
        (zero if s is None else s.cast("bigint")).alias("s"),
        (zero if s2 is None else s2.cast("bigint")).alias("s2"),
    )


def query_entries(q: int, design: QueryDesign, reader: Reader) -> list[Column]:
    """The entries a row emits for query number ``q`` (null when the row is not one of the query's)."""
    from pyspark.sql import functions as F

    from dpdesk.core.dp.statistics.variance import SQUARE_BITS, square_grid

    spec, plan = design.spec, reader.plan
    name = spec.statistic
    if name not in STATISTICS:
        raise NotOnSpark(name)
    col = plan.columns[spec.column] if spec.column else None
    group = plan.columns[spec.group_by] if spec.group_by else None
    conds: list[Column] = [reader.meets(c) for c in spec.where]
    g: Column = F.lit(0).cast("bigint")
    if group is not None:
        g, present = reader.value(group)
        g = g.cast("bigint")
        if present is not None:
            conds.append(present)
    x: Column | None = None
    if col is not None:
        x, present = reader.value(col)
        if present is not None:
            conds.append(present)
    entries: list[Column]
    if name == "count":
        entries = [_entry(q, g)]
    elif name == "sum":
        assert col is not None and x is not None
        entries = [_entry(q, g, on_grid(x, col))]
    elif name == "mean":
        assert col is not None and x is not None
        entries = [_entry(q, g, centred(x, col))]
    elif name == "proportion":
        assert col is not None and x is not None
        cats: tuple[str, ...] | None = getattr(spec, "categories", None)
        if col.type == "category":
            assert col.categories is not None and cats is not None
            z = x.isin([col.categories.index(c) for c in cats])
        else:
            xv = clamped(x, col)
            z = F.lit(True)
            at_least, at_most = getattr(spec, "at_least", None), getattr(spec, "at_most", None)
            if at_least is not None:
                z = z & (xv >= F.lit(float(at_least)))
            if at_most is not None:
                z = z & (xv <= F.lit(float(at_most)))
        entries = [_entry(q, g, centred(z.cast("bigint"), _INDICATOR))]
    elif name in ("variance", "stddev"):
        assert col is not None and x is not None
        t, _w, _r, _u = square_grid(col)
        c = centred(x, col)
        r = F.shiftright(c * c + F.lit((1 << t) >> 1), t)
        assert SQUARE_BITS < 62
        entries = [_entry(q, g, c, r)]
    elif name == "histogram":
        assert col is not None and x is not None
        if col.type == "category":
            assert col.categories is not None
            b, n_bins = x.cast("bigint"), len(col.categories)
        else:
            bins: tuple[float, ...] = getattr(spec, "bins", None) or ()
            n_bins = len(bins) - 1
            below = count_below(x.cast("double"), bins, strict=False) - 1  # searchsorted(side="right") - 1
            b = F.least(F.greatest(below, F.lit(0)), F.lit(n_bins - 1)).cast("bigint")
        entries = [_entry(q, g * n_bins + b)]
    elif name == "mode":
        assert x is not None
        entries = [_entry(q, x)]
    else:  # quantile, select: positions among the candidates (#c < x and #c <= x), per group
        assert col is not None and x is not None and design.candidates is not None
        cands = [float(c) for c in design.candidates]
        assert all(a < b for a, b in itertools.pairwise(cands)), "candidates are sorted"
        xv = clamped(x, col)
        width = len(cands) + 1
        lt = count_below(xv, cands, strict=True).cast("bigint")
        le = count_below(xv, cands, strict=False).cast("bigint")
        entries = [_entry(q, (g * width + lt) * 2), _entry(q, (g * width + le) * 2 + 1)]
    if not conds:
        return entries
    kept = conds[0]
    for c in conds[1:]:
        kept = kept & c
    return [F.when(kept, e) for e in entries]


def aggregate(
    frame: DataFrame, designs: Sequence[QueryDesign], plan: Plan, flags: Sequence[str] = ()
) -> tuple[list[list[list[int]]], list[int]]:
    """Every query's state (in the designs' order), from one pass over the loaded frame; in the same pass, how many
    rows have each boolean column of ``flags`` true and, last, how many rows there are (the data check's counts,
    when the states are of every row)."""
    from pyspark.sql import functions as F

    reader = Reader(plan)
    entries = [e for q, d in enumerate(designs) for e in query_entries(q, d, reader)]
    entries += [F.when(F.col(f), _entry(-1, F.lit(j))) for j, f in enumerate(flags)]
    entries.append(_entry(-1, F.lit(len(flags))))
    exploded = frame.select(F.explode(F.array(*entries)).alias("e")).where(F.col("e").isNotNull())
    sums = exploded.groupBy("e.q", "e.k").agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.col("e.s").cast("decimal(38,0)")).alias("s"),
        F.sum(F.col("e.s2").cast("decimal(38,0)")).alias("s2"),
    )
    got: dict[int, dict[int, tuple[int, int, int]]] = {}
    for row in sums.collect():
        if row["s"] is None or row["s2"] is None:
            raise OverflowError("a sum left decimal(38, 0)")
        got.setdefault(int(row["q"]), {})[int(row["k"])] = (int(row["n"]), int(row["s"]), int(row["s2"]))
    tallies = got.get(-1, {})
    counted = [tallies.get(j, (0, 0, 0))[0] for j in range(len(flags) + 1)]
    return [assemble(d, plan, got.get(q, {})) for q, d in enumerate(designs)], counted


def _cells(design: QueryDesign, plan: Plan) -> int:
    spec = design.spec
    if spec.group_by is None:
        return 1
    cats = plan.columns[spec.group_by].categories
    assert cats is not None
    return len(cats)


def assemble(design: QueryDesign, plan: Plan, sums: dict[int, tuple[int, int, int]]) -> list[list[int]]:
    """A query's state laid out as its statistic's ``partial`` lays it out, from the summed entries."""
    spec = design.spec
    name = spec.statistic
    n_groups = _cells(design, plan)

    def column(i: int, size: int) -> list[int]:
        return [sums.get(k, (0, 0, 0))[i] for k in range(size)]

    if name == "count":
        return [column(0, n_groups)]
    if name == "sum":
        return [column(1, n_groups)]
    if name in ("mean", "proportion"):
        return [column(0, n_groups), column(1, n_groups)]
    if name in ("variance", "stddev"):
        return [column(0, n_groups), column(1, n_groups), column(2, n_groups)]
    if name == "histogram":
        col = plan.columns[spec.column or ""]
        bins: tuple[Any, ...] = getattr(spec, "bins", None) or ()
        n_bins = len(col.categories) if col.type == "category" and col.categories else len(bins) - 1
        return [column(0, n_groups * n_bins)]
    if name == "mode":
        cats = plan.columns[spec.column or ""].categories
        assert cats is not None
        return [column(0, len(cats))]
    assert design.candidates is not None
    m = len(design.candidates)
    width = m + 1
    below: list[int] = []
    at_most: list[int] = []
    ns: list[int] = []
    for g in range(n_groups):
        lt = [sums.get(((g * width + j) * 2), (0, 0, 0))[0] for j in range(width)]
        le = [sums.get(((g * width + j) * 2 + 1), (0, 0, 0))[0] for j in range(width)]
        # #(x < c_j) = #(rows with #(c <= x) <= j); #(x <= c_j) = #(rows with #(c < x) <= j)
        below += _running(le)[:m]
        at_most += _running(lt)[:m]
        ns.append(sum(lt))
    if name == "select":
        return [below, ns]
    return [below, at_most, ns]


def _running(xs: list[int]) -> list[int]:
    out, total = [], 0
    for x in xs:
        total += x
        out.append(total)
    return out
