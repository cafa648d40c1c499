"""The private step of the synthesiser: select two-way marginals and measure them (the only step that reads data).

Method: MST (McKenna, Miklau & Sheldon, "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data", J. Privacy and Confidentiality 11(3), 2021), with the fit and the
sampler of :mod:`dpdesk.core.dp.synthetic.fit` and :mod:`dpdesk.core.dp.synthetic.sample`:

1. measure every one-way marginal (one histogram per column, over its public levels);
2. select d - 1 pairs of columns forming a maximum spanning tree, one pair per round with the exponential
   mechanism; a pair's score is the L1 distance between its real two-way marginal and the product of the two
   noisy one-way marginals (how far from independent the pair is, as far as the released values can tell);
   a round's candidates are the pairs joining two parts of the tree not yet joined, so the number of rounds
   (d - 1) and the candidates read nothing but public and released values;
3. measure the selected two-way marginals.

Budget (``Split``): with delta > 0 the whole query is rho-zCDP, rho the largest whose Canonne-Kamath-Steinke
conversion at delta stays within epsilon (:func:`dpdesk.core.dp.accounting.rho_budget`, OpenDP's conversion);
rho is split ONE_WAY : SELECT : TWO_WAY. One-way marginals (d of them) and two-way marginals (d - 1) get
discrete Gaussian noise with sigma such that each group costs its share, sum Delta_2^2 / (2 sigma^2); a
selection round is an exponential mechanism at eps_s, which costs eps_s^2 / 8 in zCDP (Cesar & Rogers 2021).
With delta = 0, the same shares of epsilon, pure composition, and discrete Laplace noise (scale Delta_1 /
eps_m per marginal).

Sensitivities, with k the rows one person may have (k = 1: one row): one row changes each marginal in one
cell (add/remove: L1 = L2 = k) or moves it between two cells (replace: L1 = 2k, L2 = sqrt(2) k). A row
left out of every marginal (a missing value in a column whose rule is "drop", or an empty id: see
:func:`dpdesk.core.dp.statistics.synthetic.encode_table`) is, under add/remove, a row not added; under replace,
a marginal's change is the counts of the rows put in minus those of the rows taken out, two non-negative
vectors of at most k each, however many of either are left out: L1 <= 2k and L2 <= sqrt(2) k still. (Domain
version 1 kept missing values as a level of their own.) A score is an L1 distance from the real
marginal to a fixed (released) table, so it changes by at most the marginal's L1 sensitivity: k under
add/remove, 2k under replace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp.synthetic.domain import Attribute, check_domain

#: The shares of the budget (of rho, or of epsilon when delta = 0): one-way marginals, selection, two-way.
ONE_WAY, SELECT, TWO_WAY = 0.1, 0.1, 0.8


@dataclass(frozen=True)
class Split:
    """The budget split of one synthetic table: public, from epsilon, delta, the columns and the relation."""

    epsilon: float
    delta: float
    n_columns: int
    replace: bool
    k: int
    rho: float  # the total zCDP budget (0 with delta = 0)
    one_way_scale: float  # Gaussian sigma, or Laplace scale, of each one-way marginal
    two_way_scale: float
    select_epsilon: float  # epsilon of each selection round

    @property
    def gaussian(self) -> bool:
        """Whether the measurements are Gaussian (zCDP) rather than Laplace (pure epsilon)."""
        return self.delta > 0

    @property
    def l1(self) -> float:
        """L1 sensitivity of one marginal: k (add/remove), 2k (replace)."""
        return float(2 * self.k if self.replace else self.k)

    @property
    def l2(self) -> float:
        """L2 sensitivity of one marginal: k (add/remove), sqrt(2) k (replace)."""
        return math.sqrt(2.0) * self.k if self.replace else float(self.k)

    @property
    def score_sensitivity(self) -> float:
        """Sensitivity of a selection score (an L1 distance from the real marginal): the marginal's L1."""
        return self.l1

    @property
    def rounds(self) -> int:
        """Selection rounds: d - 1 (a spanning tree); none when the split gives selection nothing."""
        return self.n_columns - 1 if self.select_epsilon > 0 else 0

    def one_way_cost(self) -> float:
        """rho (or epsilon) of all one-way measurements."""
        return self._cost(self.n_columns, self.one_way_scale)

    def two_way_cost(self) -> float:
        """rho (or epsilon) of all two-way measurements."""
        return self._cost(self.rounds, self.two_way_scale)

    def select_cost(self) -> float:
        """rho (or epsilon) of all selection rounds: eps_s^2 / 8 each in zCDP, eps_s each when pure."""
        e = self.select_epsilon
        return self.rounds * (e * e / 8.0 if self.gaussian else e)

    def _cost(self, count: int, scale: float) -> float:
        if count == 0 or math.isinf(scale):
            return 0.0
        if self.gaussian:
            return count * self.l2**2 / (2.0 * scale**2)
        return count * self.l1 / scale

    def total_epsilon(self) -> float:
        """The booked epsilon: the CKS conversion of the summed rho at delta, or the summed epsilons."""
        total = self.one_way_cost() + self.select_cost() + self.two_way_cost()
        return mech.rho_to_epsilon(total, self.delta) if self.gaussian else total


