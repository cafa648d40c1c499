"""The errors dpdesk raises on purpose, each with the exit code the command line uses.

Exit codes: 0 done; 1 over or exhausted budget; 2 bad plan, data or usage; 3 ledger broken or
unacknowledged; 4 a release charged whose package could not be written
(:class:`dpdesk.core.release.steps.ReleaseNotWritten`); 5 the team ledger could not be reached or refused
(:class:`dpdesk.core.ledger.team.TeamLedgerError`: nothing charged or revealed).
"""

from __future__ import annotations


class DpdeskError(Exception):
    """Base of every error dpdesk reports to a user (never shown as a traceback)."""

    exit_code = 2


class PlanError(DpdeskError):
    """A plan that cannot be used; ``key`` names where in the plan the problem is (``queries[2].epsilon``).

    ``message`` is a whole sentence in the user's language; ``hint`` the likely fix (read off the plan, the
    column headers and codebooks, never the data), or empty. Shown, a problem says where it is in words: a
    query by its number from 1 and its name (``query_name``, set by the plan's validator), a column by its
    name, or the part of the plan.
    """

    def __init__(self, key: str, message: str, *, hint: str = "") -> None:
        self.key = key
        self.message = message
        self.hint = hint
        self.query_name: str | None = None
        super().__init__(key, message)

    @property
    def where(self) -> str:
        """Where the problem is, in words (empty for the whole plan); a name's control characters (a newline in
        a query's or a column's name) shown as escapes, so that a plan cannot forge a line of a message."""
        from dpdesk.core.common.text import shown

        return shown(where_in_plan(self.key, self.query_name))

    @property
    def text(self) -> str:
        """The message with its hint, without the place: one line (a problem's messages hold no line break of
        their own, so every control character in them came from the plan and is shown as an escape)."""
        from dpdesk.core.common.text import shown
        from dpdesk.i18n import _

        if not self.hint:
            return shown(self.message)
        return shown(_("{message}; {hint}").format(message=self.message, hint=self.hint))

    def __str__(self) -> str:
        from dpdesk.i18n import _

        where = self.where
        return _("{where}: {problem}").format(where=where, problem=self.text) if where else self.text


class PlanErrors(PlanError):
    """Every problem of a plan at once (``problems``, in plan order); ``key`` and ``message`` are the first's."""

    def __init__(self, problems: list[PlanError] | tuple[PlanError, ...]) -> None:
        assert problems, "PlanErrors needs at least one problem"
        self.problems = tuple(problems)
        first = self.problems[0]
        super().__init__(first.key, first.message, hint=first.hint)
        self.query_name = first.query_name

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return str(self.problems[0])
        from dpdesk.i18n import ngettext

        head = ngettext("The plan has {n} problem:", "The plan has {n} problems:", len(self.problems)).format(
            n=len(self.problems)
        )
        return "\n".join([head, *(f"  - {p}" for p in self.problems)])


def where_in_plan(key: str, query_name: str | None = None) -> str:
    """A plan key's place in words: ``queries[0].epsilon`` is query 1 (with its name), ``query.epsilon`` the
    query of that name built on its own (not read from a plan), ``columns.wage.bounds`` column "wage",
    ``budget.epsilon`` the budget; empty for the whole plan or a key of its own."""
    from dpdesk.i18n import _

    if key.startswith("queries["):
        number = key[len("queries[") : key.index("]")]
        if number.isdigit():
            n = int(number) + 1
            if query_name:
                return _('query {number} ("{name}")').format(number=n, name=query_name)
            return _("query {number}").format(number=n)
    section, _dot, rest = key.partition(".")
    if section == "query":  # a query built on its own (not read from a plan): named, without a number
        return _('query "{name}"').format(name=query_name) if query_name else _("the query")
    if section == "columns" and rest:
        field = field_of(key)
        name = rest[: len(rest) - len(field) - 1] if field else rest
        return _('column "{name}"').format(name=name)
    return {
        "budget": _("budget"),
        "privacy_unit": _("unit of privacy"),
        "accounting": _("accounting"),
    }.get(section, "")


def field_of(key: str) -> str:
    """The field a plan key names within its place (see :func:`where_in_plan`): ``epsilon`` for
    ``queries[0].epsilon`` or ``budget.epsilon``, ``bounds`` for ``columns.wage.bounds``; the key itself for a key
    of the whole plan, and empty for a whole query, column or part."""
    if key.startswith("queries["):
        rest = key[key.index("]") + 1 :]
        return rest.removeprefix(".")
    section, _dot, rest = key.partition(".")
    if section == "columns" and rest:
        # a column name may hold dots: the field is what follows a known column field's word
        for word in ("type", "bounds", "categories", "missing"):
            for sep in (f".{word}.", f".{word}["):
                if sep in rest:
                    return word + rest[rest.index(sep) + len(word) + 1 :]
            if rest.endswith(f".{word}"):
                return word
        return ""
    if section in ("budget", "privacy_unit", "accounting", "query"):
        return rest
    return key


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


class LimitError(InputError):
    """A data file refused by a stated limit of what its bytes would cost to read (a decompression bomb): a
    function of the file's bytes alone, so a refusal can be remembered by the file's SHA-256."""


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
