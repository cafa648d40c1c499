"""The typed budget report (issue 12, stage 2) gives exactly the dict the untyped one gave.

``_main_budget_report`` below is main's ``budget_report`` before the report was typed, copied verbatim (only
renamed, and its helpers inlined): the golden. ``dpdesk budget --json`` must stay byte-identical to it, and the
release's ledger trace (``design_to_dict``) to main's trace.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.queries_base import QueryDesign
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report, design_to_dict, past_releases, plan_costs
from dpdesk.core.ledger.entries import settings_in_force
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release
from tests.conftest import ROOT, SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
EXAMPLE = json.loads(PLAN.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- main's code, verbatim


def _main_design_to_dict(d: QueryDesign) -> dict[str, Any]:
    return {
        "name": d.spec.name,
        "statistic": d.spec.statistic,
        "column": d.spec.column,
        "group_by": d.spec.group_by,
        "mechanism": d.spec.mechanism,
        "calibration": d.spec.calibration if d.spec.mechanism == "gaussian" else None,
        "epsilon": d.epsilon,
        "delta": d.delta,
        "rho": d.rho,
        "cells": len(d.cells),
        "candidates": len(d.candidates) if d.candidates is not None else None,
        "notes": list(d.notes),
        "selection_curve": [{"gap": g, "probability": p} for g, p in d.selection_curve],
        "rank_error95": d.rank_error95,
        "rank_error95_exact_candidate": d.rank_exact if d.rank_error95 is not None else None,
        "components": [
            {
                "label": c.label,
                "mechanism": c.mechanism,
                "epsilon": c.epsilon,
                "delta": c.delta,
                "rho": c.rho,
                "sensitivity_l1": c.l1,
                "sensitivity_l2": c.l2,
                "sensitivity_used": c.sensitivity,
                "scale": c.scale,
                "error95": c.bound95,
                "resolution": c.unit,
                "noise_grid": c.grid,
                "formula": c.formula,
                "derivation": c.derivation,
            }
            for c in d.components
        ],
    }


def _main_remaining(b_eps: float, total: dict[str, Any]) -> float:
    if "epsilon_exact" in total:
        return float(acc.dec(b_eps) - Decimal(total["epsilon_exact"]))
    return b_eps - float(total["epsilon"])


def _main_budget_report(plan: Plan, entries: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    designs = design_plan(plan)
    costs = plan_costs(designs)
    settings = settings_in_force(entries or [])
    method = settings["accounting"]["method"] if settings else plan.accounting.method
    budget = settings["budget"] if settings else {"epsilon": plan.budget.epsilon, "delta": plan.budget.delta}
    b_eps, b_delta = float(budget["epsilon"]), float(budget["delta"])
    past = past_releases(entries or [])
    rel = acc.Release(tuple(costs), plan.accounting.delta_prime)
    methods: dict[str, Any] = {}
    for m in acc.METHOD_NAMES:
        if m in ("zcdp", "advanced") and b_delta <= 0:
            methods[m] = None
            continue
        plan_t = acc.dataset_total(m, [rel], b_delta)
        spent_t = acc.dataset_total(m, [*past], b_delta)
        after_t = acc.dataset_total(m, [*past, rel], b_delta)
        methods[m] = {
            "name": acc.METHOD_NAMES[m],
            "plan": plan_t.to_dict(),
            "spent": spent_t.to_dict(),
            "after": after_t.to_dict(),
            "fits": acc.fits(after_t, b_eps, b_delta),
            "delta_prime": acc.release_delta_prime(rel.delta_prime, b_delta) if m == "advanced" else None,
        }
    in_force = methods[method]
    remaining_eps = _main_remaining(b_eps, in_force["spent"])
    return {
        "title": plan.title,
        "budget": {"epsilon": b_eps, "delta": b_delta},
        "method": method,
        "method_from_ledger": settings is not None,
        "fits": in_force["fits"],
        "remaining_before": {
            "epsilon": remaining_eps,
            "delta": max(0.0, b_delta - in_force["spent"]["delta"]),
        },
        "remaining_after": {
            "epsilon": _main_remaining(b_eps, in_force["after"]),
            "delta": max(0.0, b_delta - in_force["after"]["delta"]),
        },
        "methods": methods,
        "queries": [_main_design_to_dict(d) for d in designs],
        "releases_so_far": len(past),
    }


# ----------------------------------------------------------------------------- plans


def _variant(**over: Any) -> dict[str, Any]:
    data = copy.deepcopy(EXAMPLE)
    data.update(over)
    return data


VARIANTS: dict[str, dict[str, Any]] = {
    "sample": EXAMPLE,
    "advanced": _variant(accounting={"method": "advanced", "delta_prime": 1e-7}),
    "zcdp": _variant(accounting={"method": "zcdp"}),
    "replace, 3 rows per person": _variant(
        privacy_unit={"neighbouring": "replace", "max_rows_per_person": 3}
    ),
    "over budget": _variant(budget={"epsilon": 0.5, "delta": 1e-6}),
    "pure epsilon": _variant(
        budget={"epsilon": 2.0},
        queries=[q for q in EXAMPLE["queries"] if q["mechanism"] != "gaussian"],
    ),
    "untitled, one classic gaussian": _variant(
        title="",
        queries=[
            {
                "name": "n",
                "statistic": "count",
                "mechanism": "gaussian",
                "epsilon": 0.3,
                "delta": 1e-7,
                "calibration": "classic",
            }
        ],
    ),
}


def _without_accuracy(report: dict[str, Any]) -> dict[str, Any]:
    """Issue 15 added each query's accuracy in its own units (last, after main's keys): check that it is
    there, then set it aside."""
    for q in report["queries"]:
        assert list(q)[-3:] == ["accuracy", "accuracy_value", "accuracy_target"] and q["accuracy"]
        for key in ("accuracy", "accuracy_value", "accuracy_target"):
            del q[key]
    return report


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_report_is_main_s_dict(name: str) -> None:
    plan = parse_plan(copy.deepcopy(VARIANTS[name]))
    rep = budget_report(plan)
    expected = _main_budget_report(plan)
    got = _without_accuracy(rep.to_dict())
    assert got == expected
    assert _dumps(got) == _dumps(expected)  # byte for byte, key order included
    # and the typed values are what the dict holds
    assert rep.fits == expected["fits"] and rep.method == expected["method"]
    assert rep.remaining_after.epsilon == expected["remaining_after"]["epsilon"]
    assert [q.name for q in rep.queries] == [q["name"] for q in expected["queries"]]
    for m, v in rep.methods.items():
        assert (v is None) == (expected["methods"][m] is None)


def test_the_trace_recorded_in_the_ledger_is_main_s() -> None:
    for data in VARIANTS.values():
        for d in design_plan(parse_plan(copy.deepcopy(data))):
            assert json.dumps(design_to_dict(d)) == json.dumps(_main_design_to_dict(d))


def test_the_report_over_a_ledger_is_main_s(dpdesk_home: Path, tmp_path: Path) -> None:
    plan = parse_plan(copy.deepcopy(EXAMPLE))
    release(plan, DATA, dpdesk_home, tmp_path / "one")
    smaller = parse_plan(
        _variant(queries=[{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.01}])
    )
    release(smaller, DATA, dpdesk_home, tmp_path / "two")
    ledger = Ledger.for_dataset(dpdesk_home, _sha256(DATA))
    entries = ledger.verify()
    assert [e.type for e in entries] == ["settings", "spend", "package", "spend", "package"]
    for p in (plan, smaller, parse_plan(VARIANTS["zcdp"])):
        rep = budget_report(p, entries)
        assert rep.releases_so_far == 2 and rep.method_from_ledger
        assert _dumps(_without_accuracy(rep.to_dict())) == _dumps(_main_budget_report(p, entries))


@pytest.mark.slow
def test_dpdesk_budget_json_is_main_s(dpdesk_home: Path, tmp_path: Path) -> None:
    plan = parse_plan(copy.deepcopy(EXAMPLE))
    release(plan, DATA, dpdesk_home, tmp_path / "one")
    ledger = Ledger.for_dataset(dpdesk_home, _sha256(DATA))
    expected = _main_budget_report(plan, ledger.verify())
    expected["dataset"] = ledger.dataset
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(PLAN), "--data", str(DATA), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        check=False,
    )
    assert r.returncode == 1, r.stderr  # the sample plan does not fit twice
    # issue 13 adds one top-level line, who governs the dataset; the report itself is main's to the byte
    out = _without_accuracy(json.loads(r.stdout))
    assert out.pop("governance").startswith("This dataset is ungoverned")
    assert _dumps(out) == _dumps(expected)
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(PLAN), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert _dumps(_without_accuracy(json.loads(r.stdout))) == _dumps(_main_budget_report(plan))


def _sha256(path: Path) -> str:
    from dpdesk.core.loading import file_sha256

    return file_sha256(path)
