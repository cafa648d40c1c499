"""Tables larger than memory: the streaming pass gives the in-memory path's exact aggregates, bit for bit."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.errors import InputError, UsageError
from dpdesk.core.dp import aggregates as agg
from dpdesk.core.dp import statistics
from dpdesk.core.dp.bounding import derive_key
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.loading import Table, csvfile, load_table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import streaming as st
from dpdesk.core.release.datacheck import check_data


def make_plan(xtype: str, missing: Any, *, id_column: str | None = None, k: int = 2) -> Plan:
    """Every statistic's public examples on a numeric column x in [-7, 3] and a category column g (but the
    synthesiser's, which needs its table whole and is refused when streaming: see test_synthetic_query.py)."""
    queries = []
    for name in statistics.names():
        if statistics.get(name).composite:
            continue
        for qname, q in statistics.get(name).examples((-7.0, 3.0)).items():
            queries.append({"name": qname, "epsilon": 1.0, **q})
    unit: dict[str, Any] = {"neighbouring": "add_remove"}
    if id_column is not None:
        unit.update(id_column=id_column, max_rows_per_person=k)
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1000.0},
            "privacy_unit": unit,
            "columns": {
                "x": {"type": xtype, "bounds": [-7, 3], "missing": missing},
                "g": {"type": "category", "categories": ["a", "b", "c"]},
            },
            "queries": queries,
        }
    )


