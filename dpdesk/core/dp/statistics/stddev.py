"""stddev: the sample standard deviation of a numeric column's values clamped to [L, U], in total or per group.

The square root of the sample variance (divisor n - 1, as Excel's STDEV.S and pandas' ``std()`` compute it),
released exactly as :mod:`.variance` releases it (the same three noise components, each with a third of the
query's epsilon and delta, the same sensitivities, derived there) and post-processed by sqrt: the released
value is sqrt(v), v the clamped noisy variance, so it lies in [0, sqrt(2) h], h = (U - L)/2.

Accuracy: |sqrt(a) - sqrt(b)| <= sqrt(|a - b|), so the variance's error bound E (before rounding) gives sqrt(E)
for the standard deviation, plus its own rounding (:func:`~dpdesk.core.dp.accuracy_base.spread_error`).
"""

from __future__ import annotations

import math

from dpdesk.core.dp.statistics.kit import (
    Exact,
    NoiseFn,
    PickFn,
    Plan,
    QueryDesign,
    QuerySpec,
    Row,
    _,
)
from dpdesk.core.dp.statistics.variance import Variance, spread_rows, spread_shape


class StdDev(Variance):
    """The sample standard deviation of a numeric column."""

    name = "stddev"
    order = 84
    accuracy_unit = ""  # the column's units

    def label(self) -> str:
        return _("standard deviation")

    def word(self) -> str:
        return _("standard deviation")

    def help(self) -> str:
        return _(
            "The sample standard deviation (divisor n - 1, as Excel's STDEV.S and pandas compute it) of the "
            "column's values clamped to its bounds: the square root of the noisy sample variance."
        )

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        return spread_rows(design, exact, plan, noise, root=True)

    def ratio_shape(self, spec: QuerySpec, plan: Plan) -> tuple[float, float]:
        """(h, sqrt(2) h): the largest centred value and the largest sample standard deviation."""
        h, width = spread_shape(spec, plan)
        return h, math.sqrt(width)


STATISTIC = StdDev()
