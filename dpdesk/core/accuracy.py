"""Accuracy in the statistic's own units, from the plan alone, and accuracy first: the smallest epsilon
that meets a stated target.

Everything here reads only public things: the query's design (sensitivities, noise scales, the noise
grid), the column bounds and the plan's ``expected_rows`` (a public estimate, never counted from the
data). Nothing here draws noise.

The noise is what the release draws (:mod:`dpdesk.core.mechanisms`): integers on the component's noise
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
  with s >= 2^20 (:func:`dpdesk.core.queries.gaussian_grid`), where the bound exceeds the exact tail by
  a relative ~1/s, one grid step in the half-width. "All cells together": the cells' noises are
  independent, so all are within the error with probability p_each^cells; the per-cell confidence is
  c^(1/cells).
* Mean and proportion (:func:`ratio_error`), released as m = clamp(mid + S~ / max(1, n~), [L, U]) with
  S~ = S + Z_s (S the sum of x - mid, |x - mid| <= h), n~ = n + Z_n. With |Z_s| <= a_s and |Z_n| <= a_n,
  each with probability 1 - (1 - c)/2 (so both with probability >= c, a union bound), and n - a_n >= 1
  (then n~ >= 1 and max(1, n~) = n~): |S~/n~ - S/n| = |n Z_s - S Z_n| / (n (n + Z_n)) <= (n a_s + h n
  a_n) / (n (n - a_n)) = (a_s + h a_n) / (n - a_n), for EVERY table of n rows (|S| <= h n). The true
  mean mid + S/n lies in [L, U], so clamping only brings m closer, and m is never farther than U - L.
  So the error is at most min(U - L, (a_s + h a_n) / (n - a_n) + rounding), and U - L when n - a_n < 1
  (rounding: the published value keeps 3 significant digits of its interval's half-width, at most U - L,
  so it moves by at most half of :func:`dpdesk.core.values.rounding_step` (U - L)). A grouped
  query's cells are stated for a group of n = expected_rows / groups rows (the groups' sizes are not
  public), and say so.
* Quantile (:func:`rank_error`): R = 2 Du (ln m + ln(1/(1 - c))) / eps, the exponential mechanism's
  utility loss at confidence c (McSherry & Talwar 2007); the score is minus a distance in ranks, so the
  released value's rank is within +-R of q n (statistics/quantile.py), for every table; with
  expected_rows n, the percentiles 100 (q -+ R/n).
* Mode and select (:func:`lead_probability`): dpdesk picks candidate i with probability proportional to
  exp(eps u_i / (2 Du)) (Gumbel noisy max of scale 2 Du / eps, :func:`dpdesk.core.mechanisms.draw_exponential`).
  If the best leads every one of the other m - 1 by at least L, P(best) = 1 / (1 + sum_j
  exp(-eps (u_best - u_j) / (2 Du))) >= 1 / (1 + (m - 1) exp(-eps L / (2 Du))), for every table.

OpenDP may widen a scale by a few ulps to certify it (:func:`dpdesk.core.mechanisms._int_scale`); every
statement here is made at a scale 10^-12 wider (:data:`SCALE_MARGIN`), which covers it.

Solving (:func:`solve_epsilon`): each of these is monotone in epsilon (more epsilon, less noise, smaller
error), so the smallest epsilon meeting the target is found by bisection on the design rescaled to each
trial epsilon, then rounded UP to 4 significant digits (:func:`round_up`), and checked once more on the
query's real design; deterministic, so a saved plan reads back to the same epsilon.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from dpdesk.core.errors import PlanError
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.plan_base import AccuracyTarget, Plan, QuerySpec
    from dpdesk.core.queries import Component, QueryDesign

#: Statements are made at a noise scale this much wider than designed (OpenDP's ulp nudges).
SCALE_MARGIN = 1e-12
#: Solved epsilons are rounded up to this many significant digits.
EPSILON_DIGITS = 4
#: Up to this sigma (in grid steps) the discrete Gaussian tail is summed term by term.
_DGAUSS_SUM_UP_TO = 1000.0
#: The accuracy kinds a statistic declares (:attr:`dpdesk.core.statistics.base.Statistic.accuracy_kind`).
VALUE, RATIO, RANK, LEAD = "value", "ratio", "rank", "lead"


# ----------------------------------------------------------------------------- exact tails


def dlap_tail(scale: float, k: int) -> float:
    """P(|Z| > k) for the discrete Laplace P(x) ~ exp(-|x| / scale) on the integers: 2 r^(k+1) / (1 + r).

    >>> round(dlap_tail(10.0, 30), 5)
    0.04756
    """
    r = math.exp(-1.0 / scale)
    return 2.0 * math.exp(-(k + 1) / scale) / (1.0 + r)


def dgauss_tail(sigma: float, k: int) -> float:
    """P(|Z| > k) for the discrete Gaussian P(x) ~ exp(-x^2 / (2 sigma^2)) on the integers, or above it.

    Summed for sigma <= 1000; beyond, the upper bound erfc(k / (sigma sqrt 2)) (see the module's notes).
    """
    if sigma > _DGAUSS_SUM_UP_TO:
        return math.erfc(k / (sigma * math.sqrt(2.0)))
    top = k + math.ceil(40.0 * sigma) + 2
    w = [math.exp(-(x * x) / (2.0 * sigma * sigma)) for x in range(top + 1)]
    total = w[0] + 2.0 * math.fsum(w[1:])
    return min(1.0, 2.0 * math.fsum(w[k + 1 :]) / total)


def _tail(comp: Component, k: int) -> float:
    s = comp.scale / comp.grid * (1.0 + SCALE_MARGIN)
    return dlap_tail(s, k) if comp.mechanism == "laplace" else dgauss_tail(s, k)


def noise_steps(comp: Component, confidence: float) -> int:
    """The smallest whole k with P(|Z| <= k) >= confidence for the component's noise (in grid steps).

    The tail is non-increasing in k: a galloping search from the closed-form guess, then bisection, so a
    huge scale (where neighbouring tails are equal in floating point) costs a few dozen evaluations, not a
    walk of one step at a time.
    """
    alpha = 1.0 - confidence
    if not 0.0 < alpha < 1.0:
        raise ValueError("the confidence must lie strictly between 0 and 1")
    s = comp.scale / comp.grid * (1.0 + SCALE_MARGIN)
    if comp.mechanism == "laplace":
        guess = -s * math.log(alpha * (1.0 + math.exp(-1.0 / s)) / 2.0) - 1.0
    else:
        guess = -NormalDist().inv_cdf(alpha / 2.0) * s  # the upper quantile, stable for a tiny alpha
    k = max(0, math.ceil(guess))
    if _tail(comp, k) <= alpha:  # k meets it: find a lower k that does not (or 0)
        hi, step = k, 1
        lo = hi - step
        while lo >= 0 and _tail(comp, lo) <= alpha:
            hi, step = lo, step * 2
            lo = hi - step
        if lo < 0:
            if _tail(comp, 0) <= alpha:
                return 0
            lo = 0
    else:  # k does not meet it: find a higher k that does
        lo, step = k, 1
        hi = lo + step
        while _tail(comp, hi) > alpha:
            lo, step = hi, step * 2
            hi = lo + step
    while hi - lo > 1:  # invariant: tail(lo) > alpha >= tail(hi)
        mid = (lo + hi) // 2
        if _tail(comp, mid) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi


def noise_halfwidth(comp: Component, confidence: float) -> float:
    """The error (natural units) that the component's noise stays within with this probability."""
    return noise_steps(comp, confidence) * comp.grid


# ----------------------------------------------------------------------------- accuracy statements


@dataclass(frozen=True)
class Accuracy:
    """A query's accuracy in its own units, from the plan alone (public).

    ``kind``: "value" (count, sum, histogram: +-error in the column's units, exact), "ratio" (mean,
    proportion: +-error for every table of ``rows`` rows; None without expected_rows, then ``parts``),
    "rank" (quantile: the rank within +-error of q n; ``percentiles`` with expected_rows) or "lead"
    (mode, select: the best candidate wins with probability ``confidence`` when it leads by ``error``).
    """

    kind: str
    confidence: float
    error: float | None
    cells: int = 1
    together: bool = False
    rows: int | None = None
    #: a ratio's per-group rows are expected_rows split evenly (the groups' sizes are not public)
    per_group: bool = False
    percentiles: tuple[float, float] | None = None
    #: ratio without expected_rows: the two noises' half-widths at 1 - (1 - c)/2 (label, +-value)
    parts: tuple[tuple[str, float], ...] = ()
    #: the units when not the column's: a lead's "rows" (mode; "" for select: the utility's own units), a
    #: ratio's "share" (proportion; "" for mean: the column's units)
    unit: str = ""
    #: a quantile: whether the candidates cover every value the column can take (else a candidate may lie
    #: far from the true quantile, and the rank error holds only among the candidates)
    exact_candidates: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def sentence(self) -> str:
        """The statement in words (translated)."""
        pct = f"{self.confidence * 100:.4g}%"
        if self.kind == VALUE:
            if self.cells > 1:
                return (
                    _("all {n} cells are within ±{e} of their true values together with probability {p}")
                    if self.together
                    else _("each of the {n} cells is within ±{e} of its true value with probability {p}")
                ).format(n=self.cells, e=_fmt(self.error), p=pct)
            return _("the published value is within ±{e} of the true value with probability {p}").format(
                e=_fmt(self.error), p=pct
            )
        if self.kind == RATIO:
            if self.error is None:
                parts = "; ".join(f"{label} ±{_fmt(v)}" for label, v in self.parts)
                text = (
                    _(
                        "depends on the number of rows (state expected_rows for an error in share units, "
                        "from 0 to 1); the parts, each with probability {p}: {parts}"
                    )
                    if self.unit == "share"
                    else _(
                        "depends on the number of rows (state expected_rows for an error in the column's "
                        "units); the parts, each with probability {p}: {parts}"
                    )
                )
                return text.format(p=f"{(1.0 - (1.0 - self.confidence) / 2.0) * 100:.4g}%", parts=parts)
            if self.per_group:
                return _(
                    "each group's published value is within ±{e} of its true value with probability {p} "
                    "for a group of {n} rows (expected_rows split evenly among the groups), whatever the "
                    "values"
                ).format(e=_fmt(self.error), p=pct, n=self.rows)
            return _(
                "the published value is within ±{e} of the true value with probability {p} for every "
                "table of {n} rows (the plan's public estimate of the row count: fewer rows, a larger error)"
            ).format(e=_fmt(self.error), p=pct, n=self.rows)
        if self.kind == RANK:
            text = _("the released value's rank is within ±{r} of q·n with probability {p}").format(
                r=_fmt(self.error), p=pct
            )
            if self.percentiles is not None:
                lo, hi = self.percentiles
                text += _(": with {n} rows, between percentiles {lo} and {hi}").format(
                    n=self.rows, lo=_pct(lo), hi=_pct(hi)
                )
            if not self.exact_candidates:
                text += _(
                    ", if a candidate lies at the true quantile; the candidates do not cover every value, so "
                    "the released candidate may also be as far off as the gap between the true quantile and "
                    "the nearest candidate (add candidates to narrow it)"
                )
            return text
        if self.unit == "rows":
            return _(
                "if the largest category has at least {l} more rows than every other, it is chosen with "
                "probability at least {p}"
            ).format(l=_fmt(self.error), p=pct)
        return _(
            "if the best candidate's utility is at least {l} above every other's, it is chosen with "
            "probability at least {p}"
        ).format(l=_fmt(self.error), p=pct)

    def short(self) -> str:
        """The statement's short form, for the report's summary table (translated)."""
        pct = f"{self.confidence * 100:.4g}%"
        if self.kind == VALUE:
            if self.cells > 1:
                text = (_("±{e}, all cells together") if self.together else _("±{e} per cell")).format(
                    e=_fmt(self.error)
                )
            else:
                text = f"±{_fmt(self.error)}"
        elif self.kind == RATIO:
            if self.error is None:
                return _("depends on the number of rows")
            text = (_("±{e} per group of {n} rows") if self.per_group else _("±{e} at {n} rows")).format(
                e=_fmt(self.error), n=self.rows
            )
        elif self.kind == RANK:
            text = _("rank ±{r}").format(r=_fmt(self.error))
        else:
            text = _("right if it leads by {l}").format(l=_fmt(self.error))
        return f"{text} ({pct})"


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if abs(x) < 1e4 else f"{x:.6g}"


def _pct(x: float) -> str:
    return f"{x:.3g}"


def rounding_error(halfwidth: float) -> float:
    """Half the step a published value of this 95% interval half-width is rounded to (post-processing:
    :func:`dpdesk.core.values.rounded_row` keeps 3 significant digits of it); the step is taken at the
    larger side of a power of ten, so it is never below the release's."""
    from dpdesk.core.values import rounding_step

    return float(rounding_step(halfwidth * (1.0 + 1e-9))) / 2.0


def value_error(design: QueryDesign, confidence: float, together: bool = False) -> float:
    """Count, sum, histogram: the error every cell (or, ``together``, all cells at once) stays within,
    the noise's and, where the value is not whole, its rounding to 3 significant digits of the interval."""
    from dpdesk.core.queries import interval_halfwidth

    (comp,) = design.components
    cells = len(design.cells)
    per_cell = confidence ** (1.0 / cells) if together and cells > 1 else confidence
    rounding = 0.0 if comp.grid >= 1.0 else rounding_error(interval_halfwidth(comp))
    return noise_halfwidth(comp, per_cell) + rounding


def ratio_error(design: QueryDesign, h: float, width: float, n: int, confidence: float) -> float:
    """Mean, proportion: min(U - L, (a_s + h a_n) / (n - a_n)), a_s and a_n at 1 - (1 - c)/2 each
    (a union bound; see the module's notes), for every table of ``n`` rows; U - L when n - a_n < 1."""
    count_c, sum_c = design.components
    each = 1.0 - (1.0 - confidence) / 2.0
    a_n, a_s = noise_halfwidth(count_c, each), noise_halfwidth(sum_c, each)
    if n - a_n < 1:
        return width
    # plus the published value's rounding: its interval's half-width is at most U - L
    return min(width, (a_s + h * a_n) / (n - a_n) + rounding_error(width))


def _em(design: QueryDesign) -> tuple[float, float, int]:
    (comp,) = design.components
    assert design.candidates is not None
    return comp.epsilon / (1.0 + SCALE_MARGIN), comp.l1, len(design.candidates)


def rank_error(design: QueryDesign, confidence: float) -> float:
    """Quantile: R = 2 Du (ln m + ln(1/(1 - c))) / eps."""
    eps, du, m = _em(design)
    return 2.0 * du * (math.log(m) + math.log(1.0 / (1.0 - confidence))) / eps


def lead_probability(design: QueryDesign, lead: float) -> float:
    """Mode, select: P(best) >= 1 / (1 + (m - 1) exp(-eps L / (2 Du))) when it leads every other by L."""
    eps, du, m = _em(design)
    return 1.0 / (1.0 + (m - 1) * math.exp(-eps * lead / (2.0 * du)))


def lead_for(design: QueryDesign, confidence: float) -> float:
    """The lead L at which the best candidate wins with this probability: 2 Du ln((m-1) c/(1-c)) / eps."""
    eps, du, m = _em(design)
    return max(0.0, 2.0 * du * math.log((m - 1) * confidence / (1.0 - confidence)) / eps)


def _ratio_shape(design: QueryDesign, plan: Plan) -> tuple[float, float]:
    """(h, U - L) of a mean or a proportion: the largest |x - mid| (on the grid) and the bounds' width."""
    from dpdesk.core import statistics

    return statistics.get(design.spec.statistic).ratio_shape(design.spec, plan)


def _rows_per_cell(design: QueryDesign, plan: Plan) -> int | None:
    if plan.expected_rows is None:
        return None
    if design.spec.group_by is None:
        return plan.expected_rows
    return max(1, plan.expected_rows // max(1, len(design.cells)))


def query_accuracy(design: QueryDesign, plan: Plan, confidence: float = 0.95) -> Accuracy:
    """The query's accuracy in its own units (with a query's target: at the target's confidence)."""
    from dpdesk.core import statistics

    target = design.spec.accuracy
    if target is not None:
        confidence = target.confidence
    kind = statistics.get(design.spec.statistic).accuracy_kind
    n = plan.expected_rows
    if kind == VALUE:
        together = target is not None and target.cells == "all" and len(design.cells) > 1
        return Accuracy(
            VALUE, confidence, value_error(design, confidence, together), len(design.cells), together
        )
    if kind == RATIO:
        unit = statistics.get(design.spec.statistic).accuracy_unit
        rows = _rows_per_cell(design, plan)
        if rows is None:
            each = 1.0 - (1.0 - confidence) / 2.0
            parts = tuple((c.label, noise_halfwidth(c, each)) for c in design.components)
            return Accuracy(RATIO, confidence, None, len(design.cells), parts=parts, unit=unit)
        h, width = _ratio_shape(design, plan)
        err = ratio_error(design, h, width, rows, confidence)
        return Accuracy(
            RATIO,
            confidence,
            err,
            len(design.cells),
            rows=rows,
            per_group=design.spec.group_by is not None,
            unit=unit,
        )
    if kind == RANK:
        r = rank_error(design, confidence)
        pcts = None
        if n is not None:
            q = float(getattr(design.spec, "q", 0.5))
            pcts = (max(0.0, 100.0 * (q - r / n)), min(100.0, 100.0 * (q + r / n)))
        return Accuracy(RANK, confidence, r, rows=n, percentiles=pcts, exact_candidates=design.rank_exact)
    from dpdesk.core import statistics

    unit = statistics.get(design.spec.statistic).accuracy_unit
    return Accuracy(LEAD, confidence, lead_for(design, confidence), unit=unit)


def meets(design: QueryDesign, plan: Plan, target: AccuracyTarget) -> bool:
    """Whether the design meets the target (see the module's notes for what each statistic's target means)."""
    from dpdesk.core import statistics

    kind = statistics.get(design.spec.statistic).accuracy_kind
    c = target.confidence
    if kind == VALUE:
        return value_error(design, c, target.cells == "all") <= target.error
    if kind == RATIO:
        rows = _rows_per_cell(design, plan)
        assert rows is not None
        h, width = _ratio_shape(design, plan)
        return ratio_error(design, h, width, rows, c) <= target.error
    if kind == RANK:
        return rank_error(design, c) <= target.error
    return lead_probability(design, target.error) >= c


# ----------------------------------------------------------------------------- accuracy first


def rescaled(design: QueryDesign, epsilon: float) -> QueryDesign:
    """The design at another epsilon (each component keeps its share of it), for the solver's trials."""
    from dpdesk.core.queries import _noise_component

    spec = design.spec
    comps = []
    for c in design.components:
        eps = epsilon * (c.epsilon / spec.epsilon)
        if c.mechanism == "exponential":
            comps.append(dataclasses.replace(c, epsilon=eps, scale=2.0 * c.l1 / eps))
        else:
            comps.append(
                _noise_component(
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
    from dpdesk.core import statistics

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
    if kind == RATIO and plan.expected_rows is None:
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


def solve_epsilon(design: QueryDesign, plan: Plan, target: AccuracyTarget, key: str) -> float:
    """The smallest epsilon (rounded up to 4 significant digits) whose design meets the target.

    Raises :class:`PlanError` naming the query when no epsilon up to 100 meets it.
    """
    from dpdesk.core.plan_base import MIN_EPSILON

    _check_target(design, plan, target, key)
    top = 100.0

    def ok(eps: float) -> bool:
        return meets(rescaled(design, eps), plan, target)

    if not ok(top):
        raise PlanError(
            f"{key}.accuracy",
            _("no epsilon up to {top} meets this target: allow a larger error or a lower confidence").format(
                top=f"{top:g}"
            ),
        )
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
    from dpdesk.core.plan_base import MIN_EPSILON
    from dpdesk.core.queries import design_query

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
