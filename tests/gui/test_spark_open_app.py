"""Issue 32 in the app, a table only the cluster reads: File > Open Spark table names a catalog table or a folder (the
dialog checks it and that Spark is chosen), the app reads its header only through Spark (no row comes to the
desktop), remembers the source (never a token) among the recent tables, and releases it through Spark with the
ledger found by the key Spark named it with, as ``dpdesk ledger --data table:NAME`` finds it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from dpdesk.core.release.engines.spark.header import SparkHeader, kind_of
from dpdesk.core.release.engines.spark.session import SparkTarget, pyspark_missing
from dpdesk.gui.state import ClusterSource
from dpdesk.gui.views.engine_dialog import HERE, LOCAL, REMOTE, EngineChoice
from dpdesk.gui.views.spark_dialog import SparkDialog, cluster_source
from tests.gui.conftest import Desk

pytestmark = [pytest.mark.timeout(600)]

TOKEN = "s3cr3t-T0ken"


def press_open(dialog: SparkDialog) -> bool:
    """Press Open; whether the dialog closed accepted."""
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open).click()
    return dialog.result() == QDialog.DialogCode.Accepted


def spends(home: Path) -> int:
    return sum(
        1
        for f in (home / "ledgers").glob("*.jsonl")
        for line in f.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") == "spend"
    )


def test_a_source_is_named_as_the_command_line_names_it() -> None:
    assert cluster_source(" people ", catalog=True) == "table:people"
    assert cluster_source("table:db.people", catalog=True) == "table:db.people"
    assert cluster_source("table:db.people", catalog=False) == "table:db.people"
    assert cluster_source(" hdfs://nn/data/people ", catalog=False) == "hdfs://nn/data/people"
    assert [
        kind_of(t) for t in ("bigint", "int", "double", "decimal(10,2)", "string", "date", "timestamp")
    ] == [
        "int",
        "int",
        "float",
        "float",
        "category",
        "category",
        None,
    ]


def test_the_dialog_checks_the_source_and_the_engine_in_words(qtbot: Any, tmp_path: Path) -> None:
    chosen: list[EngineChoice] = []

    def choose() -> EngineChoice:
        chosen.append(EngineChoice(LOCAL, 1, ""))
        return chosen[-1]

    dialog = SparkDialog(None, EngineChoice(), choose)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.catalog.isChecked() and not dialog.encoding.isEnabled()
    assert not press_open(dialog) and "Name the catalog table" in dialog.error.text()
    dialog.table.setText("people")
    assert not dialog.error.isVisibleTo(dialog)  # typing again hides the old message
    assert "Spark must be chosen" in dialog.engine_label.text()
    assert not press_open(dialog) and "Choose Spark first" in dialog.error.text()
    dialog.engine_button.click()  # the engine dialog, from here
    assert chosen and "local[1]" in dialog.engine_label.text()
    assert press_open(dialog) and dialog.opened() == ClusterSource("table:people")
    # a folder: Parquet or CSV by its name, the CSV's options only for a CSV
    folder = tmp_path / "parts.csv"
    folder.mkdir()
    again = SparkDialog(None, EngineChoice(LOCAL, 1, ""))
    qtbot.addWidget(again)
    again.show()
    assert not again.engine_button.isVisible()
    again.files.setChecked(True)
    for path, says in (
        (str(tmp_path / "nowhere"), "no such folder"),
        (str(tmp_path / "a[1]"), "wildcards"),
    ):
        if "[" in path:
            Path(path).mkdir()
        again.path.setText(path)
        assert not press_open(again) and says in again.error.text(), (path, again.error.text())
    a_file = tmp_path / "t.parquet"
    a_file.write_bytes(b"PAR1")
    again.path.setText(str(a_file))
    assert not press_open(again) and "File > Open table" in again.error.text()
    # an address with a password in it is refused, the password hidden in the message (and never remembered)
    again.path.setText("s3a://AKIA1:" + TOKEN + "@bucket/people")
    assert not press_open(again) and "holds a password" in again.error.text()
    assert "s3a://AKIA1:***@bucket/people" in again.error.text() and TOKEN not in again.error.text()
    again.path.setText(str(folder))
    assert again.encoding.isEnabled() and "CSV" in again.format.text()
    again.encoding.setText("klingon")
    assert not press_open(again) and "UTF-8, ISO-8859-1" in again.error.text()
    again.encoding.setText("latin-1")
    again.delimiter.setText(";")
    assert press_open(again) and again.opened() == ClusterSource(str(folder), "latin-1", ";")
    parquet = tmp_path / "parts"
    parquet.mkdir()
    again.path.setText(str(parquet))
    assert not again.encoding.isEnabled() and "Parquet" in again.format.text()
    assert again.opened() == ClusterSource(str(parquet))  # no CSV options for Parquet
    # the last source fills the dialog
    last = SparkDialog(ClusterSource("table:db.people"), EngineChoice(LOCAL, 1, ""))
    qtbot.addWidget(last)
    assert last.catalog.isChecked() and last.table.text() == "db.people"


def test_without_pyspark_the_dialog_says_what_to_install(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from dpdesk.core.release.engines.spark import session

    monkeypatch.setattr(session, "pyspark_installed", lambda: False)
    dialog = SparkDialog(None, EngineChoice(LOCAL, 1, ""))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.missing.isVisible() and dialog.missing.text() == pyspark_missing()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Open).isEnabled()


def test_the_source_is_remembered_and_no_token_is(
    desk: Callable[[], Desk], dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.release.engines.spark import header

    d = desk()
    win = d.win
    asked: list[tuple[str, SparkTarget]] = []

    def fake_header(source: str, target: SparkTarget, **_kw: Any) -> SparkHeader:
        asked.append((source, target))
        return SparkHeader(source, ("x", "n", "g", "when"), ("float", "int", "category", None), ())

    monkeypatch.setattr(header, "spark_header", fake_header)
    address = f"sc://127.0.0.1:15002;token={TOKEN}"
    win.ask_engine = lambda _c: EngineChoice(REMOTE, 2, address)
    assert win.choose_engine() is not None
    win.ask_spark_source = lambda last, engine: ClusterSource("table:people")
    assert win.open_spark() is not None
    d.idle()
    assert not win.errors, win.errors
    assert asked == [("table:people", SparkTarget(remote=address))]
    s = win.state
    assert s.cluster == ClusterSource("table:people") and s.peek is not None and s.peek.rows == ()
    assert s.peek.header == ("x", "n", "g", "when")
    assert s.suggested == {"x": "float", "n": "int", "g": "category"}  # a type Spark cannot give: none
    assert s.sha256 is None and s.dataset_id is None and not s.ledger_entries  # no release yet
    assert win.schema_view.preview_model.rowCount() == 0
    assert "read by Spark" in win.schema_view.file_label.text()
    assert win.recent_files()[0] == "table:people"
    win.settings.sync()
    saved = (dpdesk_home / "settings.ini").read_text(encoding="utf-8")
    assert "table:people" in saved and TOKEN not in saved
    # reopened from the recent tables: with Spark again, not as a file
    assert win.open_path("table:people") is not None
    d.idle()
    assert len(asked) == 2 and not win.errors
    # with this computer chosen, it is said, and nothing is asked of Spark
    win.ask_engine = lambda _c: EngineChoice(HERE, 2, "")
    win.choose_engine()
    assert win.open_path("table:people") is None
    assert len(asked) == 2 and "choose Apache Spark" in win.errors.pop()
    assert win.release() is None and "choose Apache Spark" in win.errors.pop()


def test_an_unreadable_table_is_one_message(
    desk: Callable[[], Desk], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.release.engines.spark import header

    d = desk()
    win = d.win

    def absent(source: str, target: SparkTarget, **_kw: Any) -> SparkHeader:
        raise InputError(source, "Spark cannot read it ([TABLE_OR_VIEW_NOT_FOUND] ...)")

    monkeypatch.setattr(header, "spark_header", absent)
    win.ask_engine = lambda _c: EngineChoice(LOCAL, 1, "")
    win.choose_engine()
    win.ask_spark_source = lambda last, engine: ClusterSource("table:nobody")
    before = win.state.data_path
    assert win.open_spark() is not None
    d.idle()
    QThreadPool.globalInstance().waitForDone(30_000)
    assert len(win.errors) == 1 and "TABLE_OR_VIEW_NOT_FOUND" in win.errors[0]
    assert "Traceback" not in win.errors[0] and win.state.cluster is None and win.state.data_path == before


# ---------------------------------------------------------------------------------------------- on local Spark
@pytest.fixture(scope="module")
def local_spark() -> Iterator[Any]:
    """Spark local[1] for this file's Spark tests (the app's choice below), stopped at the end."""
    pytest.importorskip("pyspark")
    from dpdesk.core.release.engines.spark.session import start

    session = start(SparkTarget(master="local[1]"))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    QThreadPool.globalInstance().waitForDone(30_000)
    session.stop()


ROW_READERS = (
    "collect",
    "take",
    "head",
    "first",
    "count",
    "toPandas",
    "toLocalIterator",
    "tail",
    "show",
    "toArrow",
)


def rows_watched(monkeypatch: pytest.MonkeyPatch, session: Any) -> list[str]:
    """Every call that would bring a frame's rows (or their count) to the desktop, recorded; Spark itself is the
    running session (its start and canary are not the table's rows)."""
    from pyspark.sql import DataFrame

    from dpdesk.core.release.engines.spark import header

    monkeypatch.setattr(header, "start", lambda target: session)
    calls: list[str] = []
    # pyspark 4's frames are of a subclass (classic or Spark Connect) that defines these methods itself
    for cls in {DataFrame, type(session.range(0))}:
        for name in ROW_READERS:
            if name not in vars(cls):
                continue
            original = vars(cls)[name]

            def spy(self: Any, *a: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
                calls.append(_name)
                return _original(self, *a, **kw)

            monkeypatch.setattr(cls, name, spy)
    session.range(3).count()  # the spies see a frame's rows being counted (the check can fail)
    assert calls == ["count"]
    calls.clear()
    return calls


def small_plan() -> dict[str, Any]:
    from dpdesk.core.model.spec import plan_to_dict
    from tests.core.test_engines import make_plan

    d = plan_to_dict(make_plan(None))
    d["queries"] = d["queries"][:3]
    d["budget"] = {"epsilon": 100.0}
    return d


def parquet_folder(session: Any, tmp_path: Path) -> Path:
    from dpdesk.core.release.engines.spark.session import SparkSource, read
    from tests.core.test_engines import write_table

    data = tmp_path / "t.csv"
    write_table(data, 600, seed=5, with_id=False)
    folder = tmp_path / "parts"
    read(session, SparkSource("csv", "file:" + str(data)), None, None).repartition(2).write.parquet(
        str(folder)
    )
    return folder


@pytest.mark.spark
@pytest.mark.slow
def test_opening_a_catalog_table_or_a_folder_reads_its_header_and_no_row(
    desk: Callable[[], Desk], local_spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.release.engines.spark.session import SparkSource, read
    from tests.core.test_engines import write_table

    data = tmp_path / "c.csv"
    write_table(data, 50, seed=2, with_id=False)
    frame = read(local_spark, SparkSource("csv", "file:" + str(data)), None, None)
    frame.write.mode("overwrite").option("path", str(tmp_path / "tables" / "people_open")).saveAsTable(
        "people_open"
    )
    folder = parquet_folder(local_spark, tmp_path)
    d = desk()
    win = d.win
    calls = rows_watched(monkeypatch, local_spark)
    win.ask_engine = lambda _c: EngineChoice(LOCAL, 1, "")
    win.choose_engine()
    for source, header in (("table:people_open", ("x", "n", "g")), (str(folder), ("x", "n", "g"))):
        win.ask_spark_source = lambda last, engine, source=source: ClusterSource(source)
        assert win.open_spark() is not None
        d.qtbot.waitUntil(lambda: win.job is None, timeout=280_000)
        assert not win.errors, win.errors
        s = win.state
        assert s.cluster is not None and s.cluster.source == source
        assert s.peek is not None and s.peek.header == header and s.peek.rows == ()
        assert win.schema_view.preview_model.rowCount() == 0
        assert calls == [], calls  # no row (nor their count) came to the desktop


@pytest.mark.spark
@pytest.mark.slow
def test_a_folder_released_from_the_app_goes_through_spark_and_is_charged_once(
    desk: Callable[[], Desk], local_spark: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    from dpdesk.core.ledger.contents import cluster_table_key
    from dpdesk.core.release.engines.spark import engine as spark_engine

    folder = parquet_folder(local_spark, tmp_path)
    d = desk()
    win = d.win
    win.ask_engine = lambda _c: EngineChoice(LOCAL, 1, "")
    win.choose_engine()
    win.state.load_plan_data(small_plan(), None)
    win.ask_spark_source = lambda last, engine: ClusterSource(str(folder))
    assert win.open_spark() is not None
    d.qtbot.waitUntil(lambda: win.job is None, timeout=280_000)
    assert not win.errors and win.state.sha256 is None  # a table never released: no ledger yet
    engines: list[Any] = []
    real = spark_engine.SparkEngine

    def watched(*a: Any, **kw: Any) -> Any:
        engines.append(real(*a, **kw))
        return engines[-1]

    spark_engine.SparkEngine = watched  # type: ignore[misc]
    try:
        assert win.release() is not None
        d.qtbot.waitUntil(
            lambda: win.job is None and (bool(win.state.results) or bool(win.errors)), timeout=500_000
        )
    finally:
        spark_engine.SparkEngine = real  # type: ignore[misc]
    assert win.state.results and not win.errors, win.errors
    assert len(engines) == 1 and engines[0].cluster_only  # aggregated by Spark, named by its content
    ((_title, text),) = d.asked[-1:]
    assert "aggregated by Spark at local[1]" in text
    assert spends(dpdesk_home) == 1
    # the ledger of the table, found by the key Spark named it with (as `dpdesk ledger --data FOLDER`)
    key = cluster_table_key(dpdesk_home, folder)
    assert key is not None and win.state.sha256 == key
    assert win.state.dataset_id is not None and len(win.state.ledger_entries) >= 1
    out = tmp_path / "package"
    win.ask_folder = lambda *_a: str(out)
    assert win.export_release() is not None
    d.idle()
    assert not win.errors, win.errors
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    assert spends(dpdesk_home) == 1  # exporting costs nothing


def test_with_a_server_elsewhere_a_path_of_this_computer_is_refused_and_an_address_is_not(
    qtbot: Any, tmp_path: Path
) -> None:
    """A Spark Connect server that is not this computer reads its own files: a bare path (a folder here, or one
    that exists only on the cluster) is refused in words, naming the address form; a cluster address and a catalog
    table are opened; the same folder with Spark on this computer is opened."""
    folder = tmp_path / "parts"
    folder.mkdir()
    elsewhere = EngineChoice(REMOTE, 2, f"sc://spark.example.org:15002;use_ssl=true;token={TOKEN}")
    dialog = SparkDialog(None, elsewhere)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.files.setChecked(True)
    assert not dialog.browse.isEnabled()  # no browsing this computer's folders for a server elsewhere
    for path in (str(folder), "/warehouse/people"):
        dialog.path.setText(path)
        assert not press_open(dialog) and "hdfs://" in dialog.error.text(), (path, dialog.error.text())
        assert TOKEN not in dialog.error.text()
    dialog.path.setText("hdfs://nn:8020/warehouse/people")
    assert press_open(dialog) and dialog.opened() == ClusterSource("hdfs://nn:8020/warehouse/people")
    here = SparkDialog(None, EngineChoice(LOCAL, 1, ""))
    qtbot.addWidget(here)
    here.show()
    here.files.setChecked(True)
    assert here.browse.isEnabled()
    here.path.setText(str(folder))
    assert press_open(here) and here.opened() == ClusterSource(str(folder))
