"""Example-based tests of the table loader (:mod:`dpdesk.core.loading`).

Every test checks the exact values loaded (category codes, clamped ints and their missing mask,
floats with NaN for missing), the counts in the load report, or the exact error raised.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import itertools
import math
import random
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import xlsxwriter  # type: ignore[import-untyped]

from dpdesk.core.common.errors import Cancelled, InputError
from dpdesk.core.common.progress import Progress
from dpdesk.core.loading import Table, csvfile, file_sha256, guards, load_table, suggest_types
from dpdesk.core.model.spec import ColumnSpec


@pytest.fixture(autouse=True, params=["stream", "blocks"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with both CSV readers: polars' streaming reader for UTF-8 and the block reader."""
    monkeypatch.setattr(csvfile, "STREAM_UTF8", request.param == "stream")
    return str(request.param)


CITY = ColumnSpec("city", "category", categories=("北京", "上海", "广州"))
AGE = ColumnSpec("age", "int", bounds=(0, 120))
WAGE = ColumnSpec("wage", "float", bounds=(0, 1000))
COLS = {"city": CITY, "age": AGE, "wage": WAGE}

#: Labels that need quoting in one delimiter or another.
TRICKY = ("plain", "a,b", "c;d", "e|f", "g\th", 'say "hi"', "two\nlines", 'x,"y";z|w', "")
LABEL = ColumnSpec("label", "category", categories=tuple(t for t in TRICKY if t))

# The table written in many forms below, and what it must load as.
TEXT = "city,age,wage\n北京,34,1200.5\n上海,,7\n广州,200,-3.25\n"
EXPECTED = {
    "city": [0, 1, 2],
    "age": ([34, 0, 120], [False, True, False]),
    "wage": [1200.5, 7.0, -3.25],
}


