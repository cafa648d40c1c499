"""Noise mechanisms: the textbook formulas users learn from, and the one adapter to OpenDP's samplers.

Formulas (each shown to the user with its numbers put in):

* Laplace: scale b = sensitivity / epsilon (L1 sensitivity); 95% error bound b ln 20.
* Gaussian, classic (Dwork & Roth 2014, Thm A.1, valid for epsilon < 1):
  sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon (L2 sensitivity); 95% bound 1.96 sigma.
* Gaussian, analytic (Balle & Wang 2018): the smallest sigma with
  Phi(D/(2s) - e s/D) - exp(e) Phi(-D/(2s) - e s/D) <= delta; the left side is evaluated as an upper
  bound, tail-accurate and free of cancellation (:func:`gaussian_delta`), so sigma is never too small.
* Exponential mechanism (McSherry & Talwar 2007): P(r) proportional to exp(epsilon u(r) / (2 Du)).

Release noise is drawn only by :func:`draw_laplace`, :func:`draw_gaussian` and
:func:`draw_exponential`, which call OpenDP 0.16 (pinned). OpenDP samples on exact integers and
rationals (discrete Laplace and discrete Gaussian, Gumbel comparisons by partial sampling), from
OpenSSL's CSPRNG, so Mironov's floating-point attack does not apply. dpdesk feeds it integers
only: counts, and sums in fixed point (see queries.py), so the whole noise path is exact.
numpy.random is never used here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist
from types import SimpleNamespace
from typing import Any

LN20 = math.log(20.0)
Z975 = 1.959963984540054  # the 97.5% point of the standard normal


# ----------------------------------------------------------------------------- textbook formulas


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """b = sensitivity / epsilon.

    >>> laplace_scale(1, 0.1)
    10.0
    """
    return sensitivity / epsilon


def laplace_bound(scale: float, confidence: float = 0.95) -> float:
    """Half-width t with P(|X| <= t) = confidence for X ~ Laplace(b): t = b ln(1/(1-confidence)).

    >>> round(laplace_bound(10.0), 4)  # b ln 20
    29.9573
    """
    return scale * math.log(1.0 / (1.0 - confidence))


def classic_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon (valid for epsilon < 1).

    >>> round(classic_sigma(1, 0.5, 1e-5), 6)
    9.689611
    """
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


#: Below x = 3 the Mills ratio R(x) = Q(x)/phi(x) is computed from erfc; above, from its continued fraction.
_MILLS_CF_FROM = 3.0
#: Bound on the relative error of R from :func:`_mills` (tests/core/test_formulas.py measures < 2^-44).
MILLS_REL_ERROR = 2.0**-42
#: Final rounding-up factor of :func:`gaussian_delta`: covers every remaining floating-point rounding.
_ROUND_UP = 1.0 + 2.0**-30
_SQRT_2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_LN2 = math.log(2.0)


def _mills(x: float) -> tuple[float, float]:
    """R(x) = Q(x) / phi(x) (the Mills ratio of the standard normal) and g(x) = 1 - x R(x) = -R'(x).

    Both are positive for every x, and computed without cancellation where it would matter: from
    erfc for x < 3 (where 1 - x R(x) loses at most 3 bits), else from the continued fraction
    R(x) = 1/(x + 1/(x + 2/(x + 3/(x + ...)))): with T = 1/(x + 2/(x + ...)), R = 1/(x + T) and
    g = T R, a ratio of positive numbers. For x >= -30 only (R(-30) ~ 1e196).
    """
    if x < _MILLS_CF_FROM:
        r = _SQRT_HALF_PI * math.erfc(x / _SQRT_2) * math.exp(0.5 * x * x)
        return r, 1.0 - x * r
    n = 10 + int(400.0 / (x * x))  # enough terms for full double precision (twice what is needed)
    t = 0.5 * (math.sqrt(x * x + 4.0 * (n + 1)) - x)  # the tail's fixed point, F = (n+1)/(x+F)
    for k in range(n, 0, -1):
        t = k / (x + t)
    r = 1.0 / (x + t)
    return r, t * r


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The exact delta of a Gaussian with this sigma at this epsilon (Balle & Wang 2018, Thm 8), rounded up.

    delta = Phi(a - b) - e^eps Phi(-a - b) with a = D/(2 sigma), b = eps sigma / D. With x1 = b - a,
    x2 = b + a and e^eps phi(x2) = phi(x1), this is delta = phi(x1) (R(x1) - R(x2)), R the Mills
    ratio. When the two terms are close (small delta and small epsilon), their difference is the
    integral of g = -R' over [x1, x2]; g is convex, so the trapezoid h (g(x1) + g(x2)) / 2 with
    h = D / sigma is an upper bound of it, free of cancellation. The direct difference plus its
    rounding error is another upper bound; the smaller of the two is returned, raised by 2^-30 to
    cover floating-point rounding. So the result is never below the exact delta, and is within
    1e-8 of it relatively (tests/core/test_formulas.py checks both against mpmath). Phi as
    0.5 (1 + erf) would lose the tail entirely: at (1, 1e-20) it put sigma 10% too low.
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    x1, x2 = b - a, b + a
    if x1 < -30.0:  # delta <= Phi(-x1) <= 1; the second term is below 1e-190 here
        return 0.5 * math.erfc(x1 / _SQRT_2)
    r1, g1 = _mills(x1)
    r2, g2 = _mills(x2)
    direct = (r1 - r2) + 2.0 * MILLS_REL_ERROR * r1
    trapezoid = 0.5 * (sensitivity / sigma) * (g1 + g2)
    phi1 = math.exp(-0.5 * x1 * x1) / _SQRT_2PI
    return min(1.0, phi1 * min(direct, trapezoid) * _ROUND_UP)


