"""Issue 24 item 8, the smaller findings: each test failed on the code before its fix."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_PLAN = REPO / "resources" / "samples" / "cps_wages_plan.json"
SAMPLE_DATA = REPO / "resources" / "samples" / "census_sample.csv"


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    from dpdesk.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symbolic links to devices are POSIX")
def test_force_replaces_only_regular_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """`--out /dev/null --force` (as root) replaced the system's /dev/null with a regular file: --force replaced
    whatever was there. A FIFO and a symbolic link to a device (in tmp, never the real /dev/null) stand in for
    it; they stay what they were, exit 2 with a message; a regular file is still replaced."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    link = tmp_path / "null.csv"
    link.symlink_to("/dev/null")
    for target, kind in ((fifo, "a named pipe (FIFO)"), (link, "a symbolic link")):
        code, _out, err = _cli(
            capsys, "simulate", SAMPLE_PLAN, "--runs", "1", "--rows", "10", "--out", target, "--force"
        )
        assert code == 2, (target, code, err)
        assert f"is {kind}, not a regular file; --force replaces only regular files" in err, err
        assert "Traceback" not in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.path.islink(link) and os.readlink(link) == "/dev/null"
    plain = tmp_path / "plain.csv"
    plain.write_text("old\n", encoding="utf-8")
    code, _out, err = _cli(
        capsys, "simulate", SAMPLE_PLAN, "--runs", "1", "--rows", "10", "--out", plain, "--force"
    )
    assert code == 0, err
    assert plain.read_text(encoding="utf-8") != "old\n"


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_a_fifo_put_in_place_after_the_check_is_not_replaced(tmp_path: Path) -> None:
    """The check is repeated at the rename: a FIFO that appears between the check and the write survives."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.publish.outputs import check_out_file, write_out_file

    out = tmp_path / "late.pdf"
    check_out_file(out, force=True, home=tmp_path / "home")
    os.mkfifo(out)
    with pytest.raises(UsageError, match="not a regular file"):
        write_out_file(out, b"x")
    assert stat.S_ISFIFO(os.lstat(out).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late.pdf"]  # no temporary file left


@pytest.mark.slow
def test_charged_but_not_written_has_an_exit_code_of_its_own(tmp_path: Path) -> None:
    """A full disk while the package is written, after the charge, ended in exit 2, the code that says "bad plan,
    data or usage: nothing charged": a script would take it for nothing spent. Now it is 4, named in the help."""
    import subprocess

    from dpdesk.core.common import faults

    env = {**os.environ, "DPDESK_HOME": str(tmp_path / "trace-home")}
    trace = tmp_path / "trace.txt"
    release = ["release", str(SAMPLE_PLAN), "--data", str(SAMPLE_DATA)]
    run = [sys.executable, "-m", "dpdesk", *release]
    r = subprocess.run(
        [*run, "--out", str(tmp_path / "traced")],
        env={**env, faults.ENV: f"trace:{trace}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    steps = trace.read_text(encoding="utf-8").splitlines()
    n = next(int(s.split()[0]) for s in steps if s.endswith("write release.csv"))
    env["DPDESK_HOME"] = str(tmp_path / "home")
    r = subprocess.run(
        [*run, "--out", str(tmp_path / "out")],
        env={**env, faults.ENV: f"enospc:{n}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert "charged and recorded as ledger entry" in r.stderr and "export-release" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()
    h = subprocess.run(
        [sys.executable, "-m", "dpdesk", "release", "--help"], capture_output=True, text=True, check=True
    )
    assert "\n  4    charged, but the package was not written" in h.stdout, h.stdout


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="renames over a file and folder fsyncs are POSIX")
def test_every_file_renamed_into_place_was_fsynced_first(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.pdf was renamed into place without an fsync: after a power cut the package could hold an empty or
    partial report under its final name. The real os.fsync and os.replace run (the wrappers only note what
    they were given): every file or folder a release renames into place was fsynced before its rename."""
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.release.steps import release

    synced: set[tuple[int, int]] = set()
    renamed: list[tuple[str, bool]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        synced.add((st.st_dev, st.st_ino))
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path, **kw: object) -> None:
        st = os.lstat(src)
        renamed.append((os.path.basename(dst), (st.st_dev, st.st_ino) in synced))
        real_replace(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    release(load_plan(SAMPLE_PLAN), SAMPLE_DATA, dpdesk_home, tmp_path / "out")
    names = [n for n, _ok in renamed]
    assert {"release.csv", "plan.json", "report.pdf", "ledger.json", "out"} <= set(names), names
    assert [n for n, ok in renamed if not ok] == []


def _forging_plan(path: Path, *, column_ref: str, epsilon: float = 0.5, second: bool = False) -> Path:
    import json

    queries = [
        {
            "name": "q\nFORGED query",
            "statistic": "sum",
            "column": column_ref,
            "mechanism": "laplace",
            "epsilon": epsilon,
        }
    ]
    if second:
        queries.append({"name": "r\rFORGED", "statistic": "count", "mechanism": "laplace", "epsilon": -1})
    plan = {
        "version": 1,
        "title": "t",
        "budget": {"epsilon": 1.0, "delta": 0},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {"x\nFORGED column": {"type": "int", "bounds": [0, 10]}},
        "queries": queries,
    }
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


@pytest.mark.slow
def test_newlines_in_query_and_column_names_are_escaped_in_messages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """A query or column name holding a newline started a line of its own in an error message (a forged line,
    "FORGED ..." here) and in `budget`'s listing. Now it is shown as \\n, the message one line a problem."""
    bad = _forging_plan(tmp_path / "bad.json", column_ref="nope\nFORGED ref")
    code, _out, err = _cli(capsys, "budget", bad)
    assert code == 2
    assert (
        err == 'dpdesk: query 1 ("q\\nFORGED query"): column "nope\\nFORGED ref" is not declared in columns\n'
    )
    two = _forging_plan(tmp_path / "two.json", column_ref="nope\nFORGED ref", second=True)
    code, _out, err = _cli(capsys, "budget", two)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 3 and lines[0] == "dpdesk: The plan has 2 problems:", err  # dpdesk's own line breaks
    assert lines[2].startswith('  - query 2 ("r\\rFORGED")'), err
    good = _forging_plan(tmp_path / "good.json", column_ref="x\nFORGED column")
    code, out, err = _cli(capsys, "budget", good)
    assert code == 0, err
    assert "- q\\nFORGED query: sum(x\\nFORGED column), laplace" in out
    for text in (out, err):
        assert not any(line.startswith("FORGED") for line in text.splitlines()), text


@pytest.mark.slow
def test_a_parquet_column_of_lists_is_refused_by_its_type(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """A declared Parquet column of lists (or arrays, or raw bytes) ended in a polars traceback ("cannot cast
    List type"); a column of records was read as all unparsable. Now each is refused by its type before it is
    decoded: exit 2, the file, the column and the fix named, nothing charged."""
    import json

    import polars as pl

    plan = tmp_path / "p.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "title": "t",
                "budget": {"epsilon": 1.0, "delta": 0},
                "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
                "columns": {"tags": {"type": "int", "bounds": [0, 10]}},
                "queries": [
                    {
                        "name": "s",
                        "statistic": "sum",
                        "column": "tags",
                        "mechanism": "laplace",
                        "epsilon": 0.5,
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    cells: dict[str, pl.Series] = {
        "lists": pl.Series([[1, 2], [3], []]),
        "arrays": pl.Series([[1, 2], [3, 4], [5, 6]], dtype=pl.Array(pl.Int64, 2)),
        "records": pl.Series([{"a": 1}, {"a": 2}, {"a": 3}]),
        "raw bytes": pl.Series([b"a", b"b", b"\xff"]),
    }
    for i, (kind, tags) in enumerate(cells.items()):
        data = tmp_path / f"d{i}.parquet"
        pl.DataFrame({"x": [1, 2, 3], "tags": tags}).write_parquet(data)
        code, _out, err = _cli(capsys, "release", plan, "--data", data, "--out", tmp_path / f"o{i}")
        assert code == 2, (kind, code, err)
        assert "Traceback" not in err
        assert f"d{i}.parquet, column 'tags': its cells hold {kind} (Parquet type" in err, err
        assert "save the file with this column as plain values or text" in err, err
        assert not (tmp_path / f"o{i}").exists()
    assert not (dpdesk_home / "ledgers").exists() or not any(
        '"spend"' in f.read_text(encoding="utf-8") for f in (dpdesk_home / "ledgers").glob("*.jsonl")
    )


@pytest.mark.slow
def test_review_says_what_it_can_and_cannot_prove_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """A package forged to be consistent with itself (values changed, the hashes inside ledger.json recomputed)
    reviewed as "Intact." and nothing more. Review cannot tell it from the real one alone; it now says so, and
    names the check that can (a later export of the ledger), and what that check proved when it was made."""
    import json

    out = tmp_path / "out"
    code, _out, err = _cli(capsys, "release", SAMPLE_PLAN, "--data", SAMPLE_DATA, "--out", out)
    assert code == 0, err
    code, text, err = _cli(capsys, "review", out)
    assert code == 0, err
    lines = text.splitlines()
    assert lines[-2:] == [
        "Intact.",
        (
            "The package is consistent with itself; that alone cannot prove it is the one recorded (whoever forged "
            "it could recompute every hash inside it): check it against a later export of the dataset's ledger, "
            "dpdesk review PATH --against LATER_EXPORT."
        ),
    ], text
    export = tmp_path / "later.jsonl"
    code, _out, err = _cli(capsys, "ledger", "export", "--data", SAMPLE_DATA, "--out", export)
    assert code == 0, err
    code, text, err = _cli(capsys, "review", export)
    assert code == 0 and "The exported ledger is consistent with itself; that alone cannot prove" in text, (
        text
    )
    code, text, err = _cli(capsys, "review", out, "--against", export)
    assert code == 0, err
    assert f"The later export {export} reaches its ledger head: it is the one recorded" in text, text
    assert "that alone cannot prove" not in text
    code, text, err = _cli(capsys, "review", out, "--json")
    assert code == 0 and "that alone cannot prove" in json.loads(text)["proves"]
