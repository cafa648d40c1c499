"""The command line as a user runs it: exit codes (0 done, 1 budget, 2 bad input, 3 ledger) and messages."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


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


@pytest.mark.slow
def test_budget_without_data(dpdesk_home: Path) -> None:
    r = run("budget", str(PLAN), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "no data was read" in r.stdout
    assert "b = sensitivity / epsilon = 1 / 0.1 = 10" in r.stdout
    assert "* sequential" in r.stdout and "zcdp" in r.stdout and "advanced" in r.stdout
    # the median's 95% rank interval, from the plan alone: R = 2 Du (ln 19 + ln 20) / eps, Du = 1/2
    rank = 2 * 0.5 * (math.log(19) + math.log(20)) / 0.1
    assert f"95% rank error ±{rank:.6g}: the released value's rank is within ±{rank:.6g} of q·n" in r.stdout
    j = run("budget", str(PLAN), "--json", home=dpdesk_home)
    rep = json.loads(j.stdout)
    assert rep["fits"] is True and len(rep["queries"]) == 6
    assert rep["queries"][4]["rank_error95"] == pytest.approx(rank)


@pytest.mark.slow
def test_release_then_budget_ledger_and_refusal(dpdesk_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("release", str(PLAN), "--data", str(DATA), "--out", str(out), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "charged epsilon 0.9" in r.stdout
    with (out / "release.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12
    b = run("budget", str(PLAN), "--data", str(DATA), home=dpdesk_home)
    assert b.returncode == 1
    assert "OVER BUDGET" in b.stdout and "left before this plan: epsilon 0.1" in b.stdout
    again = run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "again"), home=dpdesk_home)
    assert again.returncode == 1
    assert "epsilon 0.1 and delta 0.0000009 left" in again.stderr
    assert not (tmp_path / "again").exists()
    lg = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert lg.returncode == 0 and "chain verified" in lg.stdout and "release  epsilon 0.9" in lg.stdout
    ex = run(
        "ledger",
        "--data",
        str(DATA),
        "--export-release",
        "2",
        "--out",
        str(tmp_path / "ex"),
        home=dpdesk_home,
    )
    assert ex.returncode == 0, ex.stderr
    assert (tmp_path / "ex" / "release.csv").read_bytes() == (out / "release.csv").read_bytes()


def test_bad_plan_exit_2_names_the_key(dpdesk_home: Path, tmp_path: Path) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["queries"][0]["epsilon"] = -1
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    r = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home)
    assert r.returncode == 2
    assert 'query 1 ("people"): epsilon must be greater than 0' in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_missing_column_exit_2_names_file_and_line(dpdesk_home: Path, tmp_path: Path) -> None:
    d = tmp_path / "d.csv"
    d.write_text("pay,region\n1,south\n", encoding="utf-8")
    r = run("release", str(PLAN), "--data", str(d), "--out", str(tmp_path / "o"), home=dpdesk_home)
    assert r.returncode == 2
    assert f"{d}, line 1" in r.stderr and "'wage'" in r.stderr


@pytest.mark.slow
def test_tampered_ledger_exit_3(dpdesk_home: Path, tmp_path: Path) -> None:
    assert (
        run(
            "release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home
        ).returncode
        == 0
    )
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    ledger.write_bytes(ledger.read_bytes().replace(b'"epsilon":0.9', b'"epsilon":0.1', 1))
    r = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert r.returncode == 3 and "BROKEN" in r.stdout
    r = run("budget", str(PLAN), "--data", str(DATA), home=dpdesk_home)
    assert r.returncode == 3 and "does not match its hash" in r.stderr


@pytest.mark.slow
def test_changed_budget_is_refused_until_an_officer_changes_it(dpdesk_home: Path, tmp_path: Path) -> None:
    assert (
        run(
            "release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home
        ).returncode
        == 0
    )
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 3.0
    p = tmp_path / "bigger.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    r = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 2 and "fixed at its first release" in r.stderr
    r = run("ledger", "--data", str(DATA), "--change-settings", str(p), home=dpdesk_home)
    assert r.returncode == 2 and "--reason" in r.stderr
    r = run(
        "ledger",
        "--data",
        str(DATA),
        "--change-settings",
        str(p),
        "--reason",
        "board approval 12",
        home=dpdesk_home,
    )
    assert r.returncode == 0
    r = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    lg = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert "board approval 12" in lg.stdout and lg.stdout.count("release  epsilon") == 2


def test_out_dir_not_empty_exit_2(dpdesk_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "x").write_text("x")
    r = run("release", str(PLAN), "--data", str(DATA), "--out", str(out), home=dpdesk_home)
    assert r.returncode == 2 and "not empty" in r.stderr


def test_simulate_marks_its_output_not_for_publication(dpdesk_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.csv"
    r = run("simulate", str(PLAN), "--runs", "5", "--out", str(out), "--seed", "3", home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "NOT FOR PUBLICATION" in r.stdout
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# NOT FOR PUBLICATION")
    assert lines[1] == (
        "# source: a stand-in table of 1000 rows generated from the plan's schema (no data was read)"
    )
    assert lines[2] == "run,query,group,value"
    assert len(lines) == 3 + 5 * 12
    assert not (dpdesk_home / "ledgers").exists()  # a simulation touches no ledger


def _peeking_plan(tmp_path: Path) -> Path:
    """The audit's probe: a budget of 0.1 and one query asking for epsilon 50 (the exact region counts)."""
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"] = {"epsilon": 0.1, "delta": 0}
    data["queries"] = [
        {
            "name": "regions",
            "statistic": "histogram",
            "column": "region",
            "mechanism": "laplace",
            "epsilon": 50,
        }
    ]
    p = tmp_path / "peek.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_simulate_refuses_the_private_table_and_says_what_to_use(dpdesk_home: Path, tmp_path: Path) -> None:
    plan, out = _peeking_plan(tmp_path), tmp_path / "sim.csv"
    r = run("simulate", str(plan), "--data", str(DATA), "--runs", "1", "--out", str(out), home=dpdesk_home)
    assert r.returncode == 2, r.stdout
    assert "average back to the true values" in r.stderr  # why
    assert "stand-in table" in r.stderr and "--public FILE" in r.stderr  # what to use instead
    assert "Traceback" not in r.stderr
    assert not out.exists() and not (dpdesk_home / "ledgers").exists()


