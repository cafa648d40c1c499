"""The team ledger's use cases: create it (an administrator), give people their roles, connect a home to it or
disconnect it, and say which ledger a home uses (:mod:`dpdesk.core.ledger.team`, :mod:`dpdesk.core.ledger.pgstore`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.ledger.team import (
    ENV,
    TeamLedgerError,
    check_url,
    forget,
    redacted,
    remember,
    team_url,
    url_parts,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.publish.report import TeamDataset


def init_sql(prefix: str) -> str:
    """The SQL ``team init`` runs, for a database administrator to read or run."""
    from dpdesk.core.ledger.pgschema import PREFIX_RE, schema_sql

    if not PREFIX_RE.fullmatch(prefix):
        raise TeamLedgerError(
            _(
                "{prefix} is not a role prefix: a small letter, then up to 30 small letters, digits or _"
            ).format(prefix=prefix)
        )
    return schema_sql(prefix)


def upgrade_sql(prefix: str) -> str:
    """The SQL that upgrades a team ledger made by an older dpdesk, for a database administrator to read or run."""
    from dpdesk.core.ledger.pgschema import upgrade_sql as sql

    init_sql(prefix)  # the prefix is checked first
    return sql(prefix)


def init(url: str, prefix: str) -> tuple[str, str]:
    """Create the team ledger in the database ``url`` names, or upgrade one an older dpdesk made; returns how
    messages name the server and what was done (``"created"``, ``"upgraded"``, ``"current"``)."""
    from dpdesk.core.ledger.pgstore import create_team

    init_sql(prefix)  # the prefix is checked first
    outcome = create_team(check_url(url), prefix)
    return redacted(url), outcome


def grant(url: str, user: str, role: str) -> bool:
    """Give a database user a team role (made a login role first when missing); whether it was made."""
    from dpdesk.core.ledger.pgstore import grant as give

    return give(check_url(url), user, role)


def revoke(url: str, user: str, role: str) -> bool:
    """Take a team role from a database user (its login role and every entry it made are kept); whether it had it."""
    from dpdesk.core.ledger.pgstore import revoke as take

    return take(check_url(url), user, role)


def person_sql(prefix: str, user: str, role: str, *, remove: bool = False) -> str:
    """The SQL that gives (or with ``remove`` takes) a team role, for a database administrator to read or run."""
    from dpdesk.core.ledger.pgstore import person_sql as sql_of

    init_sql(prefix)  # the prefix is checked first
    return sql_of(prefix, user, role, remove=remove)


def people_url(home: Path, url: str | None) -> str:
    """The team's database a people command acts on: ``url``, else the team ledger this home uses."""
    from dpdesk.core.common.errors import UsageError

    found = url or team_url(home)
    if not found:
        raise UsageError(
            _(
                "this command needs the team's database: give --url URL (as the team's administrator), or run it "
                "from a dpdesk home connected to the team (or give --print-sql)"
            )
        )
    return found


@dataclass(frozen=True)
class TeamPeople:
    """Who the team's people are, by role."""

    server: str
    people: dict[str, list[str]]


def who(url: str) -> TeamPeople:
    """The team's curators, officers and auditors (the database users granted each role)."""
    from dpdesk.core.ledger.pgstore import PgStore, people

    store = PgStore(check_url(url))
    try:
        return TeamPeople(store.server, people(store))
    finally:
        store.close()


@dataclass(frozen=True)
class TeamStatus:
    """Which ledger a home uses, and what the team's server says about this user."""

    url: str | None
    details: dict[str, Any] | None
    #: every dataset of the team (:func:`dpdesk.core.ledger.pgstore.overview`), when asked
    datasets: list[dict[str, Any]] | None = None


def local_datasets(home: Path) -> list[str]:
    """The datasets with entries in the home's own ledgers, except those imported into a team's
    (``dpdesk team import``)."""
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.ledger import anchor
    from dpdesk.core.ledger.filestore import FileStore
    from dpdesk.services.team_import import own_ledger

    store = FileStore(home / "ledgers")
    out = []
    for d in store.datasets():
        if not store.exists(d) or anchor.moved_to(home, d) is not None:
            continue
        try:
            if own_ledger(home, d).read().moved_to is not None:
                continue
        except LedgerError:
            pass
        out.append(d)
    return out


def connect(home: Path, url: str, *, leave_local: bool = False) -> TeamStatus:
    """Check that the team ledger answers and that this user is a curator or an officer, then remember it in the
    home (the home's own ledgers are left as they are, and no longer used). A home with releases in its own
    ledgers is refused unless ``leave_local``: what it spent is not carried into the team's ledger, so a table
    released here would start afresh there."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.ledger.pgstore import PgStore, describe

    local = local_datasets(home)
    if local and not leave_local:
        raise UsageError(
            _(
                "this dpdesk home has {n} dataset(s) with entries in its own ledgers, and what they spent is not "
                "in the team's ledger yet. Connect with --leave-local-ledgers, then bring each table's history "
                "into the team: dpdesk team import --data FILE (until then, dpdesk refuses to release such a table "
                "through the team)"
            ).format(n=len(local))
        )

    store = PgStore(check_url(url))
    try:
        details = describe(store)
    finally:
        store.close()
    if not details["curator"]:
        raise TeamLedgerError(
            _(
                "{user} is not a curator or an officer of the team ledger at {server}: the team's administrator "
                "gives the role (dpdesk team add-curator {user}); nothing was changed"
            ).format(user=details["user"], server=details["server"])
        )
    remember(home, url)
    return TeamStatus(redacted(url), details)


def checked(url: str) -> str:
    """The URL as messages show it, if it can name a team ledger (else :class:`TeamLedgerError` says why); no
    connection is made."""
    return redacted(check_url(url))


def disconnect(home: Path) -> bool:
    """Make the home use its own ledgers again; whether it used a team's."""
    return forget(home)


