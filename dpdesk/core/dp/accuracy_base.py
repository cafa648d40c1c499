"""What a statistic's accuracy is stated with, from the plan alone: the exact noise tails, the error of each
accuracy kind and the statement (:class:`Accuracy`). The derivations, and solving an epsilon from a target, are
:mod:`dpdesk.core.dp.accuracy`, above the statistics registry; it re-exports everything here. The statistics'
modules (:mod:`dpdesk.core.dp.statistics`) import this one.
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
    from dpdesk.core.dp.queries_base import Component, QueryDesign
    from dpdesk.core.model.spec import Plan, QuerySpec

#: Statements are made at a noise scale this much wider than designed (OpenDP's ulp nudges).
SCALE_MARGIN = 1e-12


#: Up to this sigma (in grid steps) the discrete Gaussian tail is summed term by term.
_DGAUSS_SUM_UP_TO = 1000.0


#: The accuracy kinds a statistic declares (:attr:`dpdesk.core.dp.statistics.base.Statistic.accuracy_kind`).
VALUE, RATIO, RANK, LEAD, SPREAD = "value", "ratio", "rank", "lead", "spread"


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
    #: a ratio's or a quantile's per-group rows are expected_rows split evenly (the groups' sizes are not public)
    per_group: bool = False
    #: the rows are those that meet the query's public condition (``where``): ``rows`` is the query's own estimate
    subset: bool = False
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
            if self.subset:
                return _(
                    "the published value is within ±{e} of the true value with probability {p} for every set of "
                    "{n} rows that meet its condition (the query's public estimate of them: fewer rows, a larger "
                    "error)"
                ).format(e=_fmt(self.error), p=pct, n=self.rows)
            return _(
                "the published value is within ±{e} of the true value with probability {p} for every "
                "table of {n} rows (the plan's public estimate of the row count: fewer rows, a larger error)"
            ).format(e=_fmt(self.error), p=pct, n=self.rows)
        if self.kind == SPREAD:
            if self.error is None:
                parts = "; ".join(f"{label} ±{_fmt(v)}" for label, v in self.parts)
                return _(
                    "depends on the number of rows (state expected_rows for an error in the column's units); "
                    "the parts, each with probability {p}: {parts}"
                ).format(p=f"{(1.0 - (1.0 - self.confidence) / 3.0) * 100:.4g}%", parts=parts)
            text = (
                _(
                    "each group's published value is within ±{e} of its true sample value (divisor n - 1) with "
                    "probability {p} for a group of {n} rows (expected_rows split evenly among the groups), "
                    "whatever the values"
                )
                if self.per_group
                else _(
                    "the published value is within ±{e} of the true sample value (divisor n - 1) with "
                    "probability {p} for every set of {n} rows that meet its condition (the query's public "
                    "estimate of them: fewer rows, a larger error)"
                )
                if self.subset
                else _(
                    "the published value is within ±{e} of the true sample value (divisor n - 1) with "
                    "probability {p} for every table of {n} rows (the plan's public estimate of the row count: "
                    "fewer rows, a larger error)"
                )
            ).format(e=_fmt(self.error), p=pct, n=self.rows)
            if self.unit == "squared":
                text += _(" (in the column's units squared)")
            return text
        if self.kind == RANK:
            if self.per_group:
                text = _(
                    "each group's released value's rank is within ±{r} of q·n_g (n_g: the group's rows) with "
                    "probability {p}"
                ).format(r=_fmt(self.error), p=pct)
            else:
                text = _("the released value's rank is within ±{r} of q·n with probability {p}").format(
                    r=_fmt(self.error), p=pct
                )
            if self.percentiles is not None and self.per_group:
                lo, hi = self.percentiles
                text += _(
                    ": for a group of {n} rows (expected_rows split evenly among the groups), between "
                    "percentiles {lo} and {hi}"
                ).format(n=self.rows, lo=_pct(lo), hi=_pct(hi))
            elif self.percentiles is not None:
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
        elif self.kind in (RATIO, SPREAD):
            if self.error is None:
                return _("depends on the number of rows")
            text = (_("±{e} per group of {n} rows") if self.per_group else _("±{e} at {n} rows")).format(
                e=_fmt(self.error), n=self.rows
            )
        elif self.kind == RANK:
            text = (_("rank ±{r} per group") if self.per_group else _("rank ±{r}")).format(r=_fmt(self.error))
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
    :func:`dpdesk.core.dp.values.rounded_row` keeps 3 significant digits of it); the step is taken at the
    larger side of a power of ten, so it is never below the release's."""
    from dpdesk.core.dp.values import rounding_step

    return float(rounding_step(halfwidth * (1.0 + 1e-9))) / 2.0


