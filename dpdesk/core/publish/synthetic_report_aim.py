"""The release report's section on an adaptive synthetic table (AIM): what each round measured, the released noisy
counts of every measured marginal beside the synthetic table's own, an estimate of the error of the marginals not
measured, and what a synthetic table cannot show.

Reads only the spend entry's record (the released rounds and the seed) and the table drawn from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpdesk.core.common.shown import plain
from dpdesk.i18n import _


def adaptive_section(
    fields: dict[str, Any], attrs: Sequence[Any], st: Any, counts: Sequence[Sequence[int]] | None
) -> list[Any]:
    """Flowables for one adaptive synthetic table."""
    from dpdesk.core.dp.synthetic import aim
    from dpdesk.core.publish.pdftext import _p

    released = aim.released_from_dict(fields)
    chosen = [r for r in released.rounds if r.select_epsilon > 0]
    names = ", ".join(" × ".join(attrs[a].name for a in r.clique) for r in chosen)
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
                names=names or "-",
                s0=plain(max(r.sigma for r in released.rounds), 4),
                s1=plain(min(r.sigma for r in released.rounds), 4),
            ),
            st["body"],
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
    ]
    return out
