"""The quantile by group (issue 31): each group's own exponential mechanism over its own scores, the exact state
merged per group, the rank accuracy per group, and the plan's candidate limit counting groups x candidates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp import statistics
from dpdesk.core.dp.accuracy import query_accuracy
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.queries import design_query
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import MAX_PLAN_CANDIDATES
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import _opendp_pick, noisy_rows

GROUPS = ["a", "b", "c"]


def plan_of(
    q: float = 0.5, epsilon: float | None = 1.0, expected_rows: int | None = None, **extra: Any
) -> Any:
    d: dict[str, Any] = {
        "version": 1,
        "budget": {"epsilon": 100.0},
        "privacy_unit": {"neighbouring": "replace"},
        "columns": {
            "x": {"type": "int", "bounds": [0, 20]},
            "g": {"type": "category", "categories": GROUPS},
        },
        "queries": [
            {
                "name": "m",
                "statistic": "quantile",
                "column": "x",
                "group_by": "g",
                "q": q,
                "mechanism": "exponential",
                **({"epsilon": epsilon} if epsilon is not None else {}),
                **extra,
            }
        ],
    }
    if expected_rows is not None:
        d["expected_rows"] = expected_rows
    return parse_plan(d)


def table_of(plan: Any, xs: list[int], gs: list[int]) -> Table:
    cols = {
        "x": Column(plan.columns["x"], np.asarray(xs, dtype=np.int64)),
        "g": Column(plan.columns["g"], np.asarray(gs, dtype=np.int16)),
    }
    return Table("t", "", len(xs), cols)


#: public test data: group a around 3, b around 10, c around 17 (sizes 9, 15, 21)
XS = (
    [2, 3, 3, 4, 3, 2, 4, 3, 3]
    + [10 + (i % 5) - 2 for i in range(15)]
    + [17 + (i % 3) - 1 for i in range(21)]
)
GS = [0] * 9 + [1] * 15 + [2] * 21


def _ranks(xs: np.ndarray, c: float) -> tuple[int, int]:
    return int(np.sum(xs < c)), int(np.sum(xs <= c))


def test_each_group_picks_from_its_own_scores() -> None:
    """With the best candidate picked (no noise), each group's released value is its own median: a release that
    mixed the groups' scores (or counted every row in every group) would give one value for all."""
    plan = plan_of()
    design = design_query(plan.queries[0], plan)
    table = table_of(plan, XS, GS)
    exact = exact_statistic(design, table, np.ones(len(XS), dtype=bool), plan.columns)
    assert exact.utilities is not None and len(exact.utilities) == 3 * len(design.candidates)

    def best(utilities: list[float], comp: Any) -> int:
        return int(np.argmax(np.asarray(utilities)))

    rows = noisy_rows(design, exact, plan, pick=best)
    xs, gs = np.asarray(XS), np.asarray(GS)
    assert [r.group for r in rows] == GROUPS
    for g, r in enumerate(rows):
        b, e = _ranks(xs[gs == g], float(r.value))
        n_g = int((gs == g).sum())
        assert b <= 0.5 * n_g <= e, (r, n_g)  # an exact median of its own group
    assert [r.value for r in rows] == ["3", "10", "17"]


def test_the_exact_state_merges_per_group_over_batches() -> None:
    """The streaming engine adds the partial states of batches: the merged state is the whole table's."""
    plan = plan_of()
    design = design_query(plan.queries[0], plan)
    stat = statistics.get("quantile")
    from dpdesk.core.dp.aggregates import _rows  # the query's kept rows, as the engines read them

    whole = stat.partial(_rows(design, table_of(plan, XS, GS), np.ones(len(XS), dtype=bool), plan.columns))
    cut = 20
    halves = [
        stat.partial(
            _rows(design, table_of(plan, XS[s], GS[s]), np.ones(len(XS[s]), dtype=bool), plan.columns)
        )
        for s in (slice(0, cut), slice(cut, None))
    ]
    merged = [[a + b for a, b in zip(u, v, strict=True)] for u, v in zip(*halves, strict=True)]
    assert merged == whole
    assert whole[2] == [9, 15, 21]
    assert stat.from_partial(design, merged).utilities == stat.from_partial(design, whole).utilities


