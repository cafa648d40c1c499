"""The team store: the chains of a team's datasets in PostgreSQL, behind the same store boundary as the file store.

The :class:`~dpdesk.core.ledger.store.ChainStore` contract, kept by a database (the schema and its rules:
:mod:`dpdesk.core.ledger.pgschema`):

* **An exclusive writer**: a session advisory lock per chain (``pg_advisory_lock``), held on this process's
  connection for the whole check-then-charge and released by the server when the connection ends, however. A client
  that does not take it still cannot fork a chain: the append function links every entry to the head, under the
  dataset's row lock.
* **Durable appends**: :meth:`PgStore.append` calls ``dpdesk.append`` in its own transaction and returns once it is
  committed (``synchronous_commit`` as the server has it: on, by default). A connection lost before the answer
  raises: the caller reveals nothing, and if the server had committed, the next command finds a charged release
  whose files were not written, as after a crash with the file store.
* **Read back**: the chain is the bytes each client sent, in order.
* **No evidence, no replacement**: a team chain is checked as it is written, so it is never broken; acknowledging a
  broken chain or rebuilding one are file-store operations, refused here.

Failures never fall back to anything: :class:`~dpdesk.core.ledger.team.TeamLedgerError` (exit 5) names the server
and the fix; a spend the database refuses for the budget is :class:`~dpdesk.core.common.errors.BudgetExceeded`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common import faults
from dpdesk.core.common.errors import BudgetExceeded
from dpdesk.core.ledger.pgschema import MAX_SKETCH_BYTES, MAX_SKETCHES, OLDEST_SERVER, SCHEMA_VERSION
from dpdesk.core.ledger.team import TeamLedgerError, check_url, redacted, team_url
from dpdesk.core.loading.database import failed_connection
from dpdesk.i18n import _

if TYPE_CHECKING:
    import psycopg

#: seconds to wait for the server to answer a connection
CONNECT_TIMEOUT = 10
#: how many times an append is tried again after a serialisation failure or a deadlock
RETRIES = 5
#: seconds a release waits for another release of the same dataset to be recorded
LOCK_WAIT = 120


class PgStore:
    """The chains of a team's datasets, in the PostgreSQL database a libpq URL names."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.server = redacted(url)
        self._conn: psycopg.Connection[Any] | None = None
        self._pid = os.getpid()
        self._mutex = threading.RLock()
        self._user: str | None = None
        self._secret: bytes | None = None
        #: the content keys of files read by this process (:meth:`remember_contents`), by their SHA-256, each with
        #: its sketches (content and column sketches) as JSON text (None when too large to keep)
        self._contents: dict[str, list[tuple[str, str | None]]] = {}

    # -- the connection ------------------------------------------------------------------------------------------

    def _unreachable(self, exc: BaseException) -> TeamLedgerError:
        detail = " ".join(str(exc).split())[:300]
        kind = failed_connection(exc)
        if kind == "tls":
            return TeamLedgerError(
                _(
                    "the team ledger at {server} could not be trusted: its certificate does not verify ({detail}); "
                    "nothing was charged or revealed. Check that the URL's sslrootcert names the team's CA "
                    "certificate and that the URL names the server as its certificate does, or ask the server's "
                    "administrator"
                ).format(server=self.server, detail=detail),
                reason=_("the team ledger at {server} could not be trusted ({detail})").format(
                    server=self.server, detail=detail
                ),
            )
        if kind == "login":
            return TeamLedgerError(
                _(
                    "the team ledger at {server} did not accept the login ({detail}); nothing was charged or "
                    "revealed. Put the password in libpq's password file (~/.pgpass, or the file PGPASSFILE names, "
                    "readable by you only) or in PGPASSWORD, never in the URL; or ask the team's administrator"
                ).format(server=self.server, detail=detail),
                reason=_("the team ledger at {server} did not accept the login ({detail})").format(
                    server=self.server, detail=detail
                ),
            )
        return TeamLedgerError(
            _(
                "cannot reach the team ledger at {server} ({detail}); nothing was charged or revealed. Check the "
                "network and that the server runs, or ask its administrator; dpdesk never uses this home's own "
                "ledger instead (dpdesk team disconnect does, for a home that should not use the team's)"
            ).format(server=self.server, detail=detail),
            reason=_("cannot reach the team ledger at {server} ({detail})").format(
                server=self.server, detail=detail
            ),
        )

    def connection(self) -> psycopg.Connection[Any]:
        """This process's connection (made on first use, checked to hold a team ledger this client knows)."""
        import psycopg

        if self._conn is not None and self._pid == os.getpid() and not self._conn.closed:
            return self._conn
        self._pid = os.getpid()
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name="dpdesk"
            )
        except psycopg.Error as exc:
            raise self._unreachable(exc) from None
        too_old = _too_old(conn, self.server)
        if too_old is not None:
            conn.close()
            raise too_old
        try:
            row = conn.execute("SELECT schema_version FROM dpdesk.team").fetchone()
            user = conn.execute("SELECT session_user").fetchone()
        except psycopg.Error:
            conn.close()
            raise TeamLedgerError(
                _(
                    "{server} holds no team ledger this user may read; nothing was charged or revealed. An "
                    "administrator creates it (dpdesk team init URL) and makes this user a curator"
                ).format(server=self.server)
            ) from None
        if row is not None and isinstance(row[0], int) and row[0] < SCHEMA_VERSION:
            conn.close()
            raise TeamLedgerError(
                _(
                    "the team ledger at {server} has schema version {found}, older than this dpdesk's {known}; "
                    "nothing was charged or revealed. The team's administrator upgrades it: dpdesk team init URL "
                    "(its entries are kept)"
                ).format(server=self.server, found=row[0], known=SCHEMA_VERSION)
            )
        if row is None or row[0] != SCHEMA_VERSION:
            conn.close()
            raise TeamLedgerError(
                _(
                    "the team ledger at {server} has schema version {found}, and this dpdesk knows version "
                    "{known}; nothing was charged or revealed. Use the dpdesk version the team uses"
                ).format(server=self.server, found=row[0] if row else "?", known=SCHEMA_VERSION)
            )
        self._user = str(user[0]) if user else None
        self._conn = conn
        return conn

    def _call(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; connection failures and the database's refusals become dpdesk's errors."""
        import psycopg

        with self._mutex:
            conn = self.connection()
            try:
                cur = conn.execute(sql, params)
                return list(cur.fetchall()) if cur.description else []
            except psycopg.OperationalError as exc:
                if conn.closed or conn.broken:
                    self._conn = None
                    raise self._unreachable(exc) from None
                raise self._refused(exc) from None
            except psycopg.Error as exc:
                raise self._refused(exc) from None

    def _refused(self, exc: Any) -> Exception:
        state = getattr(exc, "sqlstate", None) or ""
        diag = getattr(exc, "diag", None)
        detail = (diag.message_primary if diag is not None else None) or str(exc)
        if state == "DP006":  # the budget
            return BudgetExceeded(
                _("the team ledger at {server} refused the release: {detail}. Nothing was revealed").format(
                    server=self.server, detail=detail
                )
            )
        if state == "42501":  # insufficient privilege
            return TeamLedgerError(
                _(
                    "the team ledger at {server} refused: {user} is not a curator of this team ({detail}); nothing "
                    "was charged or revealed. Ask the team's administrator to grant the curator role"
                ).format(server=self.server, user=self._user or "?", detail=detail),
                reason=_(
                    "the team ledger at {server} refused: {user} is not a curator of this team ({detail})"
                ).format(server=self.server, user=self._user or "?", detail=detail),
            )
        return TeamLedgerError(
            _("the team ledger at {server} refused: {detail}; nothing was charged or revealed").format(
                server=self.server, detail=detail
            ),
            reason=_("the team ledger at {server} refused: {detail}").format(
                server=self.server, detail=detail
            ),
        )

    @property
    def user(self) -> str:
        """The database user this home appends as (recorded by the server beside each entry)."""
        if self._user is None or self._conn is None or self._pid != os.getpid():
            self.connection()
        assert self._user is not None
        return self._user

    def entry_fields(self) -> dict[str, str]:
        """What each entry appended here states besides dpdesk's fields: its author (checked by the server)."""
        return {"author": self.user}

    # -- the ChainStore protocol ---------------------------------------------------------------------------------

    def label(self, name: str) -> str:
        return _("{dataset} in the team ledger {server}").format(dataset=name, server=self.server)

    def has(self, name: str) -> bool:
        return bool(self._call("SELECT 1 FROM dpdesk.datasets WHERE dataset = %s", (name,)))

    def exists(self, name: str) -> bool:
        return bool(self._call("SELECT 1 FROM dpdesk.datasets WHERE dataset = %s AND seq > 0", (name,)))

    def read(self, name: str) -> bytes:
        rows = self._call("SELECT line FROM dpdesk.entries WHERE dataset = %s ORDER BY seq", (name,))
        return b"".join(bytes(r[0]) for r in rows)

    def read_tail(self, name: str) -> tuple[list[bytes], int] | None:
        rows = self._call(
            "WITH cp AS (SELECT max(seq) AS seq FROM dpdesk.entries WHERE dataset = %s AND type = 'checkpoint') "
            "SELECT e.line, (SELECT coalesce(sum(length(b.line)), 0) FROM dpdesk.entries b "
            "  WHERE b.dataset = %s AND b.seq < cp.seq) "
            "FROM dpdesk.entries e, cp WHERE e.dataset = %s AND e.seq >= cp.seq ORDER BY e.seq",
            (name, name, name),
        )
        if not rows:
            return None  # no checkpoint: the caller reads the whole chain
        return [bytes(r[0]).rstrip(b"\n") for r in rows], int(rows[0][1])

    def locked(self, name: str) -> AbstractContextManager[None]:
        return self._locked(name)

    @contextlib.contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        deadline = time.monotonic() + LOCK_WAIT
        pause = 0.01
        while not self._call("SELECT dpdesk.try_lock(%s)", (name,))[0][0]:
            if time.monotonic() > deadline:
                raise TeamLedgerError(
                    _(
                        "another release of {dataset} has been being recorded in the team ledger at {server} for "
                        "{n} seconds; nothing was charged or revealed. Try again later"
                    ).format(dataset=name, server=self.server, n=LOCK_WAIT)
                )
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        try:
            yield
        finally:
            with contextlib.suppress(TeamLedgerError):  # a lost connection released it already
                self._call("SELECT dpdesk.unlock(%s)", (name,))

    def append(self, name: str, line: bytes) -> None:
        import psycopg
        from psycopg import errors

        # the durable step of a team release, for the crash tests: between the check and the charge
        faults.step("append to the team ledger")
        for attempt in range(RETRIES + 1):
            with self._mutex:
                conn = self.connection()
                try:
                    conn.execute("SELECT dpdesk.append(%s, %s)", (name, line))
                    return
                except (errors.SerializationFailure, errors.DeadlockDetected) as exc:
                    if attempt == RETRIES:
                        raise self._refused(exc) from None
                    continue
                except psycopg.OperationalError as exc:
                    if conn.closed or conn.broken:
                        self._conn = None
                        raise self._unreachable(exc) from None
                    raise self._refused(exc) from None
                except psycopg.Error as exc:
                    raise self._refused(exc) from None

    def keep_evidence(self, name: str, raw: bytes, kind: str, stamp: str) -> str:
        raise TeamLedgerError(
            _(
                "a team ledger's chains are checked as they are written and never kept as evidence ({server})"
            ).format(server=self.server)
        )

    def replace(self, name: str, data: bytes) -> None:
        raise TeamLedgerError(
            _("a team ledger's chains are append-only: nothing replaces one ({server})").format(
                server=self.server
            )
        )

    def datasets(self) -> list[str]:
        return [
            str(r[0])
            for r in self._call("SELECT dataset FROM dpdesk.datasets WHERE seq > 0 ORDER BY dataset")
        ]

    # -- which dataset a data file belongs to --------------------------------------------------------------------

    def _team_secret(self) -> bytes:
        if self._secret is None:
            rows = self._call("SELECT dpdesk.secret()")
            self._secret = bytes(rows[0][0])
        return self._secret

    def keyed(self, sha256: str) -> str:
        """A data file's SHA-256 keyed with the team's secret: what the team database stores instead of it."""
        return hmac.new(self._team_secret(), b"file:" + sha256.encode("ascii"), hashlib.sha256).hexdigest()

    def identity_secret(self) -> bytes:
        """The secret keying content identities (:func:`dpdesk.core.loading.identity.content_identity`) for the
        whole team, derived from the team's: the same rows have the same content key on every curator's machine."""
        return hmac.new(self._team_secret(), b"content-identity", hashlib.sha256).digest()

    def keyed_content(self, content_key: str) -> str:
        """A content key (made with :meth:`identity_secret`) as the team database stores it."""
        return hmac.new(
            self._team_secret(), b"content:" + content_key.encode("ascii"), hashlib.sha256
        ).hexdigest()

    def dataset_of_content(self, content_key: str) -> str | None:
        """The team's dataset of these rows (a re-saved, sorted or converted copy of a table it knows), or None."""
        rows = self._call("SELECT dpdesk.dataset_of(%s)", (self.keyed_content(content_key),))
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def remember_content(self, sha256: str, content_key: str, sketch: str | None = None) -> None:
        """Remember, for this process, the content key of a file just read, and its sketches as JSON text
        (:func:`claim` records them with the file's dataset: a release resolves the file, then opens its ledger by
        its bytes)."""
        self.remember_contents(sha256, [(content_key, sketch)])

    def remember_contents(self, sha256: str, contents: list[tuple[str, str | None]]) -> None:
        """:meth:`remember_content` for each of a file's content keys (one per scheme), the one the team knows, if
        any, first: :meth:`claim` joins the dataset of the first and records the others with it."""
        self._contents[sha256] = [
            (key, sketch if sketch is not None and len(sketch.encode("utf-8")) <= MAX_SKETCH_BYTES else None)
            for key, sketch in contents
        ]

    def sketches(self) -> list[tuple[str, str]]:
        """The sketches of the team's live datasets' tables as (dataset, JSON text), the most recent first, at most
        :data:`~dpdesk.core.ledger.pgschema.MAX_SKETCHES`: what a new table is compared with."""
        rows = self._call("SELECT dataset, sketch FROM dpdesk.sketches(%s)", (MAX_SKETCHES,))
        return [(str(r[0]), str(r[1])) for r in rows]

    def sketch_schemes(self) -> list[tuple[str, int, int]]:
        """Per live dataset of the team: how many of its tables' sketches are of content-identity scheme 1, and how
        many of a later scheme, over all the team's sketches (not the near-copy check's window)."""
        rows = self._call("SELECT dataset, scheme1, later FROM dpdesk.sketch_schemes()", ())
        return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]

    def dataset_of(self, sha256: str) -> str | None:
        """The team's dataset of the data file with this SHA-256, or None."""
        rows = self._call("SELECT dpdesk.dataset_of(%s)", (self.keyed(sha256),))
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def claim(self, sha256: str, dataset: str) -> str:
        """The team's dataset of this data file, made as ``dataset`` when the team has none yet (one transaction:
        two curators opening the same new table at once get the same dataset). With the file's content keys
        (:meth:`remember_contents`), the first decides (a file whose rows the team knows joins their dataset) and is
        recorded with it in that transaction; each other key (another scheme's) is then recorded with the same
        dataset by a claim of its own (the file's keyed hash is known by then: ``dpdesk.claim`` adds the key)."""
        contents: list[tuple[str | None, str | None]] = list(self._contents.get(sha256, []))
        if not contents:
            contents = [(None, None)]
        known = dataset
        for i, (content, sketch) in enumerate(contents):
            rows = self._call(
                "SELECT dpdesk.claim(%s, %s, %s, %s)",
                (
                    self.keyed(sha256),
                    dataset,
                    self.keyed_content(content) if content is not None else None,
                    sketch if content is not None else None,
                ),
            )
            if i == 0:
                known = str(rows[0][0])
        return known

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None


