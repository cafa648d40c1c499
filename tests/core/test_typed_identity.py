"""The content identity, scheme 2 (issue 30, item 2): hashed from typed values in the load's own read.

A first release reads its file once: the loader computes the identity as it parses, and it is the same identity
a pass of its own computes from the file's text (same key, sketch and column sketches), whatever the declared
types. The same rows in another form keep the key; one changed cell changes it. A home whose datasets are known
by scheme-1 keys still recognises their re-saved copies, and each gets its scheme-2 key at its next release.
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from dpdesk.core.identity import recognition
from dpdesk.core.identity.recognition import compare, resolve
from dpdesk.core.ledger.contents import needs_scheme1
from dpdesk.core.loading import load_table
from dpdesk.core.loading import typed_identity as ti
from dpdesk.core.loading.identity import content_identity
from dpdesk.core.loading.typed_identity import CellHasher, Keys, content_identity2, text_cells
from dpdesk.core.model.spec import ColumnSpec
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.release.steps import release
from tests.conftest import SAMPLES

SECRET = bytes(range(32))
SAMPLE = SAMPLES / "census_sample.csv"
PLAN = SAMPLES / "cps_wages_plan.json"


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def _table(n: int, seed: int = 7) -> tuple[list[str], list[list[Any]]]:
    rng = random.Random(seed)
    header = ["region", "age", "wage", "note", "code", "pid"]
    rows = []
    for _ in range(n):
        rows.append(
            [
                rng.choice(["north", "south", "east", ""]),  # a declared category, some missing
                rng.choice([str(rng.randint(16, 90)), "", "007"]),  # a declared int
                rng.choice([f"{rng.uniform(0, 5000):.2f}", "12", "", "1e3"]),  # a declared float
                rng.choice(
                    ["a, quoted", "  spaced  ", "北京", "", "x" * rng.randint(1, 30)]
                ),  # undeclared text
                rng.choice(["1", "2.0", "3.5", "abc", ""]),  # undeclared, mixed
                f"p{rng.randint(0, n // 3)}",  # the id column
            ]
        )
    return header, rows


COLUMNS = {
    "region": ColumnSpec("region", "category", categories=("north", "south", "east")),
    "age": ColumnSpec("age", "int", bounds=(0, 120)),
    "wage": ColumnSpec("wage", "float", bounds=(0.0, 5000.0)),
}


def _same(a: Any, b: Any) -> None:
    assert a.key == b.key
    assert a.sketch == b.sketch
    assert a.columns == b.columns


@pytest.mark.parametrize("chunk", [7, 100_000])
def test_the_identity_computed_in_the_load_is_the_one_of_a_pass_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Declared categories, ints and floats as parsed, undeclared columns and the id column as text: the same
    key, sketch and column sketches as scheme 2 computed from the file's text alone (batches gathered in
    chunks of ``chunk`` rows, so that small chunks exercise the gathering)."""
    monkeypatch.setattr(ti, "CHUNK_ROWS", chunk)
    header, rows = _table(3000)
    path = write_csv(tmp_path / "t.csv", header, rows)
    table = load_table(path, COLUMNS, id_column="pid", identity_secret=SECRET)
    assert table.identity is not None and table.identity_secret == SECRET
    _same(table.identity, content_identity2(path, SECRET))
    assert table.identity.sketch.rows == 3000 and table.identity.sketch.scheme == 2
    assert table.identity.columns is not None and table.identity.columns.scheme == 2


def test_a_column_read_again_as_text_gives_the_same_identity(tmp_path: Path) -> None:
    """A word in a declared int column makes the loader read that column as text in a new attempt: the identity
    is of the new attempt's batches only (nothing of the first attempt counted twice)."""
    header, rows = _table(2000, seed=3)
    rows[1500][1] = "unknown"
    path = write_csv(tmp_path / "t.csv", header, rows)
    table = load_table(path, COLUMNS, id_column="pid", identity_secret=SECRET)
    assert table.report.issues["age"].unparsable == 1
    _same(table.identity, content_identity2(path, SECRET))


