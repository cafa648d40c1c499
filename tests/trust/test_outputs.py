"""Issue 14, items 2 and 5: a bad or contested ``--out`` is refused before anything is charged; a package appears
whole or not at all (a full disk leaves nothing, and the message names the free way to recover the values); output
files never replace an existing file unless asked (``--force``), and never the data, the plan or the dpdesk home."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common import faults
from dpdesk.core.common.errors import DpdeskError, UsageError
from dpdesk.core.ledger import book as ledger_mod
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.publish.outputs import claim_out_dir
from dpdesk.core.release.steps import ReleaseNotWritten, release
from dpdesk.services import Dataset
from dpdesk.services.ledger import (
    ExportLedgerRequest,
    ReexportRequest,
    StatementRequest,
    export_ledger,
    reexport_release,
    write_statement,
)
from dpdesk.services.simulate import SimulateRequest, simulate_releases
from tests.conftest import SAMPLES
from tests.core.test_release import small_plan, write_csv

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _types(home: Path, data: Path) -> list[str]:
    return [e.type for e in Ledger.for_dataset(home, _sha(data)).verify()]


def _litter(folder: Path) -> list[str]:
    """Anything a failed write could leave: temporary files or folders."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if ".tmp" in p.name or "dpdesk-writing" in p.name
    )


