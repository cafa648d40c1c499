"""Make the window fit from 1024×700 up, in every language: combo boxes and a status line that give way."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QLayout, QSizePolicy, QWidget

#: the characters a combo box shows at least; longer items are elided in the box and shown whole in its list
COMBO_CHARS = 10


def compact(root: QWidget) -> None:
    """Let every combo box under ``root`` shrink to :data:`COMBO_CHARS` characters (its popup still shows the
    whole items), so that no item of any language sets the window's minimum width."""
    for combo in root.findChildren(QComboBox):
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(COMBO_CHARS)


def elastic(label: QLabel) -> None:
    """A one-line label (a status line) that never widens the window: a long text is cut at the window's edge."""
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)


def tall_enough(window: QWidget, column: QLayout) -> None:
    """Make ``window`` tall enough for its layout's wrapped words at its width: a message that appears in a dialog
    never squeezes the rest."""
    column.activate()
    need = column.totalHeightForWidth(window.width()) if column.hasHeightForWidth() else 0
    if need > window.height():
        window.resize(window.width(), need)
