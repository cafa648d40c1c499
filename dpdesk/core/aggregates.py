"""Exact (un-noised) statistics, computed with numpy on the loaded columns.

Everything returned here is secret: it lives in memory only, is noised by release.py and is never
shown, saved or logged. Sums are exact integers on the fixed-point grid of queries.py (int64 sums
that cannot overflow, or float64 bincounts of 15/16-bit limbs that stay below 2^53).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from dpdesk.core.loading import Column, Table
from dpdesk.core.plan_base import ColumnSpec, ColumnType
from dpdesk.core.queries import QueryDesign, grid_bounds, quantile_fraction

if TYPE_CHECKING:
    from dpdesk.core.statistics.base import Rows


@dataclass
class Exact:
    """The exact integer vectors of a query's components (or the utilities of an EM query)."""

    vectors: list[list[int]]  # one per noise component, in grid units
    utilities: list[float] | None = None


def bound_rows_per_person(table: Table, k: int) -> np.ndarray:
    """Keep at most k rows per id, chosen at random with a cryptographic source; drop empty ids.

    Returns a boolean mask over the table's rows. Uses ``secrets`` (the OS CSPRNG), never numpy.random.
    """
    assert table.ids is not None and table.ids_missing is not None
    n = table.n_rows
    if n == 0:
        return np.zeros(0, dtype=bool)
    tiebreak = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
    ids = table.ids.reshape(n, -1)  # the 128-bit id hashes as two uint64 halves (see data._id_exprs)
    order = np.lexsort((tiebreak, *(ids[:, j] for j in reversed(range(ids.shape[1])))))
    sorted_ids = ids[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (sorted_ids[1:] != sorted_ids[:-1]).any(axis=1)
    start_idx = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.arange(n) - start_idx
    keep = np.empty(n, dtype=bool)
    keep[order] = rank < k
    return cast(np.ndarray, keep & ~table.ids_missing)


def _column(table: Table, spec: ColumnSpec, keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The column's values under its missing-value policy, and the keep mask (None: every row is kept)."""
    col = table.columns[spec.name]
    values = col.values
    if spec.type == "int" and col.missing_mask is None:
        return values, keep  # nothing missing: no mask to build
    miss = col.missing()
    if not miss.any():
        return values, keep
    if spec.missing.drops:
        return values, ~miss if keep is None else keep & ~miss
    values = values.copy()
    if spec.type == "category":
        assert spec.categories is not None
        values[miss] = spec.categories.index(str(spec.missing.impute))
    else:
        values[miss] = spec.missing.impute
    return values, keep


def _select(values: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    return values if keep is None else values[keep]


def _grid(values: np.ndarray, spec: ColumnSpec) -> tuple[np.ndarray, int]:
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


def _exact_sum(q: np.ndarray, bits: int) -> int:
    """Exact sum of whole numbers |q| < 2^bits: int64 for integer arrays, chunked float64 sums otherwise."""
    if q.dtype.kind in "iu":
        return int(q.sum(dtype=np.int64))  # |sum| <= 2^31 rows x 2^30 < 2^63: no overflow
    step = _chunk_rows(bits)
    return sum(int(q[i : i + step].sum()) for i in range(0, len(q), step))


def _group_sum(codes: np.ndarray, q: np.ndarray, n_groups: int, bits: int) -> list[int]:
    """Exact per-group sums: float64 bincounts over chunks whose sums stay below 2^52, added as integers."""
    step = _chunk_rows(bits)
    totals = [0] * n_groups
    for i in range(0, len(q), step):
        part = np.bincount(codes[i : i + step], weights=q[i : i + step], minlength=n_groups)
        totals = [t + int(v) for t, v in zip(totals, part, strict=True)]
    return totals


def _bin_index(values: np.ndarray, edges: tuple[float, ...], spec: ColumnSpec) -> np.ndarray:
    """Bin of each value for edges e0 < ... < em: [e_i, e_i+1), values outside go to the end bins."""
    if spec.type == "int" and spec.bounds is not None and spec.bounds[1] - spec.bounds[0] <= 1_000_000:
        lo = int(spec.bounds[0])
        table = _bin_index(np.arange(lo, int(spec.bounds[1]) + 1, dtype=np.float64), edges, _FLOAT)
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


def _below_at_most(x: np.ndarray, cands: np.ndarray, spec: ColumnSpec) -> tuple[np.ndarray, np.ndarray]:
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


#: Rows per chunk of the in-memory statistics: each statistic's temporaries (clipped and converted copies, bin
#: indices, the kept rows' values) are made for one chunk at a time, so that their memory stays a small constant
#: beside the table's instead of a whole column's worth (or several) of float64 copies.
CHUNK_ROWS = 1 << 20


def exact_statistic(
    design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]
) -> Exact:
    """Compute a query's exact statistic on the kept rows of the table (its statistic's exact aggregate).

    The column's values and the group codes are read here once, under their missing-value policies;
    rows without a value or a group (under "drop") and rows beyond k per person are left out. A table of more
    than :data:`CHUNK_ROWS` rows is taken in chunks of that many, whose mergeable states (``Statistic.partial``:
    integers) are added exactly: the same result, bit for bit, as one pass over the whole table.
    """
    from dpdesk.core import statistics

    stat = statistics.get(design.spec.statistic)
    n = table.n_rows
    if n <= CHUNK_ROWS or stat.composite:  # a statistic of several columns (the synthesiser) reads them whole
        return stat.exact(_rows(design, table, keep, columns))
    state: list[list[int]] | None = None
    for start in range(0, n, CHUNK_ROWS):
        stop = min(n, start + CHUNK_ROWS)
        part = _rows(design, _rows_slice(table, start, stop), keep[start:stop], columns)
        state = merge_states(state, stat.partial(part))
    assert state is not None
    return stat.from_partial(design, state)


def _rows_slice(table: Table, start: int, stop: int) -> Table:
    """Rows ``start:stop`` of the table's columns, as views (no copy); without the ids (the keep mask has them)."""
    cols = {
        name: Column(
            c.spec, c.values[start:stop], None if c.missing_mask is None else c.missing_mask[start:stop]
        )
        for name, c in table.columns.items()
    }
    return Table(table.path, table.sha256, stop - start, cols, report=table.report)


def merge_states(acc: list[list[int]] | None, part: list[list[int]]) -> list[list[int]]:
    """Two mergeable states added element by element, as Python integers (exact whatever their size)."""
    if acc is None:
        return [list(v) for v in part]
    return [[a + b for a, b in zip(x, y, strict=True)] for x, y in zip(acc, part, strict=True)]


def partial_statistic(
    design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]
) -> list[list[int]]:
    """A query's mergeable exact state on the kept rows of a part of the table (see ``Statistic.partial``):
    summed element by element over the parts, it gives the state of the whole table."""
    from dpdesk.core import statistics

    return statistics.get(design.spec.statistic).partial(_rows(design, table, keep, columns))


def _rows(design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]) -> Rows:
    """The query's kept rows: its column's values and group codes under their missing-value policies."""
    from dpdesk.core.statistics.base import Rows

    spec = design.spec
    col = columns[spec.column] if spec.column else None
    group = columns[spec.group_by] if spec.group_by else None
    mask: np.ndarray | None = None if keep.all() else keep
    g_codes = None
    n_groups = 1
    if group is not None:
        g_codes, mask = _column(table, group, mask)
        assert group.categories is not None
        n_groups = len(group.categories)
    x = None
    if col is not None:
        x, mask = _column(table, col, mask)
        x = _select(x, mask)
    g = _select(g_codes, mask) if g_codes is not None else None
    n_kept = table.n_rows if mask is None else int(mask.sum())
    return Rows(design, col, x, g, n_groups, n_kept, table, mask)


def is_finite_list(xs: list[float]) -> bool:
    """Whether every value is finite (utilities fed to OpenDP must be)."""
    return all(math.isfinite(v) for v in xs)
