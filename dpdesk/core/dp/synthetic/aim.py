"""The adaptive synthesiser: select the marginal the current model gets most wrong, measure it, refit.

Method: AIM (McKenna, Mullins, Sheldon & Miklau 2022, "AIM: an adaptive and iterative mechanism for
differentially private synthetic data", PVLDB 15(11)), with the graphical model of :mod:`.pgm`:

1. **Workload** (public): every pair of columns, and every triple when the domain allows; each candidate
   marginal r is a set of at most three columns in the workload's downward closure, weighted by how much of the
   workload it covers, w_r = sum over workload marginals s of |r ∩ s|.
2. **Budget** (zCDP): rho from (epsilon, delta) as for MST (the Canonne-Kamath-Steinke conversion); T = 16 d
   planned rounds; each round gets a Gaussian measurement of scale sigma = Δ2 sqrt(T / (2 · 0.9 rho)) and an
   exponential mechanism of epsilon_t = sqrt(8 · 0.1 rho / T) (costing epsilon_t^2 / 8).
3. **Start**: every one-way marginal measured with sigma. When the released counts say that this left the one-way
   marginals mostly noise (their noise alone expected above :data:`ONE_WAY_NOISE` in total-variation distance on
   average, sqrt(2/π) sigma n_i / (2 N̂), N̂ the rows the released counts estimate), every one is measured again at
   the sigma that brings it there, all one-way measurements spending at most :data:`ONE_WAY_MAX_SHARE` of rho
   (OpenDP's AIM always spends half of it on them); the rounds then plan T rounds on what remains. A decision on
   released values only, as annealing is: it changes how rho is split, never its total. Measured on three real
   tables (benchmarks/RESULTS-synth-grid.md): the tables of a few thousand rows at epsilon 0.3 and 1 gain most
   (acs12 at epsilon 0.3, two-way TVD 0.185 to 0.154), large tables or budgets are not measured again.
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

import functools
import hashlib
import itertools
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpdesk.core.dp.synthetic.pgm import (
    Clique,
    Model,
    Observation,
    adjacency,
    fit_model,
    tree_cells_many,
)

#: The share of each round's rho that measures (AIM's alpha); the rest selects.
MEASURE_SHARE = 0.9
#: Rounds planned per column (AIM's T = 16 d).
ROUNDS_PER_COLUMN = 16
#: The largest junction tree (float64 cells summed over its cliques) the model may grow to: 10^5 cells is 0.8 MiB
#: per copy of the beliefs (the fit keeps a few), far within 1 GiB. Measured on diamonds (53,940 rows, 10 columns,
#: 10-17 levels each; 2 shared cores, load 3.4-3.8; benchmarks/RESULTS-synth.md): at epsilon 1, 10^5 cells and 30
#: iterations a round took 4.2 s for the rounds and 6.0 s for the final fit (2-way TVD 0.034); 3 x 10^5 and 50,
#: 8.1 + 13.8 s (0.031); at epsilon 3, 10^5: 4.3 + 7.6 s (0.020), 3 x 10^5: 9.9 + 23.4 s (0.022); 2^23 cells
#: and 100 iterations (the first defaults): 114 s. Peak memory 87-97 MiB in every case.
MAX_CELLS = 100_000
#: Triples join the workload while every triple's marginal has at most this many cells,
MAX_TRIPLE_CELLS = 1 << 16
#: and all the triples' marginals together (the rounds hold every candidate's exact counts, int64) at most this many:
#: 2^24 cells is 128 MiB (30 columns of 40 levels would otherwise hold 4,060 triples of 64,000 cells, 2 GiB).
MAX_WORKLOAD_CELLS = 1 << 24
#: The one-way marginals' noise alone (expected total-variation distance, averaged over the columns) above which
#: they are measured again, down to it (a sweep of 0.02-0.05 in TVD on acs12, ISLR Wage and diamonds at epsilon 0.3,
#: 1 and 3, 8 runs each: the better values within a run's spread of each other, the rule's default between them),
ONE_WAY_NOISE = 0.025
#: and the largest share of rho all one-way measurements spend together (OpenDP's AIM's ``oneway_split``).
ONE_WAY_MAX_SHARE = 0.5
#: Mirror descent iterations after each round (warm-started) and for the final fit (see MAX_CELLS for the times).
ROUND_ITERATIONS = 30
FINAL_ITERATIONS = 1000


@dataclass(frozen=True)
class Candidate:
    """A marginal the rounds may measure: its columns and workload weight."""

    clique: Clique
    weight: float


def workload(sizes: Sequence[int], triples: bool | None = None) -> list[Candidate]:
    """The candidates: the downward closure of every pair (and every triple when ``triples``, by default when every
    triple has at most :data:`MAX_TRIPLE_CELLS` cells and all of them at most :data:`MAX_WORKLOAD_CELLS`), weighted
    by their overlap with the workload."""
    d = len(sizes)
    if triples is None:
        big = sorted(sizes, reverse=True)[:3]
        triples = (
            d >= 3
            and math.prod(big) <= MAX_TRIPLE_CELLS
            and math.comb(d, 3) * math.prod(big) <= MAX_WORKLOAD_CELLS
        )
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

    def sigma(self, rho: float | None = None) -> float:
        """A round's starting sigma when the rounds plan on ``rho`` (by default the whole budget)."""
        return self.l2 * math.sqrt(self.rounds / (2.0 * MEASURE_SHARE * (self.rho if rho is None else rho)))

    def select_epsilon(self, rho: float | None = None) -> float:
        """A selection's starting epsilon when the rounds plan on ``rho`` (by default the whole budget)."""
        return math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * (self.rho if rho is None else rho) / self.rounds)

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


