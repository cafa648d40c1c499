"""A focus ring a keyboard user can see (issue 28 item 3): the application's style, with a two-pixel ring in the
focus colour around the control that has the keyboard's focus (buttons, fields, boxes, tabs, the current cell).
The platform's style draws everything else as before; its own focus marks are a dotted line or a faint tint."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle

#: The ring's colour (the links' blue, darker: 4.9:1 against the window's grey background)
FOCUS_COLOUR = "#1f5fae"
_PE = QStyle.PrimitiveElement
#: What the style draws for a focused control, each of which gets the ring when it has the focus
_FRAMES = (_PE.PE_PanelButtonCommand, _PE.PE_FrameLineEdit, _PE.PE_PanelLineEdit, _PE.PE_FrameFocusRect)


class FocusStyle(QProxyStyle):
    """The platform's style and a visible focus ring."""

    def drawPrimitive(self, element: Any, option: Any, painter: Any, widget: Any = None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        focused = element == _PE.PE_FrameFocusRect or bool(option.state & QStyle.StateFlag.State_HasFocus)
        if element in _FRAMES and focused and painter is not None:
            painter.save()
            painter.setRenderHint(painter.RenderHint.Antialiasing, True)
            painter.setPen(QPen(QColor(FOCUS_COLOUR), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(option.rect).adjusted(1, 1, -1, -1), 3, 3)
            painter.restore()


_style: FocusStyle | None = None


def install(app: QApplication) -> None:
    """Give the application the focus ring (once; its style keeps everything else)."""
    global _style  # noqa: PLW0603 - one style per application, kept alive here
    if _style is None or app.style() is not _style:
        _style = FocusStyle(app.style().name())
        app.setStyle(_style)
