"""The Spark engine reads values as the loaders do and puts them where the statistics put them, on the cases where a
careless translation would differ: values exactly half-way between two grid points (rounded half to even, as numpy's
``rint``; Spark's ``round`` goes half up), text that Spark's cast reads as a number but dpdesk does not (``1.5d``,
``1f``) and the reverse (``-nan``), values equal to a quantile's candidates or a histogram's edges (< against <=),
Unicode white space around a category. Each case is compared with the in-memory engine, which is the reference."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.loading import load_table
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.engines.memory import InMemoryEngine

pytest.importorskip("pyspark")


def both(tmp_path: Path, spark: Any, plan_dict: dict[str, Any], text: str) -> tuple[Any, Any, Any, Any]:
    """The Spark and in-memory engines' (states, data check) for the plan over the CSV ``text``."""
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    plan = parse_plan({"version": 1, "budget": {"epsilon": 100.0}, **plan_dict})
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    mem = InMemoryEngine(load_table(path, plan.columns), plan, design_plan(plan))
    spk = SparkEngine(str(path), plan, design_plan(plan), SparkTarget(master="local[1]"), spark=spark)
    return (
        spk.aggregate(None, NULL_PROGRESS).states,
        mem.aggregate(None, NULL_PROGRESS).states,
        spk.check(),
        mem.check(),
    )


def counts(check: Any) -> list[tuple[Any, ...]]:
    return [(c.name, c.missing, c.undeclared, c.unparsable, c.clamped) for c in check.columns]


UNIT = {"privacy_unit": {"neighbouring": "add_remove"}}


def test_values_half_way_between_grid_points_round_half_to_even(tmp_path: Path, spark: Any) -> None:
    step = math.ldexp(1.0, -27)  # the grid of bounds [-7, 3]: s = 27
    xs = [h * step for h in (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5)]
    big = [
        1,
        3,
        5,
        7,
        2**31 - 1,
    ]  # an int column with bounds up to 2^31: a grid of 2 (s = -1), odd values half-way
    text = "x,n\n" + "".join(f"{x!r},{n}\n" for x, n in zip(xs, big + [9, 11], strict=True))
    plan = {
        **UNIT,
        "columns": {
            "x": {"type": "float", "bounds": [-7, 3], "missing": "drop"},
            "n": {"type": "int", "bounds": [0, 2**31], "missing": "drop"},
        },
        "queries": [
            {"name": "sx", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
            {"name": "sn", "statistic": "sum", "column": "n", "mechanism": "laplace", "epsilon": 1.0},
            {"name": "mx", "statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
        ],
    }
    got, want, _c1, _c2 = both(tmp_path, spark, plan, text)
    assert got == want
    assert want[0] == [
        [0 + 2 + 2 - 0 - 2 - 2 + 4]
    ]  # half to even, by hand: not round half up (1+2+3-1-2-3+4)


def test_text_is_a_number_exactly_when_the_loader_reads_one(tmp_path: Path, spark: Any) -> None:
    cells = [
        "1.5d",
        "1f",
        "-nan",
        "+nan",
        "0x10",
        " 7 ",
        "1e400",
        "-inf",
        "Infinity",
        "1_0",
        "٣",
        "5.",
        ".5",
        "2",
    ]
    text = "x,n\n" + "".join(f'"{c}","{c}"\n' for c in cells)
    plan = {
        **UNIT,
        "columns": {
            "x": {"type": "float", "bounds": [-7, 3], "missing": "drop"},
            "n": {"type": "int", "bounds": [0, 10], "missing": {"impute": 1}},
        },
        "queries": [
            {"name": "c", "statistic": "count", "mechanism": "laplace", "epsilon": 1.0},
            {"name": "sx", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 1.0},
            {"name": "sn", "statistic": "sum", "column": "n", "mechanism": "laplace", "epsilon": 1.0},
        ],
    }
    got, want, c_spark, c_memory = both(tmp_path, spark, plan, text)
    assert counts(c_spark) == counts(c_memory)
    assert counts(c_memory)[0][3] >= 4  # the loader refuses 1.5d, 1f, 0x10, 1_0 and the Arabic digit at least
    assert got == want


def test_values_on_candidates_and_edges_are_counted_as_the_in_memory_engine_counts_them(
    tmp_path: Path, spark: Any
) -> None:
    values = [0, 1, 1, 2, 2, 2, 3, 5, 8, 10, 10]
    text = "n,x\n" + "".join(f"{v},{v / 2}\n" for v in values)
    plan = {
        **UNIT,
        "columns": {
            "n": {"type": "int", "bounds": [0, 10], "missing": "drop"},
            "x": {"type": "float", "bounds": [0, 5], "missing": "drop"},
        },
        "queries": [
            {"name": "med", "statistic": "quantile", "column": "n", "q": 0.5, "mechanism": "exponential"},
            {
                "name": "medx",
                "statistic": "quantile",
                "column": "x",
                "q": 0.3,
                "candidates": [0.0, 0.5, 1.0, 1.5, 2.5, 5.0],
                "mechanism": "exponential",
            },
            {
                "name": "h",
                "statistic": "histogram",
                "column": "x",
                "bins": [0.5, 1.0, 2.5],
                "mechanism": "laplace",
            },
            {
                "name": "p",
                "statistic": "select",
                "column": "n",
                "candidates": [1, 2, 5],
                "utility": "revenue",
            },
        ],
    }
    for q in plan["queries"]:
        q.setdefault("epsilon", 1.0)
        q.setdefault("mechanism", "exponential")
    got, want, _c1, _c2 = both(tmp_path, spark, plan, text)
    assert got == want


def test_categories_are_trimmed_of_unicode_white_space(tmp_path: Path, spark: Any) -> None:
    cells = ["a", " a", "a\u3000", "\u00a0b", "b\t", "c", "zz", "", "  ", "A"]
    text = "g\n" + "".join(f'"{c}"\n' for c in cells)
    plan = {
        **UNIT,
        "columns": {"g": {"type": "category", "categories": ["a", "b", "c"], "missing": "drop"}},
        "queries": [
            {"name": "h", "statistic": "histogram", "column": "g", "mechanism": "laplace", "epsilon": 1.0},
            {"name": "m", "statistic": "mode", "column": "g", "mechanism": "exponential", "epsilon": 1.0},
        ],
    }
    got, want, c_spark, c_memory = both(tmp_path, spark, plan, text)
    assert counts(c_spark) == counts(c_memory)
    assert got == want
    assert want[0] == [[3, 2, 1]]