def write(tmp_path: Path, name: str, content: bytes | str, encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return p


def nan_to_none(xs: np.ndarray) -> list[Any]:
    return [None if isinstance(x, float) and math.isnan(x) else x for x in xs.tolist()]


def as_lists(table: Table) -> dict[str, Any]:
    """The loaded columns as plain lists: codes, (ints, missing mask) or floats (NaN as None)."""
    out: dict[str, Any] = {}
    for name, col in table.columns.items():
        if col.spec.type == "category":
            assert col.values.dtype == np.int16
            out[name] = col.values.tolist()
        elif col.spec.type == "int":
            assert np.issubdtype(col.values.dtype, np.signedinteger)
            out[name] = (col.values.tolist(), col.missing().tolist())
        else:
            assert col.values.dtype == np.float64
            out[name] = nan_to_none(col.values)
    return out


def expected_table() -> dict[str, Any]:
    return {k: (v if not isinstance(v, list) else list(v)) for k, v in EXPECTED.items()}


# ----------------------------------------------------------------------------- encodings


@pytest.mark.parametrize(
    ("name", "raw", "encoding"),
    [
        ("utf8", TEXT.encode("utf-8"), "utf-8"),
        ("utf8-bom", codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8"),
        ("gbk", TEXT.encode("gb18030"), "gb18030"),
        ("utf16le-bom", codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16"),
        ("utf16be-bom", codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16"),
        ("utf16le-nobom", TEXT.encode("utf-16-le"), "utf-16-le"),
        ("utf16be-nobom", TEXT.encode("utf-16-be"), "utf-16-be"),
    ],
)
def test_encodings_are_detected(tmp_path: Path, name: str, raw: bytes, encoding: str) -> None:
    p = write(tmp_path, f"{name}.csv", raw)
    t = load_table(p, COLS)
    assert t.report.encoding == encoding
    assert t.n_rows == 3
    assert as_lists(t) == expected_table()
    assert t.report.issues["city"].undeclared == 0
    assert t.report.issues["age"].missing == 1


def test_gbk_label_is_not_mistaken_for_utf8(tmp_path: Path) -> None:
    # 北京 and 上海 in GBK are not valid UTF-8, so an unguided UTF-8 read would lose them.
    raw = "城市,人数\n北京,3\n上海,4\n北京,5\n".encode("gbk")
    p = write(tmp_path, "gbk.csv", raw)
    cols = {"城市": ColumnSpec("城市", "category", categories=("上海", "北京")), "人数": AGE}
    t = load_table(p, cols)
    assert t.report.encoding == "gb18030"
    assert as_lists(t) == {"城市": [1, 0, 1], "人数": ([3, 4, 5], [False, False, False])}
    assert load_table(p, cols, encoding="gbk").columns["城市"].values.tolist() == [1, 0, 1]


def test_explicit_invalid_utf8_is_refused(tmp_path: Path) -> None:
    p = write(tmp_path, "latin.csv", b"city,age,wage\n\xb1\xb1\xbe\xa9,3,1\n")  # GBK bytes
    with pytest.raises(InputError) as ei:
        load_table(p, COLS, encoding="utf-8")
    assert str(p) in str(ei.value)
    assert ei.value.line == 2
    assert "UTF-8" in str(ei.value)


def test_unknown_explicit_encoding_is_refused(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", TEXT)
    with pytest.raises(InputError, match="unknown encoding") as ei:
        load_table(p, COLS, encoding="no-such-codec")
    assert ei.value.path == str(p)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "base64", "rot13", "zlib", "idna", "undefined"])
def test_unusable_explicit_encoding_is_refused(tmp_path: Path, encoding: str) -> None:
    # These used to escape as UnicodeError, AssertionError or TypeError (UTF-16 named for a file
    # without a byte-order mark; codecs that are not text encodings).
    p = write(tmp_path, "t.csv", TEXT)
    err = raises_input_error(p, encoding=encoding)
    assert encoding in err.message


# ----------------------------------------------------------------------------- delimiters and quoting


def tricky_csv(delimiter: str, lineterminator: str = "\r\n") -> tuple[str, list[int]]:
    """A file of the tricky labels, quoted where needed, and the codes each row must load as."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator=lineterminator, quoting=csv.QUOTE_MINIMAL)
    w.writerow(["label", "age", "wage"])
    codes = []
    for i, t in enumerate(TRICKY):
        w.writerow([t, str(i), f"{i}.5"])
        codes.append(LABEL.categories.index(t) if t else -1)  # type: ignore[union-attr]
    return buf.getvalue(), codes


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
@pytest.mark.parametrize("lineterminator", ["\r\n", "\n"])
def test_delimiters_and_quoted_fields(tmp_path: Path, delimiter: str, lineterminator: str) -> None:
    text, codes = tricky_csv(delimiter, lineterminator)
    assert '""' in text and '"two\nlines"' in text  # the escapes under test are really there
    p = write(tmp_path, "t.csv", text)
    t = load_table(p, {"label": LABEL, "age": AGE, "wage": WAGE})
    assert t.report.delimiter == delimiter
    n = len(TRICKY)
    assert as_lists(t) == {
        "label": codes,
        "age": (list(range(n)), [False] * n),
        "wage": [i + 0.5 for i in range(n)],
    }
    iss = t.report.issues["label"]
    assert (iss.missing, iss.undeclared, iss.unparsable) == (1, 0, 0)


def test_explicit_delimiter_overrides_sniffing(tmp_path: Path) -> None:
    # Sniffing would pick the comma (it splits every line into 3); the user says ';'.
    p = write(tmp_path, "t.csv", "label;age\na,b;3\nc,d;4\n")
    cols = {"label": ColumnSpec("label", "category", categories=("a,b", "c,d")), "age": AGE}
    t = load_table(p, cols, delimiter=";")
    assert as_lists(t) == {"label": [0, 1], "age": ([3, 4], [False, False])}
    with pytest.raises(InputError, match="single character"):
        load_table(p, cols, delimiter=";;")


def test_sniffing_survives_a_sample_cut_inside_a_quoted_field(tmp_path: Path) -> None:
    # 10-line comments: the 50-line sample ends inside the fifth, and that cut record used to make
    # the semicolon look inconsistent (the loader fell back to the comma and failed).
    comment = "\n".join(f"line, {k}" for k in range(10))
    text = "id;comment;age\n" + "".join(f'{i};"{comment}";{i}\n' for i in range(30))
    p = write(tmp_path, "t.csv", text)
    cols = {"comment": ColumnSpec("comment", "category", categories=(comment,)), "age": AGE}
    t = load_table(p, cols)
    assert t.report.delimiter == ";"
    assert as_lists(t) == {"comment": [0] * 30, "age": (list(range(30)), [False] * 30)}


@pytest.mark.parametrize("odd", ["\x0b", "\x0c", "\u2028", "\x85", "\r"])
def test_sniffing_ignores_line_separators_inside_fields(tmp_path: Path, odd: str) -> None:
    # Only \n ends a record (for polars too); str.splitlines() also cut at these characters.
    text = "name|age\n" + "".join(f"x{odd}y|{i}\n" for i in range(10))
    p = write(tmp_path, "t.csv", text)
    cols = {"name": ColumnSpec("name", "category", categories=(f"x{odd}y",)), "age": AGE}
    t = load_table(p, cols)
    assert t.report.delimiter == "|"
    assert as_lists(t) == {"name": [0] * 10, "age": (list(range(10)), [False] * 10)}


def test_short_records_wherever_blocks_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A record with fewer fields than the header gets missing values; one that opened a piece used
    # to fail the whole load ("cannot get the 1-th column"), so it depended on where blocks split.
    p = write(tmp_path, "t.csv", "age,city,wage\n" + "1,北京,2\n7\n \n" * 10)
    expected = {
        "age": ([1, 7, 0] * 10, [False, False, True] * 10),
        "city": [0, -1, -1] * 10,
        "wage": [2.0, None, None] * 10,
    }
    assert as_lists(load_table(p, {"age": AGE, "city": CITY, "wage": WAGE})) == expected
    for block in (4, 5, 9, 16):
        monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
        monkeypatch.setattr(csvfile, "BLOCK_BYTES", block)
        assert as_lists(load_table(p, {"age": AGE, "city": CITY, "wage": WAGE})) == expected, block


def test_crlf_no_trailing_newline_and_whitespace(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", " city , age ,wage \r\n  北京 , 34 ,  1.25\r\n上海\t,\t7\t, 2 \r\n广州,  ,")
    t = load_table(p, COLS)
    assert as_lists(t) == {
        "city": [0, 1, 2],
        "age": ([34, 7, 0], [False, False, True]),
        "wage": [1.25, 2.0, None],
    }
    assert t.report.issues["age"].missing == 1
    assert t.report.issues["age"].unparsable == 0  # whitespace only is empty, not unparsable
    assert t.report.issues["wage"].missing == 1


def test_file_without_trailing_newline_keeps_its_last_row(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", TEXT.rstrip("\n"))
    t = load_table(p, COLS)
    assert t.n_rows == 3
    assert as_lists(t) == expected_table()


def test_only_declared_columns_are_kept_in_declared_order(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "x,wage,y,city,z,age\n1,2.5,3,上海,5,6\n7,8,9,北京,11,12\n")
    t = load_table(p, COLS)
    assert list(t.columns) == ["city", "age", "wage"]
    assert as_lists(t) == {"city": [1, 0], "age": ([6, 12], [False, False]), "wage": [2.5, 8.0]}


def test_blank_lines_between_records_are_not_rows(tmp_path: Path) -> None:
    # A blank line right after the header used to fail ("cannot get the 1-th column"), and blank
    # lines elsewhere became rows of missing values; a blank line inside quotes is data.
    p = write(tmp_path, "t.csv", 'label,age\n\nplain,1\r\n\r\n"two\n\nlines",2\n\n\n"a,b",3\n\n')
    cols = {"label": ColumnSpec("label", "category", categories=("plain", "two\n\nlines", "a,b")), "age": AGE}
    t = load_table(p, cols)
    assert as_lists(t) == {"label": [0, 1, 2], "age": ([1, 2, 3], [False, False, False])}
    assert t.report.issues["age"].missing == 0


def test_single_column_file_keeps_empty_lines_as_missing(tmp_path: Path) -> None:
    # With one column an empty line is an empty value, not a blank line.
    p = write(tmp_path, "t.csv", "age\n3\n\n5\n")
    t = load_table(p, {"age": AGE})
    assert as_lists(t) == {"age": ([3, 0, 5], [False, True, False])}


# ----------------------------------------------------------------------------- blocks


LONG = "long\n" + "x" * 150 + '\n""\n' + "y" * 40  # a label longer than a block, with quotes


def block_rows(seed: int, n: int) -> list[list[str]]:
    """Rows with long quoted labels holding newlines, empties, junk and out-of-range values."""
    rng = random.Random(seed)
    labels = [*TRICKY, LONG, "北京"]
    rows = []
    for _ in range(n):
        rows.append(
            [
                rng.choice(labels),
                rng.choice(
                    ["", "abc", "1.5", "-4", "999", str(rng.randint(0, 120)), str(rng.randint(0, 120))]
                ),
                rng.choice(
                    ["", "NaN", "oops", "1e308", f"{rng.uniform(-10, 2000):.6f}", str(rng.randint(0, 9))]
                ),
            ]
        )
    return rows


BLOCK_LABEL = ColumnSpec("label", "category", categories=(*(t for t in TRICKY if t), LONG))
BLOCK_COLS = {"label": BLOCK_LABEL, "age": AGE, "wage": WAGE}


def reference(rows: list[list[str]]) -> dict[str, Any]:
    """What the loader must produce, computed independently from Python's csv rows."""
    cats = BLOCK_LABEL.categories
    assert cats is not None
    label = [cats.index(r[0].strip()) if r[0].strip() in cats else -1 for r in rows]
    ages, miss = [], []
    for r in rows:
        try:
            x = float(r[1])
        except ValueError:
            x = math.nan
        ok = math.isfinite(x) and x == math.floor(x)
        ages.append(int(min(120, max(0, x))) if ok else 0)
        miss.append(not ok)
    wages = []
    for r in rows:
        try:
            x = float(r[2])
        except ValueError:
            x = math.nan
        wages.append(None if math.isnan(x) else x)
    return {"label": label, "age": (ages, miss), "wage": wages}


def recorder(calls: list[int]) -> Callable[[int, int, str], None]:
    """A progress callback that notes each ``done``."""

    def cb(done: int, total: int, stage: str) -> None:
        calls.append(done)

    return cb


def csv_text(rows: list[list[str]], delimiter: str = ",") -> str:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")
    w.writerow(["label", "age", "wage"])
    w.writerows(rows)
    return buf.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gb18030", "utf-16"])
def test_many_small_blocks_match_one_block_and_the_csv_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    rows = block_rows(7, 200)
    text = csv_text(rows)
    p = write(tmp_path, "big.csv", text, encoding)
    size = p.stat().st_size
    assert size > 20 * 64
    # The reference reading of the same file by Python's csv module.
    parsed = list(csv.reader(io.StringIO(p.read_bytes().decode(encoding), newline="")))
    assert parsed[1:] == rows
    expected = reference(parsed[1:])

    whole = load_table(p, BLOCK_COLS)
    assert whole.n_rows == 200
    assert as_lists(whole) == expected
    for block in (63, 5):  # odd sizes split UTF-16 units and multi-byte characters
        monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
        monkeypatch.setattr(csvfile, "BLOCK_BYTES", block)
        calls: list[int] = []
        t = load_table(p, BLOCK_COLS, progress=Progress(recorder(calls)))
        assert len(set(calls)) >= size // block // 2  # it really was read in many blocks
        assert t.n_rows == 200
        assert as_lists(t) == expected
        assert t.sha256 == whole.sha256
        for name in BLOCK_COLS:  # the same counts (first_problem is only an example location)
            a, b = t.report.issues[name], whole.report.issues[name]
            assert (a.missing, a.unparsable, a.undeclared) == (b.missing, b.unparsable, b.undeclared)


def test_a_record_longer_than_many_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    label = "start\n" + ("z" * 99 + "\n") * 30 + 'quote "" end'
    cols = {"label": ColumnSpec("label", "category", categories=(label.replace('""', '"'),)), "age": AGE}
    p = write(tmp_path, "t.csv", f'label,age\n"{label}",5\nother,6\n"{label}",7\n')
    monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 64)
    t = load_table(p, cols)
    assert as_lists(t) == {"label": [0, -1, 0], "age": ([5, 6, 7], [False, False, False])}


# ----------------------------------------------------------------------------- bad values


def test_bad_values_are_counted_and_missing(tmp_path: Path) -> None:
    text = (
        "city,age,wage\n"
        "北京,34,1.5\n"  # line 2: all fine
        "上海,abc,NaN\n"  # line 3: unparsable int, NaN float
        "东京,2.5,inf\n"  # line 4: undeclared, non-integral int, infinite float (kept)
        ",,\n"  # line 5: all empty
        "广州,-7,1e308\n"  # line 6: clamped int, huge float (kept)
        "北京,1e9,-inf\n"  # line 7: clamped int, -inf (kept)
        "上海,5,1e400\n"  # line 8: overflowing float is infinite (kept)
        "上海,7.0,nan\n"  # line 9: 7.0 is a whole number; nan is missing
    )
    p = write(tmp_path, "t.csv", text)
    t = load_table(p, COLS)
    assert t.n_rows == 8
    assert as_lists(t) == {
        "city": [0, 1, -1, -1, 2, 0, 1, 1],
        "age": ([34, 0, 0, 0, 0, 120, 5, 7], [False, True, True, True, False, False, False, False]),
        "wage": [1.5, None, math.inf, None, 1e308, -math.inf, math.inf, None],
    }
    city, age, wage = (t.report.issues[n] for n in ("city", "age", "wage"))
    assert (city.missing, city.unparsable, city.undeclared) == (1, 0, 1)
    assert (age.missing, age.unparsable, age.undeclared) == (1, 2, 0)
    assert (wage.missing, wage.unparsable, wage.undeclared) == (1, 2, 0)
    assert city.first_problem is not None and age.first_problem is not None
    lines = t.report.lines()
    assert any("'age'" in ln and "2 unparsable" in ln and "1 empty" in ln for ln in lines)
    assert any("'city'" in ln and "1 outside the declared categories" in ln for ln in lines)
    assert t.columns["age"].values.dtype == np.int8  # bounds [0, 120] fit int8


@pytest.mark.parametrize(
    ("text", "values", "clamped"),
    [
        ("age\n-5\n130\n50\n200\n", [0, 120, 50, 120], 3),  # clean: the typed path
        ("age\n-5\n\n130\n50\n", [0, 0, 120, 50], 2),  # an empty field: the typed path with nulls
        ("age\n-5\nabc\n130\ninf\n1e9\n7\n", [0, 0, 120, 120, 120, 7], 4),  # unparsable: the text path
        ("age,x\n120,1\n0,2\n-0,3\n", [120, 0, 0], 0),  # at the bounds: not clamped
    ],
    ids=["typed", "nulls", "text", "at-bounds"],
)
def test_clamped_ints_are_counted_on_every_path(
    tmp_path: Path, text: str, values: list[int], clamped: int
) -> None:
    """Int values are clamped to the bounds as they are stored; how many were is counted for the curator."""
    p = write(tmp_path, "t.csv", text)
    t = load_table(p, {"age": AGE})
    assert t.columns["age"].values.tolist() == values
    assert t.report.issues["age"].clamped == clamped
    pq = tmp_path / "t.parquet"
    pl.DataFrame({"age": [-5, None, 130, 50, 121]}).write_parquet(pq)
    assert load_table(pq, {"age": AGE}).report.issues["age"].clamped == 3


def test_first_problem_names_its_line(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "city,age,wage\n北京,1,2\n北京,x,3\n北京,4,5\n北京,y,6\n")
    t = load_table(p, COLS)
    assert t.report.issues["age"].first_problem == "line 3"
    assert t.report.issues["wage"].first_problem is None
    assert t.report.lines() == ["column 'age': 2 unparsable value(s), treated as missing (first at line 3)"]


def test_first_problem_after_a_quoted_newline_names_its_record(tmp_path: Path) -> None:
    # records are not lines here, so the place is given as a record number, by both readers alike
    p = write(tmp_path, "t.csv", 'city,age,wage,note\n北京,1,2,"a\nb"\n北京,x,3,c\n')
    t = load_table(p, COLS)
    assert t.report.issues["age"].first_problem == "record 2 after the header"
    assert as_lists(t)["age"] == ([1, 0], [False, True])


@pytest.mark.parametrize("extra", ["4,5,6,7", "4,5,6,", '4,"5",6,"7"'])
def test_a_line_with_a_field_too_many_is_refused(tmp_path: Path, extra: str) -> None:
    # only the first column is declared: the extra field would otherwise pass unnoticed (an unquoted
    # delimiter inside a field shifts the fields after it into the wrong columns)
    p = write(tmp_path, "t.csv", "a,b,c\n1,2,3\n" + extra + "\n8,9,10\n")
    with pytest.raises(InputError, match=r"line 3: this line has 4 fields, but the header names 3"):
        load_table(p, {"a": ColumnSpec("a", "int", bounds=(0, 100))})


def test_nan_without_empty_values(tmp_path: Path) -> None:
    # A float column whose only problem is NaN used to crash (a write into polars' read-only memory).
    p = write(tmp_path, "t.csv", "wage\n1.5\nNaN\n2\n")
    t = load_table(p, {"wage": WAGE})
    assert as_lists(t) == {"wage": [1.5, None, 2.0]}
    assert t.report.issues["wage"].unparsable == 1
    pq = tmp_path / "t.parquet"
    pl.DataFrame({"wage": [1.5, math.nan, 2.0], "city": ["北京", " ", ""]}).write_parquet(pq)
    t = load_table(pq, {"wage": WAGE, "city": CITY})
    assert as_lists(t) == {"wage": [1.5, None, 2.0], "city": [0, -1, -1]}
    assert t.report.issues["wage"].unparsable == 1
    assert t.report.issues["city"].missing == 2  # blank text is empty, not an undeclared category


def test_int_type_follows_bounds(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "a,b,c\n-40000,70000,5000000000\n1,2,3\n")
    cols = {
        "a": ColumnSpec("a", "int", bounds=(-30000, 30000)),
        "b": ColumnSpec("b", "int", bounds=(0, 100000)),
        "c": ColumnSpec("c", "int", bounds=(0, 1e12)),
    }
    t = load_table(p, cols)
    assert [t.columns[n].values.dtype for n in "abc"] == [np.int16, np.int32, np.int64]
    assert t.columns["a"].values.tolist() == [-30000, 1]
    assert t.columns["b"].values.tolist() == [70000, 2]
    assert t.columns["c"].values.tolist() == [5000000000, 3]
    assert t.columns["a"].missing_mask is None


def test_header_only_gives_an_empty_table(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "city,age,wage\n")
    t = load_table(p, COLS)
    assert t.n_rows == 0
    assert as_lists(t) == {"city": [], "age": ([], []), "wage": []}


# ----------------------------------------------------------------------------- errors


def raises_input_error(p: Path, cols: dict[str, ColumnSpec] = COLS, **kw: Any) -> InputError:
    with pytest.raises(InputError) as ei:
        load_table(p, cols, **kw)
    assert ei.value.path == str(p)
    assert str(p) in str(ei.value)
    return ei.value


def test_missing_declared_column(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "city,wage\n北京,1\n")
    err = raises_input_error(p)
    assert err.line == 1
    assert ", line 1:" in str(err)
    assert "'age'" in err.message and "not found" in err.message
    assert "'city', 'wage'" in err.message  # what the file does have


def test_missing_id_column(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", TEXT)
    err = raises_input_error(p, id_column="person")
    assert err.line == 1 and "'person'" in err.message


def test_duplicate_header(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "city,age,wage, age\n北京,1,2,3\n")
    err = raises_input_error(p)
    assert err.line == 1
    assert "'age' 2 times" in err.message


def test_duplicate_undeclared_header_is_fine(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "x,city,age,wage,x\n1,北京,2,3,4\n")
    assert as_lists(load_table(p, COLS)) == {"city": [0], "age": ([2], [False]), "wage": [3.0]}


@pytest.mark.parametrize("content", [b"", b"   \r\n\n", codecs.BOM_UTF8 + b"\n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    p = write(tmp_path, "t.csv", content)
    err = raises_input_error(p)
    assert "empty" in err.message


def test_unclosed_quote_names_its_line(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", 'city,age,wage\n北京,1,2\n上海,3,4\n"北京,5,6\n广州,7,8\n')
    err = raises_input_error(p)
    assert err.line == 4
    assert ", line 4:" in str(err)
    assert "never closed" in err.message


def test_unclosed_quote_in_small_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path, "t.csv", "city,age,wage\n" + "北京,1,2\n" * 20 + '"上海,3,4\n' + "广州,7,8\n" * 20)
    monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 16)
    err = raises_input_error(p)
    assert err.line == 22
    assert "never closed" in err.message


@pytest.mark.timeout(20)
def test_unclosed_quote_in_header(tmp_path: Path) -> None:
    # This used to loop forever: the header scan restarted at the same newline.
    p = write(tmp_path, "t.csv", '"city,age,wage\n北京,1,2\n')
    err = raises_input_error(p)
    assert err.line == 1


@pytest.mark.timeout(20)
def test_header_with_a_quoted_newline(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", '"ci\nty",age,"wa""ge"\n北京,1,2\n上海,3,4\n')
    cols = {"ci\nty": ColumnSpec("ci\nty", "category", categories=("北京", "上海")), "age": AGE}
    t = load_table(p, {**cols, 'wa"ge': ColumnSpec('wa"ge', "float", bounds=(0, 9))})
    assert as_lists(t) == {"ci\nty": [0, 1], "age": ([1, 3], [False, False]), 'wa"ge': [2.0, 4.0]}


def test_nonexistent_file(tmp_path: Path) -> None:
    err = raises_input_error(tmp_path / "nope.csv")
    assert err.message == "no such file"


def test_folder(tmp_path: Path) -> None:
    d = tmp_path / "folder.csv"
    d.mkdir()
    err = raises_input_error(d)
    assert "folder" in err.message


def test_old_xls(tmp_path: Path) -> None:
    p = write(tmp_path, "old.XLS", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100)
    err = raises_input_error(p)
    assert ".xls" in err.message and "xlsx" in err.message


def test_ragged_file(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "city,age,wage\n北京,1,2\n上海,3,4,5\n广州,6,7\n")
    err = raises_input_error(p)
    assert err.line == 3 and "4 fields" in err.message  # the line itself, not its piece's first line


def test_header_line_that_is_empty(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", "\ncity,age,wage\n北京,1,2\n")
    err = raises_input_error(p)
    assert err.line == 1 and "header" in err.message


# ----------------------------------------------------------------------------- progress, cancel, hash


def test_progress_reports_increasing_bytes_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = write(tmp_path, "t.csv", csv_text(block_rows(3, 50)))
    size = p.stat().st_size
    monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 100)
    calls: list[tuple[int, int, str]] = []
    load_table(p, BLOCK_COLS, progress=Progress(lambda d, t, s: calls.append((d, t, s))))
    done = [d for d, _, _ in calls]
    assert len(set(done)) >= size // 100
    assert all(t == size for _, t, _ in calls)
    assert all(b >= a for a, b in itertools.pairwise(done))
    assert done[0] > 0 and done[-1] == size
    assert {s for _, _, s in calls} == {"reading"}


def test_cancel_from_the_callback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path, "t.csv", csv_text(block_rows(3, 50)))
    monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 100)
    calls: list[int] = []

    def cb(done: int, total: int, stage: str) -> None:
        calls.append(done)
        if len(calls) == 3:
            progress.cancel()

    progress = Progress(cb)
    with pytest.raises(Cancelled):
        load_table(p, BLOCK_COLS, progress=progress)
    assert len(calls) == 3  # stopped at the first check after the cancel
    assert calls[-1] < p.stat().st_size


def test_cancel_while_loading_xlsx(tmp_path: Path) -> None:
    p = tmp_path / "t.xlsx"
    write_xlsx(p, [["city", "age", "wage"], ["北京", 1, 2]])
    progress = Progress(lambda d, t, s: progress.cancel())
    with pytest.raises(Cancelled):
        load_table(p, COLS, progress=progress)


@pytest.mark.parametrize("block", [None, 10])
def test_sha256_is_of_the_file_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int | None
) -> None:
    raw = codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le")
    p = write(tmp_path, "t.csv", raw)
    if block:
        monkeypatch.setattr(csvfile, "STREAM_UTF8", False)
        monkeypatch.setattr(csvfile, "BLOCK_BYTES", block)
        monkeypatch.setattr("dpdesk.core.loading.table.HASH_BLOCK_BYTES", block)
    assert load_table(p, COLS).sha256 == hashlib.sha256(raw).hexdigest()
    assert file_sha256(p) == hashlib.sha256(raw).hexdigest()


# ----------------------------------------------------------------------------- xlsx and Parquet


ROWS: list[list[Any]] = [
    ["北京", 34, 1200.5, "p1"],
    ["上海", None, 7.0, " p2 "],
    ["东京", 200, None, "p1"],
    [None, -3, -3.25, None],
    ["广州", 5, 1e308, "p3"],
]
ROWS_EXPECTED = {
    "city": [0, 1, -1, -1, 2],
    "age": ([34, 0, 120, 0, 5], [False, True, False, False, False]),
    "wage": [1200.5, 7.0, None, -3.25, 1e308],
}


def write_xlsx(path: Path, rows: list[list[Any]]) -> None:
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v is not None:
                ws.write(r, c, v)
    wb.close()


def write_all_forms(tmp_path: Path) -> dict[str, Path]:
    header = ["city", "age", "wage", "id"]
    paths = {"csv": tmp_path / "t.csv", "xlsx": tmp_path / "t.xlsx", "parquet": tmp_path / "t.parquet"}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in ROWS:
        w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in row])
    paths["csv"].write_text(buf.getvalue(), encoding="utf-8")
    write_xlsx(paths["xlsx"], [header, *ROWS])
    pl.DataFrame(
        {h: [r[i] for r in ROWS] for i, h in enumerate(header)},
        schema={"city": pl.String, "age": pl.Int64, "wage": pl.Float64, "id": pl.String},
    ).write_parquet(paths["parquet"])
    return paths


