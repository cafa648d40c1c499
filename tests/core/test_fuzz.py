"""Property-based tests (hypothesis) of the table loader and the plan parser.

Each test states its number of generated cases in ``@settings(max_examples=N)``:

* ``test_random_bytes_load_or_input_error``: 200 files of random bytes (half behind a valid header);
* ``test_random_text_in_random_encodings``: 150 random texts written in one of 8 encodings and
  read with the encoding detected or named (rightly, wrongly, or a codec that is no text encoding);
* ``test_random_csv_structures``: 150 CSV-ish files (random delimiters, quotes good and bad,
  newlines, long fields, duplicate and empty headers, NaN, inf, 1e400), each loaded in one block
  and in blocks of 4, 9 or 64 bytes (at most ~400 blocks a file), which must give the same result;
* ``test_round_trip``: 150 valid CSV files written by Python's csv module from known values, for
  all four delimiters, minimal or full quoting, LF or CRLF, 5 encodings and 3 block sizes;
* ``test_random_json_text_plan``: 300 random JSON-ish texts;
* ``test_random_json_values_plan``: 200 random JSON documents;
* ``test_mutated_plan_any_value``: 300 valid plans with one value anywhere replaced by random JSON;
* ``test_plan_mutation_names_its_key``: up to 60 cases for each of 10 mutation classes (up to 600;
  hypothesis stops early once a small class is exhausted): epsilon (budget or query) set to a bad
  value (negative, 0, "NaN", 1e400, true, "0.1", 10**400...), delta >= 1 or < 0, reversed bounds,
  absurd max_rows_per_person, a required key dropped, an unknown key added, nested lists,
  a grid_step giving too many candidates, numbers too large for a float;
* ``test_deep_nesting_plan``: 10 fixed cases, 2,000 to 1,000,000 levels of lists and of objects;
* ``test_sample_plan_parses_and_round_trips``: 1 fixed case.

In all, at most 2,061 generated or fixed cases.

A loader test passes when ``load_table`` returns a table whose invariants hold or raises
``InputError`` naming the file; any other exception or a hang fails it (pytest-timeout's thread
method: a signal cannot stop a hang that hypothesis goes on to shrink).
A plan test passes when the parser returns a ``Plan`` or raises ``PlanError``.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import InputError, PlanError, where_in_plan
from dpdesk.core.common.text import shown
from dpdesk.core.loading import Table, csvfile, load_table
from dpdesk.core.model.spec import ColumnSpec, Plan
from dpdesk.core.plan.reader import parse_plan_text

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300, method="thread")]

SAMPLE_PLAN = Path(__file__).resolve().parents[2] / "resources" / "samples" / "cps_wages_plan.json"
#: Health checks that only flag slow generation or the module-scoped folder; not findings.
QUIET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]

COLS = {
    "a": ColumnSpec("a", "int", bounds=(-5, 100)),
    "b": ColumnSpec("b", "float", bounds=(0, 1)),
    "c": ColumnSpec("c", "category", categories=("x", "y", "北京", 'q"q', "l\nl")),
}


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@contextlib.contextmanager
def block_bytes(n: int | None) -> Iterator[None]:
    """The block reader with ``n``-byte blocks (UTF-8 files otherwise go through the streaming reader)."""
    old = csvfile.BLOCK_BYTES, csvfile.STREAM_UTF8
    if n is not None:
        csvfile.BLOCK_BYTES, csvfile.STREAM_UTF8 = n, False
    try:
        yield
    finally:
        csvfile.BLOCK_BYTES, csvfile.STREAM_UTF8 = old


def check_table(t: Table, path: Path, cols: dict[str, ColumnSpec], id_column: str | None = None) -> None:
    """The invariants every loaded table keeps."""
    assert t.path == str(path)
    assert t.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert t.n_rows >= 0
    assert list(t.columns) == list(cols)
    for name, spec in cols.items():
        col = t.columns[name]
        assert col.spec == spec
        assert col.values.shape == (t.n_rows,)
        miss = col.missing()
        assert miss.shape == (t.n_rows,) and miss.dtype == bool
        iss = t.report.issues[name]
        assert 0 <= iss.missing + iss.unparsable + iss.undeclared <= t.n_rows
        assert iss.missing + iss.unparsable + iss.undeclared == int(miss.sum())
        if spec.type == "category":
            assert spec.categories is not None
            assert col.values.dtype == np.int16
            assert np.all((col.values >= -1) & (col.values < len(spec.categories)))
        elif spec.type == "int":
            assert spec.bounds is not None
            assert np.issubdtype(col.values.dtype, np.signedinteger)
            assert np.all((col.values >= spec.bounds[0]) & (col.values <= spec.bounds[1]))
        else:
            assert col.values.dtype == np.float64  # any float, NaN for missing
    if id_column is None:
        assert t.ids is None and t.ids_missing is None
    else:
        assert t.ids is not None and t.ids_missing is not None
        assert t.ids.shape == (t.n_rows, 2) and t.ids.dtype == np.uint64
        assert t.ids_missing.shape == (t.n_rows,) and t.ids_missing.dtype == bool


def load_checked(path: Path, cols: dict[str, ColumnSpec] = COLS, **kw: Any) -> Table | InputError:
    """Load and check the invariants; an InputError must name the file. Anything else propagates."""
    try:
        t = load_table(path, cols, **kw)
    except InputError as exc:
        assert exc.path == str(path)
        assert str(path) in str(exc)
        return exc
    check_table(t, path, cols, kw.get("id_column"))
    return t


def snapshot(r: Table | InputError) -> Any:
    """What a load produced, comparable across block sizes."""
    if isinstance(r, InputError):
        return "InputError"
    return (
        r.n_rows,
        {n: (c.values.tobytes(), c.missing().tobytes()) for n, c in r.columns.items()},
        {n: (i.missing, i.unparsable, i.undeclared) for n, i in r.report.issues.items()},
        None if r.ids is None else (r.ids.tobytes(), r.ids_missing.tobytes()),  # type: ignore[union-attr]
    )


# ----------------------------------------------------------------------------- loader: random input


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=200, deadline=None, database=None, suppress_health_check=QUIET)
@given(
    prefix=st.sampled_from([b"", b"a,b,c\n", b"c;b;a\r\n", b"\xef\xbb\xbfa\tb\tc\n"]),
    body=st.binary(max_size=3000),
    suffix=st.sampled_from([".csv", ".txt", ".tsv", ".xlsx", ".parquet", ".dat"]),
)
def test_random_bytes_load_or_input_error(fuzz_dir: Path, prefix: bytes, body: bytes, suffix: str) -> None:
    p = fuzz_dir / f"bytes{suffix}"
    p.write_bytes(prefix + body)
    load_checked(p)


ENCODINGS = ["utf-8", "utf-8-sig", "gb18030", "gbk", "utf-16", "utf-16-le", "utf-16-be", "cp1252"]
CSV_CHARS = st.sampled_from(
    list(",;\t|\"\n\r '\\ab xyc0123456789.eE-+") + ["北京", "NaN", "inf", "\ufeff", "é", "\x00"]
)


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=QUIET)
@given(
    header=st.sampled_from(["a,b,c\n", "a;b;c\r\n", "c|b|a\n", '"a"\t"b"\t"c"\n', "a,b\n", ""]),
    body=st.lists(CSV_CHARS, max_size=400).map("".join),
    write_as=st.sampled_from(ENCODINGS),
    read_as=st.sampled_from([None, None, *ENCODINGS, "utf-32", "utf-7", "idna", "base64"]),
)
def test_random_text_in_random_encodings(
    fuzz_dir: Path, header: str, body: str, write_as: str, read_as: str | None
) -> None:
    p = fuzz_dir / "text.csv"
    p.write_bytes((header + body).encode(write_as, errors="replace"))
    load_checked(p, encoding=read_as)


#: Raw fields, written as they are: stray quotes and newlines make malformed records.
DIRTY_FIELD = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "x",
            " 北京 ",
            "NaN",
            "1e400",
            '"',
            '""',
            '"x"',
            'a"b',
            '"l\nl"',
            '"q""q"',
            '"unclosed',
            "\r",
            "\n",
            ' "x" ',
        ]
    ),
    st.text(st.sampled_from(list(',;\t|"\n\r xy北')), max_size=12),
    st.integers(100, 5000).map(lambda n: "L" * n),  # a long field, longer than small blocks
    st.integers(10, 100).map(lambda n: '"' + "m\n" * n + '"'),  # a long quoted field of many lines
)
#: Values that are quoted as a CSV writer would, so the record stays well formed.
CLEAN_VALUE = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "x",
            "y",
            " 北京 ",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "1e400",
            "-1e400",
            "1e308",
            "0",
            "-0",
            "7",
            "7.0",
            "7.5",
            "99999999999999999999",
            "abc",
            'q"q',
            "l\nl",
            "l\r\nl",
        ]
    ),
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(st.sampled_from(list(',;\t|"\n xy北')), max_size=12),
    st.integers(100, 5000).map(lambda n: "L" * n),
    st.integers(10, 100).map(lambda n: "m\n" * n),
)
HEADER_NAME = st.sampled_from(["a", "b", "c", " a ", "a", "", "id", "z", '"c"', "北京"])


def quoted(value: str, delim: str) -> str:
    if any(ch in value for ch in (delim, '"', "\n", "\r")):
        return '"' + value.replace('"', '""') + '"'
    return value


@st.composite
def csvish(draw: st.DrawFn) -> tuple[bytes, dict[str, ColumnSpec], str | None, str | None, str]:
    delim = draw(st.sampled_from([",", ";", "\t", "|"]))
    if draw(st.integers(0, 3)):  # mostly a clean header, else duplicate, empty or odd names
        order = draw(st.permutations(["a", "b", "c", "id", "z"]))
        header = order[: draw(st.integers(1, 5))]
    else:
        header = draw(st.lists(HEADER_NAME, min_size=1, max_size=6))
    width = len(header)
    row = st.lists(CLEAN_VALUE.map(lambda v: quoted(v, delim)), min_size=width, max_size=width)
    if draw(st.booleans()):  # half the files may hold malformed fields and ragged records
        field = CLEAN_VALUE.map(lambda v: quoted(v, delim)) | DIRTY_FIELD
        row = row | row | st.lists(field, min_size=max(1, width - 1), max_size=width + 1) | st.just([])
    n_rows = draw(st.integers(0, 30))
    rows = draw(st.lists(row, min_size=n_rows, max_size=n_rows))
    newline = draw(st.sampled_from(["\n", "\r\n"] * 4 + ["\r"]))
    lines = [delim.join(header), *(delim.join(r) for r in rows)]
    text = newline.join(lines) + draw(st.sampled_from(["", newline, newline * 2]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030"]))
    names = [h.strip() for h in header if h.strip() in COLS]
    declared = draw(st.lists(st.sampled_from(names or ["a"]), unique=True, min_size=1, max_size=3))
    cols = {n: COLS[n] for n in declared}
    id_column = draw(st.sampled_from([None, None, "id", "z"]))
    if id_column in cols:
        id_column = None
    given_delim = draw(st.sampled_from([None, None, delim]))
    return text.encode(encoding), cols, id_column, given_delim, encoding


@pytest.mark.timeout(180, method="thread")
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=QUIET)
@given(case=csvish(), small=st.sampled_from([4, 9, 64]))  # 4: the least that always decodes a character
def test_random_csv_structures(fuzz_dir: Path, case: Any, small: int) -> None:
    raw, cols, id_column, delim, _ = case
    p = fuzz_dir / "structure.csv"
    p.write_bytes(raw)
    whole = load_checked(p, cols, id_column=id_column, delimiter=delim)
    # at most ~400 blocks, so that a 40 kB case stays quick (each block costs a hashing thread)
    with block_bytes(max(small, len(raw) // 400)):
        pieces = load_checked(p, cols, id_column=id_column, delimiter=delim)
    # Where blocks split, and which reader reads (streaming for UTF-8, blocks), must never change what
    # is loaded, nor whether the file is refused.
    assert snapshot(pieces) == snapshot(whole)


# ----------------------------------------------------------------------------- loader: round trip

LABEL_CHARS = st.sampled_from(list("abcXYZ019 ,;\t|\"'\n\r-._") + ["北京", "上海", "é", "ß"])
LABEL = (
    st.lists(LABEL_CHARS, min_size=1, max_size=10).map("".join).filter(lambda s: s == s.strip() and s != "")
)


@st.composite
def table_values(draw: st.DrawFn) -> tuple[list[str], list[list[str]], dict[str, Any], dict[str, ColumnSpec]]:
    labels = draw(st.lists(LABEL, min_size=1, max_size=6, unique=True))
    lo = draw(st.integers(-1000, 0))
    hi = draw(st.integers(1, 1000))
    cols = {
        "cat": ColumnSpec("cat", "category", categories=tuple(labels)),
        "n": ColumnSpec("n", "int", bounds=(lo, hi)),
        "x": ColumnSpec("x", "float", bounds=(0, 1)),
    }
    n_rows = draw(st.integers(0, 40))
    cat = draw(st.lists(st.none() | st.sampled_from(labels), min_size=n_rows, max_size=n_rows))
    ints = draw(st.lists(st.none() | st.integers(-(10**9), 10**9), min_size=n_rows, max_size=n_rows))
    floats = draw(
        st.lists(
            st.none() | st.floats(allow_nan=False, allow_infinity=True), min_size=n_rows, max_size=n_rows
        )
    )
    extra = draw(st.lists(LABEL, min_size=n_rows, max_size=n_rows))  # an undeclared column
    order = draw(st.permutations(["cat", "n", "x", "other"]))
    by_name = {
        "cat": ["" if v is None else v for v in cat],
        "n": ["" if v is None else str(v) for v in ints],
        "x": ["" if v is None else repr(v) for v in floats],
        "other": extra,
    }
    rows = [[by_name[c][i] for c in order] for i in range(n_rows)]
    expected = {
        "cat": [-1 if v is None else labels.index(v) for v in cat],
        "n": ([lo if v is None else min(hi, max(lo, v)) for v in ints], [v is None for v in ints]),
        "x": [math.nan if v is None else v for v in floats],
    }
    return list(order), rows, expected, cols


@pytest.mark.timeout(180, method="thread")
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=QUIET)
@given(
    table=table_values(),
    delim=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    newline=st.sampled_from(["\n", "\r\n"]),
    enc=st.sampled_from(
        [
            ("utf-8", None),
            ("utf-8-sig", None),
            ("utf-16", None),
            ("gb18030", "gb18030"),
            ("utf-16-le", "utf-16-le"),
        ]
    ),
    sniff=st.booleans(),
    block=st.sampled_from([None, 16, 5]),
)
def test_round_trip(
    fuzz_dir: Path,
    table: Any,
    delim: str,
    quoting: Any,
    newline: str,
    enc: tuple[str, str | None],
    sniff: bool,
    block: int | None,
) -> None:
    header, rows, expected, cols = table
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delim, quoting=quoting, lineterminator=newline)
    w.writerow(header)
    w.writerows(rows)
    p = fuzz_dir / "round.csv"
    p.write_bytes(buf.getvalue().encode(enc[0]))
    with block_bytes(block and max(block, p.stat().st_size // 400)):
        t = load_table(p, cols, encoding=enc[1], delimiter=None if sniff else delim)
    check_table(t, p, cols)
    assert t.report.delimiter == delim
    assert t.n_rows == len(rows)
    assert t.columns["cat"].values.tolist() == expected["cat"]
    assert t.columns["n"].values.tolist() == expected["n"][0]
    assert t.columns["n"].missing().tolist() == expected["n"][1]
    got_x = t.columns["x"].values.tolist()
    assert [None if math.isnan(v) else v for v in got_x] == [
        None if math.isnan(v) else v for v in expected["x"]
    ]
    assert t.report.issues["cat"].missing == expected["cat"].count(-1)
    assert t.report.issues["n"].unparsable == 0 and t.report.issues["x"].unparsable == 0


# ----------------------------------------------------------------------------- plan parser


def base_plan() -> dict[str, Any]:
    return json.loads(SAMPLE_PLAN.read_text(encoding="utf-8"))


def parse_or_plan_error(text: str | bytes) -> Plan | PlanError:
    try:
        return parse_plan_text(text)
    except PlanError as exc:
        from dpdesk.core.common.errors import PlanErrors

        problems = exc.problems if isinstance(exc, PlanErrors) else (exc,)
        for p in problems:  # every problem names its place and says something
            assert isinstance(p.key, str) and str(p).startswith(p.where) and p.message.strip()
            assert str(p) in str(exc)  # and is shown
        return exc


def test_sample_plan_parses_and_round_trips() -> None:
    plan = parse_plan_text(SAMPLE_PLAN.read_bytes())
    assert isinstance(plan, Plan)
    assert plan.budget.epsilon == 1.0 and len(plan.queries) == 6
    again = parse_plan_text(json.dumps(plan.to_dict()))
    assert again == plan and again.plan_hash() == plan.plan_hash()


JSONISH = st.lists(
    st.sampled_from(
        list('{}[]",:-+.0123456789eE ')
        + [
            "true",
            "false",
            "null",
            "NaN",
            "Infinity",
            '"version"',
            '"budget"',
            '"epsilon"',
            "1e400",
            "\\u0000",
            "\\",
        ]
    ),
    max_size=200,
).map("".join)


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=QUIET)
@given(text=JSONISH | st.text(max_size=300) | st.binary(max_size=300))
def test_random_json_text_plan(text: str | bytes) -> None:
    r = parse_or_plan_error(text)
    assert isinstance(r, (Plan, PlanError))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**500), 10**500)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=15), children, max_size=5)
    ),
    max_leaves=30,
)


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=200, deadline=None, database=None, suppress_health_check=QUIET)
@given(doc=JSON)
def test_random_json_values_plan(doc: Any) -> None:
    r = parse_or_plan_error(json.dumps(doc))
    assert isinstance(r, (Plan, PlanError))


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*prefix, i))


def key_of(path: tuple[Any, ...]) -> str:
    """The PlanError key naming a path: ``queries[2].epsilon``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    get(doc, path[:-1])[path[-1]] = value


