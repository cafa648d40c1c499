"""Empirical privacy audit (issue 6): a statistical LOWER bound on the privacy loss the real sampler shows.

For a query and two neighbouring tables D, D' (one row added, or one row replaced), the audit runs the
release code just below the ledger many times on each table: :func:`exact_statistic` (clamping and
fixed-point grid), the query's calibrated :class:`Component`, and the real OpenDP sampler through
``release._opendp_noise`` (one call with the exact vector repeated n times gives n independent
releases, since the noise is i.i.d. per coordinate) or ``release._opendp_pick`` (one call per draw).
Rounding in ``noisy_rows`` is post-processing, so auditing the unrounded noisy integers is stronger.
The sampler is never seeded (OpenDP cannot be); the numpy RNG is not used for noise at all.

Tester (StatDP / DP-Sniper style): each output is mapped to a score, the log-likelihood ratio of D'
against D under the *claimed* noise model (for Gaussian noise this is the projection on the shift;
for the exponential mechanism the score is the chosen candidate). A third of the draws choose an
event S (``score >= t`` or ``score <= t`` at 101 quantiles, or for at most 8 distinct outputs any
proper subset) and a direction, by a normal-approximation (Wilson) score. The other two thirds,
independent of that choice, estimate p = P[M(A) in S] and q = P[M(B) in S] with one-sided **exact
Clopper-Pearson** bounds (Beta quantiles computed by bisection on the regularized incomplete beta
function, Lentz continued fraction; no scipy), and

    eps_lower = ln((p_lower - delta) / q_upper).

If the mechanism is (eps, delta)-DP then p - delta <= e^eps q for every S, so eps_lower > eps needs
p_lower > p or q_upper < q: probability at most 2 alpha for a correct mechanism.

The cases are the ones each statistic's module declares (``audit_examples``, read from the registry
:mod:`dpdesk.core.dp.statistics`), so a new statistic is audited without editing this file.

False-failure rate. alpha = 1e-8 per one-sided bound. The file has 11 audits of correct mechanisms
(2 bounds each): a chance false alarm has probability <= 22 alpha = 2.2e-7. The 9 audits of broken
mechanisms fail the file only if eps_lower <= eps. Their margin z = (eps_lower - eps) / sd, with sd the
normal-approximation sd of ln p_hat - ln q_hat (``AuditResult.z``, printed by ``benchmarks/audit.py``),
measured over 3 repetitions each: Laplace count, sum, unclamped sum and the sum whose neighbour's row
drops out z > 29; Laplace mean (both components reach their sensitivity) z = 24.7-26.1; Gaussian histogram z = 6.8-9.0; exponential mode z = 7.0-7.3; exponential quantile
(the tie-aware score on tied data, 12,000 draws; 6.4-8.0 at 8,000) z = 9.7-10.8 over 9 repetitions
(and 13.7-14.3 with Du = min(q, 1-q) instead of max, mutant Q03). A miss then has probability about
Phi(-6.5) < 1e-10 each. The old replace calibration of the sum whose row drops out (noise for a
change of 1 against a change of 100) gave eps_lower = 6.99 in 3 of 3 runs, the cap of 20,000 draws (no
draw of D in the chosen event; z = 6.0 only because sd is taken with one event): that event lies about
50 noise scales from D's sum (probability about e^-50 per draw), so eps_lower <= 1 would need thousands
of such draws among 20,000: probability far below 1e-30. The adaptive synthesiser's
first adaptive round (``part``: its selection and its measurement, driven through the statistic's own release code
with the earlier rounds fixed to the same released values on both tables, :func:`adaptive_round`), claimed at the
design's starting sigma and eps_t: the measurement, claimed at its exact Gaussian epsilon 1.82 at delta 1e-3, gave
eps_lower 0.89-1.22; half its sigma gave 2.16-2.32, z = 6.7 at 30,000 draws and 17.8 at 100,000 (40,000 drawn
here: z about 7.7; a miss has probability about Phi(-6.7) < 1e-10); the selection (not tight: no candidate's
score can rise by Du while every other falls by Du) gave eps_lower -0.1 to -0.06 against its 0.43. The whole file fails by chance with
probability < 1e-6 (about 2.2e-7). A statistic added later states its own case's margin in its module.

Broken mechanisms (each must be caught, eps_lower > claimed eps):

* half the noise: a copy of the component with twice the epsilon (Laplace b/2, EM Gumbel scale/2)
  or with sigma/2 (Gaussian), on the unchanged grid, through the same sampler call;
* an unclamped sum: the added row's value (-14) lies outside the declared bounds [-7, 3] and is
  summed as is, with the noise still calibrated to the bounds;
* the old replace calibration (issue 11): a sum over [99, 100] under replace, whose neighbour's row is
  missing and drops out (a change of M = 100), with noise for U - L = 1 as booked before the fix; the
  corrected mechanism (sensitivity max(U - L, M) = 100) passes on the same pair.

The exponential mechanism for ``mode`` under add/remove is in fact eps/2-DP (utilities only grow),
so halving its scale is not a violation there; the audit uses replace, where the factor 2 is tight.
The quantile audit uses add/remove with q = 0.25 on tied data, where two candidates' utilities move
by Du = max(q, 1-q) in opposite directions (see ``QUANTILE_D``), so an understated Du is caught too.
The quantile by group (one exponential mechanism per group, 20,000 draws of each group's pick) is scored
by the log-likelihood ratio of all the groups' picks under the claimed mechanism; its pair moves a row from
group a to group b under replace and reaches the claimed Du = 2 max(q, 1-q) (statistics/quantile.py); the
groups' bases differ, so the loss is about 0.6 eps (a mirror pair spends exactly eps/2, and half the noise
would then spend exactly eps, not caught). Half the Gumbel scale was caught in 2 of 2 runs at 20,000 draws
(a search of the exact distributions gave eps_lower - eps about 0.38 with 8,000 estimating draws).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.aggregates_base import Exact
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.queries_base import Component, QueryDesign
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import _opendp_noise, _opendp_pick

pytestmark = pytest.mark.slow  # the fast loop (pytest -m "not slow") leaves this module out

ALPHA = 1e-8  # per one-sided Clopper-Pearson bound
CATS = ["a", "b", "c"]
BOUNDS = (-7.0, 3.0)

# --------------------------------------------------------------------------- Clopper-Pearson


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) = P[Beta(a, b) <= x]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def _beta_quantile(a: float, b: float, target: float) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if betainc(a, b, mid) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15 * max(mid, 1e-300):
            break
    return (lo + hi) / 2.0


def cp_lower(k: int, n: int, alpha: float = ALPHA) -> float:
    """Exact one-sided lower confidence bound on a binomial p: P[bound > p] <= alpha."""
    if k <= 0:
        return 0.0
    return _beta_quantile(k, n - k + 1, alpha) * (1.0 - 1e-12)


def cp_upper(k: int, n: int, alpha: float = ALPHA) -> float:
    """Exact one-sided upper confidence bound on a binomial p: P[bound < p] <= alpha."""
    if k >= n:
        return 1.0
    return min(1.0, _beta_quantile(k + 1, n - k, 1.0 - alpha) * (1.0 + 1e-12))


def _wilson(k: np.ndarray, n: int, z: float, upper: bool) -> np.ndarray:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half if upper else np.maximum(centre - half, 0.0)


# --------------------------------------------------------------------------- the tester


@dataclass
class AuditResult:
    eps_lower: float
    event: str
    p_hat: float
    q_hat: float
    n: int  # draws per table used for the estimate
    z: float  # (eps_lower - claimed) / sd of ln p_hat - ln q_hat (margin in standard deviations)


def _events(sel_a: np.ndarray, sel_b: np.ndarray) -> list[tuple[str, Any]]:
    vals = np.unique(np.concatenate([sel_a, sel_b]))
    if len(vals) <= 8:
        out = []
        for mask in range(1, 2 ** len(vals) - 1):
            subset = vals[[bool(mask >> i & 1) for i in range(len(vals))]]
            out.append((f"in {sorted(subset.tolist())}", ("in", subset)))
        return out
    qs = np.unique(np.quantile(np.concatenate([sel_a, sel_b]), np.linspace(0.0, 1.0, 101)))
    return [(f">= {t:.6g}", (">=", t)) for t in qs] + [(f"<= {t:.6g}", ("<=", t)) for t in qs]


def _count(x: np.ndarray, ev: Any) -> int:
    kind, t = ev
    if kind == "in":
        return int(np.isin(x, t).sum())
    return int((x >= t).sum() if kind == ">=" else (x <= t).sum())


def audit(
    scores_d: np.ndarray, scores_dp: np.ndarray, claimed_eps: float, delta: float, alpha: float = ALPHA
) -> AuditResult:
    """Lower bound on eps from draws of M(D) and M(D'): the first thirds choose S, the rest estimate it."""
    n = min(len(scores_d), len(scores_dp))
    h = n // 3
    sel = {"D": scores_d[:h], "D'": scores_dp[:h]}
    est = {"D": scores_d[h:n], "D'": scores_dp[h:n]}
    m = n - h
    z = math.sqrt(2.0) * _inv_erfc(2.0 * alpha)
    best: tuple[float, str, Any, str, str] | None = None
    for label, ev in _events(sel["D"], sel["D'"]):
        ka, kb = _count(sel["D"], ev), _count(sel["D'"], ev)
        for a, b, k1, k2 in (("D'", "D", kb, ka), ("D", "D'", ka, kb)):
            lo = float(_wilson(np.array(k1, dtype=float), h, z, False)) - delta
            hi = float(_wilson(np.array(k2, dtype=float), h, z, True))
            if lo > 0 and hi > 0:
                score = math.log(lo / hi)
                if best is None or score > best[0]:
                    best = (score, label, ev, a, b)
    if best is None:
        return AuditResult(-math.inf, "none", 0.0, 0.0, m, -math.inf)
    _, label, ev, a, b = best
    kp, kq = _count(est[a], ev), _count(est[b], ev)
    p_lo, q_hi = cp_lower(kp, m, alpha) - delta, cp_upper(kq, m, alpha)
    eps_lower = math.log(p_lo / q_hi) if p_lo > 0 else -math.inf
    p_hat, q_hat = kp / m, kq / m
    sd = math.sqrt((1 - p_hat) / max(kp, 1) + (1 - q_hat) / max(kq, 1))
    return AuditResult(
        eps_lower, f"P[{a}] / P[{b}], S = score {label}", p_hat, q_hat, m, (eps_lower - claimed_eps) / sd
    )


def _inv_erfc(y: float) -> float:
    lo, hi = 0.0, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erfc(mid) > y:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- drawing


def make_plan(query: dict[str, Any], relation: str, bounds: tuple[float, float] = BOUNDS) -> Plan:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 100.0, "delta": 1e-3},
            "privacy_unit": {"neighbouring": relation, "max_rows_per_person": 1},
            "columns": {
                "x": {"type": "float", "bounds": list(bounds)},
                "g": {"type": "category", "categories": CATS},
            },
            "queries": [{"name": "q", **query}],
        }
    )


