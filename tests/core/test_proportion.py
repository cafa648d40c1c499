"""The proportion statistic (issue 12, stage 1): added through the registry alone.

Plan validation (good and bad conditions), the exact share (inclusive conditions, the missing policy), the
worst-case neighbours that reach its booked sensitivity, a release (a share in [0, 1] with its interval),
and its stated 95% accuracy against OpenDP's noise. The brute-force test and the privacy audit cover it
through its module's ``examples`` and ``audit_examples``, without being edited.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.statistics.proportion import ProportionQuery, share_error95
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import steps as rel
from dpdesk.core.release.steps import release

CATS = ["yes", "no", "maybe"]


def make_plan(
    query: dict[str, Any],
    *,
    relation: str = "add_remove",
    k: int = 1,
    x_missing: Any = "drop",
    g_missing: Any = "drop",
    xtype: str = "float",
) -> Plan:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": relation, "max_rows_per_person": k},
            "columns": {
                "x": {"type": xtype, "bounds": [0, 100], "missing": x_missing},
                "g": {"type": "category", "categories": CATS, "missing": g_missing},
                "h": {"type": "category", "categories": ["a", "b"]},
            },
            "queries": [
                {"name": "share", "epsilon": 1.0, "statistic": "proportion", "mechanism": "laplace", **query}
            ],
        }
    )


def bad(query: dict[str, Any]) -> PlanError:
    with pytest.raises(PlanError) as err:
        make_plan(query)
    return err.value


# --------------------------------------------------------------------------- plan validation


def test_good_conditions_parse_and_round_trip() -> None:
    for query, fields in (
        ({"column": "g", "categories": ["yes"]}, {"categories": ("yes",)}),
        ({"column": "g", "categories": ["yes", "maybe"], "group_by": "h"}, {"categories": ("yes", "maybe")}),
        ({"column": "x", "at_least": 18}, {"at_least": 18.0, "at_most": None}),
        ({"column": "x", "at_most": 64.5}, {"at_least": None, "at_most": 64.5}),
        (
            {"column": "x", "at_least": 18, "at_most": 18, "group_by": "g"},
            {"at_least": 18.0, "at_most": 18.0},
        ),
    ):
        plan = make_plan(query)
        spec = plan.queries[0]
        assert isinstance(spec, ProportionQuery)
        for name, value in fields.items():
            assert getattr(spec, name) == value, (query, name)
        assert parse_plan(plan.to_dict()) == plan
        written = plan.to_dict()["queries"][0]
        assert {k: v for k, v in written.items() if k in query} == query


@pytest.mark.parametrize(
    ("query", "key", "words"),
    [
        ({"column": "g"}, "categories", "needs the categories it counts"),
        ({"column": "g", "categories": []}, "categories", "from 1 to 3 categories"),
        ({"column": "g", "categories": "yes"}, "categories", "must be a list of categories"),
        (
            {"column": "g", "categories": ["yes", "nope"]},
            "categories[1]",
            '"nope" is not a declared category',
        ),
        ({"column": "g", "categories": ["yes", "yes"]}, "categories[1]", "listed twice"),
        ({"column": "g", "categories": ["yes", "no", "maybe"]}, "categories", "would always be 1"),
        ({"column": "g", "categories": ["yes"], "at_least": 3}, "at_least", "applies to a numeric column"),
        ({"column": "x"}, "at_least", "needs a condition: at_least, at_most or both"),
        ({"column": "x", "categories": ["yes"]}, "categories", "applies to a category column"),
        ({"column": "x", "at_least": 60, "at_most": 40}, "at_most", "(40) is below at_least (60)"),
        ({"column": "x", "at_least": 101}, "at_least", "101 lies outside the column bounds [0, 100]"),
        ({"column": "x", "at_most": -1}, "at_most", "lies outside the column bounds"),
        ({"column": "x", "at_least": 0}, "at_least", "would always be 1"),
        ({"column": "x", "at_least": 0, "at_most": 100}, "at_least", "would always be 1"),
        ({"column": "x", "at_least": "18"}, "at_least", "must be a number"),
        ({"column": "x", "at_least": 5, "q": 0.5}, "q", "does not apply to proportion"),
        ({"column": "x", "at_least": 5, "group_by": "x"}, "group_by", "must be a category column"),
        ({"at_least": 5}, "column", "is required for proportion"),
        ({"column": "x", "at_least": 5, "mechanism": "exponential"}, "mechanism", "laplace or gaussian"),
    ],
)
def test_bad_conditions_are_refused_with_a_clear_message(query: dict[str, Any], key: str, words: str) -> None:
    err = bad(query)
    assert err.key == f"queries[0].{key}"
    assert words in str(err)


# --------------------------------------------------------------------------- the exact share


def table(plan: Plan, xs: list[float], gs: list[int]) -> Table:
    x = np.asarray(xs, dtype=np.float64)
    miss = None
    if plan.columns["x"].type == "int":
        miss = np.isnan(x)
        x = np.where(miss, 0, x).astype(np.int64)
    cols = {
        "x": Column(plan.columns["x"], x, miss if miss is not None and miss.any() else None),
        "g": Column(plan.columns["g"], np.asarray(gs, dtype=np.int16)),
        "h": Column(plan.columns["h"], np.zeros(len(xs), dtype=np.int16)),
    }
    return Table("t", "", len(xs), cols)


def true_counts(plan: Plan, xs: list[float], gs: list[int]) -> tuple[list[int], list[float]]:
    """(rows counted, sum of the indicator) of each cell, from the exact statistic."""
    design = design_query(plan.queries[0], plan)
    ex = exact_statistic(design, table(plan, xs, gs), np.ones(len(xs), dtype=bool), plan.columns)
    counts, centred = ex.vectors
    return counts, [(c * 0.5 + n / 2) for c, n in zip(centred, counts, strict=True)]


@pytest.mark.parametrize("xtype", ["float", "int"])
def test_the_condition_is_inclusive_and_values_are_clamped(xtype: str) -> None:
    xs = [17.0, 18.0, 40.0, 64.0, 65.0, 250.0, -3.0]  # 250 is clamped to 100, -3 to 0
    plan = make_plan({"column": "x", "at_least": 18, "at_most": 64}, xtype=xtype)
    assert true_counts(plan, xs, [0] * 7) == ([7], [3.0])  # 18, 40 and 64
    plan = make_plan({"column": "x", "at_least": 100}, xtype=xtype)
    assert true_counts(plan, xs, [0] * 7) == ([7], [1.0])  # 250, clamped to 100
    plan = make_plan({"column": "x", "at_most": 0}, xtype=xtype)
    assert true_counts(plan, xs, [0] * 7) == ([7], [1.0])  # -3, clamped to 0


def test_categories_and_groups() -> None:
    gs = [0, 1, 2, 0, 0, -1]  # yes, no, maybe, yes, yes, undeclared (missing)
    plan = make_plan({"column": "g", "categories": ["yes", "maybe"]})
    assert true_counts(plan, [1.0] * 6, gs) == ([5], [4.0])  # the missing row drops out (policy "drop")
    plan = make_plan({"column": "g", "categories": ["no"]}, g_missing={"impute": "no"})
    assert true_counts(plan, [1.0] * 6, gs) == ([6], [2.0])  # imputed as "no": counted, and meets it
    plan = make_plan({"column": "x", "at_least": 50, "group_by": "g"})
    counts, hits = true_counts(plan, [10.0, 60.0, 70.0, 80.0, 20.0, 90.0], gs)
    assert counts == [3, 1, 1] and hits == [1.0, 1.0, 1.0]


def test_missing_values_follow_the_columns_policy() -> None:
    xs = [10.0, math.nan, 70.0, math.nan]
    plan = make_plan({"column": "x", "at_least": 50})
    assert true_counts(plan, xs, [0] * 4) == ([2], [1.0])  # "drop": out of numerator and denominator
    plan = make_plan({"column": "x", "at_least": 50}, x_missing={"impute": 60})
    assert true_counts(plan, xs, [0] * 4) == ([4], [3.0])  # imputed 60 meets the condition


# --------------------------------------------------------------------------- sensitivity


def change(plan: Plan, a: tuple[list[float], list[int]], b: tuple[list[float], list[int]]) -> list[float]:
    """L1 change of each component between two tables, in natural units."""
    design = design_query(plan.queries[0], plan)
    out = []
    for (va, vb), c in zip(
        zip(
            exact_statistic(design, table(plan, *a), np.ones(len(a[0]), dtype=bool), plan.columns).vectors,
            exact_statistic(design, table(plan, *b), np.ones(len(b[0]), dtype=bool), plan.columns).vectors,
            strict=True,
        ),
        design.components,
        strict=True,
    ):
        out.append(float(np.abs(np.asarray(va) - np.asarray(vb)).sum()) * c.unit)
    return out


@pytest.mark.parametrize("k", [1, 3])
def test_the_worst_neighbours_reach_the_booked_sensitivity(k: int) -> None:
    base = ([10.0, 60.0, 70.0], [0, 1, 2])
    query = {"column": "x", "at_least": 50}
    p = make_plan(query, relation="add_remove", k=k)
    count_c, sum_c = design_query(p.queries[0], p).components
    assert (count_c.l1, sum_c.l1, sum_c.l2) == (k, 0.5 * k, 0.5 * k)
    added = (base[0] + [10.0] * k, base[1] + [0] * k)
    assert change(p, base, added) == [k, 0.5 * k]
    p = make_plan(query, relation="replace", k=k)
    count_c, sum_c = design_query(p.queries[0], p).components
    assert (sum_c.l1, sum_c.l2) == (k, k)
    a = (base[0] + [90.0] * k, base[1] + [0] * k)
    b = (base[0] + [10.0] * k, base[1] + [0] * k)
    assert change(p, a, b) == [0.0, k]
    # a row that drops out: its neighbour's value is missing (NaN under "drop")
    c = (base[0] + [math.nan] * k, base[1] + [0] * k)
    assert change(p, a, c) == [k, 0.5 * k]
    assert "drop" in sum_c.derivation
    # grouped under replace: a row moves from one group to another
    p = make_plan({**query, "group_by": "g"}, relation="replace", k=k)
    count_c, sum_c = design_query(p.queries[0], p).components
    assert (count_c.l1, sum_c.l1, sum_c.l2) == (2 * k, k, k)
    d = (base[0] + [90.0] * k, base[1] + [1] * k)
    assert change(p, a, d) == [2 * k, k]


def test_random_neighbours_never_exceed_the_booked_sensitivity() -> None:
    """500 random neighbouring pairs per relation and grouping (k = 2); numpy's generator is test data."""
    rng = np.random.default_rng(7)
    values = [-5.0, 0.0, 18.0, 40.0, 64.0, 99.0, 100.0, 130.0, math.nan]
    for relation in ("add_remove", "replace"):
        for extra in ({}, {"group_by": "g"}):
            p = make_plan({"column": "x", "at_least": 18, "at_most": 64, **extra}, relation=relation, k=2)
            comps = design_query(p.queries[0], p).components
            for _ in range(500):
                n, j = int(rng.integers(0, 10)), int(rng.integers(1, 3))
                xs, gs = list(rng.choice(values, size=n)), list(rng.integers(0, 3, size=n))
                new = (list(rng.choice(values, size=j)), list(rng.integers(0, 3, size=j)))
                if relation == "add_remove":
                    a, b = (xs, gs), (xs + new[0], gs + new[1])
                else:
                    old = (list(rng.choice(values, size=j)), list(rng.integers(-1, 3, size=j)))
                    a, b = (xs + old[0], gs + old[1]), (xs + new[0], gs + new[1])
                for seen, comp in zip(change(p, a, b), comps, strict=True):
                    assert seen <= comp.l1 + 1e-12


