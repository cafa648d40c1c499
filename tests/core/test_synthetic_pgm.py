"""The graphical model of the adaptive synthesiser (dpdesk.core.dp.synthetic.pgm): inference against the full
joint distribution computed by brute force, the junction tree's properties, the fit and the sampler."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from dpdesk.core.dp.synthetic import pgm
from dpdesk.core.dp.synthetic.pgm import (
    Observation,
    fit_model,
    infer,
    junction_tree,
    sample_model,
    tree_cells,
)


def _random_case(seed: int) -> tuple[tuple[int, ...], dict[tuple[int, ...], np.ndarray]]:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 7))
    sizes = tuple(int(s) for s in rng.integers(2, 5, d))
    cliques: set[tuple[int, ...]] = {(i,) for i in range(d)}
    for _ in range(int(rng.integers(1, 2 * d))):
        k = int(rng.integers(2, 4))
        cliques.add(tuple(sorted(rng.choice(d, size=min(k, d), replace=False).tolist())))
    pots = {c: rng.normal(0, 1.5, tuple(sizes[a] for a in c)) for c in sorted(cliques)}
    return sizes, pots


def _joint(sizes: tuple[int, ...], pots: dict[tuple[int, ...], np.ndarray]) -> np.ndarray:
    """The full distribution p(x) ∝ exp(sum of potentials), by brute force over every cell."""
    d = len(sizes)
    full = np.zeros(sizes)
    for c, th in pots.items():
        full = full + th.reshape([sizes[a] if a in c else 1 for a in range(d)])
    p = np.exp(full - full.max())
    return p / p.sum()


@pytest.mark.parametrize("seed", range(12))
def test_marginals_match_the_full_joint(seed: int) -> None:
    """Every marginal of up to three columns (held by a clique of the tree or not) equals the brute-force one."""
    sizes, pots = _random_case(seed)
    d = len(sizes)
    tree = junction_tree(sizes, pots)
    m = infer(tree, pots, 100.0)
    p = _joint(sizes, pots)
    for k in (1, 2, 3):
        for cols in itertools.combinations(range(d), k):
            want = 100.0 * p.sum(axis=tuple(a for a in range(d) if a not in cols))
            assert np.allclose(m.project(cols), want, rtol=1e-9, atol=1e-11), (seed, cols)


@pytest.mark.parametrize("seed", range(12))
def test_junction_tree_properties(seed: int) -> None:
    """Each clique lies in a maximal clique; the tree is connected; running intersection; cells as stated."""
    sizes, pots = _random_case(seed)
    tree = junction_tree(sizes, pots)
    for c in pots:
        assert tree.home_of(c) is not None
    n = len(tree.cliques)
    assert len(tree.edges) == n - 1
    assert {v for _u, v in tree.edges} | {0} == set(range(n))
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for u, v in tree.edges:
        adj[u].add(v)
        adj[v].add(u)
    for a in range(len(sizes)):  # the cliques holding a column form a connected subtree
        holding = {i for i, c in enumerate(tree.cliques) if a in c}
        start = min(holding)
        seen, stack = {start}, [start]
        while stack:
            for w in adj[stack.pop()] & holding:
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        assert seen == holding, (seed, a)
    assert tree.cells == sum(math.prod(sizes[a] for a in c) for c in tree.cliques)
    assert tree_cells(sizes, pots) == tree.cells


def test_the_fit_recovers_consistent_marginals() -> None:
    """Noise-free marginals of a distribution in the model's family are reproduced by the fit, and the loss never
    rises along the mirror descent (the backtracking accepts only decreasing steps)."""
    sizes, pots = _random_case(3)
    p = _joint(sizes, pots)
    d = len(sizes)
    obs = [Observation(c, 5000.0 * p.sum(axis=tuple(a for a in range(d) if a not in c)), 1.0) for c in pots]
    model = fit_model(sizes, obs, iterations=3000, total=5000.0)
    assert all(b <= a for a, b in itertools.pairwise(model.history))
    for o in obs:
        assert np.abs(model.project(o.clique) - o.values).sum() < 0.01 * 5000.0, o.clique
    # an unmeasured marginal comes from the fitted model, so it matches the true one as well
    assert np.abs(model.project((0, d - 1)) - 5000.0 * p.sum(axis=tuple(range(1, d - 1)))).sum() < 50.0


def test_the_sampler_follows_the_model() -> None:
    """The drawn rows' marginals are the model's within a few rows per cell (systematic rounding), on 20,000
    rows: every deviation is checked against 6 standard deviations of a multinomial draw, a false-failure rate
    far below 1e-6 for the handful of cells checked."""
    sizes, pots = _random_case(5)
    tree = junction_tree(sizes, pots)
    m = infer(tree, pots, 20_000.0)
    from dpdesk.core.dp.synthetic.pgm import Model

    model = Model(tree, pots, m, 0.0)
    codes = sample_model(model, 20_000, np.random.default_rng(7))
    assert codes.shape == (20_000, len(sizes))
    for cols in itertools.combinations(range(len(sizes)), 2):
        flat = codes[:, cols[0]] * sizes[cols[1]] + codes[:, cols[1]]
        got = np.bincount(flat, minlength=sizes[cols[0]] * sizes[cols[1]]).reshape(
            sizes[cols[0]], sizes[cols[1]]
        )
        want = m.project(cols)
        sd = np.sqrt(want * (1 - want / 20_000.0)) + 1.0
        assert np.all(np.abs(got - want) <= 6 * sd), cols


def test_a_clique_outside_the_domain_is_refused() -> None:
    with pytest.raises(ValueError):
        junction_tree((2, 2), [(0, 2)])


def _plain_triangulate(sizes: list[int], cliques: list[tuple[int, ...]]) -> list[int]:
    """The elimination rule read plainly (sets, not bit loops): the column whose elimination adds the fewest
    fill-in edges first, then the one whose clique has the fewest cells, then the lowest column."""
    d = len(sizes)
    adj: list[set[int]] = [set() for _ in range(d)]
    for c in cliques:
        for a in c:
            adj[a] |= set(c) - {a}
    left = set(range(d))
    found: list[int] = []
    while left:

        def rank(v: int) -> tuple[int, int, int]:
            nb = adj[v] & left
            fill = sum(1 for a, b in itertools.combinations(sorted(nb), 2) if b not in adj[a])
            return fill, math.prod(sizes[a] for a in nb | {v}), v

        v = min(left, key=rank)
        nb = adj[v] & left
        for a in nb:
            adj[a] |= nb - {a}
        found.append(sum(1 << a for a in nb | {v}))
        left.remove(v)
    return [c for c in found if not any(c != o and c & o == c for o in found)]


def test_the_elimination_is_the_rule_read_plainly() -> None:
    """``_triangulate`` (bit loops, run for every candidate of every adaptive round) gives the cliques the plain
    reading of its rule gives, on 1,500 random sets of cliques of up to 22 columns: the same junction trees, so the
    same fits and the same regenerated tables."""
    rng = random.Random(33)
    for _ in range(1500):
        d = rng.randint(1, 22)
        sizes = [rng.randint(1, 9) for _ in range(d)]
        cliques = [
            tuple(rng.sample(range(d), rng.randint(1, min(d, 4)))) for _ in range(rng.randint(0, 3 * d))
        ]
        assert pgm._triangulate(sizes, cliques) == _plain_triangulate(sizes, cliques), (sizes, cliques)
