"""A dataset under an officer's key, in its ledger: which changes need a signed approval, and checking them.

:mod:`dpdesk.core.governance.officer` holds the keys, the governance record and the approvals, each pure; this module reads
them from a ledger's entries and gates the ledger's changes:

- a ``govern`` entry places the dataset under an officer's key (its ``governance`` field is a
  :class:`~dpdesk.core.governance.officer.GovernanceRecord`); a later ``govern`` entry changes the policy (an approval of
  ``change_policy``) or the key (an approval of ``rotate_key``, signed by the recovery key);
- an ``acknowledge`` entry of a governed dataset carries the governance over into the new chain (its
  ``governance`` field);
- from then on each ``settings``, ``acknowledge``, ``declare_new``, ``forget_identity`` and later ``govern``
  entry holds the officer's signed approval
  (``approval``: its payload and signature, as :meth:`~dpdesk.core.governance.officer.VerifiedApproval.to_record` gives),
  bound to the ledger head it applies to, and, when the policy requires signed plans, so does each ``spend``;
- an approval is good once: its nonce is recorded with it, and an approval whose nonce any entry holds is refused.

A plan approval (``approve_plan``) is bound to the head at the time it was signed, and is usable once at any later
head of the same chain (its head must still be in the ledger): between the officer's signature and the release,
other releases and their package entries may be appended, and a plan approval fixes the plan and its budget, not
what else was released meanwhile (the budget check does). Every other approval is bound to the current head.

:func:`check_chain` re-verifies all of it for review (an exported ledger, or a package's entries). What this gives,
and what not: a change without a valid signature is *detectable*, not impossible; whoever can write the ledger can
still remove a ``govern`` entry and re-hash the chain, which only the anchoring of the ledger (and the officer's own
exported copies, compared with ``dpdesk review --against``) detects.

Beside the ledger, the register (:mod:`dpdesk.core.ledger.anchor`) records the governance in force with the head of
every ``govern`` entry, so that the acknowledgement of a broken ledger, whose entries cannot be trusted, still
knows whose approval it needs (:func:`for_broken_ledger`), and a verified chain must agree with it (:func:`settle`).
The home also keeps a copy of the record (``<home>/ledgers/governance/<id>.json``); it never overrides the ledger,
and a copy that disagrees with it is an error (:func:`check_copy`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.jsonin import read_json
from dpdesk.core.governance.officer import (
    ROTATE,
    ApprovalError,
    GovernanceError,
    GovernanceRecord,
    LedgerHead,
    VerifiedApproval,
    verify_approval,
)
from dpdesk.core.ledger.entries import GENESIS, Entry
from dpdesk.i18n import _

#: The entry types whose every instance on a governed dataset needs an approval (``govern`` after the first).
GATED = ("settings", "acknowledge", "declare_new", "forget_identity", "merge", "merged_into")
#: The approval action each gated entry type records.
ACTION_OF = {
    "settings": "change_settings",
    "acknowledge": "acknowledge",
    "declare_new": "declare_new",
    "forget_identity": "forget_identity",
    "merge": "merge",
    "merged_into": "merge",
}


class ApprovalRequired(ApprovalError):
    """A governed dataset's change was asked for without an approval file."""

    reason = "approval-required"


@dataclass(frozen=True)
class Governance:
    """The governance in force at the end of a chain, and the entry that set it."""

    record: GovernanceRecord
    seq: int


def governance_of(entries: Sequence[Entry]) -> Governance | None:
    """The governance in force after ``entries`` (a verified chain), or None when the dataset is ungoverned.

    Raises :class:`~dpdesk.core.governance.officer.GovernanceError` (a ledger error) when a record cannot be read.
    """
    found: Governance | None = None
    for e in entries:
        raw = e.get("governance")
        if e.type in ("govern", "acknowledge") and raw is not None:
            found = Governance(GovernanceRecord.from_payload(raw), e.seq)
    return found


def _approval_payload(e: Entry) -> Mapping[str, Any] | None:
    rec = e.get("approval")
    if isinstance(rec, Mapping) and isinstance(rec.get("payload"), Mapping):
        payload: Mapping[str, Any] = rec["payload"]
        return payload
    return None


