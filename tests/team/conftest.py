"""The team ledger's tests share one real PostgreSQL server (started once, stopped at the end); each test gets a
database of its own holding a fresh team ledger, with a curator, a second curator, an officer and an auditor."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.pgserver import PgServer

_names = itertools.count(1)


@dataclass
class Team:
    server: PgServer
    database: str
    prefix: str
    users: dict[str, str] = field(default_factory=dict)

    def url(self, user: str) -> str:
        return self.server.url(user, self.database)

    @property
    def admin(self) -> str:
        return self.server.url(database=self.database)

    def sql(self, statement: str, user: str = "admin") -> list[tuple[object, ...]]:
        return self.server.sql(statement, user, self.database)

    def home(self, tmp_path: Path, name: str) -> Path:
        home = tmp_path / f"home-{name}"
        home.mkdir(parents=True, exist_ok=True)
        return home


@pytest.fixture
def team(pg_server: PgServer) -> Team:
    """A fresh team ledger: ``alice`` and ``bob`` curators, ``olga`` officer, ``audrey`` auditor, ``mallory`` a
    login role of the server with no team role."""
    return make_team(pg_server)


def make_team(pg_server: PgServer) -> Team:
    """A fresh team ledger in a database of its own (what the ``team`` fixture gives; a test wanting several
    calls this)."""
    from dpdesk.core.ledger.pgstore import create_team, grant

    n = next(_names)
    database = pg_server.new_database(f"team{n}")
    prefix = f"t{n}"
    t = Team(pg_server, database, prefix)
    create_team(t.admin, prefix)
    for user, role in (("alice", "curator"), ("bob", "curator"), ("olga", "officer"), ("audrey", "auditor")):
        grant(t.admin, f"{user}{n}", role)
    pg_server.sql(f"CREATE ROLE mallory{n} LOGIN")
    t.users.update({u: f"{u}{n}" for u in ("alice", "bob", "olga", "audrey", "mallory")})
    return t
