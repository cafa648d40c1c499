"""Accuracy in the statistic's own units, from the plan alone, and accuracy first: the smallest epsilon
that meets a stated target.

Everything here reads only public things: the query's design (sensitivities, noise scales, the noise
grid), the column bounds and the plan's ``expected_rows`` (a public estimate, never counted from the
data). Nothing here draws noise.

The noise is what the release draws (:mod:`dpdesk.core.dp.mechanisms`): integers on the component's noise
grid of step h (natural value = integer * h), discrete Laplace P(x) ~ exp(-|x|/t) with t = scale / h,
or discrete Gaussian P(x) ~ exp(-x^2 / (2 s^2)) with s = sigma / h, independently per cell.

* Count, sum, histogram cell (:func:`noise_halfwidth`): the published value is exact + Z, so the error
  within +-k h is P(|Z| <= k), and the smallest such k is computed from the discrete tail, not the
  continuous one; a value that is not whole is then rounded to 3 significant digits of its 95%
  interval's half-width (a public number), which adds half that step (:func:`rounding_error`). Discrete Laplace: P(|Z| > k) = 2 r^(k+1) / (1 + r), r = e^(-1/t), exactly
  (:func:`dlap_tail`). Discrete Gaussian (:func:`dgauss_tail`): summed term by term for s <= 1000;
  above, the proven upper bound 2 Q(k/s) = erfc(k / (s sqrt 2)): the terms are decreasing for x > k,
  so sum_{x>k} w(x) <= integral_k^inf w, and the normaliser is sum_x w(x) = s sqrt(2 pi) (1 + 2 sum_j
  exp(-2 pi^2 s^2 j^2)) >= s sqrt(2 pi) (Poisson summation). dpdesk draws Gaussian noise on a grid
  with s >= 2^20 (:func:`dpdesk.core.dp.queries.gaussian_grid`), where the bound exceeds the exact tail by
  a relative ~1/s, one grid step in the half-width. "All cells together": the cells' noises are
  independent, so all are within the error with probability p_each^cells; the per-cell confidence is
  c^(1/cells).
* Mean and proportion (:func:`ratio_error`), released as m = clamp(mid + S~ / max(1, n~), [L, U]) with
  S~ = S + Z_s (S the sum of x - mid, |x - mid| <= h), n~ = n + Z_n: the error before clamping is
  (Z_s - r Z_n) / (n + Z_n), r = S / n in [-h, h], and :func:`ratio_failure` bounds the probability that it
  exceeds t for EVERY table of n rows from the two noises' own distributions (its docstring has the proof);
  the stated error is the smallest t whose bound is at most (1 - c)(1 - 2%), plus the rounding
  (:func:`ratio_rounding`) on an event of probability 1 - 2% (1 - c). The true mean mid + S/n lies in [L, U],
  so clamping only brings m closer, and m is never farther than U - L. A grouped query's cells are stated for
  a group of n = expected_rows / groups rows (the groups' sizes are not public), and say so. Earlier versions
  used a union bound (a_s + h a_n) / (n - a_n) with each part at 1 - (1 - c)/2, about 1.8 times the epsilon
  when the two noises are alike, plus the rounding of the whole range U - L.
* Variance and standard deviation (:func:`spread_error`), released as v = clamp((Q~ - S~^2/m) / (m - 1),
  [0, 2 h^2]), m = max(2, n~), from three noisy sums (statistics/variance.py): a union bound over the three
  noises' half-widths, each at 1 - (1 - c)(1 - 2%)/3, and the worst case over every table of n rows
  (:func:`spread_bound`, its docstring has the proof), plus the rounding on an event of probability
  1 - 2% (1 - c); the standard deviation's is the square root of the variance's noise bound, plus its own
  rounding. Grouped: n = expected_rows / groups, as for a mean.
* Quantile (:func:`rank_error`): R = 2 Du (ln m + ln(1/(1 - c))) / eps, the exponential mechanism's
  utility loss at confidence c (McSherry & Talwar 2007); the score is minus a distance in ranks, so the
  released value's rank is within +-R of q n (statistics/quantile.py), for every table; with
  expected_rows n, the percentiles 100 (q -+ R/n).
* Mode and select (:func:`lead_probability`): dpdesk picks candidate i with probability proportional to
  exp(eps u_i / (2 Du)) (Gumbel noisy max of scale 2 Du / eps, :func:`dpdesk.core.dp.mechanisms.draw_exponential`).
  If the best leads every one of the other m - 1 by at least L, P(best) = 1 / (1 + sum_j
  exp(-eps (u_best - u_j) / (2 Du))) >= 1 / (1 + (m - 1) exp(-eps L / (2 Du))), for every table.

OpenDP may widen a scale by a few ulps to certify it (:func:`dpdesk.core.dp.mechanisms._int_scale`); every
statement here is made at a scale 10^-12 wider (:data:`SCALE_MARGIN`), which covers it.

Solving (:func:`solve_epsilon`): each of these is monotone in epsilon (more epsilon, less noise, smaller
error), so the smallest epsilon meeting the target is found by bisection on the design rescaled to each
trial epsilon, then rounded UP to 4 significant digits (:func:`round_up`), and checked once more on the
query's real design; deterministic, so a saved plan reads back to the same epsilon.

The tails, the errors and the statement (:class:`Accuracy`) are :mod:`dpdesk.core.dp.accuracy_base`, below the
statistics registry (a statistic states its own accuracy with them); this module reads each query's statistic
from the registry (:func:`query_accuracy`, the solver) and re-exports them.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import ROUND_CEILING, Decimal
from typing import TYPE_CHECKING

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp.accuracy_base import (
    LEAD,
    RANK,
    RATIO,
    SPREAD,
    VALUE,
    Accuracy,
    _fmt,
    _rows_per_cell,
    lead_for,
    lead_probability,
    query_rows,
    rank_error,
    ratio_error,
    ratio_meets,
    spread_error,
    statistic_accuracy,
    value_error,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.dp.queries_base import QueryDesign
    from dpdesk.core.model.spec import AccuracyTarget, Plan, QuerySpec

#: What a statistic's accuracy is stated with (:mod:`dpdesk.core.dp.accuracy_base`), re-exported.
__all__ = [
    "EPSILON_DIGITS",
    "meets",
    "query_accuracy",
    "rescaled",
    "round_up",
    "solve_epsilon",
    "solve_query",
]

#: Solved epsilons are rounded up to this many significant digits.
EPSILON_DIGITS = 4


# ----------------------------------------------------------------------------- accuracy statements


def _ratio_shape(design: QueryDesign, plan: Plan) -> tuple[float, float]:
    """(h, U - L) of a mean or a proportion: the largest |x - mid| (on the grid) and the bounds' width."""
    from dpdesk.core.dp import statistics

    return statistics.get(design.spec.statistic).ratio_shape(design.spec, plan)