def used_nonces(entries: Iterable[Entry]) -> set[str]:
    """The nonces of every approval recorded in ``entries``."""
    out = set()
    for e in entries:
        p = _approval_payload(e)
        if p is not None and isinstance(p.get("nonce"), str):
            out.add(p["nonce"])
    return out


def head_of(entries: Sequence[Entry]) -> LedgerHead:
    """The head of a chain: its last entry's sequence number and hash (0 and zeros when empty)."""
    if not entries:
        return LedgerHead(0, GENESIS)
    return LedgerHead(entries[-1].seq, entries[-1].hash)


def parse_head(text: str) -> LedgerHead:
    """``SEQ:HASH`` (as ``dpdesk ledger head`` prints it) as a head; :class:`UsageError` when it is not one."""
    seq, sep, digest = text.strip().partition(":")
    digest = digest.strip().lower()
    if (
        not sep
        or not seq.strip().isdigit()
        or len(digest) != 64
        or any(c not in "0123456789abcdef" for c in digest)
    ):
        raise UsageError(
            _("{text} is not a ledger head: give SEQ:HASH as dpdesk ledger head prints it").format(
                text=text[:100]
            )
        )
    return LedgerHead(int(seq), digest)


def describe(entries: Sequence[Entry]) -> str:
    """One line: who governs the dataset, or that nobody does."""
    from dpdesk.core.governance.officer import describe_governance

    g = governance_of(entries)
    return describe_governance(g.record if g is not None else None)


def _read(doc: bytes | str | None, source: str | None) -> tuple[bytes | str, str]:
    if doc is None:
        raise AssertionError("no approval")
    return doc, source or _("the approval")


def require(
    entries: Sequence[Entry],
    action: str,
    params: Mapping[str, Any],
    doc: bytes | str | None,
    *,
    source: str | None = None,
    what: str,
) -> VerifiedApproval | None:
    """The approval a change needs on the dataset of ``entries`` (a verified chain, under its lock).

    None for an ungoverned dataset without an approval. Governed: ``doc`` must be an approval of ``action`` with
    ``params`` by the officer, for this dataset, at the chain's head, never used; otherwise the
    :class:`~dpdesk.core.governance.officer.ApprovalError` naming why (:class:`ApprovalRequired` without one). ``what``
    names the change in the message. An approval for an ungoverned dataset is refused (:class:`UsageError`), so
    that nobody believes an approval was checked.
    """
    g = governance_of(entries)
    return require_with(
        g.record if g is not None else None,
        head_of(entries),
        used_nonces(entries),
        action,
        params,
        doc,
        source=source,
        what=what,
    )


def require_with(
    record: GovernanceRecord | None,
    head: LedgerHead,
    nonces: Collection[str],
    action: str,
    params: Mapping[str, Any],
    doc: bytes | str | None,
    *,
    source: str | None = None,
    what: str,
) -> VerifiedApproval | None:
    """:func:`require` with the governance, head and used nonces given (a broken ledger's acknowledgement)."""
    if record is None:
        if doc is not None:
            raise UsageError(
                _("this dataset is ungoverned: {what} needs no approval, and none is recorded").format(
                    what=what
                )
            )
        return None
    if doc is None and action == ROTATE:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}): {what} needs an approval signed by their recovery key "
                "(key {rfp}; dpdesk officer approve-rotate, then --approval FILE); nothing was changed"
            ).format(
                name=record.officer.shown_name,
                fp=record.officer.fingerprint,
                rfp=record.officer.recovery_fingerprint,
                what=what,
            )
        )
    if doc is None:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}): {what} needs their signed approval (--approval FILE); "
                "nothing was changed"
            ).format(name=record.officer.shown_name, fp=record.officer.fingerprint, what=what)
        )
    data, src = _read(doc, source)
    return verify_approval(data, record, head, nonces, action, params, source=src)


def _approved_head(doc: bytes | str, hash_at: Callable[[int], str | None], current: LedgerHead) -> LedgerHead:
    """The head a plan approval names, when the chain still holds it (``hash_at(seq)`` is the hash of the chain's
    entry ``seq``, or None when it holds none); else the chain's head ``current`` (which then refuses it as stale)."""
    try:
        raw = read_json(doc, jsonin.OFFICER)
        h = raw["payload"]["head"]
        seq, digest = h["seq"], h["hash"]
    except (ValueError, TypeError, KeyError):
        return current
    in_chain = isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= current.seq
    if in_chain and hash_at(seq) == digest:
        return LedgerHead(seq, str(digest))
    return current


