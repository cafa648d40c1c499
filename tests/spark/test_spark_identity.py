"""The content identity (scheme 2) computed by Spark SQL (dpdesk/core/release/engines/spark/identity.py) is the
local loaders' (dpdesk/core/loading/typed_identity.py) for the same file: key, sketch and column sketches, on the
same table written as CSV and as Parquet; the text a cell holds is canonicalised as the local code does it (odd
numbers, white space, NFC); the secret never enters Spark's plan; types Spark cannot identify exactly are refused;
and the known differences are pinned as such (strict xfails)."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.loading.typed_identity import Keys, TypedIdentity, content_identity2, text_cells

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SECRET = b"\x01secret-of-this-test-home\xfe\x7f-0123456789abcdef"

#: the brief's odd strings and their neighbours: what polars' cast reads as a number, Spark must read the same
ODD = [
    "1e3",
    " 7 ",
    "007",
    "0x10",
    "1_0",
    "inf",
    "-Infinity",
    "nan",
    "1.5d",
    "\u0661\u0662",
    "1,5",
    "+.5",
    "5.",
    "9007199254740993",
    "1e400",
    "Inf",
    "INF",
    "+inf",
    "infinity",
    "+Infinity",
    "NaN",
    "-nan",
    "+nan",
    "1e",
    "e3",
    ".",
    "-.",
    "+",
    "-",
    "1.5f",
    "0x1p3",
    "1E+3",
    "1e-3",
    "1.5e+",
    "- 1",
    "1 000",
    "1e-400",
    "00.5",
    "-0",
    "+0",
    "-0.0",
    "1.",
    ".5e1",
    "5.e1",
    "1..2",
    "1e3.5",
    "1d",
    "1L",
    "infinit",
    "nanx",
    "snan",
    "inFinity",
    "\uff11\uff12",
    "TRUE",
    "0b1",
    "1e0400",
    "+-1",
    "--1",
    "Infinityx",
    "12.0",
    "12.000",
    "12.010",
    "-12.",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "9223372036854775807.0",
    "1e19",
    "-1e19",
    "9.223372036854775807e18",
    "0.1",
    "0.10",
    "1e-1",
    "123456789012345678901234567890.5",
    "4.9e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "0.30000000000000004",
    "\u00a07\u3000",
    "e\u0301",
    "\u00e9",
    "A\u030a",
    "\ufb01",
    "Stra\u00dfe",
    "\u1100\u1161\u11a8",
    "",
    "   ",
    "\t\n",
]
#: Unicode White_Space (trimmed) and characters that are not (kept), around text and around a number
SPACES = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_SPACES = "\u200b\ufeff\u180e\x1c\x1f\u2060"


def fuzz(n: int, seed: int) -> list[str]:
    """Random short strings over the characters numbers are made of (and some that are not)."""
    rng = random.Random(seed)
    alphabet = "0123456789.eE+-infatyINFATYxd _,"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(n)]


def spark_cells(spark: Any, texts: list[str], ident: TypedIdentity) -> list[tuple[int, int]]:
    """Spark's two lanes of cell values of text cells (in the order given)."""
    from pyspark.sql import functions as F

    from dpdesk.core.release.engines.spark.identity import cell_lanes, prepared

    df = spark.createDataFrame(list(enumerate(texts)), "i int, s string")
    ready = df.select("i", prepared(F.col("s"), "string", "s").alias("v"))
    u0, u1 = cell_lanes(F.col("v"), "string", ident)
    rows = ready.select("i", u0.alias("u0"), u1.alias("u1")).orderBy("i").collect()
    return [(r["u0"] % 2**64, r["u1"] % 2**64) for r in rows]


def test_text_cells_are_the_local_ones(spark: Any) -> None:
    import polars as pl

    texts = ODD + fuzz(400, 7)
    texts += [f"{a}x{b}" for a in SPACES + NOT_SPACES for b in (a, "")]
    texts += [f"{a}7{a}" for a in SPACES + NOT_SPACES]
    ident = TypedIdentity(SECRET, ["s"])
    try:
        lo, hi = text_cells(pl.Series(texts, dtype=pl.String), Keys(SECRET))
        got = spark_cells(spark, texts, ident)
    finally:
        ident.close()
    wrong = [t for t, (a, b), g in zip(texts, zip(lo, hi, strict=True), got, strict=True) if g != (a, b)]
    assert wrong == [], f"Spark canonicalises these cells otherwise than the local code: {wrong!r}"


