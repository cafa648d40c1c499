"""Fit a plan to its budget: what is left, less a reserve, split across the free queries by weight.

The split is made in the accounting method's own unit: epsilon under sequential and advanced composition,
rho under zCDP (a query's share of rho is turned back into the epsilon that costs it, through the query's own
design, so a Gaussian query's delta and calibration are honoured). Locked queries keep their epsilon, and so do
queries that state the accuracy they need (their epsilon is what that accuracy costs).

The result is checked, not trusted: whatever the method, the fitted plan is re-costed by
:func:`dpdesk.core.ledger.budget.budget_report` with the dataset's past releases and must fit with the reserve
still left; shares are found by bisection on one scale factor (every total grows with it) and rounded down.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.ledger.budget import BudgetReport, budget_report, past_releases, plan_costs
from dpdesk.core.ledger.budget import _remaining as remaining
from dpdesk.core.ledger.entries import Entry
from dpdesk.core.model.spec import MIN_EPSILON, Plan, QuerySpec
from dpdesk.core.plan.reader import largest_epsilon
from dpdesk.i18n import _

#: Shares are rounded down to this many significant digits (stable, readable numbers that still fit).
DIGITS = 6
MIN_WEIGHT, MAX_WEIGHT = (
    1e-6,
    1e6,
)  # a weight's range (0 leaves a query out): sums and shares stay exact enough
_STEPS = 80  # bisection steps on the scale factor (relative precision far below the rounding)


@dataclass(frozen=True)
class FitResult:
    """The epsilons of a fitted plan, in query order, and how they were found."""

    epsilons: tuple[float, ...]
    #: the unit the weights split: "epsilon" or "rho"
    unit: str
    #: what is left under the method in force after the fitted plan (at least the reserve)
    left_after: float
    report: BudgetReport
    #: the queries whose share was above the largest epsilon the plan reader accepts for their mechanism (the
    #: classic Gaussian: below 1): kept at that epsilon, the rest of their share split across the other free queries
    capped: tuple[str, ...] = ()


class FitError(ValueError):
    """Nothing can be fitted (no free query, no weight, or the locked queries and the reserve use it all);
    ``usage``: the request itself is wrong (weights, locks), not the budget."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


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
    for _step in range(60):
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
    entries: Sequence[Entry] | None = None,
    *,
    weights: Sequence[float] | None = None,
    locked: Sequence[bool] | None = None,
    reserve: float = 0.0,
) -> FitResult:
    """Epsilons for ``plan``'s queries that spend what is left less ``reserve`` (epsilon under the method
    in force), split across the free queries by ``weights`` (equal by default) in the method's own unit.

    ``locked[i]``: query i keeps its epsilon. ``entries``: the dataset's ledger (what was spent before).

    Every fitted epsilon is one the plan reader accepts (a fitted plan is written and released): a query whose
    share would be at or above its limit (the classic Gaussian's formula holds only below epsilon 1; no query
    above 100) is kept at the largest epsilon below it, rounded down, and named in ``capped``; the others are
    fitted again to what is left (a capped query is then locked). When every free query is capped, what they
    could not take stays unspent.
    """
    n = len(plan.queries)
    locked = [False] * n if locked is None else list(locked)
    capped: list[int] = []
    while True:
        fit = _fit(plan, entries, weights=weights, locked=locked, reserve=reserve)
        over = [
            i
            for i, (q, e) in enumerate(zip(plan.queries, fit.epsilons, strict=True))
            if not locked[i] and e > largest_epsilon(q)
        ]
        if not over:
            return dataclasses.replace(fit, capped=tuple(plan.queries[i].name for i in capped))
        eps = [q.epsilon for q in plan.queries]
        for i in over:
            eps[i] = round_down(largest_epsilon(plan.queries[i]))
            locked[i] = True
            capped.append(i)
        plan = _with_epsilons(plan, eps)
        free = [i for i in range(n) if not locked[i] and (weights is None or weights[i] > 0)]
        if not free:  # every free query is capped: nothing else to fit
            rep = budget_report(plan, entries)
            if not rep.fits or rep.remaining_after.epsilon < reserve:  # pragma: no cover - capped below a fit
                raise FitError(
                    _("nothing is left to share once the locked queries and the reserve are counted")
                )
            names = tuple(plan.queries[i].name for i in capped)
            return FitResult(
                tuple(q.epsilon for q in plan.queries),
                "rho" if rep.method == "zcdp" else "epsilon",
                rep.remaining_after.epsilon,
                rep,
                names,
            )


