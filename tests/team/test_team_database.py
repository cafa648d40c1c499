"""What the team ledger's database enforces whatever the client does: roles, the chain, the hash, the author and the
budget, each checked by calling the database directly as a curator with a modified client would
(:mod:`dpdesk.core.ledger.pgschema`). A real PostgreSQL server, never a mock."""

from __future__ import annotations

import random
from typing import Any

import psycopg
import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.ledger.entries import GENESIS, entry_hash, new_dataset_id
from dpdesk.core.model.spec import canonical_json
from tests.team.conftest import Team


class Chain:
    """Entries for one dataset, made as dpdesk makes them, appended through ``dpdesk.append`` as ``user``."""

    def __init__(self, team: Team, user: str) -> None:
        self.team, self.user = team, user
        self.dataset = new_dataset_id()
        self.seq, self.head = 0, GENESIS
        self.conn = psycopg.connect(team.url(team.users[user]), autocommit=True)
        _OPEN.append(self)

    def line(self, kind: str, payload: dict[str, Any], **override: Any) -> bytes:
        stored = {
            "seq": self.seq + 1,
            "type": kind,
            "time": "2026-11-28T00:00:00+00:00",
            "dataset": self.dataset,
            "prev": self.head,
            "author": self.team.users[self.user],
            "dpdesk_version": "test",
            **payload,
        }
        stored.update({k: v for k, v in override.items() if k != "hash"})
        stored["hash"] = override.get("hash", entry_hash(stored))
        return (canonical_json(stored) + "\n").encode()

    def append(
        self, kind: str, payload: dict[str, Any], *, line: bytes | None = None, **override: Any
    ) -> None:
        raw = line if line is not None else self.line(kind, payload, **override)
        self.conn.execute("SELECT dpdesk.append(%s, %s)", (self.dataset, raw))
        self.seq += 1
        self.head = self.conn.execute(
            "SELECT head FROM dpdesk.datasets WHERE dataset = %s", (self.dataset,)
        ).fetchone()[0]  # type: ignore[index]

    def settings(self, epsilon: float, delta: float, method: str = "sequential") -> None:
        self.append(
            "settings",
            {
                "settings": {
                    "budget": {"epsilon": epsilon, "delta": delta},
                    "accounting": {"method": method},
                    "privacy_unit": {"rows_per_person": 1},
                },
                "reason": "first release",
            },
        )

    def spend(self, costs: list[tuple[float, float, float]], delta_prime: float | None = None) -> None:
        self.append(
            "spend",
            {
                "release_id": f"r{self.seq + 1}",
                "costs": [
                    {"name": f"q{i}", "epsilon": e, "delta": d, "rho": r} for i, (e, d, r) in enumerate(costs)
                ],
                "delta_prime": delta_prime,
                "charged": {"epsilon": sum(x[0] for x in costs), "delta": sum(x[1] for x in costs)},
                "method": "as the settings say",
            },
        )


_OPEN: list[Chain] = []


@pytest.fixture(autouse=True)
def _close_chains() -> Any:
    yield
    while _OPEN:
        _OPEN.pop().conn.close()


def refused(state: str, call: Any) -> str:
    with pytest.raises(psycopg.Error) as info:
        call()
    assert info.value.sqlstate == state, (info.value.sqlstate, str(info.value))
    return str(info.value)


# -- the chain, the hash and the author ---------------------------------------------------------------------------


