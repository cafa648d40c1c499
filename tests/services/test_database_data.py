"""Tables from PostgreSQL (issue 30, item 4), against the real server the suite starts (``pg_server``): a table and
the same rows in a CSV file are one dataset with one budget, the same aggregates and the same package but for the
noise; each failure is one line naming the server and the fix, nothing charged; a query runs read-only; a password
is never taken, so never written; the private copy of the rows is gone after the command."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES
from tests.pgserver import PgServer

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
COLUMNS = (
    "age int, sex text, education int, occupation text, hours int, wage float8, region text, state text, "
    "weight float8"
)

_names = itertools.count(1)

pytestmark = pytest.mark.slow  # each starts (once) a real server and releases through the command line


def _database(pg_server: PgServer, table: str = "people") -> str:
    """A new database holding the sample table as ``table``; its URL naming the table."""
    database = pg_server.new_database(f"data{next(_names)}")
    pg_server.sql(f"CREATE TABLE {table} ({COLUMNS})", database=database)
    import psycopg

    with (
        psycopg.connect(pg_server.url(database=database), autocommit=True) as conn,
        conn.cursor().copy(f"COPY {table} FROM STDIN (FORMAT csv, HEADER)") as copy,  # type: ignore[arg-type]
    ):
        copy.write(DATA.read_bytes())
    return pg_server.url(database=database) + f"&table={table}"


def _shuffled_csv(tmp_path: Path) -> Path:
    """The sample's rows in another order (the bytes differ; the rows do not)."""
    rows = list(csv.reader(io.StringIO(DATA.read_text(encoding="utf-8"))))
    body = rows[1:]
    random.Random(3).shuffle(body)
    out = tmp_path / "shuffled.csv"
    with out.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([rows[0], *body])
    return out


