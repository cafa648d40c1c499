"""A graphical model fitted to released marginals (post-processing: no data read), in numpy.

What it estimates: the distribution p over the public domain (one level per column) that best explains every
released noisy marginal y_c, each weighted by the inverse of its noise variance,

    minimise  L(p) = sum_c ||N p_c - y_c||^2 / (2 var_c)   over distributions p,

where p_c is p's marginal over the columns c and N the estimated number of rows. Among the distributions
reaching the minimum, the one of largest entropy has the form p(x) ∝ exp(sum_c theta_c(x_c)): a Markov random
field whose factors are the measured cliques. This is the estimation of Private-PGM (McKenna, Sheldon & Miklau
2019, "Graphical-model based estimation and inference for differential privacy", ICML), which AIM and MST use:

* **Inference** (the marginals of p given theta) on a **junction tree** of the measured cliques: the columns'
  graph (an edge between two columns measured together) is triangulated by greedy elimination (fewest fill-in
  edges first, then the smallest clique, then the lowest column), the maximal cliques are joined by a maximum
  spanning tree over their separators' sizes, and sum-product messages in log space calibrate it. The full
  table of the domain is never built: the memory is the junction tree's cells (:attr:`JunctionTree.cells`),
  which callers keep within a limit from public sizes before anything is spent.
* **Estimation** by entropic mirror descent on the marginal polytope: theta <- theta - step * dL/dp_c, with an
  Armijo backtracking step (halved until the loss falls by at least half the linear prediction).
* **Marginals of cliques the model does not hold** (a workload query, a selection candidate): variable
  elimination over the calibrated tree's smallest subtree covering the columns.

Determinism: every operation is an elementwise numpy operation or a reduction along an axis (no BLAS, no
threads), in a fixed order, so one machine's fit is the same every time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

Clique = tuple[int, ...]

#: The mirror descent's step grows by this factor after each accepted step (halved by the backtracking).
GROWTH = 1.5


def _expand(values: np.ndarray, attrs: Clique, to: Clique, sizes: Sequence[int]) -> np.ndarray:
    """``values`` over ``attrs`` (sorted) as an array broadcastable over ``to`` (sorted, a superset)."""
    shape = [sizes[a] if a in attrs else 1 for a in to]
    return values.reshape(shape)


def _sum_to(values: np.ndarray, attrs: Clique, keep: Clique) -> np.ndarray:
    """``values`` over ``attrs`` summed down to ``keep`` (a sorted subset)."""
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
    return values.sum(axis=axes) if axes else values


@dataclass(frozen=True)
class JunctionTree:
    """A junction tree of a set of cliques over columns of public sizes (every column appears).

    ``cliques`` are the maximal cliques (sorted column tuples), ``edges`` the tree's edges (i, j) between them
    with i the parent (breadth-first from clique 0, so ``edges`` is also the order of an upward pass reversed)."""

    sizes: tuple[int, ...]
    cliques: tuple[Clique, ...]
    edges: tuple[tuple[int, int], ...]

    @property
    def cells(self) -> int:
        """The cells of every maximal clique's table: the memory of one set of beliefs, in float64 cells."""
        return sum(math.prod(self.sizes[a] for a in c) for c in self.cliques)

    def home_of(self, clique: Iterable[int]) -> int | None:
        """A maximal clique holding these columns (the smallest), or None."""
        return _home_of(self, tuple(sorted(set(clique))))

    def _home(self, clique: Clique) -> int | None:
        want = set(clique)
        best: int | None = None
        for i, c in enumerate(self.cliques):
            if want <= set(c) and (best is None or self._size(i) < self._size(best)):
                best = i
        return best

    def _size(self, i: int) -> int:
        return math.prod(self.sizes[a] for a in self.cliques[i])


@functools.lru_cache(maxsize=4096)
def _home_of(tree: JunctionTree, clique: Clique) -> int | None:
    return tree._home(clique)


