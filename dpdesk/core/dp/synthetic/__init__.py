"""Differentially private synthetic tables: MST-style selection and measurement, a tree fit, sampling.

Method: MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data", Journal of Privacy and Confidentiality 11(3)). The private step
(:mod:`.measure`) measures every one-way marginal, selects a spanning tree of two-way marginals with the
exponential mechanism and measures them, all through :mod:`dpdesk.core.dp.mechanisms` (OpenDP's samplers);
the rest is post-processing of those released values: a consistent, non-negative tree model fitted by
weighted least squares and proportional fitting (:mod:`.fit`; MST uses Private-PGM's mirror descent, whose
fixed point on a tree is this consistent set of marginals), and tree-wise sampling with systematic rounding
(:mod:`.sample`) from numpy's PCG64 seeded from :mod:`secrets`. Domains are public (:mod:`.domain`).
"""

from __future__ import annotations

from dpdesk.core.dp.synthetic import aim  # the adaptive synthesiser (AIM-style), as ``synthesiser.aim``
from dpdesk.core.dp.synthetic.domain import (
    DEFAULT_BINS,
    DOMAIN_VERSION,
    MAX_COLUMNS,
    MAX_LEVELS,
    MAX_PAIR_CELLS,
    PER_VALUE_LEVELS,
    Attribute,
    DomainError,
    check_domain,
    decode,
    decode_array,
    default_edges,
    encode,
    float_decimals,
)
from dpdesk.core.dp.synthetic.fit import FIT_VERSION, TreeModel, fit
from dpdesk.core.dp.synthetic.measure import (
    ExactMarginals,
    Measurement,
    Measurements,
    Split,
    exact_marginals,
    measure,
    measure_independent,
    measure_marginals,
    split_budget,
)
from dpdesk.core.dp.synthetic.pipeline import MAX_ROWS, Synthesis, generator, replay, synthesise, table_rows
from dpdesk.core.dp.synthetic.sample import sample_codes

__all__ = [
    "DEFAULT_BINS",
    "DOMAIN_VERSION",
    "FIT_VERSION",
    "MAX_COLUMNS",
    "MAX_LEVELS",
    "MAX_PAIR_CELLS",
    "MAX_ROWS",
    "PER_VALUE_LEVELS",
    "Attribute",
    "DomainError",
    "ExactMarginals",
    "Measurement",
    "Measurements",
    "Split",
    "Synthesis",
    "TreeModel",
    "aim",
    "check_domain",
    "decode",
    "decode_array",
    "default_edges",
    "encode",
    "exact_marginals",
    "fit",
    "float_decimals",
    "generator",
    "measure",
    "measure_independent",
    "measure_marginals",
    "replay",
    "sample_codes",
    "split_budget",
    "synthesise",
    "table_rows",
]
