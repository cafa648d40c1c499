"""The dataset's content identity, scheme 2 (:mod:`dpdesk.core.loading.typed_identity`), computed by Spark SQL.

A release's dataset is named by its content identity, so that the same rows are the same dataset (and the same
ledger) whichever engine read them. When Spark aggregates a table the desktop never sees its rows: Spark computes
the identity's parts with its built-in functions (no Python on the executors) and only these come back: the row
count, the sum of the rows' two 64-bit lanes mod 2^128, the :data:`~dpdesk.core.loading.identity.SKETCH_K`
smallest distinct first lanes, and for the column sketches each projection's sum mod 2^64 and its
:data:`~dpdesk.core.loading.identity.COLUMN_SKETCH_K` smallest distinct values, each column's value-hash sum, and
the counts of a column's values when it has at most
:data:`~dpdesk.core.loading.identity.MARGINAL_CATEGORIES` distinct ones. The desktop finishes them with
:class:`~dpdesk.core.loading.typed_identity.TypedIdentity`'s own code (:meth:`TypedIdentity.add_parts`), so that
the key, the sketch and the column sketches are those the local loaders compute for the same file.

**Every column** of the frame is hashed, as Spark reads it (not only a plan's): a Parquet file's typed columns,
or a CSV read as text (:func:`~dpdesk.core.release.engines.spark.session.read`). Canonical values as scheme 2
defines them, per Spark type:

* ``bigint``, ``int``, ``smallint``, ``tinyint``: the integer;
* ``double``, ``float``: the binary64 number, an integral value below 2^63 in magnitude as that integer, any
  other as its bits (Java's ``doubleToLongBits``: one NaN);
* ``string``, and ``boolean``, ``date`` and ``decimal`` as Spark prints them (``true``, ``2024-01-31``, ``1.50``
  or ``1.000E-7``: the same number as the local reader's ``0.0000001000``, since a decimal's text is read as a
  number): trimmed of Unicode White_Space (polars' ``strip_chars``), NFC-normalised by ICU4J, which Spark bundles
  (``com.ibm.icu.text.Normalizer.compose(s, false)``), empty = missing; an integer literal
  (:data:`INT_LITERAL`) that fits 64 bits is that integer; text polars parses as a number (:data:`NUMBER`,
  ``inf``/``infinity``/``nan`` in any case, with a sign) is that number (Spark's cast of the same text: the
  regular expressions gate it, so both accept exactly the same strings); anything else is text;
* a void column: missing; any other type (timestamps, binary, arrays, maps, structs, intervals, times) is
  refused (:class:`NotIdentifiable`): its local text form is not Spark's, and a wrong identity would be worse
  than none (the engine then says the dataset cannot be identified on Spark).

**Keys.** The cell keys (:class:`~dpdesk.core.loading.typed_identity.Keys`: the integer, number, missing and
finish keys, the text keys, each column's two keys) and the projections' finish and value keys are literals in
the Spark plan, visible in the Spark UI and its event logs: they are DERIVED from the secret by BLAKE2b (one-way),
never the secret itself, which never leaves the desktop; the content key, the projection keys and the marginals
(BLAKE2b keyed by the secret) are computed on the desktop. Someone who reads the plan can compute the cell hashes
of rows they guess (as the desktop can), not the content key, and not the keys of any other home or dataset
purpose. The row and projection hashes come back to the driver (the desktop), like the aggregation's counts.

**Known differences** (the local identity is right; these cases are named here and in the tests):

* a CSV read by Spark turns a CR LF inside a quoted cell into LF (its parser normalises line ends within
  quotes; the local reader keeps the cell as written), so a Windows file with multi-line cells gets another
  key;
* a CSV of a single column keeps its blank lines locally (missing cells), while Spark skips them;
* a CSV header that repeats a name or leaves one empty is renamed by Spark (``b1``,
  ``_c2``): such names are refused (:func:`check_header`);
* Spark reads a CSV in the encoding it is given (UTF-8 unless told), the local reader detects it; a record with
  more fields than the header is cut by Spark (PERMISSIVE), refused locally;
* a date beyond year 9999 prints differently (``+10000-01-01`` in Spark).

**Cost.** The keyed hashes are large expressions: building and planning them takes seconds per column on the
driver (about 10 s for a dozen columns, measured on local[2]); the hashed rows are cached (memory and disk) for
the five jobs that read them: the sums, the sketch, the projections' sketches, and the marginals' two counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.loading.identity import (
    COLUMN_SKETCH_K,
    MARGINAL_CATEGORIES,
    SKETCH_K,
    ContentIdentity,
    cell_keys,
)
from dpdesk.core.loading.typed_identity import TypedIdentity
from dpdesk.core.release.engines.spark.hashing import bind, double_bits, fmix, u64, word_hash, xor

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: Unicode White_Space, which polars' ``strip_chars`` trims (Rust's ``char::is_whitespace``), as a Java class
WHITE_SPACE = (
    r"[\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]"
)
#: An integer literal (scheme 2's ``[+-]digits`` with an optional ``.000``; Java's ``\z``: the very end)
INT_LITERAL = r"^[+-]?[0-9]+(\.0*)?\z"
#: The text polars' cast to Float64 reads as a finite number or an overflow to infinity (checked against polars
#: on a corpus by ``tests/spark/test_spark_identity.py``); Spark's cast reads each of them as the same binary64
NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\z"
#: polars' infinities and NaNs (any case, with a sign); Spark's cast reads only some of them: mapped here
INFINITY = r"(?i)^[+-]?inf(inity)?\z"
NAN = r"(?i)^[+-]?nan\z"

_MIN = -(1 << 63)
_TWO63 = 2.0**63
_U64_OFFSET = 1 << 64
#: scheme 2's projection finaliser's multiplier (:func:`dpdesk.core.loading.identity._mix_into`)
_MIX = 0xBF58476D1CE4E5B9
_INTEGER_TYPES = ("bigint", "int", "smallint", "tinyint")
_FLOAT_TYPES = ("double", "float")
_TEXT_TYPES = ("string", "boolean", "date")


class NotIdentifiable(DpdeskError):
    """A column whose canonical values Spark cannot compute exactly (its type, or its name as Spark read it)."""

    def __init__(self, column: str, kind: str, reason: str = "") -> None:
        from dpdesk.i18n import _

        self.column = column
        self.kind = kind
        message = reason or _(
            "column {column!r} has the type {kind}, whose values dpdesk cannot name exactly on Spark"
        ).format(column=column, kind=kind)
        super().__init__(message)


def check_header(names: list[str]) -> None:
    """Refuse names Spark's CSV reader made up: ``_c<i>`` for an empty name at position i, and ``<name><i>`` for
    a name repeated at positions i, j... (the file's own names are lost). A file whose own
    names look so (``a1``, ``A2``) is refused too: rare, and a refusal, never a wrong identity."""
    from dpdesk.i18n import _

    stems: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        if name == f"_c{i}":
            raise NotIdentifiable(
                name,
                "",
                _("column {column!r}: an empty header name, which Spark renames").format(column=name),
            )
        suffix = str(i)
        if name.endswith(suffix) and len(name) > len(suffix):
            stems.setdefault(name[: -len(suffix)].lower(), []).append(name)
    for renamed in stems.values():
        if len(renamed) > 1:
            raise NotIdentifiable(
                renamed[0],
                "",
                _("column {column!r}: a header name that repeats another, which Spark renames").format(
                    column=renamed[0]
                ),
            )


def _mix(x: Column) -> Column:
    """Scheme 2's projection finaliser (one xorshift-multiply-xorshift round) of a bigint."""
    from pyspark.sql import functions as F

    def body(v: Column) -> Column:
        a = v.bitwiseXOR(F.shiftrightunsigned(v, 31)) * u64(_MIX)
        return bind(a, lambda b: b.bitwiseXOR(F.shiftrightunsigned(b, 29)))

    return bind(x, body)


def _unsigned_order(x: Column) -> Column:
    """A bigint key whose signed order is the unsigned order of ``x``."""
    return xor(x, 1 << 63)


def _unsigned(x: Column) -> Column:
    """A bigint's uint64 value as decimal(28, 0) (summed in decimal(38, 0): exact for 5e18 rows)."""
    from pyspark.sql import functions as F

    d = x.cast("decimal(20,0)")
    return F.when(x < 0, d + F.lit(str(_U64_OFFSET)).cast("decimal(20,0)")).otherwise(d).cast("decimal(28,0)")


def canonical_text(s: Column) -> Column:
    """Text trimmed of White_Space, NFC-normalised (ICU4J; ASCII text is left as it is), empty as null."""
    from pyspark.sql import functions as F

    t = F.regexp_replace(s, f"^{WHITE_SPACE}+|{WHITE_SPACE}+\\z", "")

    def nfc(v: Column) -> Column:
        composed = F.call_function(
            "java_method", F.lit("com.ibm.icu.text.Normalizer"), F.lit("compose"), v, F.lit(False)
        )
        return F.when(F.octet_length(v) == F.char_length(v), v).otherwise(composed)

    return bind(t, lambda v: F.when(F.octet_length(v) > 0, nfc(v)))


def text_number(t: Column) -> Column:
    """The binary64 number polars reads in canonical text (null when it reads none)."""
    from pyspark.sql import functions as F

    return (
        F.when(t.rlike(NUMBER), t.cast("double"))
        .when(
            t.rlike(INFINITY), F.when(t.startswith("-"), F.lit(float("-inf"))).otherwise(F.lit(float("inf")))
        )
        .when(t.rlike(NAN), F.lit(float("nan")))
    )


def text_integer(t: Column) -> Column:
    """The integer of an integer literal within 64 bits (null for any other text)."""
    from pyspark.sql import functions as F

    digits = F.regexp_replace(F.regexp_replace(t, r"\.0*\z", ""), r"^\+", "")
    return F.when(t.rlike(INT_LITERAL), digits.cast("bigint"))


def _number_lane(x: Column, k_int: int, k_num: int) -> Column:
    """A non-null double's cell value on one lane: an integral value below 2^63 as that integer, else its bits."""
    from pyspark.sql import functions as F

    integral = ~F.isnan(x) & (F.abs(x) < F.lit(_TWO63)) & (x.cast("bigint").cast("double") == x)
    return F.when(integral, xor(x.cast("bigint"), k_int)).otherwise(xor(double_bits(x), k_num))


def prepared(column: Column, kind: str, name: str) -> Column:
    """A column as its cells are hashed (by its Spark type's simple string): integers as bigint, numbers as
    double, text and the types printed as text canonicalised (:func:`canonical_text`); a first projection of its
    own, so that the cell expressions below read it by name."""
    from pyspark.sql import functions as F

    if kind in _INTEGER_TYPES:
        return column.cast("bigint")
    if kind in _FLOAT_TYPES:
        return column.cast("double")
    if kind == "void":
        return F.lit(None).cast("bigint")
    if kind in _TEXT_TYPES or kind.startswith("decimal("):
        return canonical_text(column.cast("string"))
    raise NotIdentifiable(name, kind)


def cell_lanes(v: Column, kind: str, ident: TypedIdentity) -> tuple[Column, Column]:
    """A :func:`prepared` column's two lanes of cell values (scheme 2's pre-hash ``u``)."""
    from pyspark.sql import functions as F

    lanes = [(int(a), int(b), int(c)) for a, b, c, _f in ident.keys.lanes]
    if kind in _INTEGER_TYPES or kind == "void":
        out = [F.when(v.isNull(), u64(m)).otherwise(xor(v, i)) for i, _n, m in lanes]
    elif kind in _FLOAT_TYPES:
        out = [F.when(v.isNull(), u64(m)).otherwise(_number_lane(v, i, n)) for i, n, m in lanes]
    else:
        iv = text_integer(v)
        words = word_hash(v, [int(k) for k in ident.keys.text])

        def number(i: int, n: int, w: Column) -> Callable[[Column], Column]:
            return lambda x: F.when(x.isNotNull(), _number_lane(x, i, n)).otherwise(w)

        out = [
            F.when(v.isNull(), u64(m))
            .when(iv.isNotNull(), xor(iv, i))
            .otherwise(bind(text_number(v), number(i, n, w)))
            for (i, n, m), w in zip(lanes, words, strict=True)
        ]
    return out[0], out[1]


def _hashed(frame: DataFrame, ident: TypedIdentity) -> tuple[DataFrame, list[str], bool]:
    """Per row: its two lanes ``r0``, ``r1``; with the column sketches, its projections ``p0`` (whole), ``p1``...
    (each column left out, in canonical order) and each cell's value hash ``w0``... Names of the value columns."""
    from pyspark.sql import functions as F

    fields = frame.schema.fields
    kinds = [f.dataType.simpleString() for f in fields]
    n = len(fields)
    ready = frame.select(
        *[
            prepared(F.col("`" + fields[i].name.replace("`", "``") + "`"), kinds[i], fields[i].name).alias(
                f"v{j}"
            )
            for j, i in enumerate(ident.order)
        ]
    )
    ordered = [cell_lanes(F.col(f"v{j}"), kinds[i], ident) for j, i in enumerate(ident.order)]
    staged = ready.select(
        *[u.alias(f"u{lane}_{j}") for j, pair in enumerate(ordered) for lane, u in enumerate(pair)]
    )
    mixed = staged.select(
        *[
            fmix(xor(F.col(f"u{lane}_{j}"), int(ident.col_keys[j][lane]))).alias(f"m{lane}_{j}")
            for j in range(n)
            for lane in (0, 1)
        ],
        *[F.col(f"u0_{j}") for j in range(n)],
    )
    zero = F.lit(0).cast("bigint")
    totals = mixed.select(
        *[F.col(f"m0_{j}") for j in range(n)],
        *[F.col(f"u0_{j}") for j in range(n)],
        *[sum((F.col(f"m{lane}_{j}") for j in range(n)), zero).alias(f"t{lane}") for lane in (0, 1)],
    )
    outs = [fmix(xor(F.col(f"t{lane}"), int(ident.keys.lanes[lane][3]))).alias(f"r{lane}") for lane in (0, 1)]
    with_columns = ident.projections is not None
    if with_columns:
        keys = cell_keys(ident.keys.secret)
        finish, value = int(keys[3]), int(keys[4])
        t0 = F.col("t0")
        outs.append(_mix(xor(t0, finish)).alias("p0"))
        outs += [_mix(xor(t0 - F.col(f"m0_{j}"), finish)).alias(f"p{j + 1}") for j in range(n)]
        outs += [fmix(xor(F.col(f"u0_{j}"), value)).alias(f"w{j}") for j in range(n)]
    return totals.select(*outs), [f"w{j}" for j in range(n)], with_columns


def _bottom(values: DataFrame, k: int) -> dict[int, np.ndarray]:
    """Per group ``g`` of (g, v) rows, the ``k`` smallest distinct ``v`` as uint64 (ascending)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy("g").orderBy(_unsigned_order(F.col("v")))
    low = values.withColumn("rank", F.dense_rank().over(order)).where(F.col("rank") <= k)
    got: dict[int, list[int]] = {}
    for row in low.select("g", "v").distinct().collect():
        got.setdefault(int(row["g"]), []).append(int(row["v"]) % _U64_OFFSET)
    return {g: np.asarray(sorted(v), dtype=np.uint64) for g, v in got.items()}


def spark_identity(
    frame: DataFrame, secret: bytes, *, sha256: str = "", k: int = SKETCH_K, csv: bool = False
) -> ContentIdentity:
    """The scheme-2 content identity of every row and column of ``frame`` (``secret``: the home's or its team's;
    ``sha256``: the file's bytes' hash when the caller has it; ``csv``: the frame is a CSV read as text,
    whose made-up names are refused). Raises :class:`NotIdentifiable` for a column Spark cannot canonicalise."""
    from pyspark import StorageLevel

    names = list(frame.columns)
    if csv:
        check_header(names)
    for f in frame.schema.fields:  # refused before any key enters a plan
        kind = f.dataType.simpleString()
        known = kind in (*_INTEGER_TYPES, *_FLOAT_TYPES, *_TEXT_TYPES, "void") or kind.startswith("decimal(")
        if not known:
            raise NotIdentifiable(f.name, kind)
    ident = TypedIdentity(secret, names, k)
    try:
        hashed, values, with_columns = _hashed(frame, ident)
        hashed = hashed.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            return _gather(hashed, ident, values, with_columns, k, sha256)
        finally:
            hashed.unpersist()
    finally:
        ident.close()


def _gather(
    hashed: DataFrame, ident: TypedIdentity, values: list[str], with_columns: bool, k: int, sha256: str
) -> ContentIdentity:
    from pyspark.sql import functions as F

    n = len(values)
    sums: list[Any] = [
        F.count(F.lit(1)).alias("rows"),
        F.sum(_unsigned(F.col("r0"))).alias("s0"),
        F.sum(_unsigned(F.col("r1"))).alias("s1"),
    ]
    if with_columns:
        sums += [F.sum(F.col(f"p{j}")).alias(f"p{j}") for j in range(n + 1)]
        sums += [F.sum(F.col(w)).alias(w) for w in values]
    agg = hashed.agg(*sums).collect()[0]
    rows = int(agg["rows"])
    if rows and (agg["s0"] is None or agg["s1"] is None):
        raise ArithmeticError("Spark's sum of the row hashes overflowed")
    total = (int(agg["s0"] or 0) + (int(agg["s1"] or 0) << 64)) % 2**128
    first = hashed.select(F.lit(0).alias("g"), F.col("r0").alias("v"))
    smallest = _bottom(first, k).get(0, np.zeros(0, dtype=np.uint64))
    ident.add_parts(rows, total, smallest)
    if with_columns:
        projections = hashed.select(
            F.posexplode(F.array(*[F.col(f"p{j}") for j in range(n + 1)])).alias("g", "v")
        )
        low = _bottom(projections, COLUMN_SKETCH_K)
        cells = hashed.select(F.posexplode(F.array(*[F.col(w) for w in values])).alias("g", "v"))
        counted = cells.groupBy("g", "v").count()
        distinct = {int(r["g"]): int(r["count"]) for r in counted.groupBy("g").count().collect()}
        few = [g for g in range(n) if distinct.get(g, 0) <= MARGINAL_CATEGORIES]
        counts: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
        for g in few:
            counts[g] = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))
        if few and rows:
            got: dict[int, list[tuple[int, int]]] = {}
            for r in counted.where(F.col("g").isin(few)).collect():
                got.setdefault(int(r["g"]), []).append((int(r["v"]) % _U64_OFFSET, int(r["count"])))
            for g, pairs in got.items():
                pairs.sort()
                counts[g] = (
                    np.asarray([v for v, _c in pairs], dtype=np.uint64),
                    np.asarray([c for _v, c in pairs], dtype=np.int64),
                )
        assert ident.projections is not None
        ident.projections.add_parts(
            rows,
            [int(agg[f"p{j}"] or 0) % _U64_OFFSET for j in range(n + 1)],
            [low.get(j, np.zeros(0, dtype=np.uint64)) for j in range(n + 1)],
            [int(agg[w] or 0) % _U64_OFFSET for w in values],
            counts,
        )
    identity = ident.result(sha256)
    if identity is None:  # (a Parquet or text frame is never inexact: no float column is parsed from text)
        raise ArithmeticError("the identity's parts could not be finished")
    return identity