def test_xlsx_and_parquet_load_like_csv(tmp_path: Path) -> None:
    paths = write_all_forms(tmp_path)
    tables = {k: load_table(p, COLS, id_column="id") for k, p in paths.items()}
    for kind, t in tables.items():
        assert t.n_rows == 5, kind
        assert as_lists(t) == ROWS_EXPECTED, kind
        assert t.sha256 == hashlib.sha256(paths[kind].read_bytes()).hexdigest()
        assert t.ids is not None and t.ids_missing is not None
        assert t.ids_missing.tolist() == [False, False, False, True, False], kind
        ids = t.ids.tolist()
        assert ids[0] == ids[2] != ids[1] != ids[4] != ids[0], kind
        iss = t.report.issues
        assert (iss["city"].missing, iss["city"].undeclared) == (1, 1), kind
        assert (iss["age"].missing, iss["wage"].missing) == (1, 1), kind
    # the same person gets the same hash whatever the file type
    assert tables["csv"].ids.tolist() == tables["parquet"].ids.tolist() == tables["xlsx"].ids.tolist()  # type: ignore[union-attr]


def test_xlsx_progress_ends_complete(tmp_path: Path) -> None:
    p = write_all_forms(tmp_path)["xlsx"]
    calls: list[tuple[int, int, str]] = []
    load_table(p, COLS, progress=Progress(lambda d, t, s: calls.append((d, t, s))))
    assert calls[0] == (p.stat().st_size, p.stat().st_size, "hashing")
    assert calls[-1] == (1, 1, "parsing")


