"""Spark Connect for real (issue 32): a Spark Connect server started by the test session on 127.0.0.1
(:mod:`tests.spark.connect_server`) gives the in-memory engine's states and data check bit for bit, and a release
through it (``dpdesk release ... --engine spark --spark-remote sc://127.0.0.1:PORT``) is charged to the file's
dataset, the one the other engines charge. The Spark engine's refusals are one line on stderr, exit 2, nothing
charged: an unreachable server (in seconds), a remote address without TLS and a token, ``--spark-master yarn``,
--spark-* without --engine spark, a source that does not exist or that Spark cannot read, a synthetic table, a
declared column missing from the header, pyspark not installed; a token is never printed.

The Spark Connect client runs in child processes (pyspark holds one kind of session a process, and these tests
share theirs with the local session of the other Spark tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.model.spec import plan_to_dict
from tests.core.test_engines import make_plan, write_table
from tests.pgserver import free_port
from tests.spark.connect_server import remote_states
from tests.spark.test_spark_engine import memory_engine, variant

pytest.importorskip("pyspark")

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, home: Path, lang: str = "en", timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": lang, "PYTHONPATH": str(ROOT)}
    env.pop("DPDESK_LANG", None)
    if lang != "en":
        env["DPDESK_LANG"] = lang
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def nothing_charged(home: Path, data: Path) -> bool:
    return not Ledger.for_dataset(home, sha(data)).verify()


@pytest.mark.parametrize(
    ("relation", "x_missing", "fmt"),
    [("add_remove", "drop", "csv"), ("replace", {"impute": -1.5}, "parquet")],
)
def test_spark_connect_gives_the_in_memory_states_bit_for_bit(
    tmp_path: Path, connect_server: Any, relation: str, x_missing: Any, fmt: str
) -> None:
    plan = variant(make_plan(None), relation, x_missing)
    path = tmp_path / "t.csv"
    write_table(path, 2000, seed=5, with_id=False)
    if fmt == "parquet":
        import polars as pl

        pl.read_csv(path, infer_schema=False).write_parquet(tmp_path / "t.parquet")
        path = tmp_path / "t.parquet"
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan_to_dict(plan)), encoding="utf-8")
    got = remote_states(plan_path, path, connect_server.address)
    mem = memory_engine(plan, path)
    check = mem.check()
    assert got["rows"] == check.rows
    assert got["columns"] == [
        [c.name, c.missing, c.undeclared, c.unparsable, c.clamped] for c in check.columns
    ]
    assert sum(c.unparsable + c.undeclared for c in check.columns) > 0  # the table has problems to count
    assert got["states"] == json.loads(json.dumps(mem.aggregate(None, NULL_PROGRESS).states))  # as lists
    assert got["sha256"] == sha(path)


def clean_table(path: Path, n: int = 400) -> Path:
    """A table with no data problems (numpy's generator, test only), so a release goes ahead without
    --accept-data-problems."""
    rng = np.random.default_rng(3)
    lines = ["x,n,g"]
    lines += [
        f"{rng.uniform(-9, 5):.3f},{rng.integers(-3, 25)},{rng.choice(['a', 'b', 'c'])}" for _ in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def small_plan(path: Path, **change: Any) -> Path:
    plan: dict[str, Any] = {
        "version": 1,
        "budget": {"epsilon": 1.0},
        "privacy_unit": {"neighbouring": "add_remove"},
        "columns": {
            "x": {"type": "float", "bounds": [-7, 3], "missing": "drop"},
            "n": {"type": "int", "bounds": [0, 20], "missing": {"impute": 3}},
            "g": {"type": "category", "categories": ["a", "b", "c"]},
        },
        "queries": [
            {"name": "c", "statistic": "count", "mechanism": "laplace", "epsilon": 0.5},
            {"name": "m", "statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 0.25},
            {"name": "h", "statistic": "histogram", "column": "g", "mechanism": "laplace", "epsilon": 0.25},
        ],
    }
    plan.update(change)
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def check_lines(stderr: str) -> list[str]:
    """The data check's lines on stderr: its heading and the indented column lines."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("dpdesk: Data check of"))
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return lines[start:end]


def test_a_release_through_spark_connect_is_charged_to_the_dataset_the_other_engines_charge(
    tmp_path: Path, connect_server: Any
) -> None:
    """The plan spends the whole budget: released through Spark Connect, then the same file through the in-memory
    engine is over budget (the same dataset, the same ledger), with the same data check; one spend entry."""
    home = tmp_path / "home"
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    remote = ("--engine", "spark", "--spark-remote", connect_server.address)
    first = cli("release", str(plan), "--data", str(data), "--out", str(tmp_path / "o1"), *remote, home=home)
    assert first.returncode == 0, first.stderr
    assert "Released 5 value(s) of 3 queries" in first.stdout
    assert (tmp_path / "o1" / "release.csv").is_file()
    second = cli("release", str(plan), "--data", str(data), "--out", str(tmp_path / "o2"), home=home)
    assert second.returncode == 1, second.stderr
    assert "over budget" in second.stderr and "epsilon 0 and delta 0 left" in second.stderr
    assert check_lines(first.stderr) == check_lines(second.stderr)
    assert "clamped to the bounds [-7, 3]" in check_lines(first.stderr)[1]
    spends = [e for e in Ledger.for_dataset(home, sha(data)).verify() if e.type == "spend"]
    assert len(spends) == 1
    third = cli("release", str(plan), "--data", str(data), "--out", str(tmp_path / "o3"), *remote, home=home)
    assert third.returncode == 1 and "over budget" in third.stderr, third.stderr
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()


def test_a_folder_released_through_spark_connect_is_named_by_its_content(
    tmp_path: Path, connect_server: Any
) -> None:
    """A folder of Parquet parts (a source only the cluster reads) through Spark Connect: the server's snapshot and
    content identity name it, so after the same rows released from a CSV file it is over budget (one dataset)."""
    import polars as pl

    home = tmp_path / "home"
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    first = cli("release", str(plan), "--data", str(data), "--out", str(tmp_path / "o1"), home=home)
    assert first.returncode == 0, first.stderr
    frame = pl.read_csv(data, infer_schema=False)  # text columns, as Spark reads the CSV
    folder = tmp_path / "parts"
    folder.mkdir()
    frame[:150].write_parquet(folder / "a.parquet")
    frame[150:].write_parquet(folder / "b.parquet")
    remote = ("--engine", "spark", "--spark-remote", connect_server.address)
    second = cli(
        "release", str(plan), "--data", str(folder), "--out", str(tmp_path / "o2"), *remote, home=home
    )
    assert second.returncode == 1 and "over budget" in second.stderr, second.stderr
    assert not (tmp_path / "o2").exists()


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line of a refusal (exit 2, nothing on stdout)."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpdesk: "), result.stderr
    return lines[0]


