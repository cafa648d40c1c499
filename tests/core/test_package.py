"""Release packages, PDF reports and review: values in, raw statistics out, tampering named."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.publish.review import review
from dpdesk.core.release.steps import release

TRUE_SUM = "987654.321"  # planted: the exact sum of x below (9 rows of 109739.369)
N_ROWS = 4321


def planted(tmp_path: Path, labels: tuple[str, str] = ("north", "south")) -> Path:
    rows = ["109739.369," + labels[0]] * 9 + ["0," + labels[1]] * (N_ROWS - 9)
    p = tmp_path / "planted.csv"
    p.write_text("x,region\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return p


def plan(labels: tuple[str, str] = ("north", "south"), title: str = "Planted") -> Any:
    return parse_plan(
        {
            "version": 1,
            "title": title,
            "budget": {"epsilon": 2.0, "delta": 1e-6},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "columns": {
                "x": {"type": "float", "bounds": [0, 200000]},
                "region": {"type": "category", "categories": list(labels)},
            },
            "queries": [
                {"name": "rows", "statistic": "count", "mechanism": "laplace", "epsilon": 0.01},
                {
                    "name": "total x",
                    "statistic": "sum",
                    "column": "x",
                    "mechanism": "laplace",
                    "epsilon": 0.5,
                },
                {
                    "name": "x by region",
                    "statistic": "sum",
                    "column": "x",
                    "group_by": "region",
                    "mechanism": "gaussian",
                    "calibration": "analytic",
                    "epsilon": 0.5,
                    "delta": 1e-7,
                },
                {
                    "name": "regions",
                    "statistic": "histogram",
                    "column": "region",
                    "mechanism": "laplace",
                    "epsilon": 0.3,
                },
                {
                    "name": "biggest",
                    "statistic": "mode",
                    "column": "region",
                    "mechanism": "exponential",
                    "epsilon": 0.1,
                },
            ],
        }
    )


def pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)


def released(folder: Path) -> list[dict[str, str]]:
    with (folder / "release.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_report_holds_every_released_value_and_no_raw_statistic(dpdesk_home: Path, tmp_path: Path) -> None:
    data = planted(tmp_path)
    # A noisy number that happens to equal a true one (about 1 release in 100: the count's rounded noise is 0 with
    # probability ~0.5%) would make the checks below skip; released again (a fresh home: its own budget) until
    # none does, so a leak of the true count goes unseen about once in 10^6 runs, not once in 100.
    for attempt in range(3):
        out = tmp_path / f"pkg{attempt}"
        release(plan(), data, dpdesk_home / f"home{attempt}", out)
        rows = released(out)
        values = {r["value"] for r in rows} | {r["ci_low"] for r in rows} | {r["ci_high"] for r in rows}
        if str(N_ROWS) not in values and "4312" not in values:
            break
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    text = pdf_text(out / "report.pdf")
    flat = text.replace("\n", " ")
    for r in rows:
        for key in ("value", "ci_low", "ci_high", "epsilon"):
            if r[key]:
                assert r[key] in flat, (key, r[key])
    assert TRUE_SUM not in flat and "987654" not in flat
    if str(N_ROWS) not in values:  # the true count may only appear as a noisy value that happens to equal it
        assert str(N_ROWS) not in flat
    if "4312" not in values:  # the true count of 'south', unless a noisy value happens to equal it
        assert "4312" not in flat
    assert "Methods" in text and "Ledger entries" in text and "Dataset id" in text


@pytest.mark.slow
def test_tampered_files_are_named_and_review_exits_1(dpdesk_home: Path, tmp_path: Path) -> None:
    data = planted(tmp_path)
    out = tmp_path / "pkg"
    release(plan(), data, dpdesk_home, out)
    assert review(out).intact
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
    ok = subprocess.run(
        [sys.executable, "-m", "dpdesk", "review", str(out)], capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0 and "Intact." in ok.stdout

    csv_path = out / "release.csv"
    original = csv_path.read_bytes()
    csv_path.write_bytes(original.replace(b",rows,", b",rows,").replace(b"\nrows,,", b"\nrows,,1"))
    r = review(out)
    assert not r.intact and any("release.csv" in p for p in r.problems)
    bad = subprocess.run(
        [sys.executable, "-m", "dpdesk", "review", str(out)], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1 and "release.csv was modified" in bad.stdout
    csv_path.write_bytes(original)

    pdf = out / "report.pdf"
    raw = pdf.read_bytes()
    pdf.write_bytes(raw + b"%")
    assert any("report.pdf" in p for p in review(out).problems)
    pdf.write_bytes(raw)

    pj = out / "plan.json"
    d = json.loads(pj.read_text(encoding="utf-8"))
    d["queries"][0]["epsilon"] = 0.02
    pj.write_text(json.dumps(d), encoding="utf-8")
    problems = review(out).problems
    assert any("plan.json" in p for p in problems)
    pj.write_text(json.dumps(plan().to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert review(out).intact

    lj = out / "ledger.json"
    led = json.loads(lj.read_text(encoding="utf-8"))
    led["entries"][1]["charged"]["epsilon"] = 0.0001
    lj.write_text(json.dumps(led), encoding="utf-8")
    assert any("ledger.json: entry" in p for p in review(out).problems)


@pytest.mark.slow
def test_chinese_labels_render_in_the_report(dpdesk_home: Path, tmp_path: Path) -> None:
    labels = ("华北", "华南")
    data = planted(tmp_path, labels)
    out = tmp_path / "pkg"
    release(plan(labels, title="工资统计"), data, dpdesk_home, out)
    text = pdf_text(out / "report.pdf")
    assert "工资统计" in text and "华北" in text and "华南" in text


@pytest.mark.slow
def test_ledger_export_review_and_budget_statement(dpdesk_home: Path, tmp_path: Path) -> None:
    data = planted(tmp_path)
    release(plan(), data, dpdesk_home, tmp_path / "pkg")
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}

    def run(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dpdesk", *a], capture_output=True, text=True, env=env)

    exported = tmp_path / "ledger.jsonl"
    assert run("ledger", "--data", str(data), "--export", str(exported)).returncode == 0
    r = run("review", str(exported))
    assert r.returncode == 0 and "chain verified" in r.stdout
    lines = exported.read_text(encoding="utf-8").splitlines()
    exported.write_text("\n".join(lines[:1] + lines[2:]) + "\n", encoding="utf-8")
    r = run("review", str(exported))
    assert r.returncode == 1 and "chain is broken" in r.stdout
    st = tmp_path / "statement.pdf"
    assert run("ledger", "--data", str(data), "--statement", str(st)).returncode == 0
    text = pdf_text(st)
    assert "Budget statement" in text and "x by region" in text and "package" in text


@pytest.mark.slow
def test_bom_option_for_excel_and_review_accepts_it(dpdesk_home: Path, tmp_path: Path) -> None:
    data = planted(tmp_path, ("华北", "华南"))
    out = tmp_path / "pkg"
    release(plan(("华北", "华南")), data, dpdesk_home, out, bom=True)
    raw = (out / "release.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and "华北".encode() in raw
    assert review(out).intact
