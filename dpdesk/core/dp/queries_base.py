"""What every query design is built of: the components, the fixed-point grid, the noise components and their
formulas, from public facts only (the theory is in :mod:`dpdesk.core.dp.queries`).

The statistics' modules (:mod:`dpdesk.core.dp.statistics`) build their designs from these; :mod:`dpdesk.core.dp.queries`,
above the statistics registry, hands each query to its statistic (:func:`~dpdesk.core.dp.queries.design_query`) and
re-exports everything here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.model.spec import ColumnSpec, Plan, QuerySpec, describe_where
from dpdesk.i18n import _

VALUE_BITS = 30  # |per-row grid value| <= 2^30; with at most 2^31 rows a sum stays below 2^61


@dataclass(frozen=True)
class Component:
    """One mechanism invocation of a query, with everything needed to trace it."""

    label: str
    kind: str  # "count", "sum", "centered_sum" or "utility"
    mechanism: str
    epsilon: float
    delta: float
    rho: float
    l1: float  # L1 sensitivity in natural units (for EM: the utility sensitivity)
    l2: float  # L2 sensitivity in natural units
    scale: float  # Laplace b or Gaussian sigma in natural units; for EM the Gumbel scale 2 Du / eps
    bound95: float | None
    unit: float  # resolution of the exact statistic: natural value = integer * unit
    formula: str
    derivation: str
    noise_unit: float = (
        0.0  # resolution of the noise grid (a power of two dividing ``unit``; 0: same as unit)
    )

    @property
    def grid(self) -> float:
        """The grid the noise is drawn on (natural value = noisy integer * grid)."""
        return self.noise_unit or self.unit

    @property
    def refine(self) -> int:
        """Exact integers are multiplied by this to put them on the noise grid."""
        return round(self.unit / self.grid)

    @property
    def sensitivity(self) -> float:
        """The sensitivity the mechanism is calibrated to (L2 for Gaussian, L1 otherwise)."""
        return self.l2 if self.mechanism == "gaussian" else self.l1


def interval_halfwidth(comp: Component, conf: float = 0.95) -> float:
    """Half-width of the released interval, exact for the discrete noise drawn on the component's grid."""
    scale = comp.scale / comp.grid
    if comp.mechanism == "laplace":
        t = mech.discrete_laplace_halfwidth(scale, conf)
    else:
        t = mech.discrete_gaussian_halfwidth(scale, conf)
    return float(t * comp.grid)


def value_spread(comp: Component) -> float:
    """The half-width a published count's or sum's rounding step is taken from: its 95% interval's, and at
    least one step of its noise grid (the interval is a single point when the noise is 0 with probability
    95% or more; the rounding then still follows the noise, never a whole unit)."""
    return max(interval_halfwidth(comp), comp.grid)


def ratio_halfwidths(count: Component, total: Component) -> tuple[float, float, float, float]:
    """A mean's or a proportion's (e_n, e_s, r_n, r_s): its count's and its sum's 97.5% half-widths, which
    make its 95% interval, and the same with the sum's at least one step of its noise grid, which make the
    spread its rounding step is taken from (never 0, and following the noise down at every epsilon: a share
    of n rows keeps digits down to about 1/(2n))."""
    e_n, e_s = interval_halfwidth(count, 0.975), interval_halfwidth(total, 0.975)
    return e_n, e_s, e_n, max(e_s, total.grid)


def ratio_interval(
    s: float, n: float, e_s: float, e_n: float, bounds: tuple[float, float]
) -> tuple[float, float]:
    """The interval of mid + (s +- e_s) / (n +- e_n) (the four ratios), clamped to the bounds [L, U];
    [L, U] when n - e_n <= 0."""
    lo, hi = bounds
    if n - e_n <= 0:
        return lo, hi
    mid = (lo + hi) / 2.0
    cands = [mid + (s + a) / (n + b) for a in (-e_s, e_s) for b in (-e_n, e_n)]
    return max(lo, min(cands)), min(hi, max(cands))


def to_natural(v: int, comp: Component) -> float | int:
    """A noisy integer on the noise grid, in natural units (an int when the grid is whole)."""
    g = comp.grid
    if g >= 1.0:
        return int(v) * int(g)
    return float(v * g)


@dataclass(frozen=True)
class QueryDesign:
    """The public design of one query: its cells, its components and their cost."""

    spec: QuerySpec
    components: tuple[Component, ...]
    cells: tuple[str, ...]  # one label per released value ("" for a scalar)
    candidates: tuple[Any, ...] | None = None  # for quantile, mode, select
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: For the exponential mechanism: (utility gap, probability that the better of two candidates wins).
    selection_curve: tuple[tuple[float, float], ...] = ()
    #: For a quantile: R such that the released value's rank is within +-R of q n with 95% probability
    #: (from public quantities only; see statistics/quantile.py).
    rank_error95: float | None = None
    #: For a quantile: whether some candidate is always an exact q-quantile (then R holds as stated).
    rank_exact: bool = False

    @property
    def epsilon(self) -> float:
        """The query's epsilon (its components compose sequentially)."""
        return self.spec.epsilon

    @property
    def delta(self) -> float:
        """The query's delta."""
        return self.spec.delta

    @property
    def rho(self) -> float:
        """The query's zCDP cost (sum over components)."""
        return sum(c.rho for c in self.components)