ALL_PATHS = [p for p in paths(base_plan()) if p]


@pytest.mark.timeout(120, method="thread")
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=QUIET)
@given(path=st.sampled_from(ALL_PATHS), value=JSON)
def test_mutated_plan_any_value(path: tuple[Any, ...], value: Any) -> None:
    doc = base_plan()
    put(doc, path, value)
    r = parse_or_plan_error(json.dumps(doc))
    assert isinstance(r, (Plan, PlanError))
    if isinstance(r, Plan):  # an accepted value is really in the plan
        assert parse_plan_text(json.dumps(r.to_dict())) == r


RAW = "__raw_json__"


def dumps_with_raw(doc: Any, raw: str) -> str:
    """JSON text of ``doc`` with the string RAW replaced by the raw token ``raw`` (e.g. 1e400)."""
    text = json.dumps(doc)
    assert text.count(f'"{RAW}"') == 1
    return text.replace(f'"{RAW}"', raw)


BAD_EPSILON = st.one_of(
    st.floats(max_value=0, allow_nan=False, allow_infinity=False).map(repr),
    st.integers(max_value=0).map(str),
    st.sampled_from(
        [
            "0",
            "-0.0",
            '"NaN"',
            '"nan"',
            "1e400",
            "-1e400",
            "true",
            "false",
            '"0.1"',
            "null",
            "[]",
            "{}",
            "[0.1]",
            "1" + "0" * 400,
        ]
    ),
)
QUERY_EPS_PATHS = [("queries", i, "epsilon") for i in range(len(base_plan()["queries"]))]
REQUIRED = [
    ("version",),
    ("budget",),
    ("privacy_unit",),
    ("columns",),
    ("queries",),
    ("budget", "epsilon"),
    ("privacy_unit", "neighbouring"),
    ("columns", "wage", "type"),
    ("columns", "wage", "bounds"),
    ("columns", "region", "categories"),
    ("queries", 1, "column"),
    ("queries", 3, "delta"),
    *[("queries", i, k) for i in range(6) for k in ("name", "statistic", "mechanism", "epsilon")],
]
OBJECT_PATHS = [p for p in paths(base_plan()) if isinstance(get(base_plan(), p), dict) and p != ("columns",)]
ALLOWED = {
    "version",
    "title",
    "budget",
    "privacy_unit",
    "columns",
    "queries",
    "accounting",
    "epsilon",
    "delta",
    "neighbouring",
    "max_rows_per_person",
    "id_column",
    "type",
    "bounds",
    "categories",
    "missing",
    "name",
    "statistic",
    "mechanism",
    "column",
    "group_by",
    "calibration",
    "q",
    "bins",
    "candidates",
    "grid_step",
    "utility",
    "method",
    "delta_prime",
}