@pytest.mark.slow
def test_simulate_on_a_public_file_and_never_on_a_dataset_with_a_ledger(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    public = tmp_path / "published_sample.csv"
    public.write_bytes(DATA.read_bytes())
    out = tmp_path / "sim.csv"
    r = run(
        "simulate", str(PLAN), "--public", str(public), "--runs", "3", "--out", str(out), home=dpdesk_home
    )
    assert r.returncode == 0, r.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# NOT FOR PUBLICATION")
    assert lines[1] == f"# source: {public}, a file declared public by the user"
    assert len(lines) == 3 + 3 * 12
    assert not (dpdesk_home / "ledgers").exists()
    # once dpdesk has released from it, the file is a private dataset, whatever the user calls it
    assert (
        run(
            "release", str(PLAN), "--data", str(public), "--out", str(tmp_path / "o"), home=dpdesk_home
        ).returncode
        == 0
    )
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    before = ledger.read_bytes()
    out.unlink()
    r = run(
        "simulate", str(PLAN), "--public", str(public), "--runs", "3", "--out", str(out), home=dpdesk_home
    )
    assert r.returncode == 2, r.stdout
    assert f"{public} is not a public file" in r.stderr and "has a ledger" in r.stderr
    assert "stand-in table" in r.stderr
    assert not out.exists() and ledger.read_bytes() == before


def _with_misspelled_west(tmp_path: Path) -> tuple[Path, int]:
    """The sample plan with "west" typed "wets", and how many rows of the sample are in the west."""
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    cats = data["columns"]["region"]["categories"]
    cats[cats.index("west")] = "wets"
    p = tmp_path / "wets.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    with DATA.open(encoding="utf-8") as f:
        west = sum(r["region"] == "west" for r in csv.DictReader(f))
    assert west > 0
    return p, west


@pytest.mark.slow
def test_a_misspelled_category_stops_the_release_before_charging(dpdesk_home: Path, tmp_path: Path) -> None:
    plan, west = _with_misspelled_west(tmp_path)
    out = tmp_path / "o"
    r = run("release", str(plan), "--data", str(DATA), "--out", str(out), home=dpdesk_home)
    assert r.returncode == 2, r.stdout
    stop = f"stopped before charging anything: column 'region': 0 missing, {west} outside the declared"
    assert stop in r.stderr  # the column, the count
    assert "category lists" in r.stderr and "--accept-data-problems" in r.stderr  # the fix, and the way past
    assert "Nothing was charged or written" in r.stderr
    assert not out.exists() and not (dpdesk_home / "ledgers").exists()
    assert r.stdout == ""
    # with the flag, the curator goes ahead knowingly: the same counts shown, then the charge
    r = run(
        "release",
        str(plan),
        "--data",
        str(DATA),
        "--out",
        str(out),
        "--accept-data-problems",
        home=dpdesk_home,
    )
    assert r.returncode == 0, r.stderr
    assert f"column 'region': 0 missing, {west} outside the declared categories" in r.stderr
    assert "charged epsilon 0.9" in r.stdout


@pytest.mark.slow
def test_release_shows_the_clamped_counts_of_every_numeric_column(dpdesk_home: Path, tmp_path: Path) -> None:
    rows = [
        ("1200.5", "3", "south"),
        ("7500", "25", "west"),
        ("inf", "-2", "south"),
        ("-4", "12", "west"),
        ("", "19", "south"),
        ("-inf", "x", "west"),
        ("5000", "18", "west"),
    ]
    data = tmp_path / "d.csv"
    data.write_text("wage,education,region\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["queries"] = plan["queries"][:2]
    p = tmp_path / "p.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    # wage [0, 5000]: 7500, inf, -4, -inf clamped (5000 is at the bound); education [0, 18]: 25, -2, 19
    expected = [
        "column 'wage': 1 missing, 0 unparsable, 4 clamped to the bounds [0, 5000] (first at line 6)",
        "column 'education': 0 missing, 1 unparsable, 3 clamped to the bounds [0, 18] (first at line 7)",
        "column 'region': 0 missing, 0 outside the declared categories",
    ]
    r = run("release", str(p), "--data", str(data), "--out", str(tmp_path / "o"), home=dpdesk_home)
    assert r.returncode == 2 and "column 'education'" in r.stderr.split("stopped before charging")[1]
    shown = [ln.strip() for ln in r.stderr.splitlines() if ln.startswith("  column")]
    assert shown == expected
    r = run(
        "release",
        str(p),
        "--data",
        str(data),
        "--out",
        str(tmp_path / "o"),
        "--accept-data-problems",
        home=dpdesk_home,
    )
    assert r.returncode == 0, r.stderr
    assert [ln.strip() for ln in r.stderr.splitlines() if ln.startswith("  column")] == expected
    # a clean file still shows its clamping (the sample has wages above 5000)
    with DATA.open(encoding="utf-8") as f:
        high = sum(float(r["wage"]) > 5000 for r in csv.DictReader(f))
    r = run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert f"column 'wage': 0 missing, 0 unparsable, {high} clamped to the bounds [0, 5000]" in r.stderr
    assert "column 'education': 0 missing, 0 unparsable, 0 clamped to the bounds [0, 18]" in r.stderr


def test_open_starts_the_desktop_app(dpdesk_home: Path) -> None:
    env = {
        **os.environ,
        "DPDESK_HOME": str(dpdesk_home),
        "DPDESK_STARTUP_PROBE": "1",
        "QT_QPA_PLATFORM": "offscreen",
    }
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "open", str(DATA)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "WINDOW_SHOWN" in r.stdout


def test_suggest_proposes_types_only(dpdesk_home: Path) -> None:
    r = run("suggest", str(DATA), home=dpdesk_home)
    assert r.returncode == 0
    assert "wage: float" in r.stdout and "region: category" in r.stdout and "age: int" in r.stdout
    assert "5000" not in r.stdout


@pytest.mark.parametrize(
    "args", [["release", str(PLAN)], ["nonsense"], ["simulate", str(PLAN), "--runs", "x"]]
)
def test_usage_errors_exit_2(dpdesk_home: Path, args: list[str]) -> None:
    assert run(*args, home=dpdesk_home).returncode == 2


def test_codebook_option(dpdesk_home: Path, tmp_path: Path) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    del data["columns"]["region"]["categories"]
    p = tmp_path / "p.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    r = run("budget", str(p), home=dpdesk_home)
    assert r.returncode == 2 and "codebook" in r.stderr
    book = tmp_path / "book.csv"
    book.write_text(
        "column,category\nregion,northeast\nregion,midwest\nregion,south\nregion,west\n", encoding="utf-8"
    )
    r = run("budget", str(p), "--codebook", str(book), "--json", home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["queries"][2]["cells"] == 4


@pytest.mark.slow
def test_selftest_runs_from_source_without_touching_the_users_ledger(dpdesk_home: Path) -> None:
    r = run("--selftest", home=dpdesk_home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout
    # issue 25 item 7: every native library the app loads is exercised, cryptography's (officer keys) included
    lines = r.stdout.splitlines()
    assert any(x.startswith("  OK   cryptography:") and "Ed25519 signs and verifies" in x for x in lines), (
        r.stdout
    )
    assert any(x.startswith("  OK   charts:") and "Pillow read it" in x for x in lines), r.stdout
    assert not (dpdesk_home / "ledgers").exists()  # the self-test used a temporary home of its own


@pytest.mark.slow
def test_acknowledging_a_tampered_ledger_keeps_what_was_spent(dpdesk_home: Path, tmp_path: Path) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 2.0
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps(data), encoding="utf-8")
    assert (
        run(
            "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o1"), home=dpdesk_home
        ).returncode
        == 0
    )
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    ledger.write_bytes(ledger.read_bytes().replace(b'"title":"CPS wages"', b'"title":"CPS wagez"', 1))
    r = run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 3 and not (tmp_path / "o2").exists()
    assert run("ledger", "--data", str(DATA), "--acknowledge", "  ", home=dpdesk_home).returncode == 3
    a = run(
        "ledger",
        "--data",
        str(DATA),
        "--acknowledge",
        "edited by mistake; checked with the curator",
        home=dpdesk_home,
    )
    # issue 13: the entries that no longer verify need the officer's stated cost; dpdesk offers one
    assert a.returncode == 3 and "offered (the largest)" in a.stderr, a.stderr
    offered = [x if x != "PLAN" else str(plan) for x in a.stderr.rsplit('--reason "..." ', 1)[1].split()]
    a = run("ledger", "acknowledge", "--data", str(DATA), "--reason", "checked", *offered, home=dpdesk_home)
    assert a.returncode == 0, a.stderr
    assert "1 release(s) were carried over" in a.stdout
    assert len(list((dpdesk_home / "ledgers").glob("*.broken-*.jsonl"))) == 1  # the evidence is kept
    b = run("budget", str(plan), "--data", str(DATA), "--json", home=dpdesk_home)
    rep = json.loads(b.stdout)
    assert rep["releases_so_far"] == 1 and rep["remaining_before"]["epsilon"] == pytest.approx(
        1.1
    )  # not reset
    assert (
        run(
            "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o3"), home=dpdesk_home
        ).returncode
        == 0
    )
    again = run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o4"), home=dpdesk_home)
    assert again.returncode == 1  # 0.9 + 0.9 spent of 2.0: the carried spend still counts
    assert run("ledger", "--data", str(DATA), "--acknowledge", "again", home=dpdesk_home).returncode == 3


def test_ledger_actions_cannot_be_combined(dpdesk_home: Path, tmp_path: Path) -> None:
    """Issue 12: `ledger --export A --statement B` did the export alone and said nothing of the statement."""
    r = run(
        "ledger",
        "--data",
        str(DATA),
        "--export",
        str(tmp_path / "a.jsonl"),
        "--statement",
        str(tmp_path / "b.pdf"),
        home=dpdesk_home,
    )
    assert r.returncode == 2 and "--export, --statement cannot be combined" in r.stderr
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "b.pdf").exists()


