"""A table only the cluster reads (a catalog table, a folder of Parquet files) is named by its content, computed by
Spark from one snapshot: the same rows are the same dataset and ledger whichever engine read them, so no budget
comes back by moving a table into the cluster; rows changed since are a near-copy, refused until an officer links
it or declares it new (exit 3); a column Spark cannot name exactly is refused before anything is charged."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import BudgetExceeded
from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.identity.recognition import NearCopy
from dpdesk.core.model.spec import plan_to_dict
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import prepare_release
from dpdesk.services.common import Dataset
from dpdesk.services.ledger import LinkRequest, link_dataset
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.core.test_engines import make_plan, write_table

pytest.importorskip("pyspark")


@pytest.fixture
def on_spark(spark: Any, monkeypatch: Any) -> Any:
    from dpdesk.core.release.engines.spark import engine as spark_engine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    monkeypatch.setattr(spark_engine, "start", lambda target: spark)  # the test session's Spark and catalog
    return SparkTarget(master="local[1]")


def as_catalog_table(spark: Any, csv: Path, name: str) -> str:
    """The CSV's rows as a catalog table of text columns (as Spark reads a CSV), replacing any of that name; its
    files beside the CSV (not in a warehouse in the working folder)."""
    from dpdesk.core.release.engines.spark.session import SparkSource, read

    frame = read(spark, SparkSource("csv", "file:" + str(csv)), None, None).localCheckpoint()
    frame.write.mode("overwrite").option("path", str(csv.parent / "tables" / name)).saveAsTable(name)
    return f"table:{name}"


def small_plan(budget: float) -> Any:
    d = plan_to_dict(make_plan(None))
    d["queries"] = d["queries"][:3]
    d["budget"] = {"epsilon": budget}
    return parse_plan(d)


def test_a_catalog_table_of_a_files_rows_is_that_files_dataset_and_shares_its_budget(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    plan = small_plan(4.5)  # three queries at epsilon 1: one release fits, not two
    data = tmp_path / "t.csv"
    write_table(data, 1200, seed=3, with_id=False)
    home = tmp_path / "home"
    first = release_plan(ReleaseRequest(plan, data, home, tmp_path / "o1", accept_data_problems=True))
    source = as_catalog_table(spark, data, "people_same")
    by_spark = prepare_release(plan, source, home, spark=on_spark, accept_data_problems=True)
    local = prepare_release(plan, data, home, accept_data_problems=True)
    try:
        assert by_spark.table.identity is not None and by_spark.table.sha256 != local.table.sha256
        assert by_spark.ledger.dataset == local.ledger.dataset == first.entry.dataset  # the file's ledger
        assert by_spark.exacts == local.exacts
        assert by_spark.report is not None and not by_spark.report.fits  # the file's release is on its ledger
    finally:
        by_spark.close()
        local.close()
    with pytest.raises(BudgetExceeded):
        release_plan(
            ReleaseRequest(plan, source, home, tmp_path / "o2", accept_data_problems=True, spark=on_spark)
        )


def test_a_folder_of_parquet_files_released_twice_is_one_dataset(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    from dpdesk.core.release.engines.spark.session import SparkSource, read

    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 900, seed=4, with_id=False)
    folder = tmp_path / "parts"
    read(spark, SparkSource("csv", "file:" + str(data)), None, None).repartition(3).write.parquet(str(folder))
    assert len(list(folder.glob("*.parquet"))) == 3
    home = tmp_path / "home"
    done = [
        release_plan(
            ReleaseRequest(plan, folder, home, tmp_path / f"o{i}", accept_data_problems=True, spark=on_spark)
        )
        for i in range(2)
    ]
    assert done[0].entry.dataset == done[1].entry.dataset  # charged again, on the same ledger
    assert done[1].entry.seq > done[0].entry.seq
    local = prepare_release(plan, data, home, accept_data_problems=True)
    try:  # the file holding the same rows is the same dataset
        assert local.ledger.dataset == done[0].entry.dataset
    finally:
        local.close()


def test_a_catalog_table_whose_rows_changed_is_a_near_copy(tmp_path: Path, spark: Any, on_spark: Any) -> None:
    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 1500, seed=6, with_id=False)
    home = tmp_path / "home"
    source = as_catalog_table(spark, data, "people_changing")
    first = release_plan(
        ReleaseRequest(plan, source, home, tmp_path / "o1", accept_data_problems=True, spark=on_spark)
    )
    lines = data.read_text(encoding="utf-8").splitlines()
    lines[5] = "1.250,4,a"  # one row edited and one added: most rows are the known table's
    lines.append("2.000,5,b")
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    as_catalog_table(spark, data, "people_changing")
    with pytest.raises(NearCopy) as refused:
        prepare_release(plan, source, home, spark=on_spark, accept_data_problems=True)
    assert refused.value.resolution.resembles[0].dataset == first.entry.dataset
    assert refused.value.exit_code == 3
    # the curator links it (as the refusal says, with the same --data), without Spark: charged there from now on
    linked = link_dataset(LinkRequest(Dataset(home, data=source), first.entry.dataset))
    assert linked.entry is not None and linked.dataset == first.entry.dataset
    again = release_plan(
        ReleaseRequest(plan, source, home, tmp_path / "o2", accept_data_problems=True, spark=on_spark)
    )
    assert again.entry.dataset == first.entry.dataset and again.entry.seq > linked.entry.seq


def test_the_statistics_are_of_the_rows_the_identity_names(tmp_path: Path, spark: Any, on_spark: Any) -> None:
    """The table is read once into a snapshot: rewritten after it was identified, the aggregates are still of the
    rows that named the dataset (the file's, computed locally), not of the new ones."""
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.steps import bound_key

    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 800, seed=9, with_id=False)
    home = tmp_path / "home"
    source = as_catalog_table(spark, data, "people_rewritten")
    engine = SparkEngine(source, plan, design_plan(plan), on_spark, identity_secret=b"k" * 32, spark=spark)
    other = tmp_path / "other.csv"
    write_table(other, 300, seed=10, with_id=False)
    as_catalog_table(spark, other, "people_rewritten")
    local = prepare_release(plan, data, home, accept_data_problems=True)
    try:
        assert engine.check().rows == local.check.rows == 800
        assert engine.aggregate(bound_key(plan, home), NULL_PROGRESS).exacts == local.exacts
    finally:
        local.close()


