"""The "Simulate releases…" dialog: uncharged noisy releases for accuracy previews, never on the private
table.

The user chooses what the releases are drawn on: a stand-in table generated from the plan's schema, or a
file they declare public (a published sample, last year's published table). The private table is not
offered; a "public" file that turns out to have a ledger is refused by the engine
(:func:`dpdesk.core.preview.simulate.public_table`) when the simulation runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _

#: The engine's limits (dpdesk.core.preview.simulate.MAX_SIMULATION_RUNS, MAX_STAND_IN_ROWS), without importing it.
MAX_RUNS = 1_000_000
MAX_ROWS = 10_000_000


@dataclass(frozen=True)
class SimulationChoice:
    """What the dialog asks for: the source (public file or stand-in rows), the runs and the output file."""

    runs: int
    out: Path
    rows: int = 1000
    public: Path | None = None
    #: the save dialog chose ``out`` and asked before replacing it (it asks about an existing file)
    replace_confirmed: bool = False


class SimulateDialog(QDialog):
    """Choose the source, the number of runs and the output CSV of a simulation."""

    def __init__(
        self,
        parent: QWidget | None,
        ask_open_path: Callable[[str, str], str],
        ask_save_path: Callable[[str, str], str],
        notice: str,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Simulate releases"))
        self.setMinimumWidth(640)
        self.ask_open_path = ask_open_path
        self.ask_save_path = ask_save_path
        self._confirmed: str | None = (
            None  # the output file the save dialog chose (it asked before replacing)
        )

        intro = QLabel(
            _(
                "Uncharged noisy releases of this plan, to see how far released values may fall "
                "from the truth. They never read the table you release from: many uncharged draws "
                "of a private table would average back to its true values."
            )
        )
        intro.setWordWrap(True)
        warn = QLabel(notice)
        warn.setWordWrap(True)
        warn.setStyleSheet("color: #c0392b")

        source = QGroupBox(_("Draw the releases on"))
        grid = QGridLayout(source)
        self.stand_in = QRadioButton(_("a stand-in table generated from the plan's schema"))
        self.stand_in.setChecked(True)
        self.rows = QSpinBox()
        self.rows.setRange(1, MAX_ROWS)
        self.rows.setValue(1000)
        self.rows.setGroupSeparatorShown(True)
        self.rows.setSuffix(" " + _("rows"))
        self.rows.setToolTip(
            _(
                "Uniform values within the declared bounds and categories. Choose about the "
                "number of rows you expect from public knowledge, not from the "
                "table."
            )
        )
        self.public = QRadioButton(_("a public file…"))
        self.public_path = QLineEdit()
        self.public_path.setPlaceholderText(_("a published sample, last year's published table"))
        self.browse_public = QPushButton(_("Browse…"))
        self.declare = QCheckBox(_("I declare this file public: it is already published"))
        self.declare_note = QLabel(
            _(
                "Never the table you release from, nor a copy of it: a file with a "
                "ledger in dpdesk, or the table opened for release, is "
                "refused."
            )
        )
        self.declare_note.setWordWrap(True)
        self.group = QButtonGroup(self)
        self.group.addButton(self.stand_in)
        self.group.addButton(self.public)
        grid.addWidget(self.stand_in, 0, 0, 1, 2)
        grid.addWidget(self.rows, 0, 2)
        grid.addWidget(self.public, 1, 0)
        grid.addWidget(self.public_path, 1, 1)
        grid.addWidget(self.browse_public, 1, 2)
        grid.addWidget(self.declare, 2, 1, 1, 2)
        grid.addWidget(self.declare_note, 3, 1, 1, 2)
        grid.setColumnStretch(1, 1)

        self.runs = QSpinBox()
        self.runs.setRange(1, MAX_RUNS)
        self.runs.setValue(100)
        self.runs.setGroupSeparatorShown(True)
        self.runs.setToolTip(_("Each run is one whole release of the plan with fresh noise."))
        self.out_path = QLineEdit()
        self.browse_out = QPushButton(_("Browse…"))
        out_row = QHBoxLayout()
        out_row.addWidget(self.out_path, 1)
        out_row.addWidget(self.browse_out)
        form = QFormLayout()
        form.addRow(_("Number of runs"), self.runs)
        form.addRow(_("Save to (CSV)"), out_row)

        self.hint = QLabel("")
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.addButton(_("Simulate"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(source)
        lay.addLayout(form)
        lay.addWidget(warn)
        lay.addWidget(self.hint)
        lay.addWidget(self.buttons)

        self.browse_public.clicked.connect(self._browse_public)
        self.browse_out.clicked.connect(self._browse_out)
        for signal in (self.stand_in.toggled, self.public.toggled, self.declare.toggled):
            signal.connect(self._update)
        for edit in (self.public_path, self.out_path):
            edit.textChanged.connect(self._update)
        self.public_path.textEdited.connect(lambda _t: self.public.setChecked(True))
        self._update()

    def _browse_public(self) -> None:
        from dpdesk.gui.actions.opening import data_filter

        path = self.ask_open_path(_("Choose a public file"), data_filter())
        if path:
            self.public_path.setText(path)
            self.public.setChecked(True)

    def _browse_out(self) -> None:
        path = self.ask_save_path(_("Save the simulated releases"), "CSV (*.csv)")
        if path:
            self.out_path.setText(path if path.lower().endswith(".csv") else path + ".csv")
            self._confirmed = path  # the save dialog asked before replacing this very file

    def why_not(self) -> str:
        """What is missing before the simulation can run (empty when it can)."""
        if self.public.isChecked():
            if not self.public_path.text().strip():
                return _("Choose the public file.")
            if not self.declare.isChecked():
                return _(
                    "Tick the box to declare that the file is public, or simulate on the stand-in table."
                )
        if not self.out_path.text().strip():
            return _("Choose where to save the simulated releases.")
        return ""

    def _update(self) -> None:
        public = self.public.isChecked()
        self.rows.setEnabled(not public)
        for w in (self.declare, self.declare_note):  # choosing or typing a file selects "a public file"
            w.setEnabled(public)
        why = self.why_not()
        self.hint.setText(why)
        self.ok_button.setEnabled(not why)

    def choice(self) -> SimulationChoice | None:
        """The user's choice, or None while it is incomplete."""
        if self.why_not():
            return None
        public = Path(self.public_path.text().strip()) if self.public.isChecked() else None
        text = self.out_path.text().strip()
        confirmed = text == self._confirmed
        return SimulationChoice(self.runs.value(), Path(text), self.rows.value(), public, confirmed)
