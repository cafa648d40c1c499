"""File > Aggregation engine: where a release computes the table's exact statistics, this computer or Apache Spark
(inside dpdesk on N cores, or a Spark Connect server). The address is checked when the dialog is confirmed (its form,
TLS and a token as the command line checks it); a server elsewhere releases only tables the cluster reads (a file of
this computer is refused at its release); a token in it is kept for the session only, never in the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.release.engines.spark.session import SparkTarget

#: the kinds of engine: this computer's own (in memory or streamed), Spark inside dpdesk, a Spark Connect server
HERE, LOCAL, REMOTE = "here", "local", "remote"


@dataclass(frozen=True)
class EngineChoice:
    """The chosen engine: ``kind`` (:data:`HERE`, :data:`LOCAL` or :data:`REMOTE`), the cores of ``local[N]`` and
    the Spark Connect address (with its token, if it has one: the settings keep it without)."""

    kind: str = HERE
    cores: int = 2
    remote: str = ""

    def target(self) -> SparkTarget | None:
        """The release's ``SparkTarget`` (None for this computer); raises ``SparkUnavailable`` naming what is
        wrong with the address and how to write it."""
        if self.kind == HERE:
            return None
        from dpdesk.core.release.engines.spark.session import SparkTarget

        if self.kind == LOCAL:
            return SparkTarget(master=f"local[{self.cores}]")
        return SparkTarget(remote=self.remote.strip())  # check_remote: the address's form, TLS and token


class EngineDialog(QDialog):
    """The three choices; OK checks the Spark Connect address and says in the dialog what is wrong with it."""

    def __init__(self, choice: EngineChoice, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from dpdesk.core.release.engines.spark.session import pyspark_installed, pyspark_missing

        self.setWindowTitle(_("Aggregation engine"))
        self.installed = pyspark_installed()
        intro = QLabel(
            _(
                "Where a release computes the table's exact statistics (its counts, sums and quantiles' counts). "
                "The budget, the ledger, the noise and the report stay on this computer whatever you choose."
            )
        )
        intro.setWordWrap(True)
        self.here = QRadioButton(_("This computer (dpdesk reads the table itself)"))
        self.here.setObjectName("engine_here")
        self.local = QRadioButton(_("Apache Spark inside dpdesk, on this computer; cores:"))
        self.local.setObjectName("engine_local")
        self.cores = QSpinBox()
        self.cores.setObjectName("engine_cores")
        self.cores.setRange(1, 256)
        self.cores.setValue(choice.cores)
        self.cores.setAccessibleName(_("Spark's cores"))
        self.remote = QRadioButton(_("A Spark Connect server:"))
        self.remote.setObjectName("engine_remote")
        self.address = QLineEdit(choice.remote)
        self.address.setObjectName("engine_address")
        self.address.setPlaceholderText("sc://HOST:PORT;use_ssl=true;token=TOKEN")
        self.address.setAccessibleName(_("Spark Connect address"))
        self.group = QButtonGroup(self)
        for button in (self.here, self.local, self.remote):
            self.group.addButton(button)
        {HERE: self.here, LOCAL: self.local, REMOTE: self.remote}.get(choice.kind, self.here).setChecked(True)
        local_row = QHBoxLayout()
        local_row.addWidget(self.local)
        local_row.addWidget(self.cores)
        local_row.addStretch(1)
        address_row = QHBoxLayout()
        address_row.addSpacing(self.remote.sizeHint().height())  # under the choice's words, not its button
        address_row.addWidget(self.address, 1)
        #: pyspark missing: the Spark choices stay in sight, disabled, with what to install
        self.missing = QLabel(pyspark_missing())
        self.missing.setObjectName("engine_missing")
        self.missing.setWordWrap(True)
        self.missing.setVisible(not self.installed)
        self.note = QLabel(
            _(
                "Spark is for a table that lives on a cluster: on one computer it is much slower than dpdesk's "
                "own engines. A Spark Connect server elsewhere reads the cluster's tables (File > Open Spark "
                "table); a file opened from this computer is released here or by Spark inside dpdesk."
            )
        )
        self.note.setWordWrap(True)
        self.note.setStyleSheet("QLabel { color: #555 }")
        #: a token in the address: kept while the app runs, never written to the settings
        self.token_note = QLabel(
            _(
                "The token is kept for this session only: dpdesk does not save it in its settings. Enter it again "
                "after restarting."
            )
        )
        self.token_note.setObjectName("engine_token_note")
        self.token_note.setWordWrap(True)
        self.error = QLabel("")
        self.error.setObjectName("engine_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("QLabel { color: #b00020 }")
        self.error.setVisible(False)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = self.column = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.here)
        layout.addLayout(local_row)
        layout.addWidget(self.remote)
        layout.addLayout(address_row)
        layout.addWidget(self.missing)
        layout.addWidget(self.note)
        layout.addWidget(self.token_note)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(buttons)
        for button in (self.here, self.local, self.remote):
            button.toggled.connect(self._update)
        self.address.textChanged.connect(self._update)
        self._update()
        self.resize(max(560, self.sizeHint().width()), self.sizeHint().height())
        self._fit()

    def _fit(self) -> None:
        """Tall enough for its wrapped words at its width: a message that appears never squeezes the rest."""
        from dpdesk.gui.fit import tall_enough

        tall_enough(self, self.column)

    def _update(self) -> None:
        from dpdesk.core.release.engines.spark.session import has_token

        if not self.installed:
            for widget in (self.local, self.remote):
                widget.setEnabled(False)
        self.cores.setEnabled(self.installed and self.local.isChecked())
        self.address.setEnabled(self.installed and self.remote.isChecked())
        self.token_note.setVisible(self.remote.isChecked() and has_token(self.address.text()))
        self.error.setVisible(False)
        self._fit()

    def choice(self) -> EngineChoice:
        """The engine as the dialog shows it now."""
        kind = LOCAL if self.local.isChecked() else REMOTE if self.remote.isChecked() else HERE
        return EngineChoice(kind, self.cores.value(), self.address.text().strip())

    def accept(self) -> None:
        """Close only on an engine the release can use: a bad address is said here, with how to write it."""
        from dpdesk.core.release.engines.spark.session import SparkUnavailable

        try:
            self.choice().target()
        except SparkUnavailable as exc:
            self.error.setText(str(exc))
            self.error.setVisible(True)
            self._fit()
            self.address.setFocus()
            return
        super().accept()