_STORES: dict[tuple[int, str], PgStore] = {}
_STORES_LOCK = threading.Lock()


def warm_up(home: Path) -> None:
    """When the home uses a team ledger: import its client and connect in a background thread, so that both happen
    while the caller does other work (a release loads its table meanwhile: the import alone is a tenth of a second).
    Nothing is read or written; any failure is left for the first real use to report."""
    try:
        url = team_url(home)
    except TeamLedgerError:
        return  # reported by the first real use
    if url is None:
        return

    def connect() -> None:
        with contextlib.suppress(Exception):
            store = team_store(home)
            if store is not None:
                with store._mutex:
                    store.connection()

    threading.Thread(target=connect, name="dpdesk-team-ledger", daemon=True).start()


def team_store(home: Path | None) -> PgStore | None:
    """The team ledger's store this home uses (one connection per process), or None."""
    url = team_url(home)
    if url is None:
        return None
    key = (os.getpid(), url)
    with _STORES_LOCK:  # the warm-up thread and the caller share one store
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = PgStore(check_url(url))
    return store


# -- the administrator's side: create the team ledger, add people --------------------------------------------------

#: what each role may do, by the name ``dpdesk team grant --role`` takes
ROLES = ("curator", "officer", "auditor")


def _too_old(conn: psycopg.Connection[Any], server: str) -> TeamLedgerError | None:
    """A refusal when the server is older than :data:`~dpdesk.core.ledger.pgschema.OLDEST_SERVER`."""
    version = conn.info.server_version  # e.g. 150018
    if version >= OLDEST_SERVER * 10000:
        return None
    return TeamLedgerError(
        _(
            "{server} runs PostgreSQL {version}, and a team ledger needs PostgreSQL {oldest} or newer; nothing was "
            "charged, revealed or changed"
        ).format(server=server, version=version // 10000, oldest=OLDEST_SERVER)
    )


def _admin(url: str) -> psycopg.Connection[Any]:
    import psycopg

    try:
        conn = psycopg.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name="dpdesk"
        )
    except psycopg.Error as exc:
        raise TeamLedgerError(
            _("cannot reach {server} ({detail}); nothing was changed").format(
                server=redacted(url), detail=" ".join(str(exc).split())[:300]
            )
        ) from None
    too_old = _too_old(conn, redacted(url))
    if too_old is not None:
        conn.close()
        raise too_old
    return conn


