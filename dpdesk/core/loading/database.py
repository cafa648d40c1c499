"""A table in PostgreSQL as a data source: read as the CSV its export would be, through PostgreSQL's own ``COPY``.

``--data`` takes a libpq URL naming a table (``postgresql://USER@HOST:PORT/DB?table=SCHEMA.NAME``) or a query
(``...?query=SELECT+...``). The rows come as ``COPY (SELECT ...) TO STDOUT (FORMAT csv, HEADER)`` through psycopg (a
dependency already: the team ledger's client), streamed in blocks into a file (:func:`copy_to_file`): the text a
CSV export of the same rows holds, so the CSV reader, the data check and the content identity are the ones a CSV
file gets, and the same rows in a CSV file are the same dataset by construction (``docs/databases.md``).

* **Read only**: a query runs in a ``READ ONLY`` transaction and must be one statement (checked by preparing it);
  a table's name is quoted as an identifier, never pasted into SQL.
* **No password**: a URL holding one is refused (dpdesk would show it, and a command line is seen by every user
  of the machine); libpq's password file (``~/.pgpass``) or ``PGPASSWORD`` holds it. What dpdesk records as the
  data's name (:attr:`DatabaseSource.label`, :attr:`DatabaseSource.file_name`) holds the server, database and table.
* **Deterministic text**: the session's date style, time zone and float digits are set, so the same rows are the
  same text whatever the server's or the client's defaults.
* **One line per failure** (:class:`DatabaseError`, exit 2, nothing charged): an unreachable server, a refused
  login, a missing table, a table the user may not read, a query that fails, each naming the server and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from dpdesk.core.common.dataurl import SCHEMES
from dpdesk.core.common.errors import InputError
from dpdesk.i18n import _

if TYPE_CHECKING:
    import psycopg

#: seconds to wait for the server to answer a connection
CONNECT_TIMEOUT = 10
#: how many bytes are read between two progress reports (each may cancel the read)
BLOCK = 1 << 20
#: the session settings that make the rows' text the same whatever the server's defaults
SESSION = "SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'; SET extra_float_digits = 1; SET IntervalStyle = 'iso_8601'"


class DatabaseError(InputError):
    """A table or query in PostgreSQL that could not be read: one line naming the server (and the table) and the
    fix; nothing was charged or written (exit 2, as for any data that cannot be read)."""


@dataclass(frozen=True)
class DatabaseSource:
    """A table (``table``: ``NAME`` or ``SCHEMA.NAME``) or a ``query`` in the database ``conninfo`` names."""

    conninfo: str
    table: str | None
    query: str | None
    #: the server, database and user, never a password: what messages show
    server: str

    @property
    def label(self) -> str:
        """The data's name in messages and records: ``postgresql://USER@SERVER/DB?table=SCHEMA.NAME`` (or
        ``?query``), never a password."""
        return f"{self.server}?table={self.table}" if self.table is not None else f"{self.server}?query"

    @property
    def file_name(self) -> str:
        """The name of the file the rows are read into (what the package records as the data's name):
        ``SCHEMA.NAME.csv``, or ``query.csv``."""
        stem = re.sub(r"[^\w.-]", "_", self.table) if self.table is not None else "query"
        return f"{stem.strip('.') or 'table'}.csv"

    def select(self, limit_zero: bool = False) -> Any:
        """The SELECT the rows come from (a ``psycopg.sql.Composed``): the table's name quoted as an identifier, or
        the query as a subquery."""
        from psycopg import sql

        if self.table is not None:
            parts = self.table.split(".", 1)
            body = sql.SQL("SELECT * FROM {}").format(sql.Identifier(*parts))
        else:
            assert self.query is not None
            body = sql.SQL("SELECT * FROM ({}) AS dpdesk_query").format(sql.SQL(self.query))
        return body + sql.SQL(" LIMIT 0") if limit_zero else body


def parse_source(url: str) -> DatabaseSource:
    """The source a URL names; :class:`DatabaseError` for a URL that is not one, holds a password, or names
    neither a table nor a query (or both)."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        _port = parts.port  # raises for a port that is not one
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in SCHEMES:
        raise DatabaseError(
            "postgresql://?",
            _("not a PostgreSQL URL; give postgresql://USER@HOST:PORT/DATABASE?table=SCHEMA.NAME"),
        )
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = dict(pairs)
    server = _server(parts, query)
    if parts.password is not None or "password" in query or "sslpassword" in query:
        raise DatabaseError(
            server,
            _(
                "the URL holds a password, which dpdesk would show and the machine's other users can see on a "
                "command line: put it in libpq's password file (~/.pgpass) or the PGPASSWORD environment variable, "
                "and give the URL without it"
            ),
        )
    table = query.get("table", "").strip() or None
    select = query.get("query", "").strip().rstrip(";").strip() or None
    if table is not None and select is not None:
        raise DatabaseError(
            server,
            _("the URL names both a table and a query; give one: ?table=SCHEMA.NAME or ?query=SELECT ..."),
        )
    if table is None and select is None:
        raise DatabaseError(
            server,
            _("the URL names no table; give one: ?table=SCHEMA.NAME (or a query: ?query=SELECT ...)"),
        )
    if table is not None and (table.count(".") > 1 or "" in table.split(".")):
        raise DatabaseError(
            server,
            _(
                "{table} is not a table's name: give NAME or SCHEMA.NAME (a name holding a dot: use ?query=SELECT * "
                'FROM "..." instead)'
            ).format(table=table),
        )
    kept = [(k, v) for k, v in pairs if k not in ("table", "query")]
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(kept), ""))
    return DatabaseSource(conninfo, table, select, server)


