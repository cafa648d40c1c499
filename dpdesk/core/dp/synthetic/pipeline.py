"""The whole synthesiser: measure (private), fit and sample (post-processing of the released values only)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdesk.core.dp.synthetic.domain import Attribute
from dpdesk.core.dp.synthetic.fit import TreeModel, fit
from dpdesk.core.dp.synthetic.measure import Measurements, Split, exact_marginals, measure_marginals
from dpdesk.core.dp.synthetic.sample import sample_codes

#: At most this many rows in one synthetic table (its CSV is built in memory); the default, the fitted model's
#: total, is capped at it.
MAX_ROWS = 10_000_000


def table_rows(total: float, rows: int | None) -> int:
    """How many rows to draw: the query's ``rows``, or else the fitted model's ``total`` (post-processing of
    released values, free) rounded and capped at :data:`MAX_ROWS`."""
    return rows if rows is not None else min(max(0, round(total)), MAX_ROWS)


@dataclass(frozen=True)
class Synthesis:
    """A synthetic table's levels, with what the ledger keeps: the released marginals and the seed."""

    released: Measurements
    model: TreeModel
    seed: int
    codes: np.ndarray  # n x d levels


def generator(seed: int) -> np.random.Generator:
    """numpy's PCG64 for the sampling (post-processing only; the seed comes from :mod:`secrets`)."""
    return np.random.Generator(np.random.PCG64(seed))


def replay(released: Measurements, rows: int | None, seed: int) -> tuple[TreeModel, np.ndarray]:
    """The model and the table the released values and the seed give (anyone can recompute them)."""
    model = fit(released)
    n = table_rows(model.total, rows)
    return model, sample_codes(model, n, generator(seed))


def synthesise(
    codes: np.ndarray,
    attrs: Sequence[Attribute],
    split: Split,
    rows: int | None = None,
    seed: int | None = None,
) -> Synthesis:
    """Measure the encoded table's marginals, fit the model to them and draw ``rows`` rows (default: the
    fitted total). The fit and the sampler read only the released values and the seed."""
    exact = exact_marginals(codes, attrs)
    released = measure_marginals(exact, split)
    del exact
    if seed is None:
        seed = secrets.randbits(128)
    model = fit(released)
    n = table_rows(model.total, rows)
    return Synthesis(released, model, seed, sample_codes(model, n, generator(seed)))
