"""One local Spark session for the Spark tests (about ten seconds to start), stopped at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from dpdesk.core.release.engines.spark.session import SparkTarget, start

    session = start(SparkTarget(master="local[2]"))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Every test here starts Spark: marked ``spark`` and ``slow`` (the inner loop, ``-m "not slow"``, skips them;
    the README's command runs them)."""
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.slow)
