"""Checkpoints: a long ledger read from its tail, its totals those of the whole chain, forged checkpoints caught."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.dp import accounting as acc
from dpdesk.core.ledger import anchor
from dpdesk.core.ledger import checkpoint as ck
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.entries import entry_hash
from dpdesk.core.loading import load_table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release


def tiny_plan(method: str = "sequential") -> Plan:
    return parse_plan(
        {
            "version": 1,
            "title": "t",
            "budget": {"epsilon": 1000.0, "delta": 1e-3},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "accounting": {"method": method, **({"delta_prime": 1e-7} if method == "advanced" else {})},
            "columns": {"x": {"type": "float", "bounds": [0, 100]}},
            "queries": [
                {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.01},
                {
                    "name": "s",
                    "statistic": "sum",
                    "column": "x",
                    "mechanism": "gaussian",
                    "epsilon": 0.01,
                    "delta": 1e-9,
                },
            ],
        }
    )


def lean_plan() -> Plan:
    """One Laplace count under a budget without delta: a release whose costing is the cheapest there is (no
    Gaussian re-solve, no zCDP conversion through OpenDP), so that thousands of releases build in seconds."""
    return parse_plan(
        {
            "version": 1,
            "title": "t",
            "budget": {"epsilon": 1e6, "delta": 0.0},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "accounting": {"method": "sequential"},
            "columns": {"x": {"type": "float", "bounds": [0, 100]}},
            "queries": [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.01}],
        }
    )


def build(
    home: Path, tmp_path: Path, n: int, method: str = "sequential", plan: Plan | None = None
) -> tuple[Ledger, Plan]:
    """``n`` releases through the release code (no package; fsync skipped by the caller for speed)."""
    data = tmp_path / "d.csv"
    data.write_text("x\n1\n2\n3\n", encoding="utf-8")
    plan = plan or tiny_plan(method)
    table = load_table(data, plan.columns)
    for _ in range(n):
        release(plan, data, home, None, table=table)
    return Ledger.for_dataset(home, table.sha256), plan


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        os, "fsync", lambda _fd: None
    )  # durability is tested elsewhere; this is about reading


def _lines(lg: Ledger) -> list[bytes]:
    assert lg.path is not None
    return lg.path.read_bytes().split(b"\n")[:-1]


def _rehash_from(lines: list[bytes], start: int) -> list[bytes]:
    """Re-link and re-hash every entry from index ``start`` (a forger who holds the ledger file)."""
    out = list(lines)
    for i in range(start, len(out)):
        e = json.loads(out[i])
        e["seq"] = i + 1
        e["prev"] = json.loads(out[i - 1])["hash"] if i else "0" * 64
        if e["type"] == "checkpoint" and i != start:
            pass
        e["hash"] = entry_hash(e)
        out[i] = json.dumps(e, sort_keys=True, separators=(",", ":")).encode()
    return out


def _set_head(home: Path, lg: Ledger, lines: list[bytes]) -> None:
    """Also move the register's head to the forged chain's end (a forger who rewrites the register too)."""
    assert lg.dataset is not None
    last = json.loads(lines[-1])
    path = anchor.register_folder(home) / f"{lg.dataset}.json"
    rec = json.loads(path.read_text())
    rec["head"] = {"seq": last["seq"], "hash": last["hash"]}
    rec["ever"] = last["seq"]
    path.write_text(json.dumps(rec))


def _totals(report: Any) -> dict[str, Any]:
    return {m: (v.spent.to_dict() if v else None) for m, v in report.methods.items()}


@pytest.mark.slow
def test_a_5000_release_ledger_is_read_from_its_tail_and_forgeries_are_caught(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tail_and_forgeries(dpdesk_home, tmp_path, monkeypatch, 5000, lean_plan())


@pytest.mark.slow
def test_a_short_ledger_is_read_from_its_tail_and_forgeries_are_caught(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tail_and_forgeries(dpdesk_home, tmp_path, monkeypatch, 3 * ck.CHECKPOINT_EVERY + 5)


def _tail_and_forgeries(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, plan: Plan | None = None
) -> None:
    lg, plan = build(dpdesk_home, tmp_path, n, plan=plan)
    assert lg.path is not None
    size = lg.path.stat().st_size
    full = lg.verify()
    assert sum(e.type == "spend" for e in full) == n
    assert sum(e.type == "checkpoint" for e in full) >= n // ck.CHECKPOINT_EVERY
    truth = budget_report(plan, full)

    # the commands read the tail only: count the bytes read, and the whole chain is never verified
    read: list[int] = []
    real_tail = ck.read_tail

    def counting(path: Path) -> Any:
        got = real_tail(path)
        assert got is not None
        read.append(sum(len(x) + 1 for x in got[0]))
        return got

    def no_full(self: Ledger) -> Any:
        raise AssertionError("the whole chain was verified")

    monkeypatch.setattr(ck, "read_tail", counting)
    monkeypatch.setattr(Ledger, "verify", no_full)
    state = Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    assert not state.full and len(state.tail) <= ck.CHECKPOINT_EVERY + 1
    tail_report = budget_report(plan, state=state)
    assert _totals(tail_report) == _totals(truth)  # exact decimals, every method
    assert tail_report.releases_so_far == truth.releases_so_far == n
    data = tmp_path / "d.csv"
    table = load_table(data, plan.columns)
    release(plan, data, dpdesk_home, None, table=table)  # a release too: tail only
    assert read and max(read) < size // (50 if n >= 5000 else 2), (read, size)
    monkeypatch.undo()
    monkeypatch.setattr(os, "fsync", lambda _fd: None)

    lines = _lines(lg)
    last_cp = max(i for i, x in enumerate(lines) if json.loads(x)["type"] == "checkpoint")

    # 1. the checkpoint's totals lowered, the chain re-hashed from it: not the recorded head
    forged = [*lines]
    e = json.loads(forged[last_cp])
    e["state"]["spent"]["sequential"]["epsilon"] = "0.01"
    forged[last_cp] = json.dumps(e).encode()
    forged = _rehash_from(forged, last_cp)
    lg.path.write_bytes(b"".join(x + b"\n" for x in forged))
    with pytest.raises(LedgerError, match="recorded"):
        Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    with pytest.raises(LedgerError):
        release(plan, data, dpdesk_home, None, table=table)
    # the same with the register's head moved too: the full verification refuses the checkpoint
    _set_head(dpdesk_home, lg, forged)
    from dpdesk.services.ledger import ledger_status

    status = ledger_status(Ledger.for_dataset(dpdesk_home, lg.key or ""))
    assert status.exit_code == 3 and "checkpoint" in (status.error or "")

    # 2. an old checkpoint copied to the end (moved), chain re-linked: after the recorded head it is recomputed and
    # named (issue 24: never accepted as a crash window); with the register's head moved too it is never trusted
    # (it is of another entry), so the whole chain is read and its totals are the truth; the full verification
    # names it
    lg.path.write_bytes(b"".join(x + b"\n" for x in lines))
    _set_head(dpdesk_home, lg, lines)
    assert Ledger.for_dataset(dpdesk_home, lg.key or "").read().spent.releases == n + 1
    moved = _rehash_from([*lines, lines[last_cp - ck.CHECKPOINT_EVERY - 1]], len(lines))
    lg.path.write_bytes(b"".join(x + b"\n" for x in moved))
    with pytest.raises(LedgerError, match="checkpoint does not hold"):
        Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    _set_head(dpdesk_home, lg, moved)
    again = Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    assert again.full and again.spent.releases == n + 1
    assert ledger_status(Ledger.for_dataset(dpdesk_home, lg.key or "")).exit_code == 3


@pytest.mark.parametrize(
    "method",
    [
        "sequential",
        pytest.param("advanced", marks=pytest.mark.slow),
        pytest.param("zcdp", marks=pytest.mark.slow),
    ],
)
def test_checkpoint_totals_are_the_whole_chains(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, method: str
) -> None:
    lg, plan = build(dpdesk_home, tmp_path, 2 * ck.CHECKPOINT_EVERY + 3, method)
    full = lg.verify()
    state = lg.read()
    assert not state.full
    for e in full:
        if e.type == "checkpoint":  # each equals the state computed from every entry before it
            i = e.seq - 1
            assert e.fields["state"] == ck.state_of(full[:i]).to_dict()["state"]
    assert _totals(budget_report(plan, state=state)) == _totals(budget_report(plan, full))
    assert budget_report(plan, state=state).to_dict() == budget_report(plan, full).to_dict()


@pytest.mark.slow
def test_a_unit_change_and_its_corrections_are_read_in_full_then_checkpointed(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None
) -> None:
    from dpdesk.services.common import Dataset
    from dpdesk.services.ledger import ChangeSettingsRequest, change_settings

    lg, plan = build(dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 2)
    k2 = plan.to_dict()
    k2["privacy_unit"] = {"neighbouring": "add_remove", "max_rows_per_person": 2}
    (tmp_path / "k2.json").write_text(json.dumps(k2), encoding="utf-8")
    change_settings(
        ChangeSettingsRequest(Dataset(dpdesk_home, tmp_path / "d.csv"), tmp_path / "k2.json", "k=2")
    )
    assert lg.read().full  # a settings change after the checkpoint: the whole chain is read
    plan2 = parse_plan(k2)
    table = load_table(tmp_path / "d.csv", plan2.columns)
    for _ in range(ck.CHECKPOINT_EVERY):
        release(plan2, tmp_path / "d.csv", dpdesk_home, None, table=table)
    full = lg.verify()
    assert any(e.type == "correction" for e in full)
    state = lg.read()
    assert not state.full
    assert budget_report(plan2, state=state).to_dict() == budget_report(plan2, full).to_dict()


def test_a_checkpoint_of_other_costing_rules_is_not_trusted(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint records the costing rules it was made under (``COSTING_RULES``, which the code declares) and
    is trusted only under the same rules: code whose rules are other reads and verifies the whole chain."""
    lg, _plan = build(dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 1, plan=lean_plan())
    cps = [e for e in lg.verify() if e.type == "checkpoint"]
    assert cps and all(e.fields["state"]["costing_rules"] == acc.COSTING_RULES for e in cps)
    assert not Ledger.for_dataset(dpdesk_home, lg.key or "").read().full
    monkeypatch.setattr(acc, "COSTING_RULES", acc.COSTING_RULES + 1)
    assert Ledger.for_dataset(dpdesk_home, lg.key or "").read().full


