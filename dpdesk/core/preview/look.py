"""How a query's released table would look, before anything is spent: one simulated release of the query on a
stand-in table generated from the schema (or a file its user declares public), never on the private table.

A table of values (a histogram, a grouped count, sum or mean) is shown as bars, one per cell, with their 95%
intervals as whiskers and the stand-in's own noiseless values marked; a single value as the spread of many
simulated releases of it (the query's own noise: a mean's, not its count's), with one release's value and its
interval. numpy's generator draws the noise (seeded by the query's name, so that a changed epsilon rescales the
same draws); this module is not on the release path. Not for publication.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.common.shown import plain
from dpdesk.core.dp.aggregates import bound_rows_per_person, exact_statistic
from dpdesk.core.dp.bounding import BoundKey
from dpdesk.core.dp.queries import design_query
from dpdesk.core.loading import Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.preview.simulate import numpy_noise, numpy_pick
from dpdesk.core.release.steps import noisy_rows
from dpdesk.i18n import _

#: Simulated releases drawn of a single value to show its spread.
LOOK_DRAWS = 400
#: At most this many cells are drawn as bars (the caption says how many there are).
MAX_BARS = 30
#: The stand-in's rows when the plan gives no public estimate of the number of rows (the command line's default).
DEFAULT_LOOK_ROWS = 1000


@dataclass(frozen=True)
class Look:
    """One simulated release of the query ``query`` (its rows as release.csv would hold them: ``groups``,
    ``values``, ``lows``, ``highs``), the same release without noise (``truths``: the stand-in's own values) and,
    for a single value, ``draws``: that many more simulated releases of it. ``rows``: the rows of the table it was
    drawn on; ``public``: that table is a file declared public (else a stand-in generated from the schema)."""

    query: str
    epsilon: float
    groups: tuple[str, ...]
    values: tuple[str, ...]
    lows: tuple[str, ...]
    highs: tuple[str, ...]
    truths: tuple[str, ...]
    draws: tuple[str, ...]
    rows: int
    public: bool = False

    @property
    def single(self) -> bool:
        """One value, not a table of values."""
        return self.groups == ("",)

    @property
    def numeric(self) -> bool:
        """The released values are numbers (not a chosen category, as a mode's)."""
        return all(_number(v) is not None for v in (*self.values, *self.draws))

    def half_widths(self) -> list[float | None]:
        """Each cell's 95% interval's half-width (the larger side), None where a cell has no interval."""
        out: list[float | None] = []
        for v, lo, hi in zip(self.values, self.lows, self.highs, strict=True):
            x, a, b = _number(v), _number(lo), _number(hi)
            out.append(None if x is None or a is None or b is None else max(x - a, b - x))
        return out


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def look_seed(query: str) -> int:
    """The preview's seed for a query: its name's CRC-32, so that the same query draws the same noise at every
    epsilon (the bars move with epsilon, not with chance)."""
    return zlib.crc32(query.encode("utf-8"))


def stand_in_rows(plan: Plan) -> int:
    """The stand-in's rows: the plan's public estimate of the number of rows, else :data:`DEFAULT_LOOK_ROWS`."""
    from dpdesk.core.preview.simulate import MAX_STAND_IN_ROWS

    rows = plan.expected_rows if plan.expected_rows is not None else DEFAULT_LOOK_ROWS
    return max(1, min(int(rows), MAX_STAND_IN_ROWS))


def query_look(
    plan: Plan,
    query: str,
    *,
    table: Table,
    public: bool = False,
    draws: int = LOOK_DRAWS,
    seed: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> Look:
    """Simulate the query named ``query`` on ``table`` (a stand-in or a file its user declares public, never the
    private table), uncharged, with numpy's noise: one release, the same without noise, and for a single value
    ``draws`` more releases of it."""
    (spec,) = [q for q in plan.queries if q.name == query]
    design = design_query(spec, plan)
    keep = np.ones(table.n_rows, dtype=bool)
    if plan.privacy_unit.id_column is not None and table.ids is not None:
        keep = bound_rows_per_person(table, plan.privacy_unit.max_rows_per_person, BoundKey.fresh())
    progress.check_cancelled()
    exact = exact_statistic(design, table, keep, plan.columns)
    progress.check_cancelled()
    rng = np.random.default_rng(look_seed(query) if seed is None else seed)
    noise, pick = numpy_noise(rng), numpy_pick(rng)
    released = noisy_rows(design, exact, plan, noise, pick)

    def no_noise(values: list[int], comp: Any) -> list[int]:
        return [int(v) * int(comp.refine) for v in values]

    def best(utilities: list[float], comp: Any) -> int:
        return int(np.argmax(np.asarray(utilities)))

    truths = noisy_rows(design, exact, plan, no_noise, best)
    more: list[str] = []
    if design.cells == ("",):
        for i in range(draws):
            if i % 50 == 0:
                progress.update(i, draws, "simulating")
                progress.check_cancelled()
            more.extend(r.value for r in noisy_rows(design, exact, plan, noise, pick))
    progress.update(draws, draws, "simulating")
    return Look(
        query=spec.name,
        epsilon=spec.epsilon,
        groups=tuple(r.group for r in released),
        values=tuple(r.value for r in released),
        lows=tuple(r.ci_low for r in released),
        highs=tuple(r.ci_high for r in released),
        truths=tuple(r.value for r in truths),
        draws=tuple(more),
        rows=table.n_rows,
        public=public,
    )


def _shown(text: str) -> str:
    x = _number(text)
    return text if x is None else plain(x, 6)


def look_caption(look: Look) -> str:
    """What the chart shows, in plain words with its numbers (plain notation)."""
    where = (
        _("a file you declared public ({rows} rows)").format(rows=f"{look.rows:,}")
        if look.public
        else _("a stand-in table of {rows} rows generated from the schema (no data read)").format(
            rows=f"{look.rows:,}"
        )
    )
    if look.single:
        value, truth = _shown(look.values[0]), _shown(look.truths[0])
        if look.lows[0] and look.highs[0]:
            one = _("{value} (95% interval {low} to {high})").format(
                value=value, low=_shown(look.lows[0]), high=_shown(look.highs[0])
            )
        else:
            one = value
        return _(
            "Simulated on {where}: one release would read {one}; the stand-in's own value is {truth}. The chart "
            "shows {n} simulated releases of it: this query's own noise. Not for publication."
        ).format(where=where, one=one, truth=truth, n=len(look.draws))
    widths = [w for w in look.half_widths() if w is not None]
    shown = (
        _("whiskers its 95% interval (±{w})").format(w=plain(max(widths), 4))
        if widths and max(widths) - min(widths) <= 1e-9 * max(1.0, *widths)
        else _("whiskers its 95% interval")
        if widths
        else _("no interval")
    )
    text = _(
        "Simulated on {where}: each bar is one cell of a release as it would look, {shown}; a black diamond is the "
        "stand-in's own value. Not for publication."
    ).format(where=where, shown=shown)
    if len(look.groups) > MAX_BARS:
        text += " " + _("The first {n} of {total} cells are drawn.").format(
            n=MAX_BARS, total=len(look.groups)
        )
    return text


def look_headline(look: Look) -> str:
    """The look in a few words, and what the chart's marks are (the chart has no key in a narrow place;
    :func:`look_caption` says it all)."""
    if look.single and not look.numeric:
        return _("One simulated release: {value}; the bars: how often each answer came out of {n}.").format(
            value=look.values[0], n=len(look.draws)
        )
    if look.single:
        value = _shown(look.values[0])
        if look.lows[0] and look.highs[0]:
            value = _("{value} (95% interval {low} to {high})").format(
                value=value, low=_shown(look.lows[0]), high=_shown(look.highs[0])
            )
        return _(
            "One simulated release (red): {value}; the stand-in's own value (black line): {truth}; the bars: {n} "
            "more releases."
        ).format(value=value, truth=_shown(look.truths[0]), n=len(look.draws))
    widths = [w for w in look.half_widths() if w is not None]
    if widths and max(widths) - min(widths) <= 1e-9 * max(1.0, *widths):
        text = _("One simulated release of {n} cells, each with its 95% interval (±{w}).").format(
            n=len(look.groups), w=plain(max(widths), 4)
        )
    elif not widths:  # chosen candidates (a quantile by group): no interval
        text = _("One simulated release of {n} cells (chosen candidates, without an interval).").format(
            n=len(look.groups)
        )
    else:
        text = _("One simulated release of {n} cells, with their 95% intervals.").format(n=len(look.groups))
    return text + " " + _("A diamond: the stand-in's own value.")


def look_source(look: Look) -> str:
    """What the look was drawn on, in a few words."""
    if look.public:
        return _("On a file you declared public ({rows} rows). Not for publication.").format(
            rows=f"{look.rows:,}"
        )
    return _("On a stand-in table of {rows} rows from the schema: no data read. Not for publication.").format(
        rows=f"{look.rows:,}"
    )


def look_figure(look: Look, *, narrow: bool = False) -> Any:
    """The chart of a look (a matplotlib ``Figure``): bars with 95% whiskers and the stand-in's values for a table
    of values; the spread of the simulated releases of a single value, with one release and its interval; how
    often each answer is released for a chosen category."""
    from matplotlib.ticker import FuncFormatter

    from dpdesk.core.dp.figures import BAR_BLUE, blank_figure

    fig = blank_figure(3.6, 2.0) if narrow else blank_figure(6.4, 2.6)
    ax = fig.subplots()
    plain_ticks = FuncFormatter(lambda v, _pos: plain(v, 6))  # 2000000, never 1e6 above the axis
    ax.xaxis.set_major_formatter(plain_ticks)
    ax.yaxis.set_major_formatter(plain_ticks)
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    if look.single and look.numeric:
        draws = np.asarray([float(v) for v in look.draws] or [float(look.values[0])])
        heights, _edges, _bars = ax.hist(
            draws, bins=30, color=BAR_BLUE, alpha=0.55, label=_("simulated releases")
        )
        top = (
            float(max(heights)) / 0.55
        )  # the histogram in the lower half; one release above it; the key on top
        ax.set_ylim(0, top)
        truth = float(look.truths[0])
        ax.axvline(truth, color="#222222", lw=1.5, label=_("stand-in's value"))
        value = float(look.values[0])
        if look.lows[0] and look.highs[0]:
            lo, hi = float(look.lows[0]), float(look.highs[0])
            ax.errorbar(
                [value],
                [top * 0.68],
                xerr=[[value - lo], [hi - value]],
                fmt="o",
                color="#c0392b",
                capsize=3,
                lw=1.2,
                ms=4,
                label=_("one release, 95% interval"),
            )
            left, right = min(lo, float(draws.min())), max(hi, float(draws.max()))
            pad = 0.04 * max(right - left, 1e-9)
            ax.set_xlim(left - pad, right + pad)
        else:
            ax.plot([value], [top * 0.68], "o", color="#c0392b", ms=4, label=_("one release"))
        ax.set_yticks([])
        ax.set_xlabel(_("released value"), fontsize=8)
        if not narrow:  # in a narrow place the caption says what the marks are
            ax.legend(fontsize=6, loc="upper center", ncols=3, frameon=False)
        ax.set_title(look.query, fontsize=9)  # what the chart is: the caption beside it
        return fig
    if look.single:  # a chosen category: how often each is released
        counts = Counter(look.draws or look.values)
        labels = sorted(counts, key=lambda k: (-counts[k], k))[:MAX_BARS]
        x = np.arange(len(labels))
        ax.bar(
            x, [100.0 * counts[k] / max(1, sum(counts.values())) for k in labels], color=BAR_BLUE, alpha=0.8
        )
        ax.set_xticks(x)
        tilt = len(labels) > 4 or max((len(k) for k in labels), default=0) > 8
        ax.set_xticklabels(
            _short(labels), rotation=30 if tilt else 0, ha="right" if tilt else "center", fontsize=7
        )
        ax.set_ylabel(_("% of simulated releases"), fontsize=8)
        ax.set_title(look.query, fontsize=9)
        return fig
    n = min(len(look.groups), MAX_BARS)
    x = np.arange(n)
    numeric = look.numeric
    vals = np.asarray([float(v) if numeric else 0.0 for v in look.values[:n]])
    ax.bar(x, vals, color=BAR_BLUE, alpha=0.8, label=_("one simulated release"))
    if numeric and all(look.lows[:n]) and all(look.highs[:n]):
        lo = vals - np.asarray([float(v) for v in look.lows[:n]])
        hi = np.asarray([float(v) for v in look.highs[:n]]) - vals
        ax.errorbar(
            x, vals, yerr=[lo, hi], fmt="none", ecolor="#333333", capsize=3, lw=1, label=_("95% interval")
        )
    truths = [_number(t) for t in look.truths[:n]]
    if all(t is not None for t in truths):
        ax.plot(x, truths, "D", color="#111111", ms=3.5, ls="none", label=_("stand-in's value"))
    ax.set_xticks(x)
    long = n > 4 or max((len(g) for g in look.groups[:n]), default=0) > 8
    ax.set_xticklabels(
        _short(list(look.groups[:n])),
        rotation=30 if long else 0,
        ha="right" if long else "center",
        fontsize=7,
    )
    highest = max([*vals, *(float(v) for v in look.highs[:n] if _number(v) is not None), 0.0])
    if highest > 0:
        ax.set_ylim(top=highest * 1.22)  # room for the key above the bars
    if not narrow:
        ax.legend(fontsize=6, loc="upper center", ncols=3, frameon=False)
    ax.set_title(look.query, fontsize=9)
    return fig


def _short(labels: list[str]) -> list[str]:
    return [s if len(s) <= 14 else s[:13] + "…" for s in labels]
