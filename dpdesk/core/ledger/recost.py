"""What past releases really cost: re-costing under a new unit of privacy, and corrections.

A ledger records what each release was booked at. Two things can make that booking too low, and
neither may give budget back:

* **The unit of privacy changed** (``ledger --change-settings``): a release calibrated for one
  person = k rows protects a person of k' > k rows less, and one calibrated under ``add_remove``
  protects a ``replace`` change less. Each past query's cost is recomputed from its recorded trace
  with c = Delta_new / Delta_old per mechanism, Delta_new being the sensitivity of the same query
  (its recorded plan) under the new unit, computed by today's code:

  - Laplace and exponential mechanism: epsilon * c (group privacy, Dwork & Roth 2014, Thm 2.2 and
    the scaling of b = Delta / epsilon; for the exponential mechanism the same argument on its
    utility sensitivity);
  - Gaussian: sigma is what was drawn, so epsilon is re-solved at the booked delta for sensitivity
    c * Delta_old with the exact (analytic) relation of Balle & Wang 2018; rho * c^2 for zCDP
    (Bun & Steinke 2016, Prop. 1.6 and the group-privacy Prop. 1.9);
  - every part and every run counts: an exponential component stands for as many runs as its recorded rho
    holds eps^2 / 8 (a synthetic table's d - 1 selection rounds); a query whose Gaussian parts each took its
    whole delta (a synthetic table with delta > 0) composed them in zCDP, so its parts' rho * c^2 are summed
    and converted at the query's delta (Canonne, Kamath & Steinke 2020), as its design booked them;
  - where an id column enforced k at the release, the release kept at most k rows per person, so
    the old k is used (only a change of relation re-costs it);
  - an adaptive synthetic table (AIM) costs at least what every round it recorded costs under the new
    unit; carried into another ledger without its rounds, the most any split of its rho could cost (its
    one-way marginals may have been measured twice, up to half of rho, the rest split as the design's
    selections and measurements), since a measurement's and a selection's sensitivities need not grow alike
    (``replace`` -> ``add_remove``: a Gaussian's rho x k'^2 / 2, a selection's x k'^2 / 4);
  - releases carried over from a broken ledger without a trace use the bound c <= (k'/k) * 2 for
    add_remove -> replace (every statistic's replace sensitivity is at most twice its add_remove
    one) and group privacy (k*epsilon, k*e^((k-1)epsilon)*delta) for their deltas; a change to
    ``add_remove`` from ``replace`` cannot be bounded for them and is refused.

  Recorded costs are never lowered: a release costs the most it cost under any unit in force since.
* **An earlier version booked it too low** (issue 11: the sum under ``replace`` with rows that can
  drop; the analytic Gaussian at small delta; ``simulate --data``, which drew uncharged releases of
  the private table). The same recomputation with today's code under the unit in force finds the
  first two; a ``simulate`` entry costs its runs times its plan (found by its hash among the
  ledger's releases), or the whole budget when its plan was not recorded.

The effective costs are computed from the entries every time the ledger is read, so the budget
shown is never larger than the truth; :func:`pending_corrections` says what differs from what was
recorded, and the next write (a release or a settings change) records it as a ``correction`` entry.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.ledger.entries import Entry

#: Relative tolerance below which two sensitivities count as equal (float rounding in the trace).
_SAME = 1e-9


class UnboundedChange(DpdeskError):
    """A change of the unit of privacy under which a past release's cost cannot be bounded."""


@dataclass
class Effective:
    """One past release (a spend, a carried-over spend or a simulation) and what it costs now."""

    release_id: str
    seq: int
    costs: tuple[acc.QueryCost, ...]
    delta_prime: float | None
    recorded: tuple[acc.QueryCost, ...]  # what the ledger records for it (booked, or last correction)
    plan: dict[str, Any] | None = None
    trace: list[dict[str, Any]] | None = None
    unit: dict[str, Any] | None = None  # the unit of privacy it was booked under
    why: list[str] = field(default_factory=list)
    #: its synthetic tables' records by query name (the adaptive synthesiser's hold every round it ran)
    synthetic: dict[str, Any] | None = None

    def release(self) -> acc.Release:
        """As the accountant sees it."""
        return acc.Release(self.costs, self.delta_prime)