def create_team(url: str, prefix: str) -> str:
    """Create the team ledger (:func:`dpdesk.core.ledger.pgschema.schema_sql`) in the database ``url`` names, as an
    administrator who may create roles and schemas there; :class:`TeamLedgerError` when it cannot (nothing is
    left half-made: the script is one transaction, but roles, which belong to the server, are kept).

    A database that holds a team ledger of an older schema is upgraded instead
    (:func:`dpdesk.core.ledger.pgschema.upgrade_sql`: its entries, releases, keys and secret kept); one that is
    current is left as it is. Returns ``"created"``, ``"upgraded"`` or ``"current"``."""
    import psycopg

    from dpdesk.core.ledger.pgschema import schema_sql, upgrade_sql

    with _admin(url) as conn:
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'dpdesk'").fetchone()
        if exists:
            try:
                row = conn.execute("SELECT schema_version, prefix FROM dpdesk.team").fetchone()
            except psycopg.Error:
                row = None
            if row is None or not isinstance(row[0], int) or row[0] > SCHEMA_VERSION:
                raise TeamLedgerError(
                    _(
                        "{server} already holds a team ledger (schema dpdesk) that this dpdesk does not know how to "
                        "upgrade; nothing was changed"
                    ).format(server=redacted(url))
                )
            if row[0] == SCHEMA_VERSION:
                return "current"
            if row[1] != prefix:
                raise TeamLedgerError(
                    _(
                        "the team ledger at {server} has the role prefix {found}, not {given}: give --prefix {found} "
                        "to upgrade it; nothing was changed"
                    ).format(server=redacted(url), found=row[1], given=prefix)
                )
            try:
                conn.execute(upgrade_sql(prefix))
            except psycopg.Error as exc:
                raise TeamLedgerError(
                    _(
                        "could not upgrade the team ledger at {server}: {detail}. It needs the user who created it "
                        "(or give dpdesk team init --print-sql --upgrade to the database's administrator); nothing "
                        "was changed"
                    ).format(server=redacted(url), detail=" ".join(str(exc).split())[:300])
                ) from None
            return "upgraded"
        try:
            conn.execute(schema_sql(prefix))
        except psycopg.Error as exc:
            raise TeamLedgerError(
                _(
                    "could not create the team ledger at {server}: {detail}. It needs a user who may create roles "
                    "and schemas there (or give dpdesk team init --print-sql to the database's administrator)"
                ).format(server=redacted(url), detail=" ".join(str(exc).split())[:300])
            ) from None
        return "created"


