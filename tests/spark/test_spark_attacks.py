"""What an attacker's pass over the Spark engine found, each now refused before any charge or read as the in-memory
engine reads it: a path Spark would expand as a wildcard to another file than the one hashed, files dpdesk reads
with other rows than Spark (a one-column file with blank lines, ragged rows), a CSV in another encoding than UTF-8,
whole numbers beyond 2^63 in an int column, ten thousand categories, column names with a backtick or differing in
case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.loading import load_table
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.engines.memory import InMemoryEngine
from dpdesk.core.release.steps import prepare_release

pytest.importorskip("pyspark")

UNIT = {"privacy_unit": {"neighbouring": "add_remove"}}


def plan_of(columns: dict[str, Any], queries: list[dict[str, Any]]) -> Any:
    for q in queries:
        q.setdefault("epsilon", 1.0)
        q.setdefault("mechanism", "laplace")
    return parse_plan(
        {"version": 1, "budget": {"epsilon": 100.0}, **UNIT, "columns": columns, "queries": queries}
    )


def engines(plan: Any, path: Path, spark: Any) -> tuple[Any, Any]:
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    mem = InMemoryEngine(load_table(path, plan.columns), plan, design_plan(plan))
    spk = SparkEngine(str(path), plan, design_plan(plan), SparkTarget(master="local[1]"), spark=spark)
    return spk, mem


def counts(check: Any) -> list[tuple[Any, ...]]:
    return [(c.name, c.missing, c.undeclared, c.unparsable, c.clamped) for c in check.columns]


@pytest.fixture
def uses_the_test_spark(spark: Any, monkeypatch: Any) -> None:
    from dpdesk.core.release.engines.spark import engine as spark_engine

    monkeypatch.setattr(spark_engine, "start", lambda target: spark)


def prepare(plan: Any, path: Path, home: Path) -> Any:
    from dpdesk.core.release.engines.spark.session import SparkTarget

    return prepare_release(plan, path, home, spark=SparkTarget(master="local[1]"), accept_data_problems=True)


def test_a_path_spark_would_read_as_a_wildcard_is_refused(tmp_path: Path, uses_the_test_spark: None) -> None:
    (tmp_path / "t.csv").write_text("x\n1\n2\n3\n", encoding="utf-8")
    decoy = (
        tmp_path / "[t].csv"
    )  # Spark's glob reads [t].csv as t.csv: t's rows, charged to the decoy's ledger
    decoy.write_text("x\n7\n", encoding="utf-8")
    plan = plan_of({"x": {"type": "float", "bounds": [0, 10]}}, [{"name": "n", "statistic": "count"}])
    with pytest.raises(DpdeskError, match="wildcards"):
        prepare(plan, decoy, tmp_path / "home")
    assert not (tmp_path / "home" / "ledgers").exists() or not any((tmp_path / "home" / "ledgers").iterdir())


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        (
            "blank.csv",
            "x\n1\n\n2\n\n",
            "rows of this file",
        ),  # Spark skips blank lines, dpdesk reads them as missing
        ("ragged.csv", "x,y\n1,2\n3,4\n5,6,EXTRA\n", "cannot read this file itself|rows of this file"),
    ],
)
def test_a_file_spark_reads_with_other_rows_than_dpdesk_is_refused(
    tmp_path: Path, uses_the_test_spark: None, name: str, text: str, why: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    columns: dict[str, Any] = {"x": {"type": "float", "bounds": [0, 10]}}
    plan = plan_of(columns, [{"name": "n", "statistic": "count"}])
    with pytest.raises(DpdeskError, match=why):
        prepare(plan, path, tmp_path / "home")


def test_a_csv_in_another_encoding_than_utf8_is_refused(tmp_path: Path, uses_the_test_spark: None) -> None:
    path = tmp_path / "gb.csv"
    path.write_bytes("地区\n北京\n上海\n广州\n".encode("gb18030"))
    plan = plan_of(
        {"地区": {"type": "category", "categories": ["北京", "上海", "广州"]}},
        [{"name": "h", "statistic": "histogram", "column": "地区"}],
    )
    with pytest.raises(DpdeskError, match="UTF-8"):
        prepare(plan, path, tmp_path / "home")


def test_whole_numbers_beyond_2_63_in_an_int_column_are_clamped_as_the_loader_clamps_them(
    tmp_path: Path, spark: Any
) -> None:
    path = tmp_path / "big.csv"
    path.write_text("n\n1e19\n5\n-1e300\n9.3e18\n9.2e18\n2.5\n", encoding="utf-8")
    plan = plan_of(
        {"n": {"type": "int", "bounds": [0, 20], "missing": {"impute": 3}}},
        [{"name": "s", "statistic": "sum", "column": "n"}, {"name": "m", "statistic": "mean", "column": "n"}],
    )
    spk, mem = engines(plan, path, spark)
    assert counts(spk.check()) == counts(mem.check())
    assert counts(mem.check())[0][4] == 4  # clamped: the four whole numbers out of bounds; 2.5 unparsable
    assert spk.aggregate(None, NULL_PROGRESS).states == mem.aggregate(None, NULL_PROGRESS).states


def test_ten_thousand_categories_are_read_in_one_expression(tmp_path: Path, spark: Any) -> None:
    cats = [f"c{i}" for i in range(10_000)]
    path = tmp_path / "many.csv"
    path.write_text("g\n" + "".join(f"c{i}\n" for i in (0, 9999, 5000, 5000, 17)) + "zz\n", encoding="utf-8")
    plan = plan_of(
        {"g": {"type": "category", "categories": cats}},
        [{"name": "m", "statistic": "mode", "column": "g", "mechanism": "exponential"}],
    )
    spk, mem = engines(plan, path, spark)
    assert counts(spk.check()) == counts(mem.check())
    assert spk.aggregate(None, NULL_PROGRESS).states == mem.aggregate(None, NULL_PROGRESS).states


def test_a_backtick_and_case_in_column_names(tmp_path: Path, spark: Any) -> None:
    path = tmp_path / "names.csv"
    path.write_text("a`b,g,G\n1,x,y\n2,y,x\n3,x,x\n", encoding="utf-8")
    plan = plan_of(
        {
            "a`b": {"type": "int", "bounds": [0, 5]},
            "G": {"type": "category", "categories": ["x", "y"]},
        },
        [
            {"name": "s", "statistic": "sum", "column": "a`b"},
            {"name": "h", "statistic": "histogram", "column": "G"},
        ],
    )
    spk, mem = engines(plan, path, spark)
    assert counts(spk.check()) == counts(mem.check())
    got = list(spk.aggregate(None, NULL_PROGRESS).states)
    assert got == list(mem.aggregate(None, NULL_PROGRESS).states) == [[[6]], [[2, 1]]]
