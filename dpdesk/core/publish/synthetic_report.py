"""The release report's section on a synthetic table: what was measured, how the table was made, the released
noisy one-way marginals beside the table's own, and what analysis of it can and cannot show.

Reads only the plan and the spend entry (released values and the seed): the table's rows per level are those the
package's writer counted when it drew the table, or else the table is drawn again from them (its levels only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.shown import plain
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.entries import SpendEntry

#: At most this many levels per column in the marginals' table (the rest are summarised).
MAX_LEVELS_SHOWN = 12


def synthetic_section(
    name: str,
    plan_dict: dict[str, Any],
    spend: SpendEntry,
    st: Any,
    width: float,
    counts: Sequence[Sequence[int]] | None = None,
) -> list[Any]:
    """Flowables for query ``name`` if it is a synthetic table (else none); ``counts``: the table's rows per level
    of each column, when the caller drew it (None: drawn again here)."""
    fields = (spend.get("synthetic") or {}).get(name)
    if fields is None:
        return []
    from reportlab.lib.units import mm

    from dpdesk.core.dp.statistics.synthetic import (
        SyntheticQuery,
        attributes,
        domain_version_of,
        fit_version_of,
        is_adaptive,
        measurements_from_dict,
        synthetic_level_counts,
    )
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.publish.pdftext import _p, _table

    plan = parse_plan(plan_dict)
    spec = next(q for q in plan.queries if q.name == name)
    assert isinstance(spec, SyntheticQuery)
    attrs = attributes(spec, plan.columns, domain_version_of(fields))
    if is_adaptive(fields):
        from dpdesk.core.publish.synthetic_report_aim import adaptive_section

        return adaptive_section(fields, attrs, st, counts)
    released = measurements_from_dict(fields)
    if counts is None:
        counts = synthetic_level_counts(
            attrs, released, int(fields["rows"]), int(fields["seed"]), fit_version_of(fields)
        )
    split = released.split
    pairs = ", ".join(f"{attrs[i].name} × {attrs[j].name}" for i, j in released.selected)
    out: list[Any] = [
        _p(
            _(
                "Synthetic table {file}: {n} rows of the columns {cols}. Measured: the one-way marginal of every "
                "column (noise scale {s1} per cell) and the two-way marginals {pairs} (noise scale {s2} per "
                "cell), chosen in {r} rounds of the exponential mechanism (epsilon {es} per round). Shares of the "
                "budget: 10% one-way, 10% selection, 80% two-way ({how})."
            ).format(
                file=fields["file"],
                n=fields["rows"],
                cols=", ".join(a.name for a in attrs),
                s1=plain(split.one_way_scale, 4),
                pairs=pairs,
                s2=plain(split.two_way_scale, 4),
                r=split.rounds,
                es=plain(split.select_epsilon, 4),
                how=_("Gaussian noise, rho-zCDP") if split.gaussian else _("Laplace noise, pure epsilon-DP"),
            ),
            st["body"],
        ),
        _p(
            _(
                "Method: MST (McKenna, Miklau & Sheldon 2021). The released marginals are fitted by a consistent, "
                "non-negative tree model (inverse-variance weighted least squares, then proportional fitting), and "
                "rows are drawn from it column by column along the tree with systematic rounding. A category is "
                "written as its label; a number is drawn uniformly inside its bin (an int among the whole numbers "
                "of its bin); a missing level is an empty cell. All of this is post-processing of the released "
                "values and a seed from the operating system's random source: the seed is kept in the ledger, so "
                "the same table can be written again at no cost."
            ),
            st["small"],
        ),
    ]
    table = [[_("Column"), _("Level"), _("Released (noisy)"), _("Synthetic table")]]
    for j, a in enumerate(attrs):
        noisy = released.one_way[j].noisy
        own = counts[j]
        labels = a.labels()
        for v in range(min(a.size, MAX_LEVELS_SHOWN)):
            table.append([a.name if v == 0 else "", labels[v], str(noisy[v]), str(own[v])])
        if a.size > MAX_LEVELS_SHOWN:
            table.append(["", _("({n} more levels)").format(n=a.size - MAX_LEVELS_SHOWN), "", ""])
    out.append(_table(table, [36 * mm, 56 * mm, 36 * mm, 36 * mm], st))
    out.append(
        _p(
            _(
                "Caution: the synthetic rows are made up; no row is a person. The table keeps the one-way "
                "distributions and the measured two-way relations (approximately, with noise); relations between "
                "columns not joined in the tree are only those the tree implies, and anything finer (three-way "
                "patterns, values inside a bin, small subgroups) is not learned from the data. Analyses that need "
                "more than the measured marginals, or findings about rare combinations, can be artefacts: confirm "
                "them with a differentially private statistic released for that purpose."
            ),
            st["body"],
        )
    )
    return out
