"""``dpdesk ledger VERB``: each ledger action is its own verb with only its own options; the old spellings
(``ledger --export OUT`` and the like) keep working, with a one-line note on stderr naming the new spelling.

Run in-process (``dpdesk.cli.main``), with the same exit codes and output as ``python -m dpdesk``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpdesk.cli import main
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
VERBS = (
    "list",
    "verify",
    "export",
    "export-release",
    "statement",
    "acknowledge",
    "change-settings",
    "head",
    "govern",
    "link",
    "declare-new",
    "forget-identity",
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors and --help
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def released(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    code, _out, err = run(capsys, "release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "first"))
    assert code == 0, err
    return tmp_path / "first"


def _options(capsys: pytest.CaptureFixture[str], *args: str) -> set[str]:
    code, out, _err = run(capsys, *args, "--help")
    assert code == 0
    return {word.rstrip(",") for line in out.splitlines() for word in line.split() if word.startswith("--")}


def test_each_verbs_help_lists_only_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    expected = {
        "list": {"--help", "--json"},
        "verify": {"--help", "--data", "--json"},
        "export": {"--help", "--data", "--out", "--force"},
        "export-release": {"--help", "--data", "--out"},
        "statement": {"--help", "--data", "--out", "--force"},
        "acknowledge": {
            "--help",
            "--data",
            "--reason",
            "--cost",
            "--costs",
            "--settings",
            "--exported",
            "--approval",
        },
        "change-settings": {"--help", "--data", "--reason", "--approval"},
        "head": {"--help", "--data", "--json"},
        "govern": {"--help", "--data", "--officer", "--require-signed-plans", "--approval"},
        "link": {"--help", "--data", "--to"},
        "declare-new": {"--help", "--data", "--resembles", "--reason", "--approval"},
        "forget-identity": {"--help", "--reason", "--approval"},
    }
    assert set(expected) == set(VERBS)
    for verb, options in expected.items():
        assert _options(capsys, "ledger", verb) == options, verb
    code, out, _err = run(capsys, "ledger", "--help")
    assert code == 0 and all(verb in out for verb in VERBS)
    assert "--export " not in out and "--statement" not in out  # the old spellings are not advertised


def test_a_verb_refuses_another_verbs_options(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    for args in (
        ("statement", "--data", str(DATA), "--out", str(tmp_path / "s.pdf"), "--reason", "x"),
        ("export", "--data", str(DATA), "--out", str(tmp_path / "l.jsonl"), "--json"),
        ("acknowledge", "--data", str(DATA), "--reason", "x", "--out", str(tmp_path / "a")),
        ("list", "--data", str(DATA)),
    ):
        code, _out, err = run(capsys, "ledger", *args)
        assert code == 2 and "unrecognized arguments" in err, args
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dpdesk-home", "first"]  # nothing was written


def test_old_options_before_a_verb_are_refused_not_dropped(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    """`ledger --statement S export ...` would otherwise do the export alone (issue 12's bug, in a new form)."""
    code, _out, err = run(
        capsys,
        "ledger",
        "--statement",
        str(tmp_path / "s.pdf"),
        "export",
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "l.jsonl"),
    )
    assert code == 2 and "--statement: the options of dpdesk ledger export come after the verb" in err
    assert not (tmp_path / "s.pdf").exists() and not (tmp_path / "l.jsonl").exists()
    code, _out, err = run(capsys, "ledger", "--json", "list")
    assert code == 2 and "--json: the options of dpdesk ledger list come after the verb" in err


