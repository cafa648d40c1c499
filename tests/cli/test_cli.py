"""The command line as a user runs it: exit codes (0 done, 1 budget, 2 bad input, 3 ledger) and messages."""

from __future__ import annotations

import csv
import json
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
        [sys.executable, "-m", "dpdesk", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_budget_without_data(dpdesk_home: Path) -> None:
    r = run("budget", str(PLAN), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert "no data was read" in r.stdout
    assert "b = sensitivity / epsilon = 1 / 0.1 = 10" in r.stdout
    assert "* sequential" in r.stdout and "zcdp" in r.stdout and "advanced" in r.stdout
    j = run("budget", str(PLAN), "--json", home=dpdesk_home)
    rep = json.loads(j.stdout)
    assert rep["fits"] is True and len(rep["queries"]) == 6


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
    assert "epsilon 0.1 and delta 9e-07 left" in again.stderr
    assert not (tmp_path / "again").exists()
    lg = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert lg.returncode == 0 and "chain verified" in lg.stdout and "release  epsilon 0.9" in lg.stdout
    ex = run("ledger", "--data", str(DATA), "--export-release", "2", "--out", str(tmp_path / "ex"), home=dpdesk_home)
    assert ex.returncode == 0, ex.stderr
    assert (tmp_path / "ex" / "release.csv").read_bytes() == (out / "release.csv").read_bytes()


def test_bad_plan_exit_2_names_the_key(dpdesk_home: Path, tmp_path: Path) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["queries"][0]["epsilon"] = -1
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    r = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home)
    assert r.returncode == 2
    assert "queries[0].epsilon" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_missing_column_exit_2_names_file_and_line(dpdesk_home: Path, tmp_path: Path) -> None:
    d = tmp_path / "d.csv"
    d.write_text("pay,region\n1,south\n", encoding="utf-8")
    r = run("release", str(PLAN), "--data", str(d), "--out", str(tmp_path / "o"), home=dpdesk_home)
    assert r.returncode == 2
    assert f"{d}, line 1" in r.stderr and "'wage'" in r.stderr


def test_tampered_ledger_exit_3(dpdesk_home: Path, tmp_path: Path) -> None:
    assert run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home).returncode == 0
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    ledger.write_bytes(ledger.read_bytes().replace(b'"epsilon":0.9', b'"epsilon":0.1', 1))
    r = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert r.returncode == 3 and "BROKEN" in r.stdout
    r = run("budget", str(PLAN), "--data", str(DATA), home=dpdesk_home)
    assert r.returncode == 3 and "does not match its hash" in r.stderr


def test_changed_budget_is_refused_until_an_officer_changes_it(dpdesk_home: Path, tmp_path: Path) -> None:
    assert run("release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "o"), home=dpdesk_home).returncode == 0
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 3.0
    p = tmp_path / "bigger.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    r = run("release", str(p), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 2 and "fixed at its first release" in r.stderr
    r = run("ledger", "--data", str(DATA), "--change-settings", str(p), home=dpdesk_home)
    assert r.returncode == 2 and "--reason" in r.stderr
    r = run("ledger", "--data", str(DATA), "--change-settings", str(p), "--reason", "board approval 12", home=dpdesk_home)
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
    assert lines[0].startswith("# NOT FOR PUBLICATION") and lines[1] == "run,query,group,value"
    assert len(lines) == 2 + 5 * 12
    r = run("simulate", str(PLAN), "--data", str(DATA), "--runs", "2", "--out", str(out), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    lg = run("ledger", "--data", str(DATA), home=dpdesk_home)
    assert "simulate  2 run(s), uncharged" in lg.stdout


def test_open_starts_the_desktop_app(dpdesk_home: Path) -> None:
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home), "DPDESK_STARTUP_PROBE": "1", "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-m", "dpdesk", "open", str(DATA)], capture_output=True, text=True, env=env,
                       timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "WINDOW_SHOWN" in r.stdout


def test_suggest_proposes_types_only(dpdesk_home: Path) -> None:
    r = run("suggest", str(DATA), home=dpdesk_home)
    assert r.returncode == 0
    assert "wage: float" in r.stdout and "region: category" in r.stdout and "age: int" in r.stdout
    assert "5000" not in r.stdout


@pytest.mark.parametrize("args", [["release", str(PLAN)], ["nonsense"], ["simulate", str(PLAN), "--runs", "x"]])
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
    book.write_text("column,category\nregion,northeast\nregion,midwest\nregion,south\nregion,west\n", encoding="utf-8")
    r = run("budget", str(p), "--codebook", str(book), "--json", home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["queries"][2]["cells"] == 4


def test_selftest_runs_from_source_without_touching_the_users_ledger(dpdesk_home: Path) -> None:
    r = run("--selftest", home=dpdesk_home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout
    assert not (dpdesk_home / "ledgers").exists()  # the self-test used a temporary home of its own


def test_acknowledging_a_tampered_ledger_keeps_what_was_spent(dpdesk_home: Path, tmp_path: Path) -> None:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 2.0
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps(data), encoding="utf-8")
    assert run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o1"), home=dpdesk_home).returncode == 0
    (ledger,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    ledger.write_bytes(ledger.read_bytes().replace(b'"title":"CPS wages"', b'"title":"CPS wagez"', 1))
    r = run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o2"), home=dpdesk_home)
    assert r.returncode == 3 and not (tmp_path / "o2").exists()
    assert run("ledger", "--data", str(DATA), "--acknowledge", "  ", home=dpdesk_home).returncode == 3
    a = run("ledger", "--data", str(DATA), "--acknowledge", "edited by mistake; checked with the curator", home=dpdesk_home)
    assert a.returncode == 0, a.stderr
    assert "1 release(s) were carried over" in a.stdout
    assert len(list((dpdesk_home / "ledgers").glob("*.broken-*.jsonl"))) == 1  # the evidence is kept
    b = run("budget", str(plan), "--data", str(DATA), "--json", home=dpdesk_home)
    rep = json.loads(b.stdout)
    assert rep["releases_so_far"] == 1 and rep["remaining_before"]["epsilon"] == pytest.approx(1.1)  # not reset
    assert run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o3"), home=dpdesk_home).returncode == 0
    again = run("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "o4"), home=dpdesk_home)
    assert again.returncode == 1  # 0.9 + 0.9 spent of 2.0: the carried spend still counts
    assert run("ledger", "--data", str(DATA), "--acknowledge", "again", home=dpdesk_home).returncode == 3
