"""A governed release (signed plans) on a long ledger reads its tail, not the whole chain, with the same refusals.

Issue 30, item 3: the approval checks need the governance in force, the head and the nonces already used. A release
reads them from the last checkpoint and the entries after it, and reads back further only to the head a plan
approval names, each line verified as a link of the chain that ends at the recorded head
(:meth:`dpdesk.core.ledger.book.Ledger.back_to`): a replayed approval is refused even when a forged checkpoint
forgets its nonce, and an approval for a head the chain does not hold is refused as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dpdesk.cli import main as cli
from dpdesk.core.common.errors import LedgerError
from dpdesk.core.governance import officer as of
from dpdesk.core.ledger import book
from dpdesk.core.ledger import checkpoint as ck
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.entries import entry_hash
from dpdesk.core.loading import load_table
from dpdesk.core.loading.table import Table
from dpdesk.core.model.spec import Plan
from dpdesk.core.release.steps import release
from tests.core.test_checkpoint import _lines, _rehash_from, _set_head, tiny_plan

pytestmark = pytest.mark.slow  # each builds a governed ledger of dozens of signed releases

PASS = "governed tail officer passphrase"


class Governed:
    """A dataset governed by an officer who requires signed plans, in the test's home."""

    def __init__(self, home: Path, tmp_path: Path) -> None:
        self.home, self.data = home, tmp_path / "d.csv"
        self.data.write_text("x\n1\n2\n3\n", encoding="utf-8")
        self.plan: Plan = tiny_plan()
        self.table: Table = load_table(self.data, self.plan.columns)
        files = of.create_officer(tmp_path / "keys", "Ann", "", PASS, "governed tail recovery passphrase")
        self.signer = of.load_signer(files.private, PASS)
        release(self.plan, self.data, home, None, table=self.table)  # the settings, before the governance
        args = ["ledger", "govern", "--data", str(self.data), "--officer", str(files.public)]
        assert cli([*args, "--require-signed-plans"]) == 0
        self.ledger = Ledger.for_dataset(home, self.table.sha256)

    def head(self) -> of.LedgerHead:
        state = self.ledger.read()
        return of.LedgerHead(state.seq, state.hash)

    def approve(self, head: of.LedgerHead | None = None) -> bytes:
        assert self.ledger.dataset is not None
        params = of.plan_params(self.plan)
        return of.sign_approval(self.signer, self.ledger.dataset, head or self.head(), "approve_plan", params)

    def release(self, approval: bytes) -> Any:
        return release(self.plan, self.data, self.home, None, table=self.table, approval=approval)

    def releases(self, n: int) -> None:
        for _ in range(n):
            self.release(self.approve())


