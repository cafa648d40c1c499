"""The declared columns read by Spark as dpdesk's loaders read them: the *loaded frame* and the data check's counts.

For declared column number i (in the plan's order) the loaded frame holds, as the in-memory table's columns do
(:class:`~dpdesk.core.loading.columns.ColumnBuilder`):

* a category: ``c{i}`` int, the code into the declared categories (-1 for a missing, blank or undeclared value);
  the cell is read as text (a number as Spark prints it), trimmed of Unicode white space;
* an int column: ``c{i}`` bigint, the value clamped to the bounds (the lower bound where missing) and ``m{i}``
  boolean, true where missing (empty, unparsable, or not a whole number);
* a float column: ``c{i}`` double, NaN where missing or unparsable;

and ``id``, the id column's text, when the plan has one. A text cell is a number exactly when the local reader
parses it as one (polars' float parse of the trimmed text): Spark's own cast accepts more (``1.5d``, ``1f``) and
less (``-nan``), so it is gated by :data:`NUMBER` and NaN words are read as NaN. A number cell (int, double,
decimal, boolean) is its binary64 value; a date or another type is read as text, which is no number.

The counts of :class:`~dpdesk.core.release.datacheck.DataCheck` (missing, undeclared, unparsable, clamped) are
computed in one aggregation; Spark has no record numbers, so the check names no first problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.core.model.spec import Plan

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from dpdesk.core.model.spec import ColumnSpec

#: The numbers a trimmed text cell may spell (what polars' float parse accepts; tests/spark checks a corpus).
NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: Infinity and NaN words, any case, with a sign.
SPECIAL = r"^(?i)[+-]?(inf|infinity|nan)$"
#: Unicode white space at either end (Java's \s with UNICODE_CHARACTER_CLASS is White_Space, as polars' strip).
_EDGES = r"(?U)^\s+|\s+$"


def trimmed(c: Column) -> Column:
    """A text cell trimmed of Unicode white space; null when empty."""
    from pyspark.sql import functions as F

    t = F.regexp_replace(c.cast("string"), _EDGES, "")
    return F.when(t == "", None).otherwise(t)


def number(c: Column, dtype: str) -> Column:
    """A cell as the loader's binary64 value (null: no number). ``dtype`` is the source column's Spark type."""
    from pyspark.sql import functions as F

    if dtype in {"tinyint", "smallint", "int", "bigint", "float", "double", "boolean"} or dtype.startswith(
        "decimal"
    ):
        return c.cast("double")
    t = trimmed(c)
    special = F.lower(F.regexp_replace(t, r"^[+-]", ""))
    negative = F.startswith(t, F.lit("-"))
    return (
        F.when(t.rlike(NUMBER), t.cast("double"))
        .when(
            t.rlike(SPECIAL),
            F.when(special == "nan", F.lit(float("nan")))
            .when(negative, F.lit(float("-inf")))
            .otherwise(F.lit(float("inf"))),
        )
        .otherwise(F.lit(None).cast("double"))
    )


def _category_code(t: Column, categories: tuple[str, ...]) -> Column:
    from pyspark.sql import functions as F

    code = F.lit(-1)
    for i, c in reversed(list(enumerate(categories))):
        code = F.when(t == F.lit(c), F.lit(i)).otherwise(code)
    return code.cast("int")


def loaded_frame(source: DataFrame, plan: Plan, names: dict[str, str]) -> tuple[DataFrame, list[str]]:
    """The loaded frame of ``source`` (``names``: each declared column's, and the id column's, name in the
    source), with the data check's flags (``e{i}`` empty, ``b{i}`` undeclared or unparsable, ``k{i}`` clamped)
    and the names of those flags, whose counts :func:`column_issue` reads. Built in stages (trimmed text, then
    the number, then the values), each a projection of the one before, so that no expression is repeated."""
    from pyspark.sql import functions as F

    types = dict(source.dtypes)
    stage1: list[Column] = []
    for i, name in enumerate(plan.columns):
        raw = F.col(f"`{names[name]}`")
        text = types[names[name]] == "string" or plan.columns[name].type == "category"
        stage1.append((trimmed(raw) if text else raw).alias(f"t{i}"))
    id_column = plan.privacy_unit.id_column
    if id_column is not None:
        stage1.append(F.col(f"`{names[id_column]}`").cast("string").alias("id"))
    frame = source.select(*stage1)
    stage2: list[Column] = []
    for i, (name, spec) in enumerate(plan.columns.items()):
        t = F.col(f"t{i}")
        stage2.append(t.isNull().alias(f"e{i}"))
        if spec.type == "category":
            assert spec.categories is not None
            stage2.append(_category_code(t, spec.categories).alias(f"c{i}"))
        else:
            dtype = types[names[name]]
            stage2.append(number(t, "string" if dtype == "string" else dtype).alias(f"x{i}"))
    frame = frame.select(*stage2, *(["id"] if id_column is not None else []))
    stage3: list[Column] = []
    counts: list[str] = []

    for i, spec in enumerate(plan.columns.values()):
        empty = F.col(f"e{i}")
        stage3.append(empty)
        counts.append(f"e{i}")
        if spec.type == "category":
            stage3 += [F.col(f"c{i}"), (~empty & (F.col(f"c{i}") < 0)).alias(f"b{i}")]
            counts.append(f"b{i}")
            continue
        x = F.col(f"x{i}")
        nan = x.isNull() | F.isnan(x)
        assert spec.bounds is not None
        if spec.type == "float":
            lo, hi = spec.bounds
            stage3 += [
                F.when(nan, F.lit(float("nan"))).otherwise(x).alias(f"c{i}"),
                (nan & ~empty).alias(f"b{i}"),
                (~nan & ((x < F.lit(float(lo))) | (x > F.lit(float(hi))))).alias(f"k{i}"),
            ]
            counts += [f"b{i}", f"k{i}"]
            continue
        lo_i, hi_i = float(int(spec.bounds[0])), float(int(spec.bounds[1]))
        frac = ~nan & (x != F.floor(x)) & ~F.isnan(x - x)  # finite and not whole (x - x is NaN for infinity)
        missing = nan | frac
        filled = F.when(missing, F.lit(lo_i)).otherwise(x)
        stage3 += [
            F.least(F.greatest(filled, F.lit(lo_i)), F.lit(hi_i)).cast("bigint").alias(f"c{i}"),
            missing.alias(f"m{i}"),
            ((nan & ~empty) | frac).alias(f"b{i}"),
            (~missing & ((x < F.lit(lo_i)) | (x > F.lit(hi_i)))).alias(f"k{i}"),
        ]
        counts += [f"b{i}", f"k{i}"]
    return frame.select(*stage3, *(["id"] if id_column is not None else [])), counts


def column_issue(spec: ColumnSpec, i: int, totals: dict[str, int]) -> tuple[int, int, int, int]:
    """(missing, undeclared, unparsable, clamped) of declared column ``i`` from the counts' results."""
    missing = totals[f"e{i}"]
    if spec.type == "category":
        return missing, totals[f"b{i}"], 0, 0
    return missing, 0, totals[f"b{i}"], totals[f"k{i}"]
