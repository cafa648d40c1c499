"""Issue 28 item 6: files as a desktop app handles them. Each kind of file dialog (a table, a plan, an export, a
package to review) opens in the folder last chosen for it, also after a restart; Save plan and Export propose a
name made of the table's file name and the release number; Export makes a folder that does not exist yet; a
saved plan is in Open recent; and a table opened again with no plan offers, in the status line, the plan last
used with it.

The dialogs are QFileDialog's own, answered here by replacing its static methods: what the app asked (the folder
or the proposed path it opened at) is recorded, and the answer given is the next one queued."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
PLAN = SAMPLES / "cps_wages_plan.json"


class Dialogs:
    """QFileDialog's static methods, answered from a queue; ``asked`` records (method, the dir it opened at)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asked: list[tuple[str, str]] = []
        self.answers: list[str] = []
        for method in ("getOpenFileName", "getSaveFileName", "getExistingDirectory"):
            monkeypatch.setattr(QFileDialog, method, self._fake(method))

    def _fake(self, method: str) -> Any:
        def answer(*args: Any, **kwargs: Any) -> Any:
            where = args[2] if len(args) > 2 else kwargs.get("dir", "")
            self.asked.append((method, str(where)))
            given = self.answers.pop(0) if self.answers else ""
            return given if method == "getExistingDirectory" else (given, "")

        return answer

    def last(self) -> tuple[str, str]:
        return self.asked[-1]


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    return Dialogs(monkeypatch)


@pytest.fixture
def table(tmp_path: Path) -> Path:
    folder = tmp_path / "tables"
    folder.mkdir()
    p = folder / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", p)
    return p


def _window(qtbot: Any, home: Path) -> Any:
    _app, win = build(home)
    qtbot.addWidget(win)
    win.errors = []
    win.show_error = lambda message, details="": win.errors.append(message)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.ask_confirm = lambda *_a: True
    win.show()
    return win


def _close(win: Any) -> None:
    QThreadPool.globalInstance().waitForDone(30_000)
    win.state.undo_stack.setClean()
    win.state.clean_index = win.state.undo_stack.index()
    win.close()


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Iterator[Any]:
    window = _window(qtbot, dpdesk_home)
    yield window
    _close(window)


def _idle(qtbot: Any, win: Any) -> None:
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)


def _open_table(qtbot: Any, win: Any, path: Path) -> None:
    win.open_data(str(path))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=120_000)


def test_each_kind_of_dialog_opens_in_the_folder_last_chosen_for_it_also_after_a_restart(
    qtbot: Any, dialogs: Dialogs, table: Path, tmp_path: Path, dpdesk_home: Path
) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    plan = plans / "wages.json"
    shutil.copy(PLAN, plan)
    win = _window(qtbot, dpdesk_home)
    dialogs.answers = [str(table)]
    win.open_data()
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=120_000)
    dialogs.answers = [str(plan)]
    assert win.open_plan()
    assert win.state.plan_path == plan and not win.errors, win.errors

    dialogs.answers = [""]  # cancelled: only where it opened matters
    win.open_data()
    assert dialogs.last() == ("getOpenFileName", str(table.parent))
    assert not win.open_plan()
    assert dialogs.last() == ("getOpenFileName", str(plans))  # a plan's folder, not the table's
    _close(win)

    again = _window(qtbot, dpdesk_home)  # the next start
    again.open_data()
    assert dialogs.last() == ("getOpenFileName", str(table.parent))
    assert not again.open_plan()
    assert dialogs.last() == ("getOpenFileName", str(plans))
    # a package to review opens where the last one was found (first: where exports go, none yet)
    package = tmp_path / "packages" / "census_release_1"
    package.mkdir(parents=True)
    dialogs.answers = [""]
    again.review()
    assert dialogs.last() == ("getExistingDirectory", "")
    dialogs.answers = [str(package)]
    again.review()
    _idle(qtbot, again)
    dialogs.answers = [""]
    again.review()
    assert dialogs.last() == ("getExistingDirectory", str(package.parent))
    _close(again)