def _costs(raw: Sequence[dict[str, Any]]) -> tuple[acc.QueryCost, ...]:
    return tuple(acc.QueryCost.from_dict(c) for c in raw)


def _total_eps(costs: Sequence[acc.QueryCost]) -> Decimal:
    return sum((acc.dec(c.epsilon) for c in costs), Decimal(0))


def _raise(costs: tuple[acc.QueryCost, ...], other: tuple[acc.QueryCost, ...]) -> tuple[acc.QueryCost, ...]:
    """Per query, the larger of two costings (never lower a recorded cost). Lists of different lengths (a
    correction recorded by an older version, or forged) cannot be matched query by query: the one of larger total
    epsilon is kept, and a last line adds whatever total delta and rho the other had beyond it, so that no total
    (epsilon, delta, rho) is ever lowered."""
    if len(costs) != len(other):
        base, rest = (costs, other) if _total_eps(costs) >= _total_eps(other) else (other, costs)
        more_delta = sum(c.delta for c in rest) - sum(c.delta for c in base)
        more_rho = sum(c.rho for c in rest) - sum(c.rho for c in base)
        if more_delta > 0 or more_rho > 0:
            from dpdesk.i18n import _  # imported here: this module's loops use ``_`` as a throwaway name

            fill = acc.QueryCost(
                _("(recorded costs beyond this list)"), 0.0, max(more_delta, 0.0), max(more_rho, 0.0)
            )
            return (*base, fill)
        return base
    out = []
    for a, b in zip(costs, other, strict=True):
        out.append(acc.QueryCost(a.name, max(a.epsilon, b.epsilon), max(a.delta, b.delta), max(a.rho, b.rho)))
    return tuple(out)


def _higher(new: tuple[acc.QueryCost, ...], old: tuple[acc.QueryCost, ...]) -> bool:
    return any(
        n.epsilon > o.epsilon or n.delta > o.delta or n.rho > o.rho for n, o in zip(new, old, strict=False)
    )


