"""Hostile JSON through the command line's real entry points (issue 26, item 5): a plan file, an officer's approval
file and a release package under review are read by the one reader of untrusted JSON
(``dpdesk/core/common/jsonin.py``); each of its refusals ends in the command's documented exit code and a message
naming the problem, never a traceback, and nothing is written.

Run in-process (``dpdesk.cli.main``, as tests/cli/test_govern.py). Deterministic: fixed inputs; keys and nonces are
random, but every check holds for any key.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dpdesk.core.common import jsonin
from tests.cli.test_govern import DATA, PLAN, Keys, approve, entries, plan_with_budget, run

DEEP = "[" * (jsonin.MAX_DEPTH + 1) + "]" * (jsonin.MAX_DEPTH + 1)
PLAN_TEXT = PLAN.read_text(encoding="utf-8")
assert PLAN_TEXT.count('"epsilon": 1.0') == 1 and PLAN_TEXT.count('"title": ') == 1


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and 'File "' not in err, err


# ----------------------------------------------------------------------------- a plan file: exit 2

#: name -> (the plan file's bytes, what the message says)
HOSTILE_PLANS: dict[str, tuple[bytes, str]] = {
    "a key twice": (
        PLAN_TEXT.replace('"epsilon": 1.0', '"epsilon": 0.1, "epsilon": 1.0').encode(),
        'the key "epsilon" appears twice',
    ),
    "nested too deeply": (
        PLAN_TEXT.replace('"title": ', f'"note": {DEEP}, "title": ').encode(),
        "nested too deeply",
    ),
    "NaN": (
        PLAN_TEXT.replace('"epsilon": 1.0', '"epsilon": NaN').encode(),
        "NaN is not a number a plan may hold",
    ),
    "a number beyond a float": (
        PLAN_TEXT.replace('"epsilon": 1.0', '"epsilon": 1e999').encode(),
        "1e999 is not a number a plan may hold",
    ),
    "an integer of too many digits": (
        PLAN_TEXT.replace('"epsilon": 1.0', '"epsilon": ' + "1" * (jsonin.MAX_INT_DIGITS + 1)).encode(),
        "holds a number with too many digits",
    ),
    "not UTF-8": (
        PLAN_TEXT.replace('"CPS wages"', '"CPS \udcff"').encode("utf-8", "surrogateescape"),
        "not UTF-8",
    ),
    "not JSON": (PLAN_TEXT.replace('"epsilon": 1.0', '"epsilon": 1.0,,').encode(), "is not valid JSON"),
}


@pytest.mark.parametrize("case", list(HOSTILE_PLANS))
def test_a_hostile_plan_file_exits_2_with_its_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    raw, message = HOSTILE_PLANS[case]
    plan = tmp_path / "plan.json"
    plan.write_bytes(raw)
    code, _out, err = run(capsys, "budget", plan)
    assert code == 2 and message in err, err
    _no_traceback(err)


@pytest.mark.slow
def test_a_plan_with_a_bom_is_still_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes(b"\xef\xbb\xbf" + PLAN_TEXT.encode())
    code, _out, err = run(capsys, "budget", plan)
    assert code == 0, err


@pytest.mark.slow
def test_a_plan_with_a_key_twice_is_not_released(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Python keeps the last of two values, another reader the first: which budget did the curator mean?"""
    plan = tmp_path / "plan.json"
    plan.write_bytes(HOSTILE_PLANS["a key twice"][0])
    code, _out, err = run(capsys, "release", plan, "--data", DATA, "--out", tmp_path / "out")
    assert code == 2 and 'the key "epsilon" appears twice' in err, err
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- an approval file: exit 2

#: name -> how the signed approval's text is made hostile
HOSTILE_APPROVALS: dict[str, Callable[[str], bytes]] = {
    "a key twice": lambda t: t.replace(
        '"payload": {', '"payload": {"action": "change_settings", ', 1
    ).encode(),
    "nested too deeply": lambda t: t.replace('"payload": {', f'"payload": {{"deep": {DEEP}, ', 1).encode(),
    "NaN": lambda t: t.replace('"payload": {', '"payload": {"n": NaN, ', 1).encode(),
    "not UTF-8": lambda t: b"\xff" + t.encode(),
    "over 64 KiB": lambda t: t.replace(
        '"payload": {', '"payload": {"pad": "' + "x" * 65536 + '", ', 1
    ).encode(),
    "empty": lambda t: b"\xef\xbb\xbf  \n",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HOSTILE_APPROVALS))
