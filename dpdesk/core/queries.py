"""Query designs: sensitivity, noise scale, error bound and formula of every query, from public facts only.

A :class:`QueryDesign` is computed from the plan alone (no data): it is what the budget meter and
the noise preview show, and what the release uses to calibrate noise. Each query is made of one
or more :class:`Component` mechanisms (a mean is a noisy sum and a noisy count, each with half the
query's epsilon and delta).

Neighbouring relations, with k = max_rows_per_person and M = max(|L|, |U|):

* ``add_remove``: one person's rows (at most k) are added or removed.
* ``replace``: one person's rows (at most k) are replaced by as many rows with other values; the
  number of rows does not change. "Other values" include missing, unparsable and undeclared ones
  and an empty id, so a row of the statistic may **drop out** while its neighbour, with a value,
  does not (see :func:`rows_can_drop`).

Sensitivities (L1 for Laplace, L2 for Gaussian, Du for the exponential mechanism):

=====================  ======================  ==========================================
statistic              add_remove              replace
=====================  ======================  ==========================================
count                  k                       k (n does not change unless rows can drop)
sum                    k M                     k (U - L); k max(U - L, M) if rows can drop
histogram, grouped n   L1 = L2 = k             L1 = 2k, L2 = sqrt(2) k
grouped sum            L1 = L2 = k M           L1 = 2k M, L2 = k max(U - L, sqrt(2) M)
mean: sum of (x-mid)   k (U - L)/2             k (U - L)
mode utility           k                       k
quantile score (*)     k max(q, 1 - q)         k
select (revenue)       k max(candidates)       k max(candidates)
=====================  ======================  ==========================================

The grouped-sum L2 under replace is ``k max(U - L, sqrt(2) M)``, not ``sqrt(2) k M``: moving a
value from L to U inside one group changes that cell by U - L, which exceeds sqrt(2) M when L < 0 < U.

Rows that drop out under replace. Where rows can drop, a replace neighbour removes a set A of the
statistic's rows and adds a set B, with |A| <= k and |B| <= k (not necessarily |A| = |B|); values
are clamped to [L, U] and imputed values lie inside the bounds. Per statistic:

* ungrouped sum: the change is sum(B) - sum(A) <= |B| U - |A| L, at most k max(U - L, M) (A empty
  and B at the bound farther from zero, or A at L and B at U). This exceeds k (U - L) only when the
  bounds exclude zero: the one statistic whose sensitivity changes (tests/core/test_bruteforce.py
  reaches it);
* count: |B| - |A| lies in [-k, k]: k, as booked (no longer conservative);
* histogram and grouped count: at most k cells lose and k cells gain one per row: L1 <= 2k; the
  positive and negative parts of the change each have L1, hence L2, at most k: L2 <= sqrt(2) k;
* grouped sum: L1 <= sum |x| over A and B <= 2k M. For L2, cell g changes by at most
  c_g = max(b_g U - a_g L, a_g U - b_g L) (a_g, b_g the rows of A and B in g); sum c_g^2 is convex in
  (a, b), so over {a >= 0, sum a <= k} x {b >= 0, sum b <= k} its maximum is at a vertex: nothing,
  all k in one cell (k M), A and B in one cell (k (U - L)) or in two cells (sqrt(2) k M); hence
  L2 <= k max(U - L, sqrt(2) M), as booked;
* mean: its count is a count (k) and its sum of x - mid, with |x - mid| <= (U - L)/2 per row, moves
  by at most k (U - L)/2 + k (U - L)/2 = k (U - L), as booked, grouped or not;
* mode: each category's count changes by b_c - a_c in [-k, k]: Du = k;
* quantile: each removed or added row moves a = #(x<c) - q n and b = q n - #(x<=c) by an amount
  in [-q, 1 - q] or its negative, so k removed and k added rows move them by at most
  k q + k (1 - q) = k, and the score -max(0, a, b) by no more: Du = k (see (*) below);
* select: #(x >= p) changes by at most k, so p #(x >= p) by k p: Du = k max(candidates).

Under add_remove a row that drops out is only a row that is not added, so nothing changes there.

(*) The quantile score. With n the number of rows that have a value, B(c) = #(x < c) and
E(c) = #(x <= c), a candidate c is a q-quantile iff B(c) <= q n <= E(c). The score is

    u(c) = -max(0, a, b),   a = B(c) - q n,   b = q n - E(c),

so u(c) <= 0, and u(c) = 0 iff c is a q-quantile: the best candidates are exactly the true
q-quantiles, ties included (rows equal to c count in E but not in B). Where u(c) < 0 its value is
the distance in ranks from q n to the ranks [B(c), E(c)] that c occupies. The old score
-|(1-q) #(x<c) - q #(x>c)| ignored rows equal to c and missed the median of tied data.

Sensitivity. u = -max(0, a, b) is 1-Lipschitz in the max-norm of (a, b): |max(0, a, b) -
max(0, a', b')| <= max(|a - a'|, |b - b'|). So it suffices to bound how far each term moves.

* Adding one row of value x (n -> n + 1, q n -> q n + q): if x < c, B and E grow by 1, so a moves
  by 1 - q and b by q - 1; if x = c, B stays, E grows by 1: a moves by -q, b by q - 1; if x > c,
  B and E stay: a moves by -q, b by +q. Each term moves by at most max(q, 1 - q); removing a row
  is the same step backwards. k rows: Du = k max(q, 1 - q) under add_remove.
* Replacing one row (n fixed): B and E each change by at most 1 and q n not at all, so each term
  moves by at most 1; k rows: Du = k under replace.
* Rows that drop out (a missing value under ``missing: "drop"``, an empty id) are removals: under
  add_remove a dropped row adds or removes nothing; under replace a row that drops out (or comes
  back) changes n by 1 and moves each term by at most max(q, 1 - q) <= 1, so Du = k still holds.

Exact arithmetic: q is read as the decimal written in the plan (0.1 is 1/10, not the binary
double; at most 10^9 in the denominator, see :func:`quantile_fraction`), and den * a, den * b
are exact integers, so a candidate with u = 0 is never lost to rounding; Du is computed from the
same fraction and rounded up to a float. The utilities handed to OpenDP are floats, -N/den correctly
rounded: exact when den is a power of two (q = 0.5, 0.25, 0.75, ...), otherwise within half an ulp
of |u| <= n (below 2^-22 at the 2^31-row cap), as were the previous score's.

Rank accuracy. The exponential mechanism's chosen utility is within R = 2 Du (ln m + ln 20) / eps
of the best of m candidates with probability at least 95% (McSherry & Talwar 2007). When some
candidate is an exact q-quantile (the best utility is 0), the released c has u(c) >= -R, that is
B(c) <= q n + R and E(c) >= q n - R: its rank is within +-R of q n. This needs only public
quantities. An int column whose candidates are every whole number in its (whole) bounds always
has an exact q-quantile among them (the smallest data value v with #(x <= v) >= q n, or any
candidate when n = 0); other candidates do not guarantee it, and the design says so.

Exact sums: values are clamped to [L, U] and put on a fixed-point grid of resolution 2^-s chosen
from the public bounds and the public row cap (2^31 rows), so that every per-row value is an
integer of magnitude at most 2^30 and every sum fits in int64 exactly. The sensitivity is then an
exact integer in grid units, and OpenDP's discrete samplers add noise on that grid (which is what
OpenDP's own float Laplace does internally). Rounding a value to the grid moves it by at most
2^-(s+1); this is a change of the statistic, not of its privacy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dpdesk.core import mechanisms as mech
from dpdesk.core.plan import ColumnSpec, Plan, QuerySpec
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
    #: (from public quantities only; see the module docstring).
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
    """
    if plan.privacy_unit.id_column is not None:
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


