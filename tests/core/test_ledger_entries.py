"""Typed ledger entries (issue 12, stage 2): every entry dpdesk writes, and every entry of an older ledger,
parses into its typed class and serialises back byte for byte, so that every chain still verifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.carryover import CostsNeeded, StatedCost
from dpdesk.core.ledger.entries import (
    ENTRY_TYPES,
    AcknowledgeEntry,
    CheckpointEntry,
    CorrectionEntry,
    DeclaredNewEntry,
    DeclareNewEntry,
    Entry,
    EntryType,
    ForgetIdentityEntry,
    GovernEntry,
    LinkEntry,
    MigrateEntry,
    PackageEntry,
    SettingsEntry,
    SimulateEntry,
    SpendEntry,
    entry_hash,
    parse_entry,
    rows_from_entry,
)
from dpdesk.core.model.spec import canonical_json
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release, write_release_dir
from tests.core.test_recost import _sha, change, data, plan
from tests.trust.test_public_id import to_legacy

CLASSES = {
    "settings": SettingsEntry,
    "spend": SpendEntry,
    "simulate": SimulateEntry,
    "acknowledge": AcknowledgeEntry,
    "package": PackageEntry,
    "migrate": MigrateEntry,
    "correction": CorrectionEntry,
    "govern": GovernEntry,
    "link": LinkEntry,
    "declare_new": DeclareNewEntry,
    "declared_new": DeclaredNewEntry,
    "forget_identity": ForgetIdentityEntry,
    "checkpoint": CheckpointEntry,
}
#: written for near-copies and a forgotten identity store (round-tripped in test_near_copy_entries_round_trip)
NEAR = {"link", "declare_new", "declared_new", "forget_identity"}
#: written by ``dpdesk ledger merge`` (tests/trust/test_merge_duplicates.py round-trips them through verify and export)
MERGE = {"merge", "merged_into"}
#: written by ``dpdesk team import`` (tests/team/test_team_import.py: ``import`` in the team's chain, ``moved`` in the
#: home's, both read back and verified there)
IMPORT = {"import", "moved"}


def _lines(path: Path) -> list[bytes]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return raw.split(b"\n")[:-1]


def _round_trip(path: Path, *, canonical: bool = True) -> list[Entry]:
    """Every line of a ledger file, parsed, typed and written back: the same bytes, the same hash."""
    out = []
    for line in _lines(path):
        stored = json.loads(line)
        e = parse_entry(stored)
        assert type(e) is CLASSES[stored["type"]] and e.type == stored["type"]
        again = e.to_dict()
        written = canonical_json(again) if canonical else json.dumps(again)
        assert written.encode("utf-8") == line  # byte for byte, key order included
        assert entry_hash(again) == stored["hash"] == e.hash
        out.append(e)
    return out


def _full_history(home: Path, tmp_path: Path) -> tuple[Path, Ledger]:
    """A dataset whose ledger holds every kind of entry the current code writes (but a migration)."""
    d = data(tmp_path)
    release(parse_plan(plan()), d, home, tmp_path / "pkg")  # settings, spend, package
    lg = Ledger.for_dataset(home, _sha(d))
    with lg.transaction() as tx:  # what `simulate --data` wrote before simulations were limited
        tx.append("simulate", {"plan_hash": parse_plan(plan()).plan_hash(), "runs": 2, "charged": None})
    assert change(tmp_path, home, d, plan(max_rows_per_person=3)).returncode == 0  # settings, correction
    spend = next(e for e in lg.verify() if isinstance(e, SpendEntry))
    out = tmp_path / "again"
    out.mkdir()
    write_release_dir(out, rows_from_entry(spend), parse_plan(spend.plan), spend, lg, d.name)  # package
    from dpdesk.core.governance import officer

    keys = officer.create_officer(
        tmp_path / "officer", "Ann", "", "officer passphrase", "recovery passphrase"
    )
    with lg.transaction() as tx:  # what dpdesk ledger govern writes
        assert lg.dataset is not None
        tx.append("govern", {"governance": officer.govern(lg.dataset, keys.officer).to_payload()})
        tx.append("checkpoint", tx.state.to_dict())  # what a release appends every CHECKPOINT_EVERY entries
    return d, lg


@pytest.mark.slow
def test_every_entry_written_now_round_trips(dpdesk_home: Path, tmp_path: Path) -> None:
    _, lg = _full_history(dpdesk_home, tmp_path)
    assert lg.path is not None
    typed = _round_trip(lg.path)
    assert {e.type for e in typed} == set(ENTRY_TYPES) - {"acknowledge", "migrate"} - NEAR - MERGE - IMPORT
    assert [e.to_dict() for e in lg.verify()] == [json.loads(x) for x in _lines(lg.path)]
    assert lg.verify() == typed
    spend = next(e for e in typed if isinstance(e, SpendEntry))
    stored = json.loads(_lines(lg.path)[spend.seq - 1])
    assert spend.costs[0].epsilon == stored["costs"][0]["epsilon"] and len(spend.costs) == len(
        stored["costs"]
    )
    assert spend.charged.epsilon == stored["charged"]["epsilon"] and spend.release_id == stored["release_id"]
    assert spend.plan == stored["plan"] and spend.query_names == tuple(c["name"] for c in stored["costs"])
    settings = [e for e in typed if isinstance(e, SettingsEntry)]
    assert [s.settings["privacy_unit"]["max_rows_per_person"] for s in settings] == [1, 3]
    assert settings[0].budget_epsilon == plan()["budget"]["epsilon"] and settings[0].method == "sequential"
    corrections = [e for e in typed if isinstance(e, CorrectionEntry)]  # the simulation, then the new unit
    assert all(c.added_epsilon > 0 for c in corrections)
    corrected = [r["release_id"] for c in corrections for r in c.releases]
    assert corrected[0] == "simulate-4" and spend.release_id in corrected
    pkgs = [e for e in typed if isinstance(e, PackageEntry)]
    assert len(pkgs) == 2 and all(p.spend_seq == spend.seq and p.spend_hash == spend.hash for p in pkgs)
    sim = next(e for e in typed if isinstance(e, SimulateEntry))
    assert sim.runs == 2 and sim.get("charged", "absent") is None


@pytest.mark.slow
def test_acknowledged_and_migrated_ledgers_round_trip(dpdesk_home: Path, tmp_path: Path) -> None:
    d, lg = _full_history(dpdesk_home, tmp_path)
    assert lg.path is not None
    # an old ledger, from before public ids (its lines as older versions wrote them: json.dumps, not canonical)
    to_legacy(dpdesk_home, _sha(d))
    legacy = dpdesk_home / "ledgers" / f"{_sha(d)}.jsonl"
    old = _round_trip(legacy, canonical=False)
    assert all(e.dataset == _sha(d) for e in old)
    migrated = Ledger.for_dataset(dpdesk_home, _sha(d))
    assert migrated.path is not None and migrated.migrated is not None
    typed = _round_trip(migrated.path)
    mig = typed[-1]
    assert isinstance(mig, MigrateEntry) and mig.exposed_packages and mig.evidence_file.endswith(".jsonl")
    _round_trip(dpdesk_home / "ledgers" / mig.evidence_file, canonical=False)  # the evidence: the old lines
    # a broken ledger, acknowledged: its new chain opens with an acknowledge entry carrying the spends
    lines = _lines(migrated.path)
    lines[1] = lines[1].replace(b'"seq":2', b'"seq":7', 1)
    migrated.path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(CostsNeeded) as caught:  # issue 13: what does not verify needs a stated cost
        migrated.acknowledge("a disk error, checked")
    offered = [StatedCost(u.label, o) for u in caught.value.missing if (o := u.offered()) is not None]
    migrated.acknowledge("a disk error, checked", costs=offered)
    (ack,) = _round_trip(migrated.path)
    assert isinstance(ack, AcknowledgeEntry) and ack.carried and ack.settings is not None
    assert ack.reason == "a disk error, checked" and ack.broken_file.startswith(migrated.dataset or "?")


def test_fresh_entries_keep_their_key_order(dpdesk_home: Path, tmp_path: Path) -> None:
    """An entry just appended (insertion order, as release() returns it) serialises back in that order."""
    d = data(tmp_path)
    entry = release(parse_plan(plan()), d, dpdesk_home).entry
    stored = entry.to_dict()
    assert list(stored)[:5] == ["seq", "type", "time", "dataset", "prev"] and list(stored)[-1] == "hash"
    again = parse_entry(stored).to_dict()
    assert list(again) == list(stored) and json.dumps(again) == json.dumps(stored)
    (line,) = [x for x in _lines(Ledger.for_dataset(dpdesk_home, _sha(d)).path) if b'"type":"spend"' in x]
    assert canonical_json(stored).encode("utf-8") == line  # the line written is the entry returned


@pytest.mark.parametrize(
    "damaged",
    [
        {},
        {"seq": "1", "type": "spend", "time": "t", "dataset": "d", "prev": "p", "hash": "h"},
        {"seq": True, "type": "spend", "time": "t", "dataset": "d", "prev": "p", "hash": "h"},
        {"seq": 1, "type": "spendx", "time": "t", "dataset": "d", "prev": "p", "hash": "h"},
        {"seq": 1, "type": "spend", "dataset": "d", "prev": "p", "hash": "h"},
        {"seq": 1, "type": "spend", "time": "t", "dataset": None, "prev": "p", "hash": "h"},
    ],
)
def test_what_is_not_an_entry_is_refused_by_the_parser(damaged: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a ledger entry"):
        parse_entry(damaged)


def test_a_typed_field_that_is_damaged_raises_as_the_dict_did() -> None:
    e = parse_entry(
        {
            "seq": 1,
            "type": "spend",
            "time": "t",
            "dataset": "d",
            "prev": "p",
            "hash": "h",
            "costs": [{"x": 1}],
        }
    )
    assert isinstance(e, SpendEntry) and e.type is EntryType.SPEND
    with pytest.raises(KeyError):
        _ = e.costs
    with pytest.raises(KeyError):
        _ = e.charged
    with pytest.raises(TypeError):
        e.fields["costs"] = []  # read-only on purpose


def test_near_copy_entries_round_trip(dpdesk_home: Path, tmp_path: Path) -> None:
    """link, declare_new (with an approval), declared_new and forget_identity (with an approval) entries, as the
    services write them, parse into their classes and serialise back byte for byte."""
    import shutil

    from dpdesk.core.governance import officer
    from dpdesk.core.ledger.governed import head_of
    from dpdesk.services.common import Dataset
    from dpdesk.services.ledger import (
        DeclareNewRequest,
        ForgetIdentityRequest,
        LinkRequest,
        declare_new,
        forget_identity,
        link_dataset,
        new_dataset_name,
    )

    d = data(tmp_path)
    release(parse_plan(plan()), d, dpdesk_home, tmp_path / "pkg")
    lg = Ledger.for_dataset(dpdesk_home, _sha(d))
    assert lg.dataset is not None and lg.path is not None
    rows = d.read_text(encoding="utf-8").splitlines(keepends=True)
    linked, declared = tmp_path / "linked.csv", tmp_path / "declared.csv"
    linked.write_text("".join(rows[:-1]), encoding="utf-8")  # a row fewer
    declared.write_text("".join(rows[:-2]), encoding="utf-8")  # two rows fewer
    link_dataset(LinkRequest(Dataset(dpdesk_home, linked), lg.dataset))
    keys = officer.create_officer(
        tmp_path / "officer", "Ann", "", "officer passphrase", "recovery passphrase"
    )
    signer = officer.load_signer(keys.private, "officer passphrase")
    with lg.transaction() as tx:
        tx.append("govern", {"governance": officer.govern(lg.dataset, keys.officer).to_payload()})
    new = new_dataset_name(Dataset(dpdesk_home, declared))
    ap = tmp_path / "declare.json"
    ap.write_bytes(
        officer.sign_approval(signer, lg.dataset, head_of(lg.verify()), "declare_new", {"new_dataset": new})
    )
    done = declare_new(DeclareNewRequest(Dataset(dpdesk_home, declared), lg.dataset, "a new wave", ap))
    forget = tmp_path / "forget.json"
    forget.write_bytes(
        officer.sign_approval(signer, lg.dataset, head_of(lg.verify()), "forget_identity", {"reason": "lost"})
    )
    shutil.rmtree(dpdesk_home / "identity")
    forget_identity(ForgetIdentityRequest(dpdesk_home, "lost", (forget,)))
    typed = _round_trip(lg.path)
    assert [e.type for e in typed][-4:] == ["link", "govern", "declare_new", "forget_identity"]
    assert isinstance(typed[-2], DeclareNewEntry) and typed[-2].new_dataset == new == done.dataset
    first = _round_trip(dpdesk_home / "ledgers" / f"{new}.jsonl")
    assert isinstance(first[0], DeclaredNewEntry) and first[0].resembles == lg.dataset


_CHAIN = ("seq", "type", "time", "dataset", "prev", "hash", "dpdesk_version")


@pytest.mark.parametrize(
    ("case", "change"),
    [
        ("a spend without its charge", lambda p: p.pop("charged")),
        ("a spend without its accounting method", lambda p: p.pop("method")),
        ("a spend whose costs are not numbers", lambda p: p["costs"][0].update(epsilon="much")),
    ],
)
def test_an_entry_that_could_not_be_read_back_is_never_written(
    dpdesk_home: Path, tmp_path: Path, case: str, change: Any
) -> None:
    """Issue 26, item 5: an entry is written through its type. A payload its type cannot read back is refused at
    append, before a byte is written: the ledger is unchanged and still verifies, nothing is charged. (Before,
    the line was written, and every later command named the ledger damaged.)"""
    d = data(tmp_path)
    spend = release(parse_plan(plan()), d, dpdesk_home).entry
    ledger = Ledger.for_dataset(dpdesk_home, _sha(d))
    assert ledger.path is not None
    before = ledger.path.read_bytes()
    payload = json.loads(json.dumps({k: v for k, v in spend.to_dict().items() if k not in _CHAIN}))
    change(payload)
    refused = "could not be read back was refused, nothing was written"
    with pytest.raises(LedgerError, match=refused), ledger.transaction() as tx:
        tx.append("spend", payload)
    assert ledger.path.read_bytes() == before, case
    assert [e.hash for e in Ledger.for_dataset(dpdesk_home, _sha(d)).verify()][-1] == spend.hash
