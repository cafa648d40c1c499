"""Garbage collection happens on the GUI thread only (a collection in a worker can destroy Qt objects and crash)."""

from __future__ import annotations

import gc
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more


def test_no_collection_runs_in_a_worker_thread(qtbot: Any, dpdesk_home: Path, tmp_path: Path) -> None:
    """Open a table (its loading runs in a worker and allocates many objects) and record every collection's thread.

    Without the guard the interpreter collects in whichever thread crosses the threshold, the loader worker
    among them; with it, only the GUI thread collects, and it still does.
    """
    threads: list[int] = []

    def record(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            threads.append(threading.get_ident())

    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    data = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", data)
    gc.callbacks.append(record)
    try:
        for _ in range(3):
            window.open_data(str(data))
            qtbot.waitUntil(lambda: window.state.sha256 is not None and window.job is None, timeout=60_000)
            junk = [[i] for i in range(20_000)]  # allocations on the GUI thread, so that a collection is due
            for item in junk:
                item.append(item)  # cycles
            del junk
            qtbot.wait(1_200)  # the guard's timer fires
    finally:
        gc.callbacks.remove(record)
        QThreadPool.globalInstance().waitForDone(30_000)
    main = threading.main_thread().ident
    assert threads, "no collection at all: the guard must still collect"
    assert set(threads) == {main}, f"{sum(t != main for t in threads)} collections ran off the GUI thread"