def test_save_plan_proposes_the_tables_name_and_the_saved_plan_is_in_open_recent(
    qtbot: Any, win: Any, dialogs: Dialogs, table: Path, tmp_path: Path
) -> None:
    _open_table(qtbot, win, table)
    assert win.state.plan_path is None
    target = tmp_path / "plans" / "census_plan.json"
    target.parent.mkdir()
    dialogs.answers = [str(target)]
    assert win.save_plan()
    method, proposed = dialogs.last()
    assert method == "getSaveFileName" and Path(proposed).name == "census_plan.json", proposed
    assert target.is_file() and win.state.plan_path == target
    # in File > Open recent and on the welcome page, newest first
    assert win.recent_files()[0] == str(target), win.recent_files()
    assert str(target) in [a.text() for a in win.recent_menu.actions()]
    welcome = [
        win.welcome.recent.item(i).data(Qt.ItemDataRole.UserRole) for i in range(win.welcome.recent.count())
    ]
    assert str(target) in welcome
    # Save as: proposed as the plan's own name, in the folder plans were last saved to
    dialogs.answers = [""]
    assert not win.save_plan(ask=True)
    assert dialogs.last() == ("getSaveFileName", str(target))


def test_export_proposes_the_table_and_release_number_and_makes_a_new_folder(
    qtbot: Any, win: Any, dialogs: Dialogs, table: Path, tmp_path: Path
) -> None:
    assert win.open_plan(str(PLAN))
    _open_table(qtbot, win, table)
    assert win.release() is not None
    _idle(qtbot, win)
    assert win.state.results and not win.errors, win.errors

    new = tmp_path / "exports" / "2026" / "census_release_1"  # neither it nor its folder exists yet
    dialogs.answers = [str(new)]
    assert win.export_release() is not None
    _idle(qtbot, win)
    method, proposed = dialogs.last()
    # a dialog where a new name can be typed (a folder dialog says "Directory not found"), proposed by name
    assert method == "getSaveFileName" and Path(proposed).name == "census_release_1", dialogs.asked
    assert not win.errors, win.errors
    assert (new / "release.csv").is_file() and (new / "report.pdf").is_file()
    # the next export proposes the same name where the last one went; into a folder that is there and not
    # empty, it makes the package's own folder, named the same
    dialogs.answers = [str(new.parent)]
    assert win.export_release() is not None
    _idle(qtbot, win)
    assert dialogs.last() == ("getSaveFileName", str(new))
    assert not win.errors, win.errors
    assert (new.parent / "census_release_1 (2)" / "release.csv").is_file()
    # the budget statement: the table's name too
    dialogs.answers = [""]
    win.export_statement()
    assert dialogs.last() == ("getSaveFileName", str(new.parent / "census_budget_statement.pdf"))


def test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it(
    qtbot: Any, dialogs: Dialogs, table: Path, tmp_path: Path, dpdesk_home: Path
) -> None:
    win = _window(qtbot, dpdesk_home)
    _open_table(qtbot, win, table)
    assert not win.plan_offer.isVisible()  # nothing remembered yet
    assert win.open_plan(str(PLAN))
    mine = tmp_path / "mine_plan.json"
    dialogs.answers = [str(mine)]
    assert win.save_plan(ask=True) and mine.is_file()
    _close(win)

    again = _window(qtbot, dpdesk_home)
    other = tmp_path / "other.csv"
    shutil.copy(table, other)
    _open_table(qtbot, again, other)
    assert not again.plan_offer.isVisible()  # a table never used with a plan
    _open_table(qtbot, again, table)
    offer = again.plan_offer
    assert offer.isVisible() and offer.text() == "Open its last plan (mine_plan.json)", offer.text()
    assert again.state.plan_path is None  # offered, not opened
    qtbot.mouseClick(offer, Qt.MouseButton.LeftButton)
    assert again.state.plan_path == mine and not again.errors, again.errors
    assert again.state.plan_data["queries"] and not offer.isVisible()
    _close(again)

    third = _window(qtbot, dpdesk_home)
    _open_table(qtbot, third, table)
    assert third.plan_offer.isVisible()
    another = tmp_path / "another_plan.json"
    shutil.copy(PLAN, another)
    assert third.open_plan(str(another))  # another plan opened: the offer is withdrawn
    assert not third.plan_offer.isVisible() and third.state.plan_path == another
    _close(third)

    another.unlink()  # the table's last plan now, and no longer there: not offered
    fourth = _window(qtbot, dpdesk_home)
    _open_table(qtbot, fourth, table)
    assert not fourth.plan_offer.isVisible()
    _close(fourth)
