"""One local Spark session for the Spark tests (about ten seconds to start), and one Spark Connect server for the
Spark Connect tests (about fifteen, :mod:`tests.spark.connect_server`), each stopped at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from dpdesk.core.release.engines.spark.session import SparkTarget, start

    # (its catalog's default database in a temporary folder: tests/conftest.py's pytest_configure)
    session = start(SparkTarget(master="local[2]"))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_server() -> Iterator[Any]:
    """A Spark Connect server on 127.0.0.1 (``.address``: ``sc://127.0.0.1:PORT``), stopped at the end even when
    a test failed; the fixture checks that its process is gone."""
    pytest.importorskip("pyspark")
    from tests.spark.connect_server import ConnectServer

    server = ConnectServer().start()
    process = server.process
    try:
        yield server
    finally:
        server.stop()
    assert process is not None and process.poll() is not None, "the Spark Connect server is still running"


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Every test here starts Spark: marked ``spark`` and ``slow`` (the inner loop, ``-m "not slow"``, skips them;
    the README's command runs them)."""
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.slow)