def test_xlsx_missing_column(tmp_path: Path) -> None:
    p = tmp_path / "t.xlsx"
    write_xlsx(p, [["city", "wage"], ["北京", 1]])
    err = raises_input_error(p)
    assert err.line == 1 and "'age'" in err.message


@pytest.mark.parametrize("suffix", [".xlsx", ".parquet"])
def test_corrupt_workbook_or_parquet(tmp_path: Path, suffix: str) -> None:
    p = write(tmp_path, "bad" + suffix, b"this is not a real file at all" * 10)
    err = raises_input_error(p)
    assert err.message


def zip_with_entry(path: Path, name: str, size: int, chunk: int = 1 << 20) -> None:
    """A zip holding ``size`` zero bytes under ``name``, written in streaming chunks."""
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z,
        z.open(name, "w") as f,
    ):
        left = size
        zeros = bytes(chunk)
        while left:
            n = min(left, chunk)
            f.write(zeros[:n])
            left -= n


def test_xlsx_zip_bomb_declared_3_gib(tmp_path: Path) -> None:
    p = tmp_path / "bomb.xlsx"
    zip_with_entry(p, "xl/worksheets/sheet1.xml", 4096)
    raw = bytearray(p.read_bytes())
    # Declare 3 GiB in both the local and the central header, as a real bomb of that size would.
    local, central = raw.find(b"PK\x03\x04"), raw.find(b"PK\x01\x02")
    struct.pack_into("<I", raw, local + 22, 3 * 2**30)
    struct.pack_into("<I", raw, central + 24, 3 * 2**30)
    p.write_bytes(bytes(raw))
    assert zipfile.ZipFile(p).infolist()[0].file_size == 3 * 2**30
    err = raises_input_error(p)
    assert "zip bomb" in err.message
    with pytest.raises(InputError, match="zip bomb"):
        suggest_types(p)