def test_the_same_rows_in_other_forms_have_the_same_key(tmp_path: Path) -> None:
    """Integer literals with zeros or signs, integral decimals and exponents, spaces, column and row order, and
    typed Parquet columns: one canonical table."""
    header = ["n", "x", "t"]
    base = [["7", "12", "a"], ["-3", "0.5", "b c"], ["", "1500.25", ""], ["7", "12", "a"]]
    variants = [["007", "12.0", " a "], ["-3", "5e-1", "b c"], ["", "1500.250", ""], ["+7", "1.2e1", "a"]]
    k = content_identity2(write_csv(tmp_path / "a.csv", header, base), SECRET).key
    assert content_identity2(write_csv(tmp_path / "b.csv", header, variants), SECRET).key == k
    moved = [[r[2], r[0], r[1]] for r in reversed(base)]
    assert content_identity2(write_csv(tmp_path / "c.csv", ["t", "n", "x"], moved), SECRET).key == k
    frame = pl.DataFrame(
        {"n": [7, -3, None, 7], "x": [12.0, 0.5, 1500.25, 12.0], "t": ["a", "b c", None, "a"]},
        schema={"n": pl.Int64, "x": pl.Float64, "t": pl.String},
    )
    frame.write_parquet(tmp_path / "d.parquet")
    assert content_identity2(tmp_path / "d.parquet", SECRET).key == k
    assert content_identity2(tmp_path / "a.csv", bytes(32)).key != k  # another home's secret: another key


def test_one_changed_cell_changes_the_key(tmp_path: Path) -> None:
    header = ["n", "x", "t"]
    base = [["1", "2.5", "a"], ["2", "3.5", "b"], ["3", "4.5", "c"]]
    keys = {content_identity2(write_csv(tmp_path / "base.csv", header, base), SECRET).key}
    for r in range(3):
        for c, new in enumerate(["9", "9.25", "z"]):
            rows = [list(row) for row in base]
            rows[r][c] = new
            keys.add(content_identity2(write_csv(tmp_path / f"{r}{c}.csv", header, rows), SECRET).key)
    swapped = [["2.5", "1", "a"], *base[1:]]  # two cells of one row swapped between columns
    keys.add(content_identity2(write_csv(tmp_path / "swap.csv", header, swapped), SECRET).key)
    keys.add(content_identity2(write_csv(tmp_path / "dup.csv", header, [*base, base[0]]), SECRET).key)
    keys.add(content_identity2(write_csv(tmp_path / "ren.csv", ["n", "x", "u"], base), SECRET).key)
    assert len(keys) == 1 + 9 + 3


TRICKY = [
    "0",
    "-0",
    "+5",
    "007",
    "1.0",
    "1.",
    "1e3",
    "-1.5e-3",
    "inf",
    "-inf",
    "nan",
    "NaN",
    "1e400",
    "0.1",
    "0.10",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "4503599627370497",
    "1_000",
    "0x10",
    "١٢",
    "1,5",
    " 3 ",
    "",
]


@pytest.mark.parametrize("cell", TRICKY)
def test_a_cell_a_typed_reader_accepts_hashes_as_its_text(cell: str) -> None:
    """Whatever polars' typed CSV reader accepts as an integer or a number is the value the text's canonical
    form gives: a column parsed as declared and the same column read as text are one identity."""
    keys = Keys(SECRET)
    hasher = CellHasher(keys, parsed_floats=True)
    as_text = text_cells(pl.Series([cell]), keys)
    for dtype in (pl.Int16, pl.Int64, pl.Float64):
        try:
            typed = pl.read_csv(f"x\n{cell}\n".encode(), schema={"x": dtype})
        except Exception:  # not accepted as this type: the loader reads it as text
            continue
        try:
            cells = hasher.series(typed.get_column("x"))
        except ti.NotExact:  # an integer of 2^53 or more parsed as binary64: computed from the text instead
            assert dtype == pl.Float64 and abs(float(cell)) >= 2**53
            continue
        lanes = [u if cells.index is None else u[cells.index] for u in cells.u]
        assert [int(lanes[0][0]), int(lanes[1][0])] == [int(as_text[0][0]), int(as_text[1][0])], dtype


def test_the_schemes_are_never_compared(tmp_path: Path) -> None:
    header, rows = _table(500)
    path = write_csv(tmp_path / "t.csv", header, rows)
    one, two = content_identity(path, SECRET), content_identity2(path, SECRET)
    assert compare(one.sketch, one.columns, one.sketch, one.columns) is not None
    assert compare(one.sketch, one.columns, two.sketch, two.columns) is None


