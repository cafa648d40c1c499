"""Issue 14, what its audit (prompts/audit-14.md) found main still lacked: small inputs read whole without a
limit, a malformed package that made review crash, a hard link that let a statement overwrite a ledger, exits
that were tracebacks, and words that were not true.

Every hostile input runs through the command line; the ones that could exhaust memory or hang run in a child
whose address space is capped (RLIMIT_AS) and under a timeout, so a regression fails the test instead of the
machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.capped import capped_env
from tests.trust.test_hostile_text_and_exit_codes import _JSON, _TEXT

REPO = Path(__file__).resolve().parents[2]
SAMPLE_PLAN = REPO / "resources" / "samples" / "cps_wages_plan.json"
SAMPLE_DATA = REPO / "resources" / "samples" / "census_sample.csv"

#: The child's address space: ample for dpdesk on a small file, far below what reading /dev/zero needs.
CAP = 1024**3

CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from dpdesk.cli import main
sys.exit(main(sys.argv[2:]))
"""

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX rlimits, FIFOs and /dev files")


def run_capped(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = capped_env(DPDESK_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(CAP), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def assert_refused(r: subprocess.CompletedProcess[str], *words: str, code: int = 2) -> None:
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr[-2000:]
    for w in words:
        assert w in r.stderr, r.stderr


def _unblock(fifo: Path) -> None:
    """Unblock a reader the old code left waiting on the FIFO."""
    threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True).start()


# ----------------------------------------------------------------------------- 1. small inputs, one reader


@posix_only
def test_plan_and_codebook_that_never_end_are_refused_at_once(tmp_path: Path, dpdesk_home: Path) -> None:
    """/dev/zero as a plan or a codebook read until memory ran out (a MemoryError traceback, exit 1); a FIFO
    as a plan hung. Now: exit 2 at once, naming why."""
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    pw = tmp_path / "pass.txt"
    pw.write_text("secret\n")
    approve = ["officer", "approve-plan", "--dataset", "ds-" + "0" * 32, "--head", "1:" + "0" * 64]
    approve += ["--out", str(tmp_path / "approval.json")]
    try:
        for args in (
            ["budget", "/dev/zero"],
            ["budget", str(fifo)],
            ["budget", str(SAMPLE_PLAN), "--codebook", "/dev/zero"],
            ["budget", str(SAMPLE_PLAN), "--codebook", str(fifo)],
            ["release", str(fifo), "--data", str(SAMPLE_DATA), "--out", str(tmp_path / "o")],
            [*approve, str(fifo), "--key", str(pw), "--passphrase-file", str(pw)],
            [*approve, str(SAMPLE_PLAN), "--key", str(pw), "--passphrase-file", str(fifo)],
            [*approve, str(SAMPLE_PLAN), "--key", "/dev/zero", "--passphrase-file", str(pw)],
            ["officer", "show", str(fifo)],
            ["ledger", "govern", "--data", str(SAMPLE_DATA), "--officer", str(fifo)],
        ):
            r = run_capped(dpdesk_home, *args, timeout=30)
            assert_refused(r, "not a regular file")
    finally:
        _unblock(fifo)
    assert not (tmp_path / "o").exists()


@posix_only
def test_a_plan_larger_than_the_cap_is_refused_before_it_is_read(tmp_path: Path, dpdesk_home: Path) -> None:
    """A 2 GB plan (a sparse file) gave a MemoryError traceback, exit 1. The cap is stated (16 MiB)."""
    from dpdesk.core.common.smallfile import MAX_PLAN_BYTES

    assert MAX_PLAN_BYTES == 16 * 1024**2
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(2 * 1024**3)
    r = run_capped(dpdesk_home, "budget", str(big))
    assert_refused(r, "16 MiB")
    book = tmp_path / "book.csv"
    with book.open("wb") as f:
        f.truncate(MAX_PLAN_BYTES + 1)
    r = run_capped(dpdesk_home, "budget", str(SAMPLE_PLAN), "--codebook", str(book))
    assert_refused(r, "16 MiB")


def test_the_small_file_reader(tmp_path: Path) -> None:
    from dpdesk.core.common.smallfile import NotSmallFile, read_small_file

    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert read_small_file(f, 10) == b"x" * 10
    with pytest.raises(NotSmallFile):
        read_small_file(f, 9)
    with pytest.raises(IsADirectoryError):
        read_small_file(tmp_path, 10)
    with pytest.raises(FileNotFoundError):
        read_small_file(tmp_path / "nothing", 10)


# ----------------------------------------------------------------------------- 2. review of a malformed package


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One release package of the sample, made once (copied by each test that changes it)."""
    from dpdesk.cli import main

    base = tmp_path_factory.mktemp("package")
    old = os.environ.get("DPDESK_HOME")
    os.environ["DPDESK_HOME"] = str(base / "home")
    try:
        assert (
            main(["release", str(SAMPLE_PLAN), "--data", str(SAMPLE_DATA), "--out", str(base / "pkg")]) == 0
        )
    finally:
        if old is None:
            del os.environ["DPDESK_HOME"]
        else:
            os.environ["DPDESK_HOME"] = old
    return base / "pkg"


def _review(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, str, str]:
    from dpdesk.cli import main

    capsys.readouterr()
    code = main(["review", str(folder), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _set_entry_field(folder: Path, kind: str, path: tuple[str, ...], value: object) -> None:
    ledger = folder / "ledger.json"
    data = json.loads(ledger.read_text(encoding="utf-8"))
    entry = next(e for e in data["entries"] if e["type"] == kind)
    target = entry
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    ledger.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("package", ("seq",), [1]),
        ("package", ("hash",), {"a": 1}),
        ("spend", ("seq",), {"n": 2}),
        ("spend", ("hash",), ["x"]),
        ("spend", ("charged",), [1.0, 0.0]),
        ("spend", ("charged", "epsilon"), "1.0"),
        ("spend", ("totals",), [1]),
        ("spend", ("dataset",), ["ds"]),
        ("package", ("files",), ["release.csv"]),
        ("package", ("files", "release.csv"), {"h": 1}),
        ("settings", ("type",), ["settings"]),
        ("package", ("spend_hash",), [1]),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, tuple) else None,
)
def test_a_malformed_package_entry_is_a_review_problem(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    package: Path,
    kind: str,
    field: tuple[str, ...],
    value: object,
) -> None:
    """A list or object where review expects a number or a string (seq, hash, charged, ...) gave a traceback
    (TypeError "unhashable type" in review._check_ledger_json, AttributeError in the command line); it is a
    PROBLEM, exit 1, whether or not the forger recomputed the entry's hash."""
    from dpdesk.core.ledger.entries import entry_hash

    folder = tmp_path / "pkg"
    shutil.copytree(package, folder)
    assert _review(capsys, folder)[0] == 0
    _set_entry_field(folder, kind, field, value)
    code, out, err = _review(capsys, folder)
    assert code == 1 and "PROBLEM:" in out and out.endswith("NOT INTACT: see the problems above.\n"), (
        out + err
    )
    # the forger recomputes the hash (it is unkeyed): still a problem named, never a crash
    ledger = folder / "ledger.json"
    data = json.loads(ledger.read_text(encoding="utf-8"))
    for e in data["entries"]:
        if e.get("type") == kind or (kind == "settings" and isinstance(e.get("type"), list)):
            e["hash"] = entry_hash(e) if field != ("hash",) else e["hash"]
    ledger.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = _review(capsys, folder)
    assert code == 1 and "PROBLEM:" in out, out + err
    code, out, err = _review(capsys, folder, "--json")
    assert code == 1 and json.loads(out)["intact"] is False


# ----------------------------------------------------------------------------- the fuzz test, wider

_VERBS = [
    "list",
    "verify",
    "head",
    "export",
    "export-release",
    "statement",
    "link",
    "declare-new",
    "acknowledge",
    "change-settings",
    "forget-identity",
    "govern",
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (each object field and list item, at any depth)."""
    out: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    target = doc
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value


@posix_only
@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(["ledger.json", "plan.json", "release", "simulate", "ledger-verb"]),
    where=st.integers(min_value=0, max_value=10**6),
    value=_JSON,
    rehash=st.booleans(),
    verb=st.sampled_from(_VERBS),
    extra=st.lists(_TEXT, max_size=3),
)
@example(target="ledger.json", where=0, value=[1], rehash=True, verb="list", extra=[])
def test_fuzz_packages_release_simulate_and_ledger_verbs(
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    dpdesk_home: Path,
    package: Path,
    target: str,
    where: int,
    value: Any,
    rehash: bool,
    verb: str,
    extra: list[str],
) -> None:
    """A package file with any field of any JSON type (its entry's hash recomputed or not) is reviewed with exit
    0 or 1; release, simulate and every ledger verb, given a plan with any field of any type and random arguments,
    end with exit 0-3. Never a traceback (an exception out of main fails the test). Deterministic: hypothesis
    derives the examples from a fixed seed (``derandomize``)."""
    from dpdesk.cli import main
    from dpdesk.core.ledger.entries import entry_hash

    tmp = tmp_path_factory.mktemp("fuzz")
    capsys.readouterr()
    if target in ("ledger.json", "plan.json"):
        folder = tmp / "pkg"
        shutil.copytree(package, folder)
        doc = json.loads((folder / target).read_text(encoding="utf-8"))
        places = _paths(doc)
        place = places[where % len(places)]
        _put(doc, place, value)
        if rehash and target == "ledger.json" and place[0] == "entries" and len(place) > 2:
            entry = doc["entries"][place[1]]
            if isinstance(entry, dict):
                entry["hash"] = entry_hash(entry)
        (folder / target).write_text(json.dumps(doc), encoding="utf-8")
        args = ["review", str(folder)]
        allowed: tuple[int, ...] = (0, 1)
    else:
        # a copy of a home that holds one release of the sample (so the ledger verbs have a ledger to work on)
        shutil.copytree(package.parent / "home", tmp / "home")
        os.environ["DPDESK_HOME"] = str(tmp / "home")  # the dpdesk_home fixture restores it after the test
        plan_doc = json.loads(SAMPLE_PLAN.read_text(encoding="utf-8"))
        if not rehash:  # else the plan is left sound: the commands go deeper (and charge)
            places = _paths(plan_doc)
            _put(plan_doc, places[where % len(places)], value)
        plan = tmp / "plan.json"
        plan.write_text(json.dumps(plan_doc), encoding="utf-8")
        data, known = str(SAMPLE_DATA), "ds-" + "0" * 32
        more = (
            extra[:1] if where % 3 == 0 else []
        )  # mostly well-formed command lines, sometimes a random word
        if target == "release":
            args = ["release", str(plan), "--data", data, "--out", str(tmp / "out"), *more]
        elif target == "simulate":
            args = ["simulate", str(plan), "--runs", "2", "--rows", "50", "--out", str(tmp / "s.csv"), *more]
        else:
            verb_args = {
                "list": [],
                "verify": ["--data", data],
                "head": ["--data", data],
                "export": ["--data", data, "--out", str(tmp / "ledger.jsonl")],
                "export-release": [str(where % 4), "--data", data, "--out", str(tmp / "again")],
                "statement": ["--data", data, "--out", str(tmp / "statement.pdf")],
                "link": ["--data", data, "--to", known],
                "declare-new": ["--data", data, "--resembles", known, "--reason", "r"],
                "acknowledge": ["--data", data, "--reason", "r", "--costs", str(plan)],
                "change-settings": [str(plan), "--data", data, "--reason", "r"],
                "forget-identity": ["--reason", "r"],
                "govern": ["--data", data, "--officer", str(plan)],
            }[verb]
            args = ["ledger", verb, *verb_args, *more]
        allowed = (0, 1, 2, 3)
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's usage errors and --help
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    out, err = capsys.readouterr()
    assert code in allowed, (args, code, out[-2000:], err[-2000:])
    assert "Traceback" not in out + err


# ----------------------------------------------------------------------------- 3. outputs


def _cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    from dpdesk.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _released_home(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the sample data, released once in the test's home; its ledger file."""
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.loading import file_sha256

    data = tmp_path / "data.csv"
    shutil.copy(SAMPLE_DATA, data)
    code, _out, err = _cli(capsys, "release", SAMPLE_PLAN, "--data", data, "--out", tmp_path / "pkg")
    assert code == 0, err
    ledger = Ledger.for_dataset(Path(os.environ["DPDESK_HOME"]), file_sha256(data)).path
    assert ledger is not None and ledger.is_file()
    return data, ledger


@pytest.mark.skipif(sys.platform == "win32", reason="hard links made with os.link on POSIX")
def test_a_hard_link_to_a_ledger_is_never_replaced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """`ledger statement --out LINK --force`, LINK a hard link (outside the home) to the ledger file, wrote the
    PDF into the ledger in place: the dataset's ledger was destroyed (exit 3 afterwards)."""
    data, ledger = _released_home(capsys, tmp_path)
    before = ledger.read_bytes()
    for i, args in enumerate(
        (
            ["ledger", "statement", "--data", data, "--force"],
            ["ledger", "export", "--data", data, "--force"],
            ["simulate", SAMPLE_PLAN, "--runs", "1", "--rows", "10", "--force"],
        )
    ):
        link = tmp_path / f"innocent{i}.out"
        os.link(ledger, link)
        code, _out, err = _cli(capsys, *args, "--out", link)
        assert code == 2 and "hard links" in err and "Traceback" not in err, (args, code, err)
        assert ledger.read_bytes() == before
    code, _out, err = _cli(capsys, "ledger", "verify", "--data", data)
    assert code == 0, err


def test_a_full_disk_keeps_the_file_force_would_replace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement and the simulation were written in place: a full disk with --force destroyed the old file
    and left half a new one. Now they are written beside it and renamed: the old file is kept, no temporary
    file is left, exit 2 with a message."""
    from dpdesk.core.common import faults

    data, _ledger = _released_home(capsys, tmp_path)
    for name, args in (
        ("statement.pdf", ["ledger", "statement", "--data", data, "--force"]),
        ("ledger.jsonl", ["ledger", "export", "--data", data, "--force"]),
        ("sim.csv", ["simulate", SAMPLE_PLAN, "--runs", "1", "--rows", "10", "--force"]),
    ):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        out = folder / name
        out.write_bytes(b"the old file")
        trace = tmp_path / f"{name}.trace"
        monkeypatch.setenv(faults.ENV, f"trace:{trace}")
        faults.reset()
        assert _cli(capsys, *args, "--out", out)[0] == 0
        steps = [line.split(" ", 1) for line in trace.read_text(encoding="utf-8").splitlines()]
        write = next(int(n) for n, what in steps if what == f"write {name}")
        for n in (write, write + 1):  # the disk fills while writing, or when the file is renamed into place
            out.write_bytes(b"the old file")
            monkeypatch.setenv(faults.ENV, f"enospc:{n}")
            faults.reset()
            code, _out, err = _cli(capsys, *args, "--out", out)
            assert code == 2 and "No space left on device" in err and "Traceback" not in err, (name, n, err)
            assert out.read_bytes() == b"the old file", (name, n)
            assert sorted(p.name for p in folder.iterdir()) == [name], (name, n)
        monkeypatch.delenv(faults.ENV)
        faults.reset()


def test_out_under_a_regular_file_says_it_is_not_a_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """`--out regfile/sub` said the operating system's "File exists"; it says the parent is a file."""
    regular = tmp_path / "regfile"
    regular.write_text("x", encoding="utf-8")
    for args in (
        ["release", SAMPLE_PLAN, "--data", SAMPLE_DATA, "--out", regular / "sub"],
        ["simulate", SAMPLE_PLAN, "--runs", "1", "--rows", "10", "--out", regular / "sub" / "s.csv"],
    ):
        code, _out, err = _cli(capsys, *args)
        assert code == 2 and "regfile is a file, not a folder" in err and "File exists" not in err, err
    assert not (dpdesk_home / "ledgers").exists() or not any((dpdesk_home / "ledgers").glob("*.jsonl"))


def test_the_app_replaces_a_simulation_file_the_user_agreed_to_replace(
    qtbot: Any, tmp_path: Path, dpdesk_home: Path
) -> None:
    """The app's simulation passed no force: after the save dialog had asked "replace?", the engine refused the
    file and told the user to "use --force" (a command-line flag). Now the app passes the user's answer; a
    path typed by hand is asked about in the app's words; the plan file is never replaced."""
    from PySide6.QtCore import QThreadPool

    from dpdesk.gui.app import build
    from dpdesk.gui.views.simulate_dialog import SimulationChoice

    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    errors: list[str] = []
    asked: list[str] = []
    win.show_error = lambda message, details="": errors.append(message)
    win.show_info = lambda *_a: None
    answer = [True]
    win.ask_confirm = lambda _title, text: asked.append(text) or answer[0]
    plan = tmp_path / "plan.json"
    shutil.copy(SAMPLE_PLAN, plan)
    assert win.open_plan(str(plan))
    out = tmp_path / "sim.csv"
    try:
        for confirmed, agree, replaced in ((True, False, True), (False, False, False), (False, True, True)):
            out.write_bytes(b"old")
            asked.clear()
            answer[0] = agree
            win.ask_simulation = lambda c=confirmed: SimulationChoice(1, out, 10, replace_confirmed=c)
            win.simulate_action.trigger()
            qtbot.waitUntil(lambda: win.job is None, timeout=60_000)
            assert errors == [], errors
            assert (out.read_bytes() != b"old") == replaced, (confirmed, agree)
            assert bool(asked) == (not confirmed), asked  # asked only when the save dialog did not ask
        win.ask_simulation = lambda: SimulationChoice(1, plan, 10, replace_confirmed=True)
        win.simulate_action.trigger()
        qtbot.waitUntil(lambda: win.job is None, timeout=60_000)
        assert errors and "--force" not in errors[-1] and plan.read_bytes() == SAMPLE_PLAN.read_bytes()
    finally:
        QThreadPool.globalInstance().waitForDone(30_000)
        win.state.undo_stack.setClean()


# ----------------------------------------------------------------------------- 4. every exit a documented code


def _dpdesk(home: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "PYTHONPATH": str(REPO), **kw.pop("env", {})}
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=kw.pop("capture_output", True),
        text=True,
        env=env,
        timeout=120,
        check=False,
        cwd=REPO,
        **kw,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_or_closed_stdout_is_exit_2_and_one_line(tmp_path: Path, dpdesk_home: Path) -> None:
    """`dpdesk ledger > /dev/full` ended in an OSError traceback, and with stdout closed (`>&-`) in an
    AttributeError traceback, both exit 1 (the over-budget code)."""
    for args in (["ledger"], ["budget", str(SAMPLE_PLAN), "--json"]):
        with open("/dev/full", "w") as full:
            r = _dpdesk(dpdesk_home, *args, stdout=full, capture_output=False, stderr=subprocess.PIPE)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "standard output" in r.stderr, r.stderr
        r = _dpdesk(
            dpdesk_home, *args, stdout=subprocess.DEVNULL, capture_output=False, stderr=subprocess.PIPE
        )
        assert r.returncode in (0, 1), r.stderr  # a sound stdout: unchanged
    code = "import sys; sys.stdout = None; from dpdesk.cli import main; sys.exit(main(['ledger']))"
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(dpdesk_home)},
        timeout=120,
        check=False,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "standard output is closed" in r.stderr, (
        r.stderr
    )


def test_a_deeply_nested_identity_record_is_exit_3_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """Deeply nested JSON in the home's identity/datasets/ds-....json gave a RecursionError traceback (exit 1);
    the same file holding [] was already exit 3 naming it."""
    data, _ledger = _released_home(capsys, tmp_path)
    records = list((dpdesk_home / "identity" / "datasets").glob("ds-*.json"))
    assert records
    records[0].write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for args in (["ledger", "--data", data], ["budget", SAMPLE_PLAN, "--data", data]):
        code, _out, err = _cli(capsys, *args)
        assert code == 3 and records[0].name in err and "Traceback" not in err, (args, code, err)


# ----------------------------------------------------------------------------- 5. honest words


def test_budget_with_data_says_what_it_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path
) -> None:
    """`budget --data` said "no data was read" after reading the whole file to recognise its dataset."""
    code, out, _err = _cli(capsys, "budget", SAMPLE_PLAN)
    assert code == 0 and "no data was read" in out
    code, out, _err = _cli(capsys, "budget", SAMPLE_PLAN, "--data", SAMPLE_DATA)
    assert code == 0 and "no data was read" not in out
    assert "read only to recognise which dataset it is" in out


def test_read_limits_are_translated_and_name_the_cell(tmp_path: Path, dpdesk_home: Path) -> None:
    """guards.py's limit messages were English under zh_CN; a cell past XFD was reported as "column 1"."""
    from tests.trust.test_input_size_limits import workbook

    r = _dpdesk(dpdesk_home, "budget", str(SAMPLE_PLAN), "--data", "/dev/zero", env={"DPDESK_LANG": "zh_CN"})
    assert r.returncode == 2 and "不是普通文件" in r.stderr, r.stderr
    book = workbook(tmp_path / "far.xlsx")
    import zipfile

    with zipfile.ZipFile(book) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = parts[sheet].replace(
        b"</sheetData>", b'<row r="3"><c r="XFE3"><v>1</v></c></row></sheetData>'
    )
    with zipfile.ZipFile(book, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in parts.items():
            z.writestr(n, b)
    r = _dpdesk(dpdesk_home, "suggest", str(book))
    assert r.returncode == 2 and "XFE3" in r.stderr and "column 16385" in r.stderr, r.stderr
    r = _dpdesk(dpdesk_home, "suggest", str(workbook(tmp_path / "row.xlsx", ("A", 1_048_577))))
    assert r.returncode == 2 and "row 1048577" in r.stderr and "column 1)" not in r.stderr, r.stderr