@lru_cache(maxsize=64)
def _rho_budget(epsilon: float, delta: float) -> float:
    """The largest rho whose CKS conversion at delta is within epsilon (a bisection over OpenDP: cached)."""
    from dpdesk.core.dp.accounting import rho_budget

    return rho_budget(epsilon, delta)


def split_budget(
    epsilon: float,
    delta: float,
    n_columns: int,
    replace: bool = False,
    k: int = 1,
    shares: tuple[float, float, float] = (ONE_WAY, SELECT, TWO_WAY),
) -> Split:
    """Split (epsilon, delta) over the d one-way, d - 1 selection and d - 1 two-way parts (public).

    ``shares``: of the one-way, selection and two-way parts (the baseline gives everything to the one-way
    marginals: ``(1, 0, 0)``). Every scale is rounded up a little (1e-12 relative) so that the summed cost never exceeds the budget
    through floating point; :meth:`Split.total_epsilon` recomputes it.
    """
    if n_columns < 2:
        raise ValueError("a synthetic table needs at least 2 columns")
    d, rounds = n_columns, n_columns - 1
    s_one, s_sel, s_two = shares
    if s_one <= 0 or s_sel < 0 or s_two < 0 or (s_sel > 0) != (s_two > 0) or s_one + s_sel + s_two > 1:
        raise ValueError("the shares must be positive (selection and two-way together) and sum to at most 1")
    up = 1.0 + 1e-12
    probe = Split(epsilon, delta, d, replace, k, 0.0, 1.0, 1.0, 1.0)
    inf = math.inf
    if delta > 0:
        rho = _rho_budget(epsilon, delta)
        l2 = probe.l2
        one = l2 * math.sqrt(d / (2.0 * s_one * rho)) * up
        two = l2 * math.sqrt(rounds / (2.0 * s_two * rho)) * up if s_two > 0 else inf
        sel = math.sqrt(8.0 * s_sel * rho / rounds) / up
        return Split(epsilon, delta, d, replace, k, rho, one, two, sel)
    l1 = probe.l1
    one = l1 * d / (s_one * epsilon) * up
    two = l1 * rounds / (s_two * epsilon) * up if s_two > 0 else inf
    sel = s_sel * epsilon / rounds / up
    return Split(epsilon, 0.0, d, replace, k, 0.0, one, two, sel)


@dataclass(frozen=True)
class Measurement:
    """One released noisy marginal: its columns, its noisy counts (row-major over their levels) and noise."""

    columns: tuple[int, ...]
    shape: tuple[int, ...]
    noisy: tuple[int, ...]
    scale: float  # Gaussian sigma or Laplace scale
    gaussian: bool

    @property
    def variance(self) -> float:
        """The noise variance per cell: sigma^2, or 2 b^2 for Laplace."""
        return self.scale**2 if self.gaussian else 2.0 * self.scale**2

    def table(self) -> np.ndarray:
        """The noisy counts as an array of ``shape`` (float)."""
        return np.asarray(self.noisy, dtype=np.float64).reshape(self.shape)


@dataclass(frozen=True)
class Measurements:
    """Everything the private step releases (public once released): the fit and the sampler read only this."""

    split: Split
    sizes: tuple[int, ...]
    one_way: tuple[Measurement, ...]
    selected: tuple[tuple[int, int], ...]  # the pairs, in the order the rounds chose them
    two_way: tuple[Measurement, ...]


#: Noise for one marginal: (exact counts, the split, the scale) -> noisy counts.
NoiseFn = Callable[[list[int], Split, float], list[int]]
#: A selection: (scores, the split) -> the index picked.
PickFn = Callable[[list[float], Split], int]


def opendp_noise(values: list[int], split: Split, scale: float) -> list[int]:
    """One marginal through dpdesk's mechanisms (OpenDP's discrete Gaussian or Laplace)."""
    if split.gaussian:
        noisy, _rho = mech.draw_gaussian(values, split.l2, scale)
        return noisy
    noisy, _b = mech.draw_laplace(values, round(split.l1), split.l1 / scale)
    return noisy