def approved_head_seq(doc: bytes | str | None) -> int | None:
    """The sequence number of the head a plan approval names (None when it names none that could be in a chain):
    what a release reads back to, when it is before the entries it has read."""
    if doc is None:
        return None
    try:
        seq = read_json(doc, jsonin.OFFICER)["payload"]["head"]["seq"]
    except (ValueError, TypeError, KeyError):
        return None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1 else None


def require_plan(
    entries: Sequence[Entry],
    params: Mapping[str, Any],
    doc: bytes | str | None,
    *,
    source: str | None = None,
) -> VerifiedApproval | None:
    """The approval of a plan a release needs: None unless the dataset is governed and its policy requires signed
    plans (an approval given then is not needed: it is refused, :class:`UsageError`, rather than ignored).

    The approval must be of ``approve_plan`` with ``params`` (the plan's hash and its budget), for this dataset,
    at a head the chain still holds (see the module docstring), never used.
    """
    g = governance_of(entries)
    return require_plan_with(
        g.record if g is not None else None,
        head_of(entries),
        lambda seq: entries[seq - 1].hash if 1 <= seq <= len(entries) else None,
        used_nonces(entries),
        params,
        doc,
        source=source,
    )


def require_plan_with(
    record: GovernanceRecord | None,
    head: LedgerHead,
    hash_at: Callable[[int], str | None],
    nonces: Collection[str],
    params: Mapping[str, Any],
    doc: bytes | str | None,
    *,
    source: str | None = None,
) -> VerifiedApproval | None:
    """:func:`require_plan` with what it needs of the chain given: the governance in force, the chain's head, the
    hash of any entry of it (``hash_at``) and the nonces of every approval it records. A release reads them from
    the last checkpoint and the entries after it (:class:`dpdesk.core.ledger.checkpoint.State`), and reads back
    further only to the head the approval names (:meth:`dpdesk.core.ledger.book.Ledger.hash_at`)."""
    if record is None or not record.policy.require_signed_plans:
        if doc is not None:
            raise UsageError(
                _(
                    "this dataset does not require signed plans: the release needs no approval, and none is recorded"
                )
            )
        return None
    if doc is None:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}), who releases only plans they signed: ask them to "
                "approve this plan (dpdesk officer approve-plan) and give the file with --approval; nothing was "
                "charged"
            ).format(name=record.officer.shown_name, fp=record.officer.fingerprint)
        )
    data, src = _read(doc, source)
    return verify_approval(
        data,
        record,
        _approved_head(data, hash_at, head),
        nonces,
        "approve_plan",
        params,
        source=src,
    )


# ----------------------------------------------------------------------------- the home's copy of the record


def _sidecar(home: Path, dataset: str) -> Path:
    return home / "ledgers" / "governance" / f"{dataset}.json"


def remember(home: Path, record: GovernanceRecord) -> None:
    """Keep the dataset's governance record in the home (best effort: the ledger entry is what counts)."""
    from dpdesk.core.common.fsio import write_atomic

    path = _sidecar(home, record.dataset)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (json.dumps(record.to_payload(), sort_keys=True) + "\n").encode("utf-8"))


def remembered(home: Path, dataset: str) -> GovernanceRecord | None:
    """The governance record the home kept for a dataset, or None (a damaged copy is a ledger error)."""
    path = _sidecar(home, dataset)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GovernanceError(
            _("cannot read the governance record {path}: {err}").format(path=path, err=exc.strerror or exc)
        ) from None
    try:
        return GovernanceRecord.from_payload(read_json(raw, jsonin.HOME_FILE))
    except ValueError:
        raise GovernanceError(_("the governance record {path} is damaged").format(path=path)) from None


# ----------------------------------------------------------------------------- the register's record


def _who(record: GovernanceRecord | None) -> str:
    if record is None:
        return _("nobody (ungoverned)")
    return _("key {fp} ({name})").format(fp=record.officer.fingerprint, name=record.officer.shown_name)


