"""A release whose report cannot be printed (``dpdesk release … > /dev/full``) was still charged and written: it must
not end like a refused command (exit 2, "bad plan or usage"), which a script or a careless user would run again and
be charged twice (attacker's pass, session 7). Other commands whose output fails still end in exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "dpdesk.cli", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=180,
            check=False,
        )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_release_whose_report_cannot_be_printed_says_it_was_done(tmp_path: Path) -> None:
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.loading import file_sha256

    home = tmp_path / "home"
    data, plan = SAMPLES / "census_sample.csv", SAMPLES / "cps_wages_plan.json"
    done = run(["release", str(plan), "--data", str(data), "--out", str(tmp_path / "pkg")], home)
    spends = [e for e in Ledger.for_dataset(home, file_sha256(data)).verify() if e.type == "spend"]
    assert len(spends) == 1 and (tmp_path / "pkg" / "release.csv").is_file()  # charged and written
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 0, done.stderr
    assert "cannot write to standard output" in lines[-2], lines
    assert "the release was done nonetheless: charged to the ledger (entry" in lines[-1], lines
    assert "do not run it again" in lines[-1] and "Traceback" not in done.stderr
    # a command that changed nothing still ends in exit 2
    listing = run(["ledger"], home)
    assert listing.returncode == 2 and "cannot write to standard output" in listing.stderr
    assert "release was done" not in listing.stderr
