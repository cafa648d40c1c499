"""A release in two steps (issue 26, item 3): ``dpdesk release --check`` is the first step alone (load and check the
table, find its dataset, cost the plan against what is left; nothing charged, nothing written), and a commit of a
prepared release whose ledger moved since charges nothing."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"

pytestmark = pytest.mark.slow  # each runs the command line in child processes


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def ledger_bytes(home: Path) -> dict[str, str]:
    """Every ledger file of the home, by name, as a digest of its bytes."""
    folder = home / "ledgers"
    if not folder.exists():
        return {}
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.jsonl"))}


def test_check_charges_nothing_and_says_what_the_release_would_do(dpdesk_home: Path, tmp_path: Path) -> None:
    r = run("release", str(PLAN), "--data", str(DATA), "--check", home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "Data check of 2000 rows" in r.stderr  # the curator sees the counts before any charge
    assert "Left after this plan: epsilon 0.1" in r.stdout and "nothing was charged or written" in r.stdout
    assert ledger_bytes(dpdesk_home) == {} or all(
        "spend" not in (dpdesk_home / "ledgers" / n).read_text(encoding="utf-8")
        for n in ledger_bytes(dpdesk_home)
    )
    assert [p.name for p in tmp_path.iterdir()] == ["dpdesk-home"]  # nothing written beside it
    # the release that follows spends what the check said, once
    out = tmp_path / "out"
    rel = run("release", str(PLAN), "--data", str(DATA), "--out", str(out), home=dpdesk_home)
    assert rel.returncode == 0 and "charged epsilon 0.9" in rel.stdout, rel.stderr
    before = ledger_bytes(dpdesk_home)
    # checking again: over budget, exit 1, and the ledger is byte for byte what it was
    again = run("release", str(PLAN), "--data", str(DATA), "--check", home=dpdesk_home)
    assert again.returncode == 1, again.stderr
    assert "OVER BUDGET" in again.stdout and "does not fit" in again.stdout
    assert ledger_bytes(dpdesk_home) == before
    assert "Traceback" not in again.stderr


def test_check_stops_on_data_problems_and_needs_no_out(dpdesk_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    text = DATA.read_text(encoding="utf-8").splitlines()
    bad.write_text(
        "\n".join([text[0], *[t.replace("south", "soth") for t in text[1:]]]) + "\n", encoding="utf-8"
    )
    r = run("release", str(PLAN), "--data", str(bad), "--check", home=dpdesk_home)
    assert r.returncode == 2 and "outside the declared categories" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    both = run(
        "release", str(PLAN), "--data", str(DATA), "--check", "--out", str(tmp_path / "o"), home=dpdesk_home
    )
    assert both.returncode == 2 and "--check" in both.stderr and not (tmp_path / "o").exists()
    neither = run("release", str(PLAN), "--data", str(DATA), home=dpdesk_home)
    assert neither.returncode == 2 and "--out" in neither.stderr
    assert ledger_bytes(dpdesk_home) == {} or all(
        "spend" not in (dpdesk_home / "ledgers" / n).read_text(encoding="utf-8")
        for n in ledger_bytes(dpdesk_home)
    )


def test_a_prepared_release_is_not_charged_when_the_ledger_moved(dpdesk_home: Path, tmp_path: Path) -> None:
    """The app's flow: the curator confirms what the first step showed; if another release was charged in
    between, the commit charges nothing (the numbers confirmed are no longer true) and says so."""
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.release.steps import LedgerMoved, commit_release, prepare_release

    plan = load_plan(PLAN)
    small = dataclasses.replace(plan, queries=plan.queries[:1])  # a count: epsilon 0.1
    prepared = prepare_release(small, DATA, dpdesk_home)
    assert prepared.report is not None and prepared.report.fits and prepared.head is not None
    r = run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "other"), home=dpdesk_home)
    assert r.returncode == 0, r.stderr  # another release, in between
    before = ledger_bytes(dpdesk_home)
    with pytest.raises(LedgerMoved) as exc:
        commit_release(prepared, tmp_path / "mine", same_head=True)
    assert isinstance(exc.value, DpdeskError) and exc.value.exit_code == 2
    assert "nothing was charged" in str(exc.value)
    assert ledger_bytes(dpdesk_home) == before and not (tmp_path / "mine").exists()
    # without the curator's confirmation to honour (one command), the commit re-checks the budget and charges
    again = prepare_release(small, DATA, dpdesk_home, read_ledger=False)
    result = commit_release(again, tmp_path / "mine")
    assert result.entry.charged.epsilon == pytest.approx(0.1) and (tmp_path / "mine" / "release.csv").exists()
