"""The ledger: durable, hash-chained, per dataset, locked; tampering and truncation are named."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.ledger.book import Ledger, list_ledgers
from dpdesk.core.ledger.entries import entry_hash

SHA = "ab" * 32


def fill(home: Path, n: int = 3) -> Ledger:
    lg = Ledger.for_dataset(home, SHA)
    with lg.transaction() as tx:
        for i in range(n):
            tx.append("simulate", {"runs": i + 1, "plan_hash": "x", "charged": None})
    return lg


def test_entries_persist_and_chain(dpdesk_home: Path) -> None:
    fill(dpdesk_home)
    again = Ledger.for_dataset(dpdesk_home, SHA)  # a new object, as after a restart
    entries = again.verify()
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev == "0" * 64
    assert all(entries[i].prev == entries[i - 1].hash for i in (1, 2))
    assert all(entry_hash(e) == e.hash for e in entries)
    assert [lg.dataset for lg in list_ledgers(dpdesk_home)] == [again.dataset]
    assert again.dataset is not None and again.dataset.startswith("ds-") and SHA not in again.dataset


def test_ledgers_are_per_dataset(dpdesk_home: Path) -> None:
    fill(dpdesk_home)
    other = Ledger.for_dataset(dpdesk_home, "cd" * 32)
    assert other.verify() == []
    assert not other.exists()


def _lines(lg: Ledger) -> list[bytes]:
    return lg.path.read_bytes().split(b"\n")[:-1]


def _write(lg: Ledger, lines: list[bytes]) -> None:
    lg.path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_an_edited_value_is_detected_and_named(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    lines = _lines(lg)
    e = json.loads(lines[1])
    e["runs"] = 99
    lines[1] = json.dumps(e).encode()
    _write(lg, lines)
    with pytest.raises(LedgerError, match=r"line 2: .*does not match its hash"):
        lg.verify()


def test_a_removed_entry_is_detected(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    lines = _lines(lg)
    _write(lg, [lines[0], lines[2]])
    with pytest.raises(LedgerError, match=r"line 2: the chain is broken"):
        lg.verify()


def test_reordered_entries_are_detected(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    lines = _lines(lg)
    _write(lg, [lines[1], lines[0], lines[2]])
    with pytest.raises(LedgerError, match="line 1"):
        lg.verify()


def test_a_truncated_ledger_is_detected(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    raw = lg.path.read_bytes()
    lg.path.write_bytes(raw[:-20])
    # named as a cut inside the last entry (the register of heads would also see the ledger behind its head)
    with pytest.raises(LedgerError, match=r"the last entry is incomplete \(the file was truncated\)"):
        lg.verify()


def test_a_rehashed_forgery_of_a_middle_entry_breaks_the_next_link(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    lines = _lines(lg)
    e = json.loads(lines[1])
    e["runs"] = 99
    e["hash"] = entry_hash(e)  # a forger who recomputes this entry's hash ...
    lines[1] = json.dumps(e).encode()
    _write(lg, lines)
    with pytest.raises(LedgerError, match=r"line 3: the chain is broken"):  # ... is caught by the next entry
        lg.verify()


def test_an_entry_from_another_dataset_is_refused(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home, 1)
    other = Ledger.for_dataset(dpdesk_home, "cd" * 32)
    other.ensure_id()
    assert other.path is not None and other.dataset != lg.dataset
    other.path.write_bytes(lg.path.read_bytes())
    with pytest.raises(LedgerError, match="another dataset"):
        other.verify()


def test_append_on_a_broken_ledger_is_refused(dpdesk_home: Path) -> None:
    lg = fill(dpdesk_home)
    lg.path.write_bytes(lg.path.read_bytes()[:-5])
    with pytest.raises(LedgerError), lg.transaction() as tx:
        tx.append("simulate", {"runs": 1})


def _append_many(home: str, n: int) -> None:
    lg = Ledger.for_dataset(Path(home), SHA)
    for i in range(n):
        with lg.transaction() as tx:
            tx.append("simulate", {"runs": i, "plan_hash": "x", "charged": None})


@pytest.mark.slow
def test_concurrent_writers_never_corrupt_the_chain(dpdesk_home: Path) -> None:
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(dpdesk_home), 25)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    entries = Ledger.for_dataset(dpdesk_home, SHA).verify()
    assert len(entries) == 75
    assert [e.seq for e in entries] == list(range(1, 76))


def test_two_writers_of_the_same_file_never_rename_each_others_temporary_file(tmp_path: Path) -> None:
    """write_atomic from three threads at once on one path, 300 times each (two processes repairing the same key
    index do this): no error, no temporary file left, the file holds one of the written values. With one fixed
    temporary name a writer's rename took the other's file away (FileNotFoundError), and a first release could
    fail in the concurrent-writers test."""
    import threading

    from dpdesk.core.common.fsio import write_atomic

    path = tmp_path / "k"
    errors: list[str] = []

    def write(value: bytes) -> None:
        for _ in range(300):
            try:
                write_atomic(path, value)
            except OSError as exc:
                errors.append(repr(exc))
                return

    threads = [threading.Thread(target=write, args=(v,)) for v in (b"a", b"b", b"c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_bytes() in (b"a", b"b", b"c") and [p.name for p in tmp_path.iterdir()] == ["k"]
