"""matplotlib figures shared by the desktop app and the reports (``Figure`` objects, never pyplot).

matplotlib is imported inside the functions: it is heavy and ``import dpdesk`` must stay light.
Plots use a CJK-capable font when one is available so that Chinese labels render.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpdesk.core.common.shown import plain
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp.queries_base import Component, QueryDesign
from dpdesk.i18n import _


def _figure(width: float = 5.0, height: float = 3.2) -> Any:
    from matplotlib.figure import Figure

    _use_cjk_font()
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def blank_figure(width: float, height: float) -> Any:
    """An empty figure (inches) as the app's charts are made: the CJK font registered, a constrained layout."""
    return _figure(width, height)


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
        title = _("Laplace noise, b = {b}").format(b=plain(scale, 4))
    else:
        bound = mech.gaussian_bound(scale)
        x = np.linspace(-2.2 * bound, 2.2 * bound, 401)
        y = np.exp(-(x**2) / (2 * scale**2)) / (scale * math.sqrt(2 * math.pi))
        title = _("Gaussian noise, sigma = {s}").format(s=plain(scale, 4))
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
    ax2.annotate("±" + plain(bound, 3), (eps0, bound), textcoords="offset points", xytext=(5, 5), fontsize=7)
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
        _("95% at a gap of {g}").format(g=plain(g95, 3)),
        (g95, 0.95),
        textcoords="offset points",
        xytext=(6, -14),
        fontsize=7,
    )
    ax.set_ylim(0.45, 1.01)
    ax.set_xlabel(_("utility gap between the best and another candidate"), fontsize=8)
    ax.set_ylabel(_("P(best is chosen)"), fontsize=8)
    ax.set_title(_("Exponential mechanism, epsilon = {e}").format(e=plain(comp.epsilon, 4)), fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    return fig


@dataclass(frozen=True)
class BarChart:
    """A bar chart computed once from public values (the released rows or the ledger's costs), drawn by
    matplotlib in the app and by reportlab's vector graphics in the PDF report (``dpdesk.core.publish.pdf_charts``).

    ``horizontal``: bars along the x axis, one row per label from the top (the budget chart), each annotated
    with its value; else vertical bars with 95% intervals ``lows``/``highs`` as error bars (the results chart).
    """

    title: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    colours: tuple[str, ...]
    lows: tuple[float, ...] | None = None
    highs: tuple[float, ...] | None = None
    horizontal: bool = False
    alpha: float = 1.0
    axis_label: str = ""
    #: the value axis's upper limit (None: from the data)
    value_max: float | None = None
    #: the figure's size in inches, as the app shows it
    size: tuple[float, float] = (6.4, 3.0)


BAR_BLUE = "#2a6fbb"
ERROR_GREY = "#333333"
#: more queries than this: the budget chart shows this release as one bar (the summary table lists each query)
BUDGET_BARS_MAX = 25


def results_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    lows: Sequence[float] | None = None,
    highs: Sequence[float] | None = None,
) -> BarChart:
    """The results chart of a histogram or grouped statistic, with 95% intervals as error bars."""
    both = lows is not None and highs is not None
    return BarChart(
        title=title,
        labels=tuple(labels),
        values=tuple(float(v) for v in values),
        colours=(BAR_BLUE,) * len(labels),
        lows=tuple(float(v) for v in lows) if both and lows is not None else None,
        highs=tuple(float(v) for v in highs) if both and highs is not None else None,
        alpha=0.8,
        size=(6.4, 3.0),
    )


def results_figure(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    lows: Sequence[float] | None = None,
    highs: Sequence[float] | None = None,
) -> Any:
    """Bar chart of a histogram or grouped statistic, with 95% intervals as error bars."""
    return _results_figure(results_chart(title, labels, values, lows, highs))


def _results_figure(chart: BarChart) -> Any:
    import numpy as np

    fig = _figure(*chart.size)
    ax = fig.subplots()
    labels = chart.labels
    x = np.arange(len(labels))
    vals = np.asarray(chart.values, dtype=float)
    ax.bar(x, vals, color=chart.colours[0] if chart.colours else BAR_BLUE, alpha=chart.alpha)
    if chart.lows is not None and chart.highs is not None:
        lo = vals - np.asarray(chart.lows, dtype=float)
        hi = np.asarray(chart.highs, dtype=float) - vals
        ax.errorbar(x, vals, yerr=[lo, hi], fmt="none", ecolor="#333", capsize=3, lw=1)
    ax.set_xticks(x)
    ax.set_xticklabels(
        labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center", fontsize=7
    )
    ax.set_title(chart.title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def budget_chart(
    costs: Sequence[tuple[str, float]], total: float, earlier: float, remaining: float, method: str
) -> BarChart:
    """Spending per query of one release, earlier spending and what remains, against the total budget; more
    than :data:`BUDGET_BARS_MAX` queries are shown as one bar (their sum)."""
    spent_now = sum(e for _n, e in costs)
    if len(costs) > BUDGET_BARS_MAX:
        costs = [(_("this release ({n} queries)").format(n=len(costs)), spent_now)]
    names = [_("earlier releases")] + [n for n, _e in costs] + [_("remaining")]
    values = [earlier] + [e for _n, e in costs] + [remaining]
    colours = ["#8a8f96"] + [BAR_BLUE] * len(costs) + ["#cfd8e3"]
    return BarChart(
        title=_("Budget: this release's queries ({m})").format(m=method),
        labels=tuple(names),
        values=tuple(float(v) for v in values),
        colours=tuple(colours),
        horizontal=True,
        axis_label=_("epsilon (total budget {t})").format(t=plain(total, 4)),
        value_max=max(total, earlier + spent_now) * 1.15,
        size=(6.4, 2.6),
    )


def budget_figure(
    costs: Sequence[tuple[str, float]], total: float, earlier: float, remaining: float, method: str
) -> Any:
    """Spending per query of one release, earlier spending and what remains, against the total budget.

    Under sequential accounting the queries' epsilons add up to the release's cost; under the other
    methods the release costs its composed total, shown with the remaining budget.
    """
    chart = budget_chart(costs, total, earlier, remaining, method)
    fig = _figure(*chart.size)
    ax = fig.subplots()
    y = list(range(len(chart.labels)))[::-1]
    ax.barh(y, chart.values, color=chart.colours)
    ax.set_yticks(y)
    ax.set_yticklabels(chart.labels, fontsize=7)
    for yi, v in zip(y, chart.values, strict=True):
        ax.annotate(plain(v, 4), (v, yi), textcoords="offset points", xytext=(3, -3), fontsize=7)
    ax.set_xlabel(chart.axis_label, fontsize=8)
    ax.set_xlim(0, chart.value_max)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(chart.title, fontsize=9)
    return fig


def nice_ticks(lo: float, hi: float, most: int = 8) -> list[float]:
    """Round tick positions covering [lo, hi] (steps of 1, 2, 2.5 or 5 times a power of ten, at most ``most``
    ticks inside the range, as matplotlib's default locator chooses them)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, most - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next((m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw), 10.0 * power)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]