@pytest.mark.slow
def test_a_crlf_copy_of_the_table_is_charged_to_the_same_ledger(dpdesk_home: Path, tmp_path: Path) -> None:
    """Issue 13, item 3: a copy with other line ends is the same table, with the same budget (it had a fresh one)."""
    r = run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "first"), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    copy = tmp_path / "copy.csv"
    copy.write_bytes(DATA.read_bytes().replace(b"\n", b"\r\n"))
    b = run("budget", str(PLAN), "--data", str(copy), home=dpdesk_home)
    assert b.returncode == 1 and "left before this plan: epsilon 0.1" in b.stdout
    bom = tmp_path / "bom.csv"  # released directly, never opened before
    bom.write_bytes(b"\xef\xbb\xbf" + DATA.read_bytes())
    again = run("release", str(PLAN), "--data", str(bom), "--out", str(tmp_path / "again"), home=dpdesk_home)
    assert again.returncode == 1 and "epsilon 0.1 and delta 0.0000009 left" in again.stderr
    assert not (tmp_path / "again").exists()
    assert len(list((dpdesk_home / "ledgers").glob("ds-*.jsonl"))) == 1


@pytest.mark.slow
def test_a_release_under_a_small_memory_limit_streams_and_shows_the_same_data_check(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """--memory-limit 256MiB: no table fits beside the process itself, so the file is streamed; the data check's
    counts and first places are the in-memory path's; a size that is not one is a usage error."""
    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    plan["budget"]["epsilon"] = 10
    p = tmp_path / "p.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    whole = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "a"), home=dpdesk_home)
    assert whole.returncode == 0, whole.stderr
    assert "streaming pass" not in whole.stderr
    r = run(
        "release",
        str(p),
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "b"),
        "--memory-limit",
        "256MiB",
        home=dpdesk_home,
    )
    assert r.returncode == 0, r.stderr
    assert "computed in one streaming pass" in r.stderr
    checks = [[ln for ln in x.stderr.splitlines() if ln.startswith("  column")] for x in (whole, r)]
    assert checks[0] == checks[1] and checks[0]
    with (tmp_path / "b" / "release.csv").open(encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 12
    bad = run(
        "release",
        str(p),
        "--data",
        str(DATA),
        "--out",
        str(tmp_path / "c"),
        "--memory-limit",
        "lots",
        home=dpdesk_home,
    )
    assert bad.returncode == 2 and "cannot read 'lots' as a memory size" in bad.stderr


def test_the_ledger_of_a_table_never_released_says_so(tmp_path: Path) -> None:
    """A table with no release has no ledger yet: `dpdesk ledger --data` says so, instead of calling it a ledger
    of the older format (the README's quick start runs it first when the app released nothing)."""
    r = run("ledger", "--data", str(SAMPLES / "census_sample.csv"), home=tmp_path / "home")
    assert r.returncode == 0, r.stderr
    assert "No releases yet from this table" in r.stdout
    assert "older format" not in r.stdout