def query_accuracy(design: QueryDesign, plan: Plan, confidence: float = 0.95) -> Accuracy:
    """The query's accuracy in its own units (with a query's target: at the target's confidence)."""
    from dpdesk.core.dp import statistics

    stat = statistics.get(design.spec.statistic)
    return statistic_accuracy(
        design, plan, confidence, stat.accuracy_kind, stat.accuracy_unit, stat.ratio_shape
    )


def meets(design: QueryDesign, plan: Plan, target: AccuracyTarget) -> bool:
    """Whether the design meets the target (see the module's notes for what each statistic's target means)."""
    from dpdesk.core.dp import statistics

    kind = statistics.get(design.spec.statistic).accuracy_kind
    c = target.confidence
    if kind == VALUE:
        return value_error(design, c, target.cells == "all") <= target.error
    if kind == RATIO:
        rows = _rows_per_cell(design, plan)
        assert rows is not None
        h, width = _ratio_shape(design, plan)
        return ratio_meets(design, h, width, rows, c, target.error)
    if kind == SPREAD:
        return _spread(design, plan, c) <= target.error
    if kind == RANK:
        return rank_error(design, c) <= target.error
    return lead_probability(design, target.error) >= c


def _spread(design: QueryDesign, plan: Plan, confidence: float) -> float:
    """A variance's or a standard deviation's stated error at expected_rows (per group: split evenly)."""
    from dpdesk.core.dp import statistics

    stat = statistics.get(design.spec.statistic)
    rows = _rows_per_cell(design, plan)
    assert rows is not None
    h, _width = stat.ratio_shape(design.spec, plan)
    return spread_error(design, h, rows, confidence, stat.accuracy_unit != "squared")


