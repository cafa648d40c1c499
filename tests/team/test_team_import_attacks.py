"""The attacker's pass over ``dpdesk team import`` (issue 29, item 1): a curator who wants budget back, or a careless
user, against the real command line and a real PostgreSQL. Each test failed on the code before its fix (or is
marked xfail strict with the fix it needs)."""

from __future__ import annotations

import itertools
import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.team.conftest import Team, make_team
from tests.team.test_team_import import _release, _spent_in_own_ledger, _team_totals, plan_with_budget
from tests.team.test_team_release import DATA, dpdesk


def _resaved(path: Path) -> Path:
    """The same rows as DATA in another order (another file's bytes, the same table)."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n", encoding="utf-8")
    return path


def test_a_resaved_copy_is_refused_through_the_team_before_the_import(team: Team, tmp_path: Path) -> None:
    """Attack 3: the home released DATA in its own ledger; a re-saved copy (the same rows, other bytes), never opened
    in the home, released through the team would start a second budget there."""
    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    assert _release(plan, home, tmp_path / "local") == 0
    copy = _resaved(tmp_path / "copy.csv")
    url = team.url(team.users["alice"])
    r = dpdesk(
        "release", str(plan), "--data", str(copy), "--out", str(tmp_path / "team"), home=home, ledger=url
    )
    assert r.returncode == 3 and "dpdesk team import" in r.stderr, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and not (tmp_path / "team").exists()
    assert team.sql("SELECT count(*) FROM dpdesk.releases") == [(0,)]


def test_a_resaved_copy_is_refused_by_the_home_after_the_import(team: Team, tmp_path: Path) -> None:
    """Attack 2: after the import, disconnected, a re-saved copy of the table must not get a fresh budget in the
    home's own ledgers."""
    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    assert _release(plan, home, tmp_path / "local") == 0
    url = team.url(team.users["alice"])
    r = dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url)
    assert r.returncode == 0, r.stderr
    copy = _resaved(tmp_path / "copy.csv")
    r = dpdesk("release", str(plan), "--data", str(copy), "--out", str(tmp_path / "again"), home=home)
    assert r.returncode == 3 and "imported into a team's ledger" in r.stderr, (r.returncode, r.stderr)
    assert not (tmp_path / "again").exists()
    assert len(list((home / "ledgers").glob("ds-*.jsonl"))) == 1


