"""The charts of a PDF report as vector graphics (drawn with reportlab's canvas operators, no image): a :class:`BarChart` of
``dpdesk.core.dp.figures`` drawn the way matplotlib draws it in the app (same colours, sizes in points, error
bars, rotated labels, grid), so that the report looks like before at a fraction of the cost and size.

Text is set in the report's fonts (DejaVu Sans, Chinese runs in the bundled CJK font): the fonts must be
registered first (``dpdesk.core.publish.pdftext``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpdesk.core.common.shown import plain
from dpdesk.core.dp.figures import BarChart, nice_ticks

# matplotlib's defaults, in points
_PAD = 4.0  # figure edge (constrained layout)
_TICK = 3.5  # tick length
_TICK_PAD = 3.5  # tick to label
_TITLE_PAD = 6.0
_TICK_FONT = 7.0
_TITLE_FONT = 9.0
_LABEL_FONT = 8.0
_MARGIN = 0.05  # axes margins (fraction of the data span)
_GRID = "#e7e7e7"  # matplotlib's grid colour #b0b0b0 at alpha 0.3 over white


def _blend(hex_colour: str, alpha: float) -> Any:
    """``hex_colour`` at ``alpha`` over white, as an opaque reportlab colour (what the app shows)."""
    from reportlab.lib import colors

    c = colors.HexColor(hex_colour)
    return colors.Color(*(alpha * v + (1.0 - alpha) for v in (c.red, c.green, c.blue)))


def _width(text: str, size: float) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from dpdesk.core.publish.pdftext import text_runs

    return float(sum(stringWidth(chunk, font, size) for font, chunk in text_runs(text)))


@dataclass(frozen=True)
class _Text:
    """A line of text in runs of (font, characters) starting at x0 (after the anchor) from (x, y), turned by
    ``angle`` degrees around (x, y)."""

    runs: tuple[tuple[str, str], ...]
    x: float
    y: float
    x0: float
    size: float
    angle: float


@dataclass(frozen=True)
class _Stroke:
    """Straight segments of one colour and width."""

    colour: Any
    width: float
    segments: tuple[tuple[float, float, float, float], ...]


@dataclass(frozen=True)
class _Fill:
    """Filled rectangles (x, y, width, height) of one colour."""

    colour: Any
    rects: tuple[tuple[float, float, float, float], ...]


_Op = _Text | _Stroke | _Fill


def _text(text: str, x: float, y: float, size: float, *, anchor: str = "start", angle: float = 0.0) -> _Op:
    """A line of text (its font runs); ``anchor`` start/middle/end at (x, y) on the baseline, turned by
    ``angle`` degrees around that point."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from dpdesk.core.publish.pdftext import text_runs

    runs = tuple(text_runs(text.replace("\n", " ")))
    total = sum(stringWidth(chunk, font, size) for font, chunk in runs) if anchor != "start" else 0.0
    x0 = {"start": 0.0, "middle": -total / 2, "end": -total}[anchor]
    return _Text(runs, x, y, x0, size, angle)


class _Lines:
    """Straight segments of one colour and width, drawn as one path (fewer operators, a smaller PDF)."""

    def __init__(self) -> None:
        self.segments: list[tuple[float, float, float, float]] = []

    def add(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.segments.append((x0, y0, x1, y1))

    def shape(self, colour: Any, width: float) -> _Op:
        return _Stroke(colour, width, tuple(self.segments))


def _rects(rects: list[tuple[float, float, float, float]], colour: Any) -> _Op:
    """Filled rectangles (x, y, width, height) of one colour as one path."""
    return _Fill(colour, tuple(rects))


def _frame(x0: float, y0: float, x1: float, y1: float) -> _Op:
    from reportlab.lib import colors

    return _Stroke(
        colors.black, 0.8, ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0))
    )


def _replay(canvas: Any, ops: list[_Op]) -> None:
    """Draw the operations on a reportlab canvas: paths for lines and bars, one text object for the text."""
    text = canvas.beginText()
    font: tuple[str, float] | None = None
    for op in ops:
        if isinstance(op, _Stroke):
            path = canvas.beginPath()
            for x0, y0, x1, y1 in op.segments:
                path.moveTo(x0, y0)
                path.lineTo(x1, y1)
            canvas.setStrokeColor(op.colour)
            canvas.setLineWidth(op.width)
            canvas.drawPath(path, stroke=1, fill=0)
        elif isinstance(op, _Fill):
            path = canvas.beginPath()
            for x, y, w, h in op.rects:
                path.rect(x, y, w, h)
            canvas.setFillColor(op.colour)
            canvas.drawPath(path, stroke=0, fill=1)
        else:
            c, s = (
                (math.cos(math.radians(op.angle)), math.sin(math.radians(op.angle)))
                if op.angle
                else (1.0, 0.0)
            )
            text.setTextTransform(c, s, -s, c, op.x, op.y)
            text.moveCursor(op.x0, 0)
            for f, chunk in op.runs:
                if font != (f, op.size):
                    font = (f, op.size)
                    text.setFont(f, op.size)
                text.textOut(chunk)
    canvas.setFillColorRGB(0, 0, 0)
    canvas.drawText(text)


