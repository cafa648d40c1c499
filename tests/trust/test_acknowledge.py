"""Issue 13, item 2: a crash-safe, conservative acknowledgement of a broken ledger.

What is carried over is never less than what was spent: an entry that does not verify, or a gap in the
sequence numbers, is carried over only at the cost the officer states (dpdesk offers the largest of the
recorded, the recomputed and an exported copy's); the settings come from the last settings entry that
verifies, else from the officer. Costs edited to 0, negative, NaN or a list never lower the budget or crash a
later command. SIGKILL and a full disk at every write, fsync and rename of an acknowledgement never leave the
budget reading less spent than before, and the dataset can always be acknowledged again.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common import faults
from dpdesk.core.common.errors import LedgerError, UsageError
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.carryover import (
    CostsNeeded,
    StatedCost,
    assess,
    parse_stated_cost,
    stated_costs_from_json,
)
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release
from dpdesk.services.common import Dataset
from dpdesk.services.ledger import ExportLedgerRequest, VerifyRequest, export_ledger, verify_ledger
from tests.core.test_recost import _sha as sha
from tests.core.test_recost import data, plan


def _released(home: Path, tmp_path: Path, n: int = 2, extra: str = "") -> tuple[Path, Ledger, Decimal]:
    """A dataset with ``n`` releases of epsilon 0.3 each (budget 3): its file, its ledger and what it spent.
    The ledger: a settings entry, then the spends."""
    d = data(tmp_path)
    if extra:
        d.write_text(d.read_text(encoding="utf-8") + extra, encoding="utf-8")
    for _ in range(n):
        release(parse_plan(plan()), d, home)
    lg = Ledger.for_dataset(home, sha(d))
    return d, lg, _spent(lg)


def _spent(lg: Ledger) -> Decimal:
    """The sequential epsilon spent, as every command reads it (raises LedgerError when broken)."""
    rep = budget_report(parse_plan(plan()), lg.verify())
    seq = rep.methods["sequential"]
    assert seq is not None
    return Decimal(str(seq.spent.epsilon))


def _lines(lg: Ledger) -> list[str]:
    assert lg.path is not None
    return lg.path.read_text(encoding="utf-8").splitlines()


def _write(lg: Ledger, lines: list[str]) -> None:
    assert lg.path is not None
    lg.path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit(lg: Ledger, seq: int, change: Any) -> None:
    """Edit entry ``seq`` as a careless or hostile user would (its hash is left as it was)."""
    lines = _lines(lg)
    e = json.loads(lines[seq - 1])
    change(e)
    lines[seq - 1] = json.dumps(e)
    _write(lg, lines)


def _offered(need: CostsNeeded) -> list[StatedCost]:
    """The officer accepts what dpdesk offers for every entry it needs a cost for."""
    out = []
    for u in need.missing:
        best = u.offered()
        assert best is not None, u
        out.append(StatedCost(u.label, best))
    return out


def _need(fn: Any, *args: Any, **kw: Any) -> CostsNeeded:
    """The CostsNeeded that ``fn`` raises."""
    with pytest.raises(CostsNeeded) as caught:
        fn(*args, **kw)
    return caught.value


def _first_spend(lg: Ledger) -> int:
    return next(json.loads(x)["seq"] for x in _lines(lg) if json.loads(x)["type"] == "spend")


def _acknowledge_as_offered(lg: Ledger, **kw: Any) -> dict[str, Any]:
    try:
        return lg.acknowledge("checked with the curator", **kw)
    except CostsNeeded as need:
        return lg.acknowledge("checked with the curator", costs=_offered(need), **kw)


def _cost(value: Any) -> Any:
    def change(e: dict[str, Any]) -> None:
        e["costs"][0]["epsilon"] = value

    return change


TAMPERED_COSTS = {
    "zero": _cost(0.0),
    "negative": _cost(-5.0),
    "nan": _cost(float("nan")),
    "list": _cost([0.1]),
    "text": _cost("0.1"),
}


@pytest.mark.parametrize("how", list(TAMPERED_COSTS))
def test_a_tampered_cost_is_never_carried_over_as_written(
    dpdesk_home: Path, tmp_path: Path, how: str
) -> None:
    """Main carried cost 0 and -5 over as written (budget given back) and a NaN or list cost crashed every
    later command; now the entry needs a stated cost, the offer is the cost it had, and nothing crashes."""
    d, lg, before = _released(dpdesk_home, tmp_path)
    seq = _first_spend(lg)
    _edit(lg, seq, TAMPERED_COSTS[how])
    with pytest.raises(LedgerError):
        lg.verify()
    try:
        lg.acknowledge("checked with the curator")
    except CostsNeeded as need:  # the conservative outcome: blocked until the officer states the cost
        labels = [u.label for u in need.missing]
        assert str(seq) in labels
        (u,) = [u for u in need.missing if u.label == str(seq)]
        best = u.offered()
        assert best is not None and best.epsilon >= 0.3 - 1e-12  # the recomputed plan's cost at least
        with pytest.raises(LedgerError):  # nothing was written: still broken, still refusing
            Ledger.for_dataset(dpdesk_home, sha(d)).verify()
        lg.acknowledge("checked with the curator", costs=_offered(need), settings=plan_settings())
    after = Ledger.for_dataset(dpdesk_home, sha(d))
    assert _spent(after) >= before  # never less than was spent
    status = verify_ledger(VerifyRequest(Dataset(dpdesk_home, d)))  # and no later command crashes
    assert status.verified and status.releases == 2


def plan_settings() -> dict[str, Any] | None:
    """The settings the officer states when no settings entry verifies: the dataset's own."""
    return parse_plan(plan()).settings()


