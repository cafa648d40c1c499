"""The errors dpdesk raises on purpose, each with the exit code the command line uses.

Exit codes: 0 done; 1 over or exhausted budget; 2 bad plan, data or usage; 3 ledger broken or
unacknowledged.
"""

from __future__ import annotations


class DpdeskError(Exception):
    """Base of every error dpdesk reports to a user (never shown as a traceback)."""

    exit_code = 2


class PlanError(DpdeskError):
    """A plan that cannot be used; ``key`` names where in the plan the problem is."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"plan: {key}: {message}" if key else f"plan: {message}")


class InputError(DpdeskError):
    """A data file that cannot be used, naming the file and, where known, line and column."""

    def __init__(
        self, path: str, message: str, *, line: int | None = None, column: str | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        where = path
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")


class UsageError(DpdeskError):
    """A command used the wrong way (an output folder that is not empty, say)."""


class BudgetExceeded(DpdeskError):
    """The plan would spend more than the dataset has left."""

    exit_code = 1


class LedgerError(DpdeskError):
    """The ledger is broken, tampered with, or disagrees with the plan in a way only an officer may settle."""

    exit_code = 3


class Cancelled(DpdeskError):
    """Work was cancelled by the user; nothing was revealed or charged."""

    exit_code = 2