def test_xlsx_zip_bomb_by_ratio(tmp_path: Path) -> None:
    p = tmp_path / "bomb.xlsx"
    zip_with_entry(p, "xl/worksheets/sheet1.xml", 60 * 2**20)  # 60 MiB of zeros packs to ~60 KiB
    err = raises_input_error(p)
    assert "zip bomb" in err.message


def test_xlsx_zip_bomb_over_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guards, "MAX_XLSX_UNPACKED", 2**20)
    p = tmp_path / "bomb.xlsx"
    zip_with_entry(p, "xl/worksheets/sheet1.xml", 2 * 2**20)
    err = raises_input_error(p)
    assert "zip bomb" in err.message
    # a real workbook under the lowered limit still loads
    good = write_all_forms(tmp_path)["xlsx"]
    assert as_lists(load_table(good, COLS)) == ROWS_EXPECTED


# ----------------------------------------------------------------------------- ids and suggestions


def test_id_column_hashes(tmp_path: Path) -> None:
    p = write(tmp_path, "t.csv", 'pid,age\np1,1\n p1 ,2\n,3\n"",4\n  ,5\np2,6\n"p,3",7\n')
    t = load_table(p, {"age": AGE}, id_column="pid")
    assert t.ids is not None and t.ids_missing is not None
    assert t.ids.dtype == np.uint64 and t.ids.shape == (7, 2)  # 128 bits per id
    assert t.ids_missing.tolist() == [False, False, True, True, True, False, False]
    ids = [tuple(x) for x in t.ids.tolist()]
    assert ids[0] == ids[1]  # surrounding spaces do not make another person
    assert len({ids[0], ids[5], ids[6]}) == 3
    assert len({x for pair in (ids[0], ids[5], ids[6]) for x in pair}) == 6  # the two halves differ
    assert list(t.columns) == ["age"]  # the id is not a statistic column
    assert load_table(p, {"age": AGE}).ids is None


