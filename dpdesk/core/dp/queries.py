"""Query designs: sensitivity, noise scale, error bound and formula of every query, from public facts only.

A :class:`QueryDesign` is computed from the plan alone (no data): it is what the budget meter and
the noise preview show, and what the release uses to calibrate noise. Each query is made of one
or more :class:`Component` mechanisms (a mean is a noisy sum and a noisy count, each with half the
query's epsilon and delta).

Neighbouring relations, with k = max_rows_per_person and M = max(|L|, |U|):

* ``add_remove``: one person's rows (at most k) are added or removed.
* ``replace``: one person's rows (at most k) are replaced by as many rows with other values; the
  number of rows does not change. "Other values" include missing, unparsable and undeclared ones
  and an empty id, so a row of the statistic may **drop out** while its neighbour, with a value,
  does not (see :func:`rows_can_drop`).

Sensitivities (L1 for Laplace, L2 for Gaussian, Du for the exponential mechanism), in summary for the first statistics (every module states its own):

=====================  ======================  ==========================================
statistic              add_remove              replace
=====================  ======================  ==========================================
count                  k                       k (n does not change unless rows can drop)
sum                    k M                     k (U - L); k max(U - L, M) if rows can drop
histogram, grouped n   L1 = L2 = k             L1 = 2k, L2 = sqrt(2) k
grouped sum            L1 = L2 = k M           L1 = 2k M, L2 = k max(U - L, sqrt(2) M)
mean: sum of (x-mid)   k (U - L)/2             k (U - L)
mode utility           k                       k
quantile score         k max(q, 1 - q)         k
select (revenue)       k max(candidates)       k max(candidates)
=====================  ======================  ==========================================

Each statistic's proof (both relations, rows that drop out under replace, grouped too) is in its
module's docstring under :mod:`dpdesk.core.dp.statistics` (count, sum, mean, histogram, quantile, mode,
select, ...), built of the components and helpers of :mod:`dpdesk.core.dp.queries_base`; :func:`design_query` computes what every design shares (the unit of privacy, whether rows
can drop out) and hands the rest to the statistic's ``design``. Where rows can drop, a replace
neighbour removes a set A of the statistic's rows and adds a set B, with |A| <= k and |B| <= k (not
necessarily |A| = |B|); values are clamped to [L, U] and imputed values lie inside the bounds. Under
add_remove a row that drops out is only a row that is not added, so nothing changes there.

Exact sums: values are clamped to [L, U] and put on a fixed-point grid of resolution 2^-s chosen
from the public bounds and the public row cap (2^31 rows), so that every per-row value is an
integer of magnitude at most 2^30 and every sum fits in int64 exactly. The sensitivity is then an
exact integer in grid units, and OpenDP's discrete samplers add noise on that grid (which is what
OpenDP's own float Laplace does internally). Rounding a value to the grid moves it by at most
2^-(s+1); this is a change of the statistic, not of its privacy.
"""

from __future__ import annotations

from dpdesk.core.dp.queries_base import (
    QueryDesign,
    _drop_causes,
    rows_can_drop,
)
from dpdesk.core.model.spec import Plan, QuerySpec
from dpdesk.i18n import _

#: What the statistics build their designs of (:mod:`dpdesk.core.dp.queries_base`), re-exported.
__all__ = ["design_plan", "design_query"]


def design_query(spec: QuerySpec, plan: Plan) -> QueryDesign:
    """Sensitivity, scale, bound and formula of a query, from the plan alone (its statistic's design)."""
    from dpdesk.core.dp import statistics
    from dpdesk.core.dp.statistics.base import DesignContext

    unit = plan.privacy_unit
    k = unit.max_rows_per_person
    replace = unit.neighbouring == "replace"
    rel = _("replace") if replace else _("add/remove")
    who = _("one row") if k == 1 else _("one person (up to k = {k} rows)").format(k=k)
    notes: list[str] = []
    drops = replace and rows_can_drop(spec, plan)
    causes = _drop_causes(spec, plan) if drops else ""
    if k > 1 and unit.id_column is None:
        notes.append(
            _(
                "k = {k} is your declaration that nobody has more than {k} rows; dpdesk cannot check it "
                "without an id column"
            ).format(k=k)
        )
    for cond in spec.where:
        if cond.column == spec.group_by and cond.categories is not None:
            cats = plan.columns[cond.column].categories or ()
            empty = [c for c in cats if c not in cond.categories]
            if empty:
                notes.append(
                    _(
                        "no row of the groups {groups} can meet the condition on {col}: their published values are "
                        "noise only"
                    ).format(
                        groups=", ".join(empty[:10]) + (" …" if len(empty) > 10 else ""), col=cond.column
                    )
                )
    ctx = DesignContext(k, replace, rel, who, drops, causes, notes)
    return statistics.get(spec.statistic).design(spec, plan, ctx)


def design_plan(plan: Plan) -> list[QueryDesign]:
    """Designs of all queries of a plan, in plan order."""
    return [design_query(q, plan) for q in plan.queries]