def test_a_hostile_approval_file_exits_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    keys = Keys(tmp_path / "ann", capsys)
    assert run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "first")[0] == 0
    assert run(capsys, "ledger", "govern", "--data", DATA, "--officer", keys.public)[0] == 0
    raised = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, keys, "approve-settings", tmp_path / "a.json", raised)
    text = ap.read_text(encoding="utf-8")
    assert text.count('"payload": {') == 1
    ap.write_bytes(HOSTILE_APPROVALS[case](text))
    before = entries(capsys)
    code, _out, err = run(
        capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "more", "--approval", ap
    )
    assert code == 2 and "not a dpdesk approval file" in err, err
    _no_traceback(err)
    assert entries(capsys) == before


# ----------------------------------------------------------------------------- a package under review: exit 1


@pytest.fixture
def package(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "pkg")
    assert code == 0, err
    code, out, _err = run(capsys, "review", tmp_path / "pkg")
    assert code == 0 and "Intact." in out
    return tmp_path / "pkg"


#: name -> (the file changed, how, what review says)
HOSTILE_PACKAGES: dict[str, tuple[str, Callable[[str], bytes], str]] = {
    # the hash covers the value Python keeps; a reader that keeps the first shows the other title
    "a key twice in an entry": (
        "ledger.json",
        lambda t: t.replace(
            '"title": "CPS wages"', '"title": "Approved by the board", "title": "CPS wages"', 1
        ).encode(),
        "ledger.json is missing or unreadable",
    ),
    "a key twice in the plan": (
        "plan.json",
        lambda t: t.replace('"title": ', '"title": "Approved by the board", "title": ', 1).encode(),
        "plan.json cannot be read as a plan",
    ),
    "nested too deeply": (
        "ledger.json",
        lambda t: t.replace('"entries": [', f'"deep": {DEEP}, "entries": [', 1).encode(),
        "ledger.json is missing or unreadable",
    ),
    "a BOM dpdesk never writes": (
        "ledger.json",
        lambda t: b"\xef\xbb\xbf" + t.encode(),
        "ledger.json is missing or unreadable",
    ),
    "Infinity": (
        "ledger.json",
        lambda t: t.replace('"epsilon": 1.0', '"epsilon": Infinity', 1).encode(),
        "ledger.json is missing or unreadable",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(HOSTILE_PACKAGES))
def test_a_hostile_package_is_not_intact(
    capsys: pytest.CaptureFixture[str], package: Path, case: str
) -> None:
    name, change, message = HOSTILE_PACKAGES[case]
    path = package / name
    text = path.read_text(encoding="utf-8")
    path.write_bytes(change(text))
    assert path.read_bytes() != text.encode()
    code, out, err = run(capsys, "review", package)
    assert code == 1 and message in out + err, out + err
    assert "Intact." not in out.splitlines()
    _no_traceback(err)


# ----------------------------------------------------------------------------- a ledger line: exit 3


@pytest.mark.slow
def test_a_ledger_line_with_a_key_twice_is_damage(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A key given twice in a ledger line: the hash covers the parsed object (the value Python keeps), so the line
    verified, though its bytes hold a second value another reader would show. Now damage, exit 3."""
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "pkg")
    assert code == 0, err
    (ledger,) = (Path(os.environ["DPDESK_HOME"]) / "ledgers").glob("ds-*.jsonl")
    raw = ledger.read_bytes()
    assert raw.count(b'"title":"CPS wages"') >= 1
    ledger.write_bytes(
        raw.replace(b'"title":"CPS wages"', b'"title":"Approved by the board","title":"CPS wages"', 1)
    )
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 3 and "not a valid entry (damaged or edited)" in out + err, out + err
    _no_traceback(err)