def make_table(plan: Plan, rows: list[tuple[float, int]]) -> Table:
    x = np.asarray([r[0] for r in rows], dtype=np.float64)
    g = np.asarray([r[1] for r in rows], dtype=np.int16)
    cols = {"x": Column(plan.columns["x"], x), "g": Column(plan.columns["g"], g)}
    return Table("t", "", len(rows), cols)


def exact_of(design: QueryDesign, plan: Plan, rows: list[tuple[float, int]]) -> Exact:
    return exact_statistic(design, make_table(plan, rows), np.ones(len(rows), dtype=bool), plan.columns)


def draw_noise(exact: Exact, comps: tuple[Component, ...], n: int) -> list[np.ndarray]:
    """n releases of every noise component: arrays of shape (n, cells) of noisy integers on the noise grid."""
    out = []
    for vec, comp in zip(exact.vectors, comps, strict=True):
        noisy = _opendp_noise(list(vec) * n, comp)
        out.append(np.asarray(noisy, dtype=np.float64).reshape(n, len(vec)))
    return out


def llr_scores(
    draws: list[np.ndarray], ex_d: Exact, ex_dp: Exact, comps: tuple[Component, ...]
) -> np.ndarray:
    """Log-likelihood ratio of D' against D under the claimed noise (continuous approximation)."""
    total = np.zeros(draws[0].shape[0])
    for x, vd, vdp, comp in zip(draws, ex_d.vectors, ex_dp.vectors, comps, strict=True):
        a = np.asarray(vd, dtype=np.float64) * comp.refine
        b = np.asarray(vdp, dtype=np.float64) * comp.refine
        s = comp.scale / comp.grid
        if comp.mechanism == "laplace":
            total += ((np.abs(x - a) - np.abs(x - b)) / s).sum(axis=1)
        else:
            total += (((x - a) ** 2 - (x - b) ** 2) / (2 * s * s)).sum(axis=1)
    return total


