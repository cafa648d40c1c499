"""matplotlib figures shared by the desktop app and the reports (``Figure`` objects, never pyplot).

matplotlib is imported inside the functions: it is heavy and ``import dpdesk`` must stay light.
Plots use a CJK-capable font when one is available so that Chinese labels render.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpdesk.core import mechanisms as mech
from dpdesk.core.queries import Component, QueryDesign
from dpdesk.i18n import _


def _figure(width: float = 5.0, height: float = 3.2) -> Any:
    from matplotlib.figure import Figure

    _use_cjk_font()
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


_FONT_DONE = False


def _use_cjk_font() -> None:
    """Register the bundled CJK font (if shipped) and put it after the default sans-serif font."""
    global _FONT_DONE  # noqa: PLW0603 - fonts are registered once per process
    if _FONT_DONE:
        return
    _FONT_DONE = True
    from matplotlib import font_manager, rcParams

    from dpdesk.resources import resource

    folder = resource("fonts")
    names = []
    if folder.is_dir():
        for f in sorted(folder.glob("*.tt[fc]")):
            try:
                font_manager.fontManager.addfont(str(f))
                names.append(font_manager.FontProperties(fname=str(f)).get_name())
            except (OSError, RuntimeError):  # pragma: no cover - a damaged font file
                continue
    # matplotlib (>= 3.6) falls back glyph by glyph along the families listed in font.family
    rcParams["font.family"] = ["DejaVu Sans", *names]
    rcParams["axes.unicode_minus"] = False


def noise_figure(
    comp: Component, epsilon_range: Sequence[float] | None = None, *, stacked: bool = False
) -> Any:
    """Density of a component's noise with its 95% bound, and its 95% error against epsilon (side by side,
    or ``stacked`` one above the other for a narrow panel)."""
    import numpy as np

    fig = _figure(3.6, 5.0) if stacked else _figure(6.4, 2.8)
    ax, ax2 = fig.subplots(2, 1) if stacked else fig.subplots(1, 2)
    scale = comp.scale
    if comp.mechanism == "laplace":
        bound = mech.laplace_bound(scale)
        x = np.linspace(-2.2 * bound, 2.2 * bound, 401)
        y = np.exp(-np.abs(x) / scale) / (2 * scale)
        title = _("Laplace noise, b = {b}").format(b=f"{scale:.4g}")
    else:
        bound = mech.gaussian_bound(scale)
        x = np.linspace(-2.2 * bound, 2.2 * bound, 401)
        y = np.exp(-(x**2) / (2 * scale**2)) / (scale * math.sqrt(2 * math.pi))
        title = _("Gaussian noise, sigma = {s}").format(s=f"{scale:.4g}")
    ax.plot(x, y, color="#2a6fbb")
    inside = np.abs(x) <= bound
    ax.fill_between(x[inside], y[inside], color="#2a6fbb", alpha=0.25, label=_("95% of draws"))
    ax.axvline(-bound, color="#c0392b", lw=1, ls="--")
    ax.axvline(bound, color="#c0392b", lw=1, ls="--")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(_("noise added to the true value"), fontsize=8)
    ax.set_yticks([])
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="upper right")

    eps0 = comp.epsilon
    grid = np.asarray(epsilon_range or np.geomspace(eps0 / 10, eps0 * 10, 60))
    if comp.mechanism == "laplace":
        err = np.array([mech.laplace_bound(mech.laplace_scale(comp.l1, e)) for e in grid])
    else:
        err = np.array([mech.gaussian_bound(scale * eps0 / e) for e in grid])  # sigma ~ 1/eps
    ax2.loglog(grid, err, color="#555")
    ax2.plot([eps0], [bound], "o", color="#c0392b")
    ax2.annotate(f"±{bound:.3g}", (eps0, bound), textcoords="offset points", xytext=(5, 5), fontsize=7)
    ax2.set_title(_("95% error bound against epsilon"), fontsize=9)
    ax2.set_xlabel(_("epsilon"), fontsize=8)
    ax2.tick_params(labelsize=7)
    ax2.grid(True, which="both", alpha=0.3)
    return fig


def selection_figure(design: QueryDesign) -> Any:
    """Exponential mechanism: probability that the better of two candidates is chosen, by utility gap."""
    import numpy as np

    comp = design.components[0]
    fig = _figure(6.4, 2.8)
    ax = fig.subplots()
    g95 = mech.em_gap_for(0.95, comp.epsilon, comp.l1)
    gaps = np.linspace(0, 2.5 * g95, 200)
    p = 1 / (1 + np.exp(-comp.epsilon * gaps / (2 * comp.l1)))
    ax.plot(gaps, p, color="#2a6fbb")
    ax.axhline(0.95, color="#c0392b", lw=1, ls="--")
    ax.axvline(g95, color="#c0392b", lw=1, ls="--")
    ax.annotate(
        _("95% at a gap of {g}").format(g=f"{g95:.3g}"),
        (g95, 0.95),
        textcoords="offset points",
        xytext=(6, -14),
        fontsize=7,
    )
    ax.set_ylim(0.45, 1.01)
    ax.set_xlabel(_("utility gap between the best and another candidate"), fontsize=8)
    ax.set_ylabel(_("P(best is chosen)"), fontsize=8)
    ax.set_title(_("Exponential mechanism, epsilon = {e}").format(e=f"{comp.epsilon:g}"), fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    return fig


def results_figure(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    lows: Sequence[float] | None = None,
    highs: Sequence[float] | None = None,
) -> Any:
    """Bar chart of a histogram or grouped statistic, with 95% intervals as error bars."""
    import numpy as np

    fig = _figure(6.4, 3.0)
    ax = fig.subplots()
    x = np.arange(len(labels))
    vals = np.asarray(values, dtype=float)
    ax.bar(x, vals, color="#2a6fbb", alpha=0.8)
    if lows is not None and highs is not None:
        lo = vals - np.asarray(lows, dtype=float)
        hi = np.asarray(highs, dtype=float) - vals
        ax.errorbar(x, vals, yerr=[lo, hi], fmt="none", ecolor="#333", capsize=3, lw=1)
    ax.set_xticks(x)
    ax.set_xticklabels(
        labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center", fontsize=7
    )
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def budget_figure(
    costs: Sequence[tuple[str, float]], total: float, earlier: float, remaining: float, method: str
) -> Any:
    """Spending per query of one release, earlier spending and what remains, against the total budget.

    Under sequential accounting the queries' epsilons add up to the release's cost; under the other
    methods the release costs its composed total, shown with the remaining budget.
    """
    fig = _figure(6.4, 2.6)
    ax = fig.subplots()
    names = [_("earlier releases")] + [n for n, _e in costs] + [_("remaining")]
    spent_now = sum(e for _n, e in costs)
    values = [earlier] + [e for _n, e in costs] + [remaining]
    colours = ["#8a8f96"] + ["#2a6fbb"] * len(costs) + ["#cfd8e3"]
    y = list(range(len(names)))[::-1]
    ax.barh(y, values, color=colours)
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7)
    for yi, v in zip(y, values, strict=True):
        ax.annotate(f"{v:.4g}", (v, yi), textcoords="offset points", xytext=(3, -3), fontsize=7)
    ax.set_xlabel(_("epsilon (total budget {t})").format(t=f"{total:g}"), fontsize=8)
    ax.set_xlim(0, max(total, earlier + spent_now) * 1.15)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(_("Budget: this release's queries ({m})").format(m=method), fontsize=9)
    return fig
