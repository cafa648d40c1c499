"""The release report's section on an adaptive synthetic table (AIM): what the rounds measured, each measured
marginal's released noisy counts beside the synthetic table's own (summarised: their total-variation distance, and
the distance the noise alone would give), an estimate of the error of the pairs not measured, and what a synthetic
table cannot show.

Reads only the spend entry's record (the released rounds and the seed) and the table drawn from them (its rows per
cell of each measured marginal, counted by the package's writer, or else drawn again here).

The estimate for an unmeasured pair r: each round's score of a candidate is its model error less the error its own
measurement's noise would bring, sqrt(2/pi) sigma n_r in L1 (n_r cells); a pair left out scored no better than those
picked, and the rounds end when the model stops moving by more than the noise. So its error is estimated at about
that noise floor at the last round's sigma, as a total-variation distance sqrt(2/pi) sigma n_r / (2 N) (N the
table's rows). It is an estimate, not a measurement: an unmeasured pair's error can be larger (a relation the
budget did not reach), which the report says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpdesk.core.common.shown import plain
from dpdesk.i18n import _

#: At most this many measured marginals, and unmeasured pairs, are listed one by one (the rest summarised).
MAX_SHOWN = 24


def marginal_rows(
    fields: dict[str, Any], counts: Sequence[Sequence[int]]
) -> list[tuple[tuple[int, ...], int, float, float, float]]:
    """Per distinct measured marginal (first measured first): its columns, its cells, the sigma of its combined
    released counts (inverse-variance mean of its measurements), the total-variation distance between those and the
    table's own counts (each as shares of its total), and the distance the noise alone is expected to give
    (sqrt(2/pi) sigma cells / (2 N))."""
    from dpdesk.core.dp.statistics.synthetic import measured_cliques

    cliques = measured_cliques(fields)
    n = max(1, int(fields["rows"]))
    out = []
    for c, own in zip(cliques, counts, strict=True):
        num = np.zeros(len(own))
        den = 0.0
        for r in fields["rounds"]:
            if tuple(r["clique"]) == c and math.isfinite(float(r["sigma"])):
                w = 1.0 / float(r["sigma"]) ** 2
                num += w * np.asarray(r["noisy"], dtype=np.float64)
                den += w
        noisy = num / den if den > 0 else num
        sigma = 1.0 / math.sqrt(den) if den > 0 else math.inf
        total = max(float(np.clip(noisy, 0, None).sum()), 1.0)
        shares = np.clip(noisy, 0, None) / total
        mine = np.asarray(own, dtype=np.float64) / n
        tvd = 0.5 * float(np.abs(shares - mine).sum())
        floor = math.sqrt(2.0 / math.pi) * sigma * len(own) / (2.0 * total)
        out.append((c, len(own), sigma, tvd, floor))
    return out


def unmeasured_pairs(fields: dict[str, Any]) -> list[tuple[int, int]]:
    """The pairs of columns no measured marginal holds."""
    from dpdesk.core.dp.statistics.synthetic import measured_cliques

    held = [set(c) for c in measured_cliques(fields)]
    d = len(fields["sizes"])
    return [(i, j) for i in range(d) for j in range(i + 1, d) if not any({i, j} <= h for h in held)]


def pair_estimate(fields: dict[str, Any], pair: tuple[int, int]) -> float:
    """The estimated total-variation error of an unmeasured pair (the module docstring): the noise floor of its
    measurement at the last round's sigma."""
    sizes = fields["sizes"]
    sigma = min(float(r["sigma"]) for r in fields["rounds"])
    cells = int(sizes[pair[0]]) * int(sizes[pair[1]])
    return math.sqrt(2.0 / math.pi) * sigma * cells / (2.0 * max(1, int(fields["rows"])))