def _bad_outs(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    return {
        "under a regular file": tmp_path / "a-file" / "out",
        "a dangling symlink": tmp_path / "dangling",
        "under /proc": Path("/proc/dpdesk-no-such/out"),
        "an existing file": tmp_path / "a-file",
    }


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and /proc")
@pytest.mark.parametrize(
    "case", ["under a regular file", "a dangling symlink", "under /proc", "an existing file"]
)
def test_a_bad_out_is_refused_before_anything_is_charged(
    dpdesk_home: Path, tmp_path: Path, case: str
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a"), (2, "b")])
    out = _bad_outs(tmp_path)[case]
    with pytest.raises(UsageError):
        release(small_plan(), data, dpdesk_home, out)
    assert _types(dpdesk_home, data) == []  # nothing charged
    assert _litter(tmp_path) == []


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_before_anything_is_charged(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(UsageError, match="nothing was charged"):
            release(small_plan(), data, dpdesk_home, ro / "out")
    finally:
        ro.chmod(0o755)
    assert _types(dpdesk_home, data) == []


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_the_command_line_exits_2_on_a_bad_out_without_a_traceback(dpdesk_home: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(PLAN),
            "--data",
            str(DATA),
            "--out",
            str(tmp_path / "a-file" / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "nothing was charged" in r.stderr
    assert _types(dpdesk_home, DATA) == []


def test_a_second_release_to_a_claimed_folder_is_refused_before_charging(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    out = tmp_path / "out"
    held = claim_out_dir(out)  # another release is writing there
    try:
        with pytest.raises(UsageError, match="another release"):
            release(small_plan(), data, dpdesk_home, out)
        assert _types(dpdesk_home, data) == []
    finally:
        held.abandon()
    # once it is gone (or was left by a process that died: no longer locked), the folder can be used
    stale = claim_out_dir(out)
    (stale.work / "release.csv").write_text("partial", encoding="utf-8")
    stale._unlock()  # the process died: its lock went with it, the folder stayed
    release(small_plan(), data, dpdesk_home, out)
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    assert _litter(tmp_path) == []
    # and a release finishing first makes the folder non-empty: the next one is refused before charging
    with pytest.raises(UsageError, match="not empty"):
        release(small_plan(), data, dpdesk_home, out)
    assert _types(dpdesk_home, data).count("spend") == 1


def _steps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: Path, home: Path) -> list[str]:
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv(faults.ENV, f"trace:{trace}")
    faults.reset()
    release(small_plan(), data, home, tmp_path / "traced")
    return trace.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
def test_a_full_disk_at_any_step_after_the_charge_leaves_no_partial_package(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a"), (2, "b")])
    steps = _steps(monkeypatch, tmp_path, data, dpdesk_home / "trace-home")
    first = next(i for i, s in enumerate(steps) if s.endswith("write release.csv"))
    after = steps[first:]
    assert after[-2].endswith("rename traced")  # the package is renamed into place whole, last
    failed: set[str] = set()
    for line in after:
        n = int(line.split()[0])
        home = tmp_path / f"home-{n}"
        out = tmp_path / f"out-{n}"
        monkeypatch.setenv(faults.ENV, f"enospc:{n}")
        faults.reset()
        try:
            release(small_plan(), data, home, out)
        except ReleaseNotWritten as exc:
            failed.add(line)
            text = str(exc)
            spend = [e for e in Ledger.for_dataset(home, _sha(data)).verify() if e.type == "spend"]
            assert len(spend) == 1  # charged once
            assert f"export-release {spend[0].seq}" in text and "nothing was revealed" not in text, text
            assert not out.exists(), line  # nothing at --out: no partial package
            monkeypatch.delenv(faults.ENV)
            again = reexport_release(ReexportRequest(Dataset(home, data), spend[0].seq, out))  # free recovery
            assert (again.out / "release.csv").exists()
        else:
            assert sorted(p.name for p in out.iterdir()) == [
                "ledger.json",
                "plan.json",
                "release.csv",
                "report.pdf",
            ]
        assert _litter(tmp_path) == [], line
    # every step of the package's own files fails the write (the folder syncs after a rename, and the register's
    # head, are best effort)
    files = ("release.csv", "plan.json", "ledger.json", "rename traced")
    must_fail = {s for s in after if "after" not in s and any(f in s for f in files)}
    assert len(must_fail) == 13 and must_fail <= failed, sorted(must_fail - failed)


def test_the_last_ledger_write_failing_names_the_recovery_and_leaves_nothing(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    real = ledger_mod.LedgerTransaction.append

    def append(self: Any, entry_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        if entry_type == "package":
            real_write = os.write
            try:
                os.write = lambda *_a: (_ for _ in ()).throw(OSError(28, "No space left on device"))  # type: ignore[assignment] # a full disk
                return real(self, entry_type, payload)
            finally:
                os.write = real_write
        return real(self, entry_type, payload)

    monkeypatch.setattr(ledger_mod.LedgerTransaction, "append", append)
    with pytest.raises(ReleaseNotWritten) as info:
        release(small_plan(), data, dpdesk_home, tmp_path / "out")
    text = str(info.value)
    assert "nothing was revealed" not in text and "export-release 2" in text and "charged" in text
    assert not (tmp_path / "out").exists() and _litter(tmp_path) == []
    assert info.value.exit_code == 4  # charged: never 2, "nothing charged" (issue 24)


# ----------------------------------------------------------------------------- item 5: files overwritten


def _released(home: Path, tmp_path: Path) -> Path:
    data = write_csv(tmp_path / "d.csv", [(1, "a"), (2, "b")])
    release(small_plan(), data, home, None)
    return data


def test_output_files_refuse_an_existing_file_unless_forced(dpdesk_home: Path, tmp_path: Path) -> None:
    data = _released(dpdesk_home, tmp_path)
    dataset = Dataset(dpdesk_home, data)
    writers = {
        "simulate": lambda out, force: simulate_releases(
            SimulateRequest(load_plan(PLAN), dpdesk_home, out, runs=1, seed=1, force=force)
        ),
        "export": lambda out, force: export_ledger(ExportLedgerRequest(dataset, out, force)),
        "statement": lambda out, force: write_statement(StatementRequest(dataset, out, force)),
    }
    for name, write in writers.items():
        out = tmp_path / f"{name}.keep"
        out.write_bytes(b"precious")
        with pytest.raises(UsageError, match="already exists"):
            write(out, False)
        assert out.read_bytes() == b"precious", name
        write(out, True)
        assert out.read_bytes() != b"precious", name


def test_output_files_never_replace_the_data_the_plan_or_the_home(dpdesk_home: Path, tmp_path: Path) -> None:
    data = _released(dpdesk_home, tmp_path)
    before = data.read_bytes()
    dataset = Dataset(dpdesk_home, data)
    link = tmp_path / "link.csv"
    link.symlink_to(data)
    ledger_file = Ledger.for_dataset(dpdesk_home, _sha(data)).path
    assert ledger_file is not None
    ledger_bytes = ledger_file.read_bytes()
    plan_copy = tmp_path / "plan.json"
    plan_copy.write_bytes(PLAN.read_bytes())
    for out in (data, link, ledger_file, dpdesk_home / "new.csv"):
        for write in (
            lambda o: export_ledger(ExportLedgerRequest(dataset, o, force=True)),
            lambda o: write_statement(StatementRequest(dataset, o, force=True)),
            lambda o: simulate_releases(
                SimulateRequest(load_plan(PLAN), dpdesk_home, o, runs=1, public=data, force=True)
            ),
        ):
            with pytest.raises(DpdeskError):
                write(out)
    with pytest.raises(UsageError, match="reading"):
        simulate_releases(
            SimulateRequest(
                load_plan(plan_copy), dpdesk_home, plan_copy, runs=1, force=True, reads=(plan_copy,)
            )
        )
    assert data.read_bytes() == before and ledger_file.read_bytes() == ledger_bytes
    assert plan_copy.read_bytes() == PLAN.read_bytes() and not (dpdesk_home / "new.csv").exists()


@pytest.mark.slow
def test_the_command_line_asks_for_force(dpdesk_home: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
    out = tmp_path / "sim.csv"
    out.write_text("mine", encoding="utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dpdesk", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )

    r = run("simulate", str(PLAN), "--runs", "1", "--out", str(out))
    assert r.returncode == 2 and "--force" in r.stderr and out.read_text(encoding="utf-8") == "mine", r.stderr
    r = run("simulate", str(PLAN), "--runs", "1", "--out", str(PLAN), "--force")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    r = run("simulate", str(PLAN), "--runs", "1", "--out", str(out), "--force")
    assert r.returncode == 0 and out.read_text(encoding="utf-8").startswith("# NOT FOR PUBLICATION"), r.stderr