def _changes_after(
    name: str,
    start: GovernanceRecord | None,
    entries: Sequence[Entry],
    since: int,
) -> GovernanceRecord | None:
    """``start`` (the governance the register records at its head, ``since``) moved on by the ``govern`` entries
    after that head, each approved by the governance before it (a rotation by its recovery key); a
    :class:`GovernanceError` naming the first that is not."""
    current = start
    ordered = sorted(entries, key=lambda e: e.seq)
    for i, e in enumerate(ordered):
        n = e.seq
        if n <= since or e.type != "govern":
            continue
        new = GovernanceRecord.from_payload(e.get("governance"))
        problems: list[str] = []
        if current is None:
            ok = e.get("approval") is None
        else:
            prev = ordered[i - 1] if i > 0 else None
            head = LedgerHead(prev.seq, prev.hash) if prev is not None and prev.seq == n - 1 else None
            action = "rotate_key" if new.officer.key != current.officer.key else "change_policy"
            verified = verify_recorded(e, current, head, used_nonces(ordered[:i]), action, problems)
            ok = verified is not None and current.after(verified) == new
        if not ok:
            raise GovernanceError(
                _(
                    "ledger {name}: entry {n} places the dataset under {new}, but dpdesk recorded it as governed by "
                    "{old} and the entry holds no approval of theirs for it{problems}. {fix}"
                ).format(
                    name=name,
                    n=n,
                    new=_who(new),
                    old=_who(current),
                    problems=(" (" + "; ".join(problems) + ")") if problems else "",
                    fix=_fix_governance(),
                )
            )
        current = new
    return current


def _fix_governance() -> str:
    return _(
        "The governance of a dataset changes only by a govern entry its officer approved (a new key by the recovery "
        "key): review the ledger with the officer (dpdesk ledger export, dpdesk review)"
    )


def settle(
    name: str,
    known: bool,
    recorded: Mapping[str, Any] | None,
    entries: Sequence[Entry],
    since: int,
) -> GovernanceRecord | None:
    """The governance in force of a chain that verified against the head the register recorded (``since``).

    ``recorded`` is the governance the register holds (``known``: it holds one; else the chain's is taken as it
    is). The chain's must be the recorded one, moved on only by ``govern`` entries after the recorded head whose
    approval verifies (an append interrupted before its head was recorded); anything else is a
    :class:`GovernanceError` (a ledger error: exit 3) naming both.
    """
    g = governance_of(entries)
    found = g.record if g is not None else None
    if not known:
        return found
    expected = GovernanceRecord.from_payload(recorded) if recorded is not None else None
    if found == expected:
        return found
    if _changes_after(name, expected, entries, since) == found:
        return found
    raise GovernanceError(
        _(
            "ledger {name}: dpdesk recorded this dataset as governed by {recorded}, but its ledger says {found}: "
            "the governance was changed without its officer's approval. {fix}"
        ).format(name=name, recorded=_who(expected), found=_who(found), fix=_fix_governance())
    )


def check_copy(home: Path, dataset: str, name: str, record: GovernanceRecord | None) -> None:
    """The home's copy of the governance record must be ``record`` (the ledger's): a copy never overrides the
    ledger, and one that disagrees with it is a :class:`GovernanceError` naming both (none at all is fine)."""
    kept = remembered(home, dataset)
    if kept is not None and kept != record:
        raise GovernanceError(
            _(
                "ledger {name}: the home's copy of the governance record ({path}) names {copy}, but the ledger and "
                "dpdesk's register say {found}: the copy was changed, and it never overrides the ledger. Remove or "
                "restore the copy"
            ).format(name=name, path=_sidecar(home, dataset), copy=_who(kept), found=_who(record))
        )


def _claimed(raw: bytes) -> tuple[list[GovernanceRecord], bool]:
    """The governance records that lines of a broken ledger claim (verified or not), and whether some line that
    looks like a ``govern`` entry cannot be read as one."""
    records: list[GovernanceRecord] = []
    damaged = False
    for line in raw.split(b"\n"):
        if b"govern" not in line:
            continue
        try:
            e = read_json(line, jsonin.LEDGER_LINE)
        except ValueError:
            damaged = True
            continue
        if not isinstance(e, dict):
            damaged = True
            continue
        if e.get("type") == "govern" or (e.get("type") == "acknowledge" and e.get("governance") is not None):
            try:
                records.append(GovernanceRecord.from_payload(e.get("governance")))
            except GovernanceError:
                damaged = True
    return records, damaged