# ----------------------------------------------------------------------------- accuracy first


def rescaled(design: QueryDesign, epsilon: float) -> QueryDesign:
    """The design at another epsilon (each component keeps its share of it), for the solver's trials."""
    from dpdesk.core.dp.queries_base import noise_component

    spec = design.spec
    comps = []
    for c in design.components:
        eps = epsilon * (c.epsilon / spec.epsilon)
        if c.mechanism == "exponential":
            comps.append(dataclasses.replace(c, epsilon=eps, scale=2.0 * c.l1 / eps))
        else:
            comps.append(
                noise_component(
                    c.label, c.kind, c.mechanism, spec.calibration, eps, c.delta, c.l1, c.l2, c.unit, ""
                )
            )
    return dataclasses.replace(
        design, spec=dataclasses.replace(spec, epsilon=epsilon), components=tuple(comps)
    )


def round_up(x: float, digits: int = EPSILON_DIGITS) -> float:
    """x rounded UP to ``digits`` significant digits (a float never below x).

    >>> round_up(0.123412), round_up(0.1234), round_up(12.00001)
    (0.1235, 0.1234, 12.01)
    """
    d = Decimal(x)
    exp = d.adjusted() - digits + 1
    r = d.quantize(Decimal(1).scaleb(exp), rounding=ROUND_CEILING)
    out = float(r)
    return out if out >= x else math.nextafter(out, math.inf)


def _next_up(x: float, digits: int = EPSILON_DIGITS) -> float:
    """The next value of ``digits`` significant digits above x."""
    d = Decimal(repr(x))
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d + step)


def _check_target(design: QueryDesign, plan: Plan, target: AccuracyTarget, key: str) -> None:
    from dpdesk.core.dp import statistics

    stat = statistics.get(design.spec.statistic)
    kind = stat.accuracy_kind
    if target.cells == "all" and kind != VALUE:
        raise PlanError(
            f"{key}.accuracy.cells",
            _('"all" applies to counts, sums and histograms (cells with independent noise)'),
        )
    if kind == VALUE:
        step = design.components[0].unit
        if target.error < step:
            raise PlanError(
                f"{key}.accuracy.error",
                _(
                    "an error of {e} is below the step of the published value ({s}): no noise is that precise"
                ).format(e=_fmt(target.error), s=_fmt(step)),
            )
    if kind in (RATIO, SPREAD) and query_rows(design.spec, plan) is None:
        if design.spec.where:
            raise PlanError(
                f"{key}.accuracy",
                _(
                    "the accuracy of a {stat} depends on the number of rows that meet its where: state the "
                    "query's expected_rows, a public estimate of them (never counted from the data)"
                ).format(stat=design.spec.statistic),
            )
        raise PlanError(
            f"{key}.accuracy",
            _(
                "the accuracy of a {stat} depends on the number of rows: state expected_rows, a public "
                "estimate of it (never counted from the data)"
            ).format(stat=design.spec.statistic),
        )
    if kind == LEAD:
        m = len(design.candidates or ())
        if target.confidence <= 1.0 / m:
            raise PlanError(
                f"{key}.accuracy.confidence",
                _(
                    "a confidence of {c} is met by picking one of the {m} candidates at random: ask for more than 1/{m}"
                ).format(c=f"{target.confidence:g}", m=m),
            )


