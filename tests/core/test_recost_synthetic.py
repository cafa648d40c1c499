"""Issue 34, item 3: a synthetic table is re-costed with every part and every round it ran.

A synthetic table (MST) runs d one-way marginals, d - 1 selection rounds of the exponential mechanism and d - 1
two-way marginals. Re-costed under a new unit of privacy, its charge must be what the noise it drew costs under
that unit: the synthesiser's own budget arithmetic (:class:`dpdesk.core.dp.synthetic.Split`) applied to the recorded
scales with the new sensitivities (with delta > 0: rho x c^2 over all rounds, converted at the query's delta),
and, where every part's sensitivity grows by the same factor, exactly what a fresh design of the same query under
the new unit charges for that noise. Never lower than what was booked.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.synthetic import Split, split_budget
from dpdesk.core.ledger.budget import design_to_dict
from dpdesk.core.ledger.entries import GENESIS, salvaged
from dpdesk.core.ledger.recost import effective, pending_corrections
from dpdesk.core.plan.reader import parse_plan

COLUMNS = ("a", "b", "c", "d", "e")


def plan(d: int, delta: float, unit: dict[str, Any], epsilon: float = 1.0) -> dict[str, Any]:
    return {
        "version": 1,
        "title": "t",
        "budget": {"epsilon": 50.0, "delta": 1e-5},
        "privacy_unit": dict(unit),
        "columns": {c: {"type": "category", "categories": ["x", "y", "z"]} for c in COLUMNS[:d]},
        "queries": [
            {
                "name": "table",
                "statistic": "synthetic",
                "columns": list(COLUMNS[:d]),
                "epsilon": epsilon,
                "delta": delta,
            }
        ],
    }


def unit(rel: str, k: int) -> dict[str, Any]:
    return {"neighbouring": rel, "max_rows_per_person": k}


def ledger(p: dict[str, Any], new_unit: dict[str, Any]) -> list[Any]:
    """A release of ``p`` under its unit, then a settings entry with ``new_unit`` (entries as the ledger holds)."""
    parsed = parse_plan(p)
    designs = design_plan(parsed)
    spend = {
        "seq": 2,
        "type": "spend",
        "release_id": "r1",
        "plan": parsed.to_dict(),
        "plan_hash": parsed.plan_hash(),
        "costs": [acc.QueryCost(x.spec.name, x.epsilon, x.delta, x.rho).to_dict() for x in designs],
        "trace": [design_to_dict(x) for x in designs],
        "delta_prime": None,
        "prev": GENESIS,
    }
    changed = copy.deepcopy(p)
    changed["privacy_unit"] = dict(new_unit)
    s1 = {"seq": 1, "type": "settings", "settings": parsed.settings()}
    s3 = {"seq": 3, "type": "settings", "settings": parse_plan(changed).settings()}
    return [salvaged(e) for e in (s1, spend, s3)]


def drawn_under(d: int, delta: float, old: dict[str, Any], new: dict[str, Any]) -> Split:
    """The noise the release drew (its split under the old unit), costed with the new unit's sensitivities: the
    selection's epsilon per round grows with the score's sensitivity, the marginals' cost with L1 / L2."""
    was = split_budget(1.0, delta, d, old["neighbouring"] == "replace", old["max_rows_per_person"])
    probe = split_budget(1.0, delta, d, new["neighbouring"] == "replace", new["max_rows_per_person"])
    return dataclasses.replace(
        was,
        replace=probe.replace,
        k=probe.k,
        select_epsilon=was.select_epsilon * probe.score_sensitivity / was.score_sensitivity,
    )


def split_rho(s: Split) -> float:
    """The zCDP cost of every part and round of a split (pure parts: eps^2 / 2 a marginal, eps^2 / 8 a round)."""
    if s.gaussian:
        return s.one_way_cost() + s.select_cost() + s.two_way_cost()
    return (
        s.n_columns * (s.l1 / s.one_way_scale) ** 2 / 2.0
        + s.rounds * s.select_epsilon**2 / 8.0
        + s.rounds * (s.l1 / s.two_way_scale) ** 2 / 2.0
    )


UNITS = [unit(r, k) for r, k in itertools.product(("add_remove", "replace"), (1, 5))]
CASES = [
    pytest.param(
        d,
        delta,
        old,
        new,
        id=f"d{d}-delta{delta:g}-{old['neighbouring']}{old['max_rows_per_person']}"
        f"-to-{new['neighbouring']}{new['max_rows_per_person']}",
    )
    for d, delta, old, new in itertools.product((2, 3, 5), (0.0, 1e-6), UNITS, UNITS)
    if old != new
]