def quantile_candidates(spec: QuerySpec, col: ColumnSpec) -> tuple[float, ...]:
    """The candidates of a quantile query: declared, or a grid inside the public bounds.

    Without ``candidates`` or ``grid_step``, an int column uses every whole number in its bounds
    (if there are at most 100,000) and a float column 1,001 evenly spaced points.
    """
    if spec.candidates is not None:
        return spec.candidates
    assert col.bounds is not None
    lo, hi = col.bounds
    step = spec.grid_step
    if step is None:
        step = 1.0 if col.type == "int" and hi - lo <= 100_000 else (hi - lo) / 1000.0
    n = math.floor((hi - lo) / step + 1e-9) + 1
    return tuple(lo + i * step for i in range(n))


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


def _float_up(x: Fraction) -> float:
    """The smallest float >= x (a sensitivity is rounded up, never down)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def covers_every_whole_number(cands: tuple[Any, ...], col: ColumnSpec) -> bool:
    """Whether an int column's candidates include every whole number in its whole-number bounds.

    Then some candidate is always an exact q-quantile of the clamped values (see the module docstring).
    """
    if col.type != "int" or col.bounds is None:
        return False
    lo, hi = col.bounds
    if lo != math.floor(lo) or hi != math.floor(hi) or hi - lo + 1 > len(cands):
        return False
    have = {float(c) for c in cands}
    return all(float(v) in have for v in range(int(lo), int(hi) + 1))


def _fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def _noise_component(
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
            s=_fmt(l1), e=_fmt(epsilon), b=_fmt(b)
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
        ).format(d=f"{delta:g}", s=_fmt(l2), e=_fmt(epsilon), sigma=_fmt(sigma))
    else:
        # 1e-9 relative margin for drawing a discrete Gaussian on the noise grid (see gaussian_grid)
        sigma = mech.analytic_sigma(l2, epsilon, delta * (1.0 - DISCRETE_MARGIN))
        formula = _(
            "sigma = smallest s with Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) <= delta "
            "(analytic Gaussian, Balle & Wang 2018), D = {s}, eps = {e}, delta = {d}: sigma = {sigma}"
        ).format(s=_fmt(l2), e=_fmt(epsilon), d=f"{delta:g}", sigma=_fmt(sigma))
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


def design_query(spec: QuerySpec, plan: Plan) -> QueryDesign:
    """Sensitivity, scale, bound and formula of a query, from the plan alone."""
    unit = plan.privacy_unit
    k = unit.max_rows_per_person
    replace = unit.neighbouring == "replace"
    rel = _("replace") if replace else _("add/remove")
    who = _("one row") if k == 1 else _("one person (up to k = {k} rows)").format(k=k)
    notes: list[str] = []
    drops = replace and rows_can_drop(spec, plan)
    causes = _drop_causes(spec, plan) if drops else ""
    if k > 1 and unit.id_column is None:
        notes.append(
            _(
                "k = {k} is your declaration that nobody has more than {k} rows; dpdesk cannot check it "
                "without an id column"
            ).format(k=k)
        )
    col = plan.columns[spec.column] if spec.column else None
    group = plan.columns[spec.group_by] if spec.group_by else None
    groups = group.categories if group is not None else None
    assert groups is not None or group is None

    if spec.statistic in ("count", "sum", "mean", "histogram"):
        # cells of the released vector
        if spec.statistic == "histogram":
            assert col is not None
            bins = _histogram_labels(spec, col)
            cells = tuple(f"{g} / {b}" for g in groups for b in bins) if groups else bins
        else:
            cells = tuple(groups) if groups else ("",)
        vector = len(cells) > 1 or groups is not None or spec.statistic == "histogram"
        eps, delta = spec.epsilon, spec.delta
        if spec.statistic == "mean":
            eps, delta = eps / 2.0, delta / 2.0
        comps: list[Component] = []
        # count-like component
        if spec.statistic in ("count", "histogram", "mean"):
            if vector:
                l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))
                if replace:
                    why = _(
                        "{rel}, {who}: each cell counts rows; replacing moves up to {k} rows from one cell to "
                        "another, L1 = 2k = {l1}, L2 = sqrt(2) k = {l2}"
                    ).format(rel=rel, who=who, k=k, l1=_fmt(l1), l2=_fmt(l2))
                    if drops:
                        why += "; " + _(
                            "a row that drops out ({causes}) leaves its cell without joining another: at "
                            "most k rows leave cells and k join, so L1 <= 2k and L2 <= sqrt(2) k still hold"
                        ).format(causes=causes)
                else:
                    why = _(
                        "{rel}, {who}: each cell counts rows; adding or removing changes the counts by {k} in "
                        "total, L1 = L2 = k = {k}"
                    ).format(rel=rel, who=who, k=k)
            else:
                l1 = l2 = float(k)
                why = _("{rel}, {who}: the count changes by at most k = {k}").format(rel=rel, who=who, k=k)
                if drops:
                    why += "; " + _(
                        "a row can drop out ({causes}), so replacing can change the count by up to k"
                    ).format(causes=causes)
                elif replace:
                    why += " " + _("(conservative: replace keeps n)")
            label = _("noisy count") if spec.statistic == "mean" else spec.statistic
            comps.append(
                _noise_component(
                    label, "count", spec.mechanism, spec.calibration, eps, delta, l1, l2, 1.0, why
                )
            )
        if spec.statistic in ("sum", "mean"):
            assert col is not None and col.bounds is not None
            s, lo_i, hi_i = grid_bounds(col)
            lo, hi = col.bounds
            m = max(abs(lo), abs(hi))
            if spec.statistic == "sum":
                unit_v = math.ldexp(1.0, -s)
                m_i = max(abs(lo_i), abs(hi_i))
                if not vector:
                    if drops:
                        l1_i = l2_i = float(k * max(hi_i - lo_i, m_i))
                        why = _(
                            "{rel}, {who}: a row's value moves within [L, U], or the row drops out "
                            "({causes}) while its neighbour, with a value, does not, which moves the sum by "
                            "up to M = max(|L|, |U|) = {m}: k max(U - L, M) = {x}"
                        ).format(rel=rel, who=who, causes=causes, m=_fmt(m), x=_fmt(k * max(hi - lo, m)))
                    elif replace:
                        l1_i = l2_i = float(k * (hi_i - lo_i))
                        why = _("{rel}, {who}: a row's value moves within [L, U], k (U - L) = {x}").format(
                            rel=rel, who=who, x=_fmt(k * (hi - lo))
                        )
                    else:
                        l1_i = l2_i = float(k * m_i)
                        why = _(
                            "{rel}, {who}: a row adds at most M = max(|L|, |U|) = {m}, k M = {km}"
                        ).format(rel=rel, who=who, m=_fmt(m), km=_fmt(k * m))
                elif replace:
                    l1_i = 2.0 * k * m_i
                    l2_i = k * max(float(hi_i - lo_i), math.sqrt(2.0) * m_i)
                    why = _(
                        "{rel}, {who}: a value may leave one group and join another, L1 = 2kM = {l1}, "
                        "L2 = k max(U - L, sqrt(2) M) = {l2}"
                    ).format(
                        rel=rel, who=who, l1=_fmt(2 * k * m), l2=_fmt(k * max(hi - lo, math.sqrt(2) * m))
                    )
                    if drops:
                        why += "; " + _(
                            "a row that drops out ({causes}) only leaves its group: k rows leaving and k "
                            "joining stay within these bounds (the largest changes put them in one or two "
                            "groups)"
                        ).format(causes=causes)
                else:
                    l1_i = l2_i = float(k * m_i)
                    why = _(
                        "{rel}, {who}: the rows add at most kM = {km} over all groups, L1 = L2 = kM"
                    ).format(rel=rel, who=who, km=_fmt(k * m))
                kind, label = "sum", "sum"
            else:
                # centred values c = 2 q - (L_int + U_int) in units of 2^-(s+1), |c| <= U_int - L_int
                unit_v = math.ldexp(1.0, -(s + 1))
                w = float(hi_i - lo_i)
                if replace:
                    l1_i = l2_i = 2.0 * k * w
                    why = _("{rel}, {who}: x - mid moves within [-(U-L)/2, (U-L)/2], k (U - L) = {x}").format(
                        rel=rel, who=who, x=_fmt(k * (hi - lo))
                    )
                    if drops:
                        why += "; " + _(
                            "a row that drops out ({causes}) removes at most (U - L)/2 and its neighbour "
                            "adds at most (U - L)/2: still k (U - L)"
                        ).format(causes=causes)
                else:
                    l1_i = l2_i = k * w
                    why = _("{rel}, {who}: |x - mid| <= (U - L)/2, k (U - L)/2 = {x}").format(
                        rel=rel, who=who, x=_fmt(k * (hi - lo) / 2)
                    )
                if vector:
                    why += " " + _("(per group and in total: a row belongs to one group)")
                kind, label = "centered_sum", _("noisy sum of (x - mid)")
            c = _noise_component(
                label,
                kind,
                spec.mechanism,
                spec.calibration,
                eps,
                delta,
                l1_i * unit_v,
                l2_i * unit_v,
                unit_v,
                why,
            )
            comps.append(c)
        return QueryDesign(spec, tuple(comps), cells, None, tuple(notes))

    # exponential mechanism
    assert col is not None
    rank_exact = False
    if spec.statistic == "mode":
        assert col.categories is not None
        du = float(k)
        why = _("{rel}, {who}: a category's count changes by at most k = {k}").format(rel=rel, who=who, k=k)
        if drops:
            why += "; " + _(
                "a row that drops out ({causes}) lowers one count by 1 and its neighbour raises one by at "
                "most 1: each count still moves by at most k"
            ).format(causes=causes)
        cands: tuple[Any, ...] = col.categories
        util = _("u(c) = number of rows in category c")
    elif spec.statistic == "quantile":
        cands = quantile_candidates(spec, col)
        qf = quantile_fraction(spec.q)
        if replace:
            du = float(k)
            why = _(
                "{rel}, {who}: u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)); replacing a row (n fixed) "
                "moves #(x<c) and #(x<=c) by at most 1 each, so Du = k = {k}"
            ).format(rel=rel, who=who, k=k)
        else:
            du = _float_up(k * max(qf, 1 - qf))
            why = _(
                "{rel}, {who}: u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)); adding a row moves "
                "#(x<c) - qn by -q or 1-q and qn - #(x<=c) by q or q-1, so Du = k max(q, 1-q) = "
                "{du}"
            ).format(rel=rel, who=who, du=_fmt(du))
        if drops:
            why += "; " + _(
                "a row that drops out ({causes}) is removed without being replaced: each removed or added "
                "row moves the score by at most q or 1 - q, in opposite directions, so k rows removed and k "
                "added move it by at most k q + k (1 - q) = k"
            ).format(causes=causes)
        util = f"u(c) = -max(0, #(x<c) - qn, qn - #(x<=c)), q = {_fmt(spec.q)}"
        rank_exact = covers_every_whole_number(cands, col)
        if not rank_exact:
            notes.append(
                _(
                    "The rank accuracy holds when some candidate is an exact q-quantile, which "
                    "these candidates do not guarantee (only every whole number in the bounds of "
                    "an int column does); otherwise the released value's rank may also be off by "
                    "the distance from q·n to the nearest candidate's ranks."
                )
            )
    else:  # select, revenue
        assert spec.candidates is not None
        cands = spec.candidates
        du = k * max(abs(c) for c in cands)
        why = _(
            "{rel}, {who}: u(p) = p x #(bids >= p); a row changes each count by at most 1, so "
            "Du = k max(p) = {du}"
        ).format(rel=rel, who=who, du=_fmt(du))
        if drops:
            why += "; " + _("a row that drops out ({causes}) also changes each count by at most 1").format(
                causes=causes
            )
        util = _("u(p) = p x number of bids at or above p (revenue)")
    eps = spec.epsilon
    gumbel = 2.0 * du / eps
    n = len(cands)
    gap95 = mech.em_gap_for(0.95, eps, du)
    loss95 = 2 * du * (math.log(n) + mech.LN20) / eps
    formula = _(
        "P(r) proportional to exp(epsilon u(r) / (2 Du)) = exp({e} u(r) / (2 x {du})); {utility}. "
        "The better of two candidates is picked with 95% probability when their utilities differ by "
        "{gap}; with {n} candidates the chosen utility is within 2 Du (ln {n} + ln 20) / epsilon = "
        "{bound} of the best with 95% probability"
    ).format(e=_fmt(eps), du=_fmt(du), utility=util, gap=_fmt(gap95), n=n, bound=_fmt(loss95))
    rank95: float | None = None
    if spec.statistic == "quantile":
        rank95 = 2.0 * du * (math.log(n) + mech.LN20) / eps
        formula += ". " + _(
            "This score's utility is minus a distance in ranks, so R = {r}: the released value's rank "
            "is within ±R of q·n with 95% probability (n: the rows with a value)"
        ).format(r=_fmt(rank95))
    comp = Component(
        spec.statistic,
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
        why,
    )
    return QueryDesign(spec, (comp,), ("",), cands, tuple(notes), em_curve(eps, du), rank95, rank_exact)


def em_curve(epsilon: float, du: float) -> tuple[tuple[float, float], ...]:
    """Probability that the better of two candidates is chosen, for utility gaps around the 95% gap."""
    g95 = mech.em_gap_for(0.95, epsilon, du)
    gaps = [g95 * f for f in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)]
    return tuple((g, mech.em_probabilities([g, 0.0], epsilon, du)[0]) for g in gaps)


def _histogram_labels(spec: QuerySpec, col: ColumnSpec) -> tuple[str, ...]:
    if col.type == "category":
        assert col.categories is not None
        return col.categories
    assert spec.bins is not None
    edges = spec.bins
    labels = []
    for i in range(len(edges) - 1):
        left = "(-inf" if i == 0 else f"[{_fmt(edges[i])}"
        right = "+inf)" if i == len(edges) - 2 else f"{_fmt(edges[i + 1])})"
        labels.append(f"{left}, {right}")
    return tuple(labels)


def design_plan(plan: Plan) -> list[QueryDesign]:
    """Designs of all queries of a plan, in plan order."""
    return [design_query(q, plan) for q in plan.queries]