#: a person's login role: a plain name (a small letter, then small letters, digits or _; at most 63 bytes)
PERSON_RE = re.compile(r"[a-z][a-z0-9_]{0,62}")
#: names PostgreSQL reserves for roles, never a person's
_RESERVED = ("public", "none", "current_user", "current_role", "session_user")


def check_person(user: str, role: str) -> None:
    """Refuse a role that is not a team role and a name that is not a plain login role's (:data:`PERSON_RE`):
    nothing else reaches the SQL, which quotes it all the same."""
    if role not in ROLES:
        raise TeamLedgerError(_("{role} is not a team role (curator, officer, auditor)").format(role=role))
    if not PERSON_RE.fullmatch(user) or user in _RESERVED or user.startswith("pg_"):
        raise TeamLedgerError(
            _(
                "{user} is not a plain database user name: a small letter, then up to 62 small letters, digits or "
                "_ (not public, none or a pg_ name); nothing was changed"
            ).format(user=user)
        )


def person_sql(prefix: str, user: str, role: str, *, remove: bool = False) -> str:
    """The SQL that makes ``user`` a ``role`` of the team (a login role without a password when the server has none
    of that name), or with ``remove`` takes the role away: for a database administrator to read or run."""
    from psycopg import sql

    check_person(user, role)
    team_role, person = sql.Identifier(f"{prefix}_{role}"), sql.Identifier(user)
    if remove:
        note = f"-- {user} is no longer a {role} of the team (roles prefixed {prefix}_); the entries they made stay\n"
        return note + (sql.SQL("REVOKE {} FROM {};\n").format(team_role, person).as_string())
    note = (
        f"-- make {user} a {role} of the team (roles prefixed {prefix}_); run as a user with CREATEROLE\n"
        "-- the login role has no password: libpq's password file or the server's pg_hba.conf decide how it logs in\n"
    )
    return note + (
        sql.SQL(
            "DO $person$ BEGIN\n"
            "  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {}) THEN\n"
            "    CREATE ROLE {} LOGIN;\n"
            "  END IF;\n"
            "END $person$;\n"
            "GRANT {} TO {};\n"
        )
        .format(sql.Literal(user), person, team_role, person)
        .as_string()
    )