@pytest.mark.parametrize(("d", "delta", "old", "new"), CASES)
def test_a_synthetic_table_is_re_costed_with_every_part_and_round(
    d: int, delta: float, old: dict[str, Any], new: dict[str, Any]
) -> None:
    p = plan(d, delta, old)
    (booked,) = (acc.QueryCost(x.spec.name, x.epsilon, x.delta, x.rho) for x in design_plan(parse_plan(p)))
    (eff,) = effective(ledger(p, new))
    (cost,) = eff.costs
    s = drawn_under(d, delta, old, new)
    rho = split_rho(s)
    eps = mech.rho_to_epsilon(rho, delta) if s.gaussian else s.total_epsilon()
    # never lower than the booking; above it, what the drawn noise costs under the new unit
    assert cost.epsilon == pytest.approx(max(booked.epsilon, eps), rel=1e-9)
    assert cost.rho == pytest.approx(max(booked.rho, rho), rel=1e-9)
    assert cost.delta == booked.delta
    assert cost.epsilon >= booked.epsilon and cost.rho >= booked.rho
    # each accounting method sees that cost
    for method in ("sequential", "advanced", "zcdp"):
        want = acc.QueryCost("table", max(booked.epsilon, eps), delta, max(booked.rho, rho))
        got = acc.dataset_total(method, [eff.release()], 1e-5)
        assert got.epsilon == pytest.approx(acc.dataset_total(method, [acc.Release((want,))], 1e-5).epsilon)


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("rel", ["add_remove", "replace"])
def test_a_k_change_costs_what_a_fresh_design_of_the_same_noise_charges(
    d: int, delta: float, rel: str
) -> None:
    """k 1 -> 5 multiplies every part's sensitivity by 5: the same noise is what a fresh design under k = 5 draws
    at the epsilon whose budget is 5 times the epsilon (pure) or 25 times the rho (zCDP); it charges that epsilon
    (3 columns at epsilon 1, delta 0: 5, not 4.75)."""
    p = plan(d, delta, unit(rel, 1))
    (eff,) = effective(ledger(p, unit(rel, 5)))
    (cost,) = eff.costs
    fresh_eps = 5.0 if delta == 0 else mech.rho_to_epsilon(25 * acc.rho_budget(1.0, delta), delta)
    (fresh,) = design_plan(parse_plan(plan(d, delta, unit(rel, 5), epsilon=fresh_eps)))
    (drawn,) = design_plan(parse_plan(p))
    for a, b in zip(fresh.components, drawn.components, strict=True):
        assert a.scale == pytest.approx(b.scale, rel=1e-6)  # the same noise
    assert cost.epsilon == pytest.approx(fresh.epsilon, rel=1e-6)
    assert cost.rho == pytest.approx(fresh.rho, rel=1e-6)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_a_ledger_re_costed_too_low_gets_a_correction(delta: float) -> None:
    """A correction recorded by the code that counted one selection round of four (5 columns, k 1 -> 5: epsilon
    4.625 for 5 at delta 0) is raised to the full cost by a further correction."""
    old, new = unit("add_remove", 1), unit("add_remove", 5)
    entries = ledger(plan(5, delta, old), new)
    s = drawn_under(5, delta, old, new)
    missing_rho = (s.rounds - 1) * s.select_epsilon**2 / 8.0  # the three rounds the older code left out
    rho = split_rho(s)
    eps = mech.rho_to_epsilon(rho, delta) if s.gaussian else s.total_epsilon()
    low_rho = rho - missing_rho
    low_eps = mech.rho_to_epsilon(low_rho, delta) if s.gaussian else eps - (s.rounds - 1) * s.select_epsilon
    if not s.gaussian:
        assert low_eps == pytest.approx(4.625) and eps == pytest.approx(5.0)
    too_low = acc.QueryCost("table", low_eps, delta, low_rho)
    corr = {
        "seq": 4,
        "type": "correction",
        "reason": "re-costed by the older code",
        "releases": [{"release_id": "r1", "seq": 2, "costs": [too_low.to_dict()]}],
        "added_epsilon": low_eps - 1.0,
    }
    pending = pending_corrections([*entries, salvaged(corr)])
    assert [r["release_id"] for r in pending] == ["r1"]
    (raised,) = pending[0]["costs"]
    assert raised["epsilon"] == pytest.approx(eps, rel=1e-9) and raised["rho"] == pytest.approx(rho, rel=1e-9)
    assert pending[0]["added_epsilon"] == pytest.approx(eps - low_eps, rel=1e-6)
    assert raised["epsilon"] > too_low.epsilon