def value_error(design: QueryDesign, confidence: float, together: bool = False) -> float:
    """Count, sum, histogram: the error every cell (or, ``together``, all cells at once) stays within,
    the noise's and, where the value is not whole, its rounding to 3 significant digits of the interval."""
    from dpdesk.core.dp.queries_base import value_spread

    (comp,) = design.components
    cells = len(design.cells)
    per_cell = confidence ** (1.0 / cells) if together and cells > 1 else confidence
    # the published value is rounded to 3 significant digits of its noise's spread (public: from the design)
    rounding = 0.0 if comp.grid >= 1.0 else rounding_error(value_spread(comp))
    return noise_halfwidth(comp, per_cell) + rounding


#: The share of a mean's or a proportion's failure probability 1 - c set aside for its rounding bound
#: (:func:`ratio_error`): the noise gets (1 - c)(1 - this), the rounding's event the rest.
RATIO_ROUNDING_SHARE = 0.02
#: The count's noise is cut into bins of this many per noise scale, up to this many scales (beyond: failure).
_BINS_PER_SCALE = 64
_SCALES = 14


def _up(comp: Component, x: Any) -> Any:
    """P(Z g > x) for the component's noise Z on its grid g, elementwise over the array ``x``: exact for the
    discrete Laplace (P(Z > k) = r^(k+1) / (1 + r) for k >= 0, 1 - P(Z > -k - 1) below), and for the
    discrete Gaussian the upper bound Q(k / s) of :func:`dgauss_tail` for k >= 0 (1 below 0)."""
    import numpy as np

    g = comp.grid
    s = comp.scale / g * (1.0 + SCALE_MARGIN)
    k = np.floor(np.asarray(x, dtype=np.float64) / g)
    if comp.mechanism == "laplace":
        q = 1.0 / (1.0 + math.exp(-1.0 / s))
        pos = np.exp(-(np.maximum(k, 0.0) + 1.0) / s) * q
        neg = 1.0 - np.exp(-(np.maximum(-k - 1.0, 0.0) + 1.0) / s) * q
        return np.where(k >= 0, pos, neg)
    if s > _DGAUSS_SUM_UP_TO:
        erfc = np.frompyfunc(math.erfc, 1, 1)
        pos = 0.5 * np.asarray(erfc(np.maximum(k, 0.0) / (s * math.sqrt(2.0))), dtype=np.float64)
    else:  # pragma: no cover - dpdesk's Gaussian grids keep s >= 2^20 (queries_base.gaussian_grid)
        pos = np.asarray([dgauss_tail(s, int(v)) / 2.0 if v >= 0 else 1.0 for v in np.ravel(k)])
        pos = pos.reshape(k.shape)
    return np.where(k >= 0, pos, 1.0)