def one_way_noise(released: Released, sigma: float) -> float:
    """The one-way marginals' noise alone at ``sigma``, as the total-variation distance it is expected to bring,
    averaged over the columns: sqrt(2/π) sigma n_i / (2 N̂), N̂ the rows the released counts estimate (at least 1).
    Released values and public sizes only."""
    from dpdesk.core.dp.synthetic.pgm import estimate_total

    n_hat = estimate_total(released.observations())
    mean_cells = sum(released.sizes) / len(released.sizes)
    return math.sqrt(2.0 / math.pi) * sigma * mean_cells / (2.0 * n_hat)


def second_one_way_sigma(released: Released, sigma: float) -> float | None:
    """The sigma at which every one-way marginal, measured once at ``sigma``, is measured again, or None: when
    :func:`one_way_noise` is above :data:`ONE_WAY_NOISE`, the sigma whose measurement, combined with the first
    (inverse-variance), brings it to :data:`ONE_WAY_NOISE`, or the smallest that keeps every one-way measurement
    together within :data:`ONE_WAY_MAX_SHARE` of rho. Released values and public quantities only."""
    budget = released.budget
    d = len(released.sizes)
    noise = one_way_noise(released, sigma)
    if not noise > ONE_WAY_NOISE:
        return None
    target = sigma * ONE_WAY_NOISE / noise
    wanted = d * budget.l2 * budget.l2 / 2.0 * (1.0 / (target * target) - 1.0 / (sigma * sigma))
    extra = min(wanted, ONE_WAY_MAX_SHARE * budget.rho - released.spent())
    if not extra > 0:
        return None
    return budget.l2 * math.sqrt(d / (2.0 * extra))


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
    second = second_one_way_sigma(released, sigma)
    if second is not None:
        for i in range(d):
            vals = [int(v) for v in exact[(i,)].ravel().tolist()]
            released.rounds.append(Round((i,), tuple(noise(vals, budget.l2, second)), second, 0.0))
        rest = budget.rho - released.spent()
        sigma, eps = budget.sigma(rest), budget.select_epsilon(rest)
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
        fitting = _fitting(sizes, held, [c.clique for c in cands], limit)
        small = [c for c, fits in zip(cands, fitting, strict=True) if fits]
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


