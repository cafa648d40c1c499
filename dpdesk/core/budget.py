"""The budget report: what a plan costs under every accounting method, and what is left, without touching any data."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from dpdesk.core import accounting as acc
from dpdesk.core.plan import Plan
from dpdesk.core.queries import QueryDesign, design_plan


def plan_costs(designs: Sequence[QueryDesign]) -> list[acc.QueryCost]:
    """What each query costs."""
    return [acc.QueryCost(d.spec.name, d.epsilon, d.delta, d.rho) for d in designs]


def past_releases(entries: Sequence[dict[str, Any]]) -> list[acc.Release]:
    """The charged releases recorded in a ledger, at what they cost now (see :mod:`dpdesk.core.recost`):
    spends, spends carried over from a broken ledger, and uncharged simulations of the data by older versions."""
    from dpdesk.core.recost import effective

    return [eff.release() for eff in effective(entries)]


def budget_report(plan: Plan, entries: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Everything the budget meter shows, computed without touching any data.

    ``entries`` are the dataset's ledger entries (what earlier releases spent), if known.
    """
    designs = design_plan(plan)
    costs = plan_costs(designs)
    settings = _ledger_settings(entries or [])
    method = settings["accounting"]["method"] if settings else plan.accounting.method
    budget = settings["budget"] if settings else {"epsilon": plan.budget.epsilon, "delta": plan.budget.delta}
    b_eps, b_delta = float(budget["epsilon"]), float(budget["delta"])
    past = past_releases(entries or [])
    rel = acc.Release(tuple(costs), plan.accounting.delta_prime)
    methods: dict[str, Any] = {}
    for m in acc.METHOD_NAMES:
        if m in ("zcdp", "advanced") and b_delta <= 0:  # both spend from the budget's delta
            methods[m] = None
            continue
        plan_t = acc.dataset_total(m, [rel], b_delta)
        spent_t = acc.dataset_total(m, [*past_as(m, past, b_delta)], b_delta)
        after_t = acc.dataset_total(m, [*past_as(m, past, b_delta), rel], b_delta)
        methods[m] = {
            "name": acc.METHOD_NAMES[m],
            "plan": plan_t.to_dict(),
            "spent": spent_t.to_dict(),
            "after": after_t.to_dict(),
            "fits": acc.fits(after_t, b_eps, b_delta),
            "delta_prime": acc.release_delta_prime(rel.delta_prime, b_delta) if m == "advanced" else None,
        }
    in_force = methods[method]
    remaining_eps = _remaining(b_eps, in_force["spent"])
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
            "epsilon": _remaining(b_eps, in_force["after"]),
            "delta": max(0.0, b_delta - in_force["after"]["delta"]),
        },
        "methods": methods,
        "queries": [design_to_dict(d) for d in designs],
        "releases_so_far": len(past),
    }


def past_as(method: str, past: list[acc.Release], b_delta: float) -> list[acc.Release]:
    """Past releases as seen by ``method`` (unchanged; kept as a seam for officers' comparisons)."""
    del method, b_delta
    return past


def _remaining(b_eps: float, total: dict[str, Any]) -> float:
    if "epsilon_exact" in total:
        return float(acc.dec(b_eps) - Decimal(total["epsilon_exact"]))
    return b_eps - float(total["epsilon"])


def design_to_dict(d: QueryDesign) -> dict[str, Any]:
    """A query design as JSON: its trace (statistic, sensitivity and derivation, mechanism, formula)."""
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
        # quantiles: the released value's rank is within +-rank_error95 of q n with 95% probability (public)
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


def _ledger_settings(entries: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    from dpdesk.core.ledger import settings_in_force

    return settings_in_force(entries)