def write_csv(path: Path, n: int, seed: int, xtype: str, ids: list[str] | None = None) -> None:
    """Test data (numpy's generator, test only): values beyond the bounds (clipped), empty fields, empty
    categories, an undeclared column."""
    rng = np.random.default_rng(seed)
    if xtype == "int":
        xs = [str(v) for v in rng.integers(-10, 7, n)]
    else:
        xs = [repr(float(v)) for v in np.round(rng.uniform(-9.0, 5.0, n), 3)]
        xs = [v if rng.random() > 0.1 else "-4.5" for v in xs]  # ties at a candidate and a bin edge
    for i in rng.choice(n, n // 10, replace=False):
        xs[i] = ""
    gs = [["a", "b", "c"][v] for v in rng.integers(0, 3, n)]
    for i in rng.choice(n, n // 20, replace=False):
        gs[i] = ""
    lines = ["pid,x,g,other"] if ids else ["x,g,other"]
    for i in range(n):
        fields = [xs[i], gs[i], "zz"]
        lines.append(",".join(([ids[i]] if ids else []) + fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def in_memory(plan: Plan, table: Table) -> list[agg.Exact]:
    keep = np.ones(table.n_rows, dtype=bool)
    return [agg.exact_statistic(d, table, keep, plan.columns) for d in design_plan(plan)]


def as_tuple(exacts: list[agg.Exact]) -> list[tuple[Any, Any]]:
    # utilities compared as their exact bits (repr of a float is round-trip exact)
    return [(e.vectors, None if e.utilities is None else [repr(u) for u in e.utilities]) for e in exacts]


def batches(table: Table, size: int) -> list[Table]:
    out = []
    for start in range(0, table.n_rows, size):
        stop = min(table.n_rows, start + size)
        cols = {
            n: type(c)(
                c.spec, c.values[start:stop], None if c.missing_mask is None else c.missing_mask[start:stop]
            )
            for n, c in table.columns.items()
        }
        out.append(Table(table.path, "", stop - start, cols, report=table.report))
    return out


#: a bounding key for these tests (a release derives its own from its home's secret)
KEY = derive_key(b"streaming tests")

CASES = [("float", "drop"), ("float", {"impute": 0.5}), ("int", "drop"), ("int", {"impute": -2})]


@pytest.mark.parametrize("xtype,missing", CASES)
@pytest.mark.parametrize("size", [1, 7, 333, 1000, 4096])
def test_merged_batches_give_the_in_memory_aggregates_bit_for_bit(
    tmp_path: Path, xtype: str, missing: Any, size: int
) -> None:
    n = 1000 if size > 1 else 150  # batches of one row: fewer rows, same checks
    plan = make_plan(xtype, missing)
    path = tmp_path / "t.csv"
    write_csv(path, n, 7, xtype)
    table = load_table(path, plan.columns)
    want = in_memory(plan, table)
    sink = st.StreamedAggregates(plan, design_plan(plan))
    for b in batches(table, size):
        sink.add(b)
    assert as_tuple(sink.exacts()) == as_tuple(want)
    assert sink.rows == n


@pytest.mark.parametrize("xtype,missing", CASES)
@pytest.mark.parametrize("block_reader", [False, True])
def test_a_streamed_file_gives_the_loaded_files_aggregates_and_data_check(
    tmp_path: Path, xtype: str, missing: Any, block_reader: bool, monkeypatch: Any
) -> None:
    """Through the readers themselves (polars' streaming reader and the block reader), with small blocks."""
    monkeypatch.setattr(csvfile, "STREAM_UTF8", not block_reader)
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 4096)  # many blocks: rows split across reads
    monkeypatch.setenv("POLARS_CSV_CHUNK_SIZE", "4096")
    plan = make_plan(xtype, missing)
    path = tmp_path / "t.csv"
    write_csv(path, 5000, 11, xtype)
    table = load_table(path, plan.columns)
    streamed = st.load_for_release(plan, path, force_stream=True)
    assert isinstance(streamed.streamed, st.StreamedAggregates)
    assert all(len(c.values) == 0 for c in streamed.columns.values())  # nothing of the table kept
    assert streamed.sha256 == table.sha256 and streamed.n_rows == table.n_rows
    assert check_data(streamed, plan) == check_data(table, plan)
    exacts = st.streamed_exacts(streamed)
    assert exacts is not None and as_tuple(exacts) == as_tuple(in_memory(plan, table))


def test_a_streamed_parquet_file_gives_the_same_aggregates(tmp_path: Path) -> None:
    import polars as pl

    plan = make_plan("float", "drop")
    path = tmp_path / "t.csv"
    write_csv(path, 3000, 5, "float")
    pq = tmp_path / "t.parquet"
    pl.read_csv(path).write_parquet(pq, row_group_size=700)
    table = load_table(pq, plan.columns)
    streamed = st.load_for_release(plan, pq, force_stream=True)
    assert streamed.sha256 == table.sha256
    exacts = st.streamed_exacts(streamed)
    assert exacts is not None and as_tuple(exacts) == as_tuple(in_memory(plan, table))


def person_ids(n: int, seed: int, per_person: int) -> list[str]:
    rng = np.random.default_rng(seed)
    ids = [f"p{i // per_person}" for i in range(n)]
    ids = [ids[i] for i in rng.permutation(n)]
    for i in rng.choice(n, n // 50, replace=False):
        ids[i] = ""  # rows without an id are dropped, as in memory
    return ids


def test_streamed_bounding_by_person_keeps_the_aggregates_when_no_one_has_more_than_k_rows(
    tmp_path: Path,
) -> None:
    plan = make_plan("float", "drop", id_column="pid", k=2)
    path = tmp_path / "t.csv"
    write_csv(path, 4000, 3, "float", person_ids(4000, 4, 2))
    table = load_table(path, plan.columns, id_column="pid")
    keep = agg.bound_rows_per_person(table, 2, KEY)  # every id has at most 2 rows: keeps every row with an id
    want = [agg.exact_statistic(d, table, keep, plan.columns) for d in design_plan(plan)]
    sink = st.StreamedAggregates(plan, design_plan(plan), n_partitions=5)
    for b in batches_with_ids(table, 333):
        sink.add(b)
    folder = sink._parts.folder if sink._parts is not None else None
    assert folder is not None and folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700
    assert as_tuple(sink.exacts(key=KEY)) == as_tuple(want)
    assert not folder.exists()  # the partition files are gone once aggregated


def batches_with_ids(table: Table, size: int) -> list[Table]:
    out = batches(table, size)
    assert table.ids is not None and table.ids_missing is not None
    for i, b in enumerate(out):
        b.ids = table.ids[i * size : i * size + b.n_rows]
        b.ids_missing = table.ids_missing[i * size : i * size + b.n_rows]
    return out


def test_streamed_bounding_keeps_at_most_k_rows_per_person(tmp_path: Path, monkeypatch: Any) -> None:
    """Ids with up to 7 rows, k = 2: a count of kept rows by id (every row's g is its person's) shows at most
    k rows of each and exactly min(rows, k) per person, whichever partition they fell in."""
    plan = make_plan("float", "drop", id_column="pid", k=2)
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(9)  # test data only
    sizes = rng.integers(1, 8, 600)
    ids = [f"p{i}" for i, s in enumerate(sizes) for _ in range(s)]
    order = rng.permutation(len(ids))
    ids = [ids[i] for i in order]
    lines = ["pid,x,g"] + [f"{p},1.0,{'abc'[int(p[1:]) % 3]}" for p in ids]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept: Counter[str] = Counter()
    bound = agg.bound_rows_per_person

    def spy(table: Table, k: int, key: Any) -> np.ndarray:
        mask = bound(table, k, key)
        assert table.ids is not None
        for h in map(tuple, table.ids[mask].tolist()):
            kept[str(h)] += 1
        return mask

    monkeypatch.setattr(st, "bound_rows_per_person", spy)
    monkeypatch.setattr(st, "n_partitions", lambda *a: 7)  # a person's rows must all land in one of them
    streamed = st.load_for_release(plan, path, force_stream=True)
    assert isinstance(streamed.streamed, st.StreamedAggregates) and streamed.streamed.n_partitions == 7
    exacts = st.streamed_exacts(streamed, key=KEY)
    assert exacts is not None
    assert max(kept.values()) <= 2
    want_per_group = [0, 0, 0]
    for i, s in enumerate(sizes):
        want_per_group[i % 3] += min(int(s), 2)
    designs = design_plan(plan)
    count_by = next(e for d, e in zip(designs, exacts, strict=True) if d.spec.name == "count_by")
    assert count_by.vectors[0] == want_per_group
    assert sum(kept.values()) == sum(min(int(s), 2) for s in sizes)


def test_partition_files_are_removed_on_an_error(tmp_path: Path, monkeypatch: Any) -> None:
    plan = make_plan("float", "drop", id_column="pid", k=2)
    path = tmp_path / "t.csv"
    write_csv(path, 3000, 3, "float", person_ids(3000, 4, 2))
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
    monkeypatch.setattr(st.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with path.open("a", encoding="utf-8") as f:
        f.write('p1,"2.0,a\n')  # a quote never closed: the reader stops at the end, after many batches
    with pytest.raises(InputError):
        st.load_for_release(plan, path, force_stream=True)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_the_memory_limit_decides_the_path(tmp_path: Path) -> None:
    plan = make_plan("float", "drop")
    path = tmp_path / "t.csv"
    write_csv(path, 20000, 1, "float")
    est = st.memory_estimate(path, plan.columns, None)
    assert st.BASE_BYTES < est < st.BASE_BYTES + 20000 * 64
    assert st.load_for_release(plan, path, memory_limit=est).streamed is None
    assert isinstance(st.load_for_release(plan, path, memory_limit=est - 1).streamed, st.StreamedAggregates)


def test_parse_memory() -> None:
    assert st.parse_memory("512MiB") == 512 * 2**20
    assert st.parse_memory("2G") == 2 * 2**30
    assert st.parse_memory("1.5 GB") == 3 * 2**29
    assert st.parse_memory(str(300 * 2**20)) == 300 * 2**20
    for bad in ("lots", "10MiB", "-1G"):
        with pytest.raises(UsageError):
            st.parse_memory(bad)


def test_a_workbook_too_large_is_refused_with_a_reason(tmp_path: Path) -> None:
    plan = make_plan("float", "drop")
    path = tmp_path / "t.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(InputError, match="workbook"):
        st.load_for_release(plan, path, force_stream=True)


def test_a_table_streamed_for_another_plan_is_refused(tmp_path: Path) -> None:
    plan = make_plan("float", "drop")
    path = tmp_path / "t.csv"
    write_csv(path, 100, 1, "float")
    table = st.load_for_release(plan, path, force_stream=True)
    other = parse_plan({**json.loads(json.dumps(plan.to_dict())), "queries": plan.to_dict()["queries"][:2]})
    with pytest.raises(UsageError, match="another plan"):
        st.check_streamed(table, design_plan(other))
    st.check_streamed(table, design_plan(plan))
    assert os.path.exists(path)


@pytest.mark.slow
@pytest.mark.parametrize("xtype,missing", CASES)
def test_statistics_in_chunks_give_the_whole_tables_aggregates(
    tmp_path: Path, xtype: str, missing: Any, monkeypatch: Any
) -> None:
    """The in-memory statistics take a large table in chunks (their temporaries stay small): same bits."""
    plan = make_plan(xtype, missing)
    path = tmp_path / "t.csv"
    write_csv(path, 3000, 13, xtype)
    table = load_table(path, plan.columns)
    keep = np.random.default_rng(2).random(table.n_rows) < 0.9  # a row selector, as bounding by person makes
    designs = design_plan(plan)
    want = as_tuple([agg.exact_statistic(d, table, keep, plan.columns) for d in designs])
    for rows in (1, 97, 1000):
        monkeypatch.setattr(agg, "CHUNK_ROWS", rows)
        assert as_tuple([agg.exact_statistic(d, table, keep, plan.columns) for d in designs]) == want


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["drop", {"impute": 0.5}])
def test_the_statistics_make_no_whole_column_copies(missing: Any, monkeypatch: Any) -> None:
    """Peak memory beyond the table (numpy's allocations, traced) stays a fraction of one float64 column: the
    clipped, converted and kept copies are made chunk by chunk (issue 16: 719 -> 1,362 MiB at 30M rows)."""
    import tracemalloc

    from dpdesk.core.loading import Column

    monkeypatch.setattr(agg, "CHUNK_ROWS", 1 << 15, raising=False)
    plan = make_plan("float", missing)
    n = 1 << 21
    rng = np.random.default_rng(1)  # test data only
    x = rng.uniform(-9.0, 5.0, n)
    x[::97] = np.nan  # missing values: dropped (a mask) or imputed (a filled copy)
    g = rng.integers(-1, 3, n).astype(np.int16)
    table = Table("t", "", n, {"x": Column(plan.columns["x"], x), "g": Column(plan.columns["g"], g)})
    keep = np.ones(n, dtype=bool)
    keep[::5] = False  # a row selector: the kept rows' values would be a copy
    column_bytes = x.nbytes
    for d in design_plan(plan):
        tracemalloc.start()
        try:
            agg.exact_statistic(d, table, keep, plan.columns)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < column_bytes / 4, (d.spec.name, peak / column_bytes)


def test_partition_files_go_with_the_table_and_a_table_without_them_is_refused(tmp_path: Path) -> None:
    """A release that stops before its statistics (data problems, a cancel) removes the partition files; the
    table then cannot give statistics any more (it says to load it again); a dropped table takes its files."""
    import gc

    plan = make_plan("float", "drop", id_column="pid", k=2)
    path = tmp_path / "t.csv"
    write_csv(path, 500, 3, "float", person_ids(500, 4, 2))
    table = st.load_for_release(plan, path, force_stream=True)
    sink = table.streamed
    assert isinstance(sink, st.StreamedAggregates) and sink._parts is not None
    folder = sink._parts.folder
    st.close_streamed(table)
    assert not folder.exists()
    with pytest.raises(UsageError, match="load it again"):
        st.streamed_exacts(table, key=KEY)
    again = st.load_for_release(plan, path, force_stream=True)
    assert isinstance(again.streamed, st.StreamedAggregates) and again.streamed._parts is not None
    folder = again.streamed._parts.folder
    assert folder.exists()
    del again, sink, table
    gc.collect()
    assert not folder.exists()


@pytest.mark.parametrize("encoding", ["utf-16", "gb18030", "cp1252"])
def test_a_streamed_file_in_another_encoding_gives_the_same_aggregates(
    tmp_path: Path, encoding: str, monkeypatch: Any
) -> None:
    """Every encoding the loader reads streams too (through the block reader, in small blocks)."""
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 4096)
    plan = make_plan("int", "drop")
    utf8 = tmp_path / "t.csv"
    write_csv(utf8, 3000, 17, "int")
    path = tmp_path / f"t.{encoding}.csv"
    path.write_bytes(utf8.read_text(encoding="utf-8").encode(encoding))
    table = load_table(path, plan.columns, encoding=encoding)
    streamed = st.load_for_release(plan, path, force_stream=True, encoding=encoding)
    assert streamed.report.encoding == table.report.encoding and streamed.sha256 == table.sha256
    exacts = st.streamed_exacts(streamed)
    assert exacts is not None and as_tuple(exacts) == as_tuple(in_memory(plan, table))
    assert check_data(streamed, plan) == check_data(table, plan)


def test_a_partitioned_release_never_reaches_the_random_module(tmp_path: Path, monkeypatch: Any) -> None:
    """Partition folders are named from secrets, and the temporary folder is found without
    tempfile.gettempdir (its first call names a probe file with random's generator): a release runs with no
    non-cryptographic generator, partitioned or not (test_release_invariants checks the whole release)."""
    import random
    import tempfile

    def forbidden(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("random's generator reached a release")

    plan = make_plan("float", "drop", id_column="pid", k=2)
    path = tmp_path / "t.csv"
    write_csv(path, 3000, 3, "float", person_ids(3000, 4, 2))
    monkeypatch.setattr(tempfile, "tempdir", None)  # as in a fresh process
    monkeypatch.setattr(tempfile, "_name_sequence", None)
    monkeypatch.setattr(random, "Random", forbidden)
    monkeypatch.setattr(tempfile, "_RandomNameSequence", forbidden)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(st, "n_partitions", lambda *a: 4)
    streamed = st.load_for_release(plan, path, force_stream=True)
    assert isinstance(streamed.streamed, st.StreamedAggregates) and streamed.streamed.n_partitions == 4
    assert st.streamed_exacts(streamed, key=KEY) is not None
    assert not list(tmp_path.glob(st.PARTITIONS_PREFIX + "*"))  # removed once aggregated
