"""The team records the scheme-2 content key of every table its curators release, beside scheme 1's (issue 32), so
that the same rows read by Spark, named by scheme 2 alone, find their dataset; a dataset the team knew by its
scheme-1 key only (claimed by an older dpdesk) gets its scheme-2 key at its file's next release (a real
PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpdesk.core.ledger.entries import new_dataset_id
from dpdesk.core.ledger.pgstore import PgStore
from dpdesk.core.loading import file_sha256
from dpdesk.core.loading.identity import content_identity
from dpdesk.core.loading.typed_identity import content_identity2
from tests.team.conftest import Team
from tests.team.test_team_release import DATA, PLAN, dpdesk

pytestmark = pytest.mark.slow


def _schemes(team: Team) -> list[int]:
    """The scheme of each content sketch the team keeps (read as its administrator would)."""
    out = []
    for (text,) in team.sql("SELECT sketch FROM dpdesk.sketches"):
        for raw in json.loads(str(text))["contents"].values():
            out.append(int(raw.get("scheme", 1)))
    return sorted(out)


def claim_as_before_scheme2(team: Team, who: str, data: Path) -> str:
    """What a dpdesk before scheme 2 recorded for a new table in the team: its file's keyed hash and its scheme-1
    content key and sketches (one claim); the dataset's id."""
    from dpdesk.core.identity.recognition import _team_sketch

    store = PgStore(team.url(team.users[who]))
    try:
        ident = content_identity(data, store.identity_secret())
        store.remember_content(
            file_sha256(data), ident.key, json.dumps(_team_sketch(ident.key, ident.sketch, ident.columns))
        )
        return store.claim(file_sha256(data), new_dataset_id())
    finally:
        store.close()


def scheme2_owner(team: Team, who: str, data: Path) -> str | None:
    """The team's dataset of the file's rows by their scheme-2 content key (None: the team does not know it)."""
    store = PgStore(team.url(team.users[who]))
    try:
        return store.dataset_of_content(content_identity2(data, store.identity_secret()).key)
    finally:
        store.close()


def _release(team: Team, who: str, data: Path, tmp_path: Path, out: str) -> tuple[int, str]:
    r = dpdesk(
        "release",
        str(PLAN),
        "--data",
        str(data),
        "--out",
        str(tmp_path / out),
        home=tmp_path / f"home-{who}",
        ledger=team.url(team.users[who]),
    )
    return r.returncode, r.stderr


def test_a_table_released_in_the_team_is_known_by_its_scheme2_key_too(team: Team, tmp_path: Path) -> None:
    assert _release(team, "alice", DATA, tmp_path, "a")[0] == 0
    (dataset,) = [str(r[0]) for r in team.sql("SELECT dataset FROM dpdesk.datasets")]
    assert scheme2_owner(team, "bob", DATA) == dataset  # on another curator's machine, by the team's secret
    assert _schemes(team) == [1, 2]


def test_a_file_the_team_knew_by_scheme1_only_gets_its_scheme2_key_at_its_next_release(
    team: Team, tmp_path: Path
) -> None:
    dataset = claim_as_before_scheme2(team, "alice", DATA)
    assert scheme2_owner(team, "alice", DATA) is None and _schemes(team) == [1]
    code, err = _release(team, "bob", DATA, tmp_path, "b")  # the same file, known to the team by its bytes
    assert code == 0, err
    assert scheme2_owner(team, "alice", DATA) == dataset
    assert _schemes(team) == [1, 2]
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert team.sql("SELECT count(DISTINCT dataset), count(*) FROM dpdesk.keys") == [(1, 3)]


def test_the_team_lists_a_dataset_known_by_scheme1_only_until_its_file_is_budgeted(
    team: Team, tmp_path: Path
) -> None:
    """:func:`team_scheme1_only` (the hazard a cluster table is refused for) names the dataset an older dpdesk
    claimed, and no longer once a curator has budgeted its file (no release needed: ``dpdesk budget`` resolves it,
    in a pass of its own since no loader read it)."""
    from dpdesk.core.identity.recognition import team_scheme1_only

    dataset = claim_as_before_scheme2(team, "alice", DATA)
    store = PgStore(team.url(team.users["bob"]))
    try:
        assert team_scheme1_only(store) == [dataset]
        r = dpdesk(
            "budget",
            str(PLAN),
            "--data",
            str(DATA),
            home=tmp_path / "home-bob",
            ledger=team.url(team.users["bob"]),
        )
        assert r.returncode == 0, r.stderr
        assert team_scheme1_only(store) == []
        assert scheme2_owner(team, "bob", DATA) == dataset
    finally:
        store.close()


def test_many_newer_tables_never_hide_a_dataset_known_by_scheme1_only(team: Team) -> None:
    """The hazard check counts every sketch the team keeps, not the near-copy check's window of the most recent
    (MAX_SKETCHES): a curator who claims that many newer tables (here written straight into the database, as
    their claims would) does not push the old dataset out of it, so its rows read by Spark are still refused rather
    than given a second budget. A sketch that is not JSON is skipped, never an error for the whole team."""
    from dpdesk.core.identity.recognition import team_scheme1_only
    from dpdesk.core.ledger.pgschema import MAX_SKETCHES

    dataset = claim_as_before_scheme2(team, "alice", DATA)
    newer = new_dataset_id()
    later = json.dumps({"contents": {"k": {"scheme": 2}}, "columns": {}})
    team.sql(
        f"SET ROLE {team.prefix}_owner; "
        f"INSERT INTO dpdesk.datasets (dataset, created_by, created) VALUES ('{newer}', 'x', clock_timestamp()); "
        "INSERT INTO dpdesk.sketches SELECT lpad(to_hex(i), 64, '0'), "
        f"'{newer}', '{later}', 'x', clock_timestamp() + i * interval '1 second' "
        f"FROM generate_series(1, {MAX_SKETCHES + 20}) i; "
        "INSERT INTO dpdesk.sketches VALUES (repeat('f', 64), "
        f"'{newer}', 'not json', 'x', clock_timestamp() + interval '1 day'); RESET ROLE"
    )
    store = PgStore(team.url(team.users["bob"]))
    try:
        assert dataset not in {d for d, _text in store.sketches()}  # out of the near-copy check's window
        assert team_scheme1_only(store) == [dataset]
    finally:
        store.close()