def for_broken_ledger(
    home: Path | None,
    dataset: str | None,
    confirmed: Sequence[Entry],
    raw: bytes,
    register: tuple[bool, Mapping[str, Any] | None, int] | None,
) -> GovernanceRecord | None:
    """Whose approval a broken ledger's acknowledgement needs (None: ungoverned).

    ``register``: whether the register recorded the governance, the governance it recorded, and its head's
    sequence number (None without a readable register file). The register's record is in force, moved on only
    by ``govern`` entries after its head that still verify and whose approval verifies; a recorded ungoverned
    dataset whose broken ledger holds a ``govern`` line (verified or not) is governed by it. Without a recorded
    governance: the chain's (the entries that still verify), else the home's copy, else a ``govern`` line's. The
    home's copy never overrides: one that disagrees is a :class:`GovernanceError`, and so is a ``govern`` line
    that cannot be read when nothing else says who governs.
    """
    name = str(dataset)
    chain = sorted(confirmed, key=lambda e: e.seq)
    claimed, damaged = _claimed(raw)
    record: GovernanceRecord | None
    if register is not None and register[0]:
        start = GovernanceRecord.from_payload(register[1]) if register[1] is not None else None
        record = _changes_after(name, start, chain, register[2])
    else:
        g = governance_of(chain)
        record = g.record if g is not None else None
        if record is None and home is not None and dataset is not None:
            record = remembered(home, dataset)
    if record is None and claimed:
        record = claimed[-1]
    if record is None and damaged:
        raise GovernanceError(
            _(
                "ledger {name}: a governance entry of the broken ledger is damaged and dpdesk recorded nobody who "
                "governs the dataset: its officer must restore the governance record before it is acknowledged"
            ).format(name=name)
        )
    if home is not None and dataset is not None:
        check_copy(home, dataset, name, record)
    return record


# ----------------------------------------------------------------------------- review


def _params_of(e: Entry, action: str) -> Mapping[str, Any] | None:
    """What an entry's approval must approve (None: the entry does not say; only the signature is checked)."""
    if action == "change_settings":
        from dpdesk.core.governance.officer import settings_params

        return settings_params(e.fields["settings"]) if isinstance(e.get("settings"), Mapping) else None
    if action == "declare_new":
        return {"new_dataset": e.get("new_dataset")}
    if action == "forget_identity":
        return {"reason": e.get("reason")}
    if action == "merge":  # the same approval's words in both ledgers: which dataset is retired into which
        if e.type == "merge":
            return {"retired": e.get("merged"), "into": e.dataset}
        return {"retired": e.dataset, "into": e.get("into")}
    if action == "approve_plan":
        plan = e.get("plan")
        if isinstance(plan, Mapping) and isinstance(plan.get("budget"), Mapping):
            return {"plan_sha256": e.get("plan_hash"), "budget": plan["budget"]}
    return None


def verify_recorded(
    e: Entry,
    record: GovernanceRecord,
    head: LedgerHead | None,
    nonces: Collection[str],
    action: str,
    problems: list[str],
) -> VerifiedApproval | None:
    """Verify the approval an entry records; each failure appended to ``problems``, named by its entry."""
    n = e.seq
    rec = e.get("approval")
    if not isinstance(rec, Mapping):
        problems.append(
            _("entry {n} ({type}) changes a governed dataset without the officer's approval").format(
                n=n, type=e.type
            )
        )
        return None
    payload = rec.get("payload")
    doc = json.dumps({"format": "dpdesk-approval", "payload": payload, "signature": rec.get("signature")})
    params = _params_of(e, action)
    if params is None and isinstance(payload, Mapping) and isinstance(payload.get("params"), Mapping):
        params = payload["params"]  # the entry itself does not restate them: the signature covers them
    if head is None and isinstance(payload, Mapping):
        try:
            head = LedgerHead(int(payload["head"]["seq"]), str(payload["head"]["hash"]))
        except (KeyError, TypeError, ValueError):
            head = LedgerHead(0, GENESIS)
    assert head is not None
    try:
        return verify_approval(
            doc,
            record,
            head,
            nonces,
            action,
            params or {},
            source=_("the approval in entry {n}").format(n=n),
            now=_far_past(),
        )
    except ApprovalError as exc:
        problems.append(_("entry {n}: {problem} ({reason})").format(n=n, problem=exc, reason=exc.reason))
        return None