def _main(*args: str) -> int:
    from dpdesk.cli.program import main

    return main(list(args))


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder of the test's own, where dpdesk's private copies of the rows go."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_a_table_and_its_csv_are_one_dataset_with_one_budget(
    pg_server: PgServer,
    dpdesk_home: Path,
    tmp_path: Path,
    tmpdir_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _database(pg_server)
    assert _main("release", str(PLAN), "--data", url, "--out", str(tmp_path / "out")) == 0
    assert "charged epsilon 0.9" in capsys.readouterr().out
    assert list(tmpdir_env.iterdir()) == []  # the private copy of the rows is gone
    # the same rows in a CSV file, in another order: the same dataset, with what the table's release spent
    assert _main("release", str(PLAN), "--data", str(_shuffled_csv(tmp_path)), "--check") == 1
    said = capsys.readouterr().out
    assert "OVER BUDGET" in said and "Earlier releases of this dataset: 1" in said
    assert _main("ledger", "--json") == 0
    listed = [json.loads(line)["dataset"] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(listed) == 1, listed


def test_a_csv_released_first_is_recognised_in_the_database(
    pg_server: PgServer,
    dpdesk_home: Path,
    tmp_path: Path,
    tmpdir_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _database(pg_server)
    assert (
        _main("release", str(PLAN), "--data", str(_shuffled_csv(tmp_path)), "--out", str(tmp_path / "o")) == 0
    )
    capsys.readouterr()
    # the table's rows, read in another order than the file's (a query ordering them): the same dataset
    reordered = url.replace("&table=people", "&query=SELECT+*+FROM+people+ORDER+BY+wage+DESC")
    for data in (url, reordered):
        assert _main("budget", str(PLAN), "--data", data) == 1
        assert "Earlier releases of this dataset: 1" in capsys.readouterr().out
    assert list(tmpdir_env.iterdir()) == []


def _prepared(data: str | Path, home: Path) -> Any:
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.services.database import data_file
    from dpdesk.services.release import ReleaseRequest, prepare_plan_release

    with data_file(data) as path:
        prepared = prepare_plan_release(ReleaseRequest(load_plan(PLAN), path, home))
    prepared.close()
    return prepared


def test_same_identity_and_aggregates_as_the_csv(
    pg_server: PgServer, dpdesk_home: Path, tmp_path: Path
) -> None:
    from dpdesk.core.identity.recognition import identity_of
    from dpdesk.services.database import data_file

    url = _database(pg_server)
    from_db = _prepared(url, dpdesk_home)
    from_csv = _prepared(_shuffled_csv(tmp_path), dpdesk_home)
    assert from_db.exacts == from_csv.exacts  # every query's exact aggregate
    assert from_db.check == from_csv.check  # the data check's counts
    with data_file(url) as path:
        key = identity_of(dpdesk_home, path).key
    assert key == identity_of(dpdesk_home, _shuffled_csv(tmp_path)).key
    assert key == identity_of(dpdesk_home, DATA).key


def test_same_package_but_for_the_noise(
    pg_server: PgServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmpdir_env: Path
) -> None:
    url = _database(pg_server)
    outs = []
    for name, data in (("db", url), ("csv", str(DATA))):
        monkeypatch.setenv("DPDESK_HOME", str(tmp_path / f"home-{name}"))  # two homes: both are charged
        out = tmp_path / f"out-{name}"
        assert _main("release", str(PLAN), "--data", data, "--out", str(out)) == 0
        outs.append(out)
    db, file = outs
    assert sorted(p.name for p in db.iterdir()) == sorted(p.name for p in file.iterdir())
    assert (db / "plan.json").read_bytes() == (file / "plan.json").read_bytes()

    def shape(out: Path) -> list[list[str]]:  # release.csv without its noisy values
        rows = list(csv.reader(io.StringIO((out / "release.csv").read_text(encoding="utf-8"))))
        value = rows[0].index("value")
        return [r[:value] + r[value + 1 :] for r in rows if r[0].startswith("#") or len(r) > value]

    def stripped(rows: list[list[str]]) -> list[list[str]]:
        header = rows[0]
        drop = {i for i, h in enumerate(header) if h in ("ci_low", "ci_high", "lower", "upper")}
        return [[c for i, c in enumerate(r) if i not in drop] for r in rows]

    assert stripped(shape(db)) == stripped(shape(file))
    ledgers = [json.loads((o / "ledger.json").read_text(encoding="utf-8")) for o in outs]
    assert [e["type"] for e in ledgers[0]["entries"]] == [e["type"] for e in ledgers[1]["entries"]]
    assert ledgers[0]["dataset"] != ledgers[1]["dataset"]  # two homes, two datasets: each its own name


def _refused(args: list[str], capsys: pytest.CaptureFixture[str], home: Path) -> str:
    """Run a command that must be refused: exit 2, one line on stderr (returned), nothing charged."""
    assert _main(*args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert not (home / "ledgers").exists() or list((home / "ledgers").glob("*.jsonl")) == []
    return err


def test_each_failure_is_one_line_naming_the_server_and_the_fix(
    pg_server: PgServer,
    dpdesk_home: Path,
    tmp_path: Path,
    tmpdir_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _database(pg_server)
    database = url.split("/")[3].split("?")[0]
    pg_server.sql("CREATE ROLE reader LOGIN")
    out = str(tmp_path / "out")
    cases = {
        # the server is not there (a port nothing listens on)
        url.replace(f"port={pg_server.port}", "port=1"): ("cannot reach the database server", ":1/"),
        # a login the server refuses
        url.replace("admin@", "nobody@"): ("did not accept the login", "~/.pgpass"),
        url.replace(f"/{database}?", "/nodatabase?"): ("no such database", "nodatabase"),
        url.replace("table=people", "table=public.nothere"): (
            "there is no table public.nothere",
            "table=SCHEMA.NAME",
        ),
        url.replace("admin@", "reader@"): ("this user may not read people", "grant SELECT"),
    }
    for data, (what, fix) in cases.items():
        for command in (
            ["release", str(PLAN), "--data", data, "--out", out],
            ["budget", str(PLAN), "--data", data],
        ):
            err = _refused(command, capsys, dpdesk_home)
            assert what in err and fix in err and "nothing was charged" in err, err
            assert err.startswith("dpdesk: postgresql://") and f"{pg_server.root}" in err, (
                err
            )  # the server named
        assert not Path(out).exists()
    assert list(tmpdir_env.iterdir()) == []


def test_a_table_name_is_an_identifier_and_a_query_runs_read_only(
    pg_server: PgServer, dpdesk_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _database(pg_server, table='"Census Wages"')
    database = url.split("/")[3].split("?")[0]
    pg_server.sql("CREATE TABLE writes (n int)", database=database)
    pg_server.sql(
        "CREATE FUNCTION bump() RETURNS int LANGUAGE sql VOLATILE AS 'INSERT INTO writes VALUES (1) RETURNING 1'",
        database=database,
    )
    base = url.split("&table=")[0]
    # a mixed-case name with a space: quoted as one identifier, so read as it is
    assert _main("budget", str(PLAN), "--data", base + "&table=public.Census+Wages") == 0
    capsys.readouterr()
    # a name that tries to be SQL is only a name
    err = _refused(
        ["budget", str(PLAN), "--data", base + "&table=writes;DROP+TABLE+writes"], capsys, dpdesk_home
    )
    assert "there is no table" in err
    # a query that would write: refused by the read-only transaction, nothing written
    query = base + '&query=SELECT+*,+bump()+AS+b+FROM+"Census+Wages"'
    err = _refused(["budget", str(PLAN), "--data", query], capsys, dpdesk_home)
    assert "would change the database" in err, err
    err = _refused(
        ["budget", str(PLAN), "--data", base + "&query=SELECT+1;DROP+TABLE+writes"], capsys, dpdesk_home
    )
    assert pg_server.sql("SELECT count(*) FROM writes", database=database) == [(0,)]


def _every_file(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


def test_a_password_is_never_taken_nor_written(
    pg_server: PgServer,
    dpdesk_home: Path,
    tmp_path: Path,
    tmpdir_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = _database(pg_server)
    secret = "Sw0rdfish-PD"
    with_password = url.replace("admin@", f"admin:{secret}@")
    for data in (with_password, url + f"&password={secret}"):
        err = _refused(
            ["release", str(PLAN), "--data", data, "--out", str(tmp_path / "o")], capsys, dpdesk_home
        )
        assert "~/.pgpass" in err and "PGPASSWORD" in err and secret not in err
    # the password in libpq's environment variable: used by libpq, written nowhere
    import os

    os.environ["PGPASSWORD"] = secret
    try:
        assert _main("release", str(PLAN), "--data", url, "--out", str(tmp_path / "out")) == 0
        assert _main("ledger", "statement", "--data", url, "--out", str(tmp_path / "s.pdf")) == 0
    finally:
        del os.environ["PGPASSWORD"]
    said = capsys.readouterr()
    assert secret not in said.out + said.err
    written = _every_file(dpdesk_home, tmp_path)
    assert any(p.name == "release.csv" for p in written) and any(p.suffix == ".jsonl" for p in written)
    assert [p for p in written if secret.encode() in p.read_bytes()] == []
    assert [p for p in written if "dpdesk-partitions" in str(p)] == []


def test_plan_new_declares_the_tables_columns_and_number_types(
    pg_server: PgServer,
    dpdesk_home: Path,
    tmp_path: Path,
    tmpdir_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = _database(pg_server)
    monkeypatch.chdir(tmp_path)
    assert _main("plan", "new", "--data", url) == 0
    assert url in capsys.readouterr().out  # named as given, not by the private copy
    plan = json.loads((tmp_path / "people_plan.json").read_text(encoding="utf-8"))
    columns = plan["columns"]
    assert list(columns) == DATA.read_text(encoding="utf-8").splitlines()[0].split(",")
    # the database's declared types (public schema); bounds and categories are left to fill, never read off values
    types = {name: c["type"] for name, c in columns.items()}
    assert types == {
        "age": "int",
        "sex": "?",
        "education": "int",
        "occupation": "?",
        "hours": "int",
        "wage": "float",
        "region": "?",
        "state": "?",
        "weight": "float",
    }
    assert all(c["bounds"] == ["?", "?"] for c in columns.values())
    assert list(tmpdir_env.iterdir()) == []


def test_the_rows_text_does_not_depend_on_the_servers_settings(pg_server: PgServer, tmp_path: Path) -> None:
    """Dates, times and floats are written the same whatever the database's defaults (its time zone, date style,
    float digits): the same rows, the same bytes, the same dataset."""
    from dpdesk.core.loading.database import copy_to_file, parse_source

    database = pg_server.new_database(f"data{next(_names)}")
    pg_server.sql(
        "CREATE TABLE t AS SELECT timestamptz '2025-03-04 05:06:07+00' AS at, date '2025-03-04' AS day, "
        "0.1::float8 AS x",
        database=database,
    )
    url = pg_server.url(database=database) + "&table=t"
    got = []
    for zone, style, digits in (("UTC", "ISO, YMD", 1), ("Asia/Shanghai", "SQL, DMY", -2)):
        for key, value in (("TimeZone", zone), ("DateStyle", style), ("extra_float_digits", digits)):
            pg_server.sql(f"ALTER DATABASE {database} SET {key} = '{value}'")
        out = tmp_path / f"{len(got)}.csv"
        copy_to_file(parse_source(url), out)
        got.append(out.read_bytes())
    assert got[0] == got[1] == b"at,day,x\n2025-03-04 05:06:07+00,2025-03-04,0.1\n"
