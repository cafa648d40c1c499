"""Draw synthetic rows from a fitted tree model (post-processing: numpy's generator, never the data).

The generator is numpy's PCG64 seeded by the caller (the release seeds it from :func:`secrets.randbits` and
keeps the seed in the ledger). Rows are drawn tree-wise: the root column of each part of the tree first,
then each column given its parent, in breadth-first order. Counts are allocated by randomised systematic
rounding (each level gets the floor or the ceiling of its expected count, the counts summing exactly to the
group's size), and within each parent group the rows receive the child's levels in a fresh random order, so
columns that share a parent are not made to move together (the row-order tie-break of OpenDP 0.16's
``synthesize()`` does that).
"""

from __future__ import annotations

import numpy as np

from dpdesk.core.dp.synthetic.fit import TreeModel


def systematic_counts(expected: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Integer counts summing to ``n``, each the floor or ceiling of n p_i (p = expected / its sum).

    >>> systematic_counts(np.array([1.0, 1.0, 2.0]), 8, np.random.Generator(np.random.PCG64(1))).tolist()
    [2, 2, 4]
    """
    s = float(expected.sum())
    if n <= 0:
        return np.zeros(len(expected), dtype=np.int64)
    p = expected / s if s > 0 else np.full(len(expected), 1.0 / len(expected))
    cum = np.concatenate([[0.0], np.cumsum(p) * n])
    cum[-1] = float(n)
    u = rng.random()
    marks = np.floor(cum + u)
    return np.diff(marks).astype(np.int64)


def _order(model: TreeModel) -> list[tuple[int, int, int]]:
    """(child, parent, edge index) in breadth-first order from each part's first column (parent -1: a root)."""
    d = len(model.sizes)
    adj: dict[int, list[tuple[int, int]]] = {i: [] for i in range(d)}
    for k, (a, b) in enumerate(model.edges):
        adj[a].append((b, k))
        adj[b].append((a, k))
    seen = [False] * d
    out: list[tuple[int, int, int]] = []
    for r in range(d):
        if seen[r]:
            continue
        seen[r] = True
        out.append((r, -1, -1))
        queue = [r]
        while queue:
            u = queue.pop(0)
            for v, k in adj[u]:
                if not seen[v]:
                    seen[v] = True
                    out.append((v, u, k))
                    queue.append(v)
    return out


def sample_codes(model: TreeModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows of levels (n x d, int64) drawn from the model."""
    d = len(model.sizes)
    codes = np.zeros((n, d), dtype=np.int64)
    for child, parent, k in _order(model):
        if parent < 0:
            counts = systematic_counts(model.one_way[child], n, rng)
            codes[:, child] = rng.permutation(np.repeat(np.arange(model.sizes[child]), counts))
            continue
        table = model.two_way[k]
        if model.edges[k][0] != parent:
            table = table.T  # rows: the parent's levels
        perm = rng.permutation(n)
        order = perm[np.argsort(codes[perm, parent], kind="stable")]
        group_sizes = np.bincount(codes[:, parent], minlength=model.sizes[parent])
        values: list[np.ndarray] = []
        for level, size in enumerate(group_sizes.tolist()):
            if size == 0:
                continue
            row = table[level]
            if row.sum() <= 0:
                row = model.one_way[child]
            values.append(np.repeat(np.arange(model.sizes[child]), systematic_counts(row, size, rng)))
        codes[order, child] = np.concatenate(values) if values else np.zeros(0, dtype=np.int64)
    return codes
