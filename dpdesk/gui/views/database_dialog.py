"""File > Open database table: a PostgreSQL URL and a table's name (or a query), never a password."""

from __future__ import annotations

from urllib.parse import quote_plus

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from dpdesk.i18n import _


def table_url(server: str, table: str) -> str:
    """The data URL of ``table`` (``NAME``, ``SCHEMA.NAME``, or a query starting with SELECT or WITH) in the
    database ``server`` names."""
    server, table = server.strip(), table.strip()
    key = (
        "query"
        if table.split(None, 1)[:1] and table.split(None, 1)[0].upper() in ("SELECT", "WITH")
        else "table"
    )
    return f"{server}{'&' if '?' in server else '?'}{key}={quote_plus(table)}"


class DatabaseDialog(QDialog):
    """The server's URL and the table; ``url()`` is what ``--data`` takes."""

    def __init__(self, last_server: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Open database table"))
        intro = QLabel(
            _(
                "A table in PostgreSQL: its rows are read once, as a CSV export of them would be, into a private "
                "temporary file. The URL holds no password: libpq reads it from ~/.pgpass or PGPASSWORD."
            )
        )
        intro.setWordWrap(True)
        self.server = QLineEdit(last_server)
        self.server.setObjectName("database_server")
        self.server.setPlaceholderText("postgresql://USER@HOST:5432/DATABASE")
        self.server.setAccessibleName(_("Database URL"))
        self.table = QLineEdit()
        self.table.setObjectName("database_table")
        self.table.setPlaceholderText(_("SCHEMA.NAME, or a query: SELECT ..."))
        self.table.setAccessibleName(_("Table or query"))
        form = QFormLayout()
        form.addRow(_("Database URL:"), self.server)
        form.addRow(_("Table or query:"), self.table)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def url(self) -> str:
        return table_url(self.server.text(), self.table.text())