def adaptive_section(
    fields: dict[str, Any], attrs: Sequence[Any], st: Any, counts: Sequence[Sequence[int]] | None
) -> list[Any]:
    """Flowables for one adaptive synthetic table; ``counts``: the table's rows per cell of each measured marginal
    (:meth:`~dpdesk.core.dp.statistics.synthetic.SyntheticColumns.clique_counts`), None to draw it again."""
    from reportlab.lib.units import mm

    from dpdesk.core.dp.synthetic import aim
    from dpdesk.core.publish.pdftext import _p, _table

    released = aim.released_from_dict(fields)
    if counts is None:
        from dpdesk.core.dp.statistics.synthetic import SyntheticColumns, fit_version_of

        codes, _rng = aim.draw_codes(
            released, int(fields["rows"]), int(fields["seed"]), fit_version_of(fields)
        )
        counts = SyntheticColumns(list(attrs), codes, []).clique_counts(fields)
    chosen = [r for r in released.rounds if r.select_epsilon > 0]
    # the start measures every one-way marginal once, and again when its own counts say they are mostly noise
    again = [r for r in released.rounds if r.select_epsilon == 0 and len(r.clique) == 1][
        len(released.sizes) :
    ]

    def name(c: Sequence[int]) -> str:
        return " × ".join(attrs[a].name for a in c)

    out: list[Any] = [
        _p(
            _(
                "Synthetic table {file}: {n} rows of the columns {cols}. Measured: the one-way marginal of every "
                "column, then {r} marginals chosen one round at a time by the exponential mechanism (the one the "
                "current model got most wrong): {names}. Noise scale per cell from {s0} to {s1} (Gaussian noise, "
                "rho-zCDP)."
            ).format(
                file=fields["file"],
                n=fields["rows"],
                cols=", ".join(a.name for a in attrs),
                r=len(chosen),
                names=", ".join(name(r.clique) for r in chosen) or "-",
                s0=plain(max(r.sigma for r in released.rounds), 4),
                s1=plain(min(r.sigma for r in released.rounds), 4),
            ),
            st["body"],
        ),
        *(
            [
                _p(
                    _(
                        "The one-way marginals were measured twice: the first measurement's own released counts "
                        "said they were mostly noise (the second measurement's scale: {s})."
                    ).format(s=plain(again[0].sigma, 4)),
                    st["body"],
                )
            ]
            if again
            else []
        ),
        _p(
            _(
                "Method: AIM (McKenna, Mullins, Sheldon & Miklau 2022) with Private-PGM's estimation (McKenna, "
                "Sheldon & Miklau 2019): a graphical model is fitted to every released marginal by mirror descent, "
                "and rows are drawn from it clique by clique with systematic rounding. All of this is "
                "post-processing of the released values and a seed kept in the ledger, so the same table can be "
                "written again at no cost."
            ),
            st["small"],
        ),
        _p(
            _(
                "Each measured marginal: the released noisy counts beside the synthetic table's own, as the "
                "total-variation distance between the two (the share of rows that would have to change for them "
                "to agree), and the distance the noise alone would give."
            ),
            st["body"],
        ),
    ]
    rows = marginal_rows(fields, counts)
    table = [[_("Marginal"), _("Cells"), _("Noise scale"), _("Table vs released"), _("Noise alone")]]
    for c, cells, sigma, tvd, floor in rows[:MAX_SHOWN]:
        table.append(
            [name(c), str(cells), plain(sigma, 4), f"{100 * tvd:.1f}%", f"{100 * min(floor, 1.0):.1f}%"]
        )
    if len(rows) > MAX_SHOWN:
        table.append([_("({n} more marginals)").format(n=len(rows) - MAX_SHOWN), "", "", "", ""])
    out.append(_table(table, [60 * mm, 18 * mm, 24 * mm, 30 * mm, 26 * mm], st))
    pairs = unmeasured_pairs(fields)
    if pairs:
        shown = ", ".join(
            _("{pair} about {e}").format(pair=name(p), e=f"{100 * pair_estimate(fields, p):.1f}%")
            for p in pairs[:MAX_SHOWN]
        )
        if len(pairs) > MAX_SHOWN:
            shown += ", " + _("({n} more pairs)").format(n=len(pairs) - MAX_SHOWN)
        out.append(
            _p(
                _(
                    "Pairs not measured ({n}): {pairs}. These figures are estimates, not measurements: a pair the "
                    "rounds left out scored no better than the noise its own measurement would have added, so its "
                    "error is put at about that noise (at the last round's scale). A relation between two columns "
                    "that the budget did not reach can be missing from the table altogether."
                ).format(n=len(pairs), pairs=shown),
                st["body"],
            )
        )
    else:
        out.append(_p(_("Every pair of columns is held by a measured marginal."), st["body"]))
    out.append(
        _p(
            _(
                "Caution: the synthetic rows are made up; no row is a person. The table keeps, with noise, the "
                "marginals listed above and what the model infers from them, nothing more. It cannot show small "
                "groups (their counts are within the noise), outliers or values inside a bin, or any relation that "
                "was not measured. Findings about rare combinations or about columns whose marginal was not "
                "measured can be artefacts: confirm them with a differentially private statistic released for "
                "that purpose."
            ),
            st["body"],
        )
    )
    return out