def _far_past() -> Any:
    """Review checks an approval as of its use, not today: expiry is checked when it is used, not re-checked."""
    import datetime as dt

    return dt.datetime(1970, 1, 2, tzinfo=dt.UTC)


def check_chain(entries: Sequence[Entry], *, whole: bool = True) -> tuple[list[str], list[str]]:
    """Re-verify every approval recorded in ``entries`` against the governance recorded before it.

    ``whole``: the entries are a whole chain (an exported ledger), so each approval's head is the entry before it;
    otherwise (a package's copies) each approval is checked against the head it names. Returns the problems (each
    named: a signature that does not verify, an approval for another head or dataset, a replayed nonce, a change
    of a governed dataset without approval) and notes (who governs, from which entry).
    """
    problems: list[str] = []
    notes: list[str] = []
    record: GovernanceRecord | None = None
    nonces: set[str] = set()
    by_seq = {e.seq: e for e in entries}
    for i, e in enumerate(entries):
        kind = e.type
        n = e.seq
        prev = entries[i - 1] if i > 0 else None
        head: LedgerHead | None = None
        if whole:
            head = LedgerHead(prev.seq, prev.hash) if prev is not None else LedgerHead(0, GENESIS)
        verified: VerifiedApproval | None = None
        p = _approval_payload(e)
        nonce = p.get("nonce") if p is not None else None
        if isinstance(nonce, str) and nonce in nonces:
            problems.append(
                _(
                    "entry {n}: its approval (nonce {nonce}) was already used by an earlier entry (replayed)"
                ).format(n=n, nonce=nonce)
            )
        if kind == "govern":
            try:
                new = GovernanceRecord.from_payload(e.get("governance"))
            except GovernanceError as exc:
                problems.append(_("entry {n}: {problem}").format(n=n, problem=exc))
                continue
            if new.dataset != e.dataset:
                problems.append(_("entry {n}: the governance record is for another dataset").format(n=n))
            if record is not None:
                action = "rotate_key" if new.officer.key != record.officer.key else "change_policy"
                verified = verify_recorded(e, record, head, nonces, action, problems)
                if verified is not None and record.after(verified) != new:
                    problems.append(
                        _("entry {n}: the governance recorded is not the one its approval approves").format(
                            n=n
                        )
                    )
            elif e.get("approval") is not None:
                problems.append(_("entry {n}: the first governance entry holds an approval").format(n=n))
            record = new
            notes.append(
                _(
                    "governed by {name} (key {fp}, recovery key {rfp}) from entry {n}; compare the keys with the officer's"
                ).format(
                    name=new.officer.shown_name,
                    fp=new.officer.fingerprint,
                    rfp=new.officer.recovery_fingerprint,
                    n=n,
                )
            )
        elif kind == "acknowledge" and e.get("governance") is not None:
            try:
                new = GovernanceRecord.from_payload(e.get("governance"))
            except GovernanceError as exc:
                problems.append(_("entry {n}: {problem}").format(n=n, problem=exc))
                continue
            # its approval was signed for the broken ledger's head, which this chain does not hold
            verified = verify_recorded(e, new, None, nonces, "acknowledge", problems)
            if verified is not None and not _same_ack(e, verified):
                problems.append(
                    _(
                        "entry {n}: the acknowledgement is not the one its approval approves (reason or costs differ)"
                    ).format(n=n)
                )
            record = new
            notes.append(
                _("governed by {name} (key {fp}) from entry {n} (carried over by an acknowledgement)").format(
                    name=new.officer.shown_name, fp=new.officer.fingerprint, n=n
                )
            )
        elif record is not None and kind in GATED:
            verified = verify_recorded(e, record, head, nonces, ACTION_OF[str(kind)], problems)
        elif record is not None and kind == "spend" and (record.policy.require_signed_plans or p is not None):
            plan_head: LedgerHead | None = None
            if p is not None:
                try:
                    plan_head = LedgerHead(int(p["head"]["seq"]), str(p["head"]["hash"]))
                except (KeyError, TypeError, ValueError):
                    plan_head = LedgerHead(0, GENESIS)
                held = by_seq.get(plan_head.seq)
                if whole and (held is None or held.hash != plan_head.hash or plan_head.seq >= int(n)):
                    problems.append(
                        _(
                            "entry {n}: its plan approval was signed for ledger entry {seq}, which this chain does not hold before it"
                        ).format(n=n, seq=plan_head.seq)
                    )
            verified = verify_recorded(e, record, plan_head, nonces, "approve_plan", problems)
        elif record is None and p is not None:
            problems.append(
                _("entry {n} holds an approval, but the dataset is not governed before it").format(n=n)
            )
        if isinstance(nonce, str):
            nonces.add(nonce)
    return problems, notes


