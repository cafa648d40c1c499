"""Forgetting the content identities (``dpdesk ledger forget-identity``) runs under the home-wide key lock, first in
the lock order (#24, a helper's finding): a first release deciding a new dataset between the register's identities
being dropped and the identity folder being moved aside left every later command refusing the home (exit 3)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="flock")]


def dpdesk(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "dpdesk", *args]


def test_forget_identity_waits_for_the_key_lock(dpdesk_home: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
    r = subprocess.run(
        dpdesk(
            dpdesk_home,
            "release",
            str(SAMPLES / "cps_wages_plan.json"),
            "--data",
            str(SAMPLES / "census_sample.csv"),
            "--out",
            str(tmp_path / "out"),
        ),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-800:]
    identity = dpdesk_home / "identity"
    assert identity.is_dir()
    fd = os.open(dpdesk_home / "ledgers" / "keys.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a first release deciding a new dataset holds it
        p = subprocess.Popen(
            dpdesk(dpdesk_home, "ledger", "forget-identity", "--reason", "secret lost"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # while the lock is held, the identities stay as they are (a slow machine only makes this easier to meet)
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
        assert p.poll() is None and identity.is_dir(), "forget-identity ran without the key lock"
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err[-800:]
    assert not identity.exists() and list(dpdesk_home.glob("identity.forgotten.*"))
