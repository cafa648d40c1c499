"""Python's cyclic garbage collector runs only on the GUI thread while the app is up.

Python collects reference cycles in whichever thread happens to allocate when a threshold is crossed. A
worker thread that triggers a collection can then destroy a Qt object (a finished worker's signals, a closed
window's wrappers) that lives on the GUI thread, and Qt crashes the process (a segmentation fault seen in the
test suite, collected inside a loader worker). The guard turns automatic collection off and collects from a
timer on the GUI thread instead, with the same generation thresholds Python would use.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 500

_guards: list[_Guard] = []  # at most one


class _Guard(QObject):
    def __init__(self, parent: QObject, was_enabled: bool) -> None:
        super().__init__(parent)
        self.was_enabled = was_enabled
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        """Collect the oldest generation whose threshold has been crossed, as the interpreter would."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        generation = -1
        for g in range(3):
            if thresholds[g] and counts[g] > thresholds[g]:
                generation = g
        if generation >= 0:
            gc.collect(generation)


def install(app: QObject) -> None:
    """Collect garbage on ``app``'s thread only (idempotent)."""
    if _guards:
        return
    was_enabled = gc.isenabled()
    gc.disable()
    _guards.append(_Guard(app, was_enabled))


def installed() -> bool:
    return bool(_guards)


def uninstall() -> None:
    """Give collection back to the interpreter (tests call this once no worker runs any more)."""
    if not _guards:
        return
    guard = _guards.pop()
    guard.timer.stop()
    gc.collect()
    if guard.was_enabled:
        gc.enable()
    guard.deleteLater()