def test_a_column_spark_cannot_name_is_refused_before_a_charge(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    from dpdesk.core.release.engines.spark.session import SparkUnavailable

    plan = small_plan(100.0)
    rows = [
        (float(i % 7) - 3.0, str(i % 20), "abc"[i % 3], dt.datetime(2024, 1, 1 + i % 28)) for i in range(200)
    ]
    spark.createDataFrame(rows, "x double, n string, g string, at timestamp").write.mode("overwrite").option(
        "path", str(tmp_path / "dated")
    ).saveAsTable("people_dated")
    home = tmp_path / "home"
    with pytest.raises(SparkUnavailable) as refused:
        prepare_release(plan, "table:people_dated", home, spark=on_spark, accept_data_problems=True)
    assert "'at'" in str(refused.value) and "Nothing was charged" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_a_home_still_knowing_a_dataset_by_a_scheme_1_key_refuses_a_cluster_table(
    tmp_path: Path, spark: Any, on_spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Such a dataset's copies are found by their scheme-1 identity, which Spark does not compute: a cluster table
    holding its rows would start a fresh budget, so it is refused (nothing charged) until the file is opened."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.identity import recognition
    from dpdesk.core.ledger.contents import needs_scheme1
    from dpdesk.core.release import steps

    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 600, seed=12, with_id=False)
    home = tmp_path / "home"
    with monkeypatch.context() as older:  # the version before scheme 2: scheme-1 identities only
        older.setattr(steps, "_load_secret", lambda _home, _path: None)
        older.setattr(
            recognition, "identities_of", lambda home, path, **kw: [recognition.identity_of(home, path, **kw)]
        )
        release_plan(ReleaseRequest(plan, data, home, tmp_path / "o1", accept_data_problems=True))
    assert needs_scheme1(home)
    source = as_catalog_table(spark, data, "people_scheme1")
    with pytest.raises(UsageError, match="older kind of content key"):
        prepare_release(plan, source, home, spark=on_spark, accept_data_problems=True)
    prepare_release(plan, data, home, accept_data_problems=True).close()  # the file opened: its key updated
    assert not needs_scheme1(home)
    by_spark = prepare_release(plan, source, home, spark=on_spark, accept_data_problems=True)
    try:
        local = prepare_release(plan, data, home, accept_data_problems=True)
        local.close()
        assert by_spark.ledger.dataset == local.ledger.dataset is not None
    finally:
        by_spark.close()