def test_a_chain_is_appended_in_order_and_kept_as_the_bytes_sent(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    sent = c.line(
        "spend",
        {
            "release_id": "r",
            "costs": [{"name": "q", "epsilon": 0.1, "delta": 0.0, "rho": 0.0}],
            "delta_prime": None,
            "charged": {"epsilon": 0.1, "delta": 0.0},
            "method": "sequential",
            "values": [{"x": 1e-320, "y": "雪"}],
        },
    )
    c.append("spend", {}, line=sent)
    rows = team.sql(
        f"SELECT line, appended_by FROM dpdesk.entries WHERE dataset = '{c.dataset}' ORDER BY seq"
    )
    assert bytes(rows[1][0]) == sent  # bytea: not re-serialised (jsonb would rewrite 1e-320 and reorder keys)
    assert rows[0][1] == rows[1][1] == team.users["alice"]


def test_a_forged_hash_is_refused(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    good = c.line("package", {"files": []})
    forged = good.replace(b'"files":[]', b'"files":[1]')  # edited after hashing
    refused("DP003", lambda: c.append("package", {}, line=forged))
    refused("DP003", lambda: c.append("package", {"files": []}, hash="0" * 64))
    refused("DP003", lambda: c.append("package", {"files": []}, hash="zz"))
    # the hash member twice (once nested): never accepted, whichever occurrence would be cut
    h = entry_hash({"x": 1})
    twice = c.line("package", {"files": [{"hash": h}]}, hash=h)
    refused("DP003", lambda: c.append("package", {}, line=twice))
    c.append("package", {"files": []})  # the chain still takes a true entry


def test_a_line_that_is_not_one_json_object_is_refused(team: Team) -> None:
    c = Chain(team, "alice")
    for bad in (b"", b"\n", b"not json\n", b"[1,2]\n", b'{"a":1}', b'{"a":1}\n{"b":2}\n', b"\xff\xfe\n"):
        refused(
            "DP002" if bad not in (b'{"a":1}\n',) else "DP003", lambda bad=bad: c.append("x", {}, line=bad)
        )


def test_a_broken_link_is_refused_so_two_writers_never_fork_a_chain(team: Team) -> None:
    alice, bob = Chain(team, "alice"), Chain(team, "bob")
    bob.dataset = alice.dataset
    alice.settings(1.0, 1e-6)
    bob.seq, bob.head = alice.seq, alice.head
    line_a = alice.line("package", {"files": ["a"]})
    line_b = bob.line("package", {"files": ["b"]})
    alice.append("package", {}, line=line_a)
    message = refused(
        "DP004", lambda: bob.append("package", {}, line=line_b)
    )  # bob read the head before alice's
    assert "another release was recorded first" in message
    refused("DP004", lambda: alice.append("package", {"files": []}, seq=alice.seq + 2))
    refused("DP004", lambda: alice.append("package", {"files": []}, prev=GENESIS))
    assert team.sql(f"SELECT max(seq) FROM dpdesk.entries WHERE dataset = '{alice.dataset}'") == [(2,)]


def test_an_entry_naming_another_author_or_dataset_is_refused(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    refused("DP005", lambda: c.append("package", {"files": []}, author=team.users["bob"]))
    refused("DP002", lambda: c.append("package", {"files": []}, dataset=new_dataset_id()))
    refused("DP008", lambda: c.conn.execute("SELECT dpdesk.append('ds-x', %s)", (b"{}\n",)))


# -- roles ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE dpdesk.datasets SET budget_epsilon = 1000",
        "DELETE FROM dpdesk.entries",
        "TRUNCATE dpdesk.entries",
        "INSERT INTO dpdesk.keys VALUES (repeat('a', 64), 'ds-00000000000000000000000000000000', 'x', now())",
        "UPDATE dpdesk.releases SET epsilon = 0",
        "SELECT secret FROM dpdesk.team",
        "SELECT dpdesk.book('ds-00000000000000000000000000000000', 'r', '[]', 'null', 'spend')",
    ],
)
def test_curators_and_officers_write_nothing_but_through_the_functions(team: Team, statement: str) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    for user in ("alice", "olga"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            team.sql(statement, team.users[user])


def test_settings_after_the_first_governance_and_acknowledgements_are_the_officers(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)  # the budget fixed at the first release, as with the file ledger
    message = refused("DP001", lambda: c.settings(100.0, 1e-6))
    assert "only a privacy officer" in message
    for kind in ("govern", "acknowledge", "declare_new"):
        refused("DP001", lambda kind=kind: c.append(kind, {"reason": "x"}))
    for kind in ("simulate", "migrate"):
        refused("DP001", lambda kind=kind: c.append(kind, {}))
    officer = Chain(team, "olga")
    officer.dataset, officer.seq, officer.head = c.dataset, c.seq, c.head
    officer.settings(2.0, 1e-6)  # the officer may
    assert team.sql(f"SELECT budget_epsilon FROM dpdesk.datasets WHERE dataset = '{c.dataset}'") == [(2,)]


def test_the_auditor_reads_and_appends_nothing_and_others_nothing_at_all(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    assert team.sql("SELECT count(*) FROM dpdesk.entries", team.users["audrey"]) == [(1,)]
    for user in ("audrey", "mallory"):
        with pytest.raises(psycopg.Error) as info:
            team.sql(f"SELECT dpdesk.append('{c.dataset}', '\\x7b7d0a')", team.users[user])
        assert info.value.sqlstate in ("42501", "DP001")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            team.sql("SELECT dpdesk.secret()", team.users[user])
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        team.sql("SELECT count(*) FROM dpdesk.entries", team.users["mallory"])


def test_the_functions_are_security_definer_with_a_fixed_search_path_and_no_public_execute(
    team: Team,
) -> None:
    rows = team.sql(
        "SELECT p.proname, p.prosecdef, p.proconfig, pg_get_userbyid(p.proowner), p.proacl::text "
        "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'dpdesk'"
    )
    by_name = {r[0]: r for r in rows}
    for name in ("append", "claim", "dataset_of", "secret"):
        _n, definer, config, owner, acl = by_name[name]
        assert definer and owner == f"{team.prefix}_owner"
        assert config == ["search_path=pg_catalog, dpdesk, pg_temp"]
        grantees = [item.split("=")[0] for item in str(acl).strip("{}").split(",")]
        assert "" not in grantees and grantees  # no EXECUTE for PUBLIC (an empty grantee)
    owner = team.sql(f"SELECT rolcanlogin FROM pg_roles WHERE rolname = '{team.prefix}_owner'")
    assert owner == [(False,)]


# -- the budget, computed in the database -------------------------------------------------------------------------


def test_sequential_budget_is_exact_at_the_boundary(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(0.3, 1e-6)
    c.spend([(0.1, 0.0, 0.0)])
    c.spend([(0.2, 5e-7, 0.0)])  # 0.1 + 0.2 is 0.3 exactly in decimals (0.30000000000000004 in floats)
    message = refused("DP006", lambda: c.spend([(1e-17, 0.0, 0.0)]))
    assert "more than the dataset's budget" in message
    refused("DP006", lambda: c.spend([(0.0, 5.000000000000001e-7, 0.0)]))  # delta: 1e-6 and a little
    c.spend([(0.0, 5e-7, 0.0)])


def test_a_spend_before_any_budget_or_with_bad_costs_is_refused(team: Team) -> None:
    c = Chain(team, "alice")
    refused("DP007", lambda: c.spend([(0.1, 0.0, 0.0)]))
    c.settings(1.0, 1e-6)
    refused("DP002", lambda: c.spend([(-0.5, 0.0, 0.0)]))
    refused(
        "DP002",
        lambda: c.append("spend", {"release_id": "r", "costs": [{"epsilon": "0.1", "delta": 0, "rho": 0}]}),
    )
    refused("DP002", lambda: c.append("spend", {"release_id": "r"}))


def test_a_correction_raises_a_release_and_counts_against_the_budget(team: Team) -> None:
    c = Chain(team, "alice")
    c.settings(1.0, 1e-6)
    c.spend([(0.5, 0.0, 0.0)])
    c.append(
        "correction",
        {
            "releases": [
                {"release_id": "r2", "costs": [{"name": "q", "epsilon": 0.9, "delta": 0.0, "rho": 0.0}]}
            ],
            "added_epsilon": 0.4,
        },
    )
    refused("DP006", lambda: c.spend([(0.2, 0.0, 0.0)]))  # 0.9 + 0.2 > 1 (0.5 + 0.2 would fit)
    c.spend([(0.1, 0.0, 0.0)])


def _engine_total(method: str, releases: list[acc.Release], delta: float) -> acc.Total:
    return acc.dataset_total(method, releases, delta)


@pytest.mark.parametrize("method", ["advanced", "zcdp"])
def test_advanced_and_zcdp_totals_match_the_engine_and_the_stricter_wins_at_the_boundary(
    team: Team, method: str
) -> None:
    """The database's total of random releases agrees with the engine's to 1e-9 (relative); a budget just below the
    engine's total refuses the spend that reaches it, one just above takes it."""
    rng = random.Random(27)
    b_delta = 1e-5
    for trial in range(3):
        releases: list[list[tuple[float, float, float]]] = []
        for _ in range(rng.randint(1, 4)):
            q = []
            for _ in range(rng.randint(1, 5)):
                e = round(rng.uniform(0.01, 0.3), 6)
                q.append((e, 0.0 if method == "zcdp" else rng.choice([0.0, 1e-8]), round(e * e / 2, 12)))
            releases.append(q)
        engine = _engine_total(
            method, [acc.Release(tuple(acc.QueryCost("q", *x) for x in r), None) for r in releases], b_delta
        )
        for factor, fits in ((1 - 1e-9, False), (1 + 1e-9, True)):
            c = Chain(team, "alice")
            c.settings(
                engine.epsilon * factor,
                max(engine.delta, b_delta) if method == "advanced" else b_delta,
                method,
            )
            if method == "advanced":  # the deltas are set so that only epsilon decides
                c2 = Chain(team, "alice")
                c2.settings(engine.epsilon * factor, 1.0, method)
                c = c2
            for r in releases[:-1]:
                c.spend(r)
            if fits:
                c.spend(releases[-1])
            else:
                refused("DP006", lambda c=c, r=releases[-1]: c.spend(r))
        assert trial >= 0


def test_the_zcdp_conversion_in_the_database_matches_opendps(team: Team) -> None:
    from dpdesk.core.dp.mechanisms import rho_to_epsilon

    conn = Chain(team, "alice").conn
    for rho, delta in ((1e-6, 1e-6), (0.001, 1e-9), (0.05, 1e-6), (0.5, 1e-5), (5.0, 1e-3), (200.0, 1e-6)):
        got = conn.execute(
            "SELECT dpdesk.rho_to_epsilon(%s::numeric, %s::numeric)", (repr(rho), repr(delta))
        ).fetchone()
        assert got is not None
        db = float(got[0])
        engine = rho_to_epsilon(rho, delta)
        assert abs(db - engine) <= 1e-9 * engine, (rho, delta, db, engine)
