"""Issue 28 items 4 and 5: the release report and the budget statement read in the user's language, in one number
style. In Chinese, no English word is left but the names the data and the plan give (columns, categories, queries,
file names) and a short allow-list (ε, OpenDP, zCDP, the names of functions in formulas and of cited authors);
in either language no number is in e-notation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpdesk.core.plan.reader import load_plan
from dpdesk.services import Dataset
from dpdesk.services.ledger import StatementRequest, write_statement
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.conftest import SAMPLES
from tests.services.test_report_claims import pdf_text

pytestmark = pytest.mark.slow

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
E_NOTATION = re.compile(r"(?<![\w.])\d+(\.\d+)?[eE][+-]?\d+(?!\w)")
#: English a Chinese reader may meet: names of things (OpenDP, zCDP), functions in formulas, cited authors
ALLOWED = {
    "dpdesk",
    "OpenDP",
    "zCDP",
    "CSV",
    "PDF",
    "UTC",
    "SHA",
    "ID",
    "NaN",
    "exp",
    "ln",
    "max",
    "min",
    "mid",
}
ALLOWED |= {"sqrt", "kM", "Balle", "Wang"}


def names_of(plan_path: Path, data: Path) -> set[str]:
    """The words the plan and the data's header give (names of columns, categories, queries): not dpdesk's to
    translate."""
    words: set[str] = set()

    def walk(x: object) -> None:
        if isinstance(x, str):
            words.update(re.findall(r"[A-Za-z]+", x))
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    walk(plan.get("title"))
    walk(
        [[name, spec.get("categories", [])] for name, spec in plan["columns"].items()]
    )  # not their type words
    walk([q["name"] for q in plan["queries"]])
    walk(data.read_text(encoding="utf-8").splitlines()[0])
    return words


def english_words(text: str, allowed: set[str]) -> set[str]:
    """English words in ``text`` that are not names, file names, hashes or the version."""
    text = re.sub(r"dpdesk \S+", " ", text)  # the footer's version
    text = re.sub(r"[\w.-]+\.(csv|json|pdf|jsonl)\b", " ", text)  # file names
    text = re.sub(r"(ds-)?[0-9a-f]{12,}…?", " ", text)  # ids and hashes (whole or the first twelve digits)
    found = set(re.findall(r"[A-Za-z][A-Za-z_]+", text))
    return {w for w in found if w not in allowed}


def test_the_chinese_report_and_statement_hold_no_english_but_names(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    data = tmp_path / "census.csv"
    data.write_bytes(DATA.read_bytes())
    release_plan(ReleaseRequest(load_plan(PLAN), data, dpdesk_home, tmp_path / "out"))
    write_statement(StatementRequest(Dataset(dpdesk_home, data), tmp_path / "statement.pdf"))
    allowed = ALLOWED | names_of(PLAN, data)
    for pdf in (tmp_path / "out" / "report.pdf", tmp_path / "statement.pdf"):
        text = pdf_text(pdf)
        assert "数据集" in text  # it is the Chinese report
        assert not english_words(text, allowed), (pdf.name, sorted(english_words(text, allowed)))
        assert not E_NOTATION.search(text), (pdf.name, [m.group(0) for m in E_NOTATION.finditer(text)])


def test_the_english_report_and_statement_show_no_number_in_e_notation(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """The sample plan spends δ 1e-7 of 1e-6 and its sums reach 1,710,000: both once printed with exponents."""
    release_plan(ReleaseRequest(load_plan(PLAN), DATA, dpdesk_home, tmp_path / "out"))
    write_statement(StatementRequest(Dataset(dpdesk_home, DATA), tmp_path / "statement.pdf"))
    for pdf in (tmp_path / "out" / "report.pdf", tmp_path / "statement.pdf"):
        text = pdf_text(pdf)
        assert not E_NOTATION.search(text), (pdf.name, [m.group(0) for m in E_NOTATION.finditer(text)])
        assert "0.0000001" in text  # the δ spent, in plain notation