def test_a_raised_budget_in_an_edited_settings_entry_is_not_adopted(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Main adopted the settings of the last readable settings entry: budget 3 edited to 300 became 300."""
    d, lg, before = _released(dpdesk_home, tmp_path)

    def raise_budget(e: dict[str, Any]) -> None:
        e["settings"]["budget"]["epsilon"] = 300.0

    _edit(lg, 1, raise_budget)
    try:
        entry = lg.acknowledge("checked with the curator")
    except CostsNeeded as need:
        assert need.settings_needed and [u.label for u in need.missing] == ["1"]
        with pytest.raises(CostsNeeded):  # stating the costs is not enough: the settings must be stated too
            lg.acknowledge("checked with the curator", costs=_offered(need))
        entry = lg.acknowledge("checked with the curator", costs=_offered(need), settings=plan_settings())
    assert entry.settings["budget"]["epsilon"] == 3.0
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) >= before


def test_settings_come_from_the_last_settings_entry_that_verifies(dpdesk_home: Path, tmp_path: Path) -> None:
    _d, lg, _b = _released(dpdesk_home, tmp_path)
    _edit(lg, len(_lines(lg)), lambda e: e.update(title="edited"))  # the last entry (a spend) edited
    need = _need(lg.acknowledge, "x")
    # a bad link ends the walk back from the anchor: every entry before it is unconfirmed too
    assert [u.label for u in need.missing] == [str(s) for s in range(1, len(_lines(lg)) + 1)]
    with pytest.raises(UsageError, match="needs none"):
        lg.acknowledge("x", costs=[*_offered(need), StatedCost("99", _offered(need)[0].cost)])
    with pytest.raises(UsageError, match="twice"):
        lg.acknowledge("x", costs=[*_offered(need), _offered(need)[0]])
    # an edited first entry only: the rest verifies, settings included (a later settings entry)
    d2 = tmp_path / "two"
    d2.mkdir()
    _d2, lg2, _b2 = _released(dpdesk_home, d2, extra="1,a\n")
    with lg2.transaction() as tx:
        tx.append("settings", {"settings": plan_settings(), "reason": "board"})
    _edit(lg2, 1, lambda e: e.update(reason="edited"))
    need = _need(lg2.acknowledge, "x")
    assert [u.label for u in need.missing] == ["1"] and not need.settings_needed
    with pytest.raises(UsageError, match="verifies"):
        lg2.acknowledge("x", costs=_offered(need), settings=plan_settings())
    entry = lg2.acknowledge("x", costs=_offered(need))
    assert entry.settings == plan_settings() and entry.fields["settings_from"] == "verified"


def test_a_removed_middle_entry_is_a_gap_that_needs_a_stated_cost(dpdesk_home: Path, tmp_path: Path) -> None:
    """Main carried the remaining spends over and forgot the removed one: 0.6 of 0.9 spent."""
    d, lg, before = _released(dpdesk_home, tmp_path, n=3)
    copy_out = export_ledger(ExportLedgerRequest(Dataset(dpdesk_home, d), tmp_path / "copy.jsonl")).out
    lines = _lines(lg)
    spends = [i for i, x in enumerate(lines) if json.loads(x)["type"] == "spend"]
    removed = json.loads(lines[spends[1]])
    _write(lg, lines[: spends[1]] + lines[spends[1] + 1 :])
    try:
        lg.acknowledge("checked with the curator")
    except CostsNeeded as need:
        gap = [u for u in need.missing if u.missing]
        assert [u.label for u in gap] == [str(removed["seq"])] and gap[0].offered() is None
        # with the officer's exported copy, dpdesk offers the cost the copy records for it
        found = lg.assess_broken(exported=json_lines(copy_out))
        (g,) = [u for u in found.unconfirmed if u.missing]
        offered = g.offered()
        assert offered is not None and offered.epsilon == pytest.approx(0.3)
        costs = [StatedCost(u.label, o) for u in found.unconfirmed if (o := u.offered()) is not None]
        lg.acknowledge("checked", costs=costs, exported=json_lines(copy_out), settings=plan_settings())
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) >= before


def json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_the_recorded_head_turns_missing_entries_into_a_gap(dpdesk_home: Path, tmp_path: Path) -> None:
    d, lg, before = _released(dpdesk_home, tmp_path, n=4)
    lines = _lines(lg)
    entries = [json.loads(x) for x in lines]
    assert lg.dataset is not None
    raw = ("\n".join(lines[:3]) + "\n").encode()  # rolled back behind the head
    head = (entries[-1]["seq"], entries[-1]["hash"])
    found = assess(raw, lg.dataset, "behind", head=head)
    assert [(u.first, u.last, u.missing) for u in found.unconfirmed] == [(4, len(entries), True)]
    assert [e.seq for e in found.confirmed] == [1, 2, 3]
    # a head that does not match the entry at its place: nothing up to it is confirmed
    wrong = assess(("\n".join(lines) + "\n").encode(), lg.dataset, "x", head=(3, "0" * 64))
    assert {u.first for u in wrong.unconfirmed} == {1, 2, 3} and [e.seq for e in wrong.confirmed] == [4, 5]
    # the matching head confirms the whole chain
    right = assess(("\n".join(lines) + "\n").encode(), lg.dataset, "x", head=head)
    assert not right.unconfirmed and len(right.confirmed) == len(entries)
    # the same through the ledger: a chain that verifies on its own but is behind the head dpdesk recorded
    assert lg.path is not None
    lg.path.write_bytes(raw)
    assert [e.seq for e in Ledger(lg.dataset, lg.path).verify()] == [1, 2, 3]  # the chain alone: intact
    with pytest.raises(LedgerError, match="ends at entry 3 but entry 5"):
        lg.verify()  # against the recorded head: rolled back
    # a reason alone is not enough: the recorded head is reached by default, the missing entries are a gap
    need = _need(lg.acknowledge, "restored a backup")
    assert [u.label for u in need.missing] == [f"4-{len(entries)}"] and not need.settings_needed
    assert need.missing[0].missing and need.missing[0].offered() is None  # nothing to offer: no line, no copy
    assert [u.label for u in _need(lg.acknowledge, "restored a backup", head=head).missing] == [
        f"4-{len(entries)}"
    ]  # the same as the head passed in
    lost = sum(
        Decimal(str(c["epsilon"])) for e in entries[3:] for c in e["costs"]
    )  # the officer's own records
    entry = lg.acknowledge("restored a backup", costs=[parse_stated_cost(f"4-{len(entries)}={lost}")])
    assert len(entry.carried) == 3 and entry.fields["stated"][0]["missing"]
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) >= before  # never less spent than was recorded


@pytest.mark.parametrize(
    "text",
    [
        "3=nan",
        "3=inf",
        "3=-0.1",
        "3=abc",
        "3=0.1,2,0.1",
        "3=0.1,1e-6",
        "0=0.1",
        "3",
        "5-4=0.1",
        "x=1",
        "3=1e400",
    ],
)
def test_stated_costs_that_are_not_costs_are_refused(text: str) -> None:
    with pytest.raises(UsageError):
        parse_stated_cost(text)


def test_stated_costs_from_a_file() -> None:
    good = stated_costs_from_json(
        b'{"costs": [{"entries": 3, "epsilon": 0.5}, {"entries": "5-7", "epsilon": 1, '
        b'"delta": 1e-6, "rho": 0.2}]}'
    )
    assert good == [parse_stated_cost("3=0.5"), parse_stated_cost("5-7=1,1e-6,0.2")]
    assert good[0].cost.rho == pytest.approx(0.125)  # pure epsilon: rho = epsilon^2 / 2
    for bad in (
        b'{"costs": [{"entries": 3, "epsilon": NaN}]}',
        b'{"costs": [{"entries": 3, "epsilon": [1]}]}',
        b'{"costs": [{"entries": 3, "epsilon": true}]}',
        b'{"costs": [{"entries": 3}]}',
        b"[1]",
        b"{",
    ):
        with pytest.raises(UsageError):
            stated_costs_from_json(bad)


@pytest.mark.slow
def test_the_command_line_lists_offers_and_accepts_stated_costs(dpdesk_home: Path, tmp_path: Path) -> None:
    from tests.core.test_recost import cli

    d, lg, before = _released(dpdesk_home, tmp_path)
    seq = _first_spend(lg)
    _edit(lg, seq, _cost([0.1]))
    r = cli("ledger", "acknowledge", "--data", str(d), "--reason", "x", home=dpdesk_home)
    assert r.returncode == 3 and "Traceback" not in r.stderr and "offered (the largest)" in r.stderr
    suggested = r.stderr.rsplit('--reason "..." ', 1)[1].split()
    assert "--settings" in suggested
    r = cli(
        "ledger", "acknowledge", "--data", str(d), "--reason", "x", "--cost", f"{seq}=nan", home=dpdesk_home
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    pf = tmp_path / "plan.json"
    pf.write_text(json.dumps(plan()), encoding="utf-8")
    args = [a if a != "PLAN" else str(pf) for a in suggested]
    r = cli("ledger", "acknowledge", "--data", str(d), "--reason", "x", *args, home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) >= before
    for args2 in (("ledger",), ("ledger", "verify", "--data", str(d))):
        r = cli(*args2, home=dpdesk_home)
        assert r.returncode == 0 and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- kill and full disk


def _broken_home(home: Path, tmp_path: Path) -> tuple[Path, Decimal, list[str]]:
    """A home whose ledger is broken (a spend's title edited), what it had spent, and the stated costs."""
    d, lg, before = _released(home, tmp_path)
    _edit(lg, _first_spend(lg), lambda e: e.update(title="edited"))
    need = _need(lg.acknowledge, "x")
    costs = [f"{s.entries}={s.cost.epsilon!r},{s.cost.delta!r},{s.cost.rho!r}" for s in _offered(need)]
    return d, before, costs


def _reads_at_least(home: Path, d: Path, before: Decimal) -> bool:
    """After a fault: the ledger reads broken (every command refuses, exit 3), or at least as spent as before."""
    lg = Ledger.for_dataset(home, sha(d))
    try:
        spent = _spent(lg)
    except LedgerError:
        status = verify_ledger(VerifyRequest(Dataset(home, d)))
        assert status.exit_code == 3
        return False
    assert spent >= before, (spent, before)
    return True


def _ack_cli(home: Path, d: Path, costs: list[str], fault: str | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    env.pop(faults.ENV, None)
    if fault:
        env[faults.ENV] = fault
    args = [
        "ledger",
        "acknowledge",
        "--data",
        str(d),
        "--reason",
        "x",
        "--settings",
        str(d.parent / "plan.json"),
    ]
    for c in costs:
        args += ["--cost", c]
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigkill_at_every_step_of_an_acknowledgement_never_reads_less_spent(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Each write, fsync and rename of an acknowledgement, killed in turn (DPDESK_FAULT=kill:N): afterwards the
    ledger reads broken or at least as spent as before, and can be acknowledged (again) to the same effect."""
    d, before, costs = _broken_home(dpdesk_home, tmp_path)
    (d.parent / "plan.json").write_text(json.dumps(plan()), encoding="utf-8")
    pristine = tmp_path / "pristine"
    shutil.copytree(dpdesk_home, pristine)
    trace = tmp_path / "trace.txt"
    probe = tmp_path / "probe-home"
    shutil.copytree(pristine, probe)
    r = _ack_cli(probe, d, costs, f"trace:{trace}")
    assert r.returncode == 0, r.stderr
    steps = trace.read_text(encoding="utf-8").splitlines()
    names = " | ".join(steps)
    for word in ("write", "fsync", "rename", "folder"):
        assert word in names, names
    assert len(steps) >= 8, names  # evidence and new chain: write, fsync, folder, rename, folder each
    outcomes = set()
    for n in range(1, len(steps) + 1):
        shutil.rmtree(dpdesk_home)
        shutil.copytree(pristine, dpdesk_home)
        r = _ack_cli(dpdesk_home, d, costs, f"kill:{n}")
        assert r.returncode == -signal.SIGKILL, (n, r.returncode, r.stderr[-300:])
        outcomes.add(_reads_at_least(dpdesk_home, d, before))
        again = _ack_cli(dpdesk_home, d, costs, None)  # a dataset can always be acknowledged (again)
        assert again.returncode in (0, 3), (n, again.stderr[-300:])
        assert _reads_at_least(dpdesk_home, d, before), (n, again.stderr[-300:])
    assert outcomes == {False, True}  # the kills landed both before and after the new chain took over


def _cut_home(home: Path, tmp_path: Path) -> tuple[Path, Decimal, list[str]]:
    """A home whose ledger was rolled back behind the head dpdesk recorded (its last spend cut off), what it had
    spent, and the stated cost of the gap (the lost spend's, from the officer's own records)."""
    d, lg, before = _released(home, tmp_path)
    lines = _lines(lg)
    lost = json.loads(lines[-1])
    _write(lg, lines[:-1])
    eps = math.fsum(c["epsilon"] for c in lost["costs"])
    return d, before, [f"{lost['seq']}={eps!r}"]


#: More than the durable steps of an acknowledgement (checked below), so that the full disk hits each of them.
ACK_STEPS = 22


def test_the_full_disk_matrix_covers_every_step_of_an_acknowledgement(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d, _before, costs = _cut_home(dpdesk_home, tmp_path)
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv(faults.ENV, f"trace:{trace}")
    faults.reset()
    Ledger.for_dataset(dpdesk_home, sha(d)).acknowledge("x", costs=[parse_stated_cost(c) for c in costs])
    steps = trace.read_text(encoding="utf-8").splitlines()
    # the evidence, the pending head, the new chain and the head: each written, synced, renamed
    assert sum("rename" in x for x in steps) == 4 and len(steps) < ACK_STEPS, steps


@pytest.mark.parametrize("damage", ["edited", "cut"])
@pytest.mark.parametrize(
    "step",  # every seventh step in the fast loop, every step in the whole suite
    [s if s % 7 == 1 else pytest.param(s, marks=pytest.mark.slow) for s in range(1, ACK_STEPS)],
)
def test_a_full_disk_at_every_step_of_an_acknowledgement_never_reads_less_spent(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int, damage: str
) -> None:
    """A full disk at each step of acknowledging an edited ledger, and one cut behind its recorded head: the
    budget never reads less spent, and the same statement acknowledges it again (or there is nothing left to)."""
    d, before, costs = (_broken_home if damage == "edited" else _cut_home)(dpdesk_home, tmp_path)
    stated = [parse_stated_cost(c) for c in costs]
    settings = plan_settings() if damage == "edited" else None  # a cut ledger keeps its settings entry
    lg = Ledger.for_dataset(dpdesk_home, sha(d))
    monkeypatch.setenv(faults.ENV, f"enospc:{step}")
    faults.reset()
    try:
        lg.acknowledge("x", costs=stated, settings=settings)
        finished = True
    except LedgerError as exc:
        assert "No space left" in str(exc) or "unchanged" in str(exc), exc
        finished = False
    monkeypatch.delenv(faults.ENV)
    assert _reads_at_least(dpdesk_home, d, before) or not finished
    assert not list((dpdesk_home / "ledgers").rglob(".*.tmp"))  # no temporary file left behind
    try:
        Ledger.for_dataset(dpdesk_home, sha(d)).acknowledge("again", costs=stated, settings=settings)
    except LedgerError as exc:
        assert "nothing to acknowledge" in str(exc)
    assert _reads_at_least(dpdesk_home, d, before)


def test_an_acknowledgement_interrupted_before_its_head_was_recorded_is_not_charged_twice(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies after the new chain replaced a ledger cut behind its head, before the head was recorded.
    The new chain's first entry was recorded as pending before the replace, so the chain verifies as that
    acknowledgement and its head is recorded: nothing to acknowledge again, and the gap is not stated (and
    charged) a second time."""
    from dpdesk.core.ledger import anchor

    d, before, costs = _cut_home(dpdesk_home, tmp_path)
    lg = Ledger.for_dataset(dpdesk_home, sha(d))
    assert lg.dataset is not None
    old = anchor.recorded_head(dpdesk_home, lg.dataset)
    assert old is not None and old.seq == 3

    def dies(*_a: object) -> None:
        raise OSError(
            28, "No space left on device"
        )  # as a kill right after the replace: the head not recorded

    monkeypatch.setattr(anchor, "finish_reset", dies)
    entry = lg.acknowledge("restored a backup", costs=[parse_stated_cost(c) for c in costs])
    monkeypatch.undo()
    rec = anchor.read_record(dpdesk_home, lg.dataset)
    assert rec is not None and rec.head == old and rec.pending == anchor.Head(1, entry.hash)
    again = Ledger.for_dataset(dpdesk_home, sha(d))
    assert float(_spent(again)) == pytest.approx(float(before))  # verifies: at least as spent, not twice
    rec = anchor.read_record(dpdesk_home, lg.dataset)
    assert rec is not None and rec.head == anchor.Head(1, entry.hash) and rec.pending is None
    with pytest.raises(LedgerError, match="nothing to acknowledge"):
        again.acknowledge("again", costs=[parse_stated_cost(c) for c in costs])


def test_faults_are_inert_unless_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(faults.ENV, raising=False)
    faults.reset()
    for _ in range(50):
        faults.step("write x")
    monkeypatch.setenv(faults.ENV, "enospc:2")
    faults.reset()
    faults.step("one")
    with pytest.raises(OSError, match="No space left"):
        faults.step("two")
    faults.step("three")
    monkeypatch.setenv(faults.ENV, f"trace:{tmp_path / 't'}")
    faults.reset()
    faults.step("a")
    assert (tmp_path / "t").read_text(encoding="utf-8") == "1 a\n"


def test_an_old_entry_copy_that_differs_is_not_overwritten_as_evidence(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Two acknowledgements within one second keep both broken files as evidence."""
    _d, lg, _before = _released(dpdesk_home, tmp_path)
    for round_ in range(2):
        _edit(lg, _first_spend(lg) if round_ == 0 else 1, lambda e: e.update(reason="edited"))
        _acknowledge_as_offered(lg, settings=plan_settings())
    assert len(list((dpdesk_home / "ledgers").glob("*.broken-*.jsonl"))) == 2