def test_nfc_by_icu(spark: Any) -> None:
    from pyspark.sql import functions as F

    from dpdesk.core.release.engines.spark.identity import canonical_text

    df = spark.createDataFrame(
        [("e\u0301",), (" A\u030a ",), ("\u1100\u1161",), ("x",), (" ",), (None,)], "s string"
    )
    got = [r["t"] for r in df.select(canonical_text(F.col("s")).alias("t")).collect()]
    assert got == ["\u00e9", "\u00c5", "\uac00", "x", None, None]


def table(n: int, seed: int) -> Any:
    """A generated table of every kind of cell the identity canonicalises (duplicate rows included)."""
    import polars as pl

    rng = np.random.default_rng(seed)
    names = [
        "Zo\u00eb",
        "Zoe\u0308",
        "  padded  ",
        "\u5f20\u4f1f",
        "plain",
        "",
        "A\u030angstr\u00f6m",
        "x,y",
        'q"uote',
    ]
    codes = ["007", "7", "12.0", "12", "1e1", "0.10", "inf", "-Infinity", "nan", "1.5d", " 3 ", "text"]
    big = [9007199254740993, -(2**63), 2**63 - 1, 2**53, 0, -1]
    floats = [0.1, -0.0, float("nan"), float("inf"), -float("inf"), 1e300, 2.0**60, 3.0, -7.5, None]
    rows = {
        "id": rng.integers(0, 5000, n),
        "few": rng.integers(0, 4, n),
        " Name ": [names[i] if i < len(names) else None for i in rng.integers(0, len(names) + 1, n)],
        "code": [codes[i] for i in rng.integers(0, len(codes), n)],
        "big": [big[i] for i in rng.integers(0, len(big), n)],
        "x\u0301": [floats[i] for i in rng.integers(0, len(floats), n)],
    }
    frame = pl.DataFrame(rows, schema_overrides={"big": pl.Int64, "x\u0301": pl.Float64})
    return pl.concat([frame, frame.head(25)])  # duplicate rows count


def typed(frame: Any) -> Any:
    """The table with Parquet's typed columns added (boolean, date, decimal, small and unsigned integers, f32)."""
    import polars as pl

    n = frame.height
    return frame.with_columns(
        pl.Series("flag", [None if i % 11 == 0 else i % 3 == 0 for i in range(n)]),
        pl.Series("day", [dt.date(2024, 1, 1) + dt.timedelta(days=i % 400) for i in range(n)]),
        pl.Series("amount", [Decimal(i % 7) / 4 for i in range(n)], dtype=pl.Decimal(10, 2)),
        pl.Series("tiny", [i % 100 - 50 for i in range(n)], dtype=pl.Int8),
        pl.Series("unsigned", [2**64 - 1 if i % 5 == 0 else i for i in range(n)], dtype=pl.UInt64),
        pl.Series("f32", [None if i % 9 == 0 else i / 8 for i in range(n)], dtype=pl.Float32),
    )


def spark_frame(spark: Any, path: Path) -> Any:
    from dpdesk.core.release.engines.spark.session import SparkSource, read

    kind = "csv" if path.suffix == ".csv" else "parquet"
    return read(spark, SparkSource(kind, str(path)), None, None)


def identities(spark: Any, path: Path) -> tuple[Any, Any]:
    from dpdesk.core.release.engines.spark.identity import spark_identity

    local = content_identity2(path, SECRET)
    remote = spark_identity(spark_frame(spark, path), SECRET, csv=path.suffix == ".csv")
    return local, remote


def assert_same(local: Any, remote: Any) -> None:
    assert remote.key == local.key
    assert remote.sketch == local.sketch
    assert remote.columns == local.columns


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_identity_is_the_local_one(spark: Any, tmp_path: Path, kind: str) -> None:
    frame = table(3000, 1)
    path = tmp_path / f"t.{kind}"
    if kind == "csv":
        frame.write_csv(path)
    else:
        typed(frame).write_parquet(path)
    local, remote = identities(spark, path)
    assert local.sketch.rows == frame.height
    assert not local.sketch.complete  # more distinct rows than the sketch keeps: the bottom-k is exercised
    assert local.columns is not None
    assert local.columns.marginals["few"].profile is not None  # a column of few values has its count profile
    assert local.columns.marginals["id"].profile is None
    assert_same(local, remote)