def _label(v: float, step: float) -> str:
    """A tick label as matplotlib's default formatter writes it (no trailing zeros)."""
    if abs(v) < 1e-12 * max(1.0, step):
        return "0"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    if step >= 1 and float(step).is_integer():
        return f"{v:.0f}"
    return f"{v:.{decimals + 1}f}".rstrip("0").rstrip(".")


def _limits(lo: float, hi: float, sticky_zero: bool) -> tuple[float, float]:
    if hi <= lo:  # one value (e.g. all zero): a small range around it, as matplotlib draws it
        pad = 0.05 * abs(lo) or 0.055
        return lo - pad, hi + pad
    span = hi - lo
    low = lo if (sticky_zero and lo == 0.0) else lo - _MARGIN * span
    high = hi if (sticky_zero and hi == 0.0) else hi + _MARGIN * span
    return low, high


def drawing(chart: BarChart, width: float) -> Any:
    """The chart as a flowable ``width`` points wide (scaled from the app's size) that draws itself with the
    canvas's own vector operators: paths, rectangles and text, no image."""
    from reportlab.platypus import Flowable

    fig_w, fig_h = chart.size[0] * 72.0, chart.size[1] * 72.0
    scale = width / fig_w
    ops = _horizontal(chart, fig_w, fig_h) if chart.horizontal else _vertical(chart, fig_w, fig_h)

    class _Chart(Flowable):  # type: ignore[misc]  # reportlab is untyped
        def __init__(self) -> None:
            super().__init__()
            self.width, self.height = width, fig_h * scale
            self.hAlign = "CENTER"  # as the images were

        def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
            return self.width, self.height

        def draw(self) -> None:
            self.canv.saveState()
            self.canv.scale(scale, scale)
            _replay(self.canv, ops)
            self.canv.restoreState()

    return _Chart()


def _ticks_and_labels(lo: float, hi: float) -> tuple[list[float], list[str]]:
    ticks = [t for t in nice_ticks(lo, hi) if lo - 1e-9 * abs(hi - lo) <= t <= hi + 1e-9 * abs(hi - lo)]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    return ticks, [_label(t, step) for t in ticks]


def _vertical(chart: BarChart, fig_w: float, fig_h: float) -> list[_Op]:
    """Vertical bars with error bars (the results chart)."""
    from reportlab.lib import colors

    n = len(chart.values)
    vals = list(chart.values)
    has_err = chart.lows is not None and chart.highs is not None
    lows = list(chart.lows) if chart.lows is not None and has_err else vals
    highs = list(chart.highs) if chart.highs is not None and has_err else vals
    finite = [v for v in (*vals, *lows, *highs) if math.isfinite(v)] or [0.0]
    y_lo, y_hi = _limits(min(0.0, *finite), max(0.0, *finite), sticky_zero=True)
    ticks, tick_labels = _ticks_and_labels(y_lo, y_hi)
    rotate = n > 4
    # margins: title above, the value labels to the left, the category labels below (turned 30 degrees)
    top = fig_h - _PAD - _TITLE_FONT * 1.2 - _TITLE_PAD
    left = _PAD + max((_width(t, _TICK_FONT) for t in tick_labels), default=0.0) + _TICK + _TICK_PAD
    widest = max((_width(lab, _TICK_FONT) for lab in chart.labels), default=0.0)
    below = (widest * 0.5 + _TICK_FONT * 0.87) if rotate else _TICK_FONT * 1.2
    bottom = _PAD + below + _TICK + _TICK_PAD
    bottom = min(bottom, fig_h * 0.6)
    right = fig_w - _PAD
    x_span = max(n - 0.2, 0.8)
    x_lo, x_hi = -0.4 - _MARGIN * x_span, n - 1 + 0.4 + _MARGIN * x_span

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * (right - left)

    def py(y: float) -> float:
        return bottom + (y - y_lo) / (y_hi - y_lo) * (top - bottom)

    grid = _Lines()
    for t in ticks:
        grid.add(left, py(t), right, py(t))
    out: list[_Op] = [grid.shape(colors.HexColor(_GRID), 0.8)]
    bars = []
    for i, v in enumerate(vals):
        if math.isfinite(v):
            y0, y1 = sorted((py(0.0), py(v)))
            bars.append((px(i - 0.4), y0, px(i + 0.4) - px(i - 0.4), y1 - y0))
    out.append(_rects(bars, _blend(chart.colours[0] if chart.colours else "#2a6fbb", chart.alpha)))
    if has_err:
        errors = _Lines()
        for i, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
            if math.isfinite(lo) and math.isfinite(hi):
                x = px(i)
                errors.add(x, py(lo), x, py(hi))
                errors.add(x - 3, py(lo), x + 3, py(lo))
                errors.add(x - 3, py(hi), x + 3, py(hi))
        out.append(errors.shape(colors.HexColor("#333333"), 1.0))
    out.append(_frame(left, bottom, right, top))
    marks = _Lines()
    for t, lab in zip(ticks, tick_labels, strict=True):
        marks.add(left - _TICK, py(t), left, py(t))
        out.append(_text(lab, left - _TICK - _TICK_PAD, py(t) - _TICK_FONT * 0.35, _TICK_FONT, anchor="end"))
    for i, lab in enumerate(chart.labels):
        x = px(i)
        marks.add(x, bottom - _TICK, x, bottom)
        y = bottom - _TICK - _TICK_PAD
        if rotate:
            out.append(_text(lab, x + 2, y - _TICK_FONT * 0.75, _TICK_FONT, anchor="end", angle=30))
        else:
            out.append(_text(lab, x, y - _TICK_FONT * 0.8, _TICK_FONT, anchor="middle"))
    out.append(marks.shape(colors.black, 0.8))
    out.append(_text(chart.title, (left + right) / 2, top + _TITLE_PAD, _TITLE_FONT, anchor="middle"))
    return out


