"""The keyed hashes of dpdesk's engines, as Spark SQL expressions: MurmurHash3's 64-bit finaliser (``fmix``), the
keyed word hash of UTF-8 text (:func:`dpdesk.core.loading.wordhash.hash_padded`) and a binary64 number's bits.

64-bit words are Spark ``bigint`` values holding the two's complement of the uint64 the numpy code computes;
products and sums wrap modulo 2^64, which Spark's arithmetic does with ANSI mode off (the engine's session sets
``spark.sql.ansi.enabled`` to false and checks :func:`canary` against numpy before it reads any table). An
expression that uses its argument more than once binds it to a lambda variable first (:func:`bind`), so that
nested hashes stay linear in size. Keys are literals in the query plan (seen in the Spark UI and its event logs):
only keys derived for one purpose are ever passed here, never a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column

FMIX1 = 0xFF51AFD7ED558CCD
FMIX2 = 0xC4CEB9FE1A85EC53
_MASK = (1 << 64) - 1


def signed(v: int) -> int:
    """A uint64 (or any integer, taken modulo 2^64) as the signed 64-bit value Spark's bigint holds."""
    v &= _MASK
    return v - (1 << 64) if v >= 1 << 63 else v


def u64(v: int) -> Column:
    """A uint64 literal as a Spark bigint."""
    from pyspark.sql import functions as F

    return F.lit(signed(int(v))).cast("bigint")


def bind(x: Column, body: Callable[[Column], Column]) -> Column:
    """``body(x)`` with ``x`` evaluated once (bound to a lambda variable: ``transform(array(x), v -> body(v))[0]``)."""
    from pyspark.sql import functions as F

    return F.transform(F.array(x), body)[0]


def _fmix_body(x: Column) -> Column:
    from pyspark.sql import functions as F

    def step(v: Column, mult: int | None) -> Column:
        v = v.bitwiseXOR(F.shiftrightunsigned(v, 33))
        return v if mult is None else v * u64(mult)

    return bind(bind(step(x, FMIX1), lambda a: step(a, FMIX2)), lambda b: step(b, None))


def fmix(x: Column) -> Column:
    """MurmurHash3's 64-bit finaliser of a bigint (:func:`dpdesk.core.loading.wordhash.fmix`)."""
    return bind(x, _fmix_body)


def xor(a: Column, b: Column | int) -> Column:
    """``a xor b`` on bigints (b a uint64 when an int)."""
    return a.bitwiseXOR(u64(b) if isinstance(b, int) else b)


def double_bits(x: Column) -> Column:
    """The IEEE 754 binary64 bit pattern of a double as a bigint (Java's ``Double.doubleToLongBits``: every NaN is
    ``0x7ff8000000000000``); null for null."""
    from pyspark.sql import functions as F

    return F.call_function("java_method", F.lit("java.lang.Double"), F.lit("doubleToLongBits"), x).cast(
        "bigint"
    )


def _le32(hexs: Column, start: int | Column) -> Column:
    """The little-endian 32-bit word of the 8 hex digits at ``start`` (1-based) of ``hexs``, as a bigint."""
    from pyspark.sql import functions as F

    parts = [F.substring(hexs, start + 2 * k, 2) for k in (3, 2, 1, 0)] if isinstance(start, int) else None
    if parts is None:
        assert not isinstance(start, int)
        parts = [F.substr(hexs, start + 2 * k, F.lit(2)) for k in (3, 2, 1, 0)]
    return F.conv(F.concat(*parts), 16, 10).cast("bigint")


def word_hash(text: Column, keys: Sequence[int], lanes: int = 2) -> list[Column]:
    """The keyed word hash of a string's UTF-8 bytes, per lane (:func:`dpdesk.core.loading.wordhash.hash_padded`
    with ``keys``, the eight uint64 keys: lane 0 takes keys 0, 2, 1 as (a, m, b), lane 1 keys 4, 6, 5).

    The bytes are cut into little-endian 64-bit words, zero-padded to ``len // 8 + 1`` words; per lane
    h = fmix(sum_j fmix(w_j xor (j m + a)) xor fmix(len xor b)). Null for null."""
    from pyspark.sql import functions as F

    data = F.encode(text, "UTF-8")
    n = F.octet_length(data).cast("bigint")
    # the bytes' hex digits, zero-padded to n // 8 + 1 words, bound once per lane (each word reads them twice)
    padded = F.rpad(F.hex(data), ((F.shiftright(n, 3) + 1) * 16).cast("int"), "0")
    out = []

    def word(hexs: Column, j: Column) -> Column:
        start = (j * 16 + 1).cast("int")
        return F.shiftleft(_le32(hexs, start + 8), 32).bitwiseOR(_le32(hexs, start))

    def lane(a: int, m: int, b: int) -> Callable[[Column], Column]:
        def body(hexs: Column) -> Column:
            count = F.shiftright(F.length(hexs).cast("bigint"), 4)
            total = F.aggregate(
                F.sequence(F.lit(0).cast("bigint"), count - 1),
                F.lit(0).cast("bigint"),
                lambda acc, j: acc + fmix(word(hexs, j).bitwiseXOR(j * u64(m) + u64(a))),
            )
            return fmix(total.bitwiseXOR(fmix(xor(n, b))))

        return body

    for a, m, b in ((keys[0], keys[2], keys[1]), (keys[4], keys[6], keys[5]))[:lanes]:
        out.append(F.when(text.isNull(), None).otherwise(bind(padded, lane(a, m, b))))
    return out


def canary(spark: Any) -> None:
    """Check that the session's arithmetic is the numpy code's (wrapping bigints, the same fmix and word hash):
    raises RuntimeError naming what differs, before any table is read."""
    import numpy as np
    from pyspark.sql import functions as F

    from dpdesk.core.loading.wordhash import fmix as np_fmix
    from dpdesk.core.loading.wordhash import hash_padded

    xs = [0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x0123456789ABCDEF]
    texts = ["", "a", "12345678", "你好, dpdesk", "x" * 17]
    keys = [0x9E3779B97F4A7C15 * (i + 1) & _MASK | (1 if i in (2, 6) else 0) for i in range(8)]
    df = spark.createDataFrame(
        [(signed(x), t) for x, t in zip(xs, texts + [None], strict=True)], "x bigint, t string"
    )
    got = df.select(
        fmix(F.col("x")).alias("f"), *[c.alias(f"w{i}") for i, c in enumerate(word_hash(F.col("t"), keys))]
    ).collect()
    want_f = np_fmix(np.asarray(xs, dtype=np.uint64))
    for row, x, f in zip(got, xs, want_f, strict=True):
        if row["f"] & _MASK != int(f):
            raise RuntimeError(f"this Spark session's 64-bit arithmetic differs from dpdesk's (fmix of {x})")
    for row, t in zip(got, texts, strict=False):
        data = t.encode("utf-8")
        padded = data + bytes(8 - len(data) % 8)
        lanes = hash_padded(padded, np.asarray([len(data)]), np.asarray(keys, dtype=np.uint64))
        if [row["w0"] & _MASK, row["w1"] & _MASK] != [int(lanes[0][0]), int(lanes[1][0])]:
            raise RuntimeError(f"this Spark session's text hash differs from dpdesk's (of {t!r})")