def rows_can_drop(spec: QuerySpec, plan: Plan) -> bool:
    """Whether a row of the table can be left out of this query's statistic (from the plan alone).

    A row drops out when the plan has an id column and the row's id is empty (every query), or when
    the query's column or its group_by column has the "drop" missing policy and the row's value
    there is missing: empty, unparsable, NaN, or (category column) outside the declared categories.
    Numeric values outside the bounds are clamped, never dropped; imputed values never drop. Under
    ``replace`` such a row's neighbour may have a value, which widens the sum's sensitivity.

    A query with a public row condition (``where``) counts only the rows that meet it, so under ``replace`` a
    neighbour may move a row out of it (a row that drops out) or into it: the same case, for every statistic.
    """
    if plan.privacy_unit.id_column is not None or spec.where:
        return True
    return any(name is not None and plan.columns[name].missing.drops for name in (spec.column, spec.group_by))


def _drop_causes(spec: QuerySpec, plan: Plan) -> str:
    """The ways a row can drop out of this query, for the derivation text."""
    causes = []
    if plan.privacy_unit.id_column is not None:
        causes.append(_("an empty id in {col}").format(col=plan.privacy_unit.id_column))
    for name in (spec.column, spec.group_by):
        if name is not None and plan.columns[name].missing.drops:
            if plan.columns[name].type == "category":
                causes.append(_("an empty or undeclared value in {col}").format(col=name))
            else:
                causes.append(_("an empty, unparsable or NaN value in {col}").format(col=name))
    if spec.where:
        causes.append(
            _("a row that moves across the condition ({cond})").format(cond=describe_where(spec.where))
        )
    return "; ".join(causes)


def grid_exponent(spec: ColumnSpec) -> int:
    """Fixed-point exponent s for a numeric column: values are held as integers times 2^-s.

    Chosen from the public bounds only, so that max(|L|, |U|) * 2^s <= 2^30. Integer columns use
    s = 0 (exact integers) unless their bounds exceed 2^30.
    """
    assert spec.bounds is not None
    m = max(abs(spec.bounds[0]), abs(spec.bounds[1]))
    s = VALUE_BITS - math.ceil(math.log2(m)) if m > 0 else VALUE_BITS
    if spec.type == "int":
        return min(0, s)
    return s


def grid_bounds(spec: ColumnSpec) -> tuple[int, int, int]:
    """(s, L_int, U_int): the grid exponent and the bounds on the grid (round half to even)."""
    s = grid_exponent(spec)
    assert spec.bounds is not None
    lo = round(math.ldexp(spec.bounds[0], s))
    hi = round(math.ldexp(spec.bounds[1], s))
    return s, lo, hi


QUANTILE_MAX_DENOMINATOR = 10**9


def quantile_fraction(q: float) -> Fraction:
    """q as the exact fraction written in the plan: the shortest decimal that reads back as the float.

    0.1 is 1/10 (not the binary double nearest to it), so q n is exact and a tie at u = 0 is never lost
    to rounding. The denominator is kept at most 10^9 (a q with more decimals is rounded to the
    nearest such fraction), so that den * #rows stays far inside int64. The score and its
    sensitivity both use this fraction.

    >>> quantile_fraction(0.1), quantile_fraction(0.25), quantile_fraction(1 / 3)
    (Fraction(1, 10), Fraction(1, 4), Fraction(1, 3))
    """
    return Fraction(repr(float(q))).limit_denominator(QUANTILE_MAX_DENOMINATOR)