def test_a_first_release_reads_the_file_once(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No pass of its own for the content identity: the loader's read computed it (this failed before scheme 2,
    when the first release of a file read it again as text)."""

    def refused(*_a: Any, **_kw: Any) -> Any:
        raise AssertionError("the file was read again for its content identity")

    monkeypatch.setattr(recognition, "content_identity", refused)
    monkeypatch.setattr(recognition, "content_identity2", refused, raising=False)
    data = shutil.copy(SAMPLE, tmp_path / "census.csv")
    result = release(load_plan(PLAN), data, dpdesk_home, resolve=True)
    assert result.entry is not None and result.resolution is not None and result.resolution.how == "new"
    record = json.loads(next((dpdesk_home / "identity" / "datasets").glob("ds-*.json")).read_text("utf-8"))
    assert [s.get("scheme") for s in record["contents"].values()] == [2]


def test_a_home_with_scheme_1_datasets_still_finds_their_copies(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset known by its scheme-1 key only (recorded by an older version) still owns a re-saved copy of its
    table: the copy's scheme-1 identity is computed too, and the dataset gets its scheme-2 key."""
    from dpdesk.core.release import steps

    data = shutil.copy(SAMPLE, tmp_path / "census.csv")
    with monkeypatch.context() as older:  # the version before scheme 2: scheme-1 identities only
        older.setattr(steps, "_load_secret", lambda _home, _path: None)
        older.setattr(
            recognition,
            "identities_of",
            lambda home, path, **kw: [recognition.identity_of(home, path, **kw)],
        )
        release(load_plan(PLAN), data, dpdesk_home, resolve=True)
    (dataset,) = [p.stem for p in (dpdesk_home / "identity" / "datasets").glob("ds-*.json")]
    assert needs_scheme1(dpdesk_home)
    lines = SAMPLE.read_text("utf-8").splitlines()
    copy = tmp_path / "copy.csv"
    copy.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n", encoding="utf-8")
    found = resolve(dpdesk_home, copy)
    assert (found.how, found.dataset) == ("content", dataset)
    assert not needs_scheme1(dpdesk_home)  # the dataset has its scheme-2 key now
    record = json.loads((dpdesk_home / "identity" / "datasets" / f"{dataset}.json").read_text("utf-8"))
    assert sorted(s.get("scheme", 1) for s in record["contents"].values()) == [1, 2]


def test_a_large_integer_in_a_float_column_is_read_from_its_text(tmp_path: Path) -> None:
    """``9007199254740993`` parsed as binary64 is ``9007199254740992``: the loader gives no identity then, and the
    release computes it from the text (two tables differing in that digit keep two keys)."""
    cols = {"x": ColumnSpec("x", "float", bounds=(0.0, 1e15))}
    a = load_table(write_csv(tmp_path / "a.csv", ["x"], [["9007199254740993"]]), cols, identity_secret=SECRET)
    assert a.identity is None and a.identity_secret is None
    b = write_csv(tmp_path / "b.csv", ["x"], [["9007199254740992"]])
    assert content_identity2(tmp_path / "a.csv", SECRET).key != content_identity2(b, SECRET).key


def test_a_large_integer_beside_other_cells_is_exact() -> None:
    """An integer literal beyond 2^53 in a text column that also holds text or missing cells hashes as that
    integer, as in a column of integers alone (found by the Spark identity's comparison: the literals went through
    float64, 9007199254740993 became ...992 and 2^63 - 1 overflowed)."""
    keys = Keys(SECRET)
    big = [9007199254740993, 2**63 - 1, -(2**63), 123]
    mixed = text_cells(pl.Series([str(v) for v in big] + ["x", None], dtype=pl.String), keys)
    alone = ti.int_cells(np.asarray(big, dtype=np.int64), keys)
    assert np.array_equal(mixed[0][:4], alone[0]) and np.array_equal(mixed[1][:4], alone[1])


