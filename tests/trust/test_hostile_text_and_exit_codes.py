"""Issue 14, items 1, 4 and 6: hostile text cannot forge output, bad input ends in an exit code, CSVs are safe.

1. A plan title holding escape codes cannot make ``dpdesk review`` print a forged "Intact."; a ``--reason``
   cannot blank a line of ``dpdesk ledger``; the PDF and the app's review window show control characters as
   visible escapes.
4. Epsilon 5e-324 or 1e-300, bounds [0, 5e-324], a 5,000-digit integer, a Parquet file that makes polars panic,
   deeply nested JSON or a list in a package, and a closed output pipe each end with the documented exit code and
   a message, never a traceback; a fuzz test over the command line checks exit codes 0-3.
6. Every CSV dpdesk writes (release.csv, simulate's CSV) goes through one writer that neutralises formulas.

Deterministic, except the fuzz test, whose examples hypothesis derives from a fixed database-free seed
(``derandomize``): it cannot fail by chance.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpdesk.cli import main
from dpdesk.core.ledger.entries import salvaged
from tests.cli.test_govern import DATA, PLAN, run

ROOT = Path(__file__).resolve().parents[2]
PANIC_PARQUET = Path(__file__).resolve().parent / "data" / "panic.parquet"
FORGED_TITLE = "CPS\x1b[2K\rIntact.\nIntact.\x1b[8m"


def _plan(tmp_path: Path, name: str, change: Any) -> Path:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    change(data)
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _no_control(text: str) -> None:
    assert not [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0], repr(text)


# item 1 -----------------------------------------------------------------------------------------------------


def test_shown_makes_control_characters_visible() -> None:
    from dpdesk.core.common.text import shown

    assert shown("a\x1b[2K\rb\tc\nd\x7f\x9b\u202e") == "a\\x1b[2K\\rb\\tc\\nd\\x7f\\x9b\\u202e"
    assert shown("a\nb", keep_newlines=True) == "a\nb"
    assert shown("统计 ok") == "统计 ok"


def test_a_title_cannot_forge_intact_in_review(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plan = _plan(tmp_path, "forged.json", lambda d: d.__setitem__("title", FORGED_TITLE))
    out_dir = tmp_path / "pkg"
    code, _out, err = run(capsys, "release", plan, "--data", DATA, "--out", out_dir)
    assert code == 0, err
    csv_path = out_dir / "release.csv"
    csv_path.write_bytes(csv_path.read_bytes() + b"tampered\n")
    code, out, _err = run(capsys, "review", out_dir)
    assert code == 1
    _no_control(out)
    assert "\\x1b[2K\\rIntact.\\nIntact.\\x1b[8m" in out  # the title, shown with its escapes visible
    assert [line for line in out.splitlines() if line.strip() == "Intact."] == []
    assert out.splitlines()[-1] == "NOT INTACT: see the problems above."


def test_a_reason_cannot_blank_a_ledger_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "first")
    assert code == 0, err
    bigger = _plan(tmp_path, "bigger.json", lambda d: d["budget"].__setitem__("epsilon", 3.0))
    reason = "board 12\r\x1b[2K\x1b[1A\x1b[2K"
    code, _out, err = run(capsys, "ledger", "change-settings", bigger, "--data", DATA, "--reason", reason)
    assert code == 0, err
    code, out, _err = run(capsys, "ledger", "--data", DATA)
    assert code == 0
    _no_control(out)
    assert "board 12\\r\\x1b[2K\\x1b[1A\\x1b[2K" in out


def test_pdf_text_shows_control_characters() -> None:
    from dpdesk.core.publish.pdftext import markup

    assert "\x1b" not in markup("title\x1b[8m") and "\\x1b[8m" in markup("title\x1b[8m")


def test_the_review_window_shows_control_characters(qtbot: Any) -> None:
    from types import SimpleNamespace

    from PySide6.QtWidgets import QLabel, QTableWidget

    from dpdesk.gui.views.review_window import ReviewWindow

    result = SimpleNamespace(
        intact=False,
        kind="package",
        problems=["release.csv\x1b[2K\rIntact."],
        spend={"release_id": "r\x1b[8m", "time": "t", "dataset": "ds", "method": "basic", "charged": {}},
        plan={"title": FORGED_TITLE, "queries": []},
        files={"release.csv\r": "modified\x1b[8m"},
        entries=[salvaged({"seq": 1, "type": "spend", "time": "t\x1b[2K", "hash": "h\x1b[8m"})],
        stored=[{"seq": 1, "type": "spend\x1b[2K", "time": "t\x1b[2K", "hash": "h\x1b[8m"}],
    )
    w = ReviewWindow(result, "pkg\x1b[2K")
    qtbot.addWidget(w)
    texts = [lab.text() for lab in w.findChildren(QLabel)] + [w.windowTitle()]
    for table in w.findChildren(QTableWidget):
        texts += [
            table.item(r, c).text()
            for r in range(table.rowCount())
            for c in range(table.columnCount())
            if table.item(r, c) is not None
        ]
    joined = "\n".join(texts)
    _no_control(joined)
    assert "\\x1b[2K\\rIntact." in joined and "\\x1b[8m" in joined


# item 4 -----------------------------------------------------------------------------------------------------


def _set_query_epsilon(value: float) -> Any:
    return lambda d: d["queries"][0].__setitem__("epsilon", value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set_query_epsilon(5e-324), 'query 1 ("people"): 5e-324 is too small'),
        (_set_query_epsilon(1e-300), 'query 1 ("people"): 1e-300 is too small'),
        (
            lambda d: d["columns"]["wage"].__setitem__("bounds", [0, 5e-324]),
            'column "wage": the bounds',
        ),
    ],
    ids=["epsilon-5e-324", "epsilon-1e-300", "bounds-5e-324"],
)
def test_extreme_numbers_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: Any, message: str
) -> None:
    plan = _plan(tmp_path, "extreme.json", change)
    for args in (("budget", plan), ("release", plan, "--data", DATA, "--out", tmp_path / "out")):
        code, _out, err = run(capsys, *args)
        assert code == 2 and message in err, err
    assert not (tmp_path / "out").exists()


def test_a_five_thousand_digit_integer_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plan = tmp_path / "digits.json"
    plan.write_text(PLAN.read_text(encoding="utf-8").replace('"epsilon": 1.0', '"epsilon": ' + "9" * 5000))
    code, _out, err = run(capsys, "budget", plan)
    assert code == 2 and "holds a number with too many digits" in err, err


def test_a_parquet_file_that_makes_polars_panic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = run(capsys, "release", PLAN, "--data", PANIC_PARQUET, "--out", tmp_path / "out")
    assert code == 2 and "cannot read this parquet file" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_panicking_reader_prints_one_clear_line_not_rusts_report(tmp_path: Path) -> None:
    """In a process of its own (the panic report goes to file descriptor 2, which capsys does not see), with
    RUST_BACKTRACE=1 as on a developer's machine: the release ends in exit 2 with one line naming the file and what
    to think of it; none of polars' panic reports or backtraces reach the screen (they did, 7 reports)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "DPDESK_HOME": str(tmp_path / "home"), "RUST_BACKTRACE": "1"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk.cli",
            "release",
            str(PLAN),
            "--data",
            str(PANIC_PARQUET),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "panicked" not in done.stderr and "stack backtrace" not in done.stderr, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert (
        lines[-1].startswith("dpdesk: ") and "cannot read this parquet file (the file is damaged" in lines[-1]
    )