def _team_prefix(conn: psycopg.Connection[Any], url: str) -> str:
    row = conn.execute("SELECT prefix FROM dpdesk.team").fetchone() if _has_team(conn) else None
    if row is None:
        raise TeamLedgerError(
            _("{server} holds no team ledger: create it first (dpdesk team init URL)").format(
                server=redacted(url)
            )
        )
    return str(row[0])


def _people_refused(
    conn: psycopg.Connection[Any], url: str, user: str, role: str, verb: str, exc: Any
) -> TeamLedgerError:
    detail = " ".join(str(exc).split())[:300]
    if getattr(exc, "sqlstate", None) == "42501":  # insufficient privilege: not the administrator
        me = conn.info.user
        return TeamLedgerError(
            _(
                "{me} may not add or remove the team's people at {server} ({detail}); nothing was changed. Ask the "
                "team's administrator (a database user with CREATEROLE), or give them the SQL that "
                "dpdesk team {verb} {user} --print-sql prints"
            ).format(me=me, server=redacted(url), detail=detail, verb=verb, user=user),
            reason=_("{me} may not add or remove the team's people at {server} ({detail})").format(
                me=me, server=redacted(url), detail=detail
            ),
        )
    return TeamLedgerError(
        _("could not change {user}'s {role} role at {server}: {detail}; nothing was changed").format(
            user=user, role=role, server=redacted(url), detail=detail
        )
    )