def ratio_failure(design: QueryDesign, h: float, n: int, t: float) -> float:
    """An upper bound on P(|S~ / max(1, n~) - S / n| > t) for EVERY table of n rows (|S| <= h n): the
    error of a mean or a proportion before it is clamped (which only brings it closer) and rounded.

    With Z_n = y (the count's noise) and n + y >= 1, the error is (Z_s - r y) / (n + y), r = S / n in
    [-h, h], and fails when |Z_s g - c| > T, c = r y, |c| <= C = h |y|, T = t (n + y). By the symmetry of
    the sum's noise, P(|Z_s g - c| > T) = P(Z_s g > T + c) + P(Z_s g > T - c) =: G(c). Its noise is
    symmetric and unimodal on its grid g, so X = Z_s g + U (U uniform on (-g/2, g/2)) has a density
    non-increasing in |x|, and P(Z_s g > x) <= P(X > x - g/2), P(X > x) <= P(Z_s g > x - g/2). For
    continuous X, P(X > T' + c) + P(X > T' - c) grows with c in [0, C] when T' >= 0 (its derivative is
    f(T' - c) - f(T' + c) >= 0). So with T' = T - g/2 >= 0: G(c) <= P(Z_s g > T + C - g) +
    P(Z_s g > T - C - g), for every r; a failure when T < g/2. Both thresholds are smaller at -|y| than
    at +|y| (T + C: tn + (h - t)|y| <= tn + (t + h)|y|; T - C: tn - (t + h)|y| <= tn + (t - h)|y|), so
    the bound at -|y| holds for both signs. |y| is cut into bins of width w (1/64 of
    the count's noise scale, on its grid); on a bin the bound is taken at the bin's worst ends, F_j, then
    made non-decreasing in j (F^_j = max over i <= j); a bin past 14 scales, or one that reaches
    n + y < 1, counts as a failure. So the probability is at most E[F^(J)], J the bin of |Z_n|,
    = F^_0 + sum_j (F^_j - F^_(j-1)) P(|Z_n| > u_(j-1)) + (1 - F^_K) P(|Z_n| > u_K), in which each
    P(|Z_n| > u) may be an upper bound (its weight is never negative). The union bound over the two parts
    (each within its half-width at 1 - (1 - c)/2) adds their half-widths, which costs about 1.8 times the
    epsilon when the two noises are alike (a mean at the bounds); this bound overstates the worst table's
    error by a few percent (tests/core/test_honest_numbers.py).
    """
    import numpy as np

    count_c, sum_c = design.components
    gn = count_c.grid
    w = max(gn, math.floor(count_c.scale / _BINS_PER_SCALE / gn) * gn)
    u = np.arange(_BINS_PER_SCALE * _SCALES + 1, dtype=np.float64) * w
    a, b = u[:-1], u[1:]
    gs = sum_c.grid
    tn = t * n
    # y = -v, v in [a, b]: T + C = tn + (h - t) v and T - C = tn - (t + h) v, each taken at its smaller end;
    # y = +v gives tn + (t + h) v and tn + (t - h) v, never smaller, so the negative side bounds both
    f = _up(sum_c, np.minimum(tn + (h - t) * a, tn + (h - t) * b) - gs) + _up(sum_c, tn - (t + h) * b - gs)
    f = np.minimum(1.0, f)
    f = np.where((n - b < 1.0) | (t * (n - b) < gs / 2.0), 1.0, f)
    f0 = min(1.0, float(2.0 * _up(sum_c, np.asarray([tn]))[0])) if n >= 1 else 1.0
    env = np.maximum.accumulate(np.concatenate(([f0], f)))
    ks = np.floor(u / gn + 1e-9)
    tails = 2.0 * _up(count_c, (ks + 0.5) * gn)  # P(|Z_n| > u_j) = 2 P(Z_n > k_j), j = 0..K
    total = float(env[0] + np.sum(np.diff(env) * tails[:-1]) + (1.0 - env[-1]) * tails[-1])
    return min(1.0, total)


def ratio_error(design: QueryDesign, h: float, width: float, n: int, confidence: float) -> float:
    """Mean, proportion: the error the published value stays within with probability ``confidence`` for
    every table of ``n`` rows: the smallest t with :func:`ratio_failure` at most (1 - c)(1 - share),
    plus :func:`ratio_rounding` on an event of probability 1 - (1 - c) share (share =
    :data:`RATIO_ROUNDING_SHARE`); at most U - L (the value and the truth lie in [L, U])."""
    budget = (1.0 - confidence) * (1.0 - RATIO_ROUNDING_SHARE)
    rounding = ratio_rounding(design, h, width, n, confidence)
    if ratio_failure(design, h, n, width) > budget:
        return width
    lo, hi = 0.0, width  # invariant: failure(hi) <= budget
    for _step in range(60):
        mid = 0.5 * (lo + hi)
        if ratio_failure(design, h, n, mid) <= budget:
            hi = mid
        else:
            lo = mid
        if hi - lo <= hi * 1e-9:
            break
    return min(width, hi + rounding)


def ratio_meets(design: QueryDesign, h: float, width: float, n: int, confidence: float, error: float) -> bool:
    """Whether :func:`ratio_error` is at most ``error`` (without its search: one bound at error - rounding)."""
    if error >= width:
        return True
    t = error - ratio_rounding(design, h, width, n, confidence)
    if t <= 0:
        return False
    return ratio_failure(design, h, n, t) <= (1.0 - confidence) * (1.0 - RATIO_ROUNDING_SHARE)