def test_after_an_upgrade_the_next_release_writes_a_checkpoint_of_its_own(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another version's checkpoint a few entries back must not delay this version's own: the first release
    after an upgrade that changed the costing rules reads the whole chain once and appends a checkpoint, and the
    next command reads the tail (before, every release read the whole chain until CHECKPOINT_EVERY more entries had
    been made)."""
    lg, plan = build(
        dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 3, plan=lean_plan()
    )  # a checkpoint, then more
    assert not lg.read().full
    monkeypatch.setattr(acc, "COSTING_RULES", acc.COSTING_RULES + 1)
    assert lg.read().full
    build(dpdesk_home, tmp_path, 1, plan=plan)  # the first release of the new version
    assert not lg.read().full


def _rewrite_checkpoints(home: Path, lg: Ledger, state_edit: Any) -> list[bytes]:
    """Every checkpoint's recorded state edited by ``state_edit``, the chain re-hashed from the first and the
    register's head moved to its end (what an older version left, or a hand-made ledger): the new lines."""
    lines = _lines(lg)
    first = min(i for i, x in enumerate(lines) if json.loads(x)["type"] == "checkpoint")
    out = []
    for x in lines:
        e = json.loads(x)
        if e["type"] == "checkpoint":
            state_edit(e["state"])
        out.append(json.dumps(e).encode())
    out = _rehash_from(out, first)
    assert lg.path is not None
    lg.path.write_bytes(b"".join(x + b"\n" for x in out))
    _set_head(home, lg, out)
    return out


@pytest.mark.slow
def test_a_ledger_whose_checkpoints_hold_the_old_hex_fingerprint_is_verified_whole_then_checkpointed(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None
) -> None:
    """Before the costing rules were declared, a checkpoint recorded ``costing``: SHA-256 over dpdesk's version and
    the source of a list of files. Such a checkpoint is never trusted (nothing says under which rules it was
    costed): the whole chain is verified and read, a full verification does not call the ledger broken, the totals
    are those of every entry, and the next release appends a checkpoint of this code's rules, read from then on."""
    from dpdesk.services.ledger import ledger_status

    lg, plan = build(dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 3, plan=lean_plan())
    truth = _totals(budget_report(plan, lg.verify()))

    def old_style(state: dict[str, Any]) -> None:
        del state["costing_rules"]
        state["costing"] = hashlib.sha256(b"0.2.0 and the costing modules' source").hexdigest()

    lines = _rewrite_checkpoints(dpdesk_home, lg, old_style)
    state = Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    assert state.full and state.checkpoint_seq == 0
    assert _totals(budget_report(plan, state=state)) == truth
    assert ledger_status(Ledger.for_dataset(dpdesk_home, lg.key or "")).exit_code == 0
    build(dpdesk_home, tmp_path, 1, plan=plan)  # the first release under the declared rules
    entries = Ledger.for_dataset(dpdesk_home, lg.key or "").verify()
    assert len(entries) > len(lines)
    new = [e for e in entries[len(lines) :] if e.type == "checkpoint"]
    assert len(new) == 1 and new[0].fields["state"]["costing_rules"] == acc.COSTING_RULES
    assert new[0].fields["state"] == ck.state_of(entries[: new[0].seq - 1]).to_dict()["state"]
    again = Ledger.for_dataset(dpdesk_home, lg.key or "").read()
    assert not again.full and again.checkpoint_seq == new[0].seq
    assert ledger_status(Ledger.for_dataset(dpdesk_home, lg.key or "")).exit_code == 0


@pytest.mark.parametrize(
    "rules", [True, *(pytest.param(r, marks=pytest.mark.slow) for r in (1.0, "1", None, [1]))], ids=repr
)
def test_costing_rules_are_a_whole_number_not_something_equal_to_one(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch, rules: Any
) -> None:
    """``True == 1 == 1.0`` in Python: a checkpoint recording rules as true, 1.0 or text is not one of rules 1
    (never written so by dpdesk), so it is not trusted and the whole chain is read."""
    monkeypatch.setattr(acc, "COSTING_RULES", 1)
    lg, _plan = build(dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 1, plan=lean_plan())
    assert not Ledger.for_dataset(dpdesk_home, lg.key or "").read().full

    def edit(state: dict[str, Any]) -> None:
        state["costing_rules"] = rules

    _rewrite_checkpoints(dpdesk_home, lg, edit)
    assert Ledger.for_dataset(dpdesk_home, lg.key or "").read().full


costs = st.lists(
    st.tuples(
        st.floats(0, 3, allow_nan=False),
        st.floats(0, 1e-4, allow_nan=False),
        # rho: 0 or at least 1e-12 (OpenDP's zCDP conversion overflows on a subnormal rho, which no plan books)
        st.one_of(st.just(0.0), st.floats(1e-12, 5, allow_nan=False)),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(costs, st.sampled_from([None, 1e-7, 1e-5])), max_size=30), st.integers(0, 30))
def test_running_totals_equal_the_accountants(
    releases: list[tuple[list[tuple[float, float, float]], float | None]], cut: int
) -> None:
    rels = [acc.Release(tuple(acc.QueryCost("q", e, d, r) for e, d, r in cs), dp) for cs, dp in releases]
    spent = ck.Spent(budget_delta=1e-3)
    for r in rels[:cut]:
        spent = spent.add(r)
    spent = ck.Spent.from_dict(json.loads(json.dumps(spent.to_dict())))  # through a checkpoint
    for r in rels[cut:]:
        spent = spent.add(r)
    for m in ("sequential", "advanced", "zcdp"):
        assert spent.total(m) == acc.dataset_total(m, rels, 1e-3)