@functools.lru_cache(maxsize=4096, typed=True)
def gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """The smallest epsilon at which a Gaussian of this sigma is (epsilon, delta)-DP (bisection, rounded up).

    A pure function of its three numbers, remembered (bounded, least recently used first): a ledger re-costs every
    past release whenever it is listed or stated, and the releases of one plan ask the same question each time (the
    bisection evaluates the Gaussian's delta about sixty times). ``typed``: 1 and 1.0 are remembered apart, so a
    value is exactly what the bisection gives for those arguments."""
    if delta <= 0:
        return math.inf
    lo, hi = 0.0, 1.0
    while mech.gaussian_delta(sigma, sensitivity, hi) > delta:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid <= lo or mid >= hi:
            break
        if mech.gaussian_delta(sigma, sensitivity, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def invocations(comp: dict[str, Any]) -> int:
    """How many times a recorded mechanism ran: its recorded rho over one run's (an exponential mechanism costs
    eps^2 / 8 a run, so a synthetic table's selection, d - 1 rounds at eps_s each, records rho = (d - 1) eps_s^2 / 8
    beside the one round's eps_s); one for every other mechanism, whose recorded epsilon covers all its cells."""
    eps, rho = float(comp["epsilon"]), float(comp["rho"])
    if comp["mechanism"] != "exponential" or eps <= 0 or rho <= 0:
        return 1
    return max(1, math.ceil(rho * 8.0 / (eps * eps) - 1e-6))


def _component_cost(comp: dict[str, Any], new_sens: float) -> tuple[float, float, str]:
    """(epsilon, rho, why) of one recorded mechanism, over all its runs, when its sensitivity becomes
    ``new_sens``."""
    from dpdesk.core.dp.queries_base import DISCRETE_MARGIN

    runs = invocations(comp)
    eps, rho, old = float(comp["epsilon"]) * runs, float(comp["rho"]), float(comp["sensitivity_used"])
    if not math.isfinite(new_sens) or old <= 0:
        raise UnboundedChange(comp.get("label", "?"))
    c = new_sens / old
    kind = comp["mechanism"]
    if kind == "gaussian":
        sigma = float(comp["scale"])
        exact = gaussian_epsilon(sigma, new_sens, float(comp["delta"]) * (1.0 - DISCRETE_MARGIN))
        if not math.isfinite(exact):
            raise UnboundedChange(comp.get("label", "?"))
        new_rho = new_sens**2 / (2.0 * sigma**2)
        if exact > eps * (1 + _SAME) or new_rho > rho * (1 + _SAME):
            return (
                max(eps, exact),
                max(rho, new_rho),
                (
                    f"gaussian: sensitivity {old:g} -> {new_sens:g}, "
                    f"sigma {sigma:g}, epsilon re-solved at delta {comp['delta']:g}: {exact:.6g}"
                ),
            )
        return eps, rho, ""
    if c <= 1 + _SAME:
        return eps, rho, ""
    # pure epsilon-DP parts: epsilon x c (each run); their rho (eps^2 / 2 for Laplace, eps^2 / 8 a run for the
    # exponential mechanism) x c^2
    rounds = f" ({runs} runs)" if runs > 1 else ""
    return eps * c, rho * c * c, f"{kind}{rounds}: sensitivity {old:g} -> {new_sens:g}, epsilon x {c:.6g}"


def _composed_in_zcdp(comps: Sequence[dict[str, Any]], delta: float) -> bool:
    """Whether a query's recorded parts compose in zCDP inside it: each of its Gaussian parts was given the
    query's whole delta (so their sequential sum would spend more delta than the query books), which only a query
    that books the conversion of its summed rho does (a synthetic table). Otherwise the parts' deltas add up to
    at most the query's and their epsilons compose sequentially."""
    return delta > 0 and math.fsum(float(c["delta"]) for c in comps) > delta * (1 + _SAME)


def _plan_under(plan_dict: dict[str, Any], unit: dict[str, Any]) -> Any:
    """The recorded plan with another unit of privacy (the release's own k kept where an id column enforced it)."""
    from dpdesk.core.plan.reader import parse_plan

    d = dict(plan_dict)
    new_unit = dict(unit)
    old_unit = plan_dict.get("privacy_unit") or {}
    if old_unit.get("id_column"):
        new_unit["max_rows_per_person"] = old_unit.get("max_rows_per_person", 1)
        new_unit["id_column"] = old_unit["id_column"]
    elif "id_column" in new_unit and new_unit.get("id_column") is None:
        new_unit.pop("id_column")
    d["privacy_unit"] = new_unit
    return parse_plan(d)


#: The sensitivities today's design code gives a recorded plan under a unit, by the two as canonical JSON: a ledger
#: re-costs every release at each full read, and releases of one plan share the answer (in this process only, so
#: always this code's). Bounded: cleared when full.
_SENSITIVITIES: dict[str, tuple[tuple[float, ...], ...]] = {}
_SENSITIVITIES_MAX = 1024


def _sensitivities_under(plan_dict: dict[str, Any], unit: dict[str, Any]) -> tuple[tuple[float, ...], ...]:
    """The components' sensitivities of each query of ``plan_dict`` under ``unit`` (:func:`_plan_under`, then
    :func:`dpdesk.core.dp.queries.design_plan`); raises what they raise."""
    import json

    from dpdesk.core.dp.queries import design_plan

    try:
        key: str | None = json.dumps([plan_dict, unit], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        key = None  # not as a ledger holds it: computed, never remembered
    if key is not None and (hit := _SENSITIVITIES.get(key)) is not None:
        return hit
    got = tuple(tuple(c.sensitivity for c in d.components) for d in design_plan(_plan_under(plan_dict, unit)))
    if key is not None:
        if len(_SENSITIVITIES) >= _SENSITIVITIES_MAX:
            _SENSITIVITIES.clear()
        _SENSITIVITIES[key] = got
    return got


def cost_under(eff: Effective, unit: dict[str, Any]) -> tuple[tuple[acc.QueryCost, ...], list[str]]:
    """What a past release costs under ``unit``, by today's design code (never below what it recorded)."""
    if eff.plan is None or eff.trace is None:
        return _fallback(eff, unit)
    try:
        designs = _sensitivities_under(eff.plan, unit)
    except (DpdeskError, KeyError, TypeError, ValueError):
        return _fallback(eff, unit)
    out: list[acc.QueryCost] = []
    why: list[str] = []
    for cost, traced, sensitivities in zip(eff.costs, eff.trace, designs, strict=False):
        comps = traced.get("components", [])
        if len(comps) != len(sensitivities):
            return _fallback(eff, unit)
        eps_new, rho_new, booked, rho_booked = 0.0, 0.0, 0.0, 0.0
        parts: list[tuple[float, float]] = []
        for comp, sensitivity in zip(comps, sensitivities, strict=True):
            e, r, w = _component_cost(comp, sensitivity)
            eps_new += e
            rho_new += r
            booked += float(comp["epsilon"]) * invocations(comp)
            rho_booked += float(comp["rho"])
            parts.append((float(comp["rho"]), r))
            if w:
                why.append(f"{cost.name}: {w}")
        worst = _adaptive_split_rho(eff, cost.name, comps, parts)
        if worst is not None and worst > rho_new * (1 + _SAME):
            # an adaptive synthetic table whose rounds are not held here (carried from another ledger): its one-way
            # marginals may have been measured twice, so its parts' split is bounded, not known
            rho_new = worst
            why.append(
                f"{cost.name}: its rounds are not recorded here and its one-way marginals may have been measured "
                f"twice: rho {worst:.6g} at most"
            )
        # the increase is over the booking in the trace, not over a cost already raised by an earlier unit:
        # a release costs the most it cost under any unit, never the sum of the increases (k 1 -> 5 -> 1 -> 5)
        if _composed_in_zcdp(comps, cost.delta):
            # parts composed in zCDP inside the query (a synthetic table with delta > 0): the summed rho of every
            # part and round, converted at the query's delta (Canonne, Kamath & Steinke 2020), as it was booked
            raised = rho_new > rho_booked * (1 + _SAME)
            eps = mech.rho_to_epsilon(rho_new, cost.delta) if raised else cost.epsilon
            if raised:
                why.append(f"{cost.name}: zCDP inside the query, rho {rho_new:.6g} at delta {cost.delta:g}")
        else:
            eps = eps_new if eps_new > booked else cost.epsilon
        rounds = _rounds_rho(eff, cost.name, unit)
        if rounds is not None and rounds > max(cost.rho, rho_new) * (1 + _SAME):
            # the adaptive synthesiser's recorded rounds, every one counted, cost more than was booked
            why.append(
                f"{cost.name}: its recorded rounds cost rho {rounds:.6g} under this unit, more than its booked "
                f"parts re-cost ({max(cost.rho, rho_new):.6g})"
            )
            rho_new = rounds
            eps = max(eps, mech.rho_to_epsilon(rounds, cost.delta) if cost.delta > 0 else math.inf)
        out.append(acc.QueryCost(cost.name, eps, cost.delta, max(cost.rho, rho_new)))
    if len(out) != len(eff.costs):
        return _fallback(eff, unit)
    return _raise(eff.costs, tuple(out)), why


def _adaptive_split_rho(
    eff: Effective, name: str, comps: Sequence[dict[str, Any]], parts: Sequence[tuple[float, float]]
) -> float | None:
    """For an adaptive synthetic table (AIM) whose rounds this ledger does not hold (a release carried over by a
    merge, an import or an acknowledgement), an upper bound on its cost under the new unit whatever its rounds did
    (None for any other query, or when the rounds are held: :func:`_rounds_rho` counts them). Its parts are
    booked as (one-way marginals, selections, adaptive measurements), ``parts`` each's (rho booked, rho under the
    new unit). The design's split is exact only when the one-way marginals were measured once: measured again
    (:func:`dpdesk.core.dp.synthetic.aim.second_one_way_sigma`), they take up to ``ONE_WAY_MAX_SHARE`` of rho and
    the rest is split as the design's selections and measurements are. The cost is linear in the one-way share s,
    so its largest is at s = the design's one-way rho or at s = the cap; the first is the design's re-costing."""
    rec = (eff.synthetic or {}).get(name)
    if isinstance(rec, dict) and rec.get("method") == "aim":
        return None
    query = next(
        (q for q in (eff.plan or {}).get("queries") or [] if isinstance(q, dict) and q.get("name") == name),
        None,
    )
    if query is None or query.get("mechanism") != "aim":  # the adaptive synthesiser's mechanism, its alone
        return None
    from dpdesk.core.dp.synthetic import aim

    if [c.get("mechanism") for c in comps] != ["gaussian", "exponential", "gaussian"]:
        raise UnboundedChange(eff.release_id)
    (one_b, one_n), (sel_b, sel_n), (meas_b, meas_n) = parts
    total = one_b + sel_b + meas_b
    rest_b = sel_b + meas_b
    if not (one_b > 0 and rest_b > 0 and math.isfinite(total)):
        raise UnboundedChange(eff.release_id)
    share = max(aim.ONE_WAY_MAX_SHARE * total, one_b)
    return share * (one_n / one_b) + (total - share) * ((sel_n + meas_n) / rest_b)


def _rounds_rho(eff: Effective, name: str, unit: dict[str, Any]) -> float | None:
    """The zCDP cost under ``unit`` of every round an adaptive synthetic table recorded (None for any other
    query): each measurement l2^2 / (2 sigma^2) and each selection (eps_t c)^2 / 8, with one marginal's
    sensitivities under the unit (L1 = k, L2 = k under add/remove; L1 = 2k, L2 = sqrt(2) k under replace; the
    release's own k where an id column enforced it) and c the growth of the selection score's sensitivity (with
    L1). A record that cannot be read costs no bound (:class:`UnboundedChange`)."""
    rec = (eff.synthetic or {}).get(name)
    if not isinstance(rec, dict) or rec.get("method") != "aim":
        return None
    from dpdesk.core.dp.synthetic import aim

    old_unit = (eff.plan or {}).get("privacy_unit") or {}
    k = int(
        old_unit.get("max_rows_per_person", 1)
        if old_unit.get("id_column")
        else unit.get("max_rows_per_person", 1)
    )
    replace = unit.get("neighbouring") == "replace"
    l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))
    try:
        return aim.rounds_rho(rec, l1, l2)
    except (KeyError, TypeError, ValueError, AssertionError, ZeroDivisionError) as exc:
        raise UnboundedChange(eff.release_id) from exc