def ratio_rounding(design: QueryDesign, h: float, width: float, n: int, confidence: float) -> float:
    """The most a mean or a proportion moves when it is rounded, with probability 1 - (1 - c) share.

    The published value is rounded to 3 significant digits of a spread (:func:`dpdesk.core.dp.values.rounded_row`,
    :func:`dpdesk.core.dp.statistics.mean.ratio_rows`): the largest distance from m = mid + S~/n~ to the four
    ratios mid + (S~ +- r_s) / (n~ +- r_n), clamped to [L, U], with r_n, r_s the components' 97.5%
    half-widths, r_s at least one step of the sum's noise grid
    (:func:`~dpdesk.core.dp.queries_base.ratio_halfwidths`); U - L when n~ - r_n <= 0. Each distance is
    |a - b r| / (n~ + b) <= (r_s + r_n |r|) / (n~ - r_n), r = S~/n~ (clamping is 1-Lipschitz). With
    |Z_n| <= a_n and |Z_s| <= a_s, each with probability 1 - (1 - c) share / 2: n~ >= n - a_n and
    |S~| <= h n + a_s, so |r| <= R = (h n + a_s) / (n - a_n), and the spread is at most
    B = (r_s + r_n R) / (n - a_n - r_n) (U - L when n - a_n - r_n <= 0), never above U - L. The rounding
    step grows with the spread, so the value moves by at most half the step at B.
    """
    from dpdesk.core.dp.queries_base import ratio_halfwidths

    count_c, sum_c = design.components
    each = 1.0 - (1.0 - confidence) * RATIO_ROUNDING_SHARE / 2.0
    a_n, a_s = noise_halfwidth(count_c, each), noise_halfwidth(sum_c, each)
    _e_n, _e_s, r_n, r_s = ratio_halfwidths(count_c, sum_c)
    den = n - a_n - r_n
    spread = width
    if den > 0:
        big_r = (h * n + a_s) / (n - a_n)
        spread = min(width, (r_s + r_n * big_r) / den)
    return rounding_error(spread)


#: The share of a variance's or a standard deviation's failure probability 1 - c set aside for its rounding
#: (:func:`spread_error`); each of the three noises gets a third of the rest.
SPREAD_ROUNDING_SHARE = 0.02
#: The confidence of each of the three noises' half-widths in a released variance's 95% interval.
SPREAD_INTERVAL_EACH = 1.0 - 0.05 / 3.0


def spread_bound(design: QueryDesign, h: float, n: float, each: float) -> float:
    """B(n): a bound on |v - V| for a variance released from n~ = n + Z_n, S~ = S + Z_s, Q~ = Q_r + Z_q (see
    :mod:`dpdesk.core.dp.statistics.variance`) when |Z_n| <= a_n, |Z_s| <= a_s, |Z_q| <= a_q, each noise's
    half-width at ``each``, for EVERY table of n >= 2 rows with centred values |c| <= h; inf when
    n - a_n <= 2.

    With m = max(2, n~), |m - n| <= a_n and m >= m_lo = n - a_n; D = Q - S^2/n = (n - 1) V in [0, n h^2 -
    S^2/n], e_q = Z_q + (Q_r - Q) with |Q_r - Q| <= n u_q/2 (each row's square rounded to its grid u_q):
    v - V = D (n - m) / ((m - 1)(n - 1)) + [S^2 (m - n) / (n m) - (2 S Z_s + Z_s^2) / m + e_q] / (m - 1).
    The S^2 terms are linear in S^2 in [0, h^2 n^2], so at most n h^2 a_n / (min(n - 1, m_lo)(m_lo - 1)); the
    others at most (2 h n a_s + a_s^2) / (m_lo (m_lo - 1)) and (a_q + n u_q / 2) / (m_lo - 1):
    B = [n h^2 a_n / min(n - 1, m_lo) + (2 h n a_s + a_s^2) / m_lo + a_q + n u_q / 2] / (m_lo - 1).
    B is non-increasing in n (each term is of the form (a n + b) / ((n - c)(n - d)) or n / ((n - c)(n - d))
    with c, d >= 0, and a jump from inf at n - a_n = 2), so a bound at a lower n holds at a higher one.
    """
    count_c, sum_c, sq_c = design.components
    a_n, a_s, a_q = (noise_halfwidth(c, each) for c in (count_c, sum_c, sq_c))
    m_lo = n - a_n
    if m_lo <= 2.0:
        return math.inf
    a_q += n * sq_c.unit / 2.0
    return (n * h * h * a_n / min(n - 1.0, m_lo) + (2.0 * h * n * a_s + a_s * a_s) / m_lo + a_q) / (
        m_lo - 1.0
    )


def spread_interval(design: QueryDesign, h: float, noisy_n: float) -> float:
    """A released variance's interval half-width: :func:`spread_bound` at the noisy count (m = max(2, n~)),
    each noise at 1 - 0.05/3 (post-processing of the noisy count; inf when the count is too noisy)."""
    return spread_bound(design, h, max(2.0, noisy_n), SPREAD_INTERVAL_EACH)


