"""Exact (un-noised) statistics, computed with numpy on the loaded columns.

Everything returned here is secret: it lives in memory only, is noised by release.py and is never
shown, saved or logged. Sums are exact integers on the fixed-point grid of queries.py (int64 sums
that cannot overflow, or float64 bincounts of 15/16-bit limbs that stay below 2^53).
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

import numpy as np

from dpdesk.core.data import Table
from dpdesk.core.plan import ColumnSpec
from dpdesk.core.queries import QueryDesign, grid_bounds


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
    order = np.lexsort((tiebreak, table.ids))
    sorted_ids = table.ids[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = sorted_ids[1:] != sorted_ids[:-1]
    start_idx = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.arange(n) - start_idx
    keep = np.empty(n, dtype=bool)
    keep[order] = rank < k
    return keep & ~table.ids_missing


def _column(table: Table, spec: ColumnSpec, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The column's values for the kept rows under its missing-value policy, and the new keep mask."""
    col = table.columns[spec.name]
    miss = col.missing()
    values = col.values
    if spec.missing.drops:
        return values, keep & ~miss
    if not miss.any():
        return values, keep
    values = values.copy()
    if spec.type == "category":
        assert spec.categories is not None
        values[miss] = spec.categories.index(str(spec.missing.impute))
    else:
        values[miss] = spec.missing.impute
    return values, keep


def _grid(values: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    """Clamp to the bounds and put on the fixed-point grid: int64 with |v| <= 2^30."""
    s, lo_i, hi_i = grid_bounds(spec)
    assert spec.bounds is not None
    x = np.clip(values.astype(np.float64, copy=False), spec.bounds[0], spec.bounds[1])
    q = np.rint(np.ldexp(x, s)).astype(np.int64)
    return np.clip(q, lo_i, hi_i, out=q)


def _group_sum(codes: np.ndarray, q: np.ndarray, n_groups: int) -> list[int]:
    """Exact per-group sums of int64 values via float64 bincounts of two limbs (each sum < 2^53)."""
    hi = q >> 16
    lo = q & 0xFFFF
    s_hi = np.bincount(codes, weights=hi.astype(np.float64), minlength=n_groups)
    s_lo = np.bincount(codes, weights=lo.astype(np.float64), minlength=n_groups)
    return [int(a) * 65536 + int(b) for a, b in zip(s_hi, s_lo, strict=True)]


def _bin_index(values: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """Bin of each value for edges e0 < ... < em: [e_i, e_i+1), values outside go to the end bins."""
    idx = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right") - 1
    return np.clip(idx, 0, len(edges) - 2)


def exact_statistic(design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]) -> Exact:
    """Compute a query's exact statistic on the kept rows of the table."""
    spec = design.spec
    col = columns[spec.column] if spec.column else None
    group = columns[spec.group_by] if spec.group_by else None
    keep = keep.copy()
    g_codes = None
    n_groups = 1
    if group is not None:
        g_codes, keep = _column(table, group, keep)
        assert group.categories is not None
        n_groups = len(group.categories)
    x = None
    if col is not None:
        x, keep = _column(table, col, keep)
        x = x[keep]
    g = g_codes[keep].astype(np.intp) if g_codes is not None else None

    stat = spec.statistic
    if stat == "count":
        if g is None:
            return Exact([[int(keep.sum())]])
        return Exact([np.bincount(g, minlength=n_groups).astype(np.int64).tolist()])
    if stat == "histogram":
        assert col is not None and x is not None
        if col.type == "category":
            assert col.categories is not None
            b = x.astype(np.intp)
            n_bins = len(col.categories)
        else:
            assert spec.bins is not None
            b = _bin_index(x.astype(np.float64, copy=False), spec.bins)
            n_bins = len(spec.bins) - 1
        cell = b if g is None else g * n_bins + b
        return Exact([np.bincount(cell, minlength=n_groups * n_bins).astype(np.int64).tolist()])
    if stat in ("sum", "mean"):
        assert col is not None and x is not None
        q = _grid(x, col)
        if stat == "mean":
            _, lo_i, hi_i = grid_bounds(col)
            q = 2 * q - (lo_i + hi_i)
        if g is None:
            sums = [int(q.sum())]
            counts = [int(len(q))]
        else:
            sums = _group_sum(g, q, n_groups)
            counts = np.bincount(g, minlength=n_groups).astype(np.int64).tolist()
        return Exact([counts, sums] if stat == "mean" else [sums])
    if stat == "mode":
        assert col is not None and col.categories is not None and x is not None
        per_category = np.bincount(x.astype(np.intp), minlength=len(col.categories))
        return Exact([], [float(c) for c in per_category])
    assert design.candidates is not None and col is not None and col.bounds is not None and x is not None
    cands = np.asarray(design.candidates, dtype=np.float64)
    xv = np.clip(x.astype(np.float64, copy=False), col.bounds[0], col.bounds[1])
    n = len(xv)
    # number of candidates <= x and < x, per row, turned into per-candidate counts
    le = np.bincount(np.searchsorted(cands, xv, side="right"), minlength=len(cands) + 1)
    lt = np.bincount(np.searchsorted(cands, xv, side="left"), minlength=len(cands) + 1)
    # #(x < c_j) = #{rows with (number of candidates <= x) <= j}
    below = np.cumsum(le)[: len(cands)]
    # #(x > c_j) = #{rows with (number of candidates < x) > j}
    above = n - np.cumsum(lt)[: len(cands)]
    if stat == "quantile":
        qv = spec.q
        util = -np.abs((1.0 - qv) * below - qv * above)
        return Exact([], [float(u) for u in util])
    # select, revenue: u(p) = p * #(x >= p) = p * (n - #(x < p))
    at_or_above = n - below
    return Exact([], [float(c) * float(a) for c, a in zip(design.candidates, at_or_above, strict=True)])


def is_finite_list(xs: list[float]) -> bool:
    """Whether every value is finite (utilities fed to OpenDP must be)."""
    return all(math.isfinite(v) for v in xs)
