"""The one type suggestion (:mod:`dpdesk.core.loading.suggest`): its rule, its sample, and its agreement with
the loader about what a number is. (tests/gui/test_app.py checks that the app and ``dpdesk suggest`` agree.)"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from dpdesk.core.loading import SAMPLE_ROWS, load_table, suggest_types
from dpdesk.core.loading.suggest import is_number, suggest_type
from dpdesk.core.model.spec import ColumnSpec

NUMBERS = "0 42 -7 +3 007 1. .5 1.5 -0.25 1e3 1E-3 +.5e+3 2.5e10 inf -inf Infinity INF NaN nan +nan -NAN"
WORDS = "1_000 １２ ٣ 1,5 1.2.3 --1 0x10 1e e3 . - + 12a a12 ∞ true 1e3.5 infinit nana"
TEXTS = [*NUMBERS.split(), *WORDS.split(), "", "1 000"]


@pytest.mark.parametrize("text", TEXTS)
def test_a_number_is_what_the_loaders_parser_reads_as_one(text: str) -> None:
    # the loader reads a number column's text with polars (strip, then a Float64 cast): the rule must agree
    parsed = pl.Series([text]).str.strip_chars().cast(pl.Float64, strict=False)[0]
    assert is_number(text) == (parsed is not None), text


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "", "  ", "-3", "+4"], "int"),
        (["1", "2.0"], "float"),
        (["1", "1e3"], "float"),
        ([".5", "7"], "float"),
        (["1", "nan", "3"], "float"),
        (["inf"], "float"),
        (["1", "x"], "category"),
        (["1_000", "2"], "category"),
        (["1,5", "2"], "category"),
        (["１２"], "category"),
        ([], "category"),
        (["", " "], "category"),
        (["北京", "1"], "category"),
    ],
)
def test_the_rule(values: list[str], expected: str) -> None:
    assert suggest_type(values) == expected


def test_a_column_suggested_as_a_number_loads_without_unparsable_values(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("i,f\n+3,1.\n007,.5\n-2,1e3\n,nan\n5,-INF\n", encoding="utf-8")
    assert suggest_types(p) == {"i": "int", "f": "float"}
    t = load_table(
        p,
        {
            "i": ColumnSpec("i", "int", bounds=(-10, 10)),
            "f": ColumnSpec("f", "float", bounds=(-10.0, 10.0)),
        },
    )
    assert t.report.issues["i"].unparsable == 0
    assert t.report.issues["f"].unparsable == 1  # nan: a number to the parser, missing to the loader


@pytest.mark.parametrize(("at", "expected"), [(SAMPLE_ROWS, "category"), (SAMPLE_ROWS + 1, "int")])
def test_the_sample_is_the_first_sample_rows_data_rows(tmp_path: Path, at: int, expected: str) -> None:
    rows = ["n/a" if r == at else str(r) for r in range(1, SAMPLE_ROWS + 50)]
    p = tmp_path / "t.csv"
    p.write_text("x\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert suggest_types(p) == {"x": expected}
