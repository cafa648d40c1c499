"""The anchored chain: a ledger behind the head dpdesk recorded for it, replaced, or missing while its dataset is
known, is broken (named), never fresh; a ledger ahead of its head (an interrupted append) is accepted and repaired."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.ledger.book import Ledger, is_known_dataset, list_ledgers
from dpdesk.core.ledger.entries import GENESIS, entry_hash

SHA = "ab" * 32


def fill(home: Path, n: int = 3, sha: str = SHA) -> Ledger:
    """``n`` entries appended in ONE transaction (so the head can only come from the appends themselves)."""
    lg = Ledger.for_dataset(home, sha)
    with lg.transaction() as tx:
        for i in range(n):
            tx.append("simulate", {"runs": i + 1, "plan_hash": "x", "charged": None})
    return lg


def lines(lg: Ledger) -> list[bytes]:
    assert lg.path is not None
    return lg.path.read_bytes().split(b"\n")[:-1]


def keep(lg: Ledger, n: int) -> None:
    """Cut the ledger after its n-th entry (at an entry boundary: the chain that is left verifies)."""
    assert lg.path is not None
    lg.path.write_bytes(b"".join(line + b"\n" for line in lines(lg)[:n]))


def reopen(home: Path, sha: str = SHA) -> Ledger:
    return Ledger.for_dataset(home, sha)  # a new object, as a new process would


def test_the_head_follows_every_append(dpdesk_home: Path) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 3)
    assert lg.dataset is not None
    last = lg.verify()[-1]
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(3, last.hash)
    rec = anchor.read_record(dpdesk_home, lg.dataset)
    assert rec is not None and rec.keys == (SHA,)
    assert anchor.is_anchored(dpdesk_home)


def test_a_ledger_cut_at_an_entry_boundary_is_broken(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 3)
    head = json.loads(lines(lg)[-1])[
        "hash"
    ]  # read, not verified: a verification would move the head up itself
    keep(lg, 2)
    with pytest.raises(
        LedgerError, match=r"ends at entry 2 but entry 3 \(hash " + head[:16] + r"\) was recorded"
    ):
        reopen(dpdesk_home).verify()
    with (
        pytest.raises(LedgerError, match="truncated or restored from an older copy"),
        reopen(dpdesk_home).transaction(),
    ):
        pass


def test_an_older_copy_put_back_is_broken(dpdesk_home: Path, tmp_path: Path) -> None:
    lg = fill(dpdesk_home, 2)
    assert lg.path is not None
    shutil.copy(lg.path, tmp_path / "backup.jsonl")
    fill(dpdesk_home, 2)  # two more entries, then the backup is restored
    shutil.copy(tmp_path / "backup.jsonl", lg.path)
    with pytest.raises(LedgerError, match="ends at entry 2 but entry 4"):
        reopen(dpdesk_home).verify()


def test_an_emptied_or_deleted_ledger_of_a_known_dataset_is_broken(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 3)
    assert lg.path is not None
    lg.path.write_bytes(b"")
    with pytest.raises(LedgerError, match="missing or empty, but dpdesk recorded 3 entries"):
        reopen(dpdesk_home).verify()
    lg.path.unlink()
    again = reopen(dpdesk_home)
    assert again.dataset == lg.dataset
    with pytest.raises(LedgerError, match="deleted or replaced"):
        again.verify()
    assert not again.exists()


def test_a_dataset_whose_ledger_sidecar_and_key_were_deleted_is_still_known(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 3)
    assert lg.path is not None and lg.dataset is not None
    folder = dpdesk_home / "ledgers"
    lg.path.unlink()
    (folder / f"{lg.dataset}.key").unlink()
    shutil.rmtree(folder / "keys")
    assert is_known_dataset(dpdesk_home, SHA)
    again = reopen(dpdesk_home)
    assert again.dataset == lg.dataset  # not a fresh dataset
    with pytest.raises(LedgerError, match="recorded 3 entries"):
        again.verify()
    with pytest.raises(LedgerError, match="recorded 3 entries"), again.transaction():
        pass
    broken = [x for x in list_ledgers(dpdesk_home) if x.dataset == lg.dataset]
    assert len(broken) == 1
    with pytest.raises(LedgerError, match="recorded 3 entries"):
        broken[0].verify()


def test_a_dataset_with_an_id_but_no_entry_is_not_listed_as_broken(dpdesk_home: Path) -> None:
    fill(dpdesk_home, 1)
    Ledger.for_dataset(dpdesk_home, "cd" * 32).ensure_id()  # as a first release refused over budget leaves it
    assert len(list_ledgers(dpdesk_home)) == 1
    assert Ledger.for_dataset(dpdesk_home, "cd" * 32).verify() == []


def test_a_replaced_ledger_of_the_same_length_is_broken(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 2)
    assert lg.path is not None
    forged, prev = [], GENESIS
    for e in lg.verify():
        n = {k: v for k, v in e.to_dict().items() if k != "hash"}
        n["prev"], n["runs"] = prev, 0
        n["hash"] = prev = entry_hash(n)
        forged.append(n)
    lg.path.write_text("".join(json.dumps(e) + "\n" for e in forged), encoding="utf-8")
    with pytest.raises(LedgerError, match=r"entry 2 has hash .* but dpdesk recorded .*replaced"):
        reopen(dpdesk_home).verify()


def test_an_interrupted_append_leaves_the_ledger_ahead_which_is_accepted_and_repaired(
    dpdesk_home: Path,
) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 2)
    assert lg.dataset is not None
    record = anchor.register_folder(dpdesk_home) / f"{lg.dataset}.json"
    before = record.read_bytes()
    fill(dpdesk_home, 1)  # entry 3 ...
    record.write_bytes(
        before
    )  # ... and its head as if the process died between the entry's fsync and the head's
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(2, lg.verify()[1].hash)
    entries = reopen(dpdesk_home).verify()  # accepted
    assert len(entries) == 3
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(3, entries[2].hash)  # and repaired
    keep(lg, 2)
    with pytest.raises(LedgerError, match="ends at entry 2 but entry 3"):
        reopen(dpdesk_home).verify()


def test_a_head_that_cannot_be_written_does_not_undo_the_entry(
    dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 1)

    def full_disk(*_a: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(anchor, "_write_record", full_disk)
    fill(dpdesk_home, 1)  # the entry is durable; its head is not
    monkeypatch.undo()
    assert len(reopen(dpdesk_home).verify()) == 2
    assert lg.dataset is not None
    head = anchor.recorded_head(dpdesk_home, lg.dataset)
    assert head is not None and head.seq == 2


def test_a_removed_or_damaged_register_file_is_broken_not_fresh(dpdesk_home: Path) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 3)
    assert lg.dataset is not None
    record = anchor.register_folder(dpdesk_home) / f"{lg.dataset}.json"
    saved = record.read_bytes()
    record.write_bytes(b"{not json")
    with pytest.raises(LedgerError, match="cannot be read: the register was damaged or edited"):
        reopen(dpdesk_home).verify()
    assert anchor.recorded_head(dpdesk_home, lg.dataset) is None
    record.unlink()
    with pytest.raises(LedgerError, match="no recorded head for this dataset"):
        reopen(dpdesk_home).verify()
    shutil.rmtree(anchor.register_folder(dpdesk_home))
    with pytest.raises(LedgerError, match="no recorded head for this dataset"):
        reopen(dpdesk_home).verify()
    anchor.register_folder(dpdesk_home).mkdir()
    record.write_bytes(saved)
    assert len(reopen(dpdesk_home).verify()) == 3


def test_a_home_from_before_the_register_is_anchored_at_its_current_heads(dpdesk_home: Path) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 3)
    other = fill(dpdesk_home, 2, sha="cd" * 32)
    broken = fill(dpdesk_home, 2, sha="ef" * 32)
    assert broken.path is not None and broken.dataset is not None
    broken.path.write_bytes(broken.path.read_bytes().replace(b'"runs":2', b'"runs":7'))
    shutil.rmtree(anchor.register_folder(dpdesk_home))  # as written by a version before the register
    (dpdesk_home / "ledgers" / "anchored").unlink()
    assert len(reopen(dpdesk_home).verify()) == 3  # taken as it is
    assert anchor.is_anchored(dpdesk_home)
    assert other.dataset is not None
    assert anchor.recorded_head(dpdesk_home, other.dataset) == anchor.Head(2, other.verify()[-1].hash)
    assert anchor.recorded_head(dpdesk_home, broken.dataset) is None  # broken then: known, no usable head
    broken.path.write_bytes(broken.path.read_bytes().replace(b'"runs":7', b'"runs":2'))  # its chain mended
    with pytest.raises(LedgerError, match="already broken when dpdesk first recorded"):
        reopen(dpdesk_home, "ef" * 32).verify()
    keep(other, 1)
    with pytest.raises(LedgerError, match="ends at entry 1 but entry 2"):
        reopen(dpdesk_home, "cd" * 32).verify()
    assert lg.dataset is not None


def test_acknowledging_a_cut_ledger_starts_a_chain_whose_head_is_recorded(dpdesk_home: Path) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 3)
    assert lg.dataset is not None
    keep(lg, 1)
    entry = acknowledge_gap(dpdesk_home, "a backup was restored", "2-3")
    assert "ends at entry 1 but entry 3" in entry.problem
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(1, entry.hash)
    rec = anchor.read_record(dpdesk_home, lg.dataset)
    assert rec is not None and rec.pending is None  # the reset finished
    assert len(fill(dpdesk_home, 1).verify()) == 2


def acknowledge_gap(home: Path, reason: str, gap: str) -> dict[str, Any]:
    """Acknowledge with a reason alone (refused: the entries missing up to the recorded head are a gap whose cost
    must be stated), then with the gap's cost and the settings stated; the gap is carried over at that cost."""
    from dpdesk.core.ledger.carryover import CostsNeeded, parse_stated_cost
    from dpdesk.core.plan.reader import parse_plan
    from tests.core.test_recost import plan

    with pytest.raises(CostsNeeded) as caught:
        reopen(home).acknowledge(reason)
    assert [(u.label, u.missing) for u in caught.value.missing] == [(gap, True)]
    assert caught.value.settings_needed  # simulations only: no settings entry to take them from
    entry = reopen(home).acknowledge(
        reason, costs=[parse_stated_cost(f"{gap}=0.7")], settings=parse_plan(plan()).settings()
    )
    assert [(s["entries"], s["missing"]) for s in entry.fields["stated"]] == [(gap, True)]
    assert (
        sum(c["epsilon"] for r in entry.fields["carried"] for c in r["costs"]) >= 0.7
    )  # never less than stated
    return entry


