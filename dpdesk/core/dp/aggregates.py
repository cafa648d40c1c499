"""Exact (un-noised) statistics, computed with numpy on the loaded columns.

Everything returned here is secret: it lives in memory only, is noised by release.py and is never
shown, saved or logged. Sums are exact integers on the fixed-point grid of queries.py (int64 sums
that cannot overflow, or float64 bincounts of 15/16-bit limbs that stay below 2^53). The pieces the
statistics' exact aggregates are built of are :mod:`dpdesk.core.dp.aggregates_base`, below the statistics registry;
this module reads a query's rows and hands them to its statistic (:func:`exact_statistic`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dpdesk.core.dp.aggregates_base import (
    Exact,
)
from dpdesk.core.dp.bounding import BoundKey, keep_smallest
from dpdesk.core.dp.queries_base import QueryDesign
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import ColumnSpec, Condition

if TYPE_CHECKING:
    from dpdesk.core.dp.statistics.base import Rows

#: What the statistics build their exact aggregates of (:mod:`dpdesk.core.dp.aggregates_base`), re-exported.
__all__ = [
    "CHUNK_ROWS",
    "bound_rows_per_person",
    "exact_statistic",
    "is_finite_list",
    "merge_states",
    "partial_statistic",
    "state_statistic",
]


def bound_rows_per_person(table: Table, k: int, key: BoundKey) -> np.ndarray:
    """Keep at most k rows per id, those with the smallest bounding hashes under ``key``; drop empty ids.

    Returns a boolean mask over the table's rows. The choice is :func:`dpdesk.core.dp.bounding.keep_smallest`: a
    function of each person's own rows and the key, the same in every engine (never a random draw).
    """
    return keep_smallest(table, k, key)


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


def _meets(table: Table, cond: Condition, spec: ColumnSpec) -> np.ndarray:
    """Which rows meet a public condition, reading its column as the statistics read theirs: under "drop" a
    missing value meets none, an imputed one is tested as imputed, a number is clamped to the bounds first."""
    values, present = _column(table, spec, None)
    if cond.categories is not None:
        assert spec.categories is not None
        wanted = np.asarray([spec.categories.index(c) for c in cond.categories])
        hit = np.isin(values, wanted)
    else:
        assert cond.between is not None and spec.bounds is not None
        v = np.clip(values, spec.bounds[0], spec.bounds[1])
        hit = (v >= cond.between[0]) & (v <= cond.between[1])  # NaN (a dropped value) meets nothing
    return hit if present is None else hit & present


def _select(values: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    return values if keep is None else values[keep]


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
    from dpdesk.core.dp import statistics

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


def state_statistic(
    design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]
) -> list[list[int]]:
    """A query's mergeable exact state (``Statistic.partial``) on the kept rows of the whole table, taken in
    chunks of :data:`CHUNK_ROWS` rows as :func:`exact_statistic` takes a large table (the same integers); its
    statistic's ``from_partial`` makes the :class:`Exact` of it. Not for a composite statistic (the synthesiser),
    which reads its columns whole."""
    from dpdesk.core.dp import statistics

    stat = statistics.get(design.spec.statistic)
    assert not stat.composite
    n = table.n_rows
    if n <= CHUNK_ROWS:
        return stat.partial(_rows(design, table, keep, columns))
    state: list[list[int]] | None = None
    for start in range(0, n, CHUNK_ROWS):
        stop = min(n, start + CHUNK_ROWS)
        part = _rows(design, _rows_slice(table, start, stop), keep[start:stop], columns)
        state = merge_states(state, stat.partial(part))
    assert state is not None
    return state


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
    from dpdesk.core.dp import statistics

    return statistics.get(design.spec.statistic).partial(_rows(design, table, keep, columns))


def _rows(design: QueryDesign, table: Table, keep: np.ndarray, columns: dict[str, ColumnSpec]) -> Rows:
    """The query's kept rows: its column's values and group codes under their missing-value policies."""
    from dpdesk.core.dp.statistics.base import Rows

    spec = design.spec
    col = columns[spec.column] if spec.column else None
    group = columns[spec.group_by] if spec.group_by else None
    mask: np.ndarray | None = None if keep.all() else keep
    for cond in spec.where:
        meets = _meets(table, cond, columns[cond.column])
        mask = meets if mask is None else mask & meets
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
