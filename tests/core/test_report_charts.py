"""The release report at scale: charts as vectors (no image), a summary table of every query first, a size
that grows by a few KB per query; and the chart model shared by the app (matplotlib) and the PDF."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release
from dpdesk.resources import resource

SAMPLE = resource("samples", "census_sample.csv")
REGIONS = ["northeast", "midwest", "south", "west"]


def plan_of(n: int) -> Any:
    """``n`` queries over the sample table: counts, sums, means, histograms, grouped sums, quantiles, modes."""
    kinds: list[dict[str, Any]] = [
        {"statistic": "count", "mechanism": "laplace"},
        {"statistic": "sum", "column": "wage", "mechanism": "laplace"},
        {"statistic": "mean", "column": "age", "mechanism": "laplace"},
        {"statistic": "histogram", "column": "region", "mechanism": "laplace"},
        {"statistic": "sum", "column": "hours", "group_by": "region", "mechanism": "laplace"},
        {"statistic": "quantile", "column": "age", "q": 0.5, "mechanism": "exponential"},
        {"statistic": "mode", "column": "region", "mechanism": "exponential"},
    ]
    queries = [
        {"name": f"q{i:03d} {kinds[i % len(kinds)]['statistic']}", **kinds[i % len(kinds)]} for i in range(n)
    ]
    for q in queries:
        q["epsilon"] = 0.01
    return parse_plan(
        {
            "version": 1,
            "title": f"{n} queries",
            "budget": {"epsilon": 10.0, "delta": 1e-6},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "columns": {
                "age": {"type": "int", "bounds": [0, 100]},
                "wage": {"type": "float", "bounds": [0, 5000]},
                "hours": {"type": "int", "bounds": [0, 99]},
                "region": {"type": "category", "categories": REGIONS},
            },
            "queries": queries,
        }
    )


@pytest.fixture(scope="module")
def big_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[str]], int]:
    """One release of 70 queries (its folder, the rows of release.csv, the number of queries)."""
    tmp = tmp_path_factory.mktemp("big")
    out = tmp / "out"
    n = 70
    release(plan_of(n), SAMPLE, tmp / "home", out)
    with (out / "release.csv").open(encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    return out, rows, n


def _images(reader: PdfReader) -> int:
    count = 0
    for page in reader.pages:
        xobjects = page.get("/Resources", {}).get("/XObject", {})
        for ref in xobjects.values():
            if ref.get_object().get("/Subtype") == "/Image":
                count += 1
    return count


@pytest.mark.slow
def test_the_charts_are_vectors_not_images(big_release: tuple[Path, list[list[str]], int]) -> None:
    out, rows, _n = big_release
    reader = PdfReader(str(out / "report.pdf"))
    assert _images(reader) == 0
    text = "\n".join(p.extract_text() or "" for p in reader.pages)
    # the charts are there, drawn as text and paths: the budget chart's title and axis, and every region's label
    # in the results charts (histograms and grouped sums: 20 charts)
    assert "Budget: this release's queries (sequential)" in text
    assert "epsilon (total budget 10)" in text
    charted = [r for r in rows if r[1] in REGIONS]
    assert len(charted) == 4 * 20
    for region in REGIONS:
        assert text.count(region) >= 2 * 20  # once in each table, once under each chart


def test_the_summary_table_lists_every_query_first(big_release: tuple[Path, list[list[str]], int]) -> None:
    out, rows, n = big_release
    reader = PdfReader(str(out / "report.pdf"))
    pages = [p.extract_text() or "" for p in reader.pages]
    first_section = next(i for i, t in enumerate(pages) if "Statistics" in t.splitlines())
    summary = "\n".join(pages[:first_section])
    assert "Summary" in summary.splitlines()
    names = list(dict.fromkeys(r[0] for r in rows))
    assert len(names) == n
    single = {r[0]: r[2] for r in rows if sum(1 for x in rows if x[0] == r[0]) == 1}
    lines = summary.splitlines()
    starts = [lines.index(name) for name in names]  # each query's row starts with its name, in plan order
    assert starts == sorted(starts)
    for name, start, end in zip(names, starts, [*starts[1:], len(lines)], strict=True):
        row = lines[start:end]
        assert "0.01" in row, row  # its epsilon
        if name in single:  # and its released value
            assert single[name] in row, row
    # the accuracy's short form, e.g. "±1470 (95%)" for a count at epsilon 0.01
    assert (
        summary.count("(95%)") >= n - n // 7
    )  # every query but the means, whose accuracy needs the row count


def test_a_large_plans_report_grows_by_a_few_kb_per_query(
    big_release: tuple[Path, list[list[str]], int],
) -> None:
    out, _rows, n = big_release
    size = (out / "report.pdf").stat().st_size
    # generous: about 2.5 KB per query today; a PNG chart per query took 30-40 KB
    assert size / n < 8_000, size


def test_results_chart_model_and_ticks() -> None:
    from dpdesk.core.dp.figures import BAR_BLUE, budget_chart, nice_ticks, results_chart

    c = results_chart("t", ["a", "b"], [1, 2], [0.5, 1.5], [1.5, 2.5])
    assert c.values == (1.0, 2.0) and c.lows == (0.5, 1.5) and c.highs == (1.5, 2.5)
    assert c.colours == (BAR_BLUE, BAR_BLUE) and not c.horizontal
    assert results_chart("t", ["a"], [1], None, [2]).lows is None  # intervals only with both sides
    assert nice_ticks(0, 1050) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(-3, 3) == [-3, -2, -1, 0, 1, 2, 3]
    assert nice_ticks(0, 0.07) == [0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07]
    few = budget_chart([("a", 1.0), ("b", 2.0)], 10.0, 0.5, 6.5, "sequential")
    assert few.labels == ("earlier releases", "a", "b", "remaining") and few.values == (0.5, 1.0, 2.0, 6.5)
    many = budget_chart([(f"q{i}", 0.1) for i in range(40)], 10.0, 0.0, 6.0, "sequential")
    assert many.labels == ("earlier releases", "this release (40 queries)", "remaining")
    assert math.isclose(many.values[1], 4.0)


@pytest.mark.parametrize(
    ("values", "lows", "highs"),
    [
        ([5.0, -3.0, 0.0], [4.0, -4.0, -1.0], [6.0, -2.0, 1.0]),  # negative values
        ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]),  # all zero
        ([1.0, math.nan, 2.0], [0.0, math.nan, 1.0], [2.0, math.nan, 3.0]),  # a value that is not a number
    ],
)
def test_pdf_charts_draw_odd_values(
    tmp_path: Path, values: list[float], lows: list[float], highs: list[float]
) -> None:
    from reportlab.platypus import SimpleDocTemplate

    from dpdesk.core.dp.figures import results_chart
    from dpdesk.core.publish.pdf_charts import drawing
    from dpdesk.core.publish.pdftext import _register_fonts

    _register_fonts()
    labels = ["一", "two", "三"][: len(values)]
    path = tmp_path / "c.pdf"
    SimpleDocTemplate(str(path)).build([drawing(results_chart("图 chart", labels, values, lows, highs), 400)])
    text = PdfReader(str(path)).pages[0].extract_text() or ""
    assert "chart" in text and "two" in text


@pytest.mark.slow
def test_a_release_with_its_report_never_imports_matplotlib(tmp_path: Path) -> None:
    """The report draws with reportlab alone: matplotlib (a second of imports) stays off the release path."""
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from test_report_charts import plan_of, SAMPLE; from dpdesk.core.release.steps import release; "
        "release(plan_of(8), SAMPLE, Path(sys.argv[2]) / 'home', Path(sys.argv[2]) / 'out'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "out" / "report.pdf").stat().st_size > 10_000
    assert r.stdout.strip().splitlines()[-1] == "[]"
