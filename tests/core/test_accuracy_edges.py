"""Accuracy targets at the edges (found by an attacker's pass): confidences next to 1, huge noise scales,
quantile candidates that do not cover the values. Each is a named plan problem or an honest sentence, in
bounded work, never a traceback."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dpdesk.core.dp import accuracy_base
from dpdesk.core.plan.reader import check_plan

BASE: dict[str, Any] = {
    "version": 1,
    "title": "t",
    "budget": {"epsilon": 10.0, "delta": 1e-5},
    "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
    "columns": {
        "wage": {"type": "float", "bounds": [0, 5000]},
        "tiny": {"type": "float", "bounds": [0, 1e-9]},
        "region": {"type": "category", "categories": ["a", "b", "c", "d"]},
    },
    "expected_rows": 2000,
    "queries": [],
}


def plan(*queries: dict[str, Any], **changes: Any) -> dict[str, Any]:
    p = copy.deepcopy(BASE)
    p["queries"] = list(queries)
    p.update(changes)
    return p


@pytest.mark.parametrize(
    "query",
    [
        {"statistic": "count", "mechanism": "gaussian", "calibration": "analytic", "delta": 1e-7},
        {"statistic": "mean", "column": "wage", "mechanism": "laplace"},
        {"statistic": "histogram", "column": "region", "mechanism": "laplace", "cells_all": True},
    ],
)
def test_a_confidence_next_to_one_is_a_named_problem(query: dict[str, Any]) -> None:
    q = {k: v for k, v in query.items() if k != "cells_all"}
    target: dict[str, Any] = {"error": 50, "confidence": 0.9999999999999999}
    if query.get("cells_all"):
        target["cells"] = "all"
    check = check_plan(plan({"name": "q", **q, "accuracy": target}))
    assert check.rows == () and len(check.problems) == 1  # the query is not valid, and named
    assert "at most 0.999999" in str(check.problems[0]), check.problems[0]
    target["confidence"] = 0.999999  # the highest allowed still solves
    check = check_plan(plan({"name": "q", **q, "accuracy": target}))
    assert check.rows == (0,) and not check.problems, check.problems


def test_a_huge_noise_scale_is_solved_in_few_tail_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mean on bounds [0, 1e-9] with 100,000 rows per person puts the noise at ~1e23 grid steps, where
    neighbouring tails are equal in floating point: a step-by-step walk took minutes (1e8 evaluations)."""
    calls = [0]
    tail = accuracy_base._tail

    def counted(comp: Any, k: int) -> float:
        calls[0] += 1
        return tail(comp, k)

    monkeypatch.setattr(accuracy_base, "_tail", counted)
    q = {
        "name": "q",
        "statistic": "mean",
        "column": "tiny",
        "mechanism": "gaussian",
        "delta": 1e-12,
        "calibration": "analytic",
        "accuracy": {"error": 1e-10, "confidence": 0.5},
    }
    check = check_plan(plan(q, privacy_unit={"neighbouring": "add_remove", "max_rows_per_person": 100_000}))
    assert check.valid is not None or check.problems  # solved or named, either way in bounded work
    assert 0 < calls[0] < 20_000, calls[0]


def test_noise_steps_is_the_smallest_k_meeting_the_confidence() -> None:
    """The galloping search returns exactly the smallest k (checked against a plain walk on small scales)."""
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.plan.reader import parse_plan

    for mech, extra in (("laplace", {}), ("gaussian", {"delta": 1e-7, "calibration": "analytic"})):
        for eps in (0.05, 0.5, 3.0):
            p = parse_plan(
                plan({"name": "q", "statistic": "count", "mechanism": mech, "epsilon": eps, **extra})
            )
            comp = design_plan(p)[0].components[0]
            for c in (0.5, 0.9, 0.95, 0.999):
                k = accuracy_base.noise_steps(comp, c)
                assert accuracy_base._tail(comp, k) <= 1 - c
                assert k == 0 or accuracy_base._tail(comp, k - 1) > 1 - c


def test_a_quantile_whose_candidates_miss_the_values_says_so() -> None:
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.dp.statistics import get
    from dpdesk.core.plan.reader import parse_plan

    q = {"name": "m", "statistic": "quantile", "column": "wage", "q": 0.5, "mechanism": "exponential"}
    sparse = parse_plan(plan({**q, "candidates": [0, 4999], "accuracy": {"error": 20}}))
    design = design_plan(sparse)[0]
    text = get("quantile").value_accuracy(design, sparse).sentence()
    assert "do not cover every value" in text and "nearest candidate" in text, text
    ints = parse_plan(
        plan({**q, "column": "n", "epsilon": 1.0}, columns={"n": {"type": "int", "bounds": [0, 18]}})
    )
    d2 = design_plan(ints)[0]
    assert "do not cover" not in get("quantile").value_accuracy(d2, ints).sentence()


@pytest.mark.parametrize("threshold", [0, 1, 3, 12_345, 10**15])
@pytest.mark.parametrize("scale", [1.0, 300.0, 1e12])
def test_the_search_finds_the_threshold_wherever_the_guess_lands(
    monkeypatch: pytest.MonkeyPatch, threshold: int, scale: float
) -> None:
    """With a step-shaped tail (met from ``threshold`` on), the galloping search and the bisection must land on
    the threshold exactly, from a closed-form guess far below or far above it."""
    from types import SimpleNamespace

    monkeypatch.setattr(accuracy_base, "_tail", lambda _comp, k: 0.0 if k >= threshold else 1.0)
    for mechanism in ("laplace", "gaussian"):
        comp = SimpleNamespace(scale=scale, grid=1.0, mechanism=mechanism)
        assert accuracy_base.noise_steps(comp, 0.95) == threshold  # type: ignore[arg-type]
