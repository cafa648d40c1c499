"""The "Estimate on a public file…" dialog of a synthetic-table query: how faithful its tables would be,
estimated by uncharged simulated releases on a file the user declares public, never on the private table.

A "public" file that turns out to have a ledger, or the table opened for release, is refused by the engine
(:func:`dpdesk.core.preview.simulate.public_table`) when the estimate runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _

#: The engine's limit (dpdesk.core.preview.simulate.MAX_FIDELITY_RUNS), without importing it.
MAX_RUNS = 20


class FidelityDialog(QDialog):
    """Choose the public file and the number of simulated releases for a synthetic table's estimate."""

    def __init__(
        self, parent: QWidget | None, query: str, ask_open_path: Callable[[str, str], str], notice: str
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Estimate the synthetic table's fidelity"))
        self.setMinimumWidth(600)
        self.ask_open_path = ask_open_path
        intro = QLabel(
            _(
                "How faithful the synthetic table “{name}” would be depends on the data. dpdesk estimates it by "
                "simulated releases, uncharged, on a file you declare public, with the same columns: a published "
                "sample or last year's published table. It never reads the table you release from: many "
                "uncharged draws of a private table would average back to its true values."
            ).format(name=query)
        )
        intro.setWordWrap(True)
        self.path = QLineEdit()
        self.path.setPlaceholderText(_("a published sample, last year's published table"))
        self.browse = QPushButton(_("Browse…"))
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        self.declare = QCheckBox(_("I declare this file public: it is already published"))
        note = QLabel(
            _(
                "Never the table you release from, nor a copy of it: a file with a "
                "ledger in dpdesk, or the table opened for release, is "
                "refused."
            )
        )
        note.setWordWrap(True)
        self.runs = QSpinBox()
        self.runs.setRange(1, MAX_RUNS)
        self.runs.setValue(3)
        self.runs.setToolTip(_("Each run is one whole release of the query with fresh noise."))
        form = QFormLayout()
        form.addRow(_("Public file"), row)
        form.addRow("", self.declare)
        form.addRow("", note)
        form.addRow(_("Number of runs"), self.runs)
        warn = QLabel(notice)
        warn.setWordWrap(True)
        warn.setStyleSheet("color: #c0392b")
        self.hint = QLabel("")
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.addButton(_("Estimate"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        lay.addWidget(warn)
        lay.addWidget(self.hint)
        lay.addWidget(self.buttons)
        self.browse.clicked.connect(self._browse)
        self.path.textChanged.connect(self._update)
        self.declare.toggled.connect(self._update)
        self._update()

    def _browse(self) -> None:
        from dpdesk.gui.actions.opening import data_filter

        path = self.ask_open_path(_("Choose a public file"), data_filter())
        if path:
            self.path.setText(path)

    def why_not(self) -> str:
        """What is missing before the estimate can run (empty when it can)."""
        if not self.path.text().strip():
            return _("Choose the public file.")
        if not self.declare.isChecked():
            return _("Tick the box to declare that the file is public.")
        return ""

    def _update(self) -> None:
        why = self.why_not()
        self.hint.setText(why)
        self.ok_button.setEnabled(not why)

    def choice(self) -> tuple[Path, int] | None:
        """The public file and the number of runs, or None while the choice is incomplete."""
        if self.why_not():
            return None
        return Path(self.path.text().strip()), self.runs.value()
