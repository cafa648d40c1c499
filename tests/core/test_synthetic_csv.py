"""The synthetic table's CSV written from arrays (issue 30, item 3): byte for byte what dpdesk's one CSV writer
makes of the same rows, the same rows as the row-by-row table of the same seed, and drawn once per release (the
report counts the levels of the table the package wrote, it does not draw it again)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.cli import main as cli_main
from dpdesk.core.dp import synthetic as syn
from dpdesk.core.dp.statistics import synthetic as stat
from tests.core.test_synthetic_domain import plan_for, released_with_every_level
from tests.core.test_synthetic_query import DATA, plan_dict

#: labels a spreadsheet would run, that the csv module quotes, or that are not ASCII
LABELS = (
    "a\rb",
    'say "hi"',
    "x,y",
    "=HYPERLINK(1)",
    "-5",
    "+x",
    "x\r\ny",
    "line\nbreak",
    "中文",
    "@me",
    "plain",
)
#: floats on both sides of every limit of the fast path (1e-4, 1e16, rounding to 6 decimals), and signed zeros
FLOATS = (
    0.0,
    -0.0,
    1e-4,
    -1e-4,
    9.9e-5,
    1e-05,
    2.5e-06,
    -5e-05,
    1e-06,
    4e-07,
    0.1234567891,
    -2.0000004,
    0.30000000000000004,
    123456.789,
    869.0,
    -3.25,
    9999999999999998.0,
    1e16,
    -1.5e20,
    1e300,
    1234567890.123456,
    5000.0,
)
INTS = (0, -1, 7, 2**53 - 1, -(2**53) + 1, 10**15)
BIG_INTS = (2**60, -(2**62), 3)


def _table(n: int, seed: int) -> tuple[list[syn.Attribute], list[np.ndarray], np.ndarray, list[list[object]]]:
    """A table with every awkward cell, as arrays (what the package writes from) and as the rows
    :func:`stat.synthetic_table` would give for them (what the one CSV writer was given before)."""
    rng = np.random.default_rng(seed)
    attrs = [
        syn.Attribute("=cmd", "category", categories=LABELS, missing_level=True, version=1),
        syn.Attribute("f", "float", edges=(0.0, 1.0, 2.0), bounds=(0.0, 2.0), missing_level=True, version=1),
        syn.Attribute("i,j", "int", edges=(0.0, 5.0, 10.0), bounds=(0.0, 10.0)),
        syn.Attribute("big", "int", edges=(0.0, 1.0), bounds=(0.0, 1.0)),
        syn.Attribute("g", "float", edges=(0.0, 1.0), bounds=(0.0, 1.0)),
    ]
    codes = np.stack(
        [
            rng.integers(0, len(LABELS) + 1, n),
            rng.integers(0, 3, n),
            rng.integers(0, 2, n),
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64),
        ],
        axis=1,
    ).astype(np.int64)
    floats = np.array(FLOATS)[rng.integers(0, len(FLOATS), n)]
    floats[: min(n, len(FLOATS))] = FLOATS[: min(n, len(FLOATS))]
    ints = np.array(INTS, dtype=np.float64)[rng.integers(0, len(INTS), n)]
    big = np.array(BIG_INTS, dtype=np.float64)[rng.integers(0, len(BIG_INTS), n)]
    plain = rng.integers(0, 1000, n) / 1000.0
    values = [codes[:, 0].astype(np.float64), floats, ints, big, plain]
    rows: list[list[object]] = []
    for k in range(n):
        c, f = int(codes[k, 0]), int(codes[k, 1])
        rows.append(
            [
                LABELS[c] if c < len(LABELS) else None,
                None if f >= 2 else float(floats[k]),
                int(ints[k]),
                int(big[k]),
                float(plain[k]),
            ]
        )
    return attrs, values, codes, rows


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize(("n", "seed"), [(0, 1), (1, 2), (len(FLOATS), 3), (3000, 4)])
def test_the_csv_from_arrays_is_byte_for_byte_the_one_csv_writer_s(n: int, seed: int, bom: bool) -> None:
    """Labels quoted and neutralised as release.csv's, missing cells empty, floats as repr(round(v, 6)) (1e-05,
    not 0.00001; 1e+16; an unrounded float rounded), ints past 2^53 whole: the bytes of the rows' CSV."""
    attrs, values, codes, rows = _table(n, seed)
    data = stat.columns_csv(attrs, values, codes, bom=bom)
    assert data == stat.table_csv(attrs, rows, bom=bom)
    parsed = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert len(parsed) == n + 1 and parsed[0][0] == "'=cmd"