def float_up(x: Fraction) -> float:
    """The smallest float >= x (a sensitivity is rounded up, never down)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def covers_every_whole_number(cands: tuple[Any, ...], col: ColumnSpec) -> bool:
    """Whether an int column's candidates include every whole number in its whole-number bounds.

    Then some candidate is always an exact q-quantile of the clamped values (see statistics/quantile.py).
    """
    if col.type != "int" or col.bounds is None:
        return False
    lo, hi = col.bounds
    if lo != math.floor(lo) or hi != math.floor(hi) or hi - lo + 1 > len(cands):
        return False
    have = {float(c) for c in cands}
    return all(float(v) in have for v in range(int(lo), int(hi) + 1))


def fmt_formula(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def noise_component(
    label: str,
    kind: str,
    mechanism: str,
    calibration: str,
    epsilon: float,
    delta: float,
    l1: float,
    l2: float,
    unit: float,
    derivation: str,
) -> Component:
    if mechanism == "laplace":
        b = mech.laplace_scale(l1, epsilon)
        formula = _("b = sensitivity / epsilon = {s} / {e} = {b}").format(
            s=fmt_formula(l1), e=fmt_formula(epsilon), b=fmt_formula(b)
        )
        return Component(
            label,
            kind,
            mechanism,
            epsilon,
            0.0,
            epsilon**2 / 2.0,
            l1,
            l2,
            b,
            mech.laplace_bound(b),
            unit,
            formula,
            derivation,
        )
    if calibration == "classic":
        sigma = mech.classic_sigma(l2, epsilon, delta)
        formula = _(
            "sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon = sqrt(2 ln(1.25/{d})) * {s} / {e} = {sigma}"
        ).format(d=f"{delta:g}", s=fmt_formula(l2), e=fmt_formula(epsilon), sigma=fmt_formula(sigma))
    else:
        # 1e-9 relative margin for drawing a discrete Gaussian on the noise grid (see gaussian_grid)
        sigma = mech.analytic_sigma(l2, epsilon, delta * (1.0 - DISCRETE_MARGIN))
        formula = _(
            "sigma = smallest s with Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) <= delta "
            "(analytic Gaussian, Balle & Wang 2018), D = {s}, eps = {e}, delta = {d}: sigma = {sigma}"
        ).format(s=fmt_formula(l2), e=fmt_formula(epsilon), d=f"{delta:g}", sigma=fmt_formula(sigma))
    return Component(
        label,
        kind,
        mechanism,
        epsilon,
        delta,
        mech.gaussian_rho(l2, sigma),
        l1,
        l2,
        sigma,
        mech.gaussian_bound(sigma),
        unit,
        formula,
        derivation,
        gaussian_grid(sigma, unit),
    )


#: Gaussian noise is drawn on a grid at least 2^20 times finer than sigma.
GAUSSIAN_GRID_BITS = 20


#: Relative delta margin of the analytic calibration for the discrete-vs-continuous gap (measured
#: about (h/sigma)^2, i.e. ~1e-12 at sigma/h = 2^20; tests/core/test_formulas.py).
DISCRETE_MARGIN = 1e-9


def gaussian_grid(sigma: float, unit: float) -> float:
    """The grid for Gaussian noise: ``unit``, or a finer power of two so that sigma >= 2^20 grid steps.

    OpenDP draws a discrete Gaussian. The classic and analytic calibrations are theorems about the
    continuous Gaussian. On the integers (h = 1, small sigma) the exact delta of the discrete
    Gaussian (Canonne, Kamath & Steinke 2020, Thm 7) at the analytic sigma can exceed the target by
    10%; on a grid of step h the relative gap shrinks about like (h/sigma)^2 (measured: 1e-3 at
    sigma/h = 9, 1e-8 at 9,000), so at sigma/h >= 2^20 it is ~1e-12, inside the analytic
    calibration's 1e-9 margin (:data:`DISCRETE_MARGIN`) and far inside the classic formula's slack.
    """
    h = unit
    while sigma / h < 2.0**GAUSSIAN_GRID_BITS:
        h /= 2.0
    return h


def group_cells(spec: QuerySpec, plan: Plan) -> tuple[str, ...] | None:
    """The categories of the query's group_by column (None: not grouped)."""
    if spec.group_by is None:
        return None
    groups = plan.columns[spec.group_by].categories
    assert groups is not None
    return groups


def exponential_component(
    label: str, epsilon: float, du: float, n: int, utility: str, derivation: str
) -> Component:
    """The exponential mechanism's component: Du, the Gumbel scale and the formula with its 95% statements."""
    eps = epsilon
    gumbel = 2.0 * du / eps
    gap95 = mech.em_gap_for(0.95, eps, du)
    loss95 = 2 * du * (math.log(n) + mech.LN20) / eps
    formula = _(
        "P(r) proportional to exp(epsilon u(r) / (2 Du)) = exp({e} u(r) / (2 x {du})); {utility}. "
        "The better of two candidates is picked with 95% probability when their utilities differ by "
        "{gap}; with {n} candidates the chosen utility is within 2 Du (ln {n} + ln 20) / epsilon = "
        "{bound} of the best with 95% probability"
    ).format(
        e=fmt_formula(eps),
        du=fmt_formula(du),
        utility=utility,
        gap=fmt_formula(gap95),
        n=n,
        bound=fmt_formula(loss95),
    )
    return Component(
        label,
        "utility",
        "exponential",
        eps,
        0.0,
        eps**2 / 8.0,
        du,
        du,
        gumbel,
        None,
        1.0,
        formula,
        derivation,
    )


def em_curve(epsilon: float, du: float) -> tuple[tuple[float, float], ...]:
    """Probability that the better of two candidates is chosen, for utility gaps around the 95% gap."""
    g95 = mech.em_gap_for(0.95, epsilon, du)
    gaps = [g95 * f for f in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)]
    return tuple((g, mech.em_probabilities([g, 0.0], epsilon, du)[0]) for g in gaps)