def grant(url: str, user: str, role: str) -> bool:
    """Give ``user`` (made a login role when the server has none of that name) the team's ``role``; whether the
    user was made. Passwords are set by the administrator's own tools, never by dpdesk."""
    import psycopg
    from psycopg import sql

    check_person(user, role)
    with _admin(url) as conn:
        prefix = _team_prefix(conn, url)
        made = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,)).fetchone() is None
        try:
            with conn.transaction():
                if made:
                    conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(user)))
                conn.execute(
                    sql.SQL("GRANT {} TO {}").format(sql.Identifier(f"{prefix}_{role}"), sql.Identifier(user))
                )
        except psycopg.Error as exc:
            raise _people_refused(conn, url, user, role, f"add-{role}", exc) from None
        return made


def revoke(url: str, user: str, role: str) -> bool:
    """Take the team's ``role`` from ``user`` (the login role itself is kept, and so is every entry it made); whether
    ``user`` had it."""
    import psycopg
    from psycopg import sql

    check_person(user, role)
    with _admin(url) as conn:
        prefix = _team_prefix(conn, url)
        had = _member(conn, f"{prefix}_{role}", user)
        if not had:
            return False
        try:
            conn.execute(
                sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(f"{prefix}_{role}"), sql.Identifier(user))
            )
        except psycopg.Error as exc:
            raise _people_refused(conn, url, user, role, f"remove-{role}", exc) from None
        still = _member(conn, f"{prefix}_{role}", user)
        if still:  # PostgreSQL only warns when the role may not be revoked by this user
            raise _people_refused(conn, url, user, role, f"remove-{role}", _NotAdmin())
        return True