def test_cutting_the_moved_entry_and_acknowledging_gives_nothing_back(team: Team, tmp_path: Path) -> None:
    """Attack 2: the curator deletes the home ledger's ``moved`` line, then acknowledges the "broken" ledger: the
    home's own ledger stays closed (the register keeps the mark), disconnected or not."""
    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    assert _release(plan, home, tmp_path / "local") == 0
    url = team.url(team.users["alice"])
    assert dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url).returncode == 0
    _spent, _n, local = _spent_in_own_ledger(home)
    own = home / "ledgers" / f"{local}.jsonl"
    lines = own.read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads(lines[-1])["type"] == "moved"
    own.write_text("".join(lines[:-1]), encoding="utf-8")
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "cut"), home=home)
    assert r.returncode == 3 and not (tmp_path / "cut").exists()
    moved_seq = json.loads(lines[-1])["seq"]
    r = dpdesk(
        "ledger",
        "acknowledge",
        "--data",
        str(DATA),
        "--reason",
        "the line was lost",
        "--cost",
        f"{moved_seq}=0",
        home=home,
    )
    # the acknowledgement succeeds (the cut line stated at no cost: it charged nothing), and still nothing is
    # released from the home's own ledger afterwards: the register's mark outlives the new chain
    assert r.returncode == 0, (r.stdout, r.stderr)
    r = dpdesk("release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "after"), home=home)
    assert r.returncode == 3 and not (tmp_path / "after").exists(), (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


def test_a_curators_import_cannot_change_the_unit_of_privacy(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack 4: a modified client's ``import`` (nothing carried) that keeps the budget and method but changes the
    unit of privacy the dataset's releases are costed under: a setting only an officer may change (a ``settings``
    entry after the first is refused to a curator), so the database refuses it as it does for the budget."""
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.loading import file_sha256

    home = team.home(tmp_path, "alice")
    url = team.url(team.users["alice"])
    plan = plan_with_budget(tmp_path, 2.0)
    assert _release(plan, home, tmp_path / "one", ledger=url) == 0
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("DPDESK_LEDGER", url)
    ledger = Ledger.for_dataset(home, file_sha256(DATA))
    with ledger.transaction(moving=True) as tx:
        settings = dict(tx.settings() or {})
    unit = dict(settings["privacy_unit"])
    assert unit.get("max_rows_per_person") == 1
    changed = {**settings, "privacy_unit": {**unit, "max_rows_per_person": 50}}
    forged = {"from": "ds-" + "0" * 32, "home_head": {"seq": 0, "hash": "0" * 64}, "carried": []}
    with pytest.raises(DpdeskError, match="only a privacy officer"), ledger.transaction(moving=True) as tx:
        tx.append("import", {**forged, "settings": changed})
    with pytest.raises(DpdeskError, match="only a privacy officer"), ledger.transaction(moving=True) as tx:
        tx.append("merge", {**forged, "settings": changed})
    assert _team_totals(team)[0] == Decimal("2.0")


_counter = itertools.count(1)

#: commits whose team ledger schema was version 1 (a team made by each must be upgraded whole by ``team init``)
_V1_SCHEMAS = ("3135a6b", "e7df355", "33fb62d", "7dda1f8", "1c691d1", "70d94c2")


def _old_schema_sql(commit: str, prefix: str) -> str:
    import subprocess

    root = Path(__file__).resolve().parents[2]
    source = subprocess.run(
        ["git", "show", f"{commit}:dpdesk/core/ledger/pgschema.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    namespace: dict[str, object] = {"__name__": f"old_pgschema_{commit}"}
    exec(
        compile(source, f"pgschema@{commit}", "exec"), namespace
    )  # the schema of this repository at an older commit
    schema_sql = namespace["schema_sql"]
    assert callable(schema_sql)
    return str(schema_sql(prefix))


@pytest.mark.parametrize("commit", _V1_SCHEMAS)
def test_a_team_made_by_any_version_1_schema_is_upgraded_whole(
    pg_server: object, tmp_path: Path, commit: str
) -> None:
    """Attack 5: ``team init`` on a team made by each earlier schema of version 1 either upgrades it to a ledger that
    releases, imports and shows its status, or refuses and changes nothing; never "Upgraded" and then broken."""
    import psycopg

    from dpdesk.core.ledger.pgstore import grant
    from tests.pgserver import PgServer

    assert isinstance(pg_server, PgServer)
    n = next(_counter)
    database = pg_server.new_database(f"old{commit}{n}")
    prefix = f"o{commit[:4]}x{n}"
    admin = pg_server.url(database=database)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(_old_schema_sql(commit, prefix).encode("utf-8"))
    r = dpdesk("team", "init", admin, "--prefix", prefix, home=tmp_path / "admin")
    assert r.returncode == 0 and "Upgraded" in r.stdout, (r.returncode, r.stdout, r.stderr)
    # the upgraded ledger has the current schema's functions, and no older one left beside them
    fresh = make_team(pg_server)
    functions = (
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'dpdesk' ORDER BY 1"
    )
    assert pg_server.sql(functions, database=database) == fresh.sql(functions)
    alice = f"alice{prefix}"
    grant(admin, alice, "curator")
    url = pg_server.url(alice, database)
    plan = plan_with_budget(tmp_path / "p", 3.0)
    home = tmp_path / "home"
    home.mkdir()
    r = dpdesk(
        "release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "one"), home=home, ledger=url
    )
    assert r.returncode == 0, (r.returncode, r.stderr)
    r = dpdesk("team", "status", home=home, ledger=url)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    other = tmp_path / "other-home"
    other.mkdir()
    assert _release(plan, other, tmp_path / "local") == 0
    r = dpdesk("team", "import", "--data", str(DATA), home=other, ledger=url)
    assert r.returncode == 0, (r.returncode, r.stderr)


def test_a_broken_own_ledger_is_named_with_the_way_to_acknowledge_it(team: Team, tmp_path: Path) -> None:
    """Attack 6 (a careless user): the home's own ledger of the table was damaged before the import. The import
    refuses it (exit 3), and what it says can be followed from a home connected to the team: ``dpdesk ledger
    acknowledge`` run there reaches the team's ledger, not the home's, and answered "nothing to acknowledge"."""
    import re

    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    for n in range(2):
        assert _release(plan, home, tmp_path / f"local{n}") == 0
    _spent, _n, local = _spent_in_own_ledger(home)
    own = home / "ledgers" / f"{local}.jsonl"
    lines = own.read_text(encoding="utf-8").splitlines(keepends=True)
    own.write_text("".join(lines[:-1]), encoding="utf-8")
    url = team.url(team.users["alice"])
    assert dpdesk("team", "connect", url, "--leave-local-ledgers", home=home).returncode == 0
    r = dpdesk("team", "import", "--data", str(DATA), home=home)
    assert r.returncode == 3 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    assert "dpdesk team disconnect" in r.stderr and "--leave-local-ledgers" in r.stderr, r.stderr
    # followed as written: disconnect, acknowledge (with the cost it asks for the entry cut), connect, import
    assert dpdesk("team", "disconnect", home=home).returncode == 0
    ack = ("ledger", "acknowledge", "--data", str(DATA), "--reason", "cut by a crash")
    r = dpdesk(*ack, home=home)
    cost = re.search(r"--cost (\d\S*)", r.stderr)
    if r.returncode != 0:
        assert cost is not None, r.stderr
        r = dpdesk(*ack, "--cost", cost.group(1), home=home)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert dpdesk("team", "connect", url, "--leave-local-ledgers", home=home).returncode == 0
    r = dpdesk("team", "import", "--data", str(DATA), home=home)
    assert r.returncode == 0, (r.returncode, r.stderr)
    # both releases that verified, and the entry cut at the cost the acknowledgement stated for it
    _budget, team_spent, releases = _team_totals(team)
    assert releases == 3 and team_spent >= _spent


def test_a_near_copy_gets_no_home_budget_after_the_import(team: Team, tmp_path: Path) -> None:
    """Attack 2: after the import, disconnected, a near-copy of the table (one row added) is neither released, nor
    linked to the closed ledger, nor charged anywhere in the home."""
    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    assert _release(plan, home, tmp_path / "local") == 0
    url = team.url(team.users["alice"])
    assert dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url).returncode == 0
    _spent, _n, local = _spent_in_own_ledger(home)
    lines = DATA.read_text(encoding="utf-8").splitlines()
    near = tmp_path / "near.csv"
    near.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    r = dpdesk("release", str(plan), "--data", str(near), "--out", str(tmp_path / "near-out"), home=home)
    assert r.returncode == 3 and not (tmp_path / "near-out").exists(), (r.returncode, r.stderr)
    r = dpdesk("ledger", "link", "--data", str(near), "--to", local, home=home)
    assert r.returncode == 3 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    r = dpdesk("release", str(plan), "--data", str(near), "--out", str(tmp_path / "near-out"), home=home)
    assert r.returncode == 3 and not (tmp_path / "near-out").exists(), (r.returncode, r.stderr)
    assert sorted(p.stem for p in (home / "ledgers").glob("ds-*.jsonl")) == [local]


def test_a_home_that_merged_two_datasets_of_the_table_imports_it_and_releases_every_save(
    team: Team, tmp_path: Path
) -> None:
    """Attack 1 and 6: a home merged two datasets of one table (an older version's race), then joins a team. The
    import carries the releases of both (the survivor's ledger holds them), once; afterwards every save of the table
    is released through the team, the one whose bytes the home knew under the retired dataset too (it was refused
    for ever: "import it first", while the import answered "imported before; nothing was changed")."""
    from tests.trust.test_merge_duplicates import make_twins, plan_file

    t = make_twins(tmp_path / "twins", a=(1.0, 0.3), b=(0.8, 0.3))
    r = dpdesk("ledger", "merge", "--data", str(t.lf), home=t.home)
    assert r.returncode == 0, r.stderr
    url = team.url(team.users["alice"])
    r = dpdesk("team", "import", "--data", str(t.lf), home=t.home, ledger=url)
    assert r.returncode == 0, (r.returncode, r.stderr)
    budget, spent, releases = _team_totals(team)
    assert (budget, releases) == (Decimal("0.8"), 2) and spent == Decimal("0.6")
    small = plan_file(tmp_path, "small", 0.8, 0.05)
    for n, data in enumerate((t.crlf, t.lf)):
        r = dpdesk(
            "release",
            str(small),
            "--data",
            str(data),
            "--out",
            str(tmp_path / f"team{n}"),
            home=t.home,
            ledger=url,
        )
        assert r.returncode == 0, (data.name, r.returncode, r.stderr)
    assert _team_totals(team)[2] == 4


def test_the_printed_upgrade_never_downgrades_a_newer_team(team: Team, tmp_path: Path) -> None:
    """Attack 5 (a careless administrator): ``team init --print-sql --upgrade`` of this dpdesk, run by hand on a team
    ledger a newer dpdesk made, stops and changes nothing (it replaced the newer functions and set the version
    back, so that clients this old were accepted again)."""
    import psycopg

    r = dpdesk("team", "init", "--print-sql", "--upgrade", "--prefix", team.prefix, home=tmp_path / "admin")
    assert r.returncode == 0, r.stderr
    team.sql(f"SET ROLE {team.prefix}_owner; UPDATE dpdesk.team SET schema_version = 99; RESET ROLE")
    with (
        psycopg.connect(team.admin, autocommit=True) as conn,
        pytest.raises(psycopg.Error, match="newer schema"),
    ):
        conn.execute(r.stdout.encode("utf-8"))
    assert team.sql("SELECT schema_version FROM dpdesk.team") == [(99,)]


def test_importing_through_a_resaved_copy_imports_the_homes_dataset_of_the_table(
    team: Team, tmp_path: Path
) -> None:
    """Attack 3: the import is run on a re-saved copy the home never opened (known to it only by its rows): the home's
    dataset of the table is imported, once, and every save is then released through the team from one budget."""
    plan = plan_with_budget(tmp_path, 3.0)
    home = team.home(tmp_path, "alice")
    for n in range(2):
        assert _release(plan, home, tmp_path / f"local{n}") == 0
    spent, n_local, local = _spent_in_own_ledger(home)
    url = team.url(team.users["alice"])
    copy = _resaved(tmp_path / "copy.csv")
    r = dpdesk("team", "import", "--data", str(copy), home=home, ledger=url)
    assert r.returncode == 0 and f"Imported dataset {local}" in r.stdout, (r.returncode, r.stderr)
    r = dpdesk("team", "import", "--data", str(DATA), home=home, ledger=url)
    assert r.returncode == 0 and "before; nothing was changed" in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert _team_totals(team) == (Decimal("3.0"), spent, n_local)
    assert _release(plan, home, tmp_path / "team0", ledger=url) == 0
    r = dpdesk(
        "release", str(plan), "--data", str(copy), "--out", str(tmp_path / "team1"), home=home, ledger=url
    )
    assert r.returncode == 1 and not (tmp_path / "team1").exists(), (r.returncode, r.stderr)
