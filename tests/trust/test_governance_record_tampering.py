"""Issue 13, item 4 (an officer who holds the key): the attacker's two holes, end to end.

1. The analyst swaps the home's copy of the governance record (``ledgers/governance/<id>.json``) for their own
   key and breaks the ledger: the acknowledgement must not take the copy over the ``govern`` entry, nor carry the
   analyst's key into the new chain.
2. The analyst deletes the copy and damages the ``govern`` entry: the dataset must still read as governed (the
   register, ``ledgers/heads/<id>.json``, records its officer's key), and the acknowledgement needs their approval.

And when the analyst also rewrites the register (everything on one machine can be rewritten), the officer's
``dpdesk review OLD_EXPORT --against NEW_EXPORT`` names the changed key or the lost governance (exit 1).

Deterministic: keys and nonces are random, but every check holds for any key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_govern import DATA, PLAN, Keys, ann, approve, governed, head, released, run

__all__ = ["ann", "governed", "released"]  # the fixtures, imported for pytest


@pytest.fixture
def mallory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Keys:
    return Keys(tmp_path / "mallory", capsys, name="Mallory")


def _paths(home: Path, dataset: str) -> tuple[Path, Path, Path]:
    ledgers = home / "ledgers"
    return (
        ledgers / f"{dataset}.jsonl",
        ledgers / "governance" / f"{dataset}.json",
        ledgers / "heads" / f"{dataset}.json",
    )


def _swap_copy(copy: Path, keys: Keys) -> None:
    g = json.loads(copy.read_text(encoding="utf-8"))
    g["officer"] = json.loads(keys.public.read_text(encoding="utf-8"))
    copy.write_text(json.dumps(g), encoding="utf-8")


def _cut_last(ledger: Path) -> int:
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(lines[:-1]))
    return len(lines)


def _export(capsys: pytest.CaptureFixture[str], out: Path) -> Path:
    code, _o, err = run(capsys, "ledger", "export", "--data", DATA, "--out", out)
    assert code == 0, err
    return out


def _ack_approval(
    capsys: pytest.CaptureFixture[str],
    keys: Keys,
    out: Path,
    at: tuple[str, str],
    cost: str,
    *more: Any,
) -> Path:
    return approve(
        capsys, keys, "approve-acknowledge", out, "--reason", "restored", "--cost", cost, *more, at=at
    )


ACK = ("ledger", "acknowledge", "--data", DATA, "--reason", "restored")
SETTINGS = ("--settings", PLAN)


def test_a_swapped_governance_copy_never_overrides_the_ledger(
    capsys: pytest.CaptureFixture[str],
    governed: Keys,
    mallory: Keys,
    tmp_path: Path,
    dpdesk_home: Path,
) -> None:
    dataset, h = head(capsys)
    ledger, copy, _register = _paths(dpdesk_home, dataset)
    _swap_copy(copy, mallory)
    # the chain verifies: the copy disagrees with it, which is named (exit 3)
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 3 and "the home's copy of the governance record" in out + err
    assert mallory.fingerprint in out + err and governed.fingerprint in out + err
    # the ledger broken too (the attack): still refused, and nothing is acknowledged with the analyst's key
    n = _cut_last(ledger)
    code, out, err = run(capsys, "ledger", "head", "--data", DATA)
    assert code == 3 and "never overrides the ledger" in out + err
    forged = _ack_approval(capsys, mallory, tmp_path / "m.json", (dataset, h), f"{n}=0")
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", "--approval", forged)
    assert code == 3 and "never overrides the ledger" in err
    assert not list(ledger.parent.glob(f"{dataset}.broken-*"))  # nothing was written
    # the copy removed: governed by Ann all the same (the register), so the analyst's approval is refused
    copy.unlink()
    code, out, _err = run(capsys, "ledger", "head", "--data", DATA)
    assert code == 3 and governed.fingerprint in out and mallory.fingerprint not in out
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", "--approval", forged)
    assert code == 2 and f"is signed by key {mallory.fingerprint}" in err, err
    assert not list(ledger.parent.glob(f"{dataset}.broken-*"))
    good = _ack_approval(capsys, governed, tmp_path / "a.json", (dataset, h), f"{n}=0")
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", "--approval", good)
    assert code == 0, err
    code, out, _err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 0 and governed.fingerprint in out


def test_a_deleted_copy_and_a_damaged_govern_entry_leave_the_dataset_governed(
    capsys: pytest.CaptureFixture[str],
    ann: Keys,
    tmp_path: Path,
    dpdesk_home: Path,
) -> None:
    code, _o, err = run(capsys, "ledger", "govern", "--data", DATA, "--officer", ann.public)
    assert code == 0, err
    governed = ann
    dataset, h = head(capsys)
    ledger, copy, register = _paths(dpdesk_home, dataset)
    copy.unlink()
    lines = ledger.read_bytes().splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines, start=1) if b'"type":"govern"' in line)
    lines[n - 1] = lines[n - 1].replace(b"Ann", b"Anx", 1)  # one byte of the govern entry
    ledger.write_bytes(b"".join(lines))
    code, out, _err = run(capsys, "ledger", "head", "--data", DATA)
    assert code == 3 and "Governed by Ann" in out and governed.fingerprint in out
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", *SETTINGS)
    assert code == 2 and "needs their signed approval" in err, err
    assert not list(ledger.parent.glob(f"{dataset}.broken-*"))
    # a register from before it recorded the governance: the damaged govern line still refuses
    rec = json.loads(register.read_text(encoding="utf-8"))
    saved = register.read_text(encoding="utf-8")
    del rec["governance"]
    register.write_text(json.dumps(rec), encoding="utf-8")
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", *SETTINGS)
    assert code == 3 and "governance entry of the broken ledger is damaged" in err
    register.write_text(saved, encoding="utf-8")
    ap = _ack_approval(capsys, governed, tmp_path / "a.json", (dataset, h), f"{n}=0", *SETTINGS)
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", *SETTINGS, "--approval", ap)
    assert code == 0, err
    code, out, _err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 0 and governed.fingerprint in out


def _rewrite_register(register: Path, governance: dict[str, Any] | None) -> None:
    rec = json.loads(register.read_text(encoding="utf-8"))
    rec["governance"] = governance
    rec.pop("governed_by", None)
    register.write_text(json.dumps(rec), encoding="utf-8")


@pytest.mark.parametrize("attack", ["hijack", "ungovern"])
def test_review_against_names_a_governance_the_whole_home_was_rewritten_for(
    capsys: pytest.CaptureFixture[str],
    governed: Keys,
    mallory: Keys,
    tmp_path: Path,
    dpdesk_home: Path,
    attack: str,
) -> None:
    before = _export(capsys, tmp_path / "export1.jsonl")
    dataset, h = head(capsys)
    ledger, copy, register = _paths(dpdesk_home, dataset)
    n = _cut_last(ledger)  # the govern entry (the last) cut off
    args: tuple[Any, ...] = ()
    if attack == "hijack":
        _swap_copy(copy, mallory)
        _rewrite_register(register, json.loads(copy.read_text(encoding="utf-8")))
        args = ("--approval", _ack_approval(capsys, mallory, tmp_path / "m.json", (dataset, h), f"{n}=0"))
    else:
        copy.unlink()
        _rewrite_register(register, None)
    code, _o, err = run(capsys, *ACK, "--cost", f"{n}=0", *args)
    assert code == 0, err  # one machine cannot tell: the officer's exported copy does
    later = _export(capsys, tmp_path / "export2.jsonl")
    code, out, _err = run(capsys, "review", later)
    assert code == 0, out  # the later export alone is consistent
    code, out, _err = run(capsys, "review", before, "--against", later)
    assert code == 1 and "Intact." not in out, out
    expected = (
        "no rotation signed by its recovery key" if attack == "hijack" else "leaves the dataset ungoverned"
    )
    assert expected in out and governed.fingerprint in out


def _rotate(capsys: pytest.CaptureFixture[str], old: Keys, new: Keys, tmp_path: Path) -> Path:
    dataset, h = head(capsys)
    out = tmp_path / "rotate.json"
    code, _o, err = run(
        capsys,
        "officer",
        "approve-rotate",
        "--new-officer",
        new.public,
        "--dataset",
        dataset,
        "--head",
        h,
        "--key",
        old.recovery,
        "--passphrase-file",
        old.rpf,
        "--out",
        out,
    )
    assert code == 0, err
    return out


@pytest.mark.parametrize("forgery", ["no-approval", "officer-signed"])
def test_a_govern_entry_appended_with_a_valid_hash_but_no_recovery_signature_is_refused(
    capsys: pytest.CaptureFixture[str],
    governed: Keys,
    mallory: Keys,
    tmp_path: Path,
    dpdesk_home: Path,
    forgery: str,
) -> None:
    from dpdesk.core.ledger.entries import entry_hash
    from dpdesk.core.model.spec import canonical_json

    dataset, _h = head(capsys)
    ledger, copy, _register = _paths(dpdesk_home, dataset)
    chain = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    gov = json.loads(copy.read_text(encoding="utf-8"))
    gov["officer"] = json.loads(mallory.public.read_text(encoding="utf-8"))
    entry: dict[str, Any] = {
        "seq": len(chain) + 1,
        "type": "govern",
        "time": chain[-1]["time"],
        "dataset": dataset,
        "prev": chain[-1]["hash"],
        "governance": gov,
    }
    if forgery == "officer-signed":  # the analyst's own signature on a rotation (not the recovery key's)
        ap = json.loads(_rotate(capsys, mallory, mallory, tmp_path).read_text(encoding="utf-8"))
        entry["approval"] = {"payload": ap["payload"], "signature": ap["signature"]}
    entry["hash"] = entry_hash(entry)
    with ledger.open("a", encoding="utf-8") as f:
        f.write(canonical_json(entry) + "\n")
    _swap_copy(copy, mallory)
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    said = " ".join((out + err).split())
    assert code == 3 and f"entry {entry['seq']} places the dataset under key " in said, out + err
    assert re.search(
        rf"entry {entry['seq']} places the dataset under key [0-9a-f ]{{19}} \(Mallory\)", said
    ), said


def test_a_rotation_by_the_recovery_key_is_accepted_even_when_its_register_write_was_lost(
    capsys: pytest.CaptureFixture[str],
    governed: Keys,
    mallory: Keys,
    tmp_path: Path,
    dpdesk_home: Path,
) -> None:
    dataset, _h = head(capsys)
    _ledger, _copy, register = _paths(dpdesk_home, dataset)
    saved = register.read_text(encoding="utf-8")  # as if the process died before the govern entry's head
    ap = _rotate(capsys, governed, mallory, tmp_path)  # Ann's recovery key hands over to a new key
    code, _o, err = run(
        capsys, "ledger", "govern", "--data", DATA, "--officer", mallory.public, "--approval", ap
    )
    assert code == 0, err
    assert mallory.fingerprint in register.read_text()  # recorded, with the head
    register.write_text(saved, encoding="utf-8")
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 0 and mallory.fingerprint in out, out + err
    assert json.loads(register.read_text())["governance"]["officer"]["key"] in mallory.public.read_text()