def capped_note(spec: QuerySpec) -> str:
    """What fitting did to a query it capped (:attr:`FitResult.capped`), for the user."""
    from dpdesk.core.plan.reader import CLASSIC_GAUSSIAN_LIMIT, MAX_EPSILON

    if largest_epsilon(spec) < CLASSIC_GAUSSIAN_LIMIT:
        return _(
            "{name}: the classic Gaussian formula holds only for epsilon below 1, so this query is fitted at "
            'epsilon {eps} and the rest of its share goes to the other free queries (with "calibration": '
            '"analytic" it can take its whole share)'
        ).format(name=spec.name, eps=f"{spec.epsilon:g}")
    return _(
        "{name}: a query may state at most epsilon {most}, so this query is fitted at epsilon {eps} and the rest "
        "of its share goes to the other free queries"
    ).format(name=spec.name, most=f"{MAX_EPSILON:g}", eps=f"{spec.epsilon:g}")


def _fit(
    plan: Plan,
    entries: Sequence[Entry] | None = None,
    *,
    weights: Sequence[float] | None = None,
    locked: Sequence[bool] | None = None,
    reserve: float = 0.0,
) -> FitResult:
    """One fit of the free queries (:func:`fit_to_budget`, before any cap)."""
    n = len(plan.queries)
    weights = [1.0] * n if weights is None else [float(w) for w in weights]
    locked = [False] * n if locked is None else list(locked)
    if len(weights) != n or len(locked) != n:
        raise ValueError("one weight and one lock per query")
    if any(not math.isfinite(w) or not (w == 0 or MIN_WEIGHT <= w <= MAX_WEIGHT) for w in weights):
        raise FitError(_("weights must be 0 or from 0.000001 to 1,000,000"), usage=True)
    if not math.isfinite(reserve) or reserve < 0:
        raise FitError(_("the reserve must be zero or more"), usage=True)
    free = [i for i in range(n) if not locked[i] and weights[i] > 0]
    if not free:
        raise FitError(_("no query is free to change (all are locked or have weight 0)"), usage=True)
    wsum = sum(weights[i] for i in free)
    share = [weights[i] / wsum if i in free else 0.0 for i in range(n)]
    first = budget_report(plan, entries)  # the settings in force (the ledger's, else the plan's)
    method, b_eps, b_delta = first.method, first.budget.epsilon, first.budget.delta
    zcdp = method == "zcdp"
    past = past_releases(entries or [])
    costs = plan_costs(design_plan(plan))

    # the search runs on the accountant's own totals (fast); the result is then re-costed in full
    def fits(t: float) -> bool:
        cs = list(costs)
        for i in free:
            c = costs[i]
            cs[i] = (
                acc.QueryCost(c.name, 0.0, c.delta, t * share[i])
                if zcdp
                else acc.QueryCost(c.name, t * share[i], c.delta, 0.0)
            )
        after = acc.dataset_total(
            method, [*past, acc.Release(tuple(cs), plan.accounting.delta_prime)], b_delta
        )
        return acc.fits(after, b_eps, b_delta) and remaining(b_eps, after) >= reserve

    lo, hi = 0.0, max(b_eps, 1.0) * 4
    while fits(hi) and hi < 1e9:  # pragma: no cover - the budget bounds every share
        lo, hi = hi, hi * 2
    for _step in range(_STEPS):
        mid = (lo + hi) / 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    crumb = (1e3 * MIN_EPSILON) ** 2 / 2 if zcdp else 1e3 * MIN_EPSILON  # in the method's unit
    if lo * min(share[i] for i in free) < crumb:  # nothing (or a rounding crumb) is left
        raise FitError(_("nothing is left to share once the locked queries and the reserve are counted"))

    def epsilons(t: float) -> list[float]:
        out = [q.epsilon for q in plan.queries]
        for i in free:
            e = _epsilon_for_rho(plan, plan.queries[i], t * share[i]) if zcdp else t * share[i]
            out[i] = round_down(e)
        return out

    for _attempt in range(
        20
    ):  # rounding down only lowers costs; shrink a little if the full re-costing disagrees
        eps = epsilons(lo)
        if all(e >= MIN_EPSILON for e in eps):
            rep = budget_report(_with_epsilons(plan, eps), entries)
            if rep.fits and rep.remaining_after.epsilon >= reserve:
                return FitResult(tuple(eps), "rho" if zcdp else "epsilon", rep.remaining_after.epsilon, rep)
        lo *= 1 - 1e-6
    raise FitError(_("nothing is left to share once the locked queries and the reserve are counted"))
