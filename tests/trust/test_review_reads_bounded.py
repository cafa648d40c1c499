"""Issue 24, item 5: a hostile package hung or exhausted review. A FIFO as release.csv, plan.json or report.pdf
hung ``dpdesk review``; a symbolic link to /dev/zero was read whole (3.4 GB, then a MemoryError traceback).

Review now reads only regular files, bounded: each member is opened without following a link and without
blocking, refused by its type before a byte is read, and read up to the size its entry allows (release.csv: the
values the spend entry records). Every case runs ``dpdesk review`` in a child whose address space is capped and
under a timeout: a hang or an exhausted memory fails the test (the timeout is the failure, not a timed claim).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpdesk.core.publish.review import review
from dpdesk.core.release.steps import release
from tests.core.test_package import plan, planted
from tests.trust.test_hostile_inputs_and_outputs import CHILD

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero and O_NOFOLLOW")

#: The child's address space: ample for a review, far below what reading /dev/zero whole needs.
CAP = 1024**3
MEMBERS = ("release.csv", "plan.json", "report.pdf", "ledger.json")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("made")
    pkg = root / "pkg"
    release(plan(), planted(root), root / "home", pkg)
    assert review(pkg).intact
    return pkg


def fresh(made: Path, tmp_path: Path) -> Path:
    out = tmp_path / "pkg"
    shutil.copytree(made, out)
    return out


def run_review(pkg: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``dpdesk review PKG`` in a capped child; a review that hangs raises TimeoutExpired (the child is killed)."""
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(CAP), "review", str(pkg)],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(home)},
        timeout=60,
        check=False,
    )


def assert_named(r: subprocess.CompletedProcess[str], member: str, why: str) -> None:
    """The documented review-failure exit (1), no traceback, the member and the reason named."""
    out = r.stdout + r.stderr
    assert r.returncode == 1, (r.returncode, out[-2000:])
    assert "Traceback" not in out and "MemoryError" not in out, out[-2000:]
    assert any(member in line and why in line for line in out.splitlines()), out


@pytest.mark.slow
@pytest.mark.parametrize("member", MEMBERS)
def test_a_fifo_member_is_refused_not_waited_on(
    made: Path, tmp_path: Path, dpdesk_home: Path, member: str
) -> None:
    pkg = fresh(made, tmp_path)
    (pkg / member).unlink()
    os.mkfifo(pkg / member)
    assert_named(run_review(pkg, dpdesk_home), member, "not a regular file")


@pytest.mark.slow
@pytest.mark.parametrize("member", MEMBERS)
def test_a_link_to_dev_zero_is_refused_not_read(
    made: Path, tmp_path: Path, dpdesk_home: Path, member: str
) -> None:
    pkg = fresh(made, tmp_path)
    (pkg / member).unlink()
    (pkg / member).symlink_to("/dev/zero")
    assert_named(run_review(pkg, dpdesk_home), member, "symbolic link")


def test_a_link_to_the_right_bytes_is_still_refused(made: Path, tmp_path: Path) -> None:
    """A link is never followed, even to a copy of the very file the release wrote (it could point anywhere
    later, and a package holds files)."""
    pkg = fresh(made, tmp_path)
    keep = tmp_path / "elsewhere.pdf"
    (pkg / "report.pdf").rename(keep)
    (pkg / "report.pdf").symlink_to(keep)
    r = review(pkg)
    assert r.files["report.pdf"] != "intact"
    assert any("report.pdf" in p and "symbolic link" in p for p in r.problems), r.problems


@pytest.mark.slow
def test_an_oversized_release_csv_is_refused_before_it_is_read(
    made: Path, tmp_path: Path, dpdesk_home: Path
) -> None:
    """release.csv larger than the values its spend entry records (plus a byte order mark) is refused by its size
    (a sparse 4 GiB file: read whole, it would exhaust the capped child)."""
    pkg = fresh(made, tmp_path)
    with (pkg / "release.csv").open("r+b") as f:
        f.truncate(4 * 1024**3)
    r = run_review(pkg, dpdesk_home)
    assert_named(r, "release.csv", "more than the")


def test_release_csv_is_read_up_to_the_recorded_values(made: Path, tmp_path: Path) -> None:
    """The cap is what the entry recorded: one byte beyond the recorded values and a byte order mark is refused
    by its size, not read and compared."""
    pkg = fresh(made, tmp_path)
    size = (pkg / "release.csv").stat().st_size
    with (pkg / "release.csv").open("ab") as f:
        f.write(b"x" * 4)  # 3 bytes would still fit a byte order mark's room
    r = review(pkg)
    held = f"{size + 4:,}"
    assert any("release.csv" in p and held in p and "more than the" in p for p in r.problems), r.problems
