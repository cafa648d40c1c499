"""The app's Team ledger dialog (Tools > Team ledger…) and the line beside the budget, on real widgets and a real
PostgreSQL: connect as a curator, a refusal in words, disconnect, DPDESK_LEDGER deciding, a release whose team server
is gone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES
from tests.pgserver import free_port
from tests.team.conftest import Team

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


def dialog_of(qtbot: Any, win: Any) -> Any:
    """Tools > Team ledger…, as a person opens it (the menu's action), once any check it starts is done."""
    win.team_action.trigger()
    dialog = win.team_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=60_000)
    return dialog


def connect(qtbot: Any, dialog: Any, url: str, *, key: bool = False) -> None:
    """Type the URL and click Connect (or press Return in the field), then wait for the server's answer."""
    dialog.url.setFocus()
    qtbot.keyClicks(dialog.url, url)
    if key:
        qtbot.keyClick(dialog.url, Qt.Key.Key_Return)
    else:
        qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=60_000)


def assert_whole(label: QLabel) -> None:
    """Every line of a wrapped label is shown: the dialog grew for it (a refusal of four lines was cut at two)."""
    QApplication.processEvents()
    need = label.heightForWidth(label.width())
    assert label.height() >= need, (label.height(), need, label.text())


def dead_url() -> str:
    """A team ledger's URL whose server does not run (nothing listens on the port)."""
    return f"postgresql://alice@127.0.0.1:{free_port()}/team"


def test_the_line_beside_the_budget_says_this_computer_by_default(win: Any) -> None:
    assert win.meter.ledger_in_use.text() == "Ledger: this computer"
    assert win.meter.ledger_in_use.isVisibleTo(win.meter)


def test_connect_as_a_curator_is_remembered_and_shown(
    qtbot: Any, win: Any, team: Team, dpdesk_home: Path
) -> None:
    dialog = dialog_of(qtbot, win)
    assert "its own ledgers" in dialog.in_use.text()
    assert not dialog.disconnect_button.isEnabled()  # nothing to disconnect from
    url = team.url(team.users["alice"])
    connect(qtbot, dialog, url, key=True)
    assert json.loads((dpdesk_home / "team.json").read_text(encoding="utf-8")) == {"url": url}
    assert f"as {team.users['alice']} (curator)" in dialog.in_use.text()
    assert dialog.message.text().startswith("Connected")
    assert dialog.disconnect_button.isEnabled() and dialog.close_button.isEnabled()
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    line = win.meter.ledger_in_use.text()
    assert line.startswith("Ledger: team (") and str(team.server.root) in line
    # opened again, the dialog asks the server who this user is (remembered in the home, not typed again)
    again = dialog_of(qtbot, win)
    assert f"as {team.users['alice']} (curator)" in again.in_use.text()


@pytest.mark.parametrize(
    ("who", "words"),
    [("audrey", "is not a curator or an officer"), ("mallory", "holds no team ledger this user may read")],
)
def test_a_user_who_is_not_a_curator_is_refused_in_words(
    qtbot: Any, win: Any, team: Team, dpdesk_home: Path, who: str, words: str
) -> None:
    dialog = dialog_of(qtbot, win)
    connect(qtbot, dialog, team.url(team.users[who]))
    assert not (dpdesk_home / "team.json").exists()
    text = dialog.message.text()
    assert dialog.message.isVisible() and words in text and team.users[who] in text
    assert_whole(dialog.message)
    assert "Traceback" not in text and "Error:" not in text
    assert "its own ledgers" in dialog.in_use.text()
    assert dialog.connect_button.isEnabled() and dialog.close_button.isEnabled()  # the user can try again


def test_return_in_an_empty_url_field_asks_for_the_url_and_keeps_the_dialog(qtbot: Any, win: Any) -> None:
    dialog = dialog_of(qtbot, win)
    assert dialog.focusWidget() is dialog.url  # where a person types first
    dialog.url.setFocus()
    qtbot.keyClick(dialog.url, Qt.Key.Key_Return)  # Close was the default button: Return closed the dialog
    assert dialog.isVisible()
    assert dialog.message.text() == "Type the team ledger's URL first."


def test_a_server_that_does_not_answer_is_named_and_nothing_is_remembered(
    qtbot: Any, win: Any, dpdesk_home: Path
) -> None:
    dialog = dialog_of(qtbot, win)
    connect(qtbot, dialog, dead_url())
    assert "cannot reach the team ledger at postgresql://alice@127.0.0.1" in dialog.message.text()
    assert_whole(dialog.message)
    assert not (dpdesk_home / "team.json").exists()
    assert win.meter.ledger_in_use.text() == "Ledger: this computer"


def test_disconnect_asks_then_the_home_uses_its_own_ledgers(
    qtbot: Any, win: Any, team: Team, dpdesk_home: Path
) -> None:
    dialog = dialog_of(qtbot, win)
    connect(qtbot, dialog, team.url(team.users["bob"]))
    asked: list[str] = []
    answer = [False]

    def confirm(title: str, text: str) -> bool:
        asked.append(text)
        return answer[0]

    dialog.ask_confirm = confirm
    qtbot.mouseClick(dialog.disconnect_button, Qt.MouseButton.LeftButton)
    assert (dpdesk_home / "team.json").exists()  # No: nothing changed
    assert "own ledgers count" in asked[0] and "not carried over" in asked[0]
    answer[0] = True
    qtbot.mouseClick(dialog.disconnect_button, Qt.MouseButton.LeftButton)
    assert not (dpdesk_home / "team.json").exists()
    assert "its own ledgers" in dialog.in_use.text() and not dialog.disconnect_button.isEnabled()
    dialog.close()
    assert win.meter.ledger_in_use.text() == "Ledger: this computer"