def draw_groups(exact: Exact, comp: Component, groups: int, n: int, same: set[int]) -> np.ndarray:
    """n releases of a grouped selection: one pick per group from its own block of utilities, (n, groups).
    The groups in ``same`` (equal scores on both tables: their picks add 0 to the log-likelihood ratio) are
    left at 0, not drawn (the audit's time)."""
    u = exact.utilities
    assert u is not None
    m = len(u) // groups
    return np.array(
        [
            [0 if g in same else _opendp_pick(u[g * m : (g + 1) * m], comp) for g in range(groups)]
            for _ in range(n)
        ],
        dtype=np.intp,
    )


def em_llr_scores(picks: np.ndarray, ex_d: Exact, ex_dp: Exact, design: QueryDesign) -> np.ndarray:
    """Log-likelihood ratio of D' against D of the groups' picks under the claimed exponential mechanism
    (P(c) proportional to exp(u(c) / s), s the claimed Gumbel scale), summed over the groups."""
    (comp,) = design.components
    groups = len(design.cells)
    assert ex_d.utilities is not None and ex_dp.utilities is not None
    total = np.zeros(picks.shape[0])
    for g in range(groups):
        m = len(ex_d.utilities) // groups
        logp = []
        for u in (ex_d.utilities, ex_dp.utilities):
            a = np.asarray(u[g * m : (g + 1) * m], dtype=np.float64) / comp.scale
            logp.append(a - (a.max() + np.log(np.exp(a - a.max()).sum())))
        total += (logp[1] - logp[0])[picks[:, g]]
    return np.round(total, 9)  # equal ratios compare equal (a few distinct values: events by subset)


