"""Contribution bounding by person id, computed by Spark SQL: the rows :func:`dpdesk.core.dp.bounding.keep_smallest`
keeps, bit for bit, with Spark's built-in functions only (no Python on the executors).

**The loaded frame** (what :mod:`.columns` makes of a table): for the plan's declared column number i (in the
order of ``plan.columns``), a column ``c{i}``: a category's code into ``spec.categories`` (int, -1 for missing or
undeclared), an int column's value clamped to its bounds (bigint, the lower bound where missing) with ``m{i}``
(boolean, true where missing), a float column's value (double, NaN where missing, never null); and the person id
as ``id`` (string, the raw text as read: null or blank is no id).

**The id's words** (:func:`id_lanes`) are :func:`dpdesk.core.loading.columns.id_hashes`': the keyed word hash
(:func:`.hashing.word_hash`, two lanes) of the id's UTF-8 bytes, trimmed of Unicode White_Space at both ends (what
polars' ``str.strip_chars()`` strips: Rust's ``char::is_whitespace``; here Java's ``\\s`` with
``UNICODE_CHARACTER_CLASS``, the ``(?U)`` flag), under the eight keys
:func:`~dpdesk.core.loading.columns.id_word_keys` derives from the release's id key. A null or blank id hashes as
the empty text and is flagged empty.

**The hash of a row** (:func:`row_hash`) is :func:`dpdesk.core.dp.bounding.row_hashes`' (the definition is that
module's docstring): h = k0, the id's two words folded in, then each declared column in the order of its name's
UTF-8 bytes, h = fmix(h ^ fmix(w ^ col(c))), and fmix(h ^ k3). A value's word: a category's tagged word (a
literal array indexed by the code; a code outside the list is missing), an int's value as a two's complement
bigint, a float's binary64 bits with -0 as +0 (:func:`.hashing.double_bits`); a missing value's word is k2.

**The rows kept** (:func:`keep_smallest`): of each id (its two words), the k rows with the smallest hash compared
as an *unsigned* 64-bit integer (Spark's bigint is signed: the order is that of ``h ^ 0x8000000000000000`` as
signed), by ``row_number`` over a window partitioned by the id's words; rows without an id are dropped. Spark has
no row position, so a tie is not broken by it as the local engines break it: two rows of one person with equal
hashes have equal declared values (but with probability about 2^-64 a pair), the only values a statistic reads,
so whichever of them is kept, every aggregate is the same. The sensitivity is the local engines' (see
:mod:`dpdesk.core.dp.bounding`): which rows of a person are kept depends on that person's rows alone.

**Keys in the plan.** Spark shows a query's literals in its UI and event logs. The literals here are keys
derived for one purpose only: the bounding key's words k0..k3, its column and category tags (BLAKE2b under the
bounding key), and the id hash's eight word keys (BLAKE2b of the id key); never the home's secret, the id key or
the bounding key's bytes themselves. Whoever reads the plan can compute rows' bounding hashes and ids' hashes, and
so which rows are kept and which ids would collide: the cluster's operators are trusted with that as they are
with the table they hold; the home's secret, and every other key derived from it, stays on the desktop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpdesk.core.dp.bounding import CATEGORY_PERSON, COLUMN_PERSON, BoundKey
from dpdesk.core.loading.columns import id_word_keys
from dpdesk.core.release.engines.spark.hashing import double_bits, fmix, u64, word_hash, xor

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from dpdesk.core.model.spec import ColumnSpec

#: The loaded frame's person id column.
ID_COLUMN = "id"
#: Unicode White_Space at either end of a text (Java's regex: ``(?U)`` makes ``\\s`` the White_Space property).
TRIM_PATTERN = r"(?U)\A\s+|\s+\z"
#: The sign bit: ``h ^ SIGN`` ordered as a signed bigint is ``h`` ordered as an unsigned one.
SIGN = 0x8000000000000000
#: Helper columns keep_smallest adds and drops again (names no loaded frame uses).
_TEXT, _ID0, _ID1, _HASH, _RANK = "_dpdesk_id", "_dpdesk_id0", "_dpdesk_id1", "_dpdesk_h", "_dpdesk_rank"


def trimmed(text: Column) -> Column:
    """The text without Unicode White_Space at either end (polars' ``str.strip_chars()``); null stays null."""
    from pyspark.sql import functions as sf

    return sf.regexp_replace(text.cast("string"), TRIM_PATTERN, "")


def id_lanes(id: Column, key: bytes | None) -> tuple[Column, Column, Column]:
    """The id's two 64-bit words (bigints holding the uint64s) and whether it is empty: per row, what
    :func:`~dpdesk.core.loading.columns.id_hashes` gives under ``key`` (a release's id key; None: this process's
    own, as there). A null or blank id has the empty text's words and is empty."""
    from pyspark.sql import functions as sf

    return text_lanes(sf.coalesce(trimmed(id), sf.lit("")), key)


def text_lanes(text: Column, key: bytes | None) -> tuple[Column, Column, Column]:
    """:func:`id_lanes` of an id already trimmed (and never null): :func:`keep_smallest` trims each id once, into
    a column of its own, which the word hash then reads many times."""
    from pyspark.sql import functions as sf

    lo, hi = word_hash(text, [int(k) for k in id_word_keys(key)])
    return lo, hi, sf.length(text) == 0


def value_word(spec: ColumnSpec, i: int, key: BoundKey) -> Column:
    """The word of declared column number ``i``'s value in the loaded frame (``c{i}``, ``m{i}``), k2 where it is
    missing (:func:`dpdesk.core.dp.bounding.value_words`)."""
    from pyspark.sql import functions as sf

    missing = u64(int(key.word(2)))
    value = sf.col(f"c{i}")
    if spec.type == "category":
        categories = spec.categories or ()
        if not categories:
            return missing
        words = sf.array(*[u64(int(key.tagged(c.encode("utf-8"), CATEGORY_PERSON))) for c in categories])
        code = value.cast("int")
        inside = (code >= 0) & (code < len(categories))  # null: not inside, so missing
        return sf.when(inside, sf.element_at(words, code + 1)).otherwise(missing)
    if spec.type == "float":
        x = value.cast("double")
        positive_zero = sf.when(x == 0.0, sf.lit(0.0)).otherwise(x)  # -0.0 == 0.0 in SQL: both become +0
        return sf.when(x.isNull() | sf.isnan(x), missing).otherwise(double_bits(positive_zero))
    return sf.when(sf.col(f"m{i}"), missing).otherwise(value.cast("bigint"))


def row_hash(specs: dict[str, ColumnSpec], key: BoundKey, id_words: Sequence[Column]) -> Column:
    """Every row's bounding hash (a bigint holding the uint64 :func:`dpdesk.core.dp.bounding.row_hashes` gives)
    over the loaded frame of the declared columns ``specs`` (in the plan's order: ``c{i}`` is the i-th), with the
    id's words ``id_words`` (:func:`id_lanes`)."""
    index = {name: i for i, name in enumerate(specs)}
    h = u64(int(key.word(0)))
    for j, u in enumerate(id_words):
        h = fmix(xor(h, fmix(xor(u, int(key.word(1)) ^ j))))
    for name in sorted(specs, key=lambda c: c.encode("utf-8")):
        tag = int(key.tagged(name.encode("utf-8"), COLUMN_PERSON))
        h = fmix(xor(h, fmix(xor(value_word(specs[name], index[name], key), tag))))
    return fmix(xor(h, int(key.word(3))))


def keep_smallest(
    frame: DataFrame, specs: dict[str, ColumnSpec], k: int, key: BoundKey, id_key: bytes | None
) -> DataFrame:
    """The loaded frame restricted to the rows :func:`dpdesk.core.dp.bounding.keep_smallest` keeps: of each id
    (hashed under ``id_key``), the ``k`` rows with the smallest bounding hashes under ``key``, compared unsigned;
    no row without an id. Among rows of one id with equal hashes (equal declared values), any may be kept (see
    the module). The frame's columns, unchanged."""
    from pyspark.sql import Window
    from pyspark.sql import functions as sf

    if ID_COLUMN not in frame.columns:
        raise ValueError("bounding rows per person needs the frame's id column")
    text = frame.withColumn(_TEXT, sf.coalesce(trimmed(sf.col(ID_COLUMN)), sf.lit("")))
    lo, hi, empty = text_lanes(sf.col(_TEXT), id_key)
    with_ids = text.where(~empty).withColumns({_ID0: lo, _ID1: hi})
    hashed = with_ids.withColumn(_HASH, row_hash(specs, key, [sf.col(_ID0), sf.col(_ID1)]))
    order = Window.partitionBy(_ID0, _ID1).orderBy(xor(sf.col(_HASH), SIGN))
    ranked = hashed.withColumn(_RANK, sf.row_number().over(order))
    return ranked.where(sf.col(_RANK) <= k).drop(_TEXT, _ID0, _ID1, _HASH, _RANK)