def opendp_pick(scores: list[float], split: Split) -> int:
    """One selection round through dpdesk's exponential mechanism (OpenDP's Gumbel noisy max)."""
    return mech.draw_exponential(scores, split.score_sensitivity, split.select_epsilon)


@dataclass(frozen=True)
class ExactMarginals:
    """The exact one-way and two-way marginals of the encoded table (secret: never shown, saved or logged)."""

    sizes: tuple[int, ...]
    one_way: tuple[np.ndarray, ...]
    two_way: dict[tuple[int, int], np.ndarray]


def _marginal(codes: np.ndarray, sizes: Sequence[int], cols: tuple[int, ...]) -> np.ndarray:
    """The exact marginal of these columns (reads the data)."""
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for c in cols:
        flat = flat * sizes[c] + codes[:, c]
    shape = tuple(sizes[c] for c in cols)
    return np.bincount(flat, minlength=math.prod(shape)).astype(np.int64).reshape(shape)


def exact_marginals(codes: np.ndarray, attrs: Sequence[Attribute]) -> ExactMarginals:
    """Every one-way and two-way marginal of the encoded table ``codes`` (n rows x d columns of levels)."""
    check_domain(attrs)
    d = len(attrs)
    if codes.ndim != 2 or codes.shape[1] != d:
        raise ValueError("the encoded table does not match the columns")
    sizes = tuple(a.size for a in attrs)
    one = tuple(_marginal(codes, sizes, (i,)) for i in range(d))
    two = {(i, j): _marginal(codes, sizes, (i, j)) for i in range(d) for j in range(i + 1, d)}
    return ExactMarginals(sizes, one, two)


def _independent(one: Measurement, other: Measurement) -> np.ndarray:
    """The two-way table the released one-way marginals imply if the columns were independent."""
    a = np.clip(one.table(), 0.0, None)
    b = np.clip(other.table(), 0.0, None)
    n = max(1.0, 0.5 * (float(one.table().sum()) + float(other.table().sum())))
    pa = a / a.sum() if a.sum() > 0 else np.full(a.shape, 1.0 / a.size)
    pb = b / b.sum() if b.sum() > 0 else np.full(b.shape, 1.0 / b.size)
    return n * np.outer(pa, pb)


def _released(
    exact: np.ndarray, cols: tuple[int, ...], split: Split, scale: float, noise: NoiseFn
) -> Measurement:
    values = [int(v) for v in exact.ravel().tolist()]
    return Measurement(cols, exact.shape, tuple(noise(values, split, scale)), scale, split.gaussian)


def measure_marginals(
    exact: ExactMarginals, split: Split, noise: NoiseFn = opendp_noise, pick: PickFn = opendp_pick
) -> Measurements:
    """Select and measure marginals: every value returned went through ``noise`` or ``pick``.

    The rounds' candidates and scores' reference tables come from public and released values only; the
    scores read the exact two-way marginals (sensitivity: :attr:`Split.score_sensitivity`).
    """
    d = len(exact.sizes)
    if split.n_columns != d:
        raise ValueError("the split does not match the columns")
    one_way = tuple(_released(exact.one_way[i], (i,), split, split.one_way_scale, noise) for i in range(d))
    pairs = list(exact.two_way)
    part = list(range(d))  # union-find over the columns

    def root(x: int) -> int:
        while part[x] != x:
            part[x] = part[part[x]]
            x = part[x]
        return x

    selected: list[tuple[int, int]] = []
    for _round in range(split.rounds):
        cands = [p for p in pairs if root(p[0]) != root(p[1])]
        scores = [
            float(np.abs(exact.two_way[p] - _independent(one_way[p[0]], one_way[p[1]])).sum()) for p in cands
        ]
        i, j = cands[pick(scores, split)]
        part[root(i)] = root(j)
        selected.append((i, j))
    two_way = tuple(_released(exact.two_way[p], p, split, split.two_way_scale, noise) for p in selected)
    return Measurements(split, exact.sizes, one_way, tuple(selected), two_way)


def measure(codes: np.ndarray, attrs: Sequence[Attribute], split: Split) -> Measurements:
    """Select and measure the marginals of the encoded table (n rows x d columns of levels)."""
    return measure_marginals(exact_marginals(codes, attrs), split)


def measure_independent(
    codes: np.ndarray,
    attrs: Sequence[Attribute],
    epsilon: float,
    delta: float,
    replace: bool = False,
    k: int = 1,
) -> Measurements:
    """The independent baseline: only the one-way marginals, with the whole budget (no selection)."""
    return measure(codes, attrs, split_budget(epsilon, delta, len(attrs), replace, k, shares=(1.0, 0.0, 0.0)))