def _fallback(eff: Effective, unit: dict[str, Any]) -> tuple[tuple[acc.QueryCost, ...], list[str]]:
    """Group-privacy bound for a release without a usable trace (carried over from a broken ledger)."""
    old = eff.unit or {}
    if not old or old == unit:
        return eff.costs, []
    k_old = int(old.get("max_rows_per_person", 1))
    k_new = k_old if old.get("id_column") else int(unit.get("max_rows_per_person", 1))
    rel_old, rel_new = old.get("neighbouring"), unit.get("neighbouring")
    if rel_old == "replace" and rel_new == "add_remove":
        raise UnboundedChange(eff.release_id)
    c = (k_new / k_old) * (2.0 if (rel_old, rel_new) == ("add_remove", "replace") else 1.0)
    if c <= 1 + _SAME:
        return eff.costs, []
    g = math.ceil(c - _SAME)
    out = tuple(
        acc.QueryCost(
            x.name,
            x.epsilon * c,
            min(1.0, g * math.exp((g - 1) * x.epsilon) * x.delta) if x.delta else 0.0,
            x.rho * c * c,
        )
        for x in eff.costs
    )
    return _raise(eff.costs, out), [f"release {eff.seq}: no trace; group privacy with factor {c:g}"]


def _whole_budget(settings: dict[str, Any] | None, name: str) -> tuple[acc.QueryCost, ...]:
    """A cost that takes a dataset's whole budget under every accounting method."""
    b = (settings or {}).get("budget") or {"epsilon": 0.0, "delta": 0.0}
    b_eps, b_delta = float(b["epsilon"]), float(b["delta"])
    rho = max(b_eps**2 / 2.0, acc.rho_budget(b_eps, b_delta) * 2.0 if b_delta > 0 else 0.0)
    return (acc.QueryCost(name, b_eps, b_delta, rho),)