def check_approved(name: str, entries: Sequence[Entry]) -> None:
    """On a governed dataset, every change of its settings (budget, unit of privacy, accounting), every declare-new
    and every forget-identity entry holds the approval of the officer who governed it then, bound to the entry
    before it and never used before, whatever the policy says about plans: a :class:`GovernanceError` naming
    the first that does not (a line forged with its hashes computed, or appended by hand). Run on every full
    verification of a home's ledger (:meth:`dpdesk.core.ledger.book.Ledger.verify`)."""
    record: GovernanceRecord | None = None
    nonces: set[str] = set()
    for i, e in enumerate(entries):
        kind = str(e.type)
        if kind in ("govern", "acknowledge") and e.get("governance") is not None:
            record = GovernanceRecord.from_payload(e.get("governance"))
        elif record is not None and kind in GATED and kind != "acknowledge":
            prev = entries[i - 1] if i > 0 else None
            head = LedgerHead(prev.seq, prev.hash) if prev is not None else LedgerHead(0, GENESIS)
            problems: list[str] = []
            if verify_recorded(e, record, head, nonces, ACTION_OF[kind], problems) is None:
                raise GovernanceError(
                    _(
                        "ledger {name}: entry {n} changes a dataset governed by {who} without their valid approval "
                        "({problems}). {fix}"
                    ).format(
                        name=name, n=e.seq, who=_who(record), problems="; ".join(problems), fix=_fix_ack()
                    )
                )
        p = _approval_payload(e)
        if p is not None and isinstance(p.get("nonce"), str):
            nonces.add(p["nonce"])


def _fix_ack() -> str:
    return _(
        'A privacy officer must acknowledge it (dpdesk ledger acknowledge --data FILE --reason "...") before '
        "anything else is released"
    )


def acknowledge_params(
    reason: str, costs: Iterable[Mapping[str, Any]], settings: Mapping[str, Any] | None
) -> dict[str, Any]:
    """What an ``acknowledge`` approval approves: the reason, the stated costs (``entries``, ``epsilon``,
    ``delta``, ``rho`` each, in the order of their entries) and the settings when the officer states them."""
    out: dict[str, Any] = {
        "reason": reason.strip(),
        "costs": sorted(
            (
                {
                    "entries": str(c["entries"]),
                    "epsilon": float(c["epsilon"]),
                    "delta": float(c.get("delta", 0.0)),
                    "rho": float(c.get("rho", 0.0)),
                }
                for c in costs
            ),
            key=lambda c: str(c["entries"]),
        ),
    }
    if settings is not None:
        out["settings"] = dict(settings)
    return out


def _same_ack(e: Entry, approval: VerifiedApproval) -> bool:
    """Whether an acknowledge entry is what its approval approved (reason, stated costs, stated settings)."""
    from dpdesk.core.governance.officer import same_json

    try:
        stated = [{"entries": r["entries"], **r["stated"]} for r in e.get("stated") or []]
        settings = e.get("settings") if e.get("settings_from") == "stated" else None
        mine = acknowledge_params(str(e.get("reason", "")), stated, settings)
    except (KeyError, TypeError, ValueError):
        return False
    return same_json(approval.params, mine)
