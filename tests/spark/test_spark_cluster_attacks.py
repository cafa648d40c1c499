"""Attacks on the Spark engine's cluster-only tables (issue 32, second slice), by an attacker's pass: each of the first
five tests FAILED on the commit it attacked (a998412, "Mutants CT01-CT04") and shows the bug its docstring names
(the "BUG" docstrings say what happened then); they pass since the fixes. Small tables, the conftest's local Spark
session."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import prepare_release
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.core.test_engines import write_table
from tests.spark.test_spark_cluster_tables import on_spark as on_spark  # the fixture
from tests.spark.test_spark_cluster_tables import small_plan

pytest.importorskip("pyspark")


def accented_plan() -> Any:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1.5},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {
                "x": {"type": "float", "bounds": [0, 10], "missing": "drop"},
                "g": {"type": "category", "categories": ["café", "thé", "eau"]},
            },
            "queries": [
                {"name": "q", "statistic": "count", "mechanism": "laplace", "group_by": "g", "epsilon": 1.0}
            ],
        }
    )


def latin1_released(tmp_path: Path) -> tuple[Any, Path, Path, Any, Any]:
    """A Latin-1 CSV released locally (its plan, a folder holding the same file, the home, the release and the
    file's prepared release, closed: its exacts and dataset)."""
    plan = accented_plan()
    rows = ["x,g,h"] + [f"{i % 10}.{i % 7},{['café', 'thé', 'eau'][i % 3]},rue {i} è" for i in range(300)]
    raw = ("\n".join(rows) + "\n").encode("latin-1")
    local = tmp_path / "people.csv"
    local.write_bytes(raw)
    folder = tmp_path / "people_parts.csv"
    folder.mkdir()
    (folder / "part-0.csv").write_bytes(raw)
    home = tmp_path / "home"
    first = release_plan(ReleaseRequest(plan, local, home, tmp_path / "o1", accept_data_problems=True))
    here = prepare_release(plan, local, home, accept_data_problems=True)
    here.close()
    return plan, folder, home, first, here


def test_a_latin1_csv_read_by_spark_from_a_folder_is_its_files_dataset_or_refused(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """BUG (budget back + false output). A Latin-1 CSV released locally (the loader detects its encoding) is
    released again with --engine spark from a folder holding the same file (or as file:///path), with
    --encoding latin-1. The bytes path refuses a non-UTF-8 CSV (``_utf8_key``), but a cluster-only CSV is read by
    Spark as UTF-8 whatever --encoding says (``SparkEngine.__init__`` calls ``read(..., None, ...)``: the
    encoding is dropped), so every accented cell becomes U+FFFD: the content identity shares no row with the
    file's (two columns differ in every row) and the release starts a FRESH dataset with a fresh budget, and its
    counts are of other values than the file holds (café and thé counted as 0)."""
    plan, folder, home, first, here = latin1_released(tmp_path)
    try:
        by_spark = prepare_release(
            plan, folder, home, spark=on_spark, accept_data_problems=True, encoding="latin-1"
        )
    except DpdeskError:
        return  # refused (e.g. "not UTF-8"): nothing charged, acceptable
    try:
        assert by_spark.ledger.dataset == first.entry.dataset, "the same file's rows started a fresh budget"
        assert by_spark.exacts == here.exacts, "statistics of other values than the file holds"
    finally:
        by_spark.close()


def test_a_parquet_folder_whose_files_disagree_on_a_type_is_refused_not_a_traceback(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """BUG (crash). A folder of Parquet files where one file has ``x`` as double and another as string: Spark
    fails inside the snapshot (``localCheckpoint``) with FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH, raised
    to Python as a raw ``py4j.protocol.Py4JJavaError`` (not a ``PySparkException``), which
    ``SparkEngine._failing`` does not catch: the CLI ends in a Java stack trace instead of a one-line refusal."""
    plan = small_plan(100.0)
    made = tmp_path / "made"
    spark.createDataFrame(
        [(float(i), i % 20, "abc"[i % 3]) for i in range(100)], "x double, n int, g string"
    ).write.parquet(str(made / "a"))
    spark.createDataFrame(
        [(str(i), i % 20, "abc"[i % 3]) for i in range(100)], "x string, n int, g string"
    ).write.parquet(str(made / "b"))
    folder = tmp_path / "parts"
    folder.mkdir()
    for sub in ("a", "b"):
        for i, part in enumerate(sorted((made / sub).glob("*.parquet"))):
            shutil.copy(part, folder / f"{sub}{i}.parquet")
    with pytest.raises(DpdeskError) as refused:
        release_plan(
            ReleaseRequest(
                plan, folder, tmp_path / "home", tmp_path / "o", accept_data_problems=True, spark=on_spark
            )
        )
    assert "FAILED_READ_FILE" in str(refused.value) and "nothing was charged" in str(refused.value)


def test_a_csv_folder_whose_files_order_their_columns_differently_is_read_by_header(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """BUG (false output). A folder of CSV files, the second written with its columns in another order (g,n,x):
    Spark takes the first file's header and reads every other file by POSITION (``enforceSchema`` defaults to
    true), so the second file's g values are counted as x and its x as g. The release goes ahead and publishes
    statistics of values the table does not hold in those columns (the identity names the misread rows too). The
    same rows in one file, released locally in another home, give other statistics. Expected: refused, or read
    by header."""
    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 400, seed=3, with_id=False)
    lines = data.read_text(encoding="utf-8").splitlines()
    folder = tmp_path / "mixed.csv"
    folder.mkdir()
    (folder / "a.csv").write_text("\n".join(lines[:201]) + "\n", encoding="utf-8")
    swapped = ["g,n,x"] + [",".join(reversed(line.split(","))) for line in lines[201:]]
    (folder / "b.csv").write_text("\n".join(swapped) + "\n", encoding="utf-8")
    local = prepare_release(plan, data, tmp_path / "home1", accept_data_problems=True)
    local.close()
    try:
        by_spark = prepare_release(
            plan, folder, tmp_path / "home2", spark=on_spark, accept_data_problems=True
        )
    except DpdeskError:
        return  # refused: acceptable
    try:
        assert by_spark.check.rows == local.check.rows
        assert by_spark.exacts == local.exacts, "statistics of the second file's columns swapped"
    finally:
        by_spark.close()


def _refused_for_data_problems(tmp_path: Path, spark: Any, on_spark: Any) -> tuple[Path, str, str]:
    """A file released locally (dataset D), then the same rows as a catalog table released with --engine spark
    WITHOUT --accept-data-problems (the default): refused for data problems after the hint was written but before
    the resolution cached the table's identity."""
    from dpdesk.core.release.datacheck import DataProblems
    from tests.spark.test_spark_cluster_tables import as_catalog_table

    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 500, seed=3, with_id=False)
    home = tmp_path / "home"
    first = release_plan(ReleaseRequest(plan, data, home, tmp_path / "o1", accept_data_problems=True))
    source = as_catalog_table(spark, data, "copy_refused")
    with pytest.raises(DataProblems):
        prepare_release(plan, source, home, spark=on_spark)
    return home, source, first.entry.dataset


def test_a_hint_left_by_a_data_problems_refusal_does_not_make_a_known_table_look_new(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """BUG (false output). ``prepare_release`` calls ``remember_cluster_table`` right after Spark identified the
    table, before the data check; the data check refuses (the default), so ``recognition.resolve`` never runs and
    the identity is never cached under the hinted key. ``budget --data table:NAME`` / ``Dataset.resolve`` then look
    the hinted key up, find no identity, cannot read ``table:NAME`` as a file, and answer "new, resembles nothing":
    an exact copy of a dataset that has spent budget is shown as a fresh table with its whole budget."""
    from dpdesk.services.common import Dataset

    home, source, known = _refused_for_data_problems(tmp_path, spark, on_spark)
    resolution = Dataset(home, data=source).resolve()
    assert resolution is not None
    assert resolution.dataset == known or any(r.dataset == known for r in resolution.resembles), (
        f"table {source} (an exact copy of {known}) resolved as {resolution.how!r}, resembling nothing"
    )


def test_ledger_link_of_such_a_table_does_not_fail_after_writing_its_link_entry(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """BUG (false output / half-done command). With that hint, ``ledger link --data table:NAME --to ds-...``
    appends the ``link`` entry to the dataset's ledger and links the key (``link_dataset``), THEN calls
    ``identities_of(home, "table:NAME")``, which has no cached identity and reads the name as a file: the command
    exits 2 "table:NAME: no such file" although the link is recorded. Expected: the link either succeeds, or is
    refused before anything is written."""
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.services.common import Dataset
    from dpdesk.services.ledger import LinkRequest, link_dataset

    home, source, known = _refused_for_data_problems(tmp_path, spark, on_spark)
    before = Ledger.of(home, known).read().seq
    try:
        link_dataset(LinkRequest(Dataset(home, data=source), known))
    except InputError as exc:
        after = Ledger.of(home, known).read().seq
        assert after == before, f"link refused ({exc}) but the ledger got {after - before} new entry(ies)"


def test_a_latin1_csv_folder_read_as_utf8_is_refused(tmp_path: Path, spark: Any, on_spark: Any) -> None:
    """Without --encoding Spark decodes a Latin-1 CSV as UTF-8, every accented cell a U+FFFD: refused before any
    charge (it would be other values than the file holds, under another content key: a fresh budget)."""
    from dpdesk.core.release.engines.spark.session import SparkUnavailable

    rows = ["x,g,h"] + [f"{i % 10}.{i % 7},{['café', 'thé', 'eau'][i % 3]},rue {i}" for i in range(200)]
    folder = tmp_path / "parts.csv"
    folder.mkdir()
    (folder / "part-0.csv").write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    with pytest.raises(SparkUnavailable, match="could not decode as UTF-8"):
        prepare_release(accented_plan(), folder, tmp_path / "home", spark=on_spark, accept_data_problems=True)
    assert not (tmp_path / "home" / "ledgers").exists() or not any(
        (tmp_path / "home" / "ledgers").rglob("*.jsonl")
    )


def test_a_latin1_csv_folder_with_its_encoding_is_its_files_dataset(
    tmp_path: Path, spark: Any, on_spark: Any
) -> None:
    """With --encoding latin-1 Spark decodes the folder's CSV as the loader decodes the file: the same dataset (its
    budget shared) and the same statistics."""
    plan, folder, home, first, here = latin1_released(tmp_path)
    by_spark = prepare_release(
        plan, folder, home, spark=on_spark, accept_data_problems=True, encoding="latin-1"
    )
    try:
        assert by_spark.ledger.dataset == first.entry.dataset
        assert by_spark.exacts == here.exacts
    finally:
        by_spark.close()