def _cost_or_budget(
    eff: Effective, unit: dict[str, Any], settings: dict[str, Any] | None
) -> tuple[tuple[acc.QueryCost, ...], list[str]]:
    """:func:`cost_under`, or the whole budget added when the cost has no bound (never a crash, never less)."""
    try:
        return cost_under(eff, unit)
    except UnboundedChange:
        (whole,) = _whole_budget(settings, "no bound")
        first, *rest = eff.costs or (acc.QueryCost("release", 0.0, 0.0, 0.0),)
        raised = acc.QueryCost(
            first.name,
            first.epsilon + whole.epsilon,
            min(1.0, first.delta + whole.delta),
            first.rho + whole.rho,
        )
        return (raised, *rest), [f"release {eff.seq}: no finite bound; charged the whole budget"]


def _simulate_costs(
    entry: Entry,
    plans: dict[str, tuple[dict[str, Any], list[acc.QueryCost]]],
    settings: dict[str, Any] | None,
) -> tuple[tuple[acc.QueryCost, ...], str]:
    runs = int(entry.get("runs") or 0)
    known = plans.get(str(entry.get("plan_hash")))
    if known is not None:
        costs = tuple(
            acc.QueryCost(
                f"{c.name} (x{runs} simulated)", c.epsilon * runs, min(1.0, c.delta * runs), c.rho * runs
            )
            for c in known[1]
        )
        return costs, f"simulate --data: {runs} uncharged release(s) of a recorded plan"
    return (
        _whole_budget(settings, "simulate (plan not recorded)"),
        "simulate --data of a plan the ledger does not hold: its cost cannot be bounded, so it takes the budget",
    )