def test_the_environment_variable_decides_and_the_buttons_are_disabled(
    qtbot: Any, win: Any, monkeypatch: pytest.MonkeyPatch, dpdesk_home: Path
) -> None:
    url = dead_url()
    monkeypatch.setenv("DPDESK_LEDGER", url)
    dialog = dialog_of(qtbot, win)
    assert "The environment variable DPDESK_LEDGER decides" in dialog.in_use.text()
    assert not dialog.connect_button.isEnabled() and not dialog.disconnect_button.isEnabled()
    assert not dialog.url.isEnabled() and dialog.close_button.isEnabled()
    # the dialog asked the server it names: its failure is said in words
    assert "cannot reach the team ledger" in dialog.message.text()
    dialog.close()
    assert win.meter.ledger_in_use.text().startswith("Ledger: team (127.0.0.1:")
    assert not (dpdesk_home / "team.json").exists()


@pytest.mark.slow
def test_a_release_whose_team_server_is_gone_shows_its_message_and_nothing_released(
    qtbot: Any, win: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dpdesk_home: Path
) -> None:
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
    assert win.state.can_release()[0], win.state.can_release()
    monkeypatch.setenv("DPDESK_LEDGER", dead_url())  # the team's server, gone before the release
    assert win.release() is not None
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert (
        "cannot reach the team ledger" in win.errors[-1]
        and "nothing was charged or revealed" in win.errors[-1]
    )
    assert win.state.results == [] and win.state.results_entry is None
    assert not list(dpdesk_home.glob("ledgers/*.jsonl"))


def test_while_the_server_is_asked_the_dialog_is_busy_not_frozen_and_stays(qtbot: Any, win: Any) -> None:
    """A server that accepts the connection and says nothing: the check waits in the worker; the dialog shows the
    busy bar, keeps its buttons (and Escape) from acting until the answer, then shows the failure in words."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # the handshake completes in the backlog; nothing ever answers
    port = silent.getsockname()[1]
    dialog = dialog_of(qtbot, win)
    try:
        dialog.url.setFocus()
        qtbot.keyClicks(dialog.url, f"postgresql://alice@127.0.0.1:{port}/team")
        qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
        assert dialog.worker is not None and dialog.busy.isVisible()
        assert not dialog.connect_button.isEnabled() and not dialog.close_button.isEnabled()
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        dialog.reject()
        qtbot.wait(50)  # the event loop runs: the window is not frozen
        assert dialog.isVisible() and dialog.worker is not None
    finally:
        silent.close()  # the server goes: the check fails at once
    qtbot.waitUntil(lambda: dialog.worker is None, timeout=60_000)
    assert "cannot reach the team ledger" in dialog.message.text() and not dialog.busy.isVisible()
    assert dialog.close_button.isEnabled()


@pytest.mark.slow
def test_after_connecting_an_open_table_is_read_from_the_team_ledger(
    qtbot: Any, win: Any, team: Team, tmp_path: Path
) -> None:
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    assert win.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)
    win.release()  # charged to this computer's ledger
    qtbot.waitUntil(lambda: win.job is None and len(win.state.ledger_entries) > 0, timeout=60_000)
    assert win.state.dataset_id is not None
    dialog = dialog_of(qtbot, win)
    asked: list[str] = []
    dialog.ask_confirm = lambda _title, text: asked.append(text) or len(asked) > 1  # No, then Yes
    connect(qtbot, dialog, team.url(team.users["alice"]))
    assert not (win.state.home / "team.json").exists()  # No: the home's own releases are not left behind
    assert "does not hold yet" in asked[0] and "Import this table's history into the team" in asked[0]
    dialog.url.clear()
    connect(qtbot, dialog, team.url(team.users["alice"]))
    assert len(asked) == 2 and (win.state.home / "team.json").exists()
    dialog.close()
    # the table's history is still only in this home's ledger: the app says so and refuses to release it
    qtbot.waitUntil(lambda: win.job is None and win.state.ledger_error is not None, timeout=60_000)
    assert "Import it first" in win.state.ledger_error and not win.state.can_release()[0]
    # Tools > Import this table's history into the team, as a person chooses it
    win.ask_confirm = lambda *_a: True
    win.team_import_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and len(win.state.ledger_entries) > 0, timeout=60_000)
    assert win.state.ledger_error is None, win.state.ledger_error
    assert [e.type for e in win.state.ledger_entries] == ["import"]
    assert "1 release(s) carried" in win.status_label.text()
    # the meter's budget is the team's now, with this home's release counted in it
    assert win.state.report is not None and win.state.report.in_force.spent.epsilon == pytest.approx(0.9)
    assert win.state.can_release() == (False, "The plan exceeds the remaining budget.")  # 0.9 of 1 spent
    assert team.sql("SELECT count(*) FROM dpdesk.releases") == [(1,)]