def test_small_and_large_floats_are_written_as_python_writes_them() -> None:
    """The cells where polars' text and Python's differ are Python's (a direct check of the fast path's limits)."""
    attrs = [
        syn.Attribute("x", "float", edges=(0.0, 1.0), bounds=(0.0, 1.0)),
        syn.Attribute("y", "int", edges=(0.0, 1.0), bounds=(0.0, 1.0)),
    ]
    xs = np.array([1e-05, 2.5e-06, 0.0001, 1e16, 0.1234567891, 2**60 + 0.0])
    codes = np.zeros((len(xs), 2), dtype=np.int64)
    data = stat.columns_csv(attrs, [xs, np.array([2.0**60] * len(xs))], codes).decode()
    cells = [line.split(",") for line in data.splitlines()[1:]]
    assert [c[0] for c in cells] == [repr(round(float(x), 6)) for x in xs]
    assert cells[0][0] == "1e-05" and cells[3][0] == "1e+16" and cells[4][0] == "0.123457"  # not 0.00001
    assert {c[1] for c in cells} == {str(2**60)}


@pytest.mark.parametrize("version", [1, 2])
def test_the_arrays_are_the_rows_of_the_same_seed(version: int) -> None:
    """:func:`stat.synthetic_columns` draws :func:`stat.synthetic_table`'s table (the same levels and values from the
    same seed, under either domain version), and its counts per level are the table's."""
    plan = plan_for(["education", "region", "wage"])
    (spec,) = plan.queries
    attrs = stat.attributes(spec, plan.columns, version)
    released = released_with_every_level(attrs)
    rows, codes = stat.synthetic_table(attrs, released, 2500, 99)
    table = stat.synthetic_columns(attrs, released, 2500, 99)
    assert (table.codes == codes).all() and table.n_rows == 2500
    assert table.csv() == stat.table_csv(attrs, rows)
    assert table.csv(bom=True) == stat.table_csv(attrs, rows, bom=True)
    assert table.level_counts() == [
        tuple(int((codes[:, j] == v).sum()) for v in range(a.size)) for j, a in enumerate(attrs)
    ]
    assert stat.synthetic_level_counts(attrs, released, 2500, 99) == table.level_counts()
    assert stat.synthetic_columns(attrs, released, 2500, 100).csv() != table.csv()  # the seed matters


@pytest.mark.slow
def test_a_release_draws_its_synthetic_table_once_and_reports_its_levels(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package writes the table and the report shows that table's rows per level: one draw per release (the
    report no longer draws the table a second time), with the counts of the CSV in the package."""
    draws: list[int] = []
    real_sample = syn.sample_codes

    def sample(model: Any, n: int, rng: Any) -> np.ndarray:
        draws.append(n)
        return real_sample(model, n, rng)

    monkeypatch.setattr(syn, "sample_codes", sample)
    from dpdesk.core.publish import report, synthetic_report

    shown: list[Any] = []
    real_section = synthetic_report.synthetic_section

    def section(*args: Any) -> list[Any]:
        shown.append(args[-1])
        return real_section(*args)

    monkeypatch.setattr(report, "synthetic_section", section)
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan_dict()), encoding="utf-8")
    assert cli_main(["release", str(p), "--data", str(DATA), "--out", str(tmp_path / "out")]) == 0
    assert len(draws) == 1
    (counts,) = shown
    spend = next(
        e
        for e in map(json.loads, next((dpdesk_home / "ledgers").glob("*.jsonl")).read_text().splitlines())
        if e["type"] == "spend"
    )
    fields = spend["synthetic"]["people table"]
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / fields["file"]).read_text(encoding="utf-8"))))[1:]
    assert len(rows) == fields["rows"] == sum(counts[0])
    by_label = [sum(1 for r in rows if r[2] == label) for label in ("northeast", "midwest", "south", "west")]
    assert list(counts[2]) == by_label


@pytest.mark.parametrize("rows", [1, 7, 2999, 3000, 3001])
def test_the_csv_is_the_same_written_in_slices_of_any_size(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CSV is formatted CSV_ROWS rows at a time (bounded memory): every slicing gives the same bytes, each row
    once and in order."""
    attrs, values, codes, table = _table(3000, 5)
    monkeypatch.setattr(stat, "CSV_ROWS", rows)
    assert stat.columns_csv(attrs, values, codes, bom=True) == stat.table_csv(attrs, table, bom=True)