def spread_error(design: QueryDesign, h: float, n: int, confidence: float, root: bool) -> float:
    """Variance (``root`` False, units squared) or standard deviation (``root``, the column's units): the error
    the published value stays within with probability ``confidence`` for EVERY table of n rows.

    With alpha = 1 - c: the three noises each within their half-width at 1 - alpha (1 - share) / 3 (a union
    bound), so |clamp(v) - V| <= min(2 h^2, B(n)) (clamping to [0, 2 h^2], which holds V, only brings v
    closer); a standard deviation moves by at most the square root of that (|sqrt a - sqrt b| <= sqrt |a - b|).
    The published value is then rounded to 3 significant digits of its spread, min(2 h^2, B95(m)) for a
    variance, min(sqrt(2) h, sqrt(B95(m))) for a standard deviation (B95: :func:`spread_interval`), which
    grows as m = max(2, n~) falls: with probability 1 - alpha share, n~ >= n - a_n (a_n at 1 - alpha share),
    so the rounding moves it by at most half the step at B95(max(2, n - a_n)). The failures add up to at most
    alpha. At most the width of the released range (2 h^2, or sqrt(2) h).
    """
    alpha = 1.0 - confidence
    each = 1.0 - alpha * (1.0 - SPREAD_ROUNDING_SHARE) / 3.0
    width = 2.0 * h * h
    noise = min(width, spread_bound(design, h, float(n), each))
    a_n = noise_halfwidth(design.components[0], 1.0 - alpha * SPREAD_ROUNDING_SHARE)
    spread = min(width, spread_interval(design, h, n - a_n))
    if root:
        width = math.sqrt(width)
        return min(width, math.sqrt(noise) + rounding_error(max(min(width, math.sqrt(spread)), 1e-300)))
    return min(width, noise + rounding_error(max(spread, 1e-300)))


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


def query_rows(spec: QuerySpec, plan: Plan) -> int | None:
    """The public estimate of a query's rows: its own ``expected_rows``, else the plan's when the query reads
    every row; a query with a ``where`` and no estimate of its own has none (the plan's counts every row, and a
    subset's error stated at the table's size would be too small)."""
    if spec.expected_rows is not None:
        return spec.expected_rows
    return None if spec.where else plan.expected_rows


def _rows_per_cell(design: QueryDesign, plan: Plan) -> int | None:
    rows = query_rows(design.spec, plan)
    if rows is None:
        return None
    if design.spec.group_by is None:
        return rows
    return max(1, rows // max(1, len(design.cells)))


def statistic_accuracy(
    design: QueryDesign,
    plan: Plan,
    confidence: float,
    kind: str,
    unit: str,
    ratio_shape: Callable[[QuerySpec, Plan], tuple[float, float]],
) -> Accuracy:
    """The query's accuracy in its own units (with a query's target: at the target's confidence), by its
    statistic's accuracy kind and unit (:attr:`~dpdesk.core.dp.statistics.base.Statistic.accuracy_kind`,
    ``accuracy_unit``); ``ratio_shape``: a ratio statistic's (h, U - L) (its ``ratio_shape``)."""
    target = design.spec.accuracy
    if target is not None:
        confidence = target.confidence
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
            subset=bool(design.spec.where),
            unit=unit,
        )
    if kind == SPREAD:
        rows = _rows_per_cell(design, plan)
        if rows is None:
            each = 1.0 - (1.0 - confidence) / 3.0
            parts = tuple((c.label, noise_halfwidth(c, each)) for c in design.components)
            return Accuracy(SPREAD, confidence, None, len(design.cells), parts=parts, unit=unit)
        h, _width = ratio_shape(design.spec, plan)
        err = spread_error(design, h, rows, confidence, unit != "squared")
        return Accuracy(
            SPREAD,
            confidence,
            err,
            len(design.cells),
            rows=rows,
            per_group=design.spec.group_by is not None,
            subset=bool(design.spec.where),
            unit=unit,
        )
    if kind == RANK:
        r = rank_error(design, confidence)
        pcts = None
        # by group: each group's rank error on its own, its percentiles for a group of expected_rows / groups rows
        rows = _rows_per_cell(design, plan)
        if rows is not None:
            q = float(getattr(design.spec, "q", 0.5))
            pcts = (max(0.0, 100.0 * (q - r / rows)), min(100.0, 100.0 * (q + r / rows)))
        return Accuracy(
            RANK,
            confidence,
            r,
            len(design.cells),
            rows=rows,
            per_group=design.spec.group_by is not None,
            subset=bool(design.spec.where),
            percentiles=pcts,
            exact_candidates=design.rank_exact,
        )
    return Accuracy(LEAD, confidence, lead_for(design, confidence), unit=unit)
