"""The synthesiser's public domain: each column discretised into levels by public bins or categories.

A numeric column is cut by public bin edges e_0 < ... < e_m into bins [e_i, e_i+1), values below e_1 in
the first bin and values from e_m-1 on in the last (as a histogram does); a category column has one level
per declared category. Everything here is public: bounds, bins, categories, the missing-value rules.

Versions (:data:`DOMAIN_VERSION`, kept in each release's ledger entry as ``domain``; entries without it: 1):

* version 2: no column has a missing level, because no missing value reaches the measurement: under the
  rule "drop" the row is left out of every marginal (as a row with an empty id is), under "impute" the value is
  imputed. An int column whose bounds span at most :data:`PER_VALUE_LEVELS` values gets one level per value by
  default (unless that makes a two-way table past :data:`MAX_PAIR_CELLS` cells: then the version-1 default).
  Every drawn value lies within its column's bounds and its level: an int is a whole number of its level (the
  last level's stop at the upper bound, never past it); a float is drawn on a grid of 10^-p, p the decimals of
  the column's bounds and edges or more, so that the narrowest level holds at least :data:`GRID_STEPS` steps (at
  most :data:`MAX_DECIMALS`).
* version 1 (releases made before it, regenerated as they were made): a column whose rule is "drop" had a
  "missing" level, last; an int column got one level per value only up to :data:`DEFAULT_BINS` values; the last
  level of such a column drew from {hi, hi + 1}; floats were drawn uniformly inside their level.

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
#: An int column whose bounds span at most this many values gets one level per value by default (version 2).
PER_VALUE_LEVELS = 100
#: The domain's version (see the module's docstring); a release's ledger entry keeps it as ``domain``.
DOMAIN_VERSION = 2
#: A float column's values are drawn on a grid at least this fine within its narrowest level (version 2) ...
GRID_STEPS = 100
#: ... with at most this many decimals.
MAX_DECIMALS = 6


class DomainError(ValueError):
    """A synthetic table's domain is too large (the message says which limit and how to meet it)."""


@dataclass(frozen=True)
class Attribute:
    """One column of the synthetic table: its kind and its public levels.

    ``kind`` is "category", "int" or "float". A category column has ``categories``; a numeric one has
    ``edges`` (public bin edges) and ``bounds`` (its declared bounds, where the end bins stop). ``version``:
    the domain version its values are decoded by.
    """

    name: str
    kind: str
    categories: tuple[str, ...] = ()
    edges: tuple[float, ...] = ()
    bounds: tuple[float, float] = (0.0, 0.0)
    missing_level: bool = False
    version: int = DOMAIN_VERSION

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


def default_edges(
    kind: str, bounds: tuple[float, float], bins: int = DEFAULT_BINS, per_value: int = PER_VALUE_LEVELS
) -> tuple[float, ...]:
    """The stated default bins over a numeric column's bounds (lo, hi).

    An int column with at most ``max(per_value, bins)`` values gets one bin per value (edges lo, lo+1, ...,
    hi+1: the last level holds hi alone); otherwise ``bins`` equal-width bins from lo to hi (an int column's
    edges rounded to whole numbers, duplicates dropped). Version 1 of the domain: ``per_value=bins``.

    >>> default_edges("float", (0.0, 10.0), 5)
    (0.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    >>> default_edges("int", (1.0, 4.0), 10)
    (1.0, 2.0, 3.0, 4.0, 5.0)
    >>> len(default_edges("int", (0.0, 18.0))), len(default_edges("int", (0.0, 18.0), per_value=10))
    (20, 11)
    """
    lo, hi = bounds
    if kind == "int" and hi - lo + 1 <= max(bins, per_value):
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
    """Values for levels (post-processing): a category's label; a number drawn uniformly inside its level.

    Version 2: every value lies within the column's bounds and its own level (so that encoding the value
    gives its level back): an int is uniform among the whole numbers of its level, the first level's from
    the lower bound, the last level's up to the upper bound; a float is uniform on the grid of
    :func:`float_decimals` within its level (the last level's up to the upper bound included). Version 1:
    as releases before it drew them. Missing is None. The same values as :func:`decode_array`, as Python
    objects.
    """
    n_values = attr.n_values
    out: list[object]
    if attr.kind == "category":
        cats = attr.categories
        out = [cats[c] if c < n_values else None for c in codes.tolist()]
        return out
    vals = decode_array(attr, codes, rng)
    out = [int(v) for v in vals.tolist()] if attr.kind == "int" else vals.tolist()
    if attr.missing_level:
        for i in np.flatnonzero(codes >= n_values).tolist():
            out[i] = None
    return out