def test_an_unreachable_spark_connect_server_is_refused_in_seconds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    port = free_port()  # closed: nothing listens there
    for address in (f"sc://127.0.0.1:{port}", f"sc://127.0.0.1:{port};token=SECRET123"):
        began = time.monotonic()
        got = cli(
            "release",
            str(plan),
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
            "--engine",
            "spark",
            "--spark-remote",
            address,
            home=home,
            timeout=90,  # the client's own retries would take ten minutes
        )
        took = time.monotonic() - began
        line = refused(got)
        assert f"sc://127.0.0.1:{port}" in line and "check the address, that its server runs" in line
        assert "nothing was charged" in line and "SECRET123" not in got.stderr + got.stdout
        assert took < 30, took  # not the client's ten minutes of retries
    assert nothing_charged(home, data) and not (tmp_path / "o").exists()


def test_refusals_are_one_line_exit_2_and_charge_nothing(tmp_path: Path, connect_server: Any) -> None:
    home = tmp_path / "home"
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    out = str(tmp_path / "o")
    remote = ("--engine", "spark", "--spark-remote", connect_server.address)
    synthetic = small_plan(
        tmp_path / "synth.json",
        queries=[{"name": "s", "statistic": "synthetic", "columns": ["x", "g"], "epsilon": 1.0}],
    )
    no_x = tmp_path / "no_x.csv"
    no_x.write_text(data.read_text(encoding="utf-8").replace("x,n,g", "y,n,g", 1), encoding="utf-8")
    not_parquet = tmp_path / "t.parquet"
    not_parquet.write_bytes(b"x,n,g\n1,2,a\n")
    cases: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
        (
            ("--data", str(data), "--engine", "spark", "--spark-remote", "sc://spark.example.org:15002"),
            ("sc://spark.example.org:15002", "TLS and a token", ";use_ssl=true;token=TOKEN"),
        ),
        (
            (
                "--data",
                str(data),
                "--engine",
                "spark",
                "--spark-remote",
                "sc://spark.example.org:15002;token=T0",
            ),
            ("sc://spark.example.org:15002", ";use_ssl=true;token=TOKEN"),
        ),
        (
            ("--data", str(data), "--engine", "spark", "--spark-remote", "sc://10.0.0.7:15002;use_ssl=true"),
            ("sc://10.0.0.7:15002", ";use_ssl=true;token=TOKEN"),
        ),
        (
            (
                "--data",
                str(data),
                "--engine",
                "spark",
                "--spark-remote",
                "sc://127.0.0.1:abc;token=SECRET123",
            ),
            ("'sc://127.0.0.1:abc' is not a Spark Connect address",),
        ),
        (
            ("--data", str(data), "--engine", "spark", "--spark-master", "yarn"),
            ("--spark-master takes local[N]", "--spark-remote sc://HOST:PORT"),
        ),
        (("--data", str(data), "--spark-master", "local[1]"), ("go with --engine spark",)),
        (("--data", str(data), "--spark-remote", connect_server.address), ("go with --engine spark",)),
        (("--data", str(tmp_path / "nothere.csv"), *remote), ("nothere.csv: no such file",)),
        (("--data", str(no_x), *remote), ("declared column(s) 'x' not found in the header", "'y', 'n', 'g'")),
        (("--data", str(not_parquet), *remote), ("t.parquet: Spark cannot read it",)),
    ]
    for args, words in cases:
        line = refused(cli("release", str(plan), "--out", out, *args, home=home))
        for w in words:
            assert w in line, (args, line)
        assert "SECRET123" not in line and "T0" not in line
    line = refused(cli("release", str(synthetic), "--data", str(data), "--out", out, *remote, home=home))
    assert "query 's': the Spark engine does not compute a synthetic" in line
    for path in (data, no_x, not_parquet):
        assert nothing_charged(home, path)
    assert not Path(out).exists()


def test_a_refusal_in_chinese(tmp_path: Path) -> None:
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    got = cli(
        "release",
        str(plan),
        "--data",
        str(data),
        "--out",
        str(tmp_path / "o"),
        "--engine",
        "spark",
        "--spark-remote",
        "sc://spark.example.org:15002",
        home=tmp_path / "home",
        lang="zh_CN",
    )
    line = refused(got)
    assert "sc://spark.example.org:15002" in line and "TLS" in line and "令牌" in line, line
    assert "sensitive" not in line


def test_without_pyspark_the_fix_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dpdesk_home: Path
) -> None:
    from dpdesk.cli import main

    for name in [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    data = clean_table(tmp_path / "t.csv")
    plan = small_plan(tmp_path / "plan.json")
    code = main(
        [
            "release",
            str(plan),
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
            "--engine",
            "spark",
            "--spark-master",
            "local[1]",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "pip install 'dpdesk[spark]'" in err, err
    assert nothing_charged(dpdesk_home, data) and not (tmp_path / "o").exists()