# --------------------------------------------------------------------------- release and accuracy


def test_a_release_is_a_share_in_0_1_with_its_interval(tmp_path: Path, dpdesk_home: Path) -> None:
    data = tmp_path / "t.csv"
    data.write_text("x,g,h\n" + "".join(f"{(i * 7) % 100},{CATS[i % 3]},a\n" for i in range(3000)))
    plan = make_plan({"column": "g", "categories": ["yes"], "group_by": "h"})
    res = release(plan, data, dpdesk_home, tmp_path / "out")
    assert [r.group for r in res.rows] == ["a", "b"]
    for r in res.rows:
        value, low, high = float(r.value), float(r.ci_low), float(r.ci_high)
        assert 0.0 <= low <= value <= high <= 1.0
    a, b = res.rows
    assert abs(float(a.value) - 1 / 3) < 0.05  # 3,000 rows: the noise is about 1/1000 of the share
    assert (float(b.ci_low), float(b.ci_high)) == (0.0, 1.0)  # an empty group: the share is unknown
    assert res.entry.charged.epsilon == pytest.approx(1.0)


def test_zero_noise_releases_the_true_share_and_large_noise_is_clamped() -> None:
    plan = make_plan({"column": "x", "at_least": 50})
    design = design_query(plan.queries[0], plan)
    xs = [10.0, 60.0, 70.0, 80.0]
    ex = exact_statistic(design, table(plan, xs, [0] * 4), np.ones(4, dtype=bool), plan.columns)
    (row,) = rel.noisy_rows(design, ex, plan, noise=lambda v, c: [x * c.refine for x in v])
    assert float(row.value) == 0.75
    for shift in (10**6, -(10**6)):
        (row,) = rel.noisy_rows(design, ex, plan, noise=lambda v, c, s=shift: [x * c.refine + s for x in v])
        assert 0.0 <= float(row.ci_low) <= float(row.value) <= float(row.ci_high) <= 1.0


