"""Tools > Team ledger: which ledger this home uses, and connecting it to a team's ledger or disconnecting it.

The server is asked in a worker (:mod:`dpdesk.gui.workers`) with a busy indicator in the dialog; its refusals and
failures (:class:`~dpdesk.core.ledger.team.TeamLedgerError`) are shown in the dialog in words. When the environment
variable ``DPDESK_LEDGER`` is set, it decides: the dialog says so and its buttons are disabled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common.errors import DpdeskError
from dpdesk.gui.workers import Worker, start
from dpdesk.i18n import _

#: what the URL field shows when empty
URL_PLACEHOLDER = "postgresql://USER@HOST/DATABASE?sslmode=verify-full"


def role_name(details: dict[str, Any]) -> str:
    """The user's role in the team, in words."""
    if details.get("officer"):
        return _("officer")
    if details.get("curator"):
        return _("curator")
    return _("auditor (read only)")


class TeamDialog(QDialog):
    """Which ledger this home uses; Connect (checked on the server in a worker), Disconnect (confirmed), Close."""

    #: after the home was connected or disconnected
    changed = Signal()

    def __init__(self, parent: QWidget | None, home: Path, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Team ledger"))
        self.setObjectName("team_dialog")
        self.home = home
        self.pool = pool
        self.worker: Worker | None = None
        #: whether the home's choice changed while the dialog was open
        self.was_changed = False

        self.in_use = QLabel("")
        self.in_use.setObjectName("team_in_use")
        self.in_use.setWordWrap(True)
        self.url = QLineEdit()
        self.url.setObjectName("team_url")
        self.url.setPlaceholderText(URL_PLACEHOLDER)
        self.url.setMinimumWidth(self.fontMetrics().horizontalAdvance(URL_PLACEHOLDER) + 24)
        url_label = QLabel(_("The team ledger's &URL:"))
        url_label.setBuddy(self.url)
        self.url_note = QLabel(
            _(
                "The password comes from libpq's password file (~/.pgpass) or PGPASSWORD, never from the URL: "
                "dpdesk writes the URL into this home."
            )
        )
        self.url_note.setWordWrap(True)
        self.url_note.setStyleSheet("color: #5d6d7e")
        self.busy = QProgressBar()
        self.busy.setObjectName("team_busy")
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(12)
        self.busy.setVisible(False)
        self.message = QLabel("")
        self.message.setObjectName("team_message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setVisible(False)

        buttons = QDialogButtonBox()
        self.connect_button = QPushButton(_("&Connect"))
        self.connect_button.setObjectName("team_connect")
        self.disconnect_button = QPushButton(_("&Disconnect…"))
        self.disconnect_button.setObjectName("team_disconnect")
        self.close_button = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.connect_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.disconnect_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.connect_button.clicked.connect(self.connect_home)
        self.disconnect_button.clicked.connect(self.disconnect_home)
        self.close_button.clicked.connect(self.reject)
        # Return (in the URL field too) connects, never closes: Connect is the only default button
        for button in (self.close_button, self.disconnect_button):
            button.setAutoDefault(False)
        self.connect_button.setAutoDefault(True)
        self.connect_button.setDefault(True)

        lay = QVBoxLayout(self)
        lay.addWidget(self.in_use)
        lay.addSpacing(6)
        lay.addWidget(url_label)
        row = QHBoxLayout()
        row.addWidget(self.url, 1)
        lay.addLayout(row)
        lay.addWidget(self.url_note)
        lay.addWidget(self.busy)
        lay.addWidget(self.message)
        lay.addStretch(1)
        lay.addWidget(buttons)
        self.setMinimumWidth(max(560, self.url.minimumWidth() + 40))
        self.show_choice()
        if self.url.isEnabled():
            self.url.setFocus()
        if self.choice.url is not None and self.choice.error is None:
            self.check_status()

    # ------------------------------------------------------------------ what the home uses
    def show_choice(self, role: str = "") -> None:
        """Say which ledger the home uses and enable what can be done about it."""
        from dpdesk.services.team import in_use

        self.choice = choice = in_use(self.home)
        if choice.error is not None:
            text = _("This home's team ledger setting cannot be read.")
            self.show_message(choice.error, error=True)
        elif choice.url is None:
            text = _("This home uses its own ledgers (files on this computer).")
        elif role:
            text = _("This home uses the team ledger at {server} as {user} ({role}).").format(
                server=choice.url, user=choice.user, role=role
            )
        else:
            text = _("This home uses the team ledger at {server}.").format(server=choice.url)
        if choice.from_env:
            text += "\n\n" + _(
                "The environment variable {env} decides which ledger is used; unset it to choose here."
            ).format(env=choice.env)
        self.in_use.setText(text)
        self.enable()

    def enable(self) -> None:
        busy = self.worker is not None
        free = not busy and not self.choice.from_env
        self.url.setEnabled(free)
        self.connect_button.setEnabled(free)
        self.disconnect_button.setEnabled(
            free and (self.choice.url is not None or self.choice.error is not None)
        )
        self.close_button.setEnabled(not busy)
        self.busy.setVisible(busy)
        self.fit()

    def show_message(self, text: str, *, error: bool) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #c0392b" if error else "color: #1e7b34")
        self.message.setVisible(bool(text))
        self.fit()

    def fit(self) -> None:
        """Grow to show every line of the wrapped texts (a long refusal was cut at the dialog's first size)."""
        layout = self.layout()
        if layout is None or not self.isVisible():  # at its first show, the dialog takes the size it needs
            return
        layout.activate()
        need = self.heightForWidth(self.width())
        if need > self.height():
            self.resize(self.width(), need)

    # ------------------------------------------------------------------ the server, in a worker
    def _run(self, job: Callable[[], Any], done: Callable[[Any], None], label: str) -> Worker:
        worker = Worker(lambda _progress: job())
        self.worker = worker
        self.show_message(label, error=False)
        self.message.setStyleSheet("color: #5d6d7e")

        def finished(result: Any) -> None:
            self.worker = None
            self.show_message("", error=False)
            done(result)

        def failed(message: str, _details: str) -> None:
            self.worker = None
            self.show_choice()
            self.show_message(message, error=True)  # the TeamLedgerError's words, never a traceback

        worker.signals.finished.connect(finished)
        worker.signals.failed.connect(failed)
        self.enable()
        start(worker, self.pool)
        return worker

    def check_status(self) -> Worker:
        """Ask the team's server who this user is there (the role shown with the server)."""
        from dpdesk.services import team

        home = self.home

        def done(status: team.TeamStatus) -> None:
            self.show_choice(role_name(status.details) if status.details else "")

        return self._run(
            lambda: team.status(home),
            done,
            _("Asking the team ledger at {server}…").format(server=self.choice.url),
        )

    def connect_home(self) -> Worker | None:
        """Check the URL's server (reachable, a team ledger, this user a curator or an officer), then remember it."""
        from dpdesk.services import team

        if self.worker is not None or not self.connect_button.isEnabled():
            return None
        url, home = self.url.text().strip(), self.home
        if not url:
            self.show_message(_("Type the team ledger's URL first."), error=True)
            self.url.setFocus()
            return None
        try:
            server = team.checked(url)
        except DpdeskError as exc:  # not a PostgreSQL URL, or one holding a password
            self.show_message(str(exc), error=True)
            return None
        # a home with releases in its own ledgers: their history joins the team only when imported (as the command
        # line's --leave-local-ledgers, then dpdesk team import)
        leave_local = bool(team.local_datasets(home))
        if leave_local and not self.ask_confirm(
            _("Connect a home that has its own releases?"),
            _(
                "This home has releases in its own ledgers, which the team's ledger does not hold yet. After "
                "connecting, bring each table's history into the team: open the table and choose Tools > Import "
                "this table's history into the team (or run dpdesk team import --data FILE). Until then, dpdesk "
                "refuses to release such a table through the team, so that it never gets a second budget.\n\n"
                "Connect now?"
            ),
        ):
            return None

        def done(status: team.TeamStatus) -> None:
            self.was_changed = True
            details = status.details or {}
            self.show_choice(role_name(details))
            self.show_message(
                _("Connected: this home's releases are now charged to the team ledger at {server}.").format(
                    server=status.url
                ),
                error=False,
            )
            self.changed.emit()

        return self._run(
            lambda: team.connect(home, url, leave_local=leave_local),
            done,
            _("Checking the team ledger at {server}…").format(server=server),
        )

    def disconnect_home(self) -> bool:
        """After a confirmation, make the home use its own ledgers again."""
        from dpdesk.services import team

        if self.worker is not None or not self.disconnect_button.isEnabled():
            return False
        server = self.choice.url or "?"
        if not self.ask_confirm(
            _("Disconnect from the team ledger?"),
            _(
                "From now on, this home's own ledgers count: releases made here are charged to the ledgers on "
                "this computer, not to the team ledger at {server}.\n\nThe team's budget is not carried over: "
                "what the team has spent is not counted on this computer, and the team ledger keeps its entries."
            ).format(server=server),
        ):
            return False
        team.disconnect(self.home)
        self.was_changed = True
        self.show_choice()
        self.show_message(_("Disconnected: this home uses its own ledgers again."), error=False)
        self.changed.emit()
        return True

    def ask_confirm(self, title: str, text: str) -> bool:
        """A yes/no question whose default (Return) and escape button is No (a test answers it)."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        box.exec()
        return box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)

    def reject(self) -> None:
        """Close, but not while the server is being asked (at most its connection timeout): the answer decides
        what the home uses."""
        if self.worker is not None:
            return
        super().reject()
