"""How faithful a synthetic table is to a table: the mean total-variation distance over its marginals.

The total-variation distance between two tables' distributions over the same cells is half the L1 distance
of their shares: the share of rows that would have to move to turn one into the other (0: the same
distribution, 1: nothing in common). dpdesk measures it only against a table its user declares public
(:func:`dpdesk.core.preview.simulate.synthetic_fidelity`) and in the benchmarks, never against the private table.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np


def _shares(codes: np.ndarray, sizes: Sequence[int], cols: tuple[int, ...]) -> np.ndarray:
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for c in cols:
        flat = flat * sizes[c] + codes[:, c]
    h = np.bincount(flat, minlength=math.prod(sizes[c] for c in cols)).astype(np.float64)
    return h / max(1.0, float(h.sum()))


def tvd(real: np.ndarray, fake: np.ndarray, sizes: Sequence[int], way: int) -> float:
    """Mean total-variation distance between ``real`` and ``fake`` (n x d tables of levels, d = len(sizes))
    over every marginal of ``way`` columns; 0.0 when there is no such marginal."""
    out = [
        0.5 * float(np.abs(_shares(real, sizes, cols) - _shares(fake, sizes, cols)).sum())
        for cols in itertools.combinations(range(len(sizes)), way)
    ]
    return float(np.mean(out)) if out else 0.0
