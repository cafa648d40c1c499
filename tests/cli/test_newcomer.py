"""A command line a newcomer can follow (issue 15, item 8): every option explained, each command's help with an
example and its exit codes, `budget` naming the accounting method in force, and user-supplied text made visible."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dpdesk.cli import main
from dpdesk.cli.parser import build_parser, parsers
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors and --help
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _exit_codes(text: str) -> dict[int, str]:
    """The exit codes a help lists, with their meanings."""
    assert "Exit codes:" in text
    section = text.split("Exit codes:", 1)[1]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^ +(\d+) +(\S.*)$", section, flags=re.M)}


def _examples(text: str) -> list[list[str]]:
    """The example commands a help shows, as argument lists (without the leading "dpdesk")."""
    match = re.search(r"^Examples?:\n((?:  dpdesk .*\n)+)", text, flags=re.M)
    assert match, text
    return [shlex.split(line)[1:] for line in match.group(1).splitlines()]


def test_every_option_has_a_help_and_every_help_an_example_and_the_exit_codes() -> None:
    top = build_parser()
    walked = parsers(top)
    paths = {path for path, _parser in walked}
    assert {"", "budget", "release", "simulate", "ledger verify", "officer approve-plan", "review"} <= paths
    for path, parser in walked:
        text = parser.format_help()
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue  # the old spellings, kept working but not advertised
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert (choice.help or "").strip(), (path, choice.dest)
                continue
            assert (action.help or "").strip(), (path, action.dest)
            for option in action.option_strings:
                assert option in text, (path, option)
        codes = _exit_codes(text)
        assert 0 in codes and len(codes) >= 2 and all(m.strip() for m in codes.values()), (path, codes)
        examples = _examples(text)
        for words in examples:  # each example is a command this parser accepts, of this command
            assert words[: len(path.split())] == path.split(), (path, words)
            args = top.parse_args(words)
            assert args is not None
    assert "--selftest" in top.format_help()
    assert ["--selftest"] in _examples(top.format_help())


def test_help_names_every_exit_code_main_returns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "--help")
    assert code == 0
    assert set(_exit_codes(out)) == {0, 1, 2, 3, 4, 5, 130}
    code, out, _err = run(capsys, "review", "--help")
    assert code == 0 and "changed" in _exit_codes(out)[1]
    code, out, _err = run(capsys, "release", "--help")
    assert code == 0 and "budget" in _exit_codes(out)[1]


def test_selftest_with_other_arguments_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "--selftest", "suggest", str(DATA))
    assert code == 2 and "--selftest" in err


def test_help_is_translated() -> None:
    env = {**os.environ, "DPDESK_LANG": "zh_CN"}
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "release", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "退出码：" in r.stdout and "示例：" in r.stdout and "Exit codes" not in r.stdout
    assert "敏感数据表" in r.stdout  # --data's description


def test_budget_names_the_method_in_force_and_no_over_budget_beside_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _err = run(capsys, "budget", str(PLAN))
    assert code == 0
    totals = out.split("Totals", 1)[1]
    assert "in force: sequential composition" in totals
    # the sample fits under sequential composition (in force) and would not under the other two
    assert "OVER BUDGET" not in out
    assert totals.count("(not in force; would exceed the budget)") == 2
    over = tmp_path / "over.json"
    over.write_text(PLAN.read_text(encoding="utf-8").replace('"epsilon": 0.1}', '"epsilon": 0.3}'), "utf-8")
    code, out, _err = run(capsys, "budget", str(over))
    assert code == 1
    lines = out.split("Totals", 1)[1].splitlines()
    assert [line.startswith(" * sequential") for line in lines if "OVER BUDGET" in line] == [True, False]
    assert "OVER BUDGET under sequential composition, the method in force" in out


ESC = (
    "\x1b[2J\rIntact."  # an escape code and a carriage return: raw, they would rewrite the terminal's screen
)


def _no_raw_controls(text: str) -> bool:
    return "\x1b" not in text and "\r" not in text


def test_ledger_verbs_show_user_text_with_its_control_characters_made_visible(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "census.csv"
    data.write_bytes(DATA.read_bytes())
    raised = tmp_path / "raised.json"
    raised.write_text(PLAN.read_text(encoding="utf-8").replace('"epsilon": 1.0', '"epsilon": 2.0'), "utf-8")
    code, _out, err = run(
        capsys, "ledger", "change-settings", str(raised), "--data", str(data), "--reason", ESC
    )
    assert code == 0, err
    code, out, _err = run(capsys, "ledger", "verify", "--data", str(data))
    assert code == 0 and "\\x1b[2J\\rIntact." in out and _no_raw_controls(out)
    (tmp_path / "pass.txt").write_text("officer passphrase\n", encoding="utf-8")
    (tmp_path / "rpass.txt").write_text("recovery passphrase\n", encoding="utf-8")
    code, out, err = run(
        capsys,
        "officer",
        "create",
        "--name",
        "Eve" + ESC,
        "--out",
        str(tmp_path / "keys"),
        "--passphrase-file",
        str(tmp_path / "pass.txt"),
        "--recovery-passphrase-file",
        str(tmp_path / "rpass.txt"),
    )
    # a new officer's name may no longer hold control characters (issue 24, item 8): refused, nothing written
    assert code == 2 and "control character" in err and not (tmp_path / "keys").exists(), err
    # one made by an older version (which accepted it) is still shown with them made visible
    from dpdesk.core.governance import officer as of

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(of, "shown", lambda text, **_kw: str(text))  # the older version's check: none
        of.create_officer(tmp_path / "keys", "Eve" + ESC, "", "officer passphrase", "recovery passphrase")
    public = next((tmp_path / "keys").glob("*-public.json"))
    code, out, err = run(capsys, "ledger", "govern", "--data", str(data), "--officer", str(public))
    assert code == 0, err
    assert "Governed by Eve\\x1b[2J\\rIntact." in out and _no_raw_controls(out)
    code, out, _err = run(capsys, "ledger", "head", "--data", str(data))
    assert code == 0 and "Governed by Eve\\x1b[2J\\rIntact." in out and _no_raw_controls(out)
    code, out, _err = run(capsys, "budget", str(raised), "--data", str(data))
    assert code == 0 and "Governed by Eve\\x1b" in out and _no_raw_controls(out)
    export = tmp_path / ("ledger" + ESC + ".json")
    code, out, err = run(capsys, "ledger", "export", "--data", str(data), "--out", str(export))
    assert code == 0, err
    assert export.is_file() and "ledger\\x1b[2J\\rIntact..json" in out and _no_raw_controls(out)