def test_a_deleted_ledger_can_be_acknowledged(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 3)
    assert lg.path is not None and lg.dataset is not None
    lg.path.unlink()
    entry = acknowledge_gap(dpdesk_home, "the file was deleted", "1-3")
    assert "recorded 3 entries" in entry.problem
    assert reopen(dpdesk_home).verify()[0].type == "acknowledge"


def test_an_exported_ledger_is_not_checked_against_this_homes_register(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    lg = fill(dpdesk_home, 3)
    assert lg.path is not None and lg.dataset is not None
    copy = tmp_path / "export.jsonl"
    copy.write_bytes(b"".join(line + b"\n" for line in lines(lg)[:2]))
    assert len(Ledger(lg.dataset, copy).verify()) == 2  # a copy under review: its own chain only


def _settings_payload(epsilon: float) -> dict[str, Any]:
    return {
        "settings": {
            "budget": {"epsilon": epsilon, "delta": 1e-6},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "accounting": {"method": "sequential"},
        },
        "reason": "test",
    }


def test_a_settings_entry_is_accepted_after_its_head_only_when_dpdesk_recorded_it_first(
    dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24, item 2: the crash window between an entry and its head is kept for dpdesk's own settings entry
    (its intent is recorded in the register before the append), and refused for the same line appended by hand."""
    from dpdesk.core.ledger import anchor

    lg = Ledger.for_dataset(dpdesk_home, SHA)
    with lg.transaction() as tx:
        tx.append("settings", _settings_payload(1.0))
    assert lg.dataset is not None
    record = anchor.register_folder(dpdesk_home) / f"{lg.dataset}.json"
    before = record.read_bytes()

    def killed(*_a: object, **_k: object) -> None:
        raise OSError(5, "the process died here")  # as if it died between the entry's fsync and the head's

    monkeypatch.setattr(anchor, "advance_head", killed)
    with reopen(dpdesk_home).transaction() as tx:
        tx.append("settings", _settings_payload(2.0))
    monkeypatch.undo()
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(1, lg.verify()[0].hash)
    entries = reopen(dpdesk_home).verify()  # dpdesk's own entry: accepted, and the head moved up
    assert [e.type for e in entries] == ["settings", "settings"]
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(2, entries[1].hash)
    assert "intents" not in json.loads(record.read_text(encoding="utf-8"))  # done once the head reached it

    # the very same entry, after a register that never recorded it: a line appended by hand
    record.write_bytes(before)
    with pytest.raises(LedgerError, match="entry 2: this settings entry was added after the last entry"):
        reopen(dpdesk_home).verify()
    assert anchor.recorded_head(dpdesk_home, lg.dataset) == anchor.Head(1, entries[0].hash)  # not moved


def test_an_entry_needing_an_intent_is_not_appended_when_the_register_cannot_record_it(
    dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.core.ledger import anchor

    lg = fill(dpdesk_home, 1)

    def full_disk(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(anchor, "_write_record", full_disk)
    with pytest.raises(LedgerError, match="could not record its settings entry"), lg.transaction() as tx:
        tx.append("settings", _settings_payload(5.0))
    monkeypatch.undo()
    assert [e.type for e in reopen(dpdesk_home).verify()] == ["simulate"]