def broken_components(design: QueryDesign) -> tuple[Component, ...]:
    """The same components with half the noise (grid unchanged)."""
    out = []
    for c in design.components:
        if c.mechanism == "gaussian":
            out.append(dataclasses.replace(c, scale=c.scale / 2.0))
        else:  # Laplace b = l1/eps and EM Gumbel scale 2 Du / eps both halve with twice eps
            out.append(dataclasses.replace(c, epsilon=2.0 * c.epsilon, scale=c.scale / 2.0))
    return tuple(out)


def old_replace_components(design: QueryDesign, bounds: tuple[float, float]) -> tuple[Component, ...]:
    """The calibration before issue 11: an ungrouped sum under replace booked U - L (k = 1) even where
    a row can drop out, whose sensitivity is max(U - L, M); the noise (Laplace b, Gaussian sigma) scales
    with it."""
    (c,) = design.components
    assert design.spec.statistic == "sum" and design.spec.group_by is None
    r = (bounds[1] - bounds[0]) / c.l1
    return (dataclasses.replace(c, l1=c.l1 * r, l2=c.l2 * r, scale=c.scale * r),)


@dataclass
class Case:
    """A query, a relation and two neighbouring tables."""

    name: str
    query: dict[str, Any]
    relation: str
    d: list[tuple[float, int]]
    dp: list[tuple[float, int]]
    n: int  # draws per table (half select, half estimate)
    unclamped: tuple[float, int] | None = None  # broken variant: this row added to D without clamping
    notes: list[str] = field(default_factory=list)
    bounds: tuple[float, float] = BOUNDS  # of the column x
    part: str = ""  # a query of rounds: "selection" or "measurement" of its first adaptive round


