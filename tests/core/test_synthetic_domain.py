"""Issue #34 item 6: a synthetic table's values stay within their column's bounds, categories and level, no
missing level is invented, an int column of at most 100 values gets one level per value, values keep their
column's precision, and the report's interval column says what a synthetic table's row is.

Each test failed on the code before (fc460ff); see the commit message. The levels are checked against the
documented encoding rule, written out here: level i of a numeric column holds [e_i, e_i+1), the first level
from the lower bound, the last up to the upper bound included.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.cli import main as cli_main
from dpdesk.core.dp import synthetic as syn
from dpdesk.core.dp.statistics import synthetic as stat
from dpdesk.core.plan.reader import parse_plan

#: Every column type, bin layout and bound: default bins (int of 7, 19, 100 and 1001 values, floats), declared
#: bins with a level holding one whole number (first, middle and last), half-integer edges (one level per value
#: on a wider column), negative bounds, a float bin much narrower than the others, and categories.
COLUMNS: dict[str, dict[str, Any]] = {
    "year": {"type": "int", "bounds": [2003, 2009]},
    "education": {"type": "int", "bounds": [0, 18]},
    "age": {"type": "int", "bounds": [0, 99]},
    "wide": {"type": "int", "bounds": [0, 1000]},
    "one": {"type": "int", "bounds": [-5, 5]},
    "half": {"type": "int", "bounds": [1, 5]},
    "lastone": {"type": "int", "bounds": [0, 10]},
    "share": {"type": "float", "bounds": [0, 1]},
    "wage": {"type": "float", "bounds": [0, 5000]},
    "temp": {"type": "float", "bounds": [-2.5, 7.25]},
    "narrow": {"type": "float", "bounds": [0, 10]},
    "region": {"type": "category", "categories": ["north", "south", "east", "west"]},
}
BINS: dict[str, list[float]] = {
    "one": [-5, 0, 1, 5],  # the level [0, 1) holds 0 alone
    "half": [1, 1.5, 2.5, 3.5, 4.5, 5],  # one level per value: 1, 2, 3, 4, 5
    "lastone": [0, 3, 10],  # the last level [3, 10] up to the bound
    "wage": [0, 500, 1000, 2000, 5000],
    "narrow": [0, 0.001, 5, 10],
}


def plan_for(names: list[str], columns: dict[str, dict[str, Any]] | None = None) -> Any:
    return parse_plan(plan_dict(names, columns))


def plan_dict(names: list[str], columns: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    cols = columns or COLUMNS
    return {
        "version": 1,
        "title": "domain",
        "budget": {"epsilon": 5.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {n: cols[n] for n in names},
        "queries": [
            {
                "name": "t",
                "statistic": "synthetic",
                "columns": names,
                "epsilon": 1.0,
                "delta": 1e-6,
                **(
                    {"bins": {n: BINS[n] for n in names if n in BINS}}
                    if any(n in BINS for n in names)
                    else {}
                ),
            }
        ],
    }


def level_range(col: dict[str, Any], edges: tuple[float, ...], level: int) -> tuple[float, float, bool]:
    """(start, stop, stop included) of a numeric level by the encoding rule."""
    lo, hi = col["bounds"]
    start = lo if level == 0 else edges[level]
    last = level == len(edges) - 2
    return start, (hi if last else edges[level + 1]), last


def released_with_every_level(attrs: list[syn.Attribute]) -> syn.Measurements:
    """Released marginals (any released values will do: the table is post-processing of them) that put rows
    in every level of every column: a chain of two-way marginals with the same count in every cell."""
    d = len(attrs)
    sizes = tuple(a.size for a in attrs)
    split = syn.split_budget(1.0, 1e-6, d)
    one = tuple(
        syn.Measurement((i,), (s,), (100,) * s, split.one_way_scale, True) for i, s in enumerate(sizes)
    )
    pairs = tuple((i, i + 1) for i in range(d - 1))
    two = tuple(
        syn.Measurement(
            p, (sizes[p[0]], sizes[p[1]]), (7,) * (sizes[p[0]] * sizes[p[1]]), split.two_way_scale, True
        )
        for p in pairs
    )
    return syn.Measurements(split, sizes, one, pairs, two)


NAMES = list(COLUMNS)
#: two columns at a time (a pair of wide int columns would be refused); each pair's table drawn once
PAIRS = [NAMES[i : i + 2] for i in range(0, len(NAMES), 2)]


@pytest.mark.parametrize("names", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_every_synthetic_value_lies_within_its_bounds_categories_and_level(names: list[str]) -> None:
    """Every value of the table (written to its CSV and read back) is a declared category or a number within
    the column's bounds and inside the level it was drawn for (so the report's counts per level, counted on the
    levels, are the CSV's own): on the old code the year's last level "[2009, 2009]" drew 2010."""
    plan = plan_for(names)
    (spec,) = plan.queries
    attrs = stat.attributes(spec, plan.columns)
    released = released_with_every_level(attrs)
    table, codes = stat.synthetic_table(attrs, released, 4000, 11)
    rows = list(csv.reader(io.StringIO(stat.table_csv(attrs, table).decode("utf-8"))))[1:]
    for j, a in enumerate(attrs):
        col = plan.columns[a.name]
        cells = [r[j] for r in rows]
        assert set(codes[:, j].tolist()) == set(range(a.size))  # every level drawn
        if col.type == "category":
            assert set(cells) == set(col.categories or ())  # no blank cell: no missing level
            continue
        lo, hi = COLUMNS[a.name]["bounds"]
        out = [c for c in cells if c and not lo <= float(c) <= hi]
        assert not out, (a.name, sorted(set(out))[:5])
        assert "" not in cells  # every level is a value (no missing level: the rule is "drop")
        values = [float(c) for c in cells]
        report_counts = np.bincount(codes[:, j], minlength=a.size)
        for level in range(a.size):
            start, stop, closed = level_range(COLUMNS[a.name], a.edges, level)
            inside = [v for v in values if start <= v and (v <= stop if closed else v < stop)]
            drawn = [v for v, c in zip(values, codes[:, j].tolist(), strict=True) if c == level]
            assert all(start <= v and (v <= stop if closed else v < stop) for v in drawn), (a.name, level)
            assert len(inside) == report_counts[level], (a.name, a.labels()[level])


def test_an_int_level_holding_one_value_writes_that_value() -> None:
    """A bin holding one whole number (the year's per-value levels, [0, 1) of 'one', the half-integer levels)
    writes that number on every row: 2009 for the last year, never 2010."""
    plan = plan_for(["year", "one", "half"])
    (spec,) = plan.queries
    attrs = stat.attributes(spec, plan.columns)
    table, codes = stat.synthetic_table(attrs, released_with_every_level(attrs), 3000, 5)
    year = [r[0] for r in table]
    assert {y for y, c in zip(year, codes[:, 0].tolist(), strict=True) if c == attrs[0].n_values - 1} == {
        2009
    }
    assert set(year) == set(range(2003, 2010))
    one = {r[1] for r, c in zip(table, codes[:, 1].tolist(), strict=True) if c == 1}
    assert one == {0}
    assert all(r[2] == c + 1 for r, c in zip(table, codes[:, 2].tolist(), strict=True))


def test_a_column_gets_no_missing_level_and_drop_rows_are_left_out_of_every_marginal(tmp_path: Path) -> None:
    """The domain is read off the plan alone: no column gets a missing level, whatever the data hold (old code:
    every "drop" column had one, whose noisy count survived the fit as blank cells). A row with a missing,
    unparsable or undeclared value in a "drop" column is left out of every marginal; an "impute" column's
    missing value is its imputed value."""
    from dpdesk.core.loading import load_table

    columns = {
        "a": {"type": "category", "categories": ["x", "y"]},  # drop (the default)
        "n": {"type": "int", "bounds": [0, 3]},  # drop
        "f": {"type": "float", "bounds": [0, 1], "missing": {"impute": 0.5}},
    }
    plan = plan_for(["a", "n", "f"], columns)
    (spec,) = plan.queries
    attrs = stat.attributes(spec, plan.columns)
    assert [a.missing_level for a in attrs] == [False, False, False]
    assert [a.size for a in attrs] == [2, 4, 10]
    data = tmp_path / "t.csv"
    data.write_text(
        "a,n,f\nx,0,0.05\ny,1,\n,2,0.95\nz,3,0.95\nx,,0.95\ny,two,0.95\nx,3,0.15\n", encoding="utf-8"
    )
    table = load_table(data, plan.columns)
    got_attrs, codes = stat.encode_table(spec, table, None)
    assert got_attrs == attrs
    # kept: rows 1, 2 (f imputed 0.5: level 5) and 7; left out: an empty a, an undeclared a, an empty n, "two"
    assert codes.tolist() == [[0, 0, 0], [1, 1, 5], [0, 3, 1]]
    keep = np.array([False, True, True, True, True, True, True])
    assert stat.encode_table(spec, table, keep)[1].tolist() == [[1, 1, 5], [0, 3, 1]]


@pytest.mark.slow
def test_a_released_table_without_missing_values_has_no_blank_cell(tmp_path: Path, dpdesk_home: Path) -> None:
    """A release of a table without missing values (every rule "drop"): its CSV has no blank cell and its ledger
    entry no missing level (old code: 29-42 rows of blank cells on the Wage table; sizes one more per column)."""
    rng = np.random.Generator(np.random.PCG64(3))
    data = tmp_path / "wage.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["year", "education", "region"])
        for _ in range(1500):
            w.writerow(
                [int(rng.integers(2003, 2010)), int(rng.integers(0, 19)), rng.choice(["north", "south"])]
            )
    columns = {
        "year": COLUMNS["year"],
        "education": COLUMNS["education"],
        "region": {"type": "category", "categories": ["north", "south"]},
    }
    plan = plan_dict(["year", "education", "region"], columns)
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    assert cli_main(["release", str(p), "--data", str(data), "--out", str(tmp_path / "out")]) == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "t.csv").read_text(encoding="utf-8"))))[1:]
    assert rows and all(all(c != "" for c in r) for r in rows)
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    spend = next(
        e for e in map(json.loads, ledger.read_text(encoding="utf-8").splitlines()) if e["type"] == "spend"
    )
    fields = spend["synthetic"]["t"]
    assert fields["sizes"] == [7, 19, 2] and fields["domain"] == syn.DOMAIN_VERSION
    years = {int(r[0]) for r in rows}
    assert years <= set(range(2003, 2010))


def test_an_int_column_of_at_most_100_values_gets_one_level_per_value() -> None:
    """education (0-18) gets 19 levels, one per value, and a column of 100 values 100; 101 values get the
    equal-width bins. With noiseless marginals (37% of the rows at 12) the table holds 12 on the floor or
    ceiling of 37% of its rows (old code: 10 bins, [11, 13) holding 11 and 12, so about half as many)."""
    columns = {
        **COLUMNS,
        "hundred": {"type": "int", "bounds": [1, 100]},
        "more": {"type": "int", "bounds": [0, 100]},
    }
    plan = plan_for(["education", "hundred", "more"], columns)
    (spec,) = plan.queries
    edu, hundred, more = stat.attributes(spec, plan.columns)
    assert edu.size == 19 and all(edu.labels()[v].startswith(f"[{v}, ") for v in range(19))
    assert hundred.size == 100 and more.size == syn.DEFAULT_BINS
    counts = [3] * 19
    counts[12] = 37
    counts[0] += 100 - sum(counts)  # 100 rows in all, 37 at 12
    # consistent noiseless marginals (total 1,000): education 10 x counts, 'more' 100 per bin, the two-way
    # table counts[a] in each cell
    split = syn.split_budget(1.0, 1e-6, 2)
    released = syn.Measurements(
        split,
        (19, 10),
        (
            syn.Measurement((0,), (19,), tuple(10 * c for c in counts), split.one_way_scale, True),
            syn.Measurement((1,), (10,), (100,) * 10, split.one_way_scale, True),
        ),
        ((0, 1),),
        (
            syn.Measurement(
                (0, 1), (19, 10), tuple(c for c in counts for _ in range(10)), split.two_way_scale, True
            ),
        ),
    )
    n = 1000
    table, _codes = stat.synthetic_table([edu, more], released, n, 3)
    twelve = sum(1 for r in table if r[0] == 12)
    assert math.floor(0.37 * n) - 1 <= twelve <= math.ceil(0.37 * n) + 1, twelve


def test_two_wide_int_columns_fall_back_to_the_bins_a_plan_had_before() -> None:
    """Two int columns of 100 values would make a 10,000-cell two-way table (over the limit): they get the
    equal-width bins instead, so a plan the old code accepted is accepted still (a stored plan re-costs)."""
    columns = {"p": {"type": "int", "bounds": [0, 99]}, "q": {"type": "int", "bounds": [0, 99]}}
    plan = plan_for(["p", "q"], columns)
    (spec,) = plan.queries
    assert [a.size for a in stat.attributes(spec, plan.columns)] == [syn.DEFAULT_BINS] * 2


def test_values_keep_their_column_s_precision() -> None:
    """An int column's values are whole numbers written as such; a float column's carry the decimals of its
    bounds and edges, or just enough for 100 steps across its narrowest level: whole numbers for wage
    (0, 500, ..., 5000), at most 3 decimals on [0, 1] in bins of 0.1 (old code: 6 decimals), yet spread inside
    their level (not all on its edge)."""
    plan = plan_for(["wage", "share", "education"])
    (spec,) = plan.queries
    attrs = stat.attributes(spec, plan.columns)
    table, codes = stat.synthetic_table(attrs, released_with_every_level(attrs), 3000, 8)
    rows = list(csv.reader(io.StringIO(stat.table_csv(attrs, table).decode("utf-8"))))[1:]
    wage, share, education = zip(*rows, strict=True)
    assert all(c.endswith(".0") and c[:-2].isdigit() for c in wage if c), wage[:5]
    assert all(len(c.split(".")[1]) <= 3 for c in share if c), share[:5]
    assert all(c.isdigit() for c in education) and all(isinstance(r[2], int) for r in table)
    # spread inside a level: the widest wage level [2000, 5000] holds hundreds of distinct whole numbers
    top = {c for c, code in zip(wage, codes[:, 0].tolist(), strict=True) if code == 3}
    assert len(top) > 100


@pytest.mark.slow
def test_the_report_s_interval_column_names_a_synthetic_table_s_section(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    """The report's 95% interval column for a synthetic table refers to its section (old code: "(a chosen
    candidate)", which it is not)."""
    from tests.core.test_package import pdf_text

    rng = np.random.Generator(np.random.PCG64(4))
    data = tmp_path / "d.csv"
    data.write_text(
        "year,region\n" + "".join(f"{2003 + int(rng.integers(0, 7))},north\n" for _ in range(300)),
        encoding="utf-8",
    )
    plan = plan_dict(["year", "region"])
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    assert cli_main(["release", str(p), "--data", str(data), "--out", str(tmp_path / "out")]) == 0
    text = " ".join(pdf_text(tmp_path / "out" / "report.pdf").split())
    assert "a synthetic table: see its section" in text
    assert "(a chosen candidate)" not in text
    assert stat.STATISTIC.no_interval() != "(a chosen candidate)"


