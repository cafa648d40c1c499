"""A ledger cut at an entry boundary, an older copy put back, or a deleted ledger (with its sidecar and key) of a
known dataset: `budget --data`, `release` and `ledger verify` each refuse with exit 3, naming what was found, and the
app shows it; never a fresh budget."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger.book import Ledger
from dpdesk.core.loading import file_sha256
from tests.cli.test_cli import DATA, PLAN, run

pytestmark = pytest.mark.slow


def roomy_plan(tmp_path: Path) -> Path:
    d = json.loads(PLAN.read_text(encoding="utf-8"))
    d["budget"]["epsilon"] = 10.0  # room for several releases
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


def release_once(plan: Path, data: Path, out: Path, home: Path) -> None:
    r = run("release", str(plan), "--data", str(data), "--out", str(out), home=home)
    assert r.returncode == 0, r.stderr


def ledger_of(home: Path, data: Path) -> Ledger:
    lg = Ledger.for_dataset(home, file_sha256(data))
    assert lg.path is not None and lg.dataset is not None
    return lg


def cut(lg: Ledger, _tmp: Path) -> str:
    assert lg.path is not None
    lines = lg.path.read_bytes().split(b"\n")[:-1]
    lg.path.write_bytes(
        b"".join(line + b"\n" for line in lines[:2])
    )  # settings and spend; the package entry cut
    return "ends at entry 2 but entry 3"


def restore_older(lg: Ledger, tmp: Path) -> str:
    assert lg.path is not None
    shutil.copy(tmp / "backup.jsonl", lg.path)
    return "truncated or restored from an older copy"


def delete_all(lg: Ledger, _tmp: Path) -> str:
    assert lg.path is not None and lg.home is not None and lg.key is not None
    lg.path.unlink()
    (lg.path.with_suffix(".key")).unlink()
    (lg.home / "ledgers" / "keys" / lg.key).unlink()
    return "missing or empty, but dpdesk recorded"


@pytest.mark.parametrize("damage", [cut, restore_older, delete_all], ids=["cut", "older-copy", "deleted"])
def test_a_ledger_behind_its_head_or_gone_is_refused_with_exit_3(
    damage: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    plan = roomy_plan(tmp_path)
    data = tmp_path / "census.csv"
    shutil.copy(DATA, data)
    release_once(plan, data, tmp_path / "r1", dpdesk_home)
    lg = ledger_of(dpdesk_home, data)
    assert lg.path is not None
    shutil.copy(lg.path, tmp_path / "backup.jsonl")
    if damage is restore_older:
        release_once(plan, data, tmp_path / "r2", dpdesk_home)
    spent_before = spent(plan, lg)
    found = damage(lg, tmp_path)
    before = lg.path.read_bytes() if lg.path.exists() else None
    for args in (
        ("budget", str(plan), "--data", str(data)),
        ("release", str(plan), "--data", str(data), "--out", str(tmp_path / "refused")),
        ("ledger", "verify", "--data", str(data)),
        ("ledger", "list"),
    ):
        r = run(*args, home=dpdesk_home)
        assert r.returncode == 3, (args, r.stdout, r.stderr)
        assert found in r.stderr + r.stdout, (args, r.stdout, r.stderr)
        if args[0] != "ledger":
            assert "dpdesk ledger acknowledge" in r.stderr
    assert not (tmp_path / "refused").exists()
    assert (lg.path.read_bytes() if lg.path.exists() else None) == before  # nothing charged
    assert ledger_of(dpdesk_home, data).dataset == lg.dataset  # never a fresh dataset
    # a reason alone does not acknowledge it: the entries missing up to the recorded head are a gap whose cost the
    # officer states; the last package (the officer's copy) makes dpdesk offer what it records for them
    latest = tmp_path / ("r2" if damage is restore_older else "r1")
    reason = ("--reason", "seen: " + damage.__name__, "--exported", str(latest))
    ack = run("ledger", "acknowledge", "--data", str(data), *reason, home=dpdesk_home)
    assert ack.returncode == 3, ack.stderr
    gap = {cut: "3", restore_older: "4-5", delete_all: "1-3"}[damage]
    assert f"entries {gap}: missing" in ack.stderr and "in an exported copy" in ack.stderr, ack.stderr
    suggested = ack.stderr.rsplit('--reason "..." ', 1)[1].split()
    assert suggested[:2] == ["--cost", f"{gap}={suggested[1].split('=', 1)[1]}"], suggested
    args = [str(plan) if a == "PLAN" else a for a in suggested]
    ack = run("ledger", "acknowledge", "--data", str(data), *reason, *args, home=dpdesk_home)
    assert ack.returncode == 0, ack.stderr
    assert run("ledger", "verify", "--data", str(data), home=dpdesk_home).returncode == 0
    assert spent(plan, ledger_of(dpdesk_home, data)) >= spent_before  # never less spent than was recorded


def spent(plan: Path, lg: Ledger) -> float:
    """The sequential epsilon spent, as every command reads it."""
    from dpdesk.core.ledger.budget import budget_report
    from dpdesk.core.plan.reader import load_plan

    seq = budget_report(load_plan(plan), lg.verify()).methods["sequential"]
    assert seq is not None
    return seq.spent.epsilon


def test_an_interrupted_append_is_accepted_and_the_head_repaired(dpdesk_home: Path, tmp_path: Path) -> None:
    from dpdesk.core.ledger import anchor

    plan = roomy_plan(tmp_path)
    release_once(plan, DATA, tmp_path / "r1", dpdesk_home)
    lg = ledger_of(dpdesk_home, DATA)
    assert lg.dataset is not None
    record = anchor.register_folder(dpdesk_home) / f"{lg.dataset}.json"
    rec = json.loads(record.read_text(encoding="utf-8"))
    entries = lg.verify()
    rec["head"] = {"seq": 2, "hash": entries[1].hash}  # the package entry written, its head not yet
    rec["ever"] = 2  # the register is written in one step: its highest entry number moves with the head
    record.write_text(json.dumps(rec), encoding="utf-8")
    v = run("ledger", "verify", "--data", str(DATA), home=dpdesk_home)
    assert v.returncode == 0, v.stdout + v.stderr
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(3, entries[2].hash)


def test_the_exported_ledger_states_its_head(dpdesk_home: Path, tmp_path: Path) -> None:
    release_once(PLAN, DATA, tmp_path / "r1", dpdesk_home)
    out = tmp_path / "ledger.jsonl"
    r = run("ledger", "export", "--data", str(DATA), "--out", str(out), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    last = json.loads(out.read_text(encoding="utf-8").splitlines()[-1])
    assert f"Its head is entry {last['seq']} (hash {last['hash']})" in r.stdout
    rv = run("review", str(tmp_path / "r1"), "--against", str(out), "--json", home=dpdesk_home)
    assert rv.returncode == 0, rv.stdout
    assert json.loads(rv.stdout)["head"] == {"seq": last["seq"], "hash": last["hash"]}


@pytest.mark.parametrize("name", ["copy.json", "ledger.txt", "ledger"])
def test_an_exported_ledger_is_reviewed_by_its_own_name_not_a_sibling_s(
    dpdesk_home: Path, tmp_path: Path, name: str
) -> None:
    """An exported ledger is told apart by its content, whatever its name: review reads that very file, never a
    ``<stem>.jsonl`` beside it (an edited copy beside an intact sibling was reported intact; a rolled-back copy
    reached the package's head; an intact copy named without .jsonl was called empty)."""
    release_once(PLAN, DATA, tmp_path / "r1", dpdesk_home)
    intact = tmp_path / "intact.jsonl"
    r = run("ledger", "export", "--data", str(DATA), "--out", str(intact), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    folder = tmp_path / "x"
    folder.mkdir()
    copy = folder / name
    stem = copy.name.removesuffix(copy.suffix)
    shutil.copy(intact, folder / f"{stem}.jsonl")  # an intact sibling the review must not read instead
    shutil.copy(intact, copy)
    rv = run("review", str(copy), home=dpdesk_home)
    assert rv.returncode == 0 and "Intact" in rv.stdout, rv.stdout + rv.stderr
    lines = intact.read_bytes().split(b"\n")[:-1]
    edited = lines[1].replace(b'"epsilon":', b'"epsilon":0.0001,"was":', 1)
    assert edited != lines[1]
    copy.write_bytes(b"".join(x + b"\n" for x in [lines[0], edited, *lines[2:]]))
    rv = run("review", str(copy), home=dpdesk_home)
    assert rv.returncode == 1 and "Intact." not in rv.stdout, rv.stdout
    copy.write_bytes(b"".join(x + b"\n" for x in lines[:2]))  # rolled back behind the package's head
    rv = run("review", str(tmp_path / "r1"), "--against", str(copy), home=dpdesk_home)
    assert rv.returncode == 1, rv.stdout