@pytest.mark.parametrize("q,epsilon", [(0.5, 1.0), (0.25, 0.5)])
def test_each_groups_rank_error_is_met_at_its_confidence(q: float, epsilon: float) -> None:
    """The stated R per group: P(group g's released value's rank is within +-R of q n_g) >= 95%, computed
    exactly from the exponential mechanism's probabilities on each group's own scores (deterministic), then
    sampled through the release's own path (noisy_rows and OpenDP's picker, 300 releases): a group covered in
    fewer than the binomial's 1e-6 lower quantile of releases fails. False-failure rate: at most 1e-6 per group
    and case, 6e-6 for the test."""
    plan = plan_of(q, epsilon)
    design = design_query(plan.queries[0], plan)
    exact = exact_statistic(design, table_of(plan, XS, GS), np.ones(len(XS), dtype=bool), plan.columns)
    comp, r, m = design.components[0], design.rank_error95, len(design.candidates)
    assert r == pytest.approx(2 * comp.l1 * (math.log(m) + math.log(20)) / epsilon)
    assert exact.utilities is not None
    xs, gs = np.asarray(XS), np.asarray(GS)
    inside: list[set[str]] = []
    for g in range(3):
        own = xs[gs == g]
        qn = q * len(own)
        p = mech.em_probabilities(exact.utilities[g * m : (g + 1) * m], epsilon, comp.l1)
        ok = {
            c for c in design.candidates if (lambda be: be[0] <= qn + r and be[1] >= qn - r)(_ranks(own, c))
        }
        assert sum(pi for pi, c in zip(p, design.candidates, strict=True) if c in ok) >= 0.95
        inside.append({str(int(c)) for c in ok})
    runs = 300
    # the largest t with P(Bin(300, 0.95) <= t) <= 1e-6: fewer covered releases than that fail
    cdf, t = 0.0, -1
    for j in range(runs + 1):
        cdf += math.comb(runs, j) * 0.95**j * 0.05 ** (runs - j)
        if cdf > 1e-6:
            break
        t = j
    hits = [0, 0, 0]
    for _run in range(runs):
        for g, row in enumerate(noisy_rows(design, exact, plan, pick=_opendp_pick)):
            hits[g] += row.value in inside[g]
    assert all(h > t for h in hits), (hits, t)


def test_the_accuracy_is_stated_per_group_and_solved_from_a_target() -> None:
    plan = plan_of(expected_rows=3000)
    design = design_query(plan.queries[0], plan)
    acc = query_accuracy(design, plan)
    assert acc.per_group and acc.rows == 1000 and acc.error == pytest.approx(design.rank_error95)
    assert "for a group of 1000 rows (expected_rows split evenly among the groups)" in acc.sentence()
    assert acc.percentiles == pytest.approx((50 - 100 * acc.error / 1000, 50 + 100 * acc.error / 1000))
    solved = plan_of(epsilon=None, expected_rows=3000, accuracy={"error": 20, "confidence": 0.9})
    d = design_query(solved.queries[0], solved)
    assert query_accuracy(d, solved).error <= 20
    looser = solved.queries[0].epsilon * 0.99
    assert 2 * d.components[0].l1 * (math.log(len(d.candidates)) + math.log(10)) / looser > 20


def test_the_plan_counts_a_grouped_quantiles_candidates_times_its_groups() -> None:
    """Scoring allocates per group and candidate: 100,001 candidates are within the plan's limit alone, and over
    it in 21 groups, which the plan refuses with a message naming the groups."""
    cats = [f"g{i}" for i in range(21)]

    def plan_dict(group: bool) -> dict[str, Any]:
        q: dict[str, Any] = {"name": "m", "statistic": "quantile", "column": "x", "mechanism": "exponential"}
        q["epsilon"] = 1.0
        if group:
            q["group_by"] = "g"
        return {
            "version": 1,
            "budget": {"epsilon": 10.0},
            "privacy_unit": {"neighbouring": "replace"},
            "columns": {
                "x": {"type": "int", "bounds": [0, 100_000]},
                "g": {"type": "category", "categories": cats},
            },
            "queries": [q],
        }

    assert 21 * 100_001 > MAX_PLAN_CANDIDATES >= 100_001
    parse_plan(plan_dict(False))
    with pytest.raises(PlanError, match="times their groups when grouped"):
        parse_plan(plan_dict(True))
