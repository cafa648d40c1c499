"""Long work off the GUI thread: a QRunnable on the global pool, reporting through queued signals.

A job is a plain function that takes a :class:`dpdesk.core.common.progress.Progress`; the worker's
progress adapter turns its updates into a ``progress`` signal and its ``cancel()`` stops the
job at its next check. Workers never touch widgets.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from dpdesk.core.common.errors import Cancelled, DpdeskError
from dpdesk.core.common.progress import Progress

log = logging.getLogger(__name__)


class WorkerSignals(QObject):
    """Signals: progress(done, total, stage), finished(result), failed(message, details), cancelled()."""

    progress = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()


class Worker(QRunnable):
    """Runs ``job(progress)`` on the thread pool."""

    def __init__(self, job: Callable[[Progress], Any]) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.job = job
        self.signals = WorkerSignals()
        self.progress = Progress(self._report)

    def _report(self, done: int, total: int, stage: str) -> None:
        # scale to int range for the signal
        if total > 2**30:
            done, total = done * 1000 // total, 1000
        self.signals.progress.emit(int(done), int(total), stage)

    def cancel(self) -> None:
        """Ask the job to stop at its next check (thread-safe)."""
        self.progress.cancel()

    def run(self) -> None:
        try:
            result = self.job(self.progress)
        except Cancelled:
            self.signals.cancelled.emit()
        except DpdeskError as exc:
            self.signals.failed.emit(str(exc), "")
        except Exception as exc:  # an unexpected bug: logged with its traceback, shown briefly
            log.exception("unexpected error in a background job")
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        else:
            self.signals.finished.emit(result)


def start(worker: Worker, pool: QThreadPool | None = None) -> Worker:
    """Start a worker on the given pool (default: the global pool)."""
    (pool or QThreadPool.globalInstance()).start(worker)
    return worker
