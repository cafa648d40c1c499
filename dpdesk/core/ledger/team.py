"""Which ledger a home uses: its own files (the default, no server), or a team's ledger in PostgreSQL.

A home uses a team ledger when ``<home>/team.json`` names one (``dpdesk team connect URL``), or when the environment
variable :data:`ENV` holds a libpq connection URL (it wins over the home's setting, for scripts and tests). The URL
names the server, the database and the user, never a password: credentials come from libpq's usual places (the
password file, the service file, ``PGPASSWORD``), so nothing dpdesk writes (a plan, a package, the ledger, the home's
setting) ever holds one. TLS and its certificate checks are libpq's (``sslmode=verify-full``, ``sslrootcert``).

dpdesk never falls back to the home's files when the team's server cannot be reached: nothing is charged or
revealed, and the message names the server and what to do (:class:`TeamLedgerError`, exit 5).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.fsio import write_atomic
from dpdesk.i18n import _

#: the environment variable naming a team ledger (a libpq URL), over the home's setting
ENV = "DPDESK_LEDGER"
#: the home's setting
SETTING = "team.json"


class TeamLedgerError(DpdeskError):
    """The team's ledger could not be reached, or refused what was asked: nothing was charged or revealed (exit 5).

    ``reason`` says what went wrong and no more: what a release already charged shows (its package entry could not
    be appended), where the message's "nothing was charged" would be untrue."""

    exit_code = 5

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


def setting_path(home: Path) -> Path:
    return home / SETTING


def team_url(home: Path | None) -> str | None:
    """The team ledger this home uses (the environment's, else the home's setting), or None: its own files."""
    env = os.environ.get(ENV, "").strip()
    if env:
        return env
    if home is None:
        return None
    path = setting_path(home)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        url = data["url"] if isinstance(data, dict) else None
    except (OSError, ValueError, KeyError):
        url = None
    if not isinstance(url, str) or not url.strip():
        # a setting that cannot be read never means "use the files": the home was connected to a team
        raise TeamLedgerError(
            _(
                "this dpdesk home's team ledger setting {path} cannot be read; nothing was charged or revealed. "
                "Connect it again (dpdesk team connect URL) or, to use this home's own ledger, remove the file"
            ).format(path=path)
        )
    return url.strip()


def check_url(url: str) -> str:
    """The URL if it can name a team ledger: a ``postgresql://`` or ``postgres://`` URL without a password (one
    in the URL would be written into the home; libpq's password file keeps it instead)."""
    try:
        parts = urlsplit(url)
        _port = parts.port  # raises for a port that is not one
    except ValueError:
        raise TeamLedgerError(
            _("{url} is not a PostgreSQL connection URL (postgresql://USER@HOST/DATABASE)").format(
                url=redacted(url)
            )
        ) from None
    if parts.scheme not in ("postgresql", "postgres"):
        raise TeamLedgerError(
            _("{url} is not a PostgreSQL connection URL (postgresql://USER@HOST/DATABASE)").format(
                url=redacted(url)
            )
        )
    query = dict(parse_qsl(parts.query))
    if parts.password or "password" in query or "sslpassword" in query:
        raise TeamLedgerError(
            _(
                "the team ledger's URL holds a password, which dpdesk would write into the home: put it in libpq's "
                "password file (~/.pgpass) or the PGPASSWORD environment variable, and give the URL without it"
            )
        )
    return url


def url_parts(url: str) -> tuple[str, str, str]:
    """The URL's user (or ""), server (its host, and port when given) and database (or ""); never a password.
    Raises ValueError when it cannot be read as a URL (a port that is not one, say)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    host = parts.hostname or query.get("host") or "localhost"
    port = parts.port or query.get("port")
    user = parts.username or query.get("user") or ""
    where = f"{host}:{port}" if port else host
    database = parts.path.lstrip("/") or query.get("dbname") or ""
    return user, where, database


def redacted(url: str) -> str:
    """The URL as messages show it: user, server and database, never a password."""
    try:
        user, where, database = url_parts(url)
    except ValueError:
        return "postgresql://?"
    return f"postgresql://{user + '@' if user else ''}{where}/{database}"


def remember(home: Path, url: str) -> None:
    """Make the home use this team ledger from now on."""
    home.mkdir(parents=True, exist_ok=True)
    write_atomic(setting_path(home), (json.dumps({"url": check_url(url)}, indent=2) + "\n").encode("utf-8"))


def forget(home: Path) -> bool:
    """Make the home use its own files again; whether it used a team ledger."""
    path = setting_path(home)
    if not path.exists():
        return False
    path.unlink()
    return True