@st.composite
def mutation(draw: st.DrawFn, kind: str) -> tuple[str, str]:
    """A mutated plan's JSON text and the key its PlanError must name."""
    doc = base_plan()
    if kind == "budget_epsilon":
        path: tuple[Any, ...] = ("budget", "epsilon")
        raw = draw(BAD_EPSILON)
    elif kind == "query_epsilon":
        path = draw(st.sampled_from(QUERY_EPS_PATHS))
        raw = draw(BAD_EPSILON | st.floats(min_value=100, exclude_min=True, allow_infinity=False).map(repr))
    elif kind == "delta":
        path = ("budget", "delta")
        raw = draw(
            st.floats(min_value=1, allow_nan=False, allow_infinity=False).map(repr)
            | st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False).map(repr)
            | st.sampled_from(["1", "2", '"1e-6"', "true", "1e400"])
        )
    elif kind == "reversed_bounds":
        col = draw(st.sampled_from(["wage", "education"]))
        lo = draw(st.integers(-(10**6), 10**6))
        hi = draw(st.integers(lo, lo + 10**6))
        path = ("columns", col, "bounds")
        raw = json.dumps([hi, lo])  # reversed, or equal
    elif kind == "max_rows":
        path = ("privacy_unit", "max_rows_per_person")
        raw = draw(
            st.integers(max_value=0).map(str)
            | st.integers(min_value=100_001).map(str)
            | st.sampled_from(["1.5", "2.0", "true", '"2"', "null", "1e400", "1" + "0" * 400])
        )
    elif kind == "drop_required":
        path = draw(st.sampled_from(REQUIRED))
        del get(doc, path[:-1])[path[-1]]
        return json.dumps(doc), key_of(path)
    elif kind == "unknown_key":
        obj_path = draw(st.sampled_from(OBJECT_PATHS))
        name = draw(st.text(min_size=1, max_size=12).filter(lambda s: s not in ALLOWED))
        get(doc, obj_path)[name] = draw(JSON)
        return json.dumps(doc), key_of((*obj_path, name))
    elif kind == "nested":
        path = draw(
            st.sampled_from(
                [
                    ("budget", "epsilon"),
                    ("columns", "wage", "bounds"),
                    ("queries", 2, "epsilon"),
                    ("privacy_unit", "max_rows_per_person"),
                    ("title",),
                ]
            )
        )
        # within the JSON reader's depth at every path (queries[2].epsilon sits 3 deep); deeper plans are refused
        # as "nested too deeply" before they are validated (test_deep_nesting_plan, tests/core/test_jsonin.py)
        depth = draw(st.integers(2, jsonin.MAX_DEPTH - 3))
        raw = "[" * depth + "]" * depth
    elif kind == "huge_grid":
        path = ("queries", 4, "grid_step")
        raw = draw(st.sampled_from(["5e-324", "1e-300", "1e-15", "0.0001"]))
    elif kind == "huge_number":
        path = draw(
            st.sampled_from(
                [
                    ("columns", "wage", "bounds", 1),
                    ("budget", "epsilon"),
                    ("queries", 4, "q"),
                    ("budget", "delta"),
                ]
            )
        )
        raw = draw(st.sampled_from(["1" + "0" * 400, "-1" + "0" * 400, "1e400", "-1e400"]))
    else:  # pragma: no cover - a typo in the parametrisation
        raise AssertionError(kind)
    put(doc, path, RAW)
    return dumps_with_raw(doc, raw), key_of(path)