class _Stop(Exception):
    """Raised inside the release once the audited round's measurement is handed to the noise function."""


@dataclass
class AdaptiveRound:
    """What the statistic's own release code hands its mechanisms in its first adaptive round."""

    one_way: list[list[int]]  # the values the one-way measurements returned (the fixed transcript)
    scores: list[float]  # the selection's scores, and the component handed with them
    selection: Component
    values: list[int]  # the exact counts of the marginal measured, and the component handed with them
    measurement: Component


def adaptive_round(
    design: QueryDesign, plan: Plan, rows: list[tuple[float, int]], transcript: list[list[int]] | None
) -> AdaptiveRound:
    """Run the statistic's release (its encoding of the table, its scores, its components) on ``rows`` with the
    one-way measurements returning ``transcript`` (None: the exact counts, which become the transcript), the
    selection answered with the last candidate (the pair), up to the measurement of that pair. Conditioning every
    earlier round on the same released values on both tables is how adaptive composition is proved: each round
    must be private on its own given them."""
    stat = statistics.get(design.spec.statistic)
    exact = exact_of(design, plan, rows)
    got: dict[str, Any] = {"one": []}

    def noise(values: list[int], comp: Component) -> list[int]:
        if "scores" not in got:
            out = list(values) if transcript is None else transcript[len(got["one"])]
            got["one"].append(out)
            return out
        got["values"], got["measurement"] = list(values), comp
        raise _Stop

    def pick(scores: list[float], comp: Component) -> int:
        got["scores"], got["selection"] = list(scores), comp
        return len(scores) - 1

    with pytest.raises(_Stop):
        stat.release_rows(design, exact, plan, noise, pick)
    return AdaptiveRound(got["one"], got["scores"], got["selection"], got["values"], got["measurement"])


def run_adaptive_case(case: Case, broken: str | None) -> tuple[AuditResult, float, float]:
    """Audit one mechanism of the adaptive synthesiser's first adaptive round on D and D' (:func:`adaptive_round`):
    the selection as an exponential mechanism of the round's epsilon (pure), or the measurement as a Gaussian of the
    round's sigma and L2, claimed at its exact (analytic) epsilon at the query's delta, which the booked CKS
    conversion of its rho is above."""
    from dpdesk.core.ledger.recost import gaussian_epsilon

    plan = make_plan(case.query, case.relation, case.bounds)
    design = design_query(plan.queries[0], plan)
    on_d = adaptive_round(design, plan, case.d, None)
    on_dp = adaptive_round(design, plan, case.dp, on_d.one_way)
    one, sel, _measure = design.components
    if case.part == "selection":
        comp = on_d.selection
        assert comp == on_dp.selection and len(on_d.scores) == len(on_dp.scores)
        drawn = broken_component(comp) if broken == "half" else comp
        sd = np.array([_opendp_pick(on_d.scores, drawn) for _ in range(case.n)], dtype=np.float64)
        sdp = np.array([_opendp_pick(on_dp.scores, drawn) for _ in range(case.n)], dtype=np.float64)
        # claimed: the round's eps_t as handed to the mechanism (the ledger books each round's own); never above
        # the design's starting eps_t (a second one-way measurement leaves the rounds less, never more)
        assert 0 < comp.epsilon <= sel.epsilon * (1 + 1e-12)
        return audit(sd, sdp, comp.epsilon, 0.0), comp.epsilon, 0.0
    assert case.part == "measurement"
    comp = on_d.measurement
    assert comp == on_dp.measurement and comp.mechanism == "gaussian"
    drawn = broken_component(comp) if broken == "half" else comp
    ex_d, ex_dp = Exact([on_d.values]), Exact([on_dp.values])
    columns = len(design.spec.columns)  # type: ignore[attr-defined]
    claimed = dataclasses.replace(comp, l2=one.l2 / math.sqrt(columns))
    sd = llr_scores(draw_noise(ex_d, (drawn,), case.n), ex_d, ex_dp, (claimed,))
    sdp = llr_scores(draw_noise(ex_dp, (drawn,), case.n), ex_d, ex_dp, (claimed,))
    # claimed: the round's sigma as handed to the mechanism (the ledger books each round's own), never below the
    # design's starting sigma, and one marginal's L2 (the one-way part's L2 over sqrt(d))
    assert comp.scale >= one.scale * (1 - 1e-12)
    eps = gaussian_epsilon(claimed.scale, claimed.l2, design.delta)
    return audit(sd, sdp, eps, design.delta), eps, design.delta


