"""What every action has: its window, the app's state, and the window's job runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.gui.main_window import MainWindow
    from dpdesk.gui.state import AppState
    from dpdesk.gui.workers import Worker

T = TypeVar("T")


class Action:
    """A flow of the app, run from its window. Dialogs go through the window's ``ask_*`` hooks, looked up when
    asked (a test replaces them on the window); long work goes to the worker through :meth:`run`."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window

    @property
    def state(self) -> AppState:
        """The app's state: the plan, the table, the ledger, the shown results."""
        return self.window.state

    def run(self, job: Callable[[Progress], T], done: Callable[[T], None], label: str) -> Worker:
        """Run ``job`` in the worker with progress and cancel; ``done`` gets its result on the GUI thread."""
        return self.window.run_job(job, done, label)
