"""The declared columns read by Spark as dpdesk's loaders read them: the *loaded frame* and the data check's counts.

For declared column number i (in the plan's order) the loaded frame holds, as the in-memory table's columns do
(:class:`~dpdesk.core.loading.columns.ColumnBuilder`):

* a category: ``c{i}`` int, the code into the declared categories (-1 for a missing, blank or undeclared value);
  the cell is read as text, trimmed of Unicode white space (an integer or a boolean as Spark prints it, which
  is polars' text too; a binary floating-point cell is compared as the number polars' text names:
  :func:`_number_category_code`);
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
#: The source types whose cells are binary floating-point numbers (a category of them: :func:`_number_category_code`).
_FLOATING = ("double", "float")
#: Unicode white space at either end (Java's \s with UNICODE_CHARACTER_CLASS is White_Space, as polars' strip).
_EDGES = r"(?U)^\s+|\s+$"


def quoted(name: str) -> str:
    """A source column's name as Spark reads a column reference: in backticks, a backtick doubled."""
    return "`" + name.replace("`", "``") + "`"


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
    """The code of a trimmed text among the declared categories, -1 when it is none of them (or null): its place
    in a literal array (one expression whatever the number of categories: a chain of CASEs as deep as a list of
    ten thousand overflowed the JVM's stack)."""
    from pyspark.sql import functions as F

    place = F.array_position(F.array(*[F.lit(c) for c in categories]), t)
    return F.coalesce(place - 1, F.lit(-1)).cast("int")


def _number_category_code(x: Column, categories: tuple[str, ...], dtype: str) -> Column:
    """The code of a binary floating-point cell (``dtype`` "double" or "float"): the category the loader's text of
    the value is. polars writes a float as its shortest round-trip digits, plain from 1e-5 to below 1e16
    (``0.00001``, ``10000000.0``), where Spark's cast writes Java's (``1.0E-5``, ``1.0E7``): so a cell is
    category ``c`` exactly when it is the number ``c`` names and polars writes that number as ``c`` (a category
    polars never writes, ``1e-4`` say, is matched by no cell), zero's sign and NaN included."""
    import math

    import polars as pl
    from pyspark.sql import functions as F

    width = pl.Float32 if dtype == "float" else pl.Float64
    code = F.lit(-1)
    for i, c in reversed(list(enumerate(categories))):
        try:
            as_typed = pl.Series([float(c)], dtype=width)
        except ValueError:  # no number's text
            continue
        if as_typed.cast(pl.String)[0] != c:
            continue
        v = float(as_typed[0])  # rounded to binary32 for a float column
        d = x.cast("double")
        if math.isnan(v):
            hit = F.isnan(d)
        elif v == 0.0:
            hit = (d == F.lit(0.0)) & (
                F.startswith(d.cast("string"), F.lit("-")) == F.lit(math.copysign(1, v) < 0)
            )
        else:
            hit = d == F.lit(v)
        code = F.when(hit, F.lit(i)).otherwise(code)
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
        raw = F.col(quoted(names[name]))
        floating = types[names[name]] in _FLOATING
        text = types[names[name]] == "string" or (plan.columns[name].type == "category" and not floating)
        stage1.append((trimmed(raw) if text else raw).alias(f"t{i}"))
    id_column = plan.privacy_unit.id_column
    if id_column is not None:
        stage1.append(F.col(quoted(names[id_column])).cast("string").alias("id"))
    frame = source.select(*stage1)
    stage2: list[Column] = []
    for i, (name, spec) in enumerate(plan.columns.items()):
        t = F.col(f"t{i}")
        stage2.append(t.isNull().alias(f"e{i}"))
        if spec.type == "category":
            assert spec.categories is not None
            dtype = types[names[name]]
            code = (
                _number_category_code(t, spec.categories, dtype)
                if dtype in _FLOATING
                else _category_code(t, spec.categories)
            )
            stage2.append(code.alias(f"c{i}"))
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
        # finite and not whole: a double of magnitude 2^53 or more is whole (and floor, a bigint, saturates)
        frac = ~nan & (F.abs(x) < F.lit(2.0**53)) & (x != F.floor(x).cast("double"))
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