def test_old_spellings_work_and_name_the_new_one(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    for flag, old_args, verb, new_args, spelled in (
        (
            "--export",
            (str(tmp_path / "old.jsonl"),),
            "export",
            ("--out", str(tmp_path / "new.jsonl")),
            "dpdesk ledger export --data FILE --out OUT",
        ),
        (
            "--statement",
            (str(tmp_path / "old.pdf"),),
            "statement",
            ("--out", str(tmp_path / "new.pdf")),
            "dpdesk ledger statement --data FILE --out OUT.pdf",
        ),
        (
            "--export-release",
            ("2", "--out", str(tmp_path / "old-release")),
            "export-release",
            ("2", "--out", str(tmp_path / "new-release")),
            "dpdesk ledger export-release SEQ --data FILE --out DIR",
        ),
    ):
        code, new, err = run(capsys, "ledger", verb, "--data", str(DATA), *new_args)
        assert code == 0 and err == "", err
        code, out, err = run(capsys, "ledger", "--data", str(DATA), flag, *old_args)
        assert code == 0
        assert err.count("\n") == 1 and err.startswith("dpdesk: note: dpdesk ledger --data FILE " + flag)
        assert f"is now spelled {spelled} (the old spelling still works)" in err
        # the same action, the same report: only the output's own name differs (replacing "new" anywhere
        # would also rewrite the folders above it, wherever the repository or the temporary folder lies)
        names = [
            (str(tmp_path / n), str(tmp_path / n.replace("new", "old"))) for n in ("new.jsonl", "new.pdf")
        ]
        names.append((str(tmp_path / "new-release"), str(tmp_path / "old-release")))
        for a, b in names:
            new = new.replace(a, b)
        assert out == new
    assert (tmp_path / "old.jsonl").read_bytes() == (tmp_path / "new.jsonl").read_bytes()
    assert (tmp_path / "old-release" / "release.csv").read_bytes() == (released / "release.csv").read_bytes()
    assert (tmp_path / "old.pdf").read_bytes()[:5] == b"%PDF-"


def test_old_spellings_of_the_officers_actions(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 3.0
    bigger = tmp_path / "bigger.json"
    bigger.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = run(
        capsys, "ledger", "--data", str(DATA), "--change-settings", str(bigger), "--reason", "board 12"
    )
    assert code == 0 and out.startswith("Recorded new settings for dataset ds-")
    assert "is now spelled dpdesk ledger change-settings PLAN --data FILE --reason" in err
    code, out, err = run(
        capsys, "ledger", "change-settings", str(bigger), "--data", str(DATA), "--reason", "  "
    )
    assert code == 2 and '--change-settings needs --reason "..."' in err
    code, _out, err = run(capsys, "ledger", "change-settings", str(bigger), "--data", str(DATA))
    assert code == 2 and "the following arguments are required: --reason" in err
    (ledger,) = (Path(str(tmp_path)) / "dpdesk-home" / "ledgers").glob("*.jsonl")
    ledger.write_bytes(ledger.read_bytes().replace(b'"title":"CPS wages"', b'"title":"CPS wagez"', 1))
    code, out, err = run(capsys, "ledger", "verify", "--data", str(DATA))
    assert code == 3 and "BROKEN" in out
    code, out, err = run(capsys, "ledger", "--data", str(DATA), "--acknowledge", "checked with the curator")
    assert code == 3 and "offered (the largest)" in err  # issue 13: what does not verify needs a stated cost
    assert 'is now spelled dpdesk ledger acknowledge --data FILE --reason "reason"' in err
    offered = [x if x != "PLAN" else str(bigger) for x in err.rsplit('--reason "..." ', 1)[1].split()]
    code, out, err = run(
        capsys, "ledger", "acknowledge", "--data", str(DATA), "--reason", "checked", *offered
    )
    assert code == 0 and "1 release(s) were carried over" in out, err
    code, out, err = run(capsys, "ledger", "acknowledge", "--data", str(DATA), "--reason", "again")
    assert code == 3  # a verified ledger needs no acknowledgement


def test_no_verb_lists_and_verifies_as_before(capsys: pytest.CaptureFixture[str], released: Path) -> None:
    code, listed, err = run(capsys, "ledger")
    assert code == 0 and err == "" and "chain verified" in listed
    assert run(capsys, "ledger", "list") == (0, listed, "")
    code, one, _err = run(capsys, "ledger", "--data", str(DATA))
    assert code == 0 and "release  epsilon 0.9" in one
    assert run(capsys, "ledger", "verify", "--data", str(DATA)) == (0, one, "")
    code, as_json, _err = run(capsys, "ledger", "--data", str(DATA), "--json")
    assert json.loads(as_json)["status"] == "chain verified"
    assert run(capsys, "ledger", "verify", "--data", str(DATA), "--json") == (0, as_json, "")


def test_an_old_option_of_another_action_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _out, err = run(
        capsys, "ledger", "--data", str(DATA), "--export", str(tmp_path / "l"), "--reason", "r"
    )
    assert code == 2 and "--reason cannot be used with dpdesk ledger --data FILE --export OUT" in err
    code, _out, err = run(capsys, "ledger", "--statement", str(tmp_path / "s.pdf"))
    assert code == 2 and "need --data" in err
    assert not (tmp_path / "l").exists() and not (tmp_path / "s.pdf").exists()
