"""A Qt-free progress and cancellation object shared by the CLI and the GUI.

Long work takes a :class:`Progress`, calls :meth:`Progress.update` between chunks and
:meth:`Progress.check_cancelled`, which raises :class:`~dpdesk.core.common.errors.Cancelled` once
:meth:`Progress.cancel` was called (from any thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from dpdesk.core.common.errors import Cancelled


class Progress:
    """Reports how far work has come and carries a thread-safe cancel flag."""

    def __init__(self, callback: Callable[[int, int, str], None] | None = None) -> None:
        self._callback = callback
        self._cancel = threading.Event()

    def update(self, done: int, total: int, stage: str = "") -> None:
        """Report ``done`` out of ``total`` units for the named stage, then honour a cancel."""
        if self._callback is not None:
            self._callback(done, total, stage)
        self.check_cancelled()

    def cancel(self) -> None:
        """Ask the work to stop at its next check."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        """Raise :class:`Cancelled` if a cancel was requested."""
        if self._cancel.is_set():
            raise Cancelled("cancelled by the user; nothing was charged or revealed")


NULL_PROGRESS = Progress()


def stage_label(stage: str) -> str:
    """A progress stage's name for the screen (work reports its stages by these English identifiers)."""
    from dpdesk.i18n import _

    return {
        "hashing": _("hashing"),
        "reading": _("reading"),
        "parsing": _("parsing"),
        "identifying": _("identifying the table's content"),
        "computing": _("computing"),
        "simulating": _("simulating"),
        "writing": _("writing"),
    }.get(stage, stage)
