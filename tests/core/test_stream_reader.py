"""The streaming reader for UTF-8 CSV files, and when it hands over to the block reader.

(tests/core/test_data.py runs every loader test with both readers.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading import csvfile, load_table
from dpdesk.core.model.spec import ColumnSpec

CITY = ColumnSpec("city", "category", categories=("北京", "上海", "广州"))
AGE = ColumnSpec("age", "int", bounds=(0, 120))
WAGE = ColumnSpec("wage", "float", bounds=(0, 1000))
COLS = {"city": CITY, "age": AGE, "wage": WAGE}


def write(tmp_path: Path, name: str, content: str) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8"))
    return p


@pytest.fixture
def block_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the block reader was asked to read."""
    assert csvfile.STREAM_UTF8
    calls: list[Path] = []
    real = csvfile._read_csv_pieces

    def spy(pl: Any, src: Any, path: Path, *rest: Any) -> Any:
        calls.append(path)
        return real(pl, src, path, *rest)

    monkeypatch.setattr(csvfile, "_read_csv_pieces", spy)
    return calls


ROWS = [f"{['北京', '上海', '广州'][i % 3]},{i % 90},{i * 0.5}" for i in range(5000)]


def test_clean_utf8_is_streamed(tmp_path: Path, block_calls: list[Path]) -> None:
    clean = write(tmp_path, "clean.csv", "city,age,wage\n" + "\n".join(ROWS) + "\n")
    t = load_table(clean, COLS)
    assert block_calls == []
    assert t.n_rows == 5000 and t.report.lines() == []
    assert t.columns["wage"].values[4999] == 2499.5 and t.columns["age"].values[91] == 1
    assert t.columns["city"].values[:4].tolist() == [0, 1, 2, 0]


def test_bad_values_are_streamed_as_text_columns(tmp_path: Path, block_calls: list[Path]) -> None:
    # a word in a number column and an undeclared category: those columns are read again as text
    rows = list(ROWS)
    rows[3000] = "深圳,abc,1.5"
    dirty = write(tmp_path, "dirty.csv", "city,age,wage\n" + "\n".join(rows) + "\n")
    t = load_table(dirty, COLS)
    assert block_calls == [] and t.n_rows == 5000
    assert t.report.issues["age"].unparsable == 1 and t.report.issues["age"].first_problem == "line 3002"
    assert t.report.issues["city"].undeclared == 1 and t.columns["city"].values[3000] == -1
    assert t.columns["wage"].values[3000] == 1.5 and t.columns["age"].missing()[3000]


def test_blank_lines_and_ragged_lines_go_to_the_block_reader(tmp_path: Path, block_calls: list[Path]) -> None:
    blank = write(tmp_path, "blank.csv", "city,age,wage\n" + "\n".join(ROWS[:10]) + "\n\n" + ROWS[10] + "\n")
    assert load_table(blank, COLS).n_rows == 11
    assert block_calls == [blank]
    ragged = write(tmp_path, "ragged.csv", "city,age,wage\n" + ROWS[0] + ",extra\n")
    with pytest.raises(InputError, match="line 2"):
        load_table(ragged, COLS)
    assert block_calls == [blank, ragged]


def test_a_line_of_empty_fields_is_a_record(tmp_path: Path, block_calls: list[Path]) -> None:
    p = write(tmp_path, "empty.csv", "city,age,wage\n北京,1,2\n,,\n上海,3,4\n")
    t = load_table(p, COLS)
    assert t.n_rows == 3 and t.columns["age"].missing().tolist() == [False, True, False]
    assert block_calls == []  # the file has no blank line: the streaming result stands


def test_values_beyond_the_parse_type_are_clamped_like_the_others(
    tmp_path: Path, block_calls: list[Path]
) -> None:
    # age (bounds 0..120) is parsed as Int16: 999 fits and is clamped; 40000 does not fit, so the
    # column is read again as text, where it is clamped the same way; neither is a problem to report
    rows = list(ROWS[:100])
    rows[10] = "北京,999,1"
    rows[20] = "上海,40000,2"
    rows[30] = "广州,-5,3"
    p = write(tmp_path, "wide.csv", "city,age,wage\n" + "\n".join(rows) + "\n")
    t = load_table(p, COLS)
    age = t.columns["age"].values
    assert age[10] == 120 and age[20] == 120 and age[30] == 0 and age[11] == 11
    assert t.report.lines() == [] and block_calls == []
