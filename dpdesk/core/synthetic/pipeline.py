"""The whole synthesiser: measure (private), fit and sample (post-processing of the released values only)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdesk.core.synthetic.domain import Attribute
from dpdesk.core.synthetic.fit import TreeModel, fit
from dpdesk.core.synthetic.measure import Measurements, Split, exact_marginals, measure_marginals
from dpdesk.core.synthetic.sample import sample_codes


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
    n = round(model.total) if rows is None else rows
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
    n = round(model.total) if rows is None else rows
    return Synthesis(released, model, seed, sample_codes(model, n, generator(seed)))
