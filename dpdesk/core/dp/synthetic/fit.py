"""Fit a consistent, non-negative tree model to the released marginals (post-processing: no data read).

:func:`fit` takes only :class:`~dpdesk.core.dp.synthetic.measure.Measurements` (the noisy marginals and their
public noise scales) and returns a :class:`TreeModel`: a one-way table per column and a two-way table per
selected pair, every table non-negative, summing to the same total, and each two-way table's row sums equal
to its first column's one-way table (its column sums equal the second's up to the iterative fit's tolerance).
The model's distribution is the tree's: P(x) = prod_edges P(x_u, x_v) / prod_v P(x_v)^(deg v - 1).

Steps (weighted least squares, each estimate weighted by the inverse of its noise variance):

1. the total N: the inverse-variance mean of every measurement's sum (a sum of c cells has variance c s^2);
2. each column's one-way table: per cell, the inverse-variance mean of its own noisy marginal and the sums of
   its noisy two-way marginals over the other column (variance: the other column's levels times s^2), then
   the Euclidean projection onto {x >= 0, sum x = N};
3. each two-way table: the Euclidean projection of its noisy marginal onto {x >= 0, sum x = N} (which zeroes
   the cells the noise alone made positive), then iterative proportional fitting to its two one-way tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpdesk.core.dp.synthetic.measure import Measurements

#: Iterations of proportional fitting per two-way table (each a row and a column scaling).
IPF_ITERATIONS = 200
#: Fit version 2 goes on past :data:`IPF_ITERATIONS`, up to this many, until every row sum is within
#: :data:`IPF_TOLERANCE` of the total of its target (version 1 stopped at 200: about 1 fit in 75 left a two-way
#: table's column sums up to 0.35% of the total away from the one-way marginal).
IPF_MAX_ITERATIONS = 20_000
IPF_TOLERANCE = 1e-9
#: The fit's version, kept in each release's ledger entry (``fit``): a table regenerates with the fit it was made
#: with (entries without it: version 1). Version 2 equals version 1 wherever version 1 had converged.
FIT_VERSION = 2


@dataclass(frozen=True)
class TreeModel:
    """The fitted model: public (post-processing of released values)."""

    sizes: tuple[int, ...]
    total: float
    one_way: tuple[np.ndarray, ...]
    edges: tuple[tuple[int, int], ...]
    two_way: tuple[np.ndarray, ...]


def project_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """The closest x (Euclidean) to ``y`` with x >= 0 and sum x = total: x = max(y - tau, 0).

    >>> project_simplex(np.array([5.0, -1.0, 1.0]), 4.0).tolist()
    [4.0, 0.0, 0.0]
    """
    flat = y.ravel().astype(np.float64)
    if total <= 0:
        return np.zeros_like(y, dtype=np.float64)
    u = np.sort(flat)[::-1]
    css = np.cumsum(u) - total
    ind = np.arange(1, len(u) + 1)
    cond = u - css / ind > 0
    r = int(ind[cond][-1])
    tau = css[r - 1] / r
    out: np.ndarray = np.maximum(flat - tau, 0.0).reshape(y.shape)
    return out


def _ipf(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray, iterations: int = IPF_ITERATIONS, converge: bool = True
) -> np.ndarray:
    """Scale ``x`` (non-negative) until its row sums are ``rows`` and column sums ``cols`` (same total).

    A row (column) with a positive target but no mass is filled in proportion to the other margin first.
    ``iterations`` rounds, then (``converge``) more until the row sums after a column scaling are within
    :data:`IPF_TOLERANCE` of the total, at most :data:`IPF_MAX_ITERATIONS` in all. Ends with a row scaling, so
    the row sums are exact.
    """
    x = x.copy()
    total = float(rows.sum())
    if total <= 0:
        return np.zeros_like(x)
    empty_r = (x.sum(axis=1) <= 0) & (rows > 0)
    x[empty_r, :] = np.outer(rows[empty_r], cols / total)
    empty_c = (x.sum(axis=0) <= 0) & (cols > 0)
    x[:, empty_c] = np.outer(rows / total, cols[empty_c])

    def rounds(n: int) -> None:
        for _ in range(n):
            rs = x.sum(axis=1)
            x[...] *= np.divide(rows, rs, out=np.zeros_like(rs), where=rs > 0)[:, None]
            cs = x.sum(axis=0)
            x[...] *= np.divide(cols, cs, out=np.zeros_like(cs), where=cs > 0)[None, :]

    rounds(iterations)
    done = iterations
    while converge and done < IPF_MAX_ITERATIONS:
        if float(np.abs(x.sum(axis=1) - rows).max()) <= IPF_TOLERANCE * total:
            break  # both margins met: the columns exactly, the rows within the tolerance
        rounds(16)
        done += 16
    rs = x.sum(axis=1)
    x *= np.divide(rows, rs, out=np.zeros_like(rs), where=rs > 0)[:, None]
    return x


def fit(released: Measurements, version: int = FIT_VERSION) -> TreeModel:
    """The tree model of the released marginals (reads nothing else), by the fit of ``version``."""
    if version not in (1, 2):
        raise ValueError(f"unknown fit version {version}")
    sizes = released.sizes
    # 1. the total
    sums = [
        (float(m.table().sum()), m.variance * len(m.noisy)) for m in (*released.one_way, *released.two_way)
    ]
    w = sum(1.0 / v for _s, v in sums)
    total = max(1.0, sum(s / v for s, v in sums) / w)
    # 2. the one-way tables
    one_way: list[np.ndarray] = []
    for i, size in enumerate(sizes):
        m = released.one_way[i]
        num = m.table() / m.variance
        den = np.full(size, 1.0 / m.variance)
        for e in released.two_way:
            if i not in e.columns:
                continue
            axis = 1 if e.columns[0] == i else 0
            other = e.shape[axis]
            num = num + e.table().sum(axis=axis) / (e.variance * other)
            den = den + 1.0 / (e.variance * other)
        one_way.append(project_simplex(num / den, total))
    # 3. the two-way tables
    two_way: list[np.ndarray] = []
    for e in released.two_way:
        a, b = e.columns
        x = project_simplex(e.table(), total)
        x += 1e-6 * total / x.size  # every cell positive: proportional fitting then meets both margins
        two_way.append(_ipf(x, one_way[a], one_way[b], converge=version >= 2))
    return TreeModel(sizes, total, tuple(one_way), released.selected, tuple(two_way))
