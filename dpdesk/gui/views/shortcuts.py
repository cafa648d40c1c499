"""Help > Keyboard shortcuts: every action of the window that has a key, read from the actions themselves (so the
list can never disagree with the keys), and the keys that move around the window."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _


def action_keys(window: QWidget) -> list[tuple[str, str]]:
    """(what, keys) of each action of ``window`` that has a shortcut, in the order they were made, once each."""
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for a in window.findChildren(QAction):
        keys = a.shortcuts()
        if not keys or not a.text():
            continue
        what = a.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()
        text = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)
        if (what, text) not in seen:
            seen.add((what, text))
            out.append((what, text))
    return out


def moving_keys() -> list[tuple[str, str]]:
    """The keys that move around the window (Qt's own)."""
    return [
        (_("Next or previous control"), _("Tab, Shift+Tab")),
        (_("Move within a table or a list"), _("Arrow keys")),
        (_("Edit the current cell of a table"), "F2"),
        (_("Press the focused button, tick the focused box"), _("Space")),
        (_("Open a menu"), _("Alt and the underlined letter")),
        (_("Close a dialog without doing anything"), "Esc"),
    ]


class ShortcutsDialog(QDialog):
    """The list, in a table a screen reader can read cell by cell."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle(_("Keyboard shortcuts"))
        rows = action_keys(window) + moving_keys()
        self.table = QTableWidget(len(rows), 2)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setObjectName("shortcuts_table")
        self.table.setAccessibleName(_("Keyboard shortcuts"))
        self.table.setHorizontalHeaderLabels([_("Action"), _("Keys")])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, (what, keys) in enumerate(rows):
            self.table.setItem(i, 0, QTableWidgetItem(what))
            self.table.setItem(i, 1, QTableWidgetItem(keys))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(_("Every action with a key, and the keys that move around the window.")))
        lay.addWidget(self.table)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.resize(520, 520)