def _member(conn: psycopg.Connection[Any], team_role: str, user: str) -> bool:
    """Whether ``user`` is granted ``team_role`` directly."""
    return (
        conn.execute(
            "SELECT 1 FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member "
            "WHERE r.rolname = %s AND m.rolname = %s",
            (team_role, user),
        ).fetchone()
        is not None
    )


class _NotAdmin(Exception):
    sqlstate = "42501"

    def __str__(self) -> str:
        return "must have admin option on the team's role"


def people(store: PgStore) -> dict[str, list[str]]:
    """The team's people by role (``curator``, ``officer``, ``auditor``): the roles granted each team role directly,
    from ``pg_auth_members``, which every user of the server may read."""
    rows = store._call(
        "SELECT r.rolname, m.rolname FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid "
        "JOIN pg_roles m ON m.oid = a.member, dpdesk.team t "
        "WHERE r.rolname IN (t.prefix || '_curator', t.prefix || '_officer', t.prefix || '_auditor') "
        "ORDER BY 1, 2"
    )
    out: dict[str, list[str]] = {role: [] for role in ROLES}
    for team_role, member in rows:
        out[str(team_role).rsplit("_", 1)[1]].append(str(member))
    return out


def overview(store: PgStore, latest: int = 3) -> list[dict[str, Any]]:
    """Every dataset of the team with its budget, spent and left under its method and its number of releases (the
    database's running state: one row a dataset), and its ``latest`` releases (who, when, what was charged); never
    the whole history."""
    from decimal import Decimal

    rows = store._call("SELECT * FROM dpdesk.overview()")
    recent = store._call(
        "SELECT e.dataset, e.seq, e.appended_by, e.appended, e.type, v->>'release_id', "
        "(v #>> '{charged,epsilon}')::numeric, (v #>> '{charged,delta}')::numeric, "
        "(SELECT coalesce(sum((c->>'epsilon')::numeric), 0) || ' ' || coalesce(sum((c->>'delta')::numeric), 0) "
        "   || ' ' || count(DISTINCT r.value) "
        "   FROM jsonb_array_elements(coalesce(v->'carried', '[]')) r "
        "   LEFT JOIN LATERAL jsonb_array_elements(r.value->'costs') c ON true), v->>'from' "
        "FROM dpdesk.datasets d CROSS JOIN LATERAL (SELECT x.dataset, x.seq, x.appended_by, x.appended, x.type, "
        "  convert_from(substring(x.line FROM 1 FOR length(x.line) - 1), 'UTF8')::jsonb AS v "
        "  FROM dpdesk.entries x WHERE x.dataset = d.dataset AND x.type IN ('spend', 'import') "
        "  ORDER BY x.seq DESC LIMIT %s) e "
        "ORDER BY e.dataset, e.seq DESC",
        (max(latest, 0),),
    )
    by_dataset: dict[str, list[dict[str, Any]]] = {}
    for dataset, seq, who, when, kind, release, eps, delta, carried, source in recent:
        item: dict[str, Any] = {
            "seq": int(seq),
            "kind": str(kind),
            "release_id": release,
            "released_by": str(who),
            "released": when.isoformat(),
        }
        if kind == "import":
            # a home's releases carried in (sequential sums of their stated costs, as the entry records them)
            c_eps, c_delta, n = str(carried).split(" ")
            item.update(
                charged={"epsilon": float(c_eps), "delta": float(c_delta)},
                releases=int(n),
                imported_from=source,
            )
        else:
            item["charged"] = {"epsilon": float(eps), "delta": float(delta)}
        by_dataset.setdefault(str(dataset), []).append(item)
    out: list[dict[str, Any]] = []
    for dataset, seq, method, b_eps, b_delta, retired, s_eps, s_delta, releases in rows:
        spent = left = None
        problems: list[str] = []
        if method is None:
            problems.append("no_budget")
        elif s_eps is None:
            problems.append("total_unknown")
        else:
            spent = {"epsilon": float(s_eps), "delta": float(s_delta)}
            left_e, left_d = Decimal(b_eps) - Decimal(s_eps), Decimal(b_delta) - Decimal(s_delta)
            left = {"epsilon": float(max(left_e, Decimal(0))), "delta": float(max(left_d, Decimal(0)))}
            if left_e < 0 or left_d < 0:
                problems.append("overspent")
        if retired:
            problems.append("merged")
        out.append(
            {
                "dataset": str(dataset),
                "entries": int(seq),
                "method": method,
                "budget": None if method is None else {"epsilon": float(b_eps), "delta": float(b_delta)},
                "spent": spent,
                "left": left,
                "releases": int(releases),
                "latest": by_dataset.get(str(dataset), []),
                "problems": problems,
            }
        )
    return out


def _has_team(conn: psycopg.Connection[Any]) -> bool:
    return conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'dpdesk'").fetchone() is not None


def describe(store: PgStore) -> dict[str, Any]:
    """What ``dpdesk team status`` shows: the server, the user, its roles, the schema and the datasets."""
    rows = store._call(
        "SELECT schema_version, prefix, dpdesk.is_curator(), dpdesk.is_officer(), "
        "(SELECT count(*) FROM dpdesk.datasets WHERE seq > 0) FROM dpdesk.team"
    )
    version, prefix, curator, officer, datasets = rows[0]
    return {
        "server": store.server,
        "user": store.user,
        "schema_version": version,
        "prefix": prefix,
        "curator": bool(curator),
        "officer": bool(officer),
        "datasets": int(datasets),
    }
