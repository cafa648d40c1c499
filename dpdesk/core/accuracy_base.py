"""What a statistic's accuracy is stated with, from the plan alone: the exact noise tails, the error of each
accuracy kind and the statement (:class:`Accuracy`). The derivations, and solving an epsilon from a target, are
:mod:`dpdesk.core.accuracy`, above the statistics registry; it re-exports everything here. The statistics'
modules (:mod:`dpdesk.core.statistics`) import this one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.plan_base import Plan, QuerySpec
    from dpdesk.core.queries_base import Component, QueryDesign

#: Statements are made at a noise scale this much wider than designed (OpenDP's ulp nudges).
SCALE_MARGIN = 1e-12


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
    from dpdesk.core.queries_base import interval_halfwidth

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


def _rows_per_cell(design: QueryDesign, plan: Plan) -> int | None:
    if plan.expected_rows is None:
        return None
    if design.spec.group_by is None:
        return plan.expected_rows
    return max(1, plan.expected_rows // max(1, len(design.cells)))


def statistic_accuracy(
    design: QueryDesign,
    plan: Plan,
    confidence: float,
    kind: str,
    unit: str,
    ratio_shape: Callable[[QuerySpec, Plan], tuple[float, float]],
) -> Accuracy:
    """The query's accuracy in its own units (with a query's target: at the target's confidence), by its
    statistic's accuracy kind and unit (:attr:`~dpdesk.core.statistics.base.Statistic.accuracy_kind`,
    ``accuracy_unit``); ``ratio_shape``: a ratio statistic's (h, U - L) (its ``ratio_shape``)."""
    target = design.spec.accuracy
    if target is not None:
        confidence = target.confidence
    n = plan.expected_rows
    if kind == VALUE:
        together = target is not None and target.cells == "all" and len(design.cells) > 1
        return Accuracy(
            VALUE, confidence, value_error(design, confidence, together), len(design.cells), together
        )
    if kind == RATIO:
        rows = _rows_per_cell(design, plan)
        if rows is None:
            each = 1.0 - (1.0 - confidence) / 2.0
            parts = tuple((c.label, noise_halfwidth(c, each)) for c in design.components)
            return Accuracy(RATIO, confidence, None, len(design.cells), parts=parts, unit=unit)
        h, width = ratio_shape(design.spec, plan)
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
    return Accuracy(LEAD, confidence, lead_for(design, confidence), unit=unit)