@functools.lru_cache(maxsize=1 << 16)
def _bits(m: int) -> tuple[int, ...]:
    """The columns of a bit mask, lowest first."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return tuple(out)


def adjacency(d: int, cliques: Iterable[Iterable[int]]) -> list[int]:
    """The columns' graph of ``cliques`` over ``d`` columns: for each column, the bit mask of its neighbours."""
    adj = [0] * d
    for c in cliques:
        mask = 0
        for a in c:
            if not 0 <= a < d:
                raise ValueError("a clique names a column outside the domain")
            mask |= 1 << a
        for a in _bits(mask):
            adj[a] |= mask & ~(1 << a)
    return adj


def _eliminate_greedily(sizes: Sequence[int], adjacency: Sequence[int]) -> Iterator[tuple[int, int]]:
    """The cliques (bit masks, with their cells) of a greedy elimination of the graph ``adjacency``, in order: the
    column whose elimination adds the fewest fill-in edges first, then the one whose clique has the fewest cells,
    then the lowest column.

    Each column's rank (fill-in, cells, column) is one integer, ordered as the tuple; after an elimination only the
    ranks that can change are computed again: the eliminated column's neighbours' (their neighbours changed), and a
    column's whose neighbours include both ends of an edge the elimination added (its fill-in fell). Every other
    column keeps its neighbours and their edges, so its rank."""
    d = len(sizes)
    adj = list(adjacency)
    v_bits = max(d, 1).bit_length()
    # a rank packs (fill-in, cells, column) into bit fields: every clique's cells are below 2^cells_bits
    cells_bits = math.prod(max(s, 1) for s in sizes).bit_length()
    fill_shift = v_bits + cells_bits
    v_mask = (1 << v_bits) - 1
    cells_mask = (1 << cells_bits) - 1
    left = (1 << d) - 1

    def rank(v: int, nb: int) -> int:
        twice_fill = 0
        cells = sizes[v]
        each = nb
        while each:
            one = each & -each
            each ^= one
            a = one.bit_length() - 1
            twice_fill += (nb & ~adj[a] & ~one).bit_count()
            cells *= sizes[a]
        return ((twice_fill // 2) << fill_shift) | (cells << v_bits) | v

    ranks = [rank(v, adj[v]) for v in range(d)]
    while left:
        best = min(map(ranks.__getitem__, _bits(left)))
        v = best & v_mask
        nb = adj[v] & left
        left ^= 1 << v
        grown = 0  # the columns an added edge touches
        each = nb
        while each:
            one = each & -each
            each ^= one
            a = one.bit_length() - 1
            new = nb & ~adj[a] & ~one
            if new:
                adj[a] |= new
                grown |= one
        yield nb | (1 << v), (best >> v_bits) & cells_mask
        rest = left
        while rest:
            one = rest & -rest
            rest ^= one
            u = one.bit_length() - 1
            if one & nb or (grown and (adj[u] & grown).bit_count() >= 2):
                ranks[u] = rank(u, adj[u] & left)


def _triangulate(sizes: Sequence[int], cliques: Iterable[Iterable[int]]) -> list[int]:
    """The cliques (as bit masks of columns) of a greedy elimination (:func:`_eliminate_greedily`), the maximal
    ones."""
    found = [c for c, _cells in _eliminate_greedily(sizes, adjacency(len(sizes), cliques))]
    return [c for c in found if not any(c != o and c & o == c for o in found)]


def tree_cells(sizes: Sequence[int], cliques: Iterable[Iterable[int]]) -> int:
    """:attr:`JunctionTree.cells` of the cliques' junction tree, without building the tree."""
    return sum(math.prod(sizes[a] for a in _bits(c)) for c in set(_triangulate(sizes, cliques)))


def tree_cells_within(sizes: Sequence[int], adjacency: Sequence[int], limit: float) -> tuple[int, bool]:
    """:func:`tree_cells` of the graph ``adjacency`` (see :func:`adjacency`), counted until it passes ``limit``:
    (the cells, True), or (a part of them already above ``limit``, False).

    An elimination's clique is never a subset of a later one (which lacks the column eliminated), so a clique is
    one of the tree's (maximal) exactly when no earlier clique holds it, and the running sum of those only grows."""
    total = 0
    kept: list[int] = []
    for c, cells in _eliminate_greedily(sizes, adjacency):
        if any(c & o == c for o in kept):
            continue
        kept.append(c)
        total += cells
        if total > limit:
            return total, False
    return total, True


#: The numpy count runs while a tree's cells, summed over at most d cliques, stay below this (int64, exact).
_NUMPY_CELLS = 1 << 62


def tree_cells_many(
    sizes: Sequence[int], graphs: Sequence[Sequence[int]], limit: float
) -> list[tuple[int, bool]]:
    """:func:`tree_cells_within` of each graph: the same elimination run on all of them at once in numpy (int64,
    exact) when the columns fit a 63-bit mask and d times the domain's cells stay below 2^62, every count then
    whole; one by one otherwise."""
    d = len(sizes)
    if not graphs:
        return []
    if d > 63 or math.prod(max(s, 1) for s in sizes) * max(d, 1) >= _NUMPY_CELLS:
        return [tree_cells_within(sizes, g, limit) for g in graphs]
    return [(int(t), True) for t in _tree_cells_numpy(sizes, np.asarray(graphs, dtype=np.uint64))]


def _tree_cells_numpy(sizes: Sequence[int], graphs: np.ndarray) -> np.ndarray:
    """The cells of each graph's tree (``graphs``: n x d neighbour masks, uint64), the rule of
    :func:`_eliminate_greedily` computed for every graph and column at each step: each column's fill-in edges
    (counted twice) and clique cells, the lowest (fill-in, cells, column), its clique added to the sum unless an
    earlier clique holds it, its neighbours joined."""
    n, d = graphs.shape
    adj = graphs.copy()
    bits = np.left_shift(np.uint64(1), np.arange(d, dtype=np.uint64))
    left = np.full(n, (1 << d) - 1, dtype=np.uint64)
    alive = np.ones((n, d), dtype=bool)
    found = np.zeros((n, d), dtype=np.uint64)
    total = np.zeros(n, dtype=np.int64)
    size = np.asarray(sizes, dtype=np.int64)
    rows = np.arange(n)
    top = np.iinfo(np.int64).max
    for step in range(d):
        nb = adj & left[:, None]
        twice_fill = np.zeros((n, d), dtype=np.int64)
        cells = np.tile(size, (n, 1))
        for a in np.flatnonzero(alive.any(axis=0)):
            member = (nb & bits[a]) != 0  # a is the column's neighbour
            missing = np.bitwise_count(nb & ~(adj[:, a : a + 1] | bits[a]))
            twice_fill += np.where(member, missing, 0)
            cells *= np.where(member, size[a], 1)
        twice_fill[~alive] = top
        fewest = np.where(twice_fill == twice_fill.min(axis=1, keepdims=True), cells, top)
        v = np.argmax(fewest == fewest.min(axis=1, keepdims=True), axis=1)  # the lowest column of the fewest
        nbv = nb[rows, v]
        clique = nbv | bits[v]
        held = ((found[:, :step] & clique[:, None]) == clique[:, None]).any(axis=1)
        total += np.where(held, 0, cells[rows, v])
        found[:, step] = clique
        adj |= np.where((nbv[:, None] & bits) != 0, nbv[:, None] & ~bits, np.uint64(0))
        left &= ~bits[v]
        alive[rows, v] = False
    return total


def junction_tree(sizes: Sequence[int], cliques: Iterable[Iterable[int]]) -> JunctionTree:
    """The junction tree of ``cliques`` (every column of ``sizes`` included, alone if in no clique)."""
    found = [frozenset(_bits(c)) for c in _triangulate(sizes, cliques)]
    maximal = [c for c in found if not any(c < o for o in found)]
    uniq = sorted({tuple(sorted(c)) for c in maximal})
    # a maximum spanning tree over the separators' sizes (Kruskal; ties by index): the running intersection
    # property holds for the cliques of an elimination order
    pairs = sorted(
        ((len(set(uniq[i]) & set(uniq[j])), i, j) for i in range(len(uniq)) for j in range(i + 1, len(uniq))),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    part = list(range(len(uniq)))

    def root(x: int) -> int:
        while part[x] != x:
            part[x] = part[part[x]]
            x = part[x]
        return x

    nbrs: list[list[int]] = [[] for _ in uniq]
    for _w, i, j in pairs:
        if root(i) != root(j):
            part[root(i)] = root(j)
            nbrs[i].append(j)
            nbrs[j].append(i)
    edges: list[tuple[int, int]] = []
    seen = [False] * len(uniq)
    seen[0] = True
    queue = [0]
    while queue:
        u = queue.pop(0)
        for v in sorted(nbrs[u]):
            if not seen[v]:
                seen[v] = True
                edges.append((u, v))
                queue.append(v)
    return JunctionTree(tuple(int(s) for s in sizes), tuple(uniq), tuple(edges))


@dataclass
class Marginals:
    """Calibrated beliefs of a model (probabilities over each maximal clique) and the total."""

    tree: JunctionTree
    probs: list[np.ndarray]
    total: float

    def probabilities(self, i: int) -> np.ndarray:
        """Maximal clique ``i``'s probabilities."""
        return self.probs[i]

    def project(self, clique: Clique) -> np.ndarray:
        """The model's counts (total times probability) over ``clique`` (sorted), any set of columns."""
        clique = tuple(sorted(clique))
        home = self.tree.home_of(clique)
        if home is not None:
            return self.total * _sum_to(self.probabilities(home), self.tree.cliques[home], clique)
        return self.total * _eliminate(self, clique)


def _eliminate(m: Marginals, clique: Clique) -> np.ndarray:
    """p over ``clique`` from the calibrated tree: the product of the covering subtree's clique beliefs divided
    by its separators' beliefs, with every other column summed out one at a time (fewest cells first)."""
    tree = m.tree
    want = set(clique)
    # the smallest subtree covering the columns: the union of the tree paths between cliques holding them
    parent = {v: u for u, v in tree.edges}
    holders = {tree.home_of((a,)) for a in clique}
    keep: set[int] = set()
    anchor = next(iter(sorted(h for h in holders if h is not None)))

    def path_to_root(x: int) -> list[int]:
        out = [x]
        while x in parent:
            x = parent[x]
            out.append(x)
        return out

    anchor_path = path_to_root(anchor)
    for h in holders:
        assert h is not None
        p = path_to_root(h)
        meet = next(x for x in p if x in anchor_path)
        keep.update(p[: p.index(meet) + 1])
        keep.update(anchor_path[: anchor_path.index(meet) + 1])
    factors: list[tuple[Clique, np.ndarray]] = []
    for i in sorted(keep):
        factors.append((tree.cliques[i], m.probs[i]))
    for u, v in tree.edges:
        if u in keep and v in keep:
            sep = tuple(sorted(set(tree.cliques[u]) & set(tree.cliques[v])))
            if sep:
                belief = _sum_to(m.probs[v], tree.cliques[v], sep)
                with np.errstate(divide="ignore"):
                    factors.append((sep, np.where(belief > 0, 1.0 / belief, 0.0)))
    others = sorted({a for c, _ in factors for a in c} - want)
    while others:
        a = min(others, key=lambda x: (_joined_cells(tree.sizes, factors, x), x))
        others.remove(a)
        touching = [f for f in factors if a in f[0]]
        factors = [f for f in factors if a not in f[0]]
        cols = tuple(sorted(set().union(*(set(c) for c, _ in touching))))
        prod: np.ndarray = np.ones([1] * len(cols))
        for c, table in touching:
            prod = prod * _expand(table, c, cols, tree.sizes)
        prod = np.broadcast_to(prod, tuple(tree.sizes[x] for x in cols))
        factors.append((tuple(x for x in cols if x != a), prod.sum(axis=cols.index(a))))
    target = tuple(sorted(clique))
    out: np.ndarray = np.ones([1] * len(target))
    for c, table in factors:
        out = out * _expand(table, c, target, tree.sizes)
    out = np.broadcast_to(out, tuple(tree.sizes[x] for x in target))
    z = float(out.sum())
    return np.asarray(out / z if z > 0 else out)


def _joined_cells(sizes: Sequence[int], factors: list[tuple[Clique, np.ndarray]], a: int) -> int:
    """The cells of the product of the factors holding column ``a`` (the cost of summing it out)."""
    cols = set().union(*(set(c) for c, _ in factors if a in c))
    return math.prod(sizes[x] for x in cols)


def infer(tree: JunctionTree, potentials: dict[Clique, np.ndarray], total: float) -> Marginals:
    """Calibrate the tree for log-potentials over cliques (each inside some maximal clique): sum-product in
    probability space, each clique's potential exponentiated once (shifted by its largest entry) and every
    message scaled to sum to 1 (the scale cancels in the normalised beliefs)."""
    sizes = tree.sizes
    logpot = [np.zeros(tuple(sizes[a] for a in c)) for c in tree.cliques]
    for c, theta in potentials.items():
        home = tree.home_of(c)
        if home is None:
            raise ValueError("a potential's columns are in no clique of the tree")
        logpot[home] = logpot[home] + _expand(theta, c, tree.cliques[home], sizes)
    pot = [np.exp(lp - np.max(lp)) for lp in logpot]
    n = len(tree.cliques)
    children: list[list[int]] = [[] for _ in range(n)]
    parent = [-1] * n
    for u, v in tree.edges:
        children[u].append(v)
        parent[v] = u
    seps = {v: tuple(sorted(set(tree.cliques[v]) & set(tree.cliques[u]))) for u, v in tree.edges}
    up: dict[int, np.ndarray] = {}  # message from v to its parent, over their separator
    down: dict[int, np.ndarray] = {}  # message from v's parent to v

    def gathered(v: int, skip: int | None = None) -> np.ndarray:
        c = tree.cliques[v]
        acc = pot[v]
        for w in children[v]:
            if w != skip:
                acc = acc * _expand(up[w], seps[w], c, sizes)
        if v in down:
            acc = acc * _expand(down[v], seps[v], c, sizes)
        return acc

    def message(v: int, table: np.ndarray, s: Clique) -> np.ndarray:
        c = tree.cliques[v]
        axes = tuple(i for i, a in enumerate(c) if a not in s)
        m = table.sum(axis=axes) if axes else table
        z = float(m.sum())
        return m / z if z > 0 else m

    order = [0] + [v for _u, v in tree.edges]
    for v in reversed(order):  # leaves first
        if parent[v] >= 0:
            up[v] = message(v, gathered(v), seps[v])
    for v in order:  # the root first
        for w in children[v]:
            down[w] = message(v, gathered(v, skip=w), seps[w])
    probs = []
    for v in range(n):
        b = gathered(v)
        z = float(b.sum())
        probs.append(b / z if z > 0 else np.full(b.shape, 1.0 / b.size))
    return Marginals(tree, probs, total)


@dataclass(frozen=True)
class Observation:
    """A released noisy marginal over ``clique`` (sorted columns) with its noise variance per cell."""

    clique: Clique
    values: np.ndarray
    variance: float


@dataclass
class Model:
    """A fitted model: its tree, its log-potentials per measured clique, its calibrated marginals."""

    tree: JunctionTree
    potentials: dict[Clique, np.ndarray]
    marginals: Marginals
    loss: float
    iterations: int = 0
    history: list[float] = field(default_factory=list)

    def project(self, clique: Iterable[int]) -> np.ndarray:
        """The model's counts over any set of columns."""
        return self.marginals.project(tuple(sorted(clique)))


def estimate_total(observations: Sequence[Observation]) -> float:
    """The number of rows: the inverse-variance mean of every observation's sum (a sum of c cells has variance
    c times the per-cell variance); at least 1."""
    num = den = 0.0
    for o in observations:
        var = o.values.size * o.variance
        num += float(o.values.sum()) / var
        den += 1.0 / var
    return max(1.0, num / den) if den > 0 else 1.0


def _loss(
    m: Marginals, observations: Sequence[Observation]
) -> tuple[float, dict[Clique, np.ndarray], dict[Clique, np.ndarray]]:
    """L, its gradient with respect to each measured clique's probabilities, and the model's counts there."""
    loss = 0.0
    grad: dict[Clique, np.ndarray] = {}
    counts: dict[Clique, np.ndarray] = {}
    for o in observations:
        if o.clique not in counts:
            counts[o.clique] = m.project(o.clique)
        diff = counts[o.clique] - o.values
        loss += float((diff * diff).sum()) / (2.0 * o.variance)
        g = diff * (m.total / o.variance)
        grad[o.clique] = grad[o.clique] + g if o.clique in grad else g
    return loss, grad, counts


def fit_model(
    sizes: Sequence[int],
    observations: Sequence[Observation],
    *,
    iterations: int = 1000,
    total: float | None = None,
    warm: Model | None = None,
    extra_cliques: Iterable[Clique] = (),
) -> Model:
    """Mirror descent from ``warm``'s potentials (or the uniform distribution) for ``iterations`` steps.

    ``extra_cliques`` are held by the tree without a potential of their own (so their marginals are a belief's)."""
    cliques = {o.clique for o in observations} | {tuple(sorted(c)) for c in extra_cliques}
    tree = junction_tree(sizes, cliques)
    n = total if total is not None else estimate_total(observations)
    potentials: dict[Clique, np.ndarray] = {}
    for o in observations:
        if o.clique not in potentials:
            old = warm.potentials.get(o.clique) if warm is not None else None
            potentials[o.clique] = (
                old.copy() if old is not None else np.zeros(tuple(sizes[a] for a in o.clique))
            )
    m = infer(tree, potentials, n)
    loss, grad, counts = _loss(m, observations)
    # a step of 1/Lipschitz for the quadratic in p (entries of the Hessian at most N^2/var per observation)
    step = 1.0 / max(sum(n * n / o.variance for o in observations), 1e-300)
    history = [loss]
    done = 0
    for _ in range(iterations):
        for _try in range(30):
            trial = {c: potentials[c] - step * grad[c] for c in potentials}
            tm = infer(tree, trial, n)
            tloss, tgrad, tcounts = _loss(tm, observations)
            predicted = sum(float((grad[c] * (counts[c] - tcounts[c])).sum()) for c in grad) / n
            if loss - tloss >= 0.5 * predicted:
                break
            step *= 0.5
        else:
            break  # no step improves: converged to the precision of the arithmetic
        potentials, m, loss, grad, counts = trial, tm, tloss, tgrad, tcounts
        history.append(loss)
        done += 1
        step *= GROWTH  # grown again after each accepted step, halved by the backtracking
    return Model(tree, potentials, m, loss, done, history)


def sample_model(model: Model, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows of levels (n x d, int64) drawn from the model clique by clique along its junction tree: the root
    clique's cells by randomised systematic rounding of n times their probabilities; each child clique's new
    columns, within each group of rows sharing its separator's levels, by the same rounding of the group's size
    times the conditional probabilities, handed to the group's rows in a fresh random order."""
    from dpdesk.core.dp.synthetic.sample import systematic_counts

    tree = model.tree
    sizes = tree.sizes
    codes = np.zeros((n, len(sizes)), dtype=np.int64)
    if n <= 0:
        return codes
    parent = {v: u for u, v in tree.edges}
    for v in [0] + [v for _u, v in tree.edges]:
        clique = tree.cliques[v]
        p = model.marginals.probs[v]
        if v not in parent:
            counts = systematic_counts(p.ravel(), n, rng)
            cells = rng.permutation(np.repeat(np.arange(p.size), counts))
            for col, levels in zip(clique, np.unravel_index(cells, p.shape), strict=True):
                codes[:, col] = levels
            continue
        sep = tuple(sorted(set(clique) & set(tree.cliques[parent[v]])))
        new = tuple(a for a in clique if a not in sep)
        if not new:
            continue
        # p as (separator cells) x (new cells)
        order_axes = [clique.index(a) for a in sep] + [clique.index(a) for a in new]
        sep_cells = math.prod(sizes[a] for a in sep)
        table = np.transpose(p, order_axes).reshape(sep_cells, -1)
        group = np.zeros(n, dtype=np.int64)
        for a in sep:
            group = group * sizes[a] + codes[:, a]
        perm = rng.permutation(n)
        rows = perm[np.argsort(group[perm], kind="stable")]
        bounds = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=sep_cells))])
        out = np.empty(n, dtype=np.int64)
        for g in np.flatnonzero(np.diff(bounds)).tolist():
            lo, hi = int(bounds[g]), int(bounds[g + 1])
            row = table[g]
            if row.sum() <= 0:
                row = table.sum(axis=0)
            out[lo:hi] = np.repeat(np.arange(row.size), systematic_counts(row, hi - lo, rng))
        new_shape = tuple(sizes[a] for a in new)
        for col, levels in zip(new, np.unravel_index(out, new_shape), strict=True):
            codes[rows, col] = levels
    return codes
