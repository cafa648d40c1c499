"""The engine's words as a reader reads them (issue 28 item 4): a plan's statistic and mechanism, the privacy unit's
relation, an accounting method, a ledger entry's type and a column's type, in the user's language.

The plan file, the ledger and release.csv keep the words themselves (``laplace``, ``add_remove``, ``spend``): they
are a file format. The window, the PDF report, the budget statement and the review show these names instead. Each
function returns the word itself for a word it does not know (a newer file read by an older dpdesk), never fails.
"""

from __future__ import annotations

from typing import Any

from dpdesk.i18n import _


def statistic(word: str) -> str:
    """A statistic's short name (``count`` → 计数)."""
    from dpdesk.core.dp import statistics

    stat = statistics.REGISTRY.get(word)
    return stat.word() if stat is not None else word


def mechanism(word: str, calibration: str | None = None) -> str:
    """A mechanism's name, with its calibration when it has one (``gaussian``, ``analytic`` → 高斯（解析）)."""
    from dpdesk.core.model.mechanism_kinds import MECHANISMS

    name = word
    for mech in MECHANISMS.values():
        if mech.name == word:
            name = mech.label()
    if calibration:
        return _("{mechanism} ({calibration})").format(
            mechanism=name, calibration=calibration_name(calibration)
        )
    return name


def calibration_name(word: str) -> str:
    """A Gaussian calibration's short name."""
    return {"classic": _("classic"), "analytic": _("analytic")}.get(word, word)


def relation(word: str) -> str:
    """The privacy unit's neighbouring relation."""
    return {"add_remove": _("add or remove"), "replace": _("replace")}.get(word, word)


def accounting(method: str) -> str:
    """An accounting method's short name (for tables; :func:`dpdesk.core.dp.accounting.method_name` in sentences)."""
    return {"sequential": _("sequential"), "advanced": _("advanced"), "zcdp": _("zCDP")}.get(method, method)


def entry_type(word: str) -> str:
    """A ledger entry's type."""
    return {
        "settings": _("settings"),
        "spend": _("release"),
        "simulate": _("simulation"),
        "acknowledge": _("acknowledgement"),
        "package": _("package"),
        "migrate": _("upgrade"),
        "correction": _("correction"),
        "govern": _("governance"),
        "link": _("link"),
        "declare_new": _("declared new"),
        "declared_new": _("declared new"),
        "forget_identity": _("identity forgotten"),
        "checkpoint": _("checkpoint"),
        "merge": _("merge"),
        "merged_into": _("merged into another"),
        "import": _("imported from a home"),
        "moved": _("moved to a team ledger"),
    }.get(word, word)


def column_type(word: str) -> str:
    """A declared column's type (``int`` → 整数)."""
    return {"int": _("whole number"), "float": _("decimal"), "category": _("category")}.get(word, word)


def any_word(word: str) -> str:
    """Whichever of the engine's words this is (a statistic, mechanism, relation, method or column type)."""
    for f in (statistic, mechanism, relation, accounting, column_type):
        shown = f(word)
        if shown != word:
            return shown
    return word


def recorded_reason(reason: object) -> str:
    """A reason as a ledger recorded it, translated when dpdesk itself wrote it (its own words are recorded in
    English, whatever the writer's language: :data:`dpdesk.core.ledger.entries.FIRST_RELEASE_REASON` and the
    others); a person's reason is shown as written."""
    from dpdesk.core.ledger import entries

    return {
        entries.FIRST_RELEASE_REASON: _("fixed at the dataset's first release"),
        entries.RECOST_REASON: _(
            "past releases cost more than was booked (re-costed under today's unit of privacy and code)"
        ),
        entries.MIGRATION_REASON: _(
            "older versions named a dataset by the SHA-256 of its file, a confirmation oracle for its rows; the "
            "chain was rebuilt under a random public id"
        ),
        entries.IMPORT_REASON: _(
            "a home's own ledger of this table joined the team: each of its releases is charged here, under the "
            "smaller budget"
        ),
    }.get(str(reason), str(reason))


def where(trace: dict[str, Any]) -> str:
    """A query's public row conditions in words, from its spend entry's trace (empty: every row)."""
    from dpdesk.core.common.errors import PlanError
    from dpdesk.core.model.spec import Condition, describe_where

    conds = []
    for c in trace.get("where") or ():
        try:
            between = c.get("between")
            conds.append(
                Condition(c["column"], categories=c.get("in"), between=tuple(between) if between else None)
            )
        except (
            PlanError,
            AttributeError,
            KeyError,
            TypeError,
            ValueError,
        ):  # a trace is the ledger's, as written
            continue
    return ", " + _("only rows where {cond}").format(cond=describe_where(tuple(conds))) if conds else ""
