"""Issue 32 in the app: File > Aggregation engine chooses where a release's exact statistics are computed (this
computer, Spark inside dpdesk on N cores, or a Spark Connect server); the address is checked when the dialog is
confirmed, a token in it is kept for the session only, the choice is remembered, and the release asks the chosen
Spark (``ReleaseRequest.spark``), charging nothing when Spark cannot be had."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.release.engines.spark.session import SparkTarget, SparkUnavailable, pyspark_missing
from dpdesk.gui.views.engine_dialog import HERE, LOCAL, REMOTE, EngineChoice, EngineDialog
from tests.gui.conftest import Desk

pytestmark = [pytest.mark.timeout(300)]

TOKEN = "s3cr3t-T0ken"


def spends(home: Path) -> int:
    """The spend entries of every ledger in ``home``."""
    return sum(
        1
        for f in (home / "ledgers").glob("*.jsonl")
        for line in f.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") == "spend"
    )


def confirm(dialog: EngineDialog) -> bool:
    """Press OK; whether the dialog closed accepted."""
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    return dialog.result() == QDialog.DialogCode.Accepted


def test_the_dialog_refuses_a_bad_address_in_words_and_keeps_a_good_one(qtbot: Any) -> None:
    dialog = EngineDialog(EngineChoice())
    qtbot.addWidget(dialog)
    assert dialog.here.isChecked() and dialog.choice() == EngineChoice(HERE, 2, "")  # the default
    dialog.remote.setChecked(True)
    for address, says in (
        ("", "sc://HOST:PORT;use_ssl=true;token=TOKEN"),
        ("http://spark.example.org:15002", "is not a Spark Connect address"),
        ("sc://spark.example.org:15002", "add ;use_ssl=true;token=TOKEN to the address"),
        ("sc://spark.example.org:15002;use_ssl=true", "TLS and a token"),
    ):
        dialog.address.setText(address)
        assert not confirm(dialog), address
        assert dialog.error.isVisibleTo(dialog) and says in dialog.error.text(), (
            address,
            dialog.error.text(),
        )
        dialog.address.setText(address + " ")  # typing again hides the old message
        assert not dialog.error.isVisibleTo(dialog)
    elsewhere = f"sc://spark.example.org:15002;use_ssl=true;token={TOKEN}"
    dialog.address.setText(elsewhere)  # a cluster's server, with TLS and a token: for the cluster's tables
    assert confirm(dialog) and dialog.choice().target() == SparkTarget(remote=elsewhere)
    dialog.setResult(0)
    dialog.address.setText(f"sc://127.0.0.1:15002;token={TOKEN}")
    assert dialog.token_note.isVisibleTo(dialog)  # said: the token is for this session only
    assert confirm(dialog)
    assert dialog.choice() == EngineChoice(REMOTE, 2, f"sc://127.0.0.1:15002;token={TOKEN}")
    local = EngineDialog(EngineChoice(LOCAL, 3, ""))
    qtbot.addWidget(local)
    assert local.local.isChecked() and local.cores.value() == 3 and not local.token_note.isVisibleTo(local)
    assert confirm(local) and local.choice().target() == SparkTarget(master="local[3]")


def test_without_pyspark_the_spark_choices_are_shown_with_what_to_install(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.release.engines.spark import session

    monkeypatch.setattr(session, "pyspark_installed", lambda: False)
    dialog = EngineDialog(EngineChoice())
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.local.isVisible() and dialog.remote.isVisible()
    assert not dialog.local.isEnabled() and not dialog.remote.isEnabled()
    assert dialog.missing.isVisible() and dialog.missing.text() == pyspark_missing()
    assert "pip install 'dpdesk[spark]'" in dialog.missing.text()
    assert confirm(dialog) and dialog.choice().kind == HERE


def test_the_choice_is_remembered_and_its_token_is_not(qtbot: Any, dpdesk_home: Path) -> None:
    from dpdesk.gui.app import build

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    win.show_error = lambda message, details="": pytest.fail(message)
    assert win.releasing.engine_choice() == EngineChoice()  # this computer, by default
    address = f"sc://127.0.0.1:15002;use_ssl=true;token={TOKEN}"
    win.ask_engine = lambda choice: EngineChoice(REMOTE, 4, address)
    assert win.engine_action.text() and win.choose_engine() is not None
    assert "sc://127.0.0.1:15002" in win.status_label.text() and TOKEN not in win.status_label.text()
    assert win.releasing.engine_choice() == EngineChoice(REMOTE, 4, address)  # the session keeps the token
    win.settings.sync()
    saved = (dpdesk_home / "settings.ini").read_text(encoding="utf-8")
    assert TOKEN not in saved and "token" not in saved and "sc://127.0.0.1:15002;use_ssl=true" in saved
    # the next session: the settings' choice, without the token
    _app, again = build(dpdesk_home)
    qtbot.addWidget(again)
    assert again.releasing.engine_choice() == EngineChoice(REMOTE, 4, "sc://127.0.0.1:15002;use_ssl=true")
    again.ask_engine = lambda choice: EngineChoice(LOCAL, 1, choice.remote)
    again.choose_engine()
    assert again.session_remote is None
    again.settings.sync()
    _app, third = build(dpdesk_home)
    qtbot.addWidget(third)
    assert third.releasing.engine_choice().target() == SparkTarget(master="local[1]")


@pytest.mark.slow
def test_the_release_asks_the_chosen_engine_and_charges_nothing_when_spark_cannot_be_had(
    desk: Callable[[], Desk], dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpdesk.services.release as service
    from dpdesk.core.release.engines.spark import engine as spark_engine

    d = desk()
    win = d.win
    requests: list[Any] = []

    def capture(request: Any, progress: Any = None, **_kw: Any) -> Any:
        requests.append(request)
        raise DpdeskError("stopped by the test")

    with monkeypatch.context() as m:
        m.setattr(service, "prepare_plan_release", capture)
        for choice, target in (
            (EngineChoice(LOCAL, 1, ""), SparkTarget(master="local[1]")),
            (EngineChoice(REMOTE, 2, "sc://localhost:15002"), SparkTarget(remote="sc://localhost:15002")),
            (EngineChoice(HERE, 1, "sc://localhost:15002"), None),
        ):
            win.ask_engine = lambda _c, choice=choice: choice
            win.choose_engine()
            assert win.release() is not None
            d.idle()
            assert requests[-1].spark == target and requests[-1].data == d.data
            assert win.errors.pop() == "stopped by the test"
    # a remembered address refused now (its token was not kept): said before anything runs
    win.settings.setValue("release/engine", REMOTE)
    win.settings.setValue("release/spark_remote", "sc://spark.example.org:15002;use_ssl=true")
    assert win.release() is None
    assert len(win.errors) == 1 and "token" in win.errors.pop()
    # Spark cannot be had (here: as if pyspark were not installed): one message, nothing charged
    win.settings.setValue("release/engine", LOCAL)

    def unavailable(target: SparkTarget) -> Any:
        raise SparkUnavailable(pyspark_missing())

    monkeypatch.setattr(spark_engine, "start", unavailable)
    assert win.release() is not None
    d.idle()
    QThreadPool.globalInstance().waitForDone(30_000)
    assert win.errors == [pyspark_missing()] and not d.asked
    assert spends(dpdesk_home) == 0 and not win.state.results


@pytest.mark.spark
@pytest.mark.slow
def test_a_release_aggregated_by_spark_in_the_app_is_charged_once_and_exported(
    desk: Callable[[], Desk], dpdesk_home: Path, tmp_path: Path
) -> None:
    pytest.importorskip("pyspark")
    from pyspark import SparkContext

    from dpdesk.core.release.engines.spark.session import start

    # an earlier choice's Spark still runs in the process (local[2]): the release starts the one now chosen
    start(SparkTarget(master="local[2]"))
    d = desk()
    win = d.win
    win.ask_engine = lambda _c: EngineChoice(LOCAL, 1, "")
    try:
        released(d, dpdesk_home, tmp_path)
        context = SparkContext._active_spark_context
        assert context is not None and context.master == "local[1]"
    finally:  # the process keeps a local session: stopped, so that the next test's Spark starts as it asks
        QThreadPool.globalInstance().waitForDone(30_000)
        context = SparkContext._active_spark_context
        if context is not None:
            context.stop()


def released(d: Desk, home: Path, tmp_path: Path) -> None:
    """Release with Spark through the window, then export the package."""
    win = d.win
    assert win.choose_engine() is not None
    assert win.release() is not None
    d.qtbot.waitUntil(
        lambda: win.job is None and (bool(win.state.results) or bool(win.errors)), timeout=280_000
    )
    assert win.state.results and not win.errors, win.errors
    ((_title, text),) = d.asked
    assert "aggregated by Spark at local[1]" in text
    assert spends(home) == 1
    out = tmp_path / "package"
    win.ask_folder = lambda *_a: str(out)
    assert win.export_release() is not None
    d.idle()
    assert not win.errors, win.errors
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    assert spends(home) == 1  # exporting costs nothing


def test_a_server_elsewhere_releases_the_clusters_tables_and_never_a_file_opened_here(
    desk: Callable[[], Desk], dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Spark Connect server that is not this computer is for tables only the cluster reads (File > Open Spark
    table): the app asks it to release such a table, and refuses, in words and before anything runs, to release
    the file opened from this computer with it (the server would read a file of its own at that path)."""
    import dpdesk.services.release as service
    from dpdesk.core.release.engines.spark import header
    from dpdesk.core.release.engines.spark.header import SparkHeader
    from dpdesk.gui.state import ClusterSource
    from tests.gui.test_spark_open_app import small_plan

    d = desk()
    win = d.win
    address = f"sc://spark.example.org:15002;use_ssl=true;token={TOKEN}"
    win.ask_engine = lambda _c: EngineChoice(REMOTE, 2, address)
    assert win.choose_engine() is not None and not win.errors
    assert "Open Spark table" in win.status_label.text() and TOKEN not in win.status_label.text()
    requests: list[Any] = []

    def capture(request: Any, progress: Any = None, **_kw: Any) -> Any:
        requests.append(request)
        raise DpdeskError("stopped by the test")

    monkeypatch.setattr(service, "prepare_plan_release", capture)
    assert win.release() is None  # the file opened here: refused, nothing asked of the server
    assert not requests and "is not this computer" in win.errors.pop() and not win.errors
    asked: list[SparkTarget] = []

    def fake_header(source: str, target: SparkTarget, **_kw: Any) -> SparkHeader:
        asked.append(target)
        return SparkHeader(source, ("x", "n", "g"), ("float", "int", "category"), ())

    monkeypatch.setattr(header, "spark_header", fake_header)
    win.state.load_plan_data(small_plan(), None)
    win.ask_spark_source = lambda last, engine: ClusterSource("table:people")
    assert win.open_spark() is not None
    d.idle()
    assert not win.errors, win.errors
    assert asked == [SparkTarget(remote=address)]
    assert win.release() is not None  # the cluster's table: released by the cluster's server
    d.idle()
    assert win.errors.pop() == "stopped by the test" and not win.errors
    assert len(requests) == 1 and requests[0].spark == SparkTarget(remote=address)
    assert requests[0].data == "table:people"
    assert spends(dpdesk_home) == 0
