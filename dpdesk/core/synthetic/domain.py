"""The synthesiser's public domain: each column discretised into levels by public bins or categories.

A numeric column is cut by public bin edges e_0 < ... < e_m into bins [e_i, e_i+1), values below e_1 in
the first bin and values from e_m-1 on in the last (as a histogram does); a category column has one level
per declared category. A column whose rows may be missing gets one more level, "missing", last: missing
values are kept as a level, not dropped (dropping a row would change every marginal's total, and the
replace relation's sensitivity would no longer hold). Everything here is public: bounds, bins, categories.

Limits (refused with a message, before any data is read): at most :data:`MAX_COLUMNS` columns, at most
:data:`MAX_LEVELS` levels per column and at most :data:`MAX_PAIR_CELLS` cells in any two-way marginal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdesk.i18n import _

#: At most this many columns in one synthetic table (45 pairs at 10 columns; 435 at 30).
MAX_COLUMNS = 30
#: At most this many levels (bins or categories, plus missing) per column.
MAX_LEVELS = 100
#: At most this many cells in any two-way marginal (the product of two columns' levels).
MAX_PAIR_CELLS = 5_000
#: The default number of equal-width bins over a numeric column's bounds.
DEFAULT_BINS = 10


class DomainError(ValueError):
    """A synthetic table's domain is too large (the message says which limit and how to meet it)."""


@dataclass(frozen=True)
class Attribute:
    """One column of the synthetic table: its kind and its public levels.

    ``kind`` is "category", "int" or "float". A category column has ``categories``; a numeric one has
    ``edges`` (public bin edges) and ``bounds`` (its declared bounds, where the end bins stop).
    """

    name: str
    kind: str
    categories: tuple[str, ...] = ()
    edges: tuple[float, ...] = ()
    bounds: tuple[float, float] = (0.0, 0.0)
    missing_level: bool = False

    @property
    def n_values(self) -> int:
        """The number of levels other than missing."""
        return len(self.categories) if self.kind == "category" else len(self.edges) - 1

    @property
    def size(self) -> int:
        """The number of levels, missing included."""
        return self.n_values + (1 if self.missing_level else 0)

    def labels(self) -> tuple[str, ...]:
        """The levels' labels (categories or bins, then "missing")."""
        if self.kind == "category":
            out = list(self.categories)
        else:
            e = self.edges
            out = [f"[{_num(e[i])}, {_num(e[i + 1])})" for i in range(len(e) - 1)]
            if out:
                out[0] = f"[{_num(self.bounds[0])}, {_num(e[1])})" if self.bounds[0] < e[1] else out[0]
                last = len(e) - 2
                out[last] = f"[{_num(e[last])}, {_num(self.bounds[1])}]"
        if self.missing_level:
            out.append(_("missing"))
        return tuple(out)


def _num(x: float) -> str:
    return f"{x:g}"


def default_edges(kind: str, bounds: tuple[float, float], bins: int = DEFAULT_BINS) -> tuple[float, ...]:
    """The stated default bins over a numeric column's bounds (lo, hi).

    An int column with at most ``bins`` values gets one bin per value (edges lo, lo+1, ..., hi+1);
    otherwise ``bins`` equal-width bins from lo to hi (an int column's edges rounded to whole numbers,
    duplicates dropped).

    >>> default_edges("float", (0.0, 10.0), 5)
    (0.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    >>> default_edges("int", (1.0, 4.0), 10)
    (1.0, 2.0, 3.0, 4.0, 5.0)
    """
    lo, hi = bounds
    if kind == "int" and hi - lo + 1 <= bins:
        return tuple(float(v) for v in range(int(lo), int(hi) + 2))
    raw = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    if kind == "int":
        raw = [float(round(v)) for v in raw]
    out: list[float] = []
    for v in raw:
        if not out or v > out[-1]:
            out.append(v)
    return tuple(out)


def check_domain(attrs: Sequence[Attribute]) -> None:
    """Refuse a domain past the stated limits (public: reads only the levels)."""
    if len(attrs) < 2:
        raise DomainError(_("a synthetic table needs at least 2 columns"))
    if len(attrs) > MAX_COLUMNS:
        raise DomainError(
            _("a synthetic table takes at most {most} columns (you chose {n})").format(
                most=MAX_COLUMNS, n=len(attrs)
            )
        )
    for a in attrs:
        if a.size > MAX_LEVELS:
            raise DomainError(
                _(
                    "column {column} has {n} levels; a synthetic table takes at most {most}: use fewer bins"
                ).format(column=a.name, n=a.size, most=MAX_LEVELS)
            )
    sizes = sorted(a.size for a in attrs)
    if sizes[-1] * sizes[-2] > MAX_PAIR_CELLS:
        big = sorted(attrs, key=lambda a: a.size)[-2:]
        raise DomainError(
            _(
                "columns {a} and {b} make a two-way table of {n} cells; a synthetic table takes at most "
                "{most}: use fewer bins"
            ).format(a=big[0].name, b=big[1].name, n=sizes[-1] * sizes[-2], most=MAX_PAIR_CELLS)
        )


def encode(attr: Attribute, values: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
    """The level of each value (reads the data: only the measurement step calls it).

    ``values``: category codes (0-based) or numbers; ``missing``: a mask of missing rows (None: none).
    """
    if attr.kind == "category":
        codes = np.asarray(values, dtype=np.int64).copy()
    else:
        x = np.asarray(values, dtype=np.float64)
        codes = np.searchsorted(np.asarray(attr.edges, dtype=np.float64), x, side="right") - 1
        codes = np.clip(codes, 0, attr.n_values - 1).astype(np.int64)
    if missing is not None and missing.any():
        if not attr.missing_level:
            raise ValueError(f"column {attr.name} has missing values but no missing level")
        codes[missing] = attr.n_values
    return codes


def decode(attr: Attribute, codes: np.ndarray, rng: np.random.Generator) -> list[object]:
    """Values for levels (post-processing): a category's label; a number drawn uniformly inside its bin.

    A float is uniform on [e_i, e_i+1) (the first bin from the lower bound, the last up to the upper
    bound); an int is uniform among the whole numbers of its bin. Missing is None.
    """
    n_values = attr.n_values
    out: list[object]
    if attr.kind == "category":
        cats = attr.categories
        out = [cats[c] if c < n_values else None for c in codes.tolist()]
        return out
    e = np.asarray(attr.edges, dtype=np.float64)
    lo_b, hi_b = attr.bounds
    left = e[:-1].copy()
    right = e[1:].copy()
    left[0] = min(left[0], lo_b) if math.isfinite(lo_b) else left[0]
    right[-1] = max(right[-1], hi_b) if math.isfinite(hi_b) else right[-1]
    safe = np.minimum(codes, n_values - 1)
    if attr.kind == "int":
        lo_i = np.ceil(left)
        hi_i = np.ceil(right) - 1.0
        hi_i[-1] = math.floor(right[-1])
        hi_i = np.maximum(hi_i, lo_i)
        a, b = lo_i[safe], hi_i[safe]
        vals: np.ndarray = a + np.floor(rng.random(len(codes)) * (b - a + 1.0))
        vals = np.minimum(vals, b)
        out = [int(v) for v in vals.tolist()]
    else:
        a, b = left[safe], right[safe]
        vals = a + rng.random(len(codes)) * (b - a)
        out = [float(v) for v in vals.tolist()]
    if attr.missing_level:
        for i in np.flatnonzero(codes >= n_values).tolist():
            out[i] = None
    return out
