"""Issue 13, "Done when": SIGKILL and a full disk at every durable step of the governed commands.

For an approved settings change of a governed dataset, ``ledger govern`` and a plan-approved release under
``--require-signed-plans``: the steps are learnt with ``DPDESK_FAULT=trace:FILE``, then each step N is killed
(``kill:N``) and failed with ENOSPC (``enospc:N``) in a child process, from the same starting home. Afterwards:

- every command reads the ledger as broken (exit 3) or at least as spent as before, never less;
- the dataset is governed by the same officer key as before (a governed one never ungoverned or re-keyed; the
  one being governed is ungoverned or governed by that key, nothing else);
- the same command, retried, succeeds or is refused with a one-line ``dpdesk:`` message, never a traceback; and
  after the retry the budget still reads at least as spent, and the governance is the intended one.

Deterministic (no random data; keys and nonces are random, but every check holds for any of them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from dpdesk.core.common import faults
from tests.conftest import SAMPLES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]
PLAN = SAMPLES / "cps_wages_plan.json"
COMMANDS = ("change-settings", "govern", "signed-release")


def cli(home: Path, *args: object, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    env.pop(faults.ENV, None)
    if fault:
        env[faults.ENV] = fault
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stderr
    return r.stdout


def head_of(home: Path, data: Path) -> tuple[str, str]:
    d = json.loads(ok(cli(home, "ledger", "head", "--data", data, "--json")))
    return str(d["dataset"]), f"{d['head']['seq']}:{d['head']['hash']}"


@dataclass
class Scenario:
    """A starting home (``pristine``), the command to interrupt, and what must hold around it."""

    pristine: Path
    data: Path
    big: Path  # the plan with the raised budget (5.0) the settings change puts in force
    command: tuple[object, ...]
    fingerprint: str  # the officer key's
    governed_before: bool
    spent_before: Decimal


def spent(home: Path, sc: Scenario) -> Decimal | None:
    """The spent epsilon (sequential composition, the textbook upper bound) or None when the ledger reads broken.
    ``ledger verify`` (the spend entries' costs) and ``budget`` (of a plan with the settings in force) must agree."""
    v = cli(home, "ledger", "verify", "--data", sc.data, "--json")
    assert v.returncode in (0, 3) and "Traceback" not in v.stderr, v.stderr[-500:]
    plan = sc.big if v.returncode == 0 and _budget_in_force(v.stdout) == 5.0 else PLAN
    b = cli(home, "budget", plan, "--data", sc.data, "--json")
    assert b.returncode in (0, 1, 3) and "Traceback" not in b.stderr, b.stderr[
        -500:
    ]  # 1: the plan does not fit
    assert (b.returncode == 3) == (v.returncode == 3), (b.stderr[-300:], v.stderr[-300:])
    if v.returncode == 3:
        return None
    entries = json.loads(v.stdout)["entries"]
    total = sum(
        (Decimal(repr(c["epsilon"])) for e in entries if e["type"] == "spend" for c in e["costs"]), Decimal(0)
    )
    rep = json.loads(b.stdout)
    assert Decimal(rep["methods"]["sequential"]["spent"]["epsilon_exact"]) == total
    assert rep["releases_so_far"] == sum(e["type"] == "spend" for e in entries)
    return total


def _budget_in_force(verified: str) -> float:
    entries = json.loads(verified)["entries"]
    settings = [e["settings"] for e in entries if isinstance(e.get("settings"), dict)]
    return float(settings[-1]["budget"]["epsilon"])


def governance(home: Path, sc: Scenario) -> str:
    """What ``ledger head`` says of the dataset's governance (it says it of a broken ledger too)."""
    r = cli(home, "ledger", "head", "--data", sc.data)
    assert r.returncode in (0, 3) and "Traceback" not in r.stderr, r.stderr[-500:]
    return r.stdout


def check_after(home: Path, sc: Scenario, where: str, *, done: bool) -> None:
    now = spent(home, sc)
    assert now is None or now >= sc.spent_before, (where, now, sc.spent_before)
    gov = governance(home, sc)
    if sc.governed_before or done:
        assert f"Governed by Ann (key {sc.fingerprint})" in gov, (where, gov)
        assert "ungoverned" not in gov, (where, gov)
    else:
        assert "ungoverned" in gov or f"Governed by Ann (key {sc.fingerprint})" in gov, (where, gov)
    assert gov.count("Governed by") <= 1, (where, gov)


@pytest.fixture(scope="module")
def officer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    """Ann's officer key: public file, private key, passphrase file and fingerprint."""
    folder = tmp_path_factory.mktemp("ann")
    pf, rpf = folder / "pass.txt", folder / "rpass.txt"
    pf.write_text("Ann officer passphrase\n", encoding="utf-8")
    rpf.write_text("Ann recovery passphrase\n", encoding="utf-8")
    out = ok(
        cli(
            folder / "home",
            "officer",
            "create",
            "--name",
            "Ann",
            "--out",
            folder / "keys",
            "--passphrase-file",
            pf,
            "--recovery-passphrase-file",
            rpf,
        )
    )
    fingerprint = out.split("fingerprint ")[1].split("\n")[0]
    public = next((folder / "keys").glob("*-public.json"))
    private = next((folder / "keys").glob("*-private.pem"))
    return public, private, pf, fingerprint


def approve(
    home: Path, data: Path, officer: tuple[Path, Path, Path, str], verb: str, out: Path, *args: object
) -> Path:
    _public, private, pf, _fp = officer
    dataset, h = head_of(home, data)
    ok(
        cli(
            home,
            "officer",
            verb,
            *args,
            "--dataset",
            dataset,
            "--head",
            h,
            "--key",
            private,
            "--passphrase-file",
            pf,
            "--out",
            out,
        )
    )
    return out


def scenario(name: str, root: Path, officer: tuple[Path, Path, Path, str]) -> Scenario:
    public, _private, _pf, fingerprint = officer
    root.mkdir(parents=True)
    home = root / "pristine"
    data = root / "census.csv"
    shutil.copyfile(SAMPLES / "census_sample.csv", data)
    big_plan = json.loads(PLAN.read_text(encoding="utf-8"))
    big_plan["budget"]["epsilon"] = 5.0
    big = root / "big.json"
    big.write_text(json.dumps(big_plan), encoding="utf-8")
    ok(cli(home, "release", PLAN, "--data", data, "--out", root / "first"))
    if name == "govern":
        command: tuple[object, ...] = ("ledger", "govern", "--data", data, "--officer", public)
    else:
        signed = ("--require-signed-plans",) if name == "signed-release" else ()
        ok(cli(home, "ledger", "govern", "--data", data, "--officer", public, *signed))
        ap = approve(home, data, officer, "approve-settings", root / "settings-approval.json", big)
        if name == "change-settings":
            command = ("ledger", "change-settings", big, "--data", data, "--reason", "more", "--approval", ap)
        else:
            ok(
                cli(
                    home,
                    "ledger",
                    "change-settings",
                    big,
                    "--data",
                    data,
                    "--reason",
                    "more",
                    "--approval",
                    ap,
                )
            )
            pa = approve(home, data, officer, "approve-plan", root / "plan-approval.json", big)
            command = ("release", big, "--data", data, "--out", root / "out", "--approval", pa)
    sc = Scenario(home, data, big, command, fingerprint, name != "govern", Decimal(0))
    before = spent(home, sc)
    assert before is not None and before > 0
    sc.spent_before = before
    return sc


@pytest.fixture(scope="module")
def scenarios(
    tmp_path_factory: pytest.TempPathFactory, officer: tuple[Path, Path, Path, str]
) -> dict[str, tuple[Scenario, list[str]]]:
    """Each command's starting home and its durable steps (learnt with ``trace:`` on a copy)."""
    root = tmp_path_factory.mktemp("governed")
    found = {}
    for name in COMMANDS:
        sc = scenario(name, root / name, officer)
        probe = root / name / "probe"
        shutil.copytree(sc.pristine, probe)
        trace = root / name / "trace.txt"
        ok(cli(probe, *sc.command, fault=f"trace:{trace}"))
        check_after(probe, sc, "traced", done=True)
        steps = trace.read_text(encoding="utf-8").splitlines()
        found[name] = (sc, steps)
        out = root / name / "out"
        if out.exists():
            shutil.rmtree(out)
    return found


def test_the_matrix_covers_the_register_and_the_package_steps(
    scenarios: dict[str, tuple[Scenario, list[str]]],
) -> None:
    for name, (_sc, steps) in scenarios.items():
        names = " | ".join(steps)
        for word in ("write", "fsync", "rename", "folder"):
            assert word in names, (name, names)
    # a signed release: the register's head after the spend, the package's files, the head after the package
    release_steps = " | ".join(scenarios["signed-release"][1])
    assert "release.csv" in release_steps and "rename out" in release_steps, release_steps


@pytest.mark.parametrize("kind", ["kill", "enospc"])
@pytest.mark.parametrize("name", COMMANDS)
def test_a_fault_at_every_step_of_a_governed_command_never_reads_less_spent_or_ungoverned(
    scenarios: dict[str, tuple[Scenario, list[str]]], tmp_path: Path, name: str, kind: str
) -> None:
    sc, steps = scenarios[name]
    home = tmp_path / "home"
    out = sc.data.parent / "out"
    for n in range(1, len(steps) + 1):
        where = f"{name} {kind}:{n} ({steps[n - 1]})"
        if home.exists():
            shutil.rmtree(home)
        if out.exists():
            shutil.rmtree(out)
        for litter in sc.data.parent.glob(".out*"):
            shutil.rmtree(litter) if litter.is_dir() else litter.unlink()
        shutil.copytree(sc.pristine, home)
        r = cli(home, *sc.command, fault=f"{kind}:{n}")
        if kind == "kill":
            assert r.returncode == -signal.SIGKILL, (where, r.returncode, r.stderr[-500:])
        else:
            assert "Traceback" not in r.stderr, (where, r.stderr[-2000:])
            assert r.returncode in (0, 1, 2, 3, 4), (where, r.returncode, r.stderr[-500:])
            if r.returncode == 4:  # charged, package not written: the values wait in the ledger
                assert "export-release" in r.stderr, (where, r.stderr[-500:])
        check_after(home, sc, where, done=False)
        again = cli(home, *sc.command)
        assert "Traceback" not in again.stderr, (where, again.stderr[-2000:])
        if again.returncode != 0:
            last = again.stderr.strip().splitlines()[-1]
            assert again.returncode in (2, 3) and last.startswith("dpdesk: "), (where, again.returncode, last)
        check_after(home, sc, f"{where}, retried", done=True)
