"""The app's flows go through the service layer, not beside it (issue 12, item 4): the budget meter is the budget
service's report, the fit dialog follows the service's accuracy rule, and a review runs as a worker job."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

from dpdesk.core.common.errors import Cancelled
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.publish.package import PACKAGE_FILES
from dpdesk.gui.app import build
from dpdesk.services import Dataset
from dpdesk.services.budget import BudgetRequest, plan_budget
from dpdesk.services.release import ReleaseRequest, release_plan
from dpdesk.services.review import ReviewRequest, review_path
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
PLAN = SAMPLES / "cps_wages_plan.json"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", p)
    return p


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


def open_table(qtbot: Any, win: Any, path: Path) -> None:
    win.open_data(str(path))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)


def test_the_meter_shows_the_budget_services_report_of_the_datasets_ledger(
    qtbot: Any, win: Any, data: Path, dpdesk_home: Path
) -> None:
    """After a release from the command line's service, the app's meter holds exactly the report the budget
    service gives for the same plan and dataset (what was spent subtracted: 0.9 of 1.0)."""
    plan = load_plan(PLAN)
    release_plan(ReleaseRequest(plan, data, dpdesk_home))
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    shown = win.state.report
    service = plan_budget(BudgetRequest(plan, Dataset(dpdesk_home, data))).report
    assert shown is not None and shown.remaining_before.epsilon == pytest.approx(0.1)  # the spend counts
    assert shown.to_dict() == service.to_dict()
    assert not shown.fits and not win.release_action.isEnabled()


def test_the_fit_dialog_follows_the_services_accuracy_rule(
    qtbot: Any, win: Any, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which queries keep their epsilon is the service's rule, read by the dialog and the fit alike: a rule
    that keeps 'people' (a plain count) locks its row, keeps its 0.1, and shares the other 0.9."""
    import dpdesk.services.budget as budget_service

    monkeypatch.setattr(budget_service, "keeps_epsilon", lambda query: query.name == "people")
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    seen: list[list[bool]] = []

    def drive(dialog: Any) -> bool:
        seen.append([lock.isChecked() and not lock.isEnabled() for lock in dialog.locks])
        return bool(dialog.apply_button.isEnabled())

    win.query_form.exec_dialog = drive
    win.query_form.fit_to_budget()
    assert seen == [[True, False, False, False, False, False]]
    eps = [q["epsilon"] for q in win.state.plan_data["queries"]]
    assert eps[0] == 0.1 and sum(eps[1:]) == pytest.approx(0.9, rel=1e-5) and sum(eps) <= 1.0


def test_a_review_runs_in_the_worker_not_on_the_gui_thread(
    qtbot: Any, win: Any, data: Path, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reviewing a package hashes its files: the service runs in the worker thread (the window stays live),
    and the review window opens with its verdict when the job is done."""
    import dpdesk.services.review as review_service

    out = tmp_path / "pkg"
    release_plan(ReleaseRequest(load_plan(PLAN), data, dpdesk_home, out))
    threads: list[threading.Thread] = []

    def recorded(request: ReviewRequest, progress: Progress = NULL_PROGRESS) -> Any:
        threads.append(threading.current_thread())
        return review_path(request, progress)

    monkeypatch.setattr(review_service, "review_path", recorded)
    greyed: list[bool] = []
    win.review_action.changed.connect(lambda: greyed.append(not win.review_action.isEnabled()))
    win.review(str(out))
    qtbot.waitUntil(
        lambda: win.job is None and getattr(win, "review_window", None) is not None, timeout=60_000
    )
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    assert "Intact" in win.review_window.status.text() and win.errors == []
    assert greyed[:1] == [True] and win.review_action.isEnabled()  # greyed out while the job ran


def test_the_review_service_reports_its_files_and_can_be_cancelled(dpdesk_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    release_plan(ReleaseRequest(load_plan(PLAN), SAMPLES / "census_sample.csv", dpdesk_home, out))
    seen: list[tuple[int, int, str]] = []
    assert review_path(ReviewRequest(out), Progress(lambda *a: seen.append(a))).intact
    n = len(PACKAGE_FILES)  # the files whose SHA-256 the package entry records (its ledger.json is read)
    assert [s for s in seen if s[2] == "hashing"] == [(i, n, "hashing") for i in range(n)]
    stopped = Progress()
    stopped.cancel()
    with pytest.raises(Cancelled):
        review_path(ReviewRequest(out), stopped)
