"""Checkpoints: what a dataset's history holds, kept in its ledger so that a command reads the tail, not the file.

A ledger grows by an entry or two per release, and every command needs what the whole history adds up to: the
totals spent under every accounting method (exact decimals), the settings and the governance in force, the nonces
of the approvals used, the head. Reading and re-hashing the whole chain for it makes each command linear in the
number of past releases. So every :data:`CHECKPOINT_EVERY` entries, a release appends a ``checkpoint`` entry in
the same locked, fsynced transaction as its spend, holding that state (:class:`State`) as of the entry before it.

A command then reads the file **from its end** (:func:`read_tail`: blocks read backwards until the last checkpoint
line), verifies the checkpoint's own hash and the chain from it to the end link by link, and trusts the checkpoint
only when the last entry's sequence number and hash are the head the home's register recorded for the dataset
(:mod:`dpdesk.core.ledger.anchor`), the register holds no pending acknowledgement and agrees on the governance, the
checkpoint was made under the same costing rules (:func:`costed_here`: the version
:data:`dpdesk.core.dp.accounting.COSTING_RULES` the code declares), and the entries after it are ones whose
effect on the state is known (releases, packages, corrections of releases after it, governance, links...; a
settings change, an acknowledgement or an old simulation is not). Anything else, the whole chain is verified as
before (:meth:`dpdesk.core.ledger.book.Ledger.verify`) and the state computed from every entry (:func:`state_of`).

Why the register makes a tail read safe: an edit of an entry before the checkpoint that keeps the chain's tail intact
is impossible without re-hashing every entry after it (each entry holds the hash of the one before), which changes
the last entry's hash, which is then not the recorded head: the tail read refuses the checkpoint, and the full
verification names the edit (or the head that no longer matches). Whoever can rewrite the ledger *and* the register
could equally remove spends from the chain and re-hash it, which the full verification would accept too: the
checkpoint adds no new way to understate the budget (see SECURITY.md). A full verification (``dpdesk ledger verify``,
``dpdesk ledger export``, ``dpdesk review``) re-computes the state at the last checkpoint from every entry before it
and refuses a ledger whose checkpoint differs (:func:`check_checkpoint`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from dpdesk.core.dp import accounting as acc
from dpdesk.core.ledger.entries import GENESIS, Entry, entry_hash, parse_entry, settings_in_force

#: A release appends a checkpoint when this many entries follow the last one it trusted (or none was trusted).
CHECKPOINT_EVERY = 16
#: How far back from the end a tail read looks for a checkpoint before it verifies the whole chain instead.
_MAX_TAIL_BYTES = 64 << 20
_BLOCK = 1 << 16
#: Entry types whose effect on the state a tail read knows (any other type after the checkpoint: full verification).
TAIL_TYPES = frozenset(
    {"spend", "package", "correction", "govern", "link", "declare_new", "forget_identity", "checkpoint"}
)


def costed_here(state: Any) -> bool:
    """Whether a checkpoint's recorded state was costed under this code's rules: its ``costing_rules`` is exactly
    :data:`dpdesk.core.dp.accounting.COSTING_RULES`, a whole number (not true, not 1.0, not text). A checkpoint of
    other rules, or of a version before the rules were declared (which recorded a hex fingerprint of its source files
    as ``costing``), may have costed past releases otherwise than this code does: it is never trusted, the whole
    chain is verified and the next release writes a checkpoint of its own. dpdesk's version takes no part (see
    docs/ledger.md): an upgrade that keeps the rules keeps the checkpoints."""
    if not isinstance(state, Mapping):
        return False
    rules = state.get("costing_rules")
    return type(rules) is int and rules == acc.COSTING_RULES


def _grow(partials: list[float], x: float) -> list[float]:
    """Shewchuk's exact running sum: ``partials`` (non-overlapping floats whose exact sum is the sum so far) with
    ``x`` added; ``math.fsum(partials)`` is then the correctly rounded sum of every value added, as
    ``math.fsum`` of all of them is."""
    out: list[float] = []
    for p in partials:
        big, small = (p, x) if abs(x) < abs(p) else (x, p)
        hi = big + small
        lo = small - (hi - big)
        if lo:
            out.append(lo)
        x = hi
    out.append(x)
    return out


@dataclass(frozen=True)
class Spent:
    """The running totals of past releases (at what they cost now), under every accounting method.

    Folded in ledger order exactly as :func:`dpdesk.core.dp.accounting.dataset_total` sums a list of releases, so that
    :meth:`total` equals it bit for bit: sequential, exact decimal sums of epsilon and delta; advanced, the exact
    decimal sum of each release's advanced epsilon and the float sum of its deltas (at ``budget_delta``); zCDP, the
    exact sum of rho (``rho``: Shewchuk partials)."""

    releases: int = 0
    seq_epsilon: Decimal = Decimal(0)
    seq_delta: Decimal = Decimal(0)
    adv_epsilon: Decimal = Decimal(0)
    adv_delta: float = 0.0
    rho: tuple[float, ...] = ()
    #: the budget's delta the advanced totals were composed at (they need one above 0)
    budget_delta: float = 0.0

    def add(self, rel: acc.Release) -> Spent:
        """These totals with one more release."""
        e, d = self.seq_epsilon, self.seq_delta
        partials = list(self.rho)
        for c in rel.costs:
            e += acc.dec(c.epsilon)
            d += acc.dec(c.delta)
            partials = _grow(partials, c.rho)
        adv_e, adv_d = self.adv_epsilon, self.adv_delta
        if self.budget_delta > 0:
            t = acc.advanced(rel.costs, acc.release_delta_prime(rel.delta_prime, self.budget_delta))
            adv_e += acc.dec(t.epsilon)
            adv_d += t.delta
        return replace(
            self,
            releases=self.releases + 1,
            seq_epsilon=e,
            seq_delta=d,
            adv_epsilon=adv_e,
            adv_delta=adv_d,
            rho=tuple(partials),
        )

    def total(self, method: str) -> acc.Total:
        """The total under ``method``, as :func:`dpdesk.core.dp.accounting.dataset_total` gives it."""
        if method == "sequential":
            return acc.Total(
                "sequential", float(self.seq_epsilon), float(self.seq_delta), epsilon_decimal=self.seq_epsilon
            )
        if method == "advanced":
            return acc.Total(
                "advanced", float(self.adv_epsilon), self.adv_delta, epsilon_decimal=self.adv_epsilon
            )
        return acc.zcdp(math.fsum(self.rho), self.budget_delta)

    def to_dict(self) -> dict[str, Any]:
        """As a checkpoint records it (decimals as strings)."""
        return {
            "releases": self.releases,
            "sequential": {"epsilon": str(self.seq_epsilon), "delta": str(self.seq_delta)},
            "advanced": {"epsilon": str(self.adv_epsilon), "delta": self.adv_delta},
            "zcdp": {"rho_partials": list(self.rho)},
            "budget_delta": self.budget_delta,
        }

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> Spent:
        """Read back; ValueError/KeyError/TypeError when it is not one."""
        n = raw["releases"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError("releases")
        rho = [float(x) for x in raw["zcdp"]["rho_partials"]]
        values = [float(raw["advanced"]["delta"]), float(raw["budget_delta"]), *rho]
        decimals = [
            Decimal(str(raw["sequential"]["epsilon"])),
            Decimal(str(raw["sequential"]["delta"])),
            Decimal(str(raw["advanced"]["epsilon"])),
        ]
        if not all(math.isfinite(x) for x in values) or not all(d.is_finite() for d in decimals):
            raise ValueError("not finite")
        return Spent(n, decimals[0], decimals[1], decimals[2], values[0], tuple(rho), budget_delta=values[1])


@dataclass
class State:
    """What a verified history adds up to, as of entry ``seq`` (hash ``hash``): the settings in force and the
    ``settings`` entry that set them (a package copies it), the governance in force and the entry that set it,
    the nonces of every approval used, what the releases spent (:class:`Spent`), and the last checkpoint."""

    seq: int
    hash: str
    settings: dict[str, Any] | None
    settings_entry: Entry | None
    governance_entry: Entry | None
    nonces: set[str]
    spent: Spent
    #: the sequence number of the last checkpoint this state was read from or checked against (0: none)
    checkpoint_seq: int = 0
    #: the entries after ``checkpoint_seq``, verified (all of them when the whole chain was read)
    tail: list[Entry] = field(default_factory=list)
    #: whether the whole chain was read and verified (not a checkpoint and its tail)
    full: bool = False
    #: whether an entry appended since changed what the totals were composed at (no checkpoint is made from it)
    stale: bool = False
    #: the dataset this one was merged into (its last entry, ``merged_into``): nothing is charged to it any more
    retired_into: str | None = None
    #: the team's dataset a home's own ledger was imported into (its last entry, ``moved``): nothing is charged to
    #: it any more, with or without the team
    moved_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The payload of a ``checkpoint`` entry appended after entry ``seq``."""
        return {
            "state": {
                "costing_rules": acc.COSTING_RULES,
                "seq": self.seq,
                "hash": self.hash,
                "settings": self.settings,
                "settings_entry": self.settings_entry.to_dict() if self.settings_entry is not None else None,
                "governance_entry": (
                    self.governance_entry.to_dict() if self.governance_entry is not None else None
                ),
                "nonces": sorted(self.nonces),
                "spent": self.spent.to_dict(),
            }
        }


