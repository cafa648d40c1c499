"""A plan's total epsilon placed on a log scale of real deployments' published budgets.

A narrow widget (it fits beside the budget meter): a vertical log axis of epsilon, each deployment of
``dpdesk.core.dp.deployments`` as a tick with its short label on the right, and the plan's total as a red
marker with its value on the left. The tooltip gives every deployment's unit of privacy, period and
source, and says they are not directly comparable.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from dpdesk.core.common import shown as numfmt
from dpdesk.core.dp import deployments as dep
from dpdesk.i18n import _

LOW, HIGH = 0.01, 100.0  # the axis, widened to include the plan's epsilon


class EpsilonScale(QWidget):
    """Log scale of published epsilons with the plan's total marked; ``set_epsilon`` moves the marker."""

    def __init__(self, parent: QWidget | None = None, epsilon: float | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("epsilon_scale")
        self._epsilon: float | None = None
        self._items = dep.deployments()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setMinimumSize(200, 200)
        self.set_epsilon(epsilon)

    # --- public -----------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return QSize(260, 300)

    def epsilon(self) -> float | None:
        """The epsilon marked (None: none)."""
        return self._epsilon

    def set_epsilon(self, epsilon: float | None) -> None:
        """Mark the plan's total epsilon (None or a non-positive value removes the marker)."""
        if epsilon is not None and (not math.isfinite(epsilon) or epsilon <= 0):
            epsilon = None
        self._epsilon = epsilon
        lines = [dep.label(d) for d in reversed(self._items)]
        head = dep.describe(epsilon) if epsilon is not None else ""
        self.setToolTip("\n\n".join([t for t in (head, "\n".join(lines)) if t]))
        self.setAccessibleDescription(head)
        self.update()

    def axis_range(self) -> tuple[float, float]:
        """The epsilons at the bottom and the top of the axis."""
        low, high = LOW, HIGH
        if self._epsilon is not None:
            low = min(low, 10 ** math.floor(math.log10(self._epsilon)))
            high = max(high, 10 ** math.ceil(math.log10(self._epsilon)))
        return low, high

    def y_of(self, epsilon: float) -> float:
        """The vertical position of an epsilon on the axis (pixels, larger epsilons higher up)."""
        top, bottom = self._plot_span()
        low, high = self.axis_range()
        frac = (math.log10(epsilon) - math.log10(low)) / (math.log10(high) - math.log10(low))
        return bottom - frac * (bottom - top)

    def marker_rect(self) -> QRectF | None:
        """Where the plan's marker is drawn (None when no epsilon is set)."""
        if self._epsilon is None:
            return None
        y = self.y_of(self._epsilon)
        x = self._axis_x()
        return QRectF(x - 14, y - 6, 12, 12)

    # --- drawing ----------------------------------------------------------------------------------
    def _plot_span(self) -> tuple[float, float]:
        fm = QFontMetrics(self._small_font())
        return 2.0 * fm.height(), self.height() - 1.5 * fm.height()

    def _axis_x(self) -> float:
        return max(70.0, self.width() * 0.32)

    def _small_font(self) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(max(7.0, f.pointSizeF() * 0.85))
        return f

    def paintEvent(self, event: object) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = self._small_font()
        p.setFont(font)
        fm = QFontMetrics(font)
        pal = self.palette()
        text = pal.windowText().color()
        grey = QColor(text)
        grey.setAlpha(120)
        x = self._axis_x()
        top, bottom = self._plot_span()
        p.setPen(QPen(text, 1))
        p.drawText(
            QRectF(0, 0, self.width(), fm.height() * 1.2),
            Qt.AlignmentFlag.AlignLeft,
            _("epsilon (log scale)"),
        )
        p.drawLine(QPointF(x, top), QPointF(x, bottom))
        low, high = self.axis_range()
        k = math.floor(math.log10(low))
        while 10**k <= high * 1.0001:
            v = 10.0**k
            y = self.y_of(v)
            p.setPen(QPen(grey, 1))
            p.drawLine(QPointF(x - 4, y), QPointF(x, y))
            p.drawText(
                QRectF(x - 70, y - fm.height() / 2, 54, fm.height()),
                Qt.AlignmentFlag.AlignRight,
                numfmt.plain(v, 4),
            )
            k += 1
        # deployments: ticks on the axis, labels pushed apart so none overlaps
        ys = [self.y_of(d.epsilon) for d in self._items]  # sorted by epsilon: y decreases
        gap = fm.height() * 1.05
        placed: list[float] = []
        for y in ys:
            placed.append(min(y, placed[-1] - gap) if placed else y)
        overflow = top - placed[-1] if placed else 0.0
        if overflow > 0:  # shift down from the top, keeping the gaps
            placed = [min(y + overflow, bottom) for y in placed]
            for i in range(len(placed) - 2, -1, -1):
                placed[i] = max(placed[i], placed[i + 1] + gap)
        lx = x + 18
        for d, y, ly in zip(self._items, ys, placed, strict=True):
            colour = QColor("#2a6fbb") if d.model == "central" else QColor("#7d5ba6")
            p.setPen(QPen(colour, 2))
            p.drawLine(QPointF(x, y), QPointF(x + 8, y))
            p.setPen(QPen(grey, 1))
            p.drawLine(QPointF(x + 8, y), QPointF(lx - 2, ly))
            p.setPen(QPen(colour, 1))
            name = fm.elidedText(
                f"{d.short} {numfmt.epsilon(d.epsilon)}",
                Qt.TextElideMode.ElideRight,
                int(self.width() - lx - 2),
            )
            p.drawText(QPointF(lx, ly + fm.ascent() / 2 - 1), name)
        # the plan's total
        rect = self.marker_rect()
        if rect is not None and self._epsilon is not None:
            red = QColor("#c0392b")
            p.setPen(QPen(red, 1))
            p.setBrush(red)
            c = rect.center()
            p.drawPolygon(
                QPolygonF(
                    [
                        QPointF(rect.left(), rect.top()),
                        QPointF(rect.right(), c.y()),
                        QPointF(rect.left(), rect.bottom()),
                    ]
                )
            )
            p.drawLine(QPointF(rect.right(), c.y()), QPointF(x + 8, c.y()))
            tag = _("your plan {e}").format(e=numfmt.epsilon(self._epsilon, "up"))
            w = fm.horizontalAdvance(tag)
            ty = min(max(c.y() + fm.height() / 2 + fm.ascent(), top + fm.ascent()), self.height() - 2)
            p.drawText(QPointF(max(2.0, rect.right() - w), ty), tag)
        p.setPen(QPen(grey, 1))
        p.drawText(
            QRectF(0, self.height() - fm.height() * 1.2, self.width(), fm.height() * 1.2),
            Qt.AlignmentFlag.AlignLeft,
            fm.elidedText(
                _("not directly comparable: units and periods differ"),
                Qt.TextElideMode.ElideRight,
                self.width(),
            ),
        )
        p.end()
