"""The Results tab's chart of a synthetic table: each column's one-way marginal in the table beside the released
noisy one (both public: the ledger's noisy marginals and the table regenerated from them)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpdesk.i18n import _
from dpdesk.services.synthetic import Marginal

#: Bars of the released noisy marginal and of the synthetic table's own.
RELEASED_COLOUR = "#2a6fbb"
SYNTHETIC_COLOUR = "#e08a2c"
#: At most this many levels per column are drawn (the rest are named in the title).
MAX_LEVELS_DRAWN = 24

_FONT_DONE = False


def _use_cjk_font() -> None:
    """Let Chinese labels render: the bundled CJK font after matplotlib's default (once per process)."""
    global _FONT_DONE  # noqa: PLW0603 - fonts are registered once per process
    if _FONT_DONE:
        return
    _FONT_DONE = True
    from matplotlib import font_manager, rcParams

    from dpdesk.resources import resource

    names = []
    folder = resource("fonts")
    for f in sorted(folder.glob("*.tt[fc]")) if folder.is_dir() else ():
        try:
            font_manager.fontManager.addfont(str(f))
            names.append(font_manager.FontProperties(fname=str(f)).get_name())
        except (OSError, RuntimeError):  # pragma: no cover - a damaged font file
            continue
    rcParams["font.family"] = ["DejaVu Sans", *(n for n in names if n != "DejaVu Sans")]
    rcParams["axes.unicode_minus"] = False


def marginals_figure(marginals: Sequence[Marginal], columns: int = 2) -> Any:
    """One panel per column: the released noisy count of each level beside the synthetic table's count."""
    import numpy as np
    from matplotlib.figure import Figure

    _use_cjk_font()
    cols = max(1, min(columns, len(marginals)))
    rows = max(1, math.ceil(len(marginals) / cols))
    fig = Figure(figsize=(3.6 * cols, 1.9 * rows), dpi=100, layout="constrained")
    for i, m in enumerate(marginals):
        ax = fig.add_subplot(rows, cols, i + 1)
        n = min(len(m.labels), MAX_LEVELS_DRAWN)
        x = np.arange(n)
        w = 0.4
        ax.bar(x - w / 2, m.released[:n], w, color=RELEASED_COLOUR, label=_("released (noisy)"))
        ax.bar(x + w / 2, m.synthetic[:n], w, color=SYNTHETIC_COLOUR, label=_("synthetic table"))
        long = n > 4 or max((len(s) for s in m.labels[:n]), default=0) > 8
        ax.set_xticks(x)
        ax.set_xticklabels(
            [s if len(s) <= 14 else s[:13] + "…" for s in m.labels[:n]],
            rotation=35 if long else 0,
            ha="right" if long else "center",
            fontsize=6,
        )
        title = m.column
        if len(m.labels) > n:
            title += " " + _("(first {n} of {total} levels)").format(n=n, total=len(m.labels))
        ax.set_title(title, fontsize=8)
        ax.tick_params(axis="y", labelsize=6)
        ax.grid(True, axis="y", alpha=0.3)
        if i == 0:
            ax.legend(fontsize=6, loc="best")
    return fig
