"""The Spark engine (dpdesk/core/release/engines/spark/) gives the in-memory engine's states and data check, bit for
bit, on the tables the engine tests generate: every statistic but the synthesiser, both relations, both missing
rules, CSV and Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.loading import load_table
from dpdesk.core.model.spec import Plan, plan_to_dict
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.engines.memory import InMemoryEngine
from tests.core.test_engines import make_plan, write_table

pytest.importorskip("pyspark")


def spark_engine(plan: Plan, path: Path, spark: Any) -> Any:
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    return SparkEngine(str(path), plan, design_plan(plan), SparkTarget(master="local[2]"), spark=spark)


def memory_engine(plan: Plan, path: Path) -> InMemoryEngine:
    table = load_table(path, plan.columns, id_column=plan.privacy_unit.id_column)
    return InMemoryEngine(table, plan, design_plan(plan))


def variant(plan: Plan, relation: str, x_missing: Any) -> Plan:
    d = plan_to_dict(plan)
    d["privacy_unit"]["neighbouring"] = relation
    d["columns"]["x"]["missing"] = x_missing
    return parse_plan(d)


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("x_missing", ["drop", {"impute": -1.5}])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_spark_engine_gives_the_in_memory_states_bit_for_bit(
    tmp_path: Path, spark: Any, relation: str, x_missing: Any, fmt: str
) -> None:
    plan = variant(make_plan(None), relation, x_missing)
    path = tmp_path / "t.csv"
    write_table(path, 3000, seed=11, with_id=False)
    if fmt == "parquet":
        import polars as pl

        frame = pl.read_csv(path, infer_schema=False)
        path = tmp_path / "t.parquet"
        frame.write_parquet(path)
    mem = memory_engine(plan, path)
    spk = spark_engine(plan, path, spark)
    assert spk.check() == mem.check() or _same_counts(spk.check(), mem.check())
    got = spk.aggregate(None, NULL_PROGRESS)
    want = mem.aggregate(None, NULL_PROGRESS)
    for d, a, b in zip(mem.designs, got.states, want.states, strict=True):
        assert a == b, d.spec.name
    assert got.exacts == want.exacts


def _same_counts(a: Any, b: Any) -> bool:
    strip = lambda c: (c.name, c.missing, c.undeclared, c.unparsable, c.clamped)  # noqa: E731
    assert a.rows == b.rows
    assert [strip(c) for c in a.columns] == [strip(c) for c in b.columns]
    return True
