"""Composition: what a set of queries spends under each accounting method.

* sequential: epsilons add, deltas add (computed in decimal arithmetic on the numbers as typed,
  so that 0.1 + 0.9 is exactly 1.0 and a budget split exactly is not refused by float rounding);
* parallel composition applies inside one histogram or grouped query (its sensitivity covers all
  its cells, so it costs its epsilon once); separate queries always compose;
* advanced (Dwork, Rothblum & Vadhan 2010, heterogeneous form), within one plan:
  eps' = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1), delta = sum delta_i + delta'.
  Across releases chosen one after another it is not valid, so a dataset on ``advanced`` adds each
  release's advanced total sequentially. A release whose plan sets no delta' (its dataset is on
  another method) is shown with :func:`default_delta_prime`, one rule everywhere;
* zcdp: rho adds (Laplace eps^2/2, exponential eps^2/8, Gaussian D^2 / (2 sigma^2)); the total is
  converted once to (epsilon, delta) at the budget's delta with the tight conversion of Canonne,
  Kamath & Steinke (2020) through OpenDP; the simple bound rho + 2 sqrt(rho ln(1/delta)) is shown beside.

The method in force is the dataset's; the others are always computed and shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dpdesk.core.dp import mechanisms as mech

#: The accounting methods (plan vocabulary) and their English names, as stored in reports' JSON.
METHOD_NAMES = {
    "sequential": "sequential composition",
    "advanced": "advanced composition",
    "zcdp": "zero-concentrated DP (zCDP)",
}


#: The version of the costing rules: what a plan's queries cost (each design's epsilon, delta and rho, the epsilon solved
#: from an accuracy target), how costs compose under each accounting method (this module), and what past releases
#: cost now (re-costing and corrections, :mod:`dpdesk.core.ledger.recost`). A ledger checkpoint records it and is
#: trusted only by code of the same rules (:mod:`dpdesk.core.ledger.checkpoint`). Bump it whenever a change can make
#: any plan or past release cost otherwise, regenerate the golden table (``tests/core/golden_costs.json``, the command
#: is in ``tests/core/test_golden_costs.py``, which fails when a cost there changes and this does not) and say so in
#: CHANGELOG.md. Never reuse a number: a checkpoint of other rules is never trusted, whatever their order.
COSTING_RULES: int = 1

#: Above this per-query epsilon, e^epsilon overflows a float; the advanced total is then reported as HUGE_EPSILON.
ADVANCED_OVERFLOW = 600.0
#: A finite stand-in for "beyond any budget" (kept finite so that ledgers and reports stay valid JSON).
HUGE_EPSILON = 1e300


def method_name(method: str) -> str:
    """An accounting method's name for messages, in the user's language."""
    from dpdesk.i18n import _  # imported here: this module's loops use ``_`` as a throwaway name

    names = {
        "sequential": _("sequential composition"),
        "advanced": _("advanced composition"),
        "zcdp": _("zero-concentrated DP (zCDP)"),
    }
    return names.get(method, method)


def dec(x: float | str | Decimal) -> Decimal:
    """The decimal a float was typed as (its shortest round-trip representation)."""
    if isinstance(x, Decimal):
        return x
    return Decimal(x if isinstance(x, str) else repr(float(x)))


@dataclass(frozen=True)
class QueryCost:
    """What one query costs: (epsilon, delta) and its zCDP rho."""

    name: str
    epsilon: float
    delta: float
    rho: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the ledger)."""
        return {"name": self.name, "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> QueryCost:
        """Inverse of :meth:`to_dict`."""
        return QueryCost(str(d["name"]), float(d["epsilon"]), float(d["delta"]), float(d["rho"]))


@dataclass(frozen=True)
class Total:
    """A total under one method: (epsilon, delta), and rho for zCDP."""

    method: str
    epsilon: float
    delta: float
    rho: float | None = None
    epsilon_simple: float | None = None  # zCDP: the simple conversion, shown beside
    epsilon_decimal: Decimal | None = None  # sequential: the exact decimal sum

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        d: dict[str, Any] = {"method": self.method, "epsilon": self.epsilon, "delta": self.delta}
        if self.rho is not None:
            d["rho"] = self.rho
        if self.epsilon_simple is not None:
            d["epsilon_simple"] = self.epsilon_simple
        if self.epsilon_decimal is not None:
            d["epsilon_exact"] = str(self.epsilon_decimal)
        return d


def sequential(costs: Sequence[QueryCost]) -> Total:
    """Sequential composition: epsilons add and deltas add (exact decimals)."""
    e = sum((dec(c.epsilon) for c in costs), Decimal(0))
    d = sum((dec(c.delta) for c in costs), Decimal(0))
    return Total("sequential", float(e), float(d), epsilon_decimal=e)


def advanced(costs: Sequence[QueryCost], delta_prime: float) -> Total:
    """Advanced composition of the queries of one plan (heterogeneous DRV bound).

    >>> t = advanced([QueryCost("q", 0.1, 0.0, 0.0)] * 100, 1e-6)
    >>> round(t.epsilon, 6), t.delta
    (6.308231, 1e-06)
    """
    if not costs:
        return Total("advanced", 0.0, 0.0)
    if any(c.epsilon > ADVANCED_OVERFLOW for c in costs):  # e^eps would overflow: a bound beyond any budget
        return Total("advanced", HUGE_EPSILON, math.fsum(c.delta for c in costs) + delta_prime)
    s2 = math.fsum(c.epsilon**2 for c in costs)
    eps = math.sqrt(2.0 * math.log(1.0 / delta_prime) * s2) + math.fsum(
        c.epsilon * math.expm1(c.epsilon) for c in costs
    )
    delta = math.fsum(c.delta for c in costs) + delta_prime
    return Total("advanced", eps, delta)


def zcdp(rho: float, delta: float) -> Total:
    """A zCDP total converted to (epsilon, delta) at ``delta`` (tight CKS20 and the simple bound)."""
    if rho <= 0:
        return Total("zcdp", 0.0, 0.0, rho=0.0, epsilon_simple=0.0)
    return Total(
        "zcdp",
        mech.rho_to_epsilon(rho, delta),
        delta,
        rho=rho,
        epsilon_simple=mech.rho_to_epsilon_simple(rho, delta),
    )


def rho_budget(epsilon: float, delta: float) -> float:
    """The largest rho whose tight conversion at ``delta`` stays within ``epsilon`` (bisection)."""
    lo, hi = 0.0, max(1.0, epsilon)
    while mech.rho_to_epsilon(hi, delta) <= epsilon:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if mech.rho_to_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class Release:
    """A past or planned release as the accountant sees it: its query costs."""

    costs: tuple[QueryCost, ...]
    delta_prime: float | None = None


def default_delta_prime(budget_delta: float) -> float | None:
    """The delta' of advanced composition for a release whose plan sets none: min(budget delta / 10, 1e-7).

    A plan sets delta' only when advanced composition is its dataset's method; otherwise the
    advanced total is shown beside the method in force, with this delta'. It is the one default
    everywhere (budget meter, release entry totals, report, statement, ledger listing), computed
    from the budget's delta in force, so one release has one advanced total. None when the budget
    has no delta to spend delta' from (advanced composition is then not available).

    >>> default_delta_prime(1e-6), default_delta_prime(1e-9), default_delta_prime(0.0)
    (1e-07, 1e-10, None)
    """
    if budget_delta <= 0:
        return None
    return min(budget_delta / 10.0, 1e-7)


def release_delta_prime(delta_prime: float | None, budget_delta: float) -> float:
    """A release's delta' for advanced composition: its plan's, else :func:`default_delta_prime`."""
    if delta_prime is not None:
        return delta_prime
    d = default_delta_prime(budget_delta)
    if d is None:
        raise ValueError("advanced composition needs delta' > 0, and a budget with delta 0 has none to spend")
    return d


def plan_total(
    method: str, costs: Sequence[QueryCost], delta_prime: float | None, budget_delta: float
) -> Total:
    """What one release's queries spend under ``method``."""
    if method == "sequential":
        return sequential(costs)
    if method == "advanced":
        return advanced(costs, release_delta_prime(delta_prime, budget_delta))
    return zcdp(math.fsum(c.rho for c in costs), budget_delta)


def dataset_total(method: str, releases: Iterable[Release], budget_delta: float) -> Total:
    """What a sequence of releases spends in total under ``method``.

    sequential: all queries add up; advanced: each release's advanced total, added sequentially;
    zcdp: all rho add up, converted once.
    """
    rels = list(releases)
    if method == "sequential":
        return sequential([c for r in rels for c in r.costs])
    if method == "advanced":
        e = Decimal(0)
        d = 0.0
        for r in rels:
            t = advanced(r.costs, release_delta_prime(r.delta_prime, budget_delta))
            e += dec(t.epsilon)
            d += t.delta
        return Total("advanced", float(e), d, epsilon_decimal=e)
    return zcdp(math.fsum(c.rho for r in rels for c in r.costs), budget_delta)


def fits(total: Total, budget_epsilon: float, budget_delta: float) -> bool:
    """Whether a total stays within the budget (exact decimals for the sequential epsilon)."""
    if total.epsilon_decimal is not None:
        eps_ok = total.epsilon_decimal <= dec(budget_epsilon)
    else:
        eps_ok = total.epsilon <= budget_epsilon
    return eps_ok and dec(total.delta) <= dec(budget_delta)


def split_budget(total: float, weights: Sequence[float], digits: int = 6) -> list[float]:
    """Spread ``total`` epsilon over queries by weight, rounded down so the shares never exceed it.

    >>> split_budget(1.0, [1, 1, 1])
    [0.333333, 0.333333, 0.333333]
    """
    if not weights or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError("weights must be non-negative and not all zero")
    q = Decimal(1).scaleb(-digits)
    t = dec(total)
    wsum = sum(dec(w) for w in weights)
    shares = [(t * dec(w) / wsum).quantize(q, rounding="ROUND_DOWN") for w in weights]
    assert sum(shares) <= t
    return [float(s) for s in shares]
