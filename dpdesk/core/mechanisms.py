"""Noise mechanisms: the textbook formulas users learn from, and the one adapter to OpenDP's samplers.

Formulas (each shown to the user with its numbers put in):

* Laplace: scale b = sensitivity / epsilon (L1 sensitivity); 95% error bound b ln 20.
* Gaussian, classic (Dwork & Roth 2014, Thm A.1, valid for epsilon < 1):
  sigma = sqrt(2 ln(1.25/delta)) * sensitivity / epsilon (L2 sensitivity); 95% bound 1.96 sigma.
* Gaussian, analytic (Balle & Wang 2018): the smallest sigma with
  Phi(D/(2s) - e s/D) - exp(e) Phi(-D/(2s) - e s/D) <= delta.
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


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The exact delta of a Gaussian with this sigma at this epsilon (Balle & Wang 2018, Thm 8)."""
    phi = NormalDist().cdf
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return phi(a - b) - math.exp(epsilon) * phi(-a - b)


def analytic_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest sigma whose exact delta at epsilon is at most ``delta`` (Balle & Wang 2018).

    Found by bisection on :func:`gaussian_delta`, which decreases in sigma; the result is rounded
    up, so the guarantee holds.

    >>> round(analytic_sigma(1, 0.5, 1e-5), 6)
    7.031827
    """
    lo, hi = 0.0, max(sensitivity, 1e-12)
    while gaussian_delta(hi, sensitivity, epsilon) > delta:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid <= lo or mid >= hi:
            break
        if gaussian_delta(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return hi


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
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _int_scale(make: Any, d_in: int, scale: float, target: float, cost: Any) -> tuple[Any, float]:
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


def draw_exponential(utilities: Sequence[float], sensitivity: float, epsilon: float) -> int:
    """Pick an index with the textbook exponential mechanism, P(i) ~ exp(eps u_i / (2 Du)).

    OpenDP 0.16's ``make_noisy_max`` with the zero-concentrated measure adds Gumbel noise of
    scale s and returns the argmax, so P(i) ~ exp(u_i / s); s = 2 Du / eps gives the textbook
    mechanism, which is eps-DP (booked as pure epsilon; OpenDP reports rho = eps^2/8). The pure
    measure would sample permute-and-flip, a different distribution.
    """
    dp = _dp()
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
    m = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=2.0 * sensitivity / epsilon)
    return int(m([float(u) for u in utilities]))


def rho_to_epsilon(rho: float, delta: float) -> float:
    """Tight conversion of rho-zCDP to (epsilon, delta)-DP (Canonne, Kamath & Steinke 2020), via OpenDP."""
    if rho <= 0:
        return 0.0
    dp = _dp()
    space = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
    g = dp.m.make_gaussian(*space, scale=1.0 / math.sqrt(2.0 * rho))
    return float(dp.c.make_zCDP_to_approxDP(g).map(1.0).epsilon(delta))


def rho_to_epsilon_simple(rho: float, delta: float) -> float:
    """The simple bound epsilon = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