def test_suggest_types_proposes_only_types(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "t.csv",
        "n,x,e,sci,c,empty,mixed\n1,1.5,,1e3,北京,,3\n2,2,,2,上海,,x\n-3,NaN,,3,广州,,4\n",
    )
    s = suggest_types(p)
    assert s == {
        "n": "int",
        "x": "float",
        "e": "category",
        "sci": "float",
        "c": "category",
        "empty": "category",
        "mixed": "category",
    }
    paths = write_all_forms(tmp_path)
    expected = {"city": "category", "age": "int", "wage": "float", "id": "category"}
    for kind in ("xlsx", "parquet"):
        assert suggest_types(paths[kind]) == expected, kind


def test_suggest_types_of_a_bad_file(tmp_path: Path) -> None:
    p = write(tmp_path, "bad.parquet", b"nope")
    with pytest.raises(InputError) as ei:
        suggest_types(p)
    assert ei.value.path == str(p)


@pytest.mark.slow
def test_id_hash_is_keyed_by_a_secret_seed_per_process(tmp_path: Path) -> None:
    """Issue 11, item 8: the person-id hash is 128 bits under secret seeds, so collisions cannot be crafted."""
    import subprocess
    import sys

    p = write(tmp_path, "t.csv", "pid,age\nalice,1\nbob,2\n")
    code = (
        "import sys; from dpdesk.core.loading import load_table; from dpdesk.core.plan.reader import ColumnSpec; "
        "t = load_table(sys.argv[1], {'age': ColumnSpec('age', 'int', (0, 10))}, id_column='pid'); "
        "print(t.ids.tolist())"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(p)], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] != runs[1], "the id hash is the same in two processes: its seed is not secret"


