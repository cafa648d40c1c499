"""A release aggregated by Spark is the release the other engines make, but for the noise: the same dataset (and so
the same ledger: changing engines gets no budget back), the same designs and exact statistics, the same data check,
and a package that ``review`` finds intact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import BudgetExceeded
from dpdesk.core.model.spec import plan_to_dict
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import prepare_release
from dpdesk.services.release import ReleaseRequest, release_plan
from dpdesk.services.review import ReviewRequest, review_path
from tests.core.test_engines import make_plan, write_table

pytest.importorskip("pyspark")


def counts(check: Any) -> list[tuple[Any, ...]]:
    return [(c.name, c.missing, c.undeclared, c.unparsable, c.clamped) for c in check.columns]


def test_the_prepared_release_is_the_same_with_spark_streamed_or_in_memory(
    tmp_path: Path, spark: Any, monkeypatch: Any
) -> None:
    from dpdesk.core.release.engines.spark import engine as spark_engine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    monkeypatch.setattr(spark_engine, "start", lambda target: spark)  # the test session's Spark
    plan = make_plan(None)
    data = tmp_path / "t.csv"
    write_table(data, 2500, seed=5, with_id=False)
    home = tmp_path / "home"
    target = SparkTarget(master="local[1]")
    by_spark = prepare_release(plan, data, home, spark=target, accept_data_problems=True)
    in_memory = prepare_release(plan, data, home, accept_data_problems=True)
    streamed = prepare_release(plan, data, home, accept_data_problems=True, memory_limit=1)
    try:
        assert streamed.table.streamed is not None  # the memory limit made it stream
        for other in (in_memory, streamed):
            assert by_spark.table.sha256 == other.table.sha256
            assert by_spark.ledger.dataset == other.ledger.dataset
            assert [d.spec for d in by_spark.designs] == [d.spec for d in other.designs]
            assert by_spark.exacts == other.exacts
            assert counts(by_spark.check) == counts(other.check)
    finally:
        for p in (by_spark, in_memory, streamed):
            p.close()


def test_a_spark_release_is_charged_to_the_tables_ledger_and_its_package_reviews_intact(
    tmp_path: Path, spark: Any, monkeypatch: Any
) -> None:
    from dpdesk.core.release.engines.spark import engine as spark_engine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    monkeypatch.setattr(spark_engine, "start", lambda target: spark)
    d = plan_to_dict(make_plan(None))
    d["queries"] = d["queries"][:6]
    d["budget"] = {"epsilon": 6.5}  # room for one release of six queries at epsilon 1, not two
    plan = parse_plan(d)
    data = tmp_path / "t.csv"
    write_table(data, 1500, seed=8, with_id=False)
    home = tmp_path / "home"
    done = release_plan(
        ReleaseRequest(
            plan,
            data,
            home,
            tmp_path / "out",
            accept_data_problems=True,
            spark=SparkTarget(master="local[1]"),
        )
    )
    assert done.entry.seq >= 1 and len(done.rows) > 0
    assert review_path(ReviewRequest(tmp_path / "out")).intact
    # the same table released in memory: the same dataset, whose budget the Spark release spent
    with pytest.raises(BudgetExceeded):
        release_plan(ReleaseRequest(plan, data, home, tmp_path / "out2", accept_data_problems=True))
    assert not (tmp_path / "out2").exists() or not any((tmp_path / "out2").iterdir())


def test_a_file_changed_while_spark_read_it_is_refused_before_any_charge(tmp_path: Path, spark: Any) -> None:
    """The file's bytes name the dataset before Spark reads it; a file swapped in the meantime would have its
    statistics charged to the first table's ledger (and its own budget never spent): refused."""
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.common.progress import NULL_PROGRESS
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    plan = make_plan(None)
    data = tmp_path / "t.csv"
    write_table(data, 300, seed=3, with_id=False)
    engine = SparkEngine(str(data), plan, design_plan(plan), SparkTarget(master="local[1]"), spark=spark)
    engine.check()  # Spark has read the rows
    data.write_text(data.read_text(encoding="utf-8") + "1.0,2,a\n", encoding="utf-8")  # swapped meanwhile
    with pytest.raises(InputError, match="changed while Spark read it"):
        engine.aggregate(None, NULL_PROGRESS)
