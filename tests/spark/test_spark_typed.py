"""The Spark engine reads a typed Parquet file as the loader reads it (issue 32): int64 with nulls and values outside
the bounds, float64 with NaN, infinities and -0.0, int32, float32 with fractions under an int declaration, decimals,
booleans declared as a category or as an int, a text category with padded and undeclared values, an int64 and a
float64 column declared as categories, a date declared as a number (unparsable). Each view of the file is released
with every statistic's examples (the engine tests' plan) by both engines: the same states and data check counts.
The in-memory engine is the reference."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.model.spec import plan_to_dict
from dpdesk.core.plan.reader import parse_plan
from tests.core.test_engines import make_plan
from tests.spark.test_spark_engine import memory_engine, spark_engine

pytest.importorskip("pyspark")

N = 600
SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e300, -1e-300, 3.0, -7.0, 2.9999999999999996]


def typed_frame() -> Any:
    """The typed columns (numpy's generator, test only); every kind of awkward value appears in the first rows."""
    import polars as pl

    rng = np.random.default_rng(7)

    def maybe(values: list[Any], p: float = 0.07) -> list[Any]:
        return [None if rng.random() < p else v for v in values]

    f64 = SPECIAL_FLOATS + [float(v) for v in rng.uniform(-9.0, 5.0, N - len(SPECIAL_FLOATS))]
    i64 = [-(2**62), 2**62, 2**53 + 1, -3, 0, 20, 21] + [int(v) for v in rng.integers(-3, 25, N - 7)]
    text = ["  a ", "b\u3000", "zz", "", "   ", "A", "c"] + [
        str(rng.choice(["a", "b", "c", " a", "zz"])) for _ in range(N - 7)
    ]
    cols = {
        "f64": pl.Series(maybe(f64), dtype=pl.Float64),
        "i64": pl.Series(maybe(i64), dtype=pl.Int64),
        "i32": pl.Series(maybe([int(v) for v in rng.integers(-9, 6, N)]), dtype=pl.Int32),
        "f32": pl.Series(
            maybe([float(v) for v in rng.choice([0.5, 1.0, 2.0, 19.75, 25.0, -1.0, 0.1], N)]),
            dtype=pl.Float32,
        ),
        "dec": pl.Series(
            maybe([decimal.Decimal(f"{v:.2f}") for v in rng.uniform(-9.0, 5.0, N)]), dtype=pl.Decimal(10, 2)
        ),
        "flag": pl.Series(maybe([bool(v) for v in rng.integers(0, 2, N)]), dtype=pl.Boolean),
        "s": pl.Series(maybe(text), dtype=pl.String),
        "icat": pl.Series(maybe([int(v) for v in rng.choice([7, -1, 0, 8], N)]), dtype=pl.Int64),
        "fcat": pl.Series(
            maybe([float(v) for v in rng.choice([1.0, 2.5, 1e-05, 3.0, 1e7, 1e-4, -0.0, 0.0, math.nan], N)]),
            dtype=pl.Float64,
        ),
        "d": pl.Series(
            maybe([dt.date(2020, 1, 1) + dt.timedelta(days=int(v)) for v in rng.integers(0, 900, N)]),
            dtype=pl.Date,
        ),
    }
    return pl.DataFrame(cols)


#: (the column read as the plan's float column x, as its int column n, as its category g; g's categories)
VIEWS = {
    "float64-int64-text": ("f64", "i64", "s", ["a", "b", "c"]),
    "int32-bool-bool": ("i32", "flag", "flag", ["a", "false", "c", "true"]),
    "date-float32-int64": ("d", "f32", "icat", ["a", "7", "c", "-1", "0"]),
    "decimal-int32-float64": (
        "dec",
        "i32",
        "fcat",
        ["a", "1.0", "c", "2.5", "0.00001", "10000000.0", "-0.0", "1e-4"],
    ),
    "float64-float32-float32": ("f64", "f32", "f32", ["a", "0.5", "c", "19.75", "-1.0", "0.1"]),
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_a_typed_parquet_file_gives_the_in_memory_states_and_check(
    tmp_path: Path, spark: Any, view: str, relation: str
) -> None:
    import polars as pl

    x, n, g, categories = VIEWS[view]
    frame = typed_frame()
    path = tmp_path / "typed.parquet"
    frame.select(pl.col(x).alias("x"), pl.col(n).alias("n"), pl.col(g).alias("g")).write_parquet(path)
    d = plan_to_dict(make_plan(None))
    d["privacy_unit"]["neighbouring"] = relation
    d["columns"]["g"]["categories"] = categories
    plan = parse_plan(d)
    mem = memory_engine(plan, path)
    spk = spark_engine(plan, path, spark)
    strip = lambda c: (c.name, c.missing, c.undeclared, c.unparsable, c.clamped)  # noqa: E731
    assert spk.check().rows == mem.check().rows == N
    assert [strip(c) for c in spk.check().columns] == [strip(c) for c in mem.check().columns]
    got = spk.aggregate(None, NULL_PROGRESS)
    want = mem.aggregate(None, NULL_PROGRESS)
    for design, a, b in zip(mem.designs, got.states, want.states, strict=True):
        assert a == b, design.spec.name
    assert got.exacts == want.exacts
    if view == "date-float32-int64":  # a date is no number: every present cell unparsable
        xc = mem.check().columns[0]
        assert xc.unparsable == N - xc.missing > 0
        assert mem.check().columns[1].unparsable > 0  # float32 fractions under an int declaration
    assert mem.check().columns[2].undeclared > 0 or view == "int32-bool-bool"