def test_a_release_from_before_regenerates_with_the_domain_it_was_made_with() -> None:
    """A ledger entry without ``domain`` (every release before version 2) is read with version 1's levels (a
    missing level for a "drop" column, 10 bins for education), so its table and its package's CSV are still
    what they were; a version-2 entry with version 2's."""
    plan = plan_for(["education", "region"])
    (spec,) = plan.queries
    old = stat.attributes(spec, plan.columns, 1)
    assert [a.size for a in old] == [syn.DEFAULT_BINS + 1, 5] and old[0].missing_level
    released = released_with_every_level(old)
    fields = {**stat.measurements_to_dict(released), "rows": 500, "seed": "21", "fit": 2}
    attrs, table = stat.regenerate(fields, spec, plan)
    assert attrs == old and stat.domain_version_of(fields) == 1
    assert any(r[0] is None for r in table)  # its missing level, as it was made
    new = stat.attributes(spec, plan.columns)
    fields2 = {
        **stat.measurements_to_dict(released_with_every_level(new)),
        "rows": 500,
        "seed": "21",
        "domain": 2,
    }
    attrs2, table2 = stat.regenerate(fields2, spec, plan)
    assert attrs2 == new and all(r[0] is not None for r in table2)
    with pytest.raises(ValueError):
        stat.attributes(spec, plan.columns, 3)