def _unreachable(design: QueryDesign, plan: Plan, target: AccuracyTarget, top: float) -> str:
    """Why no epsilon up to ``top`` meets the target: what the largest epsilon reaches, and what to change."""
    from dpdesk.core.dp import statistics

    kind = statistics.get(design.spec.statistic).accuracy_kind
    c = target.confidence
    pct = f"{c * 100:.4g}%"
    head = _("no epsilon up to {top} meets this target").format(top=f"{top:g}")
    if kind == LEAD:
        lead = lead_for(design, c)
        return (
            head
            + ": "
            + _(
                "even at epsilon {top} the best candidate must lead by {l} to be chosen with probability {p}; "
                "allow a larger lead or a lower confidence"
            ).format(top=f"{top:g}", l=_fmt(lead), p=pct)
        )
    if kind == VALUE:
        best = value_error(design, c, target.cells == "all")
    elif kind == RATIO:
        rows = _rows_per_cell(design, plan)
        assert rows is not None
        h, width = _ratio_shape(design, plan)
        best = ratio_error(design, h, width, rows, c)
        return (
            head
            + ": "
            + _(
                "with {n} expected rows, even epsilon {top} gives only ±{e} with probability {p} (the noisy count "
                "must stay well above 0); allow an error of at least ±{e}, a lower confidence, or state more "
                "expected rows if the table really has them"
            ).format(n=rows, top=f"{top:g}", e=_fmt(best), p=pct)
        )
    elif kind == SPREAD:
        rows = _rows_per_cell(design, plan)
        best = _spread(design, plan, c)
        return (
            head
            + ": "
            + _(
                "with {n} expected rows, even epsilon {top} gives only ±{e} with probability {p} (the noisy count "
                "must stay well above 2); allow an error of at least ±{e}, a lower confidence, or state more "
                "expected rows if the table really has them"
            ).format(n=rows, top=f"{top:g}", e=_fmt(best), p=pct)
        )
    else:
        best = rank_error(design, c)
    return (
        head
        + ": "
        + _(
            "even epsilon {top} gives only ±{e} with probability {p}; allow an error of at least ±{e} or a lower "
            "confidence"
        ).format(top=f"{top:g}", e=_fmt(best), p=pct)
    )


def solve_epsilon(design: QueryDesign, plan: Plan, target: AccuracyTarget, key: str) -> float:
    """The smallest epsilon (rounded up to 4 significant digits) whose design meets the target.

    Raises :class:`PlanError` naming the query when no epsilon up to 100 meets it.
    """
    from dpdesk.core.model.spec import MIN_EPSILON

    _check_target(design, plan, target, key)
    top = 100.0

    def ok(eps: float) -> bool:
        return meets(rescaled(design, eps), plan, target)

    if not ok(top):
        raise PlanError(f"{key}.accuracy", _unreachable(rescaled(design, top), plan, target, top))
    if ok(MIN_EPSILON):
        return MIN_EPSILON
    lo, hi = math.log(MIN_EPSILON), math.log(top)
    for _step in range(200):
        if hi - lo <= 1e-13:
            break
        mid = 0.5 * (lo + hi)
        if ok(math.exp(mid)):
            hi = mid
        else:
            lo = mid
    eps = round_up(math.exp(hi))
    while not ok(eps):  # pragma: no cover - the bisection's side meets it; a guard for the rounding
        eps = _next_up(eps)
    return eps


def solve_query(spec: QuerySpec, key: str, plan: Plan) -> QuerySpec:
    """The query with its epsilon solved from its accuracy target (``plan``: the public facts it needs)."""
    from dpdesk.core.dp.queries import design_query
    from dpdesk.core.model.spec import MIN_EPSILON

    target = spec.accuracy
    assert target is not None
    design = design_query(spec, plan)
    eps = solve_epsilon(design, plan, target, key)
    for _step in range(100):  # the query's real design at that epsilon must meet it too
        out = dataclasses.replace(spec, epsilon=eps)
        if meets(design_query(out, plan), plan, target):
            break
        eps = _next_up(eps)  # pragma: no cover - rescaled and real designs agree
    if eps > 100 or eps < MIN_EPSILON:  # pragma: no cover - solve_epsilon stays inside
        raise PlanError(f"{key}.accuracy", _("the solved epsilon {e} is out of range").format(e=eps))
    if spec.mechanism == "gaussian" and spec.calibration == "classic" and eps >= 1:
        raise PlanError(
            f"{key}.accuracy",
            _(
                "this target needs epsilon {e}, and the classic Gaussian formula holds only for epsilon < 1; "
                'use "calibration": "analytic"'
            ).format(e=f"{eps:g}"),
        )
    return out
