"""What the exact statistics are built of, computed with numpy: the exact vectors (:class:`Exact`), the fixed-point
grid and its exact sums, bin indices and the quantiles' counts below and at most each candidate.

Everything computed here is secret, as in :mod:`dpdesk.core.dp.aggregates` (which hands each query to its statistic's
exact aggregate and re-exports everything here): it lives in memory only and is never shown, saved or logged. The
statistics' modules (:mod:`dpdesk.core.dp.statistics`) import these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from dpdesk.core.dp.queries_base import grid_bounds, quantile_fraction
from dpdesk.core.model.spec import ColumnSpec, ColumnType


@dataclass
class Exact:
    """The exact integer vectors of a query's components (or the utilities of an EM query)."""

    vectors: list[list[int]]  # one per noise component, in grid units
    utilities: list[float] | None = None


def to_grid(values: np.ndarray, spec: ColumnSpec) -> tuple[np.ndarray, int]:
    """Clamp to the bounds and put on the fixed-point grid.

    Returns whole numbers (as int or float64 arrays, every element exact) with |v| <= 2^30,
    and the bit length of that bound (for the exact-summation chunk size).
    """
    s, lo_i, hi_i = grid_bounds(spec)
    bits = max(abs(lo_i), abs(hi_i)).bit_length()
    if spec.type == "int" and s == 0 and values.dtype.kind in "iu":
        return np.clip(values, lo_i, hi_i), bits  # whole numbers; clamped here whatever the loader did
    assert spec.bounds is not None
    q = np.clip(values, spec.bounds[0], spec.bounds[1]).astype(np.float64, copy=False)
    q = np.ldexp(q, s, out=q) if q is not values else np.ldexp(q, s)
    np.rint(q, out=q)
    np.clip(q, lo_i, hi_i, out=q)
    return q, bits


def _chunk_rows(bits: int) -> int:
    """Rows per chunk such that any partial sum of |values| < 2^bits stays below 2^52 (exact in float64)."""
    return max(1, 1 << max(0, 52 - bits))


def exact_sum(q: np.ndarray, bits: int) -> int:
    """Exact sum of whole numbers |q| < 2^bits: int64 for integer arrays, chunked float64 sums otherwise."""
    if q.dtype.kind in "iu":
        return int(q.sum(dtype=np.int64))  # |sum| <= 2^31 rows x 2^30 < 2^63: no overflow
    step = _chunk_rows(bits)
    return sum(int(q[i : i + step].sum()) for i in range(0, len(q), step))


def group_sum(codes: np.ndarray, q: np.ndarray, n_groups: int, bits: int) -> list[int]:
    """Exact per-group sums: float64 bincounts over chunks whose sums stay below 2^52, added as integers."""
    step = _chunk_rows(bits)
    totals = [0] * n_groups
    for i in range(0, len(q), step):
        part = np.bincount(codes[i : i + step], weights=q[i : i + step], minlength=n_groups)
        totals = [t + int(v) for t, v in zip(totals, part, strict=True)]
    return totals


def bin_index(values: np.ndarray, edges: tuple[float, ...], spec: ColumnSpec) -> np.ndarray:
    """Bin of each value for edges e0 < ... < em: [e_i, e_i+1), values outside go to the end bins."""
    if spec.type == "int" and spec.bounds is not None and spec.bounds[1] - spec.bounds[0] <= 1_000_000:
        lo = int(spec.bounds[0])
        table = bin_index(np.arange(lo, int(spec.bounds[1]) + 1, dtype=np.float64), edges, _FLOAT)
        idx = np.clip(values, lo, int(spec.bounds[1])).astype(np.intp) - lo
        return cast(np.ndarray, table[idx])  # a lookup per value instead of a binary search
    idx = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right") - 1
    return np.clip(idx, 0, len(edges) - 2)


_FLOAT = ColumnSpec("_", ColumnType.FLOAT, (0.0, 1.0))