def broken_component(c: Component) -> Component:
    """One component with half the noise (:func:`broken_components`)."""
    if c.mechanism == "gaussian":
        return dataclasses.replace(c, scale=c.scale / 2.0)
    return dataclasses.replace(c, epsilon=2.0 * c.epsilon, scale=c.scale / 2.0)


def run_case(case: Case, broken: str | None = None) -> tuple[AuditResult, float, float]:
    """Audit one case; ``broken``: None, "half", "unclamped" or "old_replace". Returns (res, eps, delta)."""
    if case.part:
        return run_adaptive_case(case, broken)
    plan = make_plan(case.query, case.relation, case.bounds)
    design = design_query(plan.queries[0], plan)
    comps = design.components
    if broken == "half":
        comps = broken_components(design)
    elif broken == "old_replace":
        comps = old_replace_components(design, case.bounds)
    ex_d, ex_dp = exact_of(design, plan, case.d), exact_of(design, plan, case.dp)
    if broken == "unclamped":
        assert case.unclamped is not None and design.spec.statistic == "sum"
        (comp,) = design.components
        raw = round(case.unclamped[0] / comp.unit)  # the value on the grid, never clamped
        ex_dp = Exact([[ex_d.vectors[0][0] + raw]])
    if design.spec.mechanism == "exponential" and len(design.cells) > 1:
        (comp,) = comps
        groups = len(design.cells)
        assert ex_d.utilities is not None and ex_dp.utilities is not None
        m = len(ex_d.utilities) // groups
        same = {
            g
            for g in range(groups)
            if ex_d.utilities[g * m : (g + 1) * m] == ex_dp.utilities[g * m : (g + 1) * m]
        }
        sd = em_llr_scores(draw_groups(ex_d, comp, groups, case.n, same), ex_d, ex_dp, design)
        sdp = em_llr_scores(draw_groups(ex_dp, comp, groups, case.n, same), ex_d, ex_dp, design)
    elif design.spec.mechanism == "exponential":
        (comp,) = comps
        assert ex_d.utilities is not None and ex_dp.utilities is not None
        sd = np.array([_opendp_pick(ex_d.utilities, comp) for _ in range(case.n)], dtype=np.float64)
        sdp = np.array([_opendp_pick(ex_dp.utilities, comp) for _ in range(case.n)], dtype=np.float64)
    else:
        sd = llr_scores(draw_noise(ex_d, comps, case.n), ex_d, ex_dp, design.components)
        sdp = llr_scores(draw_noise(ex_dp, comps, case.n), ex_d, ex_dp, design.components)
    return audit(sd, sdp, design.epsilon, design.delta), design.epsilon, design.delta


# --------------------------------------------------------------------------- CI subset


def registry_cases() -> list[Case]:
    """The audit cases every statistic's module declares (``audit_examples``), in the registry's order: a
    new statistic is audited without editing this file."""
    cases = []
    for stat in statistics.REGISTRY.values():
        for ex in stat.audit_examples():
            assert ex.query["statistic"] == stat.name, ex.name
            cases.append(
                Case(
                    ex.name,
                    dict(ex.query),
                    ex.relation,
                    list(ex.d),
                    list(ex.dp),
                    ex.draws,
                    bounds=ex.bounds,
                    part=ex.part,
                )
            )
    return cases


