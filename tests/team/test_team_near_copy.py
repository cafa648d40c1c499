"""A near-copy across the team (issue 27): a table whose rows mostly are a known dataset's, opened on another
curator's machine, is refused as at home (exit 3, naming the dataset and what it spent), nothing charged; a table
the team does not know is not (a real PostgreSQL)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.team.conftest import Team
from tests.team.test_team_release import DATA, PLAN, dpdesk

pytestmark = pytest.mark.slow


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


def test_a_near_copy_on_another_curators_machine_is_refused(team: Team, tmp_path: Path) -> None:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    assert _release(team, "alice", DATA, tmp_path, "a")[0] == 0
    dataset = team.sql("SELECT dataset FROM dpdesk.datasets")[0][0]
    # bob's table: a tenth of the rows left out (a near-copy; not the same rows, so not the same dataset by key)
    near = tmp_path / "near.csv"
    near.write_text("\n".join([header, *rows[: len(rows) * 9 // 10]]) + "\n", encoding="utf-8")
    code, err = _release(team, "bob", near, tmp_path, "b")
    assert code == 3 and f"resembles dataset {dataset}" in err and "%" in err, err
    assert "has spent epsilon 0.9 of its budget of 1" in err, (
        err
    )  # what the team's dataset spent, from the team
    assert not (tmp_path / "b").exists()
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert team.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'spend'") == [(1,)]
    # a table the team does not know (the same columns, other rows) is a new dataset of its own
    rng = random.Random(7)
    other = tmp_path / "other.csv"
    fields = header.split(",")
    shuffled = [",".join(rng.choice(rows).split(",")[i] for i in range(len(fields))) for _ in rows]
    other.write_text("\n".join([header, *shuffled]) + "\n", encoding="utf-8")
    code, err = _release(team, "bob", other, tmp_path, "c")
    assert code == 0, err
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(2,)]


def test_a_near_copy_is_declared_new_by_an_officer_not_linked_by_a_curator(
    team: Team, tmp_path: Path
) -> None:
    """Linking from a curator's machine is refused in a team, naming the officer's way (exit 2, never a
    traceback); the officer's declare-new files the table under the dataset its entry names."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    assert _release(team, "alice", DATA, tmp_path, "a")[0] == 0
    known = team.sql("SELECT dataset FROM dpdesk.datasets")[0][0]
    near = tmp_path / "near.csv"
    near.write_text("\n".join([lines[0], *lines[1 : len(lines) * 9 // 10]]) + "\n", encoding="utf-8")
    bob = team.url(team.users["bob"])
    r = dpdesk("ledger", "link", "--data", str(near), "--to", known, home=tmp_path / "home-bob", ledger=bob)
    assert r.returncode == 2 and "ask a privacy officer" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = dpdesk(
        "ledger",
        "declare-new",
        "--data",
        str(near),
        "--resembles",
        known,
        "--reason",
        "the 2025 wave",
        home=tmp_path / "home-olga",
        ledger=team.url(team.users["olga"]),
    )
    assert r.returncode == 0, r.stderr
    named = r.stdout.split("is a new dataset, ")[1].split(",")[0]
    assert sorted(str(d) for (d,) in team.sql("SELECT dataset FROM dpdesk.datasets")) == sorted(
        [known, named]
    )
    first = team.sql(f"SELECT type FROM dpdesk.entries WHERE dataset = '{named}' ORDER BY seq")
    assert first == [("declared_new",)]


def test_the_team_keeps_a_tables_sketches_for_curators_only(team: Team, tmp_path: Path) -> None:
    """The sketches are read through the function only, by curators and officers; an auditor is refused."""
    assert _release(team, "alice", DATA, tmp_path, "a")[0] == 0
    assert team.sql("SELECT count(*) FROM dpdesk.sketches") == [(2,)]  # one per scheme of content key
    import psycopg

    for user in ("audrey", "mallory"):
        with pytest.raises(psycopg.Error, match=r"not a curator|permission denied"):
            team.sql("SELECT * FROM dpdesk.sketches(10)", team.users[user])
        with pytest.raises(psycopg.Error, match="permission denied"):
            team.sql("SELECT * FROM dpdesk.sketches", team.users[user])


def test_the_sketches_the_team_keeps_hold_no_count_of_the_table(team: Team, tmp_path: Path) -> None:
    """What the database keeps of a released table (read as its administrator would) names no row count: not the
    table's, nor a column's counts under a key; a near-copy is still found from it (the test above)."""
    assert _release(team, "alice", DATA, tmp_path, "a")[0] == 0
    rows = len(DATA.read_text(encoding="utf-8").splitlines()) - 1
    texts = team.sql("SELECT sketch FROM dpdesk.sketches")
    assert len(texts) == 2  # one per scheme of content key
    import json

    for (text,) in texts:
        assert '"rows"' not in text and f": {rows}," not in text and f": {rows}}}" not in text, text[:300]
        (columns,) = json.loads(str(text))["columns"].values()
        assert columns["marginals"] == {}


def test_a_near_copy_of_a_wide_table_is_refused_in_the_team(team: Team, tmp_path: Path) -> None:
    """A table wide enough that its sketches pass the team's size limit (200 more columns: about 1.1 MB of JSON
    against 1 MiB) is still recorded with its content sketch, so a near-copy of it on another curator's machine is
    refused (before, its sketches were dropped whole: the near-copy was a new dataset, a second budget for its
    rows, and the team could not tell which scheme of key the dataset was known by)."""
    from dpdesk.core.ledger.pgschema import MAX_SKETCH_BYTES

    lines = DATA.read_text(encoding="utf-8").splitlines()
    extra = 200
    header = lines[0] + "," + ",".join(f"w{j}" for j in range(extra))
    rows = [
        line + "," + ",".join(str((i * 7919 + j * 104729) % 100003) for j in range(extra))
        for i, line in enumerate(lines[1:])
    ]
    wide = tmp_path / "wide.csv"
    wide.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    assert _release(team, "alice", wide, tmp_path, "a")[0] == 0
    dataset = team.sql("SELECT dataset FROM dpdesk.datasets")[0][0]
    kept = team.sql("SELECT octet_length(sketch) FROM dpdesk.sketches")
    assert len(kept) == 2 and all(0 < int(str(n)) <= MAX_SKETCH_BYTES for (n,) in kept)  # one per scheme
    near = tmp_path / "near.csv"
    near.write_text("\n".join([header, *rows[: len(rows) * 9 // 10]]) + "\n", encoding="utf-8")
    code, err = _release(team, "bob", near, tmp_path, "b")
    assert code == 3 and f"resembles dataset {dataset}" in err, err
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert not (tmp_path / "b").exists()


def _wide(tmp_path: Path, name: str, extra: int, drop: int | None = None) -> Path:
    """DATA with ``extra`` more columns (``drop``: that one left out), as the wide-table test writes them."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    keep = [j for j in range(extra) if j != drop]
    header = lines[0] + "," + ",".join(f"w{j}" for j in keep)
    rows = [
        line + "," + ",".join(str((i * 7919 + j * 104729) % 100003) for j in keep)
        for i, line in enumerate(lines[1:])
    ]
    out = tmp_path / name
    out.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return out


def test_a_wide_tables_copy_with_a_column_dropped_is_refused_in_the_team_as_at_home(
    team: Team, tmp_path: Path
) -> None:
    """The same rows with one of 201 columns left out: refused at home (its column sketches find it), and in the
    team too, its column sketches kept thinned to fit the team's limit (found by the attack pass of s23: they were
    dropped whole, and the copy was a new dataset, a second budget for the same rows)."""
    wide, dropped = _wide(tmp_path, "wide.csv", 200), _wide(tmp_path, "dropped.csv", 200, drop=199)
    home = tmp_path / "own"
    assert (
        dpdesk("release", str(PLAN), "--data", str(wide), "--out", str(tmp_path / "h1"), home=home).returncode
        == 0
    )
    at_home = dpdesk("release", str(PLAN), "--data", str(dropped), "--out", str(tmp_path / "h2"), home=home)
    assert at_home.returncode == 3, at_home.stderr  # at home: refused as a near-copy
    assert _release(team, "alice", wide, tmp_path, "a")[0] == 0
    code, err = _release(team, "bob", dropped, tmp_path, "b")
    assert code == 3, err
    # a column dropped and a tenth of the rows left out: found by the thinned sketches, not by a key
    lines = dropped.read_text(encoding="utf-8").splitlines()
    both = tmp_path / "both.csv"
    both.write_text("\n".join(lines[: len(lines) * 9 // 10]) + "\n", encoding="utf-8")
    code, err = _release(team, "bob", both, tmp_path, "c")
    assert code == 3, err
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
