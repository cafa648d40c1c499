"""`dpdesk budget --fit`: the plan fitted to what is left, saved with --write; bad requests refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import DATA, PLAN, run


@pytest.mark.slow
def test_fit_writes_a_plan_that_fits_what_is_left(dpdesk_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "fitted.json"
    r = run(
        "budget",
        str(PLAN),
        "--data",
        str(DATA),
        "--fit",
        "--weight",
        "people=3",
        "--lock",
        "regions",
        "--reserve",
        "0.2",
        "--write",
        str(out),
        home=dpdesk_home,
    )
    assert r.returncode == 0, r.stderr
    eps = {q["name"]: q["epsilon"] for q in json.loads(out.read_text())["queries"]}
    assert eps["regions"] == 0.2  # locked
    others = [e for n, e in eps.items() if n not in ("regions", "people")]
    assert all(abs(eps["people"] - 3 * e) <= 1e-5 for e in others)  # three shares to one
    assert 0.6 * (1 - 1e-5) <= sum(e for n, e in eps.items() if n != "regions") <= 0.6
    again = run("budget", str(out), "--data", str(DATA), home=dpdesk_home)
    assert again.returncode == 0 and "Left after this plan: epsilon 0.2" in again.stdout, again.stdout


@pytest.mark.slow
def test_bad_fit_requests_are_refused_cleanly(dpdesk_home: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    cases = [
        (("--weight", "people=2"), 2, "--fit"),  # options without --fit
        (("--fit", "--weight", "nobody=2"), 2, "nobody"),  # names no query
        (("--fit", "--weight", "people=-1"), 2, "NAME=W"),
        (("--fit", "--write", str(taken)), 2, "exists"),  # never overwrites
        (("--fit", "--reserve", "1"), 1, "Nothing to fit"),  # the reserve keeps everything
    ]
    for extra, code, words in cases:
        r = run("budget", str(PLAN), *extra, home=dpdesk_home)
        assert r.returncode == code, (extra, r.returncode, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (extra, r.stderr)
    assert taken.read_text() == "{}"


def test_write_never_follows_a_link_and_names_a_missing_folder(dpdesk_home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "fitted.json"
    link.symlink_to(victim)
    r = run("budget", str(PLAN), "--fit", "--write", str(link), home=dpdesk_home)
    assert r.returncode == 2 and victim.read_text() == "keep me", r.stderr
    missing = tmp_path / "no-such-folder" / "fitted.json"
    r = run("budget", str(PLAN), "--fit", "--write", str(missing), home=dpdesk_home)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "existing folder" in r.stderr, r.stderr


def test_a_fit_with_nothing_free_is_a_usage_error(dpdesk_home: Path) -> None:
    names = ["people", "mean wage", "regions", "wage by region", "median education", "largest region"]
    locks = [a for n in names for a in ("--lock", n)]
    r = run("budget", str(PLAN), "--fit", *locks, home=dpdesk_home)
    assert r.returncode == 2 and "no query is free" in r.stderr, r.stderr
    r = run("budget", str(PLAN), "--fit", "--weight", "people=1e308", home=dpdesk_home)
    assert r.returncode == 2 and "1,000,000" in r.stderr, r.stderr
