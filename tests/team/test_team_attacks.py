"""An attacker's pass over the team ledger (issue 27, slice 1): what a curator with psql or a modified client, an
auditor, or a login role with no team role can do to the database's promises. Each test states the promise and is
marked ``xfail(strict=True)`` with the finding it shows (TA-n in the report): it fails on the code as it is, and
turns into an unexpected pass (an error under ``strict``) once the finding is fixed, so the marker must go then.
A real PostgreSQL server (tests/pgserver.py), never a mock."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from dpdesk.core.ledger.checkpoint import state_of
from dpdesk.core.ledger.entries import entry_hash, new_dataset_id, read_chain
from dpdesk.core.model.spec import canonical_json
from tests.team.conftest import Team
from tests.team.test_team_database import _OPEN, Chain, refused


@pytest.fixture(autouse=True)
def _close_chains() -> Any:
    yield
    while _OPEN:
        _OPEN.pop().conn.close()


def client_view(team: Team, dataset: str) -> list[Any]:
    """The chain as every curator's dpdesk reads it (the bytes from the database, verified by the engine)."""
    rows = team.sql(f"SELECT line FROM dpdesk.entries WHERE dataset = '{dataset}' ORDER BY seq")
    return read_chain(b"".join(bytes(r[0]) for r in rows), dataset, dataset)  # type: ignore[call-overload]


def cost(epsilon: float) -> dict[str, Any]:
    return {"name": "q", "epsilon": epsilon, "delta": 0.0, "rho": 0.0}


def spend_payload(release_id: str, epsilon: float) -> dict[str, Any]:
    """A spend as dpdesk writes one (with its charge and method, so that the engine reads it back)."""
    return {
        "release_id": release_id,
        "costs": [cost(epsilon)],
        "delta_prime": None,
        "charged": {"epsilon": epsilon, "delta": 0.0},
        "method": "sequential",
    }


# -- TA-1 (critical): pg_temp is searched first for types inside the SECURITY DEFINER functions -----------------------