#: What is known of a graph's junction tree (by the public sizes and the graph's adjacency masks): its cells and
#: True, or a part of its cells and False (the count stopped there, above the limit of the time).
_FIT_CACHE: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, bool]] = {}
_FIT_CACHE_SIZE = 1 << 14


@functools.lru_cache(maxsize=8)
def _held_graph(sizes: tuple[int, ...], held: tuple[Clique, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The held cliques' bit masks and their graph (each column's neighbours as a bit mask)."""
    masks = tuple(sum(1 << a for a in set(h)) for h in held)
    return masks, tuple(adjacency(len(sizes), held))


def _fits(sizes: tuple[int, ...], held: list[Clique], clique: Clique, limit: float) -> bool:
    """Whether the model's junction tree with ``clique`` added stays within ``limit`` cells (:func:`_fitting`)."""
    return _fitting(sizes, held, [clique], limit)[0]


def _fitting(
    sizes: tuple[int, ...], held: list[Clique], cliques: Sequence[Clique], limit: float
) -> list[bool]:
    """For each clique, whether the model's junction tree with it added stays within ``limit`` cells (public
    sizes): a clique a held one contains always does; otherwise ``tree_cells(sizes, held + [clique]) <= limit``,
    decided by the same count, sooner:

    * one of the tree's cliques holds ``clique``, so more cells than ``limit`` in ``clique`` alone never fit (no
      column of 0 levels);
    * the tree depends only on the columns' graph, so graphs are counted once (the rounds' candidates often add no
      edge, or the same edges, to the held graph), all of a round's at once (:func:`.pgm.tree_cells_many`);
    * a count may stop once past ``limit`` (its terms are positive), and what it reached is kept: an answer for a
      limit at or above it counts again."""
    masks, graph = _held_graph(sizes, tuple(held))
    answers = [False] * len(cliques)  # a clique alone above the limit stays False; the others are set below
    todo: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}
    for i, clique in enumerate(cliques):
        mask = sum(1 << a for a in set(clique))
        if any(mask & h == mask for h in masks):
            answers[i] = True
            continue
        if _cells(sizes, clique) > limit and 0 not in sizes:
            continue
        adj = list(graph)
        for a in clique:
            adj[a] |= mask & ~(1 << a)
        key = (sizes, tuple(adj))
        known = _FIT_CACHE.get(key)
        if known is None or not (known[1] or known[0] > limit):
            todo.setdefault(key, []).append(i)
        else:
            answers[i] = known[1] and known[0] <= limit
    counted = tree_cells_many(sizes, [key[1] for key in todo], limit)
    if len(_FIT_CACHE) + len(todo) > _FIT_CACHE_SIZE:
        _FIT_CACHE.clear()
    for (key, where), known in zip(todo.items(), counted, strict=True):
        _FIT_CACHE[key] = known
        for i in where:
            answers[i] = known[1] and known[0] <= limit
    return answers


#: The last final fits, by the released rounds' content: one process fits a release once, however many times its
#: table is drawn (the release writes it, the app's Results tab, the report and the package draw it again). The fit
#: is deterministic and the sampler only reads the model, so a kept model draws the same table.
_FITS: OrderedDict[str, Model] = OrderedDict()
_FITS_KEPT = 4
_FITS_LOCK = threading.Lock()


