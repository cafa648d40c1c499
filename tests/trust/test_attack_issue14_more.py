"""Issue 14, what its audit (prompts/audit-14.md) found main still lacked: small inputs read whole without a
limit, a malformed package that made review crash, a hard link that let a statement overwrite a ledger, exits
that were tracebacks, and words that were not true.

Every hostile input runs through the command line; the ones that could exhaust memory or hang run in a child
whose address space is capped (RLIMIT_AS) and under a timeout, so a regression fails the test instead of the
machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

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
    env = {**os.environ, "DPDESK_HOME": str(home)}
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
    from dpdesk.core.smallfile import MAX_PLAN_BYTES

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
    from dpdesk.core.smallfile import NotSmallFile, read_small_file

    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert read_small_file(f, 10) == b"x" * 10
    with pytest.raises(NotSmallFile):
        read_small_file(f, 9)
    with pytest.raises(IsADirectoryError):
        read_small_file(tmp_path, 10)
    with pytest.raises(FileNotFoundError):
        read_small_file(tmp_path / "nothing", 10)
