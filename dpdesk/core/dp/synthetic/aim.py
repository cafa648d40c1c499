"""The adaptive synthesiser: select the marginal the current model gets most wrong, measure it, refit.

Method: AIM (McKenna, Mullins, Sheldon & Miklau 2022, "AIM: an adaptive and iterative mechanism for
differentially private synthetic data", PVLDB 15(11)), with the graphical model of :mod:`.pgm`:

1. **Workload** (public): every pair of columns, and every triple when the domain allows; each candidate
   marginal r is a set of at most three columns in the workload's downward closure, weighted by how much of the
   workload it covers, w_r = sum over workload marginals s of |r ∩ s|.
2. **Budget** (zCDP): rho from (epsilon, delta) as for MST (the Canonne-Kamath-Steinke conversion); T = 16 d
   planned rounds; each round gets a Gaussian measurement of scale sigma = Δ2 sqrt(T / (2 · 0.9 rho)) and an
   exponential mechanism of epsilon_t = sqrt(8 · 0.1 rho / T) (costing epsilon_t^2 / 8).
3. **Start**: every one-way marginal measured with sigma.
4. **Rounds**, while budget remains: the candidates whose addition keeps the model's junction tree within
   ``max_cells`` · (rho spent / rho) cells (public sizes only) are scored
   score_r = w_r (||M_r(D) − M_r(model)||_1 − sqrt(2/π) sigma n_r)  (n_r: r's cells),
   one is picked by the exponential mechanism (score sensitivity: max w_r times a marginal's L1 sensitivity),
   measured, and the model refitted. When the refitted model's M_r moved by at most sqrt(2/π) sigma n_r (the
   expected noise: the model already knew it), sigma is halved and epsilon_t doubled (annealing; only noisy and
   public quantities decide it). A round that would leave less than two rounds' cost spends all that remains and
   is the last; the total spent is exactly rho, so the booked epsilon is the conversion of rho at delta.

Sensitivities, k the rows one person may have: a marginal changes by L1 = k and L2 = k (add/remove) or
L1 = 2k and L2 = sqrt(2) k (replace); the score of r is w_r times an L1 distance from M_r(D) to a table fixed by
released values, so it moves by at most w_r L1 <= max_r w_r · L1 (brute-forced in the tests).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpdesk.core.dp.synthetic.pgm import Clique, Model, Observation, fit_model, tree_cells

#: The share of each round's rho that measures (AIM's alpha); the rest selects.
MEASURE_SHARE = 0.9
#: Rounds planned per column (AIM's T = 16 d).
ROUNDS_PER_COLUMN = 16
#: The largest junction tree (float64 cells summed over its cliques) the model may grow to: 2^23 cells is 64 MiB
#: per copy of the beliefs; the fit keeps a few copies, well within 1 GiB.
MAX_CELLS = 1 << 23
#: Triples join the workload while every triple's marginal has at most this many cells.
MAX_TRIPLE_CELLS = 1 << 16
#: Mirror descent iterations after each round (warm-started) and for the final fit.
ROUND_ITERATIONS = 100
FINAL_ITERATIONS = 1000


@dataclass(frozen=True)
class Candidate:
    """A marginal the rounds may measure: its columns and workload weight."""

    clique: Clique
    weight: float


def workload(sizes: Sequence[int], triples: bool | None = None) -> list[Candidate]:
    """The candidates: the downward closure of every pair (and every triple when ``triples``, by default when every
    triple has at most :data:`MAX_TRIPLE_CELLS` cells), weighted by their overlap with the workload."""
    d = len(sizes)
    if triples is None:
        big = sorted(sizes, reverse=True)[:3]
        triples = d >= 3 and math.prod(big) <= MAX_TRIPLE_CELLS
    work = list(itertools.combinations(range(d), 3 if triples and d >= 3 else 2)) if d >= 2 else [(0,)]
    closure: set[Clique] = set()
    for s in work:
        for r in range(1, len(s) + 1):
            closure.update(itertools.combinations(s, r))
    out = []
    for c in sorted(closure, key=lambda c: (len(c), c)):
        w = float(sum(len(set(c) & set(s)) for s in work))
        out.append(Candidate(c, w))
    return out


def exact_marginal(codes: np.ndarray, sizes: Sequence[int], clique: Clique) -> np.ndarray:
    """The exact counts over ``clique`` (reads the data: secret)."""
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for c in clique:
        flat = flat * sizes[c] + codes[:, c]
    shape = tuple(sizes[c] for c in clique)
    return np.bincount(flat, minlength=math.prod(shape)).astype(np.int64).reshape(shape)


@dataclass(frozen=True)
class Round:
    """One released step: the marginal measured, its noisy counts and scale, and the selection's epsilon (0 for
    the starting one-way measurements)."""

    clique: Clique
    noisy: tuple[int, ...]
    sigma: float
    select_epsilon: float

    def observation(self, sizes: Sequence[int]) -> Observation:
        shape = tuple(sizes[a] for a in self.clique)
        return Observation(
            self.clique, np.asarray(self.noisy, dtype=np.float64).reshape(shape), self.sigma**2
        )


@dataclass(frozen=True)
class Budget:
    """The public budget of one adaptive synthesis."""

    rho: float
    l1: float
    l2: float
    n_columns: int

    @property
    def rounds(self) -> int:
        return ROUNDS_PER_COLUMN * self.n_columns

    def sigma(self) -> float:
        return self.l2 * math.sqrt(self.rounds / (2.0 * MEASURE_SHARE * self.rho))

    def select_epsilon(self) -> float:
        return math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * self.rho / self.rounds)

    def measure_cost(self, sigma: float) -> float:
        return self.l2 * self.l2 / (2.0 * sigma * sigma)


@dataclass
class Released:
    """Everything the adaptive step releases (public once released): the fit and the sampler read only this."""

    sizes: tuple[int, ...]
    budget: Budget
    rounds: list[Round] = field(default_factory=list)

    def spent(self) -> float:
        """The rho of every measurement and selection."""
        return sum(
            self.budget.measure_cost(r.sigma) + r.select_epsilon * r.select_epsilon / 8.0 for r in self.rounds
        )

    def observations(self) -> list[Observation]:
        return [r.observation(self.sizes) for r in self.rounds]


#: Noise for one marginal: (exact counts, L2 sensitivity, sigma) -> noisy counts.
NoiseFn = Callable[[list[int], float, float], list[int]]
#: A selection: (scores, sensitivity, epsilon) -> the index picked.
PickFn = Callable[[list[float], float, float], int]


def opendp_noise(values: list[int], l2: float, sigma: float) -> list[int]:
    """One marginal through dpdesk's mechanisms (OpenDP's discrete Gaussian)."""
    from dpdesk.core.dp import mechanisms as mech

    noisy, _rho = mech.draw_gaussian(values, l2, sigma)
    return noisy


def opendp_pick(scores: list[float], sensitivity: float, epsilon: float) -> int:
    """One selection through dpdesk's exponential mechanism (OpenDP's Gumbel noisy max)."""
    from dpdesk.core.dp import mechanisms as mech

    return mech.draw_exponential(scores, sensitivity, epsilon)


def _cells(sizes: Sequence[int], clique: Clique) -> int:
    return math.prod(sizes[a] for a in clique)


def adaptive_measure(
    codes: np.ndarray,
    sizes: Sequence[int],
    budget: Budget,
    *,
    candidates: Sequence[Candidate] | None = None,
    max_cells: int = MAX_CELLS,
    noise: NoiseFn = opendp_noise,
    pick: PickFn = opendp_pick,
    iterations: int = ROUND_ITERATIONS,
    on_round: Callable[[int, float], None] | None = None,
) -> tuple[Released, Model]:
    """Run the rounds over the encoded table (n rows x d levels): every value returned went through ``noise`` or
    ``pick``; the scores read exact marginals (sensitivity: max weight times ``budget.l1``)."""
    sizes = tuple(int(s) for s in sizes)
    d = len(sizes)
    cands = list(candidates) if candidates is not None else workload(sizes)
    exact = {c.clique: exact_marginal(codes, sizes, c.clique) for c in cands}
    for i in range(d):
        exact.setdefault((i,), exact_marginal(codes, sizes, (i,)))
    released = Released(sizes, budget)
    sigma = budget.sigma()
    eps = budget.select_epsilon()
    for i in range(d):
        vals = [int(v) for v in exact[(i,)].ravel().tolist()]
        released.rounds.append(Round((i,), tuple(noise(vals, budget.l2, sigma)), sigma, 0.0))
    model = fit_model(sizes, released.observations(), iterations=iterations)
    sensitivity = max(c.weight for c in cands) * budget.l1
    last = False
    while not last:
        left = budget.rho - released.spent()
        if left < 2.0 * (budget.measure_cost(sigma) + eps * eps / 8.0):
            # the last round spends all that remains, split as every round is
            sigma = budget.l2 / math.sqrt(2.0 * MEASURE_SHARE * max(left, 0.0)) if left > 0 else math.inf
            eps = math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * max(left, 0.0))
            last = True
            if left <= 0:
                break
        spent_after = released.spent() + budget.measure_cost(sigma) + eps * eps / 8.0
        limit = max_cells * spent_after / budget.rho
        held = sorted({tuple(r.clique) for r in released.rounds})
        small = [c for c in cands if _fits(sizes, held, c.clique, limit)]
        scores = []
        for c in small:
            err = float(np.abs(exact[c.clique] - model.project(c.clique)).sum())
            scores.append(c.weight * (err - math.sqrt(2.0 / math.pi) * sigma * _cells(sizes, c.clique)))
        chosen = small[pick(scores, sensitivity, eps)].clique
        vals = [int(v) for v in exact[chosen].ravel().tolist()]
        before = model.project(chosen)
        released.rounds.append(Round(chosen, tuple(noise(vals, budget.l2, sigma)), sigma, eps))
        model = fit_model(sizes, released.observations(), iterations=iterations, warm=model)
        moved = float(np.abs(model.project(chosen) - before).sum())
        if on_round is not None:
            on_round(len(released.rounds), released.spent() / budget.rho)
        if not last and moved <= math.sqrt(2.0 / math.pi) * sigma * _cells(sizes, chosen):
            sigma /= 2.0
            eps *= 2.0
    return released, model


_FIT_CACHE: dict[frozenset[Clique], int] = {}


def _fits(sizes: tuple[int, ...], held: list[Clique], clique: Clique, limit: float) -> bool:
    """Whether the model's junction tree with ``clique`` added stays within ``limit`` cells (public sizes)."""
    if any(set(clique) <= set(h) for h in held):
        return True
    key = frozenset([*held, clique])
    cells = _FIT_CACHE.get(key)
    if cells is None:
        cells = tree_cells(sizes, key)
        if len(_FIT_CACHE) > 4096:
            _FIT_CACHE.clear()
        _FIT_CACHE[key] = cells
    return cells <= limit


def final_fit(released: Released, iterations: int = FINAL_ITERATIONS, warm: Model | None = None) -> Model:
    """The model the table is drawn from: the fit of every released measurement, from the uniform start."""
    return fit_model(released.sizes, released.observations(), iterations=iterations, warm=warm)