def _fit_key(released: Released, iterations: int) -> str:
    text = json.dumps([released_to_dict(released), iterations], sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def final_fit(released: Released, iterations: int = FINAL_ITERATIONS, warm: Model | None = None) -> Model:
    """The model the table is drawn from: the fit of every released measurement, from the uniform start (kept for
    the process's next draws of the same release; a warm start is never kept)."""
    if warm is not None:
        return fit_model(released.sizes, released.observations(), iterations=iterations, warm=warm)
    key = _fit_key(released, iterations)
    with _FITS_LOCK:
        kept = _FITS.get(key)
        if kept is not None:
            _FITS.move_to_end(key)
            return kept
    model = fit_model(released.sizes, released.observations(), iterations=iterations)
    with _FITS_LOCK:
        _FITS[key] = model
        while len(_FITS) > _FITS_KEPT:
            _FITS.popitem(last=False)
    return model


#: The version of the fit and the sampler a table is regenerated with (kept in the ledger: a later change of either
#: gets a new number, and a release made before keeps its own).
FIT_VERSION = 1


def released_to_dict(released: Released) -> dict[str, object]:
    """The released rounds in the ledger's JSON form (every round: its clique, noisy counts, sigma and the
    selection's epsilon; the public budget they were drawn under)."""
    b = released.budget
    return {
        "method": "aim",
        "sizes": list(released.sizes),
        "budget": {"rho": b.rho, "l1": b.l1, "l2": b.l2, "n_columns": b.n_columns},
        "rounds": [
            {
                "clique": list(r.clique),
                "noisy": list(r.noisy),
                "sigma": r.sigma,
                "select_epsilon": r.select_epsilon,
            }
            for r in released.rounds
        ],
    }


def released_from_dict(d: dict[str, object]) -> Released:
    """Inverse of :func:`released_to_dict`; raises ValueError when a round does not fit the domain."""
    sizes = tuple(int(s) for s in d["sizes"])  # type: ignore[attr-defined]
    raw = d["budget"]
    assert isinstance(raw, dict)
    budget = Budget(float(raw["rho"]), float(raw["l1"]), float(raw["l2"]), int(raw["n_columns"]))
    out = Released(sizes, budget)
    for r in d["rounds"]:  # type: ignore[attr-defined]
        clique = tuple(int(a) for a in r["clique"])
        noisy = tuple(int(v) for v in r["noisy"])
        if list(clique) != sorted(set(clique)) or not all(0 <= a < len(sizes) for a in clique):
            raise ValueError("a round's clique is not sorted columns of the domain")
        if len(noisy) != _cells(sizes, clique):
            raise ValueError("a round's counts do not fit its clique")
        out.rounds.append(Round(clique, noisy, float(r["sigma"]), float(r["select_epsilon"])))
    return out


def rounds_rho(d: dict[str, object], l1: float, l2: float) -> float:
    """The zCDP cost of every recorded round of :func:`released_to_dict`'s record when one marginal's
    sensitivities are ``l1`` and ``l2``: l2^2 / (2 sigma^2) for each measurement and (eps_t l1 / l1_drawn)^2 / 8
    for each selection (its score's sensitivity, max weight times L1, grows with L1; its epsilon with it)."""
    raw = d["budget"]
    assert isinstance(raw, dict)
    c1 = l1 / float(raw["l1"])
    total = 0.0
    for r in d["rounds"]:  # type: ignore[attr-defined]
        sigma, eps = float(r["sigma"]), float(r["select_epsilon"]) * c1
        total += (l2 * l2 / (2.0 * sigma * sigma) if math.isfinite(sigma) else 0.0) + eps * eps / 8.0
    return total


def table_total(released: Released) -> float:
    """The number of rows the fitted model holds (the fit's own estimate, from the released counts alone)."""
    from dpdesk.core.dp.synthetic.pgm import estimate_total

    return estimate_total(released.observations())


def draw_codes(
    released: Released, rows: int | None, seed: int, fit_version: int = FIT_VERSION
) -> tuple[np.ndarray, np.random.Generator]:
    """The levels (n x d) the released rounds and the seed give (the final fit, then the sampler), and the
    generator, ready to draw the values inside each level. Post-processing of released values only."""
    from dpdesk.core.dp.synthetic.pgm import sample_model
    from dpdesk.core.dp.synthetic.pipeline import generator, table_rows

    if fit_version != FIT_VERSION:
        raise ValueError(f"unknown adaptive fit version {fit_version}")
    model = final_fit(released)
    n = table_rows(model.marginals.total, rows)
    rng = generator(seed)
    return sample_model(model, n, rng), rng