def status(home: Path, latest: int | None = None) -> TeamStatus:
    """The team ledger this home uses (and what its server says: its user's roles and, when ``latest`` is given,
    every dataset of the team with its budget, spent, left and ``latest`` releases), or none."""
    from dpdesk.core.ledger.pgstore import describe, overview, team_store

    url = team_url(home)
    if url is None:
        return TeamStatus(None, None)
    store = team_store(home)
    assert store is not None
    return TeamStatus(redacted(url), describe(store), None if latest is None else overview(store, latest))


@dataclass(frozen=True)
class LedgerInUse:
    """Which ledger a home uses, told from its setting and the environment without asking the server (the app's
    line beside the budget, its Team ledger dialog)."""

    #: the team ledger's URL as messages show it (never a password), or None: the home's own ledgers
    url: str | None = None
    #: the team's server (its host, and port when given) and the user the URL names
    server: str = ""
    user: str = ""
    #: the environment variable :data:`~dpdesk.core.ledger.team.ENV` decides, over the home's setting
    from_env: bool = False
    #: why the home's setting cannot be read (it names a team ledger that cannot be used)
    error: str | None = None

    @property
    def env(self) -> str:
        return ENV


def in_use(home: Path) -> LedgerInUse:
    """Which ledger ``home`` uses now (no connection is made)."""
    import os

    from_env = bool(os.environ.get(ENV, "").strip())
    try:
        url = team_url(home)
    except TeamLedgerError as exc:
        return LedgerInUse(from_env=from_env, error=str(exc))
    if url is None:
        return LedgerInUse()
    try:
        user, server, _database = url_parts(url)
    except ValueError:
        user, server = "", "?"
    return LedgerInUse(redacted(url), server, user, from_env)


# ----------------------------------------------------------------------------- the team's budget statement
@dataclass(frozen=True)
class TeamStatementWritten:
    """Where the team's statement went, how many datasets it covers and how many of their chains are broken (each
    stated on its page, its entries not used)."""

    out: Path
    datasets: int
    broken: int = 0


def write_team_statement(
    home: Path, out: Path, *, force: bool = False, progress: Progress = NULL_PROGRESS
) -> TeamStatementWritten:
    """Write the budget statement of every dataset of the team ledger this home uses, as one PDF: a cover with a
    summary row per dataset, then each dataset on its own page with the same facts as ``dpdesk ledger statement``.

    Each chain is read from the team's database and verified here (a broken one is stated, not used); only what a
    team's auditor may read is asked (the datasets, their entries, who this user is), so an auditor can write it.
    An existing ``out`` is replaced only with ``force``, and never a file under the home."""
    import datetime

    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.ledger.pgstore import describe, team_store
    from dpdesk.core.publish.outputs import check_out_file
    from dpdesk.core.publish.report import write_team_statement as write_pdf

    if team_url(home) is None:
        raise UsageError(
            _(
                "this dpdesk home is not connected to a team ledger: run dpdesk team connect URL first (or set "
                "{env}=URL); a dataset of this home has its own statement: dpdesk ledger statement --data FILE "
                "--out FILE.pdf"
            ).format(env=ENV)
        )
    check_out_file(out, force=force, home=home)
    store = team_store(home)
    assert store is not None
    details = describe(store)
    role = (
        _("officer")
        if details["officer"]
        else _("curator")
        if details["curator"]
        else _("auditor (read only)")
    )
    names = store.datasets()
    parts = []
    for n, name in enumerate(names):
        progress.update(n, len(names), "reading")
        parts.append(_team_dataset(home, name))
    progress.update(len(names), len(names), "writing")
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    write_pdf(out, server=store.server, user=details["user"], role=role, generated=generated, datasets=parts)
    return TeamStatementWritten(out, len(parts), sum("broken" in p.problems for p in parts))


def _team_dataset(home: Path, dataset: str) -> TeamDataset:
    """One dataset of the team as its statement states it: its chain verified as ``Ledger.verify`` does (a broken
    chain is stated and its entries left out), its budget report from its latest release's plan, and what needs
    attention."""
    from dpdesk.core.common.errors import DpdeskError, LedgerError
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.budget import budget_report
    from dpdesk.core.ledger.checkpoint import state_of
    from dpdesk.core.ledger.entries import SpendEntry
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.publish.report import TeamDataset

    try:
        entries = Ledger.of(home, dataset).verify()
    except LedgerError as exc:
        return TeamDataset(
            dataset, dataset, [], None, _("BROKEN: {err}").format(err=exc), problems=("broken",)
        )
    spends = [e for e in entries if isinstance(e, SpendEntry)]
    plan = spends[-1].plan if spends else None
    title = plan.get("title") if isinstance(plan, dict) else None
    name = title if isinstance(title, str) and title.strip() else dataset
    problems: list[str] = []
    try:
        state = state_of(entries)
        report = budget_report(parse_plan(spends[-1].plan), entries) if spends else None
    except DpdeskError:
        return TeamDataset(dataset, name, entries, None, _("chain verified"), problems=("total_unknown",))
    if state.settings is None:
        problems.append("no_budget")
    if report is not None:
        spent, budget = report.in_force.spent, report.budget
        if spent.epsilon > budget.epsilon or spent.delta > budget.delta:
            problems.append("overspent")
    if state.retired_into is not None:
        problems.append("merged")
    return TeamDataset(dataset, name, entries, report, _("chain verified"), state.settings, tuple(problems))