@pytest.mark.timeout(120, method="thread")
@pytest.mark.parametrize(
    "kind",
    [
        "budget_epsilon",
        "query_epsilon",
        "delta",
        "reversed_bounds",
        "max_rows",
        "drop_required",
        "unknown_key",
        "nested",
        "huge_grid",
        "huge_number",
    ],
)
@settings(max_examples=60, deadline=None, database=None, suppress_health_check=QUIET)
@given(data=st.data())
def test_plan_mutation_names_its_key(kind: str, data: st.DataObject) -> None:
    text, key = data.draw(mutation(kind))
    with pytest.raises(PlanError) as ei:
        parse_plan_text(text)
    assert ei.value.key == key, str(ei.value)
    # control characters in a key are shown escaped (issue 24, item 8: no forged lines in messages)
    assert str(ei.value).startswith(shown(where_in_plan(key, ei.value.query_name))), str(ei.value)


@pytest.mark.timeout(120, method="thread")
@pytest.mark.parametrize("depth", [2_000, 10_000, 50_000, 100_000, 1_000_000])
@pytest.mark.parametrize("brackets", [("[", "]"), ('{"a":', "}")])
def test_deep_nesting_plan(depth: int, brackets: tuple[str, str]) -> None:
    doc = base_plan()
    put(doc, ("budget", "epsilon"), RAW)
    text = dumps_with_raw(doc, brackets[0] * depth + "1" + brackets[1] * depth)
    for t in (text, text.encode("utf-8")):
        with pytest.raises(PlanError) as ei:
            parse_plan_text(t)
        # Too deep for the JSON reader (no key), or read and refused as not a number.
        if ei.value.key:
            assert ei.value.key == "budget.epsilon" and "must be a number" in ei.value.message
        else:
            assert "nested too deeply" in ei.value.message