def test_a_reader_panic_is_caught_narrowly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever file triggers it, a polars panic (a BaseException) is a refused file; an interrupt is not."""
    import polars as pl
    from polars.exceptions import PanicException

    good = tmp_path / "good.parquet"
    good.write_bytes(PANIC_PARQUET.read_bytes())

    def panics(*_a: Any, **_k: Any) -> Any:
        raise PanicException("range end index 18446744073709551399 out of range")

    monkeypatch.setattr(pl, "read_parquet", panics)
    monkeypatch.setattr(pl, "scan_parquet", panics)
    code, _out, err = run(capsys, "release", PLAN, "--data", good, "--out", tmp_path / "out")
    assert code == 2 and "cannot read this parquet file (the file is damaged" in err, err
    assert "range end index" not in err  # a panic's internals are not the user's business
    code, _out, err = run(capsys, "suggest", good)
    assert code == 2 and "the file is damaged" in err, err


@pytest.mark.parametrize("name", ["ledger.json", "plan.json"])
@pytest.mark.parametrize("content", ["[" * 100_000 + "]" * 100_000, "[]", '{"entries": [[]]}'])
def test_a_hostile_package_is_a_review_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: str
) -> None:
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "pkg")
    assert code == 0, err
    (tmp_path / "pkg" / name).write_text(content, encoding="utf-8")
    code, out, _err = run(capsys, "review", tmp_path / "pkg")
    assert code == 1 and "PROBLEM:" in out and out.endswith("NOT INTACT: see the problems above.\n")


class _ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_quietly_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["ledger", "list"]) == 0


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``dpdesk ledger | head -1``: the reader has gone before dpdesk writes; no traceback, no "Exception ignored"."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DPDESK_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpdesk", "suggest", str(DATA)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has printed anything: its writes meet a closed pipe
    with proc.stderr:
        err = proc.stderr.read().decode("utf-8", "replace")
    assert proc.wait(timeout=120) == 0, err
    assert err == ""


# the fuzz test over the command line --------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([5e-324, 1e-300, 1e308, -0.0, 0, 1, 10**400]),
)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBER, _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=8,
)
_KEYS = [
    ("title",),
    ("budget", "epsilon"),
    ("budget", "delta"),
    ("columns", "wage", "bounds"),
    ("columns", "wage"),
    ("queries", 0, "epsilon"),
    ("queries", 1, "name"),
    ("queries", 2),
    ("queries", 3, "delta"),
    ("privacy_unit",),
    ("queries",),
]


def _mutated_plan(key: tuple[Any, ...], value: Any) -> str:
    data: Any = json.loads(PLAN.read_text(encoding="utf-8"))
    target = data
    for k in key[:-1]:
        target = target[k]
    target[key[-1]] = value
    return json.dumps(data)


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    command=st.sampled_from(["budget", "budget-json", "review", "ledger", "suggest", "raw"]),
    key=st.sampled_from(_KEYS),
    value=_JSON,
    raw=st.one_of(_TEXT, st.binary(max_size=40).map(lambda b: b.decode("latin-1"))),
    extra=st.lists(_TEXT, max_size=3),
)
@example(command="budget", key=("queries", 0, "epsilon"), value=5e-324, raw="", extra=[])
@example(command="budget", key=("columns", "wage", "bounds"), value=[0, 5e-324], raw="", extra=[])
@example(command="review", key=("title",), value="x", raw="[" * 100_000, extra=[])
def test_fuzz_the_command_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    key: tuple[Any, ...],
    value: Any,
    raw: str,
    extra: list[str],
) -> None:
    """Mutated plans, hostile files and random arguments: the exit code is 0-3, never a traceback."""
    plan = tmp_path / "fuzz.json"
    hostile = command == "raw" or raw.startswith("[" * 1000)
    plan.write_text(raw if hostile else _mutated_plan(key, value), encoding="utf-8")
    args: list[str]
    if command == "budget":
        args = ["budget", str(plan)]
    elif command == "budget-json":
        args = ["budget", str(plan), "--json"]
    elif command == "review":
        args = ["review", str(plan)]
    elif command == "ledger":
        args = ["ledger", *extra[:1], "--data", str(plan)]
    elif command == "suggest":
        args = ["suggest", str(plan)]
    else:
        args = [raw, *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's usage errors and --help
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    out, err = capsys.readouterr()
    assert code in (0, 1, 2, 3), (args, code, err)
    assert "Traceback" not in out + err


# item 6 -----------------------------------------------------------------------------------------------------


def test_the_simulate_csv_is_formula_safe(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def hostile(d: dict[str, Any]) -> None:
        d["queries"][0]["name"] = '=HYPERLINK("http://evil.example","click")'
        d["columns"]["region"]["categories"][0] = "@SUM(1+1)"

    plan = _plan(tmp_path, "hostile.json", hostile)
    out = tmp_path / "sim.csv"
    code, _out, err = run(capsys, "simulate", plan, "--runs", "2", "--seed", "1", "--out", out)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    rows = list(csv.reader(line for line in text.splitlines() if not line.startswith("#")))
    cells = [c for r in rows for c in r]
    assert '\'=HYPERLINK("http://evil.example","click")' in cells
    assert any(c.startswith("'@SUM(1+1)") for c in cells)
    for c in cells:  # numbers, negative ones too, stay numbers
        if c and c[0] in "=+-@":
            float(c)


def test_release_and_simulate_share_one_writer() -> None:
    from dpdesk.core.dp.values import Row, csv_bytes, rows_to_csv

    row = Row("=cmd", "-x", "-1.5", "0", "1", "laplace", "0.1", "0")
    assert rows_to_csv([row]) == csv_bytes(
        ("query", "group", "value", "ci_low", "ci_high", "mechanism", "epsilon", "delta"), [row.as_list()]
    )
    assert csv_bytes(("a",), [["+1"], ["+x"]], comments=("note\x1b",)) == b"# note\\x1b\na\n+1\n'+x\n"


def test_a_deeply_nested_line_in_a_ledger_is_damage_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """A line of 100,000 nested lists appended to a dataset's ledger (in the home, not a package): `ledger verify`
    names the ledger broken (exit 3); the JSON decoder's RecursionError never escapes as a traceback."""
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "pkg")
    assert code == 0, err
    (ledger,) = (dpdesk_home / "ledgers").glob("ds-*.jsonl")
    with ledger.open("a", encoding="utf-8") as f:
        f.write("[" * 100_000 + "]" * 100_000 + "\n")
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 3 and "not a valid entry" in (out + err), (out, err)
    assert "Traceback" not in err and "RecursionError" not in err
