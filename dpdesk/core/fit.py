"""Fit a plan to its budget: what is left, less a reserve, split across the free queries by weight.

The split is made in the accounting method's own unit: epsilon under sequential and advanced composition,
rho under zCDP (a query's share of rho is turned back into the epsilon that costs it, through the query's own
design, so a Gaussian query's delta and calibration are honoured). Locked queries keep their epsilon, and so do
queries that state the accuracy they need (their epsilon is what that accuracy costs).

The result is checked, not trusted: whatever the method, the fitted plan is re-costed by
:func:`dpdesk.core.budget.budget_report` with the dataset's past releases and must fit with the reserve
still left; shares are found by bisection on one scale factor (every total grows with it) and rounded down.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpdesk.core.budget import BudgetReport, budget_report
from dpdesk.core.plan import Plan, QuerySpec
from dpdesk.core.queries import design_plan

#: Shares are rounded down to this many significant digits (stable, readable numbers that still fit).
DIGITS = 6
_STEPS = 80  # bisection steps on the scale factor (relative precision far below the rounding)


@dataclass(frozen=True)
class FitResult:
    """The epsilons of a fitted plan, in query order, and how they were found."""

    epsilons: tuple[float, ...]
    #: the unit the weights split: "epsilon" or "rho"
    unit: str
    #: each free query's share in that unit (None for locked queries)
    shares: tuple[float | None, ...]
    #: what is left under the method in force after the fitted plan (at least the reserve)
    left_after: float
    report: BudgetReport


class FitError(ValueError):
    """Nothing can be fitted (no free query, no weight, or the locked queries and the reserve use it all)."""


def round_down(x: float, digits: int = DIGITS) -> float:
    """``x`` rounded toward zero to ``digits`` significant digits."""
    if x <= 0 or not math.isfinite(x):
        return 0.0
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    y = math.floor(x * scale) / scale
    return y if y <= x else math.nextafter(y, 0.0)


def _with_epsilons(plan: Plan, eps: Sequence[float]) -> Plan:
    queries = tuple(dataclasses.replace(q, epsilon=e) for q, e in zip(plan.queries, eps, strict=True))
    return dataclasses.replace(plan, queries=queries)


def _rho_of(plan: Plan, spec: QuerySpec, epsilon: float) -> float:
    """The zCDP cost (rho) of one query at ``epsilon``, from its design."""
    one = dataclasses.replace(plan, queries=(dataclasses.replace(spec, epsilon=epsilon),))
    return float(design_plan(one)[0].rho)


def _epsilon_for_rho(plan: Plan, spec: QuerySpec, rho: float) -> float:
    """The largest epsilon whose design costs at most ``rho`` (rho grows with epsilon)."""
    lo, hi = 0.0, 1.0
    while _rho_of(plan, spec, hi) <= rho and hi < 1e6:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid <= 0:
            break
        if _rho_of(plan, spec, mid) <= rho:
            lo = mid
        else:
            hi = mid
    return lo


def fit_to_budget(
    plan: Plan,
    entries: Sequence[dict[str, Any]] | None = None,
    *,
    weights: Sequence[float] | None = None,
    locked: Sequence[bool] | None = None,
    reserve: float = 0.0,
) -> FitResult:
    """Epsilons for ``plan``'s queries that spend what is left less ``reserve`` (epsilon under the method
    in force), split across the free queries by ``weights`` (equal by default) in the method's own unit.

    ``locked[i]``: query i keeps its epsilon. ``entries``: the dataset's ledger (what was spent before).
    """
    n = len(plan.queries)
    weights = [1.0] * n if weights is None else [float(w) for w in weights]
    locked = [False] * n if locked is None else list(locked)
    if len(weights) != n or len(locked) != n:
        raise ValueError("one weight and one lock per query")
    if any(not math.isfinite(w) or w < 0 for w in weights):
        raise FitError("weights must be zero or more")
    if not math.isfinite(reserve) or reserve < 0:
        raise FitError("the reserve must be zero or more")
    free = [i for i in range(n) if not locked[i] and weights[i] > 0]
    if not free:
        raise FitError("no query is free to change (all are locked or have weight 0)")
    wsum = sum(weights[i] for i in free)
    share = [weights[i] / wsum if i in free else 0.0 for i in range(n)]
    base = [q.epsilon for q in plan.queries]
    zcdp = plan.accounting.method == "zcdp"
    unit = "rho" if zcdp else "epsilon"

    def epsilons(t: float, rounding: Callable[[float], float] = lambda x: x) -> list[float]:
        out = list(base)
        for i in free:
            amount = t * share[i]
            e = _epsilon_for_rho(plan, plan.queries[i], amount) if zcdp else amount
            out[i] = rounding(e)
        return out

    def ok(eps: list[float]) -> BudgetReport | None:
        if any(e <= 0 for e in eps):
            return None
        rep = budget_report(_with_epsilons(plan, eps), entries)
        return rep if rep.fits and rep.remaining_after.epsilon >= reserve else None

    # the upper end: the whole budget in the method's unit bounds what any share can be
    hi = plan.budget.epsilon if not zcdp else max(plan.budget.epsilon**2, plan.budget.epsilon) * 4
    if ok(epsilons(hi * 1e-12)) is None:
        raise FitError("nothing is left to share once the locked queries and the reserve are counted")
    lo = hi * 1e-12
    while ok(epsilons(hi)) is not None:  # pragma: no cover - the budget bounds every share
        lo, hi = hi, hi * 2
    for _ in range(_STEPS):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else (lo + hi) / 2
        if ok(epsilons(mid)) is not None:
            lo = mid
        else:
            hi = mid
    final = epsilons(lo, round_down)
    rep = ok(final)
    if rep is None:  # pragma: no cover - rounding down only lowers each cost
        raise FitError("the fitted plan does not fit")
    shares = tuple((lo * share[i]) if i in free else None for i in range(n))
    return FitResult(tuple(final), unit, shares, rep.remaining_after.epsilon, rep)