@pytest.mark.statistical
def test_the_share_is_within_its_stated_95_percent_error() -> None:
    """400 releases with OpenDP's noise (n = 2,000 rows, true share 0.3, epsilon 0.2). The stated error is met
    with probability at least 95% (for every table of n rows), so the misses X
    are at most Binomial(400, 0.05): P(X >= 48) < 3e-8; the same for the released 95% interval's misses,
    so the test's false-failure rate is below 1e-7. The error is not vacuous either: below 0.03 here."""
    n, p = 2000, 0.3
    plan = make_plan({"column": "x", "at_least": 70}, x_missing="drop")
    plan = parse_plan({**plan.to_dict(), "queries": [{**plan.to_dict()["queries"][0], "epsilon": 0.2}]})
    design = design_query(plan.queries[0], plan)
    err = share_error95(design, n)
    assert 0.0 < err < 0.03
    xs = [80.0] * int(n * p) + [10.0] * (n - int(n * p))
    ex = exact_statistic(design, table(plan, xs, [0] * n), np.ones(n, dtype=bool), plan.columns)
    misses = uncovered = 0
    for _ in range(400):
        (row,) = rel.noisy_rows(design, ex, plan)
        misses += abs(float(row.value) - p) > err
        uncovered += not float(row.ci_low) <= p <= float(row.ci_high)
    tail = sum(math.comb(400, j) * 0.05**j * 0.95 ** (400 - j) for j in range(48, 401))
    assert tail < 3e-8
    assert misses < 48 and uncovered < 48, (misses, uncovered)


def test_without_expected_rows_its_accuracy_is_said_in_share_units() -> None:
    """A share's error is a share (0 to 1), not the column's units (issue 12 audit, gap 10); a mean's stays in
    its column's units."""
    from dpdesk.core.dp.accuracy import query_accuracy

    plan = make_plan({"column": "g", "categories": ["yes"]})
    text = query_accuracy(design_query(plan.queries[0], plan), plan).sentence()
    assert "share units" in text and "column's units" not in text
    mean = parse_plan(
        {
            **plan.to_dict(),
            "queries": [
                {"name": "m", "statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 1.0}
            ],
        }
    )
    assert "column's units" in query_accuracy(design_query(mean.queries[0], mean), mean).sentence()
