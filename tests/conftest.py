"""Shared test set-up: headless Qt, a private dpdesk home per test, English messages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LANGUAGE"] = "en"

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "resources" / "samples"


def pytest_configure(config: pytest.Config) -> None:
    """A local Spark started by any test (the Spark tests', the app's) keeps its catalog's default database in a
    temporary folder, not in the working one: set before the first Spark starts its JVM, which reads it once."""
    import tempfile

    if "PYSPARK_SUBMIT_ARGS" not in os.environ:
        warehouse = tempfile.mkdtemp(prefix="dpdesk-tests-spark-warehouse-")
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--conf spark.sql.warehouse.dir={warehouse} pyspark-shell"
        config.stash[_WAREHOUSE] = warehouse


_WAREHOUSE = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    warehouse = config.stash.get(_WAREHOUSE, None)
    if warehouse is not None:
        shutil.rmtree(warehouse, ignore_errors=True)


@pytest.fixture(autouse=True)
def dpdesk_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own DPDESK_HOME, so no test ever touches a real ledger."""
    home = tmp_path / "dpdesk-home"
    monkeypatch.setenv("DPDESK_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _gc_on_the_gui_thread() -> Iterator[None]:
    """After a test that built the app: wait for its workers, then give garbage collection back to Python."""
    yield
    guard = sys.modules.get("dpdesk.gui.gc_guard")
    if guard is not None and guard.installed():
        from PySide6.QtCore import QThreadPool

        QThreadPool.globalInstance().waitForDone(120_000)
        guard.uninstall()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    """One real PostgreSQL server for the session (``tests/pgserver.py``: the team ledger's tests and the database
    data source's), started on first use and removed at the end; skipped where PostgreSQL is not installed."""
    from tests.pgserver import PgServer

    server = PgServer().start()
    try:
        yield server
    finally:
        server.remove()