def _seed(settings: Mapping[str, Any] | None) -> Spent:
    budget = (settings or {}).get("budget") or {}
    return Spent(budget_delta=float(budget.get("delta", 0.0)))


def _nonce(e: Entry) -> str | None:
    rec = e.get("approval")
    if isinstance(rec, Mapping) and isinstance(rec.get("payload"), Mapping):
        n = rec["payload"].get("nonce")
        return n if isinstance(n, str) else None
    return None


def state_of(entries: Sequence[Entry]) -> State:
    """The state of a whole verified chain (checkpoints in it are not read: every entry is)."""
    from dpdesk.core.ledger.governed import governance_of
    from dpdesk.core.ledger.recost import effective

    settings = settings_in_force(entries)
    spent = _seed(settings)
    for eff in effective(entries):  # what each release costs now (dpdesk.core.ledger.budget.past_releases)
        spent = spent.add(eff.release())
    g = governance_of(entries)
    settings_entry = next((e for e in reversed(entries) if e.type == "settings"), None)
    # Only a checkpoint this code could trust counts: after an upgrade that changed the costing rules the next
    # release writes a new one, instead of every release reading the whole chain until 16 more entries are made.
    last_cp = next(
        (e.seq for e in reversed(entries) if e.type == "checkpoint" and costed_here(e.get("state"))),
        0,
    )
    return State(
        seq=entries[-1].seq if entries else 0,
        hash=entries[-1].hash if entries else GENESIS,
        settings=settings,
        settings_entry=settings_entry,
        governance_entry=entries[g.seq - 1] if g is not None else None,
        nonces={n for e in entries if (n := _nonce(e)) is not None},
        spent=spent,
        checkpoint_seq=last_cp,
        tail=list(entries),
        full=True,
        retired_into=next((str(e.get("into")) for e in reversed(entries) if e.type == "merged_into"), None),
        moved_to=moved_to(entries),
    )