def effective(entries: Sequence[Entry], *, settings: dict[str, Any] | None = None) -> list[Effective]:
    """Every past release with what it costs now (see the module docstring), in ledger order; ``settings``: those
    in force before the first of ``entries`` (the entries after a checkpoint, :mod:`dpdesk.core.ledger.checkpoint`)."""
    out: list[Effective] = []
    by_id: dict[str, Effective] = {}
    plans: dict[str, tuple[dict[str, Any], list[acc.QueryCost]]] = {}
    for e in entries:
        t = e.type
        previous_unit = (settings or {}).get("privacy_unit")
        if t in ("settings", "acknowledge", "merge", "import") and isinstance(e.get("settings"), dict):
            settings = e.fields["settings"]
        unit = (settings or {}).get("privacy_unit")
        if t == "spend":
            costs = _costs(e.fields["costs"])
            eff = Effective(
                str(e.get("release_id")),
                e.seq,
                costs,
                e.get("delta_prime"),
                costs,
                e.get("plan"),
                e.get("trace"),
                unit or (e.get("plan") or {}).get("privacy_unit"),
                synthetic=e.get("synthetic") if isinstance(e.get("synthetic"), dict) else None,
            )
            if isinstance(e.get("plan_hash"), str):
                plans[e.fields["plan_hash"]] = (e.get("plan") or {}, list(costs))
        elif t == "acknowledge":
            for r in e.get("carried", []):
                costs = _costs(r["costs"])
                eff = Effective(
                    str(r.get("release_id")),
                    int(r.get("seq") or 0),
                    costs,
                    r.get("delta_prime"),
                    costs,
                    r.get("plan"),
                    r.get("trace"),
                    r.get("unit") or unit,
                )
                out.append(eff)
                by_id[eff.release_id] = eff
            continue
        elif t in ("merge", "import"):
            # another dataset of the same table merged into this one (or a home's own ledger of it imported into
            # the team's): each of its releases counts here, costed under this dataset's unit of privacy (never
            # less than it was booked at there)
            for r in e.get("carried", []):
                costs = _costs(r["costs"])
                eff = Effective(
                    str(r.get("release_id")),
                    int(r.get("seq") or 0),
                    costs,
                    r.get("delta_prime"),
                    costs,
                    r.get("plan"),
                    r.get("trace"),
                    r.get("unit") or unit,
                )
                if unit is not None and eff.unit is not None and eff.unit != unit:
                    new, why = _cost_or_budget(eff, unit, settings)
                    if _higher(new, eff.costs):
                        eff.costs, eff.why = new, [*eff.why, *why]
                out.append(eff)
                by_id[eff.release_id] = eff
            continue
        elif t == "simulate":
            costs, sim_why = _simulate_costs(e, plans, settings)
            eff = Effective(f"simulate-{e.seq}", e.seq, costs, None, (), None, None, unit, [sim_why])
        elif t == "correction":
            for r in e.get("releases", []):
                target = by_id.get(str(r.get("release_id")))
                if target is not None:
                    rec = _costs(r["costs"])
                    target.costs, target.recorded = _raise(target.costs, rec), _raise(target.recorded, rec)
            continue
        elif t == "settings" and unit is not None and unit != previous_unit:
            for eff in out:  # a new unit: every earlier release costs the most it cost under any unit since
                new, why = _cost_or_budget(eff, unit, settings)
                if _higher(new, eff.costs):
                    eff.costs, eff.why = new, [*eff.why, *why]
            continue
        else:
            continue
        if unit is not None and t == "spend":
            new, why = _cost_or_budget(eff, unit, settings)  # today's code, the unit it was booked under
            if _higher(new, eff.costs):
                eff.costs, eff.why = new, [*eff.why, *why]
        out.append(eff)
        by_id[eff.release_id] = eff
    return out