def _server(parts: Any, query: dict[str, str]) -> str:
    """``postgresql://USER@HOST:PORT/DB`` from a URL's parts, never its password."""
    host = parts.hostname or query.get("host") or "localhost"
    port = parts.port or query.get("port")
    user = parts.username or query.get("user") or ""
    where = f"{host}:{port}" if port else host
    database = parts.path.lstrip("/") or query.get("dbname") or ""
    return f"postgresql://{user + '@' if user else ''}{where}/{database}"


def failed_connection(exc: BaseException) -> str:
    """Why a connection failed, as far as libpq's message and the server's SQLSTATE say: ``tls`` (the server's
    certificate, or TLS itself, did not verify), ``login`` (no password, a wrong one, or no rule admitting the user)
    or ``other`` (the network, a server that is down: what the generic message's advice fits)."""
    state = str(getattr(exc, "sqlstate", None) or "")
    text = str(exc).lower()
    if "certificate" in text or "ssl was required" in text or "does not support ssl" in text:
        return "tls"
    if state.startswith("28") or "password" in text or "fe_sendauth" in text or "pg_hba.conf" in text:
        return "login"
    if re.search(r'role "[^"]*" does not exist', text):
        return "login"
    return "other"


def _detail(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _connect_error(source: DatabaseSource, exc: BaseException) -> DatabaseError:
    detail = _detail(exc)
    kind = failed_connection(exc)
    if kind == "login":
        message = _(
            "the server did not accept the login ({detail}); nothing was charged. Put the password in libpq's "
            "password file (~/.pgpass) or in PGPASSWORD, never in the URL, or ask the database's administrator"
        )
    elif kind == "tls":
        message = _(
            "the server could not be trusted ({detail}); nothing was charged. Check the URL's sslmode and "
            "sslrootcert, or ask the database's administrator"
        )
    elif "does not exist" in detail and "database" in detail:
        message = _(
            "the server has no such database ({detail}); nothing was charged. Check the database's name in the URL"
        )
    else:
        message = _(
            "cannot reach the database server ({detail}); nothing was charged. Check that the server runs and the "
            "URL's host and port, or ask its administrator"
        )
    return DatabaseError(source.server, message.format(detail=detail))


def _read_error(source: DatabaseSource, exc: BaseException) -> DatabaseError:
    """A failure after the connection: a missing table, a permission refused, a query that fails."""
    detail = _detail(exc)
    state = str(getattr(exc, "sqlstate", None) or "")
    what = source.table if source.table is not None else _("the query")
    if state in ("42P01", "3F000"):  # undefined_table, invalid_schema_name
        message = _(
            "there is no table {table} ({detail}); nothing was charged. Check its name in the URL (table=NAME or "
            "table=SCHEMA.NAME)"
        )
    elif state == "42501":  # insufficient_privilege
        message = _(
            "this user may not read {table} ({detail}); nothing was charged. Ask the database's administrator to "
            "grant SELECT on it"
        )
    elif state == "25006":  # read_only_sql_transaction
        message = _(
            "{table} would change the database ({detail}); nothing was charged. dpdesk runs a query read-only: "
            "give a SELECT"
        )
    elif state.startswith(("42", "22", "0A")) or state == "":
        message = _(
            "{table} cannot be read ({detail}); nothing was charged. Fix the table's name or the query"
        )
    else:
        message = _(
            "reading {table} failed ({detail}); nothing was charged. Check that the server runs, or ask its "
            "administrator"
        )
    return DatabaseError(source.server, message.format(table=what, detail=detail))


def _connect(source: DatabaseSource) -> psycopg.Connection[Any]:
    import psycopg

    try:
        conn = psycopg.connect(
            source.conninfo, connect_timeout=CONNECT_TIMEOUT, application_name="dpdesk", autocommit=True
        )
    except psycopg.Error as exc:
        raise _connect_error(source, exc) from None
    return conn


def copy_to_file(
    source: DatabaseSource,
    dest: Path,
    *,
    header_only: bool = False,
    on_bytes: Callable[[int], None] | None = None,
) -> int:
    """Write the source's rows to ``dest`` as CSV with a header (only the header with ``header_only``), streamed
    in blocks: ``COPY (SELECT ...) TO STDOUT (FORMAT csv, HEADER)`` in a read-only transaction. Returns the bytes
    written; ``on_bytes`` is told the running count (for progress and cancelling: it may raise). Raises
    :class:`DatabaseError` (``dest`` is then removed)."""
    import psycopg
    from psycopg import sql

    written = 0
    conn = _connect(source)
    try:
        with conn, dest.open("wb", buffering=BLOCK) as out:
            conn.execute(SESSION)
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                # one statement (a prepared statement refuses more than one), and its columns named
                conn.execute(source.select(limit_zero=True), prepare=True)
                statement = sql.SQL("COPY ({}) TO STDOUT (FORMAT csv, HEADER)").format(
                    source.select(limit_zero=header_only)
                )
                told = 0
                with conn.cursor() as cur, cur.copy(statement) as copy:
                    for block in copy:  # a row at a time, as libpq hands them over; the file buffers them
                        out.write(block)
                        written += len(block)
                        if on_bytes is not None and written - told >= BLOCK:
                            told = written
                            on_bytes(written)
    except psycopg.OperationalError as exc:
        dest.unlink(missing_ok=True)
        if conn.closed or getattr(exc, "sqlstate", None) is None:
            raise _connect_error(source, exc) from None
        raise _read_error(source, exc) from None
    except psycopg.Error as exc:
        dest.unlink(missing_ok=True)
        raise _read_error(source, exc) from None
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    finally:
        conn.close()
    return written


def column_types(source: DatabaseSource) -> list[tuple[str, str]]:
    """The source's columns and their types as the database declares them (its catalogue: public schema, no
    value read): ``(name, type)`` pairs, the type as ``format_type`` names it."""
    import psycopg

    conn = _connect(source)
    try:
        with conn, conn.transaction():
            conn.execute("SET TRANSACTION READ ONLY")
            cur = conn.execute(source.select(limit_zero=True), prepare=True)
            described = list(cur.description or [])
            oids = [d.type_code for d in described]
            names = dict(
                conn.execute(
                    "SELECT oid::int, format_type(oid, NULL) FROM pg_type WHERE oid = ANY(%s)", (oids,)
                ).fetchall()
            )
    except psycopg.OperationalError as exc:
        if conn.closed or getattr(exc, "sqlstate", None) is None:
            raise _connect_error(source, exc) from None
        raise _read_error(source, exc) from None
    except psycopg.Error as exc:
        raise _read_error(source, exc) from None
    finally:
        conn.close()
    return [(d.name, str(names.get(d.type_code, ""))) for d in described]