def decode_array(attr: Attribute, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """:func:`decode`'s values as one float64 array, drawing the same uniforms from ``rng`` (a category column's
    levels are its values and draw nothing; an int column's values are whole numbers). A missing level's cells
    (``codes >= attr.n_values``) hold a value of the last level: the caller blanks them."""
    if attr.kind == "category":
        return np.asarray(codes, dtype=np.float64)
    safe = np.minimum(codes, attr.n_values - 1)
    u = rng.random(len(codes))  # one uniform draw per row, as version 1 drew them
    return _decode_v1(attr, safe, u) if attr.version == 1 else _decode_v2(attr, safe, u)


def _decode_v1(attr: Attribute, safe: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Version 1's numbers from uniform draws ``u`` (releases made before version 2 regenerate as they were made)."""
    e = np.asarray(attr.edges, dtype=np.float64)
    lo_b, hi_b = attr.bounds
    left = e[:-1].copy()
    right = e[1:].copy()
    left[0] = min(left[0], lo_b) if math.isfinite(lo_b) else left[0]
    right[-1] = max(right[-1], hi_b) if math.isfinite(hi_b) else right[-1]
    if attr.kind == "int":
        lo_i = np.ceil(left)
        hi_i = np.ceil(right) - 1.0
        hi_i[-1] = math.floor(right[-1])
        hi_i = np.maximum(hi_i, lo_i)
        a, b = lo_i[safe], hi_i[safe]
        whole: np.ndarray = np.minimum(a + np.floor(u * (b - a + 1.0)), b)
        return whole
    a, b = left[safe], right[safe]
    out: np.ndarray = a + u * (b - a)
    return out


def _levels(attr: Attribute) -> tuple[np.ndarray, np.ndarray]:
    """Each numeric level's start and stop as encoding reads them: level i holds [e_i, e_i+1), the first from
    the lower bound, the last up to the upper bound (included)."""
    e = np.asarray(attr.edges, dtype=np.float64)
    left, right = e[:-1].copy(), e[1:].copy()
    left[0], right[-1] = attr.bounds
    return left, right


def _decimals(x: float) -> int:
    """The decimals ``x`` carries as written (at most :data:`MAX_DECIMALS` + 1)."""
    for d in range(MAX_DECIMALS + 1):
        if round(x, d) == x:
            return d
    return MAX_DECIMALS + 1


def float_decimals(attr: Attribute) -> int:
    """The decimals of a float column's synthetic values (version 2; public: bounds and edges only).

    The most decimals its bounds and bin edges carry, or more, so that its narrowest level holds at least
    :data:`GRID_STEPS` steps of the grid; at most :data:`MAX_DECIMALS`.

    >>> float_decimals(Attribute("w", "float", edges=(0.0, 500.0, 5000.0), bounds=(0.0, 5000.0)))
    0
    >>> float_decimals(Attribute("w", "float", edges=(0.0, 0.5, 1.0), bounds=(0.0, 1.0)))
    3
    """
    left, right = _levels(attr)
    width = float((right - left).min())
    fine = math.ceil(math.log10(GRID_STEPS / width)) if width > 0 else MAX_DECIMALS
    declared = max(_decimals(x) for x in (*attr.bounds, *attr.edges))
    return max(0, min(MAX_DECIMALS, max(declared, fine)))


def _on_grid(x: np.ndarray, scale: float) -> np.ndarray:
    """``x`` in grid steps, a value within 1e-6 of a step taken as that step (edges written with the grid's
    decimals land on it exactly)."""
    y = x * scale
    near = np.rint(y)
    out: np.ndarray = np.where(np.abs(y - near) <= 1e-6, near, y)
    return out


def _decode_v2(attr: Attribute, safe: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Version 2's numbers from uniform draws ``u`` (see :func:`decode`)."""
    left, right = _levels(attr)
    lo_b, hi_b = attr.bounds
    scale = 1.0 if attr.kind == "int" else float(10 ** float_decimals(attr))  # a grid step: 1 / scale
    first = np.ceil(_on_grid(left, scale))  # the first step of each level
    last = np.ceil(_on_grid(right, scale)) - 1.0  # the last step before the next level's start
    last[-1] = math.floor(float(_on_grid(np.asarray([hi_b]), scale)[0]))  # the last level: up to the bound
    last = np.maximum(last, first)  # a level narrower than a step (only past MAX_DECIMALS): its first step
    a, b = first[safe], last[safe]
    steps: np.ndarray = np.minimum(a + np.floor(u * (b - a + 1.0)), b)
    out: np.ndarray
    if attr.kind == "int":
        out = np.clip(steps, math.ceil(lo_b), math.floor(hi_b))
    else:
        out = np.clip(steps / scale, lo_b, hi_b)
    return out