def pending_corrections(
    entries: Sequence[Entry], *, settings: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Releases whose cost now is above what the ledger records for them: the body of a ``correction`` entry
    (``settings``: those in force before the first of ``entries``, as :func:`effective` takes them)."""
    out = []
    for eff in effective(entries, settings=settings):
        if _higher(eff.costs, eff.recorded) or (not eff.recorded and eff.costs):
            out.append(
                {
                    "release_id": eff.release_id,
                    "seq": eff.seq,
                    "recorded": [c.to_dict() for c in eff.recorded],
                    "costs": [c.to_dict() for c in eff.costs],
                    "added_epsilon": float(_total_eps(eff.costs) - _total_eps(eff.recorded)),
                    "why": eff.why,
                }
            )
    return out


def _recorded_total(entries: Sequence[Entry], method: str, b_delta: float) -> acc.Total:
    """The dataset's total under ``method`` of what ``entries`` record for its past releases (as booked, raised
    by the corrections among them)."""
    releases = [acc.Release(eff.recorded, eff.delta_prime) for eff in effective(entries) if eff.recorded]
    return acc.dataset_total(method, releases, b_delta)


def correction_changes(entries: Sequence[Entry]) -> dict[int, float]:
    """For each ``correction`` entry of a whole chain (by its seq): how much it raised the dataset's total epsilon
    under the accounting method in force, the total of what the ledger records for the past releases just after it
    less just before it (under advanced composition or zCDP, not the sum of the queries' epsilons it added)."""
    from dpdesk.core.ledger.entries import settings_in_force

    out: dict[int, float] = {}
    for i, e in enumerate(entries):
        if e.type != "correction":
            continue
        settings = settings_in_force(entries[: i + 1]) or {}
        method = str((settings.get("accounting") or {}).get("method", "sequential"))
        b_delta = float((settings.get("budget") or {}).get("delta", 0.0))
        before = _recorded_total(entries[:i], method, b_delta)
        after = _recorded_total(entries[: i + 1], method, b_delta)
        if before.epsilon_decimal is not None and after.epsilon_decimal is not None:
            out[e.seq] = float(after.epsilon_decimal - before.epsilon_decimal)
        else:
            out[e.seq] = after.epsilon - before.epsilon
    return out


#: A query may cost at most this much epsilon (the plan's own limit); a re-costing beyond it is refused.
MAX_QUERY_EPSILON = 100.0


def check_unit_change(entries: Sequence[Entry], unit: dict[str, Any]) -> list[dict[str, Any]]:
    """What every past release would cost under a new unit of privacy; raises :class:`UnboundedChange` when a
    cost has no finite bound or exceeds what one query may cost (the dataset could not account for it)."""
    out = []
    for eff in effective(entries):
        new, why = cost_under(eff, unit)
        if any(
            not math.isfinite(c.epsilon) or c.epsilon > MAX_QUERY_EPSILON or not math.isfinite(c.rho)
            for c in new
        ):
            raise UnboundedChange(eff.release_id)
        if _higher(new, eff.costs):
            out.append(
                {
                    "release_id": eff.release_id,
                    "seq": eff.seq,
                    "costs": [c.to_dict() for c in new],
                    "why": why,
                }
            )
    return out