CI_CASES = registry_cases()
#: Halving the noise is caught only where the pair reaches the claimed epsilon (``AuditExample.tight``).
TIGHT_CASES = [
    c
    for c, ex in zip(
        CI_CASES,
        [ex for stat in statistics.REGISTRY.values() for ex in stat.audit_examples()],
        strict=True,
    )
    if ex.tight
]
_BY_NAME = {c.name: c for c in CI_CASES}
#: The sum whose added row (-14) lies outside the bounds [-7, 3]: summed unclamped by the broken variant.
SUM_CASE = dataclasses.replace(_BY_NAME["sum/laplace"], unclamped=(-14.0, 0))
#: Bounds excluding zero; the neighbour's row is missing (NaN) and drops out: the sum moves by M = 100.
DROP_CASE = _BY_NAME["sum/laplace, a row drops out"]


def test_every_statistic_is_audited() -> None:
    audited = {c.query["statistic"] for c in CI_CASES}
    one_shot = {s.name for s in statistics.statistics() if not s.composite}
    # the synthesiser's adaptive rounds are audited here (selection and measurement); MST's one-shot parts by its
    # own tests (tests/core/test_synthetic*.py)
    assert audited == one_shot | {"synthetic"}, one_shot - audited
    parts = {c.part for c in CI_CASES if c.query["statistic"] == "synthetic"}
    assert parts == {"selection", "measurement"}


def _id(c: Case) -> str:
    return f"{c.name}/{c.relation}"


@pytest.mark.parametrize("case", CI_CASES, ids=_id)
def test_correct_mechanism_passes(case: Case) -> None:
    res, eps, _delta = run_case(case)
    assert res.eps_lower <= eps, f"{case.name}: eps_lower {res.eps_lower:.3f} > claimed {eps} ({res})"


@pytest.mark.parametrize("case", TIGHT_CASES, ids=_id)
def test_half_noise_is_caught(case: Case) -> None:
    res, eps, _delta = run_case(case, "half")
    assert res.eps_lower > eps, (
        f"{case.name}: broken mechanism not caught, eps_lower {res.eps_lower:.3f} ({res})"
    )


def test_unclamped_sum_is_caught() -> None:
    res, eps, _delta = run_case(SUM_CASE, "unclamped")
    assert res.eps_lower > eps, f"unclamped sum not caught, eps_lower {res.eps_lower:.3f} ({res})"


def test_old_replace_sum_calibration_is_caught_when_a_row_drops_out() -> None:
    """Issue 11: U - L = 1 booked for a sum over [99, 100] under replace, while the neighbour's dropped row
    moves it by 100: the audit sees a privacy loss far above the claimed epsilon."""
    res, eps, _delta = run_case(DROP_CASE, "old_replace")
    assert res.eps_lower > eps, f"old replace calibration not caught, eps_lower {res.eps_lower:.3f} ({res})"


def test_clopper_pearson_against_exact_binomial() -> None:
    """The Beta-quantile bounds agree with the binomial tail they invert."""
    for k, n in ((0, 10), (3, 10), (10, 10), (37, 200), (500, 1000)):
        for alpha in (1e-2, 1e-8):
            lo, hi = cp_lower(k, n, alpha), cp_upper(k, n, alpha)
            if k > 0:  # P[Bin(n, lo) >= k] = alpha
                tail = sum(math.comb(n, j) * lo**j * (1 - lo) ** (n - j) for j in range(k, n + 1))
                assert tail == pytest.approx(alpha, rel=1e-6)
            if k < n:  # P[Bin(n, hi) <= k] = alpha
                tail = sum(math.comb(n, j) * hi**j * (1 - hi) ** (n - j) for j in range(k + 1))
                assert tail == pytest.approx(alpha, rel=1e-6)
