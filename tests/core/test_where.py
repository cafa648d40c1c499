"""A public row condition on a query (``where``, issue 31 item 2): how a plan states it, which rows it keeps (in
memory and streamed alike), what it does to the sensitivities under replace, and how the accuracy and the report
state it. The brute-force check of every statistic under a condition is in tests/core/test_bruteforce.py."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp.accuracy import query_accuracy
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.queries_base import rows_can_drop
from dpdesk.core.loading import load_table
from dpdesk.core.model.spec import Condition, Plan, plan_to_dict
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.publish.report import column_assumptions
from dpdesk.core.release.steps import release

COLUMNS: dict[str, Any] = {
    "wage": {"type": "float", "bounds": [0, 100]},
    "hours": {"type": "int", "bounds": [0, 60], "missing": {"impute": 40}},
    "ft": {"type": "category", "categories": ["full", "part", "none"]},
    "region": {"type": "category", "categories": ["n", "s"], "missing": {"impute": "s"}},
}


def plan_of(*queries: dict[str, Any], relation: str = "add_remove", **over: Any) -> Plan:
    data: dict[str, Any] = {
        "version": 1,
        "title": "t",
        "budget": {"epsilon": 50.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": relation, "max_rows_per_person": 1},
        "columns": COLUMNS,
        "queries": [
            {"name": f"q{i}", "mechanism": "laplace", **({} if "accuracy" in q else {"epsilon": 1.0}), **q}
            for i, q in enumerate(queries)
        ],
    }
    data.update(over)
    return parse_plan(data)


def problem(query: dict[str, Any]) -> PlanError:
    with pytest.raises(PlanError) as info:
        plan_of(query)
    return info.value


# --------------------------------------------------------------------------- the plan


def test_a_condition_is_one_object_or_a_list_and_round_trips() -> None:
    plan = plan_of(
        {"statistic": "mean", "column": "wage", "where": {"column": "ft", "in": ["part"]}},
        {
            "statistic": "count",
            "where": [{"column": "hours", "between": [35, 60]}, {"column": "region", "in": ["n", "s"]}],
            "expected_rows": 400,
        },
        {"statistic": "count"},
    )
    a, b, c = plan.queries
    assert a.where == (Condition("ft", categories=("part",)),)
    assert b.where == (Condition("hours", between=(35.0, 60.0)), Condition("region", categories=("n", "s")))
    assert b.expected_rows == 400 and a.expected_rows is None
    assert c.where == ()
    again = parse_plan(plan_to_dict(plan))
    assert again == plan
    d = plan_to_dict(plan)["queries"]
    assert d[1]["where"] == [{"column": "hours", "between": [35, 60]}, {"column": "region", "in": ["n", "s"]}]
    assert "where" not in d[2] and "expected_rows" not in d[2]  # a plan without it keeps its hash


@pytest.mark.parametrize(
    ("where", "key", "words"),
    [
        ({"column": "nope", "in": ["a"]}, "queries[0].where.column", "nope"),
        ({"column": "ft", "in": ["fulltime"]}, "queries[0].where.in[0]", "fulltime"),
        ({"column": "ft", "in": []}, "queries[0].where.in", "from 1"),
        ({"column": "ft", "between": [1, 2]}, "queries[0].where.between", "category column"),
        ({"column": "hours", "in": ["1"]}, "queries[0].where.in", "numeric column"),
        (
            {"column": "hours", "between": [30, 70]},
            "queries[0].where.between[1]",
            "outside the column bounds",
        ),
        ({"column": "hours", "between": [50, 40]}, "queries[0].where.between", "above"),
        ({"column": "hours", "between": [40]}, "queries[0].where.between", "two numbers"),
        ({"column": "hours", "in": ["1"], "between": [1, 2]}, "queries[0].where", "between"),
        ({"column": "hours", "above": 3}, "queries[0].where.above", "above"),
        (
            [{"column": "ft", "in": ["full"]}, {"column": "ft", "in": ["part"]}],
            "queries[0].where[1].column",
            "already",
        ),
        ([], "queries[0].where", "column"),
    ],
)
def test_a_wrong_condition_is_refused_naming_its_field(where: Any, key: str, words: str) -> None:
    exc = problem({"statistic": "count", "where": where})
    assert exc.key == key, (exc.key, str(exc))
    assert words in str(exc) + exc.hint


def test_a_synthetic_table_takes_no_condition() -> None:
    exc = problem(
        {
            "statistic": "synthetic",
            "mechanism": "mst",
            "delta": 1e-7,
            "columns": ["ft", "region"],
            "where": {"column": "ft", "in": ["full"]},
        }
    )
    assert exc.key.endswith("where") and "synthetic" in str(exc)


def test_a_query_s_expected_rows_is_a_whole_number() -> None:
    exc = problem({"statistic": "count", "expected_rows": 2.5})
    assert exc.key == "queries[0].expected_rows"


# --------------------------------------------------------------------------- the rows it keeps

ROWS = [
    # wage, hours, ft, region
    ("10", "40", "full", "n"),
    ("20", "20", "part", "s"),
    ("30", "", "part", "n"),  # hours imputed 40
    ("250", "70", "part", ""),  # wage clamped to 100, hours clamped to 60; region imputed s
    ("", "10", "part", "n"),  # wage missing: dropped by a mean of wage
    ("50", "35", "", "s"),  # ft missing: meets no ft condition
    ("60", "36", "other", "n"),  # ft undeclared: missing
    ("70", "34", "none", "s"),
]


def write(tmp_path: Path) -> Path:
    path = tmp_path / "d.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wage", "hours", "ft", "region"])
        w.writerows(ROWS)
    return path


def expected(keep: Any, value: Any = None) -> list[float]:
    """The rows that meet a condition, read by hand from ROWS (clamped, imputed and missing as the plan says)."""
    out = []
    for wage, hours, ft, region in ROWS:
        h = min(60.0, float(hours)) if hours else 40.0
        r = region or "s"
        f = ft if ft in ("full", "part", "none") else None
        w = min(100.0, float(wage)) if wage else None
        if keep(h, f, r, w):
            out.append(value(wage) if value else 1.0)
    return out


CASES = [
    ({"column": "ft", "in": ["part"]}, lambda h, f, r, w: f == "part"),
    ({"column": "hours", "between": [35, 60]}, lambda h, f, r, w: 35 <= h <= 60),
    ({"column": "region", "in": ["s"]}, lambda h, f, r, w: r == "s"),
    # a wage of 250 is clamped to 100 and meets it; a missing wage meets nothing
    ({"column": "wage", "between": [65, 100]}, lambda h, f, r, w: w is not None and w >= 65),
    (
        [{"column": "hours", "between": [0, 36]}, {"column": "ft", "in": ["part", "none"]}],
        lambda h, f, r, w: h <= 36 and f in ("part", "none"),
    ),
]


@pytest.mark.parametrize(("where", "keep"), CASES)
def test_the_condition_keeps_the_rows_that_meet_it(tmp_path: Path, where: Any, keep: Any) -> None:
    plan = plan_of(
        {"statistic": "count", "where": where},
        {"statistic": "sum", "column": "wage", "where": where},
    )
    table = load_table(write(tmp_path), plan.columns)
    every = np.ones(table.n_rows, dtype=bool)
    count, total = (exact_statistic(design_query(q, plan), table, every, plan.columns) for q in plan.queries)
    assert count.vectors[0] == [len(expected(keep))]
    wages = expected(keep, lambda w: min(100.0, float(w)) if w else math.nan)
    assert total.vectors[0][0] * design_query(plan.queries[1], plan).components[0].unit == pytest.approx(
        sum(w for w in wages if not math.isnan(w))
    )


def test_a_released_mean_on_a_subset_is_the_subset_s_mean(dpdesk_home: Path, tmp_path: Path) -> None:
    """At a large epsilon the noisy mean of part-time wages is within its stated interval of the exact one, and
    far from the mean of every row: the condition reached the release."""
    rng = np.random.default_rng(7)
    n = 4000
    ft = rng.choice(["full", "part"], size=n)
    wage = np.where(ft == "part", rng.uniform(0, 30, n), rng.uniform(60, 100, n))
    path = tmp_path / "w.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wage", "hours", "ft", "region"])
        w.writerows((f"{x:.3f}", "40", g, "n") for x, g in zip(wage, ft, strict=True))
    plan = plan_of(
        {"statistic": "mean", "column": "wage", "epsilon": 20.0, "where": {"column": "ft", "in": ["part"]}},
        {"statistic": "mean", "column": "wage", "epsilon": 20.0},
    )
    res = release(plan, path, dpdesk_home, tmp_path / "out")
    sub, every = (float(r.value) for r in res.rows)
    part = float(np.mean(np.round(wage[ft == "part"], 3)))
    assert abs(sub - part) < 0.5 and abs(every - float(np.mean(np.round(wage, 3)))) < 0.5
    assert abs(sub - every) > 10


# --------------------------------------------------------------------------- privacy


def test_a_condition_makes_rows_drop_under_replace_only() -> None:
    q = {"statistic": "sum", "column": "hours", "where": {"column": "ft", "in": ["full"]}}
    plain = {"statistic": "sum", "column": "hours"}
    rep = plan_of(q, plain, relation="replace")
    add = plan_of(q, plain, relation="add_remove")
    assert rows_can_drop(rep.queries[0], rep) and not rows_can_drop(rep.queries[1], rep)
    (c_where,), (c_plain,) = (design_query(s, rep).components for s in rep.queries)
    # hours in [0, 60], imputed: U - L = 60 without; a row of 60 that leaves the condition: max(U - L, M) = 60 too,
    # so compare on a column whose bounds exclude zero
    assert (
        c_where.l1 >= c_plain.l1
        and "condition" in c_where.derivation
        and 'ft is one of "full"' in c_where.derivation
    )
    (a_where,), (a_plain,) = (design_query(s, add).components for s in add.queries)
    assert a_where.l1 == a_plain.l1  # add/remove: a row that is not added is no change


def test_under_replace_a_condition_widens_a_sum_to_the_largest_magnitude() -> None:
    cols = {**COLUMNS, "year": {"type": "int", "bounds": [1990, 2000], "missing": {"impute": 1995}}}
    q = {"statistic": "sum", "column": "year"}
    rep = plan_of({**q, "where": {"column": "ft", "in": ["full"]}}, q, relation="replace", columns=cols)
    (c_where,), (c_plain,) = (design_query(s, rep).components for s in rep.queries)
    assert c_plain.l1 == pytest.approx(10.0) and c_where.l1 == pytest.approx(2000.0)


# --------------------------------------------------------------------------- accuracy and report


def test_a_subset_s_accuracy_is_stated_for_its_own_rows_or_not_at_all() -> None:
    where = {"column": "ft", "in": ["part"]}
    plan = plan_of(
        {"statistic": "mean", "column": "wage", "where": where},
        {"statistic": "mean", "column": "wage", "where": where, "expected_rows": 500},
        {"statistic": "mean", "column": "wage"},
        {
            "statistic": "quantile",
            "column": "hours",
            "where": where,
            "expected_rows": 500,
            "mechanism": "exponential",
        },
        expected_rows=10_000,
    )
    accs = [query_accuracy(design_query(q, plan), plan) for q in plan.queries]
    assert accs[0].error is None and accs[0].rows is None  # not the table's 10,000 rows
    assert accs[1].rows == 500 and accs[2].rows == 10_000
    assert accs[1].error is not None and accs[2].error is not None and accs[1].error > accs[2].error
    assert accs[3].rows == 500 and accs[3].percentiles is not None
    assert "meet its condition" in accs[1].sentence() and "plan's public estimate" in accs[2].sentence()


def test_an_accuracy_target_on_a_subset_needs_the_query_s_expected_rows() -> None:
    q = {"statistic": "mean", "column": "wage", "where": {"column": "ft", "in": ["part"]}}
    with pytest.raises(PlanError) as info:
        plan_of({**q, "accuracy": {"error": 5}}, expected_rows=10_000)
    assert "where" in str(info.value) and "expected_rows" in str(info.value)
    plan = plan_of({**q, "accuracy": {"error": 5}, "expected_rows": 800}, expected_rows=10_000)
    acc = query_accuracy(design_query(plan.queries[0], plan), plan)
    assert acc.rows == 800 and acc.error is not None and acc.error <= 5


def test_the_report_states_each_condition() -> None:
    plan = plan_of(
        {
            "statistic": "mean",
            "column": "wage",
            "where": [{"column": "ft", "in": ["part", "none"]}, {"column": "hours", "between": [0, 34.5]}],
        }
    )
    lines = column_assumptions(plan, plan.queries[0])
    assert any(line.startswith("Column ft:") for line in lines)
    assert any(line.startswith("Column hours:") for line in lines)
    rows = [line for line in lines if line.startswith("Rows:")]
    assert len(rows) == 1 and 'ft is one of "part", "none"' in rows[0] and "hours from 0 to 34.5" in rows[0]


# --------------------------------------------------------------------------- bounds too narrow for their size


@pytest.mark.parametrize(
    ("bounds", "integer"),
    [((1e12, 1e12 + 100), False), ((1e12, 1e12 + 600), False), ((1e15 - 3, 1e15), True)],
)
def test_bounds_narrower_than_their_grid_are_refused_with_a_hint(
    bounds: tuple[float, float], integer: bool
) -> None:
    """Found by the attacker's pass: the grid step of such bounds is as wide as the range, so a mean or a variance
    was rounded beyond its stated accuracy, or its design divided by zero (a traceback in `dpdesk budget`)."""
    cols = {"x": {"type": "int" if integer else "float", "bounds": list(bounds)}}
    with pytest.raises(PlanError) as info:
        plan_of({"statistic": "mean", "column": "x"}, columns=cols)
    assert (
        info.value.key == "columns.x.bounds"
        and "too narrow" in str(info.value)
        and "subtract" in info.value.hint
    )


@pytest.mark.parametrize(
    ("bounds", "integer"),
    [
        ((98, 100), True),
        ((0, 1e9), True),
        ((99.0, 100.0), False),
        ((-1e9, 1e9), False),
        ((0, 3e9), True),
        ((0, 1e-6), False),
    ],
)
def test_the_plan_s_grid_step_is_the_engine_s(bounds: tuple[float, float], integer: bool) -> None:
    from dpdesk.core.dp.queries_base import grid_exponent
    from dpdesk.core.model.spec import ColumnSpec, grid_step

    spec = ColumnSpec("x", "int" if integer else "float", bounds=bounds)  # type: ignore[arg-type]
    assert grid_step(*bounds, integer=integer) == math.ldexp(1.0, -grid_exponent(spec))


def test_a_condition_of_hundreds_of_categories_fits_the_report(dpdesk_home: Path, tmp_path: Path) -> None:
    """Found by the attacker's pass: the whole condition went into one cell of the report's summary table, which
    reportlab could not fit on a page, so the release failed after the ledger was charged. The description names at
    most ten categories (plan.json keeps them all) and every number unrounded."""
    cats = [f"r{i}" for i in range(300)]
    cols = {"c": {"type": "category", "categories": cats}, "x": {"type": "float", "bounds": [0, 100]}}
    plan = plan_of({"statistic": "count", "where": {"column": "c", "in": cats}}, columns=cols)
    path = tmp_path / "c.csv"
    path.write_text("c,x\n" + "".join(f"r{i % 300},{i % 100}\n" for i in range(600)), encoding="utf-8")
    release(plan, path, dpdesk_home, tmp_path / "out")
    assert (tmp_path / "out" / "report.pdf").stat().st_size > 0
    text = Condition("c", categories=tuple(cats)).describe()
    assert '"r9" and 290 more' in text and '"r10"' not in text
    assert Condition("x", between=(100000.4, 1234567.5)).describe() == "x from 100000.4 to 1234567.5"


def test_a_condition_no_row_can_meet_is_said() -> None:
    """Found by the attacker's pass: a range with no whole number on an int column matched nothing, silently; a
    condition on the grouping column published noise for the groups it excludes, without a word."""
    exc = problem({"statistic": "count", "where": {"column": "hours", "between": [20.2, 20.7]}})
    assert exc.key == "queries[0].where.between" and "whole number" in str(exc)
    plan = plan_of({"statistic": "count", "group_by": "ft", "where": {"column": "ft", "in": ["full"]}})
    notes = design_query(plan.queries[0], plan).notes
    assert any("part, none" in n and "noise only" in n for n in notes)