def test_integer_cells_hash_as_their_values_whatever_their_width() -> None:
    """Int16, Int64 and a small-range column hashed once per value: the same cells."""
    keys = Keys(SECRET)
    hasher = CellHasher(keys)
    values = np.arange(-5000, 5000, dtype=np.int64)
    lanes = []
    for s in (pl.Series(values, dtype=pl.Int16), pl.Series(values, dtype=pl.Int64), pl.Series(values % 50)):
        cells = hasher.series(s)
        lanes.append([u if cells.index is None else u[cells.index] for u in cells.u])
    assert np.array_equal(lanes[0][0], lanes[1][0]) and np.array_equal(lanes[0][1], lanes[1][1])
    direct = ti.int_cells(values % 50, keys)
    assert np.array_equal(lanes[2][0], direct[0]) and np.array_equal(lanes[2][1], direct[1])


def test_rows_gathered_after_a_batch_in_flight_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches are gathered into chunks hashed in a thread: the rows gathered while a chunk is in flight are
    hashed before the result (a 40-row table in batches of 10, chunks of 25: 30 rows in flight, 10 gathered)."""
    monkeypatch.setattr(ti, "CHUNK_ROWS", 25)
    values = np.arange(40, dtype=np.int64)
    whole = ti.TypedIdentity(SECRET, ["n"])
    whole.submit([pl.Series(values)])
    parts = ti.TypedIdentity(SECRET, ["n"])
    for start in range(0, 40, 10):
        parts.submit([pl.Series(values[start : start + 10])])
    a, b = whole.result("x"), parts.result("x")
    assert a is not None and b is not None
    assert (b.sketch.rows, b.key) == (40, a.key)


def test_the_smallest_hashes_of_repeated_rows() -> None:
    """The bottom-k of a batch whose values repeat (a table of equal rows): every distinct value, ascending."""
    from dpdesk.core.loading.identity import bottom_k

    k = 16
    same = np.full(100_000, 7, dtype=np.uint64)
    assert bottom_k(np.zeros(0, dtype=np.uint64), same, k).tolist() == [7]
    mixed = np.concatenate([same, np.arange(1000, 0, -1, dtype=np.uint64)])
    assert bottom_k(np.zeros(0, dtype=np.uint64), mixed, k).tolist() == list(range(1, k + 1))


def test_a_file_written_to_during_the_load_gets_no_identity_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polars and the SHA-256 read the file each on their own: when it changed meanwhile (another inode, size or
    change time), the identity of the rows read is not taken for the identity of the bytes hashed."""
    from dpdesk.core.loading import csvfile

    header, rows = _table(500)
    path = write_csv(tmp_path / "t.csv", header, rows)
    states = iter([(1, 2, 3, 4), (1, 2, 3, 5)])  # the change time moved during the read
    monkeypatch.setattr(csvfile, "_file_state", lambda _p: next(states))
    table = load_table(path, COLUMNS, id_column="pid", identity_secret=SECRET)
    assert table.n_rows == 500 and table.identity is None and table.identity_secret is None
    monkeypatch.setattr(csvfile, "_file_state", lambda _p: (1, 2, 3, 4))
    assert load_table(path, COLUMNS, id_column="pid", identity_secret=SECRET).identity is not None


def test_a_later_release_of_an_unchanged_file_does_not_hash_it_again(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's identity is cached by its bytes: a later release of the same, unchanged file skips computing
    it in the load; a file written to since (its change time moves) is hashed again, and so is another file."""
    from dpdesk.core.loading import load as load_mod

    data = shutil.copy(SAMPLE, tmp_path / "census.csv")
    raw = json.loads(PLAN.read_text("utf-8"))
    raw["budget"]["epsilon"] = 10  # room for three releases
    (tmp_path / "plan.json").write_text(json.dumps(raw), encoding="utf-8")
    plan = load_plan(tmp_path / "plan.json")
    release(plan, data, dpdesk_home, resolve=True)
    asked: list[bool] = []
    real = load_mod.load_csv

    def watching(*a: Any, **kw: Any) -> Any:
        asked.append(kw.get("identity") is not None)
        return real(*a, **kw)

    monkeypatch.setattr(load_mod, "load_csv", watching)
    again = release(plan, data, dpdesk_home, resolve=True)
    assert asked == [False] and again.resolution is not None and again.resolution.how == "file"
    data.write_bytes(data.read_bytes())  # the same bytes, written again: another change time
    release(plan, data, dpdesk_home, resolve=True)
    assert asked == [False, True]