#: The smallest delta :func:`analytic_sigma` accepts: below it the Gaussian tail leaves the range of
#: floating point. Plans refuse deltas below 1e-30 (:data:`dpdesk.core.plan.reader.MIN_DELTA`) long before.
MIN_ANALYTIC_DELTA = 1e-300


@lru_cache(maxsize=4096)
def analytic_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest sigma whose exact delta at epsilon is at most ``delta`` (Balle & Wang 2018), rounded up.

    Found by bisection on :func:`gaussian_delta`, an upper bound of the exact delta, which is
    decreasing in sigma. Every sigma whose upper bound meets ``delta`` meets it exactly, so the
    result is never below the exact smallest sigma; the bisection runs to the last bit, so it is
    above it by about the bound's slack (relative ~1e-9). Cached: the budget meter asks again and again.

    >>> round(analytic_sigma(1, 0.5, 1e-5), 6)
    7.031827
    """
    if not MIN_ANALYTIC_DELTA <= delta < 1.0:
        raise ValueError(f"the analytic Gaussian needs delta in [{MIN_ANALYTIC_DELTA:g}, 1) (got {delta!r})")
    log_target = math.log(delta)

    def excess(log_sigma: float) -> float:  # > 0: the bound exceeds delta at this sigma
        d = gaussian_delta(math.exp(log_sigma), sensitivity, epsilon)
        return math.log(d) - log_target if d > 0.0 else -1e3

    # a first guess: Phi(-x1) = delta, for z with phi(z)/z ~ delta
    z = math.sqrt(2.0 * math.log(1.0 / delta))
    u = (z + math.sqrt(z * z + 2.0 * epsilon)) / (2.0 * epsilon)
    lo = hi = math.log(u * sensitivity)
    f_lo = f_hi = excess(hi)
    while f_hi > 0.0:
        lo, f_lo = hi, f_hi
        hi += _LN2
        f_hi = excess(hi)
    while f_lo <= 0.0:
        hi, f_hi = lo, f_lo
        lo -= _LN2
        f_lo = excess(lo)
    # Illinois (regula falsi in log sigma) on the bracket excess(lo) > 0 >= excess(hi), to 2^-40
    side = 0
    for _ in range(200):
        if hi - lo <= 2.0**-40:
            break
        x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        f = excess(x)
        if f > 0.0:
            lo, f_lo = x, f
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = x, f
            if side == 1:
                f_lo *= 0.5
            side = 1
    return math.exp(hi)  # the sigma tried last whose bound is at most delta


def gaussian_bound(sigma: float) -> float:
    """95% half-width of Gaussian noise: 1.96 sigma."""
    return Z975 * sigma


def gaussian_rho(sensitivity: float, sigma: float) -> float:
    """zCDP cost of a Gaussian: rho = sensitivity^2 / (2 sigma^2)."""
    return sensitivity**2 / (2.0 * sigma**2)


def em_probabilities(utilities: Sequence[float], epsilon: float, sensitivity: float) -> list[float]:
    """Selection probabilities of the textbook exponential mechanism, P(r) ~ exp(eps u(r) / (2 Du)).

    >>> [round(p, 3) for p in em_probabilities([50, 20, 30], 0.1, 1)]
    [0.629, 0.14, 0.231]
    """
    top = max(utilities)
    w = [math.exp(epsilon * (u - top) / (2.0 * sensitivity)) for u in utilities]
    total = sum(w)
    return [x / total for x in w]


def em_gap_for(probability: float, epsilon: float, sensitivity: float) -> float:
    """Utility gap at which the better of two candidates is picked with the given probability.

    From P = 1 / (1 + exp(-eps g / (2 Du))): g = 2 Du ln(P / (1 - P)) / eps.
    """
    return 2.0 * sensitivity * math.log(probability / (1.0 - probability)) / epsilon


def discrete_laplace_halfwidth(scale: float, confidence: float = 0.95) -> int:
    """Smallest integer t with P(|X| <= t) >= confidence for discrete Laplace noise of this scale.

    For X on the integers with P(x) ~ exp(-|x|/b): P(|X| > t) = 2 exp(-(t+1)/b) / (1 + exp(-1/b)).
    The textbook b ln 20 covers slightly less than 95% once rounded to integers (94.8% at b = 10).

    >>> discrete_laplace_halfwidth(10.0)
    30
    """
    alpha = 1.0 - confidence
    t = -scale * math.log(alpha * (1.0 + math.exp(-1.0 / scale)) / 2.0) - 1.0
    return max(0, math.ceil(t - 1e-9))


def discrete_gaussian_halfwidth(sigma: float, confidence: float = 0.95) -> int:
    """Smallest integer t with P(|X| <= t) >= confidence for a discrete Gaussian of scale sigma.

    Summed exactly over the integers for sigma up to 10^5; beyond, the continuous quantile (whose
    difference from the discrete one is far below one unit there) rounded up.
    """
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    if sigma > 1e5:
        return math.ceil(z * sigma)
    import numpy as np  # only for this sum

    top = math.ceil(12.0 * sigma) + 2
    x = np.arange(0, top + 1, dtype=np.float64)
    w = np.exp(-(x**2) / (2.0 * sigma**2))
    total = w[0] + 2.0 * w[1:].sum()
    inside = (w[0] + 2.0 * np.cumsum(w[1:])) / total  # P(|X| <= t) for t = 1, 2, ...
    cover = np.concatenate([[w[0] / total], inside])
    return int(np.argmax(cover >= confidence - 1e-12))


# ----------------------------------------------------------------------------- OpenDP adapter


@lru_cache(maxsize=1)
def _dp() -> Any:
    """Import OpenDP once (it is heavy) and enable the features dpdesk needs.

    ``contrib`` is OpenDP's flag for components whose proofs are still being vetted; it is needed
    for every mechanism here. ``floating-point``/``idealized-numerics`` is *not* enabled: none of
    dpdesk's noise depends on real-number arithmetic.
    """
    # Not ``opendp.prelude``: it also imports OpenDP's polars, numpy and scikit-learn extras (0.3 s and polars'
    # memory), which no mechanism here uses. The same functions, from the modules that define them.
    import opendp.combinators as combinators
    import opendp.domains as domains
    import opendp.measurements as measurements
    import opendp.measures as measures
    import opendp.metrics as metrics
    import opendp.typing as typing_
    from opendp.mod import enable_features

    enable_features("contrib")
    return SimpleNamespace(
        m=measurements,
        c=combinators,
        i64=typing_.i64,
        vector_domain=domains.vector_domain,
        atom_domain=domains.atom_domain,
        l1_distance=metrics.l1_distance,
        l2_distance=metrics.l2_distance,
        linf_distance=metrics.linf_distance,
        absolute_distance=metrics.absolute_distance,
        zero_concentrated_divergence=measures.zero_concentrated_divergence,
    )


def _int_scale(make: Any, d_in: float, scale: float, target: float, cost: Any) -> tuple[Any, float]:
    """Build a measurement whose certified cost at ``d_in`` does not exceed ``target``.

    Floating-point division can leave ``d_in / scale`` one ulp above the target; the scale is
    nudged up until OpenDP's own privacy map certifies it.
    """
    for _ in range(64):
        m = make(scale)
        c = float(cost(m.map(d_in)))
        if c <= target:
            return m, scale
        scale = math.nextafter(scale, math.inf)
    raise RuntimeError("could not calibrate the noise scale")  # pragma: no cover - defensive


def draw_laplace(values: Sequence[int], l1_sensitivity: int, epsilon: float) -> tuple[list[int], float]:
    """Add discrete Laplace noise of scale l1_sensitivity / epsilon to integer values (one vector release).

    Returns the noisy integers and the scale used (at least sensitivity / epsilon).
    """
    dp = _dp()
    space = (dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l1_distance(T=dp.i64))
    m, scale = _int_scale(
        lambda s: dp.m.make_laplace(*space, scale=s),
        int(l1_sensitivity),
        laplace_scale(l1_sensitivity, epsilon),
        epsilon,
        lambda c: c,
    )
    return list(m([int(v) for v in values])), scale


def draw_gaussian(values: Sequence[int], l2_sensitivity: float, sigma: float) -> tuple[list[int], float]:
    """Add discrete Gaussian noise of scale ``sigma`` to integer values (one vector release).

    Returns the noisy integers and OpenDP's certified rho for the integer L2 sensitivity
    ceil(l2_sensitivity) (it must not exceed sensitivity^2 / (2 sigma^2) for integer sensitivities).
    """
    dp = _dp()
    space = (dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l2_distance(T=dp.i64))
    m = dp.m.make_gaussian(*space, scale=sigma)
    rho = float(m.map(math.ceil(l2_sensitivity)))
    return list(m([int(v) for v in values])), rho


def exponential_measurement(sensitivity: float, epsilon: float) -> tuple[Any, float]:
    """OpenDP's Gumbel noisy max for the textbook exponential mechanism, and its certified scale.

    The scale starts at 2 Du / eps and is nudged up (by ulps, as for Laplace) until OpenDP's
    zero-concentrated privacy map certifies rho <= eps^2 / 8 at the utility sensitivity Du; rho =
    eps^2/8 is what a pure eps-DP exponential mechanism costs in zCDP (Cesar & Rogers 2021), so the
    scale OpenDP draws with is one whose eps is proven by OpenDP's own map, not just by our division.
    """
    dp = _dp()
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
    return _int_scale(
        lambda s: dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=s),
        float(sensitivity),
        2.0 * sensitivity / epsilon,
        epsilon**2 / 8.0,
        lambda c: c,
    )


def draw_exponential(utilities: Sequence[float], sensitivity: float, epsilon: float) -> int:
    """Pick an index with the textbook exponential mechanism, P(i) ~ exp(eps u_i / (2 Du)).

    OpenDP 0.16's ``make_noisy_max`` with the zero-concentrated measure adds Gumbel noise of
    scale s and returns the argmax, so P(i) ~ exp(u_i / s) (the Gumbel-max trick); s = 2 Du / eps
    gives the textbook mechanism (the pure measure would sample permute-and-flip, a different
    distribution). The scale is certified by OpenDP's zCDP map (rho <= eps^2/8, see
    :func:`exponential_measurement`). dpdesk books it as pure eps-DP: that booking rests on
    Gumbel-max being exactly the exponential mechanism (McSherry & Talwar 2007), whose eps-DP proof
    is the textbook one; OpenDP's map certifies only the zCDP cost.
    """
    m, _scale = exponential_measurement(sensitivity, epsilon)
    return int(m([float(u) for u in utilities]))


def rho_to_epsilon(rho: float, delta: float) -> float:
    """Tight conversion of rho-zCDP to (epsilon, delta)-DP (Canonne, Kamath & Steinke 2020), via OpenDP."""
    if rho <= 0:
        return 0.0
    if (
        rho > 1e4
    ):  # beyond OpenDP's range (e^rho overflows) and any budget: the simple bound, also an upper bound
        return rho_to_epsilon_simple(rho, delta)
    dp = _dp()
    space = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
    g = dp.m.make_gaussian(*space, scale=1.0 / math.sqrt(2.0 * rho))
    return float(dp.c.make_zCDP_to_approxDP(g).map(1.0).epsilon(delta))


def rho_to_epsilon_simple(rho: float, delta: float) -> float:
    """The simple bound epsilon = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