def _candidates_below(cands: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.searchsorted(cands, x, side="left")`` (how many candidates lie below each x), exactly.

    A quantile's candidates are usually an evenly spaced grid (1,001 points by default), where the position is
    found by arithmetic, (x - c0) / step rounded up, in a few vector operations instead of a binary search of ten
    steps per value (the float division may be one off either way: corrected by comparing with the neighbours).
    The result is then checked for every value (candidates[i - 1] < x <= candidates[i]); any miss (candidates not
    evenly spaced, extreme rounding) falls back to the binary search, so the counts never differ from it.
    """
    m = len(cands)
    if m < 16 or len(x) < 4096:
        return np.searchsorted(cands, x, side="left")
    c0, step = float(cands[0]), float(cands[-1] - cands[0]) / (m - 1)
    if not step > 0:
        return np.searchsorted(cands, x, side="left")
    idx = np.ceil((x - c0) / step)
    np.clip(idx, 0, m, out=idx)
    pos = idx.astype(np.intp)
    lower = np.concatenate([[-np.inf], cands])  # lower[i] = cands[i - 1]
    upper = np.append(cands, np.inf)  # upper[i] = cands[i]
    pos -= lower[pos] >= x  # one too far right
    pos += upper[pos] < x  # one too far left
    if not ((lower[pos] < x) & (upper[pos] >= x)).all():  # not a grid after all: the binary search
        return np.searchsorted(cands, x, side="left")
    return pos


def below_at_most(x: np.ndarray, cands: np.ndarray, spec: ColumnSpec) -> tuple[np.ndarray, np.ndarray]:
    """#(x < c) and #(x <= c) for every candidate c (x already clamped to the bounds), as int64."""
    m = len(cands)
    if (
        spec.type == "int"
        and spec.bounds is not None
        and np.all(cands == np.floor(cands))
        and spec.bounds[1] - spec.bounds[0] <= 10_000_000
    ):
        lo = int(spec.bounds[0])
        per_value = np.bincount(x.astype(np.intp) - lo, minlength=int(spec.bounds[1]) - lo + 1)
        cum = np.concatenate([[0], np.cumsum(per_value)])  # cum[j] = #(x < lo + j)
        pos = np.clip(cands.astype(np.int64) - lo, 0, len(cum) - 1)
        below = cum[pos]
        at_most = cum[np.clip(pos + 1, 0, len(cum) - 1)]
        return below.astype(np.int64), at_most.astype(np.int64)
    xf = x.astype(np.float64, copy=False)
    idx = _candidates_below(cands, xf)  # candidates < x
    padded = np.append(cands, np.inf)  # x is finite (clamped), so it never equals the pad
    eq = padded[idx] == xf  # x equals the first candidate not below it
    # x < c_j  <=>  (candidates <= x) <= j ; x <= c_j  <=>  (candidates < x) <= j
    le_count = idx + eq
    below = np.cumsum(np.bincount(le_count, minlength=m + 1))[:m]
    at_most = np.cumsum(np.bincount(idx, minlength=m + 1))[:m]
    return below.astype(np.int64), at_most.astype(np.int64)


def quantile_utilities(below: np.ndarray, at_most: np.ndarray, n: int, q: float) -> list[float]:
    """The tie-aware quantile score u(c) = -max(0, #(x<c) - q n, q n - #(x<=c)) of every candidate.

    ``below`` and ``at_most`` are #(x < c) and #(x <= c) over the n rows that have a value. A candidate
    is a q-quantile iff #(x<c) <= q n <= #(x<=c), iff u(c) = 0; elsewhere -u(c) is the distance in
    ranks from q n to the ranks [#(x<c), #(x<=c)] that c occupies. Sensitivity (proved in
    statistics/quantile.py): an added row moves a = #(x<c) - q n by -q or 1-q and b = q n - #(x<=c)
    by q or q-1 (a removed row the opposite), a replaced row (n fixed) moves each by at most 1, and
    u = -max(0, a, b) is 1-Lipschitz in the max-norm of (a, b): Du = k max(q, 1-q) under
    add_remove, k under replace; rows dropped as missing act as removals.

    Exact: with q = num/den (:func:`quantile_fraction`, the decimal as written), den * a and den * b
    are int64 integers (den <= 10^9, counts <= 2^31: below 2^61), so u = 0 exactly at the
    q-quantiles and -u is the correctly rounded quotient elsewhere (never 0, and in the same order).
    """
    qf = quantile_fraction(q)
    num, den = qf.numerator, qf.denominator
    qn = num * n  # q n, times den
    lo_gap = den * below - qn  # den (#(x<c) - q n)
    hi_gap = qn - den * at_most  # den (q n - #(x<=c))
    scaled = np.maximum(np.maximum(lo_gap, hi_gap), 0)
    return [-(int(v) / den) if v else 0.0 for v in scaled]