@pytest.fixture
def gov(dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Governed:
    monkeypatch.setattr(
        os, "fsync", lambda _fd: None
    )  # durability is tested elsewhere; this is about reading
    return Governed(dpdesk_home, tmp_path)


def _watch(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the ledger lines verified one by one, and refuse a whole-chain verification."""
    seen = {"lines": 0}
    checked = book._checked_line

    def counting(*args: Any) -> Any:
        seen["lines"] += 1
        return checked(*args)

    def whole(_self: Ledger) -> Any:
        raise AssertionError("the whole chain was verified")

    monkeypatch.setattr(book, "_checked_line", counting)
    monkeypatch.setattr(Ledger, "verify", whole)
    return seen


def _checkpoints(lg: Ledger) -> list[int]:
    return [i for i, line in enumerate(_lines(lg)) if json.loads(line)["type"] == "checkpoint"]


@pytest.mark.parametrize("releases", [2 * ck.CHECKPOINT_EVERY, pytest.param(8 * ck.CHECKPOINT_EVERY)])
def test_a_governed_release_reads_only_the_tail_at_any_length(
    gov: Governed, monkeypatch: pytest.MonkeyPatch, releases: int
) -> None:
    gov.releases(releases)
    assert _checkpoints(gov.ledger), "the ledger has a checkpoint to read from"
    approval = gov.approve()
    seen = _watch(monkeypatch)
    result = gov.release(approval)
    assert result.entry.get("approval")["payload"]["nonce"] == json.loads(approval)["payload"]["nonce"]
    # two reads (the prepare, then the commit under the lock), each of the checkpoint's tail only: never more
    # than CHECKPOINT_EVERY entries follow a checkpoint, whatever the length of the ledger
    assert seen["lines"] <= 2 * (ck.CHECKPOINT_EVERY + 2), seen


def test_an_approval_signed_before_the_checkpoint_reads_back_to_its_head_only(
    gov: Governed, monkeypatch: pytest.MonkeyPatch
) -> None:
    gov.releases(3 * ck.CHECKPOINT_EVERY)
    early = gov.approve()  # signed at this head; other releases follow before it is used
    signed_at = json.loads(early)["payload"]["head"]["seq"]
    gov.releases(ck.CHECKPOINT_EVERY)
    last_cp = _checkpoints(gov.ledger)[-1] + 1
    assert signed_at < last_cp - 1, "the approval's head is before the last checkpoint"
    seen = _watch(monkeypatch)
    gov.release(early)
    end = gov.ledger.read().seq
    # the tails, and the entries from the approved head to the end (twice: prepare and commit), nothing before
    assert seen["lines"] <= 2 * (ck.CHECKPOINT_EVERY + 2) + 2 * (end - signed_at + 1), (seen, end, signed_at)


def test_a_replayed_approval_is_refused_though_a_forged_checkpoint_forgets_its_nonce(
    gov: Governed, dpdesk_home: Path
) -> None:
    gov.releases(2)
    used = gov.approve()
    gov.release(used)
    nonce = json.loads(used)["payload"]["nonce"]
    gov.releases(ck.CHECKPOINT_EVERY)  # a checkpoint after the spend that used it
    with pytest.raises(of.ApprovalReplayed, match="was already used"):
        gov.release(used)
    # a forger who rewrites the ledger file and the register: the last checkpoint's nonces without this one,
    # every entry after it re-hashed, the register's head moved to the new end
    lines = _lines(gov.ledger)
    i = _checkpoints(gov.ledger)[-1]
    cp = json.loads(lines[i])
    assert nonce in cp["state"]["nonces"]
    cp["state"]["nonces"] = [n for n in cp["state"]["nonces"] if n != nonce]
    cp["hash"] = entry_hash(cp)
    lines[i] = json.dumps(cp, sort_keys=True, separators=(",", ":")).encode()
    lines = _rehash_from(lines, i + 1)
    assert gov.ledger.path is not None
    gov.ledger.path.write_bytes(b"".join(x + b"\n" for x in lines))
    _set_head(dpdesk_home, gov.ledger, lines)
    assert nonce not in gov.ledger.read().nonces, "the forged checkpoint is read"
    before = gov.ledger.path.read_bytes()
    with pytest.raises(of.ApprovalReplayed, match="was already used"):
        gov.release(used)
    assert gov.ledger.path.read_bytes() == before, "nothing was charged"


def test_an_approval_for_a_head_forged_before_the_checkpoint_is_refused(gov: Governed) -> None:
    gov.releases(2 * ck.CHECKPOINT_EVERY)
    assert gov.ledger.path is not None
    original = gov.ledger.path.read_bytes()
    lines = _lines(gov.ledger)
    s = 5  # an entry well before the last checkpoint
    assert s < _checkpoints(gov.ledger)[-1]
    entry = json.loads(lines[s - 1])
    entry["title"] = "edited"  # a forged entry s, its own hash recomputed, the chain after it left alone
    entry["hash"] = entry_hash(entry)
    lines[s - 1] = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
    forged = gov.approve(of.LedgerHead(s, entry["hash"]))
    gov.ledger.path.write_bytes(b"".join(x + b"\n" for x in lines))
    with pytest.raises((LedgerError, of.ApprovalError)):
        gov.release(forged)
    assert gov.ledger.path.read_bytes() == b"".join(x + b"\n" for x in lines), "nothing was charged"
    # on the chain as it was, the same approval names a head it does not hold: refused as stale
    gov.ledger.path.write_bytes(original)
    with pytest.raises(of.ApprovalStaleHead):
        gov.release(forged)
    assert gov.ledger.path.read_bytes() == original