def moved_to(entries: Sequence[Entry]) -> str | None:
    """The team's dataset a home's own ledger was imported into (its ``moved`` entry), else None."""
    return next((str(e.get("to")) for e in reversed(entries) if e.type == "moved"), None)


class Unusable(Exception):
    """A checkpoint or tail a command cannot rely on: the whole chain is verified instead."""


def _copied(raw: Any) -> Entry | None:
    """An entry a checkpoint holds a copy of (the settings or governance entry in force), typed; :class:`Unusable`
    when the copy is damaged (its hash no longer matches its content)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or entry_hash(raw) != raw.get("hash"):
        raise Unusable("a damaged copy")
    return parse_entry(raw)


def from_checkpoint(cp: Entry, tail: Sequence[Entry]) -> State:
    """The state at the end of ``tail`` (verified entries right after the checkpoint entry ``cp``, whose own hash
    and link were verified); :class:`Unusable` when the checkpoint is of other costing rules or damaged, or the tail
    holds an entry whose effect is not known here."""
    from dpdesk.core.ledger.governed import governance_of
    from dpdesk.core.ledger.recost import effective

    try:
        st = cp.fields["state"]
        if not costed_here(st):
            raise Unusable("a checkpoint of other costing rules")
        if int(st["seq"]) != cp.seq - 1 or st["hash"] != cp.prev:
            raise Unusable("a checkpoint of another entry")
        settings = st["settings"]
        settings_entry, governance_entry = _copied(st["settings_entry"]), _copied(st["governance_entry"])
        if settings is not None and not isinstance(settings, dict):
            raise Unusable("settings")
        nonces = st["nonces"]
        if not isinstance(nonces, list) or not all(isinstance(n, str) for n in nonces):
            raise Unusable("nonces")
        spent = Spent.from_dict(st["spent"])
        if spent.budget_delta != _seed(settings).budget_delta:
            raise Unusable("totals composed at another budget")
        gov_seq = governance_entry.seq if governance_entry is not None else 0
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise Unusable(f"damaged checkpoint: {exc}") from None
    tail = list(tail)
    unknown = [e.type for e in tail if e.type not in TAIL_TYPES]
    if unknown:
        raise Unusable(f"entry types after the checkpoint: {unknown}")
    spends = {str(e.get("release_id")) for e in tail if e.type == "spend"}
    for e in tail:
        if e.type == "correction" and any(
            str(r.get("release_id")) not in spends for r in e.get("releases", [])
        ):
            raise Unusable("a correction of a release before the checkpoint")
    try:
        for eff in effective(tail, settings=settings):
            spent = spent.add(eff.release())
        g = governance_of(tail)
    except Exception as exc:  # noqa: BLE001 - whatever a tail cannot be read as: the full path names it
        raise Unusable(f"tail: {exc}") from None
    if g is not None:
        governance_entry = tail[g.seq - cp.seq - 1]
    elif gov_seq and gov_seq >= cp.seq:
        raise Unusable("governance")
    last = tail[-1] if tail else cp
    return State(
        seq=last.seq,
        hash=last.hash,
        settings=dict(settings) if settings is not None else None,
        settings_entry=settings_entry,
        governance_entry=governance_entry,
        nonces={*nonces, *(n for e in tail if (n := _nonce(e)) is not None)},
        spent=spent,
        checkpoint_seq=cp.seq,
        tail=[cp, *tail],
        full=False,
        moved_to=moved_to(tail),
    )


def extended(state: State, entry: Entry) -> State:
    """``state`` with one more entry appended by this process (a settings entry, a spend under the settings in
    force, a correction, a package, a checkpoint); a spend is costed as :func:`dpdesk.core.ledger.recost.effective`
    costs it."""
    from dpdesk.core.ledger.recost import effective

    settings, spent = state.settings, state.spent
    settings_entry, governance_entry = state.settings_entry, state.governance_entry
    t = entry.type
    stale = state.stale or t in (
        "acknowledge",
        "simulate",
        "migrate",
        "merge",
        "merged_into",
        "import",
        "moved",
    )
    if t == "settings":
        settings, settings_entry = dict(entry.fields["settings"]), entry
        if state.spent.releases == 0:
            spent = _seed(settings)
        else:
            stale = True  # a change of settings may re-cost every past release
    elif t == "spend":
        for eff in effective([entry], settings=settings):
            spent = spent.add(eff.release())
    elif t in ("govern", "acknowledge") and entry.get("governance") is not None:
        governance_entry = entry
    nonce = _nonce(entry)
    return replace(
        state,
        seq=entry.seq,
        hash=entry.hash,
        settings=settings,
        settings_entry=settings_entry,
        governance_entry=governance_entry,
        nonces=state.nonces | ({nonce} if nonce is not None else set()),
        spent=spent,
        checkpoint_seq=entry.seq if t == "checkpoint" else state.checkpoint_seq,
        tail=[*state.tail, entry],
        stale=stale,
        moved_to=str(entry.get("to")) if t == "moved" else state.moved_to,
    )


def check_checkpoint(entries: Sequence[Entry]) -> str | None:
    """For a full verification: the last checkpoint of this code's costing rules must hold exactly the state computed
    from every entry before it (settings, governance, nonces, totals). A message naming it when it does not."""
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if e.type != "checkpoint":
            continue
        st = e.get("state")
        if not isinstance(st, dict) or not costed_here(st):
            return None  # of other costing rules: never trusted, so nothing to check
        expected = state_of(entries[:i]).to_dict()["state"]
        return None if expected == st else str(e.seq)
    return None


def read_tail(path: Path) -> tuple[list[bytes], int] | None:
    """The lines of a ledger file from its last checkpoint line to its end, read backwards in blocks, and the
    offset of the first; None when the file has no checkpoint within :data:`_MAX_TAIL_BYTES` of its end, or does
    not end with a newline. Never reads more of the file than that."""
    marker = b'"type":"checkpoint"'
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos, buf = size, b""
        checked = (
            0  # bytes at the end of ``buf`` whose complete lines were searched already (from a newline on)
        )
        while pos > 0 and size - pos < _MAX_TAIL_BYTES:
            step = min(_BLOCK, pos)
            pos -= step
            f.seek(pos)
            buf = f.read(step) + buf
            if not buf.endswith(b"\n"):
                return None
            end = len(buf) - 1 - checked  # a newline (or the file's last byte)
            while True:
                start = buf.rfind(b"\n", 0, end)
                if start < 0 and pos > 0:
                    break  # the line's start is in a block not read yet
                if marker in buf[start + 1 : end]:
                    return buf[start + 1 : len(buf) - 1].split(b"\n"), pos + start + 1
                if start < 0:
                    return None
                end = start
            checked = len(buf) - 1 - end
        return None


def read_last(path: Path, count: int) -> list[bytes] | None:
    """The last ``count`` lines of a ledger file (fewer when it holds fewer), read backwards in blocks; None when
    the file does not end with a newline or they are not within :data:`_MAX_TAIL_BYTES` of its end. Never reads
    more of the file than that: what a release reads back to the head a plan approval names."""
    if count < 1:
        return []
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos, buf = size, b""
        while pos > 0 and size - pos < _MAX_TAIL_BYTES:
            step = min(_BLOCK, pos)
            pos -= step
            f.seek(pos)
            buf = f.read(step) + buf
            if not buf.endswith(b"\n"):
                return None
            if buf.count(b"\n") > count:  # the line before the first wanted one ends in what was read
                return buf[:-1].split(b"\n")[-count:]
        if pos > 0:
            return None
        return buf[:-1].split(b"\n")[-count:] if buf else []


def nonces_of(entries: Iterable[Entry]) -> set[str]:
    """The approval nonces recorded in ``entries``."""
    return {n for e in entries if (n := _nonce(e)) is not None}
