"""Issue 30 item 4 in the app: File > Open database table reads a PostgreSQL table (through the dialog's URL and
table) into a private CSV file and opens it as a table of the same dataset as its CSV; it is remembered among the
recent tables by its URL, which holds no password; a URL holding one is refused in words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QDialog, QMessageBox

from dpdesk.gui.app import build
from dpdesk.gui.views.database_dialog import DatabaseDialog, table_url
from tests.pgserver import PgServer
from tests.services.test_database_data import DATA, _database

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def test_the_dialogs_url_names_a_table_or_a_query(qtbot: Any) -> None:
    dialog = DatabaseDialog("postgresql://ana@db/survey")
    qtbot.addWidget(dialog)
    dialog.table.setText("public.Census Wages")
    assert dialog.url() == "postgresql://ana@db/survey?table=public.Census+Wages"
    assert table_url("postgresql:///s?host=/run", "select * from t") == (
        "postgresql:///s?host=/run&query=select+%2A+from+t"
    )


def test_open_database_table_opens_it_as_its_csv_and_remembers_no_password(
    qtbot: Any, pg_server: PgServer, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.loading import file_sha256

    url = _database(pg_server)
    server, table = url.split("&table=")
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    errors: list[str] = []
    win.show_error = lambda message, details="": errors.append(message)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard

    def answer(self: DatabaseDialog) -> int:
        self.table.setText(table)
        return int(QDialog.DialogCode.Accepted.value)

    monkeypatch.setattr(DatabaseDialog, "exec", answer)
    win.show()
    try:
        win.settings.setValue("database/server", server)
        win.open_database_action.trigger()  # the menu's action, through the dialog
        qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
        assert errors == []
        copy = Path(str(win.state.data_path))
        assert copy.name == "people.csv" and (copy.parent.stat().st_mode & 0o777) == 0o700
        assert win.state.sha256 == file_sha256(copy)
        assert win.recent_files()[0] == url  # by its URL, to open again
        # the same rows as the CSV file: the same columns in the Data tab
        assert (
            copy.read_text(encoding="utf-8").splitlines()[0]
            == DATA.read_text(encoding="utf-8").splitlines()[0]
        )
        # a table that is not there: refused in words, and the table open now keeps its rows
        win.open_database(f"{server}&table=nothere")
        qtbot.waitUntil(lambda: win.job is None and len(errors) == 1, timeout=60_000)
        assert "there is no table nothere" in errors.pop() and copy.is_file()
        # a URL holding a password: refused in words, never remembered
        assert win.open_database(url.replace("admin@", "admin:hunter2@")) is None
        assert len(errors) == 1 and "~/.pgpass" in errors[0] and "hunter2" not in errors[0]
        assert all("hunter2" not in f for f in win.recent_files())
    finally:
        QThreadPool.globalInstance().waitForDone(30_000)
        win.state.undo_stack.setClean()
        win.state.clean_index = win.state.undo_stack.index()
