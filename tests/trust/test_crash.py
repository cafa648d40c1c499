"""Spend before reveal under faults: SIGKILL a release at many points.

Afterwards the ledger must verify, at most the killed releases are charged, and any release.csv on
disk must be complete and recorded in the ledger (values hash) — never a value without its entry.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpdesk.core.dp.values import Row, rows_hash
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.preview.sample import write_census_csv
from tests.conftest import SAMPLES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]
PLAN = SAMPLES / "cps_wages_plan.json"


def start(plan: Path, data: Path, out: Path, home: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DPDESK_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "dpdesk", "release", str(plan), "--data", str(data), "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_sigkill_at_many_points_never_reveals_without_charging(tmp_path: Path, dpdesk_home: Path) -> None:
    import json

    data = tmp_path / "census.csv"
    write_census_csv(data, 300_000, seed=11)
    plan_data = json.loads(PLAN.read_text(encoding="utf-8"))
    plan_data["budget"]["epsilon"] = 100.0  # room for every release: each kill may land after its charge
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_data), encoding="utf-8")
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    t0 = time.perf_counter()
    p = start(plan, data, tmp_path / "full", tmp_path / "timing-home")
    assert p.wait(300) == 0
    full = time.perf_counter() - t0
    outs: list[Path] = []

    def kill_at(delay: float) -> None:
        out = tmp_path / f"o{len(outs)}"
        outs.append(out)
        proc = start(plan, data, out, dpdesk_home)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)

    def charged() -> int:
        return sum(e.type == "spend" for e in Ledger.for_dataset(dpdesk_home, sha).verify())

    for i in range(14):  # spread over import, load, charge, write
        kill_at(full * (0.15 + 0.8 * i / 13))
    # a loaded machine slows the killed runs down (or a quiet one speeds them up) against the timing run:
    # kill later (earlier) until the kills have landed both before and after a charge, so that both are tested
    for factor in (1.2, 1.6, 2.2, 3.0, 4.0):
        if charged() > 0:
            break
        kill_at(full * factor)
    for factor in (0.1, 0.05, 0.02):
        if charged() < len(outs):
            break
        kill_at(full * factor)
    kills = len(outs)
    entries = Ledger.for_dataset(dpdesk_home, sha).verify()  # the chain survives every kill
    spends = [e for e in entries if e.type == "spend"]
    assert len(spends) <= kills
    recorded = {e.fields["values_hash"] for e in spends}
    revealed = 0
    for out in outs:
        csv_file = out / "release.csv"
        if csv_file.exists():
            revealed += 1
            lines = csv_file.read_text(encoding="utf-8").splitlines()
            rows = [Row(*next(iter(__import__("csv").reader([ln])))) for ln in lines[1:]]
            assert rows_hash(rows) in recorded  # complete, and charged before it was written
    # the kills landed in different phases: some before the charge, some after it
    assert 0 < len(spends) < kills, len(spends)
    assert revealed <= len(spends)
    # the dataset's next budget check sees every charge that was made
    budget_left = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(plan), "--data", str(data), "--json"],
        env={**os.environ, "DPDESK_HOME": str(dpdesk_home)},
        capture_output=True,
        text=True,
    )
    rep = json.loads(budget_left.stdout)
    assert rep["releases_so_far"] == len(spends)
