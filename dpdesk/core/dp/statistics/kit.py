"""The kit for statistic authors: everything a statistic module of this package may import from dpdesk.

A statistic module imports dpdesk only from here (and, when it builds on another statistic, that statistic's
module: ``mean`` reuses ``count``'s grouped counts, ``select`` ``quantile``'s candidates); besides that the
standard library, numpy and polars. ``tests/core/test_statistic_kit.py`` checks it by reading the modules'
imports. Each name is imported from where it lives and is public there; the list, by job:

Declaring a statistic (:mod:`.base`)
    ``Statistic`` (the class a module subclasses, one instance named ``STATISTIC``), ``Param`` and ``ParamKind``
    (a query parameter in the form's and validator's typed vocabulary), ``parse_param`` (a parameter's value
    parsed by its kind), ``check_field`` (a field validated with the plan's message), ``Rows`` (the released
    rows), ``DesignContext`` (the plan, relation and mechanism a design is made for), ``AuditExample`` (a small
    plan and tables for the privacy audit), ``NoiseFn`` and ``PickFn`` (the noise and selection a release
    applies), ``NUMERIC`` and ``CATEGORY`` (the column types a parameter accepts).
The plan's values and validators (:mod:`dpdesk.core.model.spec`, :mod:`dpdesk.core.common.errors`)
    ``Plan``, ``QuerySpec``, ``ColumnSpec`` and ``ColumnType`` (the plan, a query's shared fields, a declared
    column), ``PlanError`` (a plan's refusal, naming the field), ``BrokenColumn`` (a column declaration that
    cannot be read), ``MAX_BINS``, ``MAX_CATEGORIES`` and ``MAX_CANDIDATES`` (the plan's limits), ``quoted``,
    ``json_type``, ``listed_twice`` and ``did_you_mean`` (pieces of the plan's messages), ``increasing`` (a
    strictly increasing list of numbers read from a plan), ``inside_bounds`` (values checked against a column's
    bounds), ``num_out`` (a number as the plan writes it back), ``Mechanism`` (the plan's mechanism words).
Designs (:mod:`dpdesk.core.dp.queries_base`)
    ``QueryDesign`` and ``Component`` (a query's noise components, with their sensitivities and derivations),
    ``noise_component`` (a Laplace or Gaussian component, calibrated), ``exponential_component`` and
    ``em_curve`` (the exponential mechanism's component and its accuracy curve), ``group_cells`` (a grouped
    query's cells), ``grid_bounds`` and ``to_natural`` (the fixed-point grid of a bounded column and back),
    ``ratio_halfwidths`` and ``ratio_interval`` (the error of a ratio of two noisy totals),
    ``interval_halfwidth`` (a component's 95% noise interval), ``quantile_fraction`` (q as an exact fraction),
    ``covers_every_whole_number`` (whether quantile candidates hold every whole number of an int column),
    ``float_up`` (a sensitivity rounded up to a float), ``fmt_formula`` (a number as derivation texts write it).
Exact aggregates (:mod:`dpdesk.core.dp.aggregates_base`)
    ``Exact`` (the exact integer vectors or utilities of a query; never shown), ``to_grid`` (values clamped and
    put on the grid), ``exact_sum`` and ``group_sum`` (exact sums of grid values, whole or per group),
    ``bin_index`` (each value's bin), ``below_at_most`` (#(x < c) and #(x <= c) per candidate),
    ``quantile_utilities`` (the quantile score of each candidate).
Accuracy and released values (:mod:`dpdesk.core.dp.accuracy_base`, :mod:`dpdesk.core.dp.values`)
    ``Accuracy`` (a stated accuracy), ``VALUE`` (its kind for an error in the statistic's units),
    ``ratio_error`` (a ratio's proven error), ``spread_interval`` (a released variance's interval half-width at
    its noisy count), ``Row`` (a released row), ``fmt_number`` and ``rounded_row``
    (released numbers rounded to their noise), ``csv_bytes`` (the formula-safe CSV writer), ``neutralise`` (one
    cell made formula-safe).
Mechanisms (:mod:`dpdesk.core.dp.mechanisms`, the one adapter over OpenDP; no statistic draws noise itself)
    ``LN20`` (ln 20, of 95% statements), ``laplace_bound`` and ``gaussian_bound`` (a noise's 95% bound),
    ``rho_to_epsilon`` (zCDP's rho as (epsilon, delta)).
The synthesiser (:mod:`dpdesk.core.dp.synthetic`)
    ``synthesiser``: the package of the synthetic-table method, used by the ``synthetic`` statistic through its
    public names (``synthesiser.fit``, ``synthesiser.Attribute``, ...).
Messages (:mod:`dpdesk.i18n`)
    ``_``: gettext's translation function (its conventional name, which the message extractor looks for).
``Table`` (:mod:`dpdesk.core.loading`, for annotations only: import it under ``TYPE_CHECKING``)
    the loaded table a statistic's ``exact`` reads.

This module only gathers names; it defines nothing and holds no state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import synthetic as synthesiser
from dpdesk.core.dp.accuracy_base import VALUE, Accuracy, ratio_error, spread_interval
from dpdesk.core.dp.aggregates_base import (
    Exact,
    below_at_most,
    bin_index,
    exact_sum,
    group_sum,
    quantile_utilities,
    to_grid,
)
from dpdesk.core.dp.mechanisms import LN20, gaussian_bound, laplace_bound, rho_to_epsilon
from dpdesk.core.dp.queries_base import (
    Component,
    QueryDesign,
    covers_every_whole_number,
    em_curve,
    exponential_component,
    float_up,
    fmt_formula,
    grid_bounds,
    group_cells,
    interval_halfwidth,
    noise_component,
    quantile_fraction,
    ratio_halfwidths,
    ratio_interval,
    to_natural,
)
from dpdesk.core.dp.statistics.base import (
    CATEGORY,
    NUMERIC,
    AuditExample,
    DesignContext,
    NoiseFn,
    Param,
    ParamKind,
    PickFn,
    Rows,
    Statistic,
    check_field,
    parse_param,
)
from dpdesk.core.dp.values import Row, csv_bytes, fmt_number, neutralise, rounded_row
from dpdesk.core.model.mechanism_kinds import Mechanism
from dpdesk.core.model.spec import (
    MAX_BINS,
    MAX_CANDIDATES,
    MAX_CATEGORIES,
    BrokenColumn,
    ColumnSpec,
    ColumnType,
    Plan,
    QuerySpec,
    did_you_mean,
    increasing,
    inside_bounds,
    json_type,
    listed_twice,
    num_out,
    quoted,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.loading import Table as Table

__all__ = [
    "CATEGORY",
    "LN20",
    "MAX_BINS",
    "MAX_CANDIDATES",
    "MAX_CATEGORIES",
    "NUMERIC",
    "VALUE",
    "Accuracy",
    "AuditExample",
    "BrokenColumn",
    "ColumnSpec",
    "ColumnType",
    "Component",
    "DesignContext",
    "Exact",
    "Mechanism",
    "NoiseFn",
    "Param",
    "ParamKind",
    "PickFn",
    "Plan",
    "PlanError",
    "QueryDesign",
    "QuerySpec",
    "Row",
    "Rows",
    "Statistic",
    "_",
    "below_at_most",
    "bin_index",
    "check_field",
    "covers_every_whole_number",
    "csv_bytes",
    "did_you_mean",
    "em_curve",
    "exact_sum",
    "exponential_component",
    "float_up",
    "fmt_formula",
    "fmt_number",
    "gaussian_bound",
    "grid_bounds",
    "group_cells",
    "group_sum",
    "increasing",
    "inside_bounds",
    "interval_halfwidth",
    "json_type",
    "laplace_bound",
    "listed_twice",
    "neutralise",
    "noise_component",
    "num_out",
    "parse_param",
    "quantile_fraction",
    "quantile_utilities",
    "quoted",
    "ratio_error",
    "ratio_halfwidths",
    "ratio_interval",
    "rho_to_epsilon",
    "rounded_row",
    "spread_interval",
    "synthesiser",
    "to_grid",
    "to_natural",
]
