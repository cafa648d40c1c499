"""Issue 34, item 5: the release report states what its numbers assume (public bounds and categories, clamping,
the missing-value rule, the unit of privacy) and nothing false (what a re-saved copy of the file costs), sets its
formulas as mathematics, never splits an epsilon across lines, and says that the accuracy is a bound for any table
of the expected size while the interval is this release's own. Each claim is read from the PDF's text and checked
against what dpdesk does."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.plan.reader import load_plan, parse_plan
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def pdf_text(path: Path, *, layout: bool = False) -> str:
    """The report's text as a reader's tool extracts it (poppler's pdftotext when installed, else pypdf)."""
    if shutil.which("pdftotext"):
        args = ["pdftotext", *(["-layout"] if layout else []), str(path), "-"]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout
    from pypdf import PdfReader

    return "\n".join(p.extract_text() or "" for p in PdfReader(str(path)).pages)


def flat(text: str) -> str:
    return " ".join(text.split())


def section(text: str, name: str, following: str) -> str:
    """One statistic's section of the report: from its heading to the next one."""
    body = flat(text)
    start = body.index(f"{name}: ", body.index("Statistics"))
    return body[start : body.index(f"{following}: ", start + 1)]


def test_a_crlf_copy_is_charged_to_the_same_ledger_and_the_report_says_so(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """The methods section once said that a re-saved file is a new dataset with its own budget, false since content
    identities: a CRLF copy released into the same home is charged to the first file's ledger, and the PDF says
    that (and no longer the opposite)."""
    plan = load_plan(PLAN)
    small = parse_plan({**plan.to_dict(), "queries": plan.to_dict()["queries"][:1]})  # the count, epsilon 0.1
    first = release_plan(ReleaseRequest(small, DATA, dpdesk_home, tmp_path / "first"))
    copy = tmp_path / "copy.csv"
    copy.write_bytes(DATA.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    assert copy.read_bytes() != DATA.read_bytes()
    second = release_plan(ReleaseRequest(small, copy, dpdesk_home, tmp_path / "second"))
    # what dpdesk does: one dataset, one ledger, the second release spends on top of the first
    assert second.entry.dataset == first.entry.dataset
    assert second.entry.fields["spent_after"]["epsilon"] == pytest.approx(0.2)
    (ledger,) = (dpdesk_home / "ledgers").glob("ds-*.jsonl")
    spends = [json.loads(x) for x in ledger.read_text(encoding="utf-8").splitlines() if '"spend"' in x]
    assert [e["seq"] for e in spends] == [first.entry.seq, second.entry.seq]
    # what the report says about it
    for out in ("first", "second"):
        text = flat(pdf_text(tmp_path / out / "report.pdf"))
        assert "a re-saved file is a new dataset" not in text
        assert "is a new dataset with a budget of its own" not in text
        assert (
            "A copy of this table saved in another form (other line ends or quoting, a byte-order mark, another "
            "file format, the rows in another order) is recognised in this dpdesk home by its rows and charged to "
            "this dataset's ledger: it has no budget of its own." in text
        )
        assert "is refused until it is linked to this dataset's ledger or declared a new dataset" in text


def _plan(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PLAN.read_text(encoding="utf-8"))
    data.update(over)
    return data


def test_each_statistic_states_its_public_bounds_categories_missing_rule_and_unit(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Each statistic's section names the bounds its column was clamped to and the categories it used (exactly
    the plan's), the missing-value rule (dropped or imputed) and the unit of privacy (relation, rows per person,
    id column). The release really clamps to those bounds: every released mean lies inside them."""
    data = _plan(
        privacy_unit={"neighbouring": "replace", "max_rows_per_person": 2, "id_column": "id"},
        columns={
            "id": {"type": "category", "categories": ["x"]},  # declared only as the id column's name
            "wage": {"type": "float", "bounds": [10, 4500.5]},
            "education": {"type": "int", "bounds": [0, 18], "missing": {"impute": 12}},
            "region": {"type": "category", "categories": ["northeast", "midwest", "south", "west"]},
        },
    )
    del data["columns"]["id"]
    plan = parse_plan(data)
    table = tmp_path / "t.csv"
    lines = DATA.read_text(encoding="utf-8").splitlines()
    table.write_text(
        "id," + lines[0] + "\n" + "".join(f"p{i // 2},{row}\n" for i, row in enumerate(lines[1:])),
        encoding="utf-8",
    )
    done = release_plan(ReleaseRequest(plan, table, dpdesk_home, tmp_path / "out"))
    text = pdf_text(tmp_path / "out" / "report.pdf")
    mean = section(text, "mean wage", "regions")
    lo, hi = plan.columns["wage"].bounds or (0, 0)
    assert (
        "Column wage: public bounds [10, 4500.5] from the plan, not from the data; values outside were clamped"
        in mean
    )
    assert (lo, hi) == (10, 4500.5)
    value = float(next(r for r in done.rows if r.as_list()[0] == "mean wage").as_list()[2])
    assert lo <= value <= hi  # clamped: the released mean of clamped values lies inside the printed bounds
    assert "missing values (empty, unparsable or NaN): the row is left out." in mean
    unit = (
        "Unit of privacy: one person's rows (at most 2), replaced by as many rows with other values; id column id: "
        "dpdesk keeps at most 2 rows per id, chosen by a keyed hash of the id and each row, and leaves out rows with an "
        "empty id."
    )
    assert unit in mean
    regions = section(text, "regions", "wage by region")
    assert "Column region: public categories northeast, midwest, south, west from the plan" in regions
    assert "missing values (empty, or outside the categories): the row is left out." in regions
    assert unit in regions
    by_region = section(text, "wage by region", "median education")
    assert "[10, 4500.5]" in by_region and "public categories northeast, midwest, south, west" in by_region
    median = section(text, "median education", "largest region")
    assert "Column education: public bounds [0, 18]" in median
    assert "missing values (empty, unparsable or NaN): replaced by 12." in median
    people = section(text, "people", "mean wage")
    assert unit in people and "public bounds" not in people
    # the facts table says the same unit of privacy in words, never the plan's bare word
    assert "replace, up to" not in flat(text) and "add_remove" not in flat(text)


def test_formulas_are_mathematics_and_epsilon_never_splits(dpdesk_home: Path, tmp_path: Path) -> None:
    """No code notation (sqrt(, delta, eps, Du, Phi, <=, e^) in the formulas; Greek letters and operators
    instead. An epsilon of many digits (0.308975) stays on one line in the summary and the statistic's line."""
    data = _plan()
    data["queries"][1]["epsilon"] = 0.308975
    data["queries"][0]["epsilon"] = 0.0210253
    data["queries"][3]["calibration"] = "classic"
    data["queries"] = data["queries"][:5]
    plan = parse_plan(data)
    release_plan(ReleaseRequest(plan, DATA, dpdesk_home, tmp_path / "out"))
    pdf = tmp_path / "out" / "report.pdf"
    text = pdf_text(pdf)
    lines = [ln.strip() for ln in text.splitlines()]
    formulas = "\n".join(ln for ln in text.splitlines() if "Formula" in ln or "sensitivity" in ln)
    body = flat(text)
    # the statistics' sections (their formulas and derivations) and the methods, not the chart's axis label
    maths = body[body.index("Statistics") : body.index("Budget ")] + body[body.index("Methods") :]
    for code in ("sqrt(", "delta", "epsilon", "eps ", "sigma", " Du", "Phi", "<=", "e^", " * ", "1e-07"):
        assert code not in maths, code
    for sign in ("√(2 ln(1.25/δ))", "σ =", "Δ", "∝", "≤", "q·n", "ε ="):
        assert sign in maths, sign
    assert formulas
    # the epsilon in the summary table is one word on one line, never "0.308" over "975"
    summary = body[body.index("Summary") : body.index("Statistics")]
    assert re.search(r"(?<![\d.])0\.308975(?![\d])", summary), summary
    assert re.search(r"(?<![\d.])0\.0210253(?![\d])", summary), summary
    assert not any(ln in ("975", "0.308", "253") for ln in lines)
    assert "ε = 0.308975" in body.replace("\u00a0", " ")


def test_the_accuracy_is_a_bound_for_any_table_and_the_interval_this_releases_own(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """The accuracy sentence (from the plan, before the release) beside an interval (this release's own) is
    labelled as such: a bound for any table of the expected size, where the plan states one."""
    release_plan(ReleaseRequest(load_plan(PLAN), DATA, dpdesk_home, tmp_path / "out"))
    text = pdf_text(tmp_path / "out" / "report.pdf")
    mean = section(text, "mean wage", "regions")
    assert (
        "The accuracy is a bound stated from the plan before the release, for any table of the expected size "
        "(2000 rows); the 95% interval in the table above is this release's own" in mean
    )
    people = section(text, "people", "mean wage")
    assert (
        "The accuracy is a bound stated from the plan before the release, for any table; the 95% interval"
        in people
    )
    median = section(text, "median education", "largest region")
    assert "The accuracy is a bound stated" not in median  # no interval of values beside it
