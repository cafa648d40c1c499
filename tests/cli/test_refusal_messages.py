"""Issue 13, the audit's smaller gaps: what the command line says after an acknowledgement, in a review against a
later export, and in refusals (the verb spelling, the recovery key, the approval before the output folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpdesk.core.ledger.book import Ledger
from tests.cli.test_govern import (
    DATA,
    PLAN,
    Keys,
    ann,
    approve,
    entries,
    governed,
    plan_with_budget,
    released,
    run,
)
from tests.core.test_recost import _sha as sha
from tests.core.test_recost import cli
from tests.trust.test_acknowledge import (
    _acknowledge_as_offered,
    _edit,
    _first_spend,
    _released,
    plan_settings,
)

__all__ = ["ann", "governed", "released"]  # the fixtures, imported for pytest


def test_after_an_acknowledgement_the_ledger_says_what_is_left(dpdesk_home: Path, tmp_path: Path) -> None:
    """Main printed "2 release(s)" without "left: ..." once the releases were carried over by an acknowledgement
    (no spend entry in the new chain); ``budget`` said 2.4 left."""
    d, lg, before = _released(dpdesk_home, tmp_path)
    _edit(lg, _first_spend(lg), lambda e: e.update(title="edited"))
    _acknowledge_as_offered(lg, settings=plan_settings())
    assert [e.type for e in Ledger.for_dataset(dpdesk_home, sha(d)).verify()] == ["acknowledge"]
    left = f"left: epsilon {3 - before:g}, delta 0.000001"
    for args in (("ledger", "--data", str(d)), ("ledger", "verify", "--data", str(d)), ("ledger",)):
        r = cli(*args, home=dpdesk_home)
        assert r.returncode == 0 and "2 release(s)" in r.stdout and left in r.stdout, (
            args,
            r.stdout,
            r.stderr,
        )


def test_a_review_against_a_ledger_that_went_back_names_that_one(dpdesk_home: Path, tmp_path: Path) -> None:
    """Main headed the output "Ledger F2: BROKEN" when F2 was intact and the ledger given with --against (an
    earlier export, as a rolled-back ledger would be) was the one behind."""
    d, _lg, _before = _released(dpdesk_home, tmp_path, n=1)
    early, late = tmp_path / "early.jsonl", tmp_path / "late.jsonl"
    assert cli("ledger", "export", "--data", str(d), "--out", str(early), home=dpdesk_home).returncode == 0
    _released(dpdesk_home, tmp_path, n=1)
    assert cli("ledger", "export", "--data", str(d), "--out", str(late), home=dpdesk_home).returncode == 0
    r = cli("review", str(late), "--against", str(early), home=dpdesk_home)
    lines = r.stdout.splitlines()
    assert r.returncode == 1 and "rolled back behind it" in r.stdout, r.stdout
    assert lines[0].startswith(f"Ledger {late}: chain verified") and "BROKEN" not in r.stdout, r.stdout
    assert lines[-1] == (
        f"NOT INTACT: the later ledger {early} is behind {late}, replaced or broken; {late} itself is intact "
        "(see the problems above)."
    ), r.stdout
    # the other way round: intact; and a file that is itself broken is still called so
    r = cli("review", str(early), "--against", str(late), home=dpdesk_home)
    assert r.returncode == 0 and r.stdout.splitlines()[-2] == "Intact.", r.stdout
    assert r.stdout.splitlines()[-1].startswith(f"The later export {late} reaches its ledger head"), r.stdout
    broken = tmp_path / "broken.jsonl"
    broken.write_text(late.read_text(encoding="utf-8").replace('"seq":2', '"seq":7', 1), encoding="utf-8")
    r = cli("review", str(broken), "--against", str(early), home=dpdesk_home)
    assert r.returncode == 1 and r.stdout.startswith(f"Ledger {broken}: BROKEN"), r.stdout
    assert r.stdout.splitlines()[-1] == "NOT INTACT: see the problems above.", r.stdout


def test_a_key_change_without_approval_asks_for_the_recovery_keys(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path
) -> None:
    """Main said "needs their signed approval", as if the officer key could approve it; only the recovery key can."""
    bob = Keys(tmp_path / "bob", capsys, name="Bob")
    before = entries(capsys)
    code, _out, err = run(capsys, "ledger", "govern", "--data", DATA, "--officer", bob.public)
    recovery = json.loads(governed.public.read_text(encoding="utf-8"))["recovery_fingerprint"]
    flat = " ".join(err.split())
    assert (
        code == 2 and "a change of the officer's key needs an approval signed by their recovery key" in flat
    ), err
    assert f"(key {recovery}; dpdesk officer approve-rotate, then --approval FILE)" in flat, err
    assert "needs their signed approval" not in flat and entries(capsys) == before


def test_a_refused_approval_is_named_before_an_output_folder_that_is_not_empty(
    capsys: pytest.CaptureFixture[str], released: Path, ann: Keys, tmp_path: Path
) -> None:
    """Main checked --out first: a refused approval aimed at a folder that is not empty said only "... is not
    empty". Both are still checked before anything is charged."""
    code, _out, err = run(
        capsys, "ledger", "govern", "--data", DATA, "--officer", ann.public, "--require-signed-plans"
    )
    assert code == 0, err
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.txt").write_text("x", encoding="utf-8")
    other = approve(capsys, ann, "approve-plan", tmp_path / "other.json", plan_with_budget(tmp_path, 4.0))
    before = entries(capsys)
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", full, "--approval", other)
    assert code == 2 and "with other parameters" in err and "is not empty" not in err, err
    # the right approval, still the full folder: the folder is named, nothing charged, the approval still unused
    good = approve(capsys, ann, "approve-plan", tmp_path / "good.json", PLAN)
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", full, "--approval", good)
    assert code == 2 and "is not empty" in err, err
    assert entries(capsys) == before and sorted(p.name for p in full.iterdir()) == ["old.txt"]
    # without an approval the folder is checked first, as before (nothing to verify)
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", full)
    assert code == 2 and "is not empty" in err, err
    code, _out, err = run(
        capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "new", "--approval", good
    )
    assert code == 1 and "over budget" in err, (
        err
    )  # the approval verified and was not used up by the refusals


def test_a_settings_mismatch_names_the_verb_spelling(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    """Main named the old spelling ``dpdesk ledger --data FILE --change-settings PLAN``."""
    code, _out, err = run(
        capsys, "release", plan_with_budget(tmp_path, 5.0), "--data", DATA, "--out", tmp_path / "r"
    )
    flat = " ".join(err.split())
    assert code != 0 and "total budget was fixed at its first release" in flat, err
    assert (
        'dpdesk ledger change-settings PLAN --data FILE --reason "..."' in flat
        and "--change-settings" not in flat
    )