def test_a_curators_temporary_table_cannot_void_the_budget_check(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    attacker = Chain(team, "alice")  # a fresh session (plpgsql compiles append once per session)
    attacker.dataset, attacker.seq, attacker.head = c.dataset, c.seq, c.head
    shadow = 'CREATE TEMP TABLE "{name}" (epsilon numeric(1, -1000), delta numeric(1, -1000))'
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no temporary tables for anyone but the owner
        attacker.conn.execute(shadow.format(name="record"))
    # and were they allowed (a database whose administrator gives TEMPORARY back), the functions name pg_temp last
    team.sql(f"GRANT TEMPORARY ON DATABASE {team.database} TO {team.users['alice']}")
    for name in (
        "record",
        "numeric",
        "jsonb",
        "text",
        "datasets",
        "releases",
    ):  # a function sees none of them
        attacker.conn.execute(shadow.format(name=name))
    refused("DP006", lambda: attacker.append("spend", spend_payload("r1", 100.0)))


# -- TA-2 (high): a spend reusing a release id is not charged by the database ----------------------------------------


def test_a_spend_reusing_a_release_id_is_charged(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    c.append("spend", spend_payload("same", 0.6))
    try:
        c.append("spend", spend_payload("same", 0.6))
    except psycopg.Error as exc:
        assert exc.sqlstate in ("DP006", "DP002")
        return
    spent = state_of(client_view(team, c.dataset)).spent
    assert float(spent.to_dict()["sequential"]["epsilon"]) <= 1.0, spent.to_dict()


# -- TA-3 (high): a curator's merge entry changes the dataset's budget ------------------------------------------------


def test_a_curator_cannot_raise_the_budget_with_a_merge_entry(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    c.append("spend", spend_payload("r1", 0.9))
    settings = {
        "budget": {"epsilon": 1000.0, "delta": 1e-6},
        "accounting": {"method": "sequential"},
        "privacy_unit": {"rows_per_person": 1},
    }
    try:
        c.append(
            "merge",
            {
                "merged": new_dataset_id(),
                "reason": "x",
                "carried": [],
                "decided_by": "curator",
                "settings": settings,
            },
        )
    except psycopg.Error:
        return  # refused: the promise holds
    c.append("spend", spend_payload("r2", 500.0))  # the database takes it...
    entries = client_view(team, c.dataset)  # ...and every client agrees the budget is now 1000
    settings_now = state_of(entries).settings
    assert settings_now is not None and settings_now["budget"]["epsilon"] == 1.0


# -- TA-4 (high): lines the database takes and no client can read brick a dataset for good --------------------------


def _canonical(stored: dict[str, Any]) -> bytes:
    stored["hash"] = entry_hash(stored)
    return (canonical_json(stored) + "\n").encode()


def _raw(stored: dict[str, Any], body: str) -> bytes:
    """``body`` (JSON text without the hash member) with its hash member, hashed as the database checks it."""
    import hashlib

    h = hashlib.sha256(body.encode()).hexdigest()
    assert body.endswith("}")
    return (body[:-1] + f',"hash":"{h}"' + "}\n").encode()


def _unreadable(c: Chain, kind: str) -> bytes:
    base: dict[str, Any] = {
        "seq": c.seq + 1,
        "type": "package",
        "time": "2026-11-28T00:00:00+00:00",
        "dataset": c.dataset,
        "prev": c.head,
        "author": c.team.users[c.user],
        "dpdesk_version": "test",
        "files": [],
    }
    if kind == "unknown type":
        return _canonical({**base, "type": "note"})
    if kind == "spend without its charge":
        return _canonical(
            {**base, "type": "spend", "release_id": "r", "costs": [cost(0.1)], "delta_prime": None}
        )
    if kind == "a space":
        return _raw(base, json.dumps(base, sort_keys=True, separators=(", ", ":")))
    if kind == "keys out of order":
        return _raw(base, json.dumps(base, separators=(",", ":")))
    if kind == "1e400":
        return _raw(base, canonical_json(base)[:-1] + ',"z":1e400}')
    if kind == "a key twice":
        return _raw(base, canonical_json(base)[:-1] + ',"z":1,"z":2}')
    if kind == "nested 40 deep":
        return _raw(base, canonical_json(base)[:-1] + ',"z":' + "[" * 40 + "]" * 40 + "}")
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "unknown type",
        "spend without its charge",
        "a space",
        "keys out of order",
        "1e400",
        "nested 40 deep",
        "a key twice",
    ],
)
def test_every_line_the_database_takes_every_client_reads(team: Team, kind: str) -> None:
    """TA-4: a line the clients could not read would stop the dataset for the whole team, for good (a team's chain
    is never repaired): the database refuses what dpdesk's reader refuses (nesting, a key twice, a number no float
    holds, an unknown type, a spend without its charge), and what it takes in another JSON form (a space, keys out
    of order) verifies by its stored bytes."""
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    try:
        c.append("package", {}, line=_unreadable(c, kind))
    except psycopg.Error as exc:
        assert exc.sqlstate == "DP002", exc
        assert kind not in ("a space", "keys out of order"), kind  # harmless forms are taken
        return
    entries = client_view(team, c.dataset)  # no DpdeskError: every client reads it
    assert len(entries) == 2 and kind in ("a space", "keys out of order"), kind


# -- TA-5 (medium): claim() files any keyed hash under any existing dataset -----------------------------------------


def test_claim_never_files_a_new_key_under_an_existing_dataset(team: Team) -> None:
    victim = Chain(team, "bob")
    victim.settings(1.0, 1e-6)  # another table's dataset
    conn = Chain(team, "alice").conn
    refused("DP008", lambda: conn.execute("SELECT dpdesk.claim(%s, %s)", ("ab" * 32, victim.dataset)))


# -- TA-6 (medium): a correction or carried release with a delta' above 1 blocks every later spend ---------------


def test_a_delta_prime_above_one_is_refused_where_it_is_booked(team: Team) -> None:
    """TA-6: a delta' of 1 or more (in a spend, or a correction of a recorded release) would make every later
    advanced total fail to compute (the square root of a negative number): refused where it is booked."""
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6, "advanced")
    c.append("spend", {**spend_payload("r", 0.1), "method": "advanced"})
    for bad in (1.0, 2.0, 0.0, -1e-9):
        release = {"release_id": "r", "costs": [cost(0.1)], "delta_prime": bad}
        refused(
            "DP002",
            lambda release=release: c.append("correction", {"releases": [release], "added_epsilon": 0}),
        )
        refused(
            "DP002", lambda bad=bad: c.append("spend", {**spend_payload(f"s{bad}", 0.01), "delta_prime": bad})
        )
    release = {"release_id": "ghost", "costs": [cost(0.1)], "delta_prime": None}
    refused("DP002", lambda: c.append("correction", {"releases": [release], "added_epsilon": 0.1}))
    c.append("spend", {**spend_payload("ok", 0.01), "delta_prime": 1e-7, "method": "advanced"})


# -- TA-7 (medium): a role with no team role holds a dataset's writer lock -----------------------------------------


def test_only_curators_can_take_a_chains_writer_lock(team: Team) -> None:
    """TA-7: the writer lock is taken through dpdesk.try_lock (curators and officers only), under a key derived from
    the team's secret: the auditor and a role of no team may not call it, and a plain advisory lock they take on any
    key they can name (the dataset's public id) does not hold a curator back."""
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    for who in ("audrey", "mallory"):
        with psycopg.connect(team.url(team.users[who]), autocommit=True) as conn:
            with pytest.raises(psycopg.Error) as info:
                conn.execute("SELECT dpdesk.try_lock(%s)", (c.dataset,))
            assert info.value.sqlstate in ("42501", "DP001")
            for key in (f"dpdesk.chain:{c.dataset}", c.dataset, f"lock:{c.dataset}"):
                conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            got = c.conn.execute("SELECT dpdesk.try_lock(%s)", (c.dataset,)).fetchone()
            assert got == (True,), who
            c.conn.execute("SELECT dpdesk.unlock(%s)", (c.dataset,))