@pytest.mark.parametrize(
    "raw",
    [b"a,b\n,\n\n,,\n", b"a,b\n1,x\n\n,,\n", b"a,b\n,\n\r\n,,\n", b"a,b\n\n\n,,\n"],
    ids=["empty-then-blank", "value-then-blank", "crlf-blank", "two-blanks"],
)
def test_a_line_of_too_many_empty_fields_after_a_blank_line_is_refused_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: bytes
) -> None:
    """Found by the fuzzer: dropping the blank line also dropped the piece's last line end, and polars reads
    a last line of only empty fields without one as a record of the right width (",," in a two-column
    file): the file loaded, its third field silently gone, unless a block happened to split there."""
    p = tmp_path / "ragged.csv"
    p.write_bytes(raw)
    cols = {"a": ColumnSpec("a", "int", bounds=(0, 10)), "b": ColumnSpec("b", "category", categories=("x",))}
    line = raw.count(b"\n")  # the ragged line is the last one
    for stream, block in [(True, csvfile.BLOCK_BYTES), *((False, b) for b in (4, 5, 6, 64, 1 << 20))]:
        monkeypatch.setattr(csvfile, "STREAM_UTF8", stream)
        monkeypatch.setattr(csvfile, "BLOCK_BYTES", block)
        with pytest.raises(InputError, match=rf"line {line}: this line has 3 fields, but the header names 2"):
            load_table(p, cols)