def test_one_cell_changes_the_key(spark: Any, tmp_path: Path) -> None:
    import polars as pl

    frame = typed(table(300, 2))
    frame.write_parquet(tmp_path / "a.parquet")
    changed = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 17).then(99999).otherwise(pl.col("id")).alias("id")
    )
    changed.write_parquet(tmp_path / "b.parquet")
    a_local, a = identities(spark, tmp_path / "a.parquet")
    b_local, b = identities(spark, tmp_path / "b.parquet")
    assert a.key != b.key
    assert_same(a_local, a)
    assert_same(b_local, b)
    assert b.columns is not None and a.columns is not None
    assert (
        b.columns.left_out["id"] == a.columns.left_out["id"]
    )  # the rows without the changed column are equal


def test_empty_table_and_odd_names(spark: Any, tmp_path: Path) -> None:
    import polars as pl

    empty = {"a": pl.Series([], dtype=pl.Int64), "b": pl.Series([], dtype=pl.String)}
    odd = {"we`ird.name": [1, 2], " b\u0301 ": ["x", None]}
    for name, columns in (("empty", empty), ("odd", odd)):
        path = tmp_path / f"{name}.parquet"
        pl.DataFrame(columns).write_parquet(path)
        assert_same(*identities(spark, path))


def plan_text(spark: Any, frame: Any) -> str:
    from dpdesk.core.release.engines.spark.identity import _hashed

    ident = TypedIdentity(SECRET, list(frame.columns))
    try:
        hashed, _values, _columns = _hashed(frame, ident)
        qe = hashed._jdf.queryExecution()
        return str(qe.toString()) + str(qe.optimizedPlan().toString()) + str(qe.executedPlan().toString())
    finally:
        ident.close()


def test_secret_is_not_in_the_plan(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    typed(table(50, 3)).write_parquet(path)
    text = plan_text(spark, spark_frame(spark, path))
    keys = Keys(SECRET)
    assert (
        str(int(keys.lanes[0][0]) - (2**64 if int(keys.lanes[0][0]) >= 2**63 else 0)) in text
    )  # derived keys are
    low = text.lower()
    assert SECRET.hex() not in low
    assert SECRET.decode("latin-1") not in text
    for start in range(len(SECRET) - 7):  # no 8 bytes of it as a number either way round, signed or not
        for order in ("little", "big"):
            word = int.from_bytes(SECRET[start : start + 8], order)  # type: ignore[arg-type]
            assert str(word) not in text and str(word - 2**64) not in text
            assert f"{word:x}" not in low


def test_refused_types_and_names(spark: Any, tmp_path: Path) -> None:
    import polars as pl

    from dpdesk.core.release.engines.spark.identity import NotIdentifiable, spark_identity

    for name, series in (
        ("at", pl.Series([dt.datetime(2024, 1, 1, 12)])),
        ("raw", pl.Series([b"\x00\x01"])),
        ("items", pl.Series([[1, 2]])),
    ):
        path = tmp_path / f"{name}.parquet"
        pl.DataFrame({"ok": [1], name: series}).write_parquet(path)
        with pytest.raises(NotIdentifiable) as caught:
            spark_identity(spark_frame(spark, path), SECRET)
        assert caught.value.column == name
        assert name in str(caught.value)
    for header, bad in (("a,b,b\n1,2,3\n", "b1"), ("a,,c\n1,2,3\n", "_c1")):
        path = tmp_path / "h.csv"
        path.write_text(header, encoding="utf-8")
        with pytest.raises(NotIdentifiable) as caught:
            spark_identity(spark_frame(spark, path), SECRET, csv=True)
        assert caught.value.column == bad
    # names differing only in case are two columns (the session is case-sensitive), as the loaders read them
    path = tmp_path / "case.csv"
    path.write_text("a,B,b\n1,2,3\n", encoding="utf-8")
    assert_same(*identities(spark, path))


@pytest.mark.xfail(reason="Spark's CSV parser turns CR LF within a quoted cell into LF", strict=True)
def test_known_difference_crlf_in_a_quoted_cell(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "crlf.csv"
    path.write_bytes(b'a,b\r\n1,"two\r\nlines"\r\n3,x\r\n')
    assert_same(*identities(spark, path))


@pytest.mark.xfail(
    reason="Spark skips the blank lines of a one-column CSV; the local reader keeps them", strict=True
)
def test_known_difference_blank_lines_of_one_column(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "one.csv"
    path.write_bytes(b"a\n1\n\n2\n")
    assert_same(*identities(spark, path))


def test_crlf_files_and_blank_lines_of_several_columns(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "crlf.csv"
    path.write_bytes(b'\xef\xbb\xbf a ,b\r\n1,"x"\r\n\r\n" 2 ",""\r\n1,"x"\r\n')
    assert_same(*identities(spark, path))