def _horizontal(chart: BarChart, fig_w: float, fig_h: float) -> list[_Op]:
    """Horizontal bars annotated with their values (the budget chart)."""
    from reportlab.lib import colors

    n = len(chart.values)
    finite = [v for v in chart.values if math.isfinite(v)] or [0.0]
    x_lo = 0.0
    x_hi = chart.value_max if chart.value_max is not None else _limits(0.0, max(0.0, *finite), True)[1]
    x_hi = x_hi if x_hi > x_lo else 1.0
    ticks, tick_labels = _ticks_and_labels(x_lo, x_hi)
    top = fig_h - _PAD - _TITLE_FONT * 1.2 - _TITLE_PAD
    left = _PAD + max((_width(lab, _TICK_FONT) for lab in chart.labels), default=0.0) + _TICK + _TICK_PAD
    left = min(left, fig_w * 0.5)
    bottom = _PAD + (_LABEL_FONT * 1.2 + _TICK_PAD if chart.axis_label else 0.0) + _TICK_FONT * 1.2
    bottom += _TICK + _TICK_PAD
    right = fig_w - _PAD
    y_span = max(n - 0.2, 0.8)
    y_lo, y_hi = -0.4 - _MARGIN * y_span, n - 1 + 0.4 + _MARGIN * y_span

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * (right - left)

    def py(y: float) -> float:
        return bottom + (y - y_lo) / (y_hi - y_lo) * (top - bottom)

    grid = _Lines()
    for t in ticks:
        grid.add(px(t), bottom, px(t), top)
    out: list[_Op] = [grid.shape(colors.HexColor(_GRID), 0.8)]
    by_colour: dict[str, list[tuple[float, float, float, float]]] = {}
    marks = _Lines()
    texts: list[Any] = []
    for i, (lab, v, colour) in enumerate(zip(chart.labels, chart.values, chart.colours, strict=True)):
        y = float(n - 1 - i)  # the first label at the top
        if math.isfinite(v):
            by_colour.setdefault(colour, []).append(
                (px(0.0), py(y - 0.4), max(0.0, px(v) - px(0.0)), py(y + 0.4) - py(y - 0.4))
            )
            texts.append(_text(plain(v, 4), px(v) + 3, py(y) - 3, _TICK_FONT))
        marks.add(left - _TICK, py(y), left, py(y))
        texts.append(
            _text(lab, left - _TICK - _TICK_PAD, py(y) - _TICK_FONT * 0.35, _TICK_FONT, anchor="end")
        )
    out.extend(_rects(rects, colors.HexColor(colour)) for colour, rects in by_colour.items())
    out.extend(texts)
    out.append(_frame(left, bottom, right, top))
    for t, lab in zip(ticks, tick_labels, strict=True):
        marks.add(px(t), bottom - _TICK, px(t), bottom)
        out.append(
            _text(lab, px(t), bottom - _TICK - _TICK_PAD - _TICK_FONT * 0.8, _TICK_FONT, anchor="middle")
        )
    out.append(marks.shape(colors.black, 0.8))
    if chart.axis_label:
        y_label = bottom - _TICK - _TICK_PAD - _TICK_FONT * 1.2 - _TICK_PAD - _LABEL_FONT * 0.8
        out.append(_text(chart.axis_label, (left + right) / 2, y_label, _LABEL_FONT, anchor="middle"))
    out.append(_text(chart.title, (left + right) / 2, top + _TITLE_PAD, _TITLE_FONT, anchor="middle"))
    return out
