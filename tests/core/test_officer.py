"""The officer's keys, governance records and signed approvals (dpdesk/core/governance/officer.py).

Round trips of every action; every refusal of ``verify_approval`` named by its own error; every byte of an
approval file changed refused; another officer's key and the recovery key for anything but a rotation
refused; the recovery key rotates; hostile files (size, depth, wrong types, bad JSON) give the typed error.
Deterministic (no statistics): keys are random but every check holds for any key.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdesk.core.common.errors import DpdeskError, LedgerError
from dpdesk.core.governance import officer as of
from dpdesk.core.model.spec import canonical_json
from dpdesk.core.plan.reader import parse_plan_text
from tests.conftest import SAMPLES

DS = "ds-" + "1" * 32
OTHER_DS = "ds-" + "2" * 32
HEAD = of.LedgerHead(7, hashlib.sha256(b"entry 7").hexdigest())
T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
PASS, RPASS = "officer passphrase", "recovery passphrase"
SETTINGS = {
    "budget": {"epsilon": 2.0, "delta": 1e-6},
    "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
    "accounting": {"method": "basic"},
}


class Officer:
    """An officer's files, public key and both unlocked private keys."""

    def __init__(self, folder: Path, name: str = "Ann Officer") -> None:
        self.files = of.create_officer(folder, name, "ann@example.org", PASS, RPASS, now=T0)
        self.public = of.load_officer_public_key(self.files.public)
        self.signer = of.load_signer(self.files.private, PASS)
        self.recovery = of.load_signer(self.files.recovery, RPASS)


@pytest.fixture(scope="module")
def ann(tmp_path_factory: pytest.TempPathFactory) -> Officer:
    return Officer(tmp_path_factory.mktemp("ann"))


@pytest.fixture(scope="module")
def bob(tmp_path_factory: pytest.TempPathFactory) -> Officer:
    return Officer(tmp_path_factory.mktemp("bob"), "Bob Officer")


@pytest.fixture(scope="module")
def gov(ann: Officer) -> of.GovernanceRecord:
    return of.govern(DS, ann.public, require_signed_plans=True)


def plan_params() -> dict[str, Any]:
    plan = parse_plan_text((SAMPLES / "cps_wages_plan.json").read_bytes())
    return of.plan_params(plan)


def params_for(action: str, new_officer: of.OfficerPublicKey | None = None) -> dict[str, Any]:
    if action == "change_settings":
        return of.settings_params(SETTINGS)
    if action == "acknowledge":
        return {"reason": "restored from backup", "costs": [{"seq": 3, "epsilon": 0.5, "delta": 0.0}]}
    if action == "declare_new":
        return {"new_dataset": OTHER_DS}
    if action == "approve_plan":
        return plan_params()
    if action == "change_policy":
        return {"policy": {"require_signed_plans": False}}
    if action == "forget_identity":
        return {"reason": "the identity secret's backup was lost"}
    if action == "merge":
        return {"retired": OTHER_DS, "into": DS}
    assert action == of.ROTATE and new_officer is not None
    return of.rotate_params(new_officer)


def sign(
    o: Officer, action: str = "change_settings", params: dict[str, Any] | None = None, **kw: Any
) -> bytes:
    signer = o.recovery if action == of.ROTATE else o.signer
    return of.sign_approval(
        signer,
        kw.pop("dataset", DS),
        kw.pop("head", HEAD),
        action,
        params or params_for(action),
        now=T0,
        **kw,
    )


def verify(doc: bytes | str, gov: of.GovernanceRecord, **kw: Any) -> of.VerifiedApproval:
    action = kw.pop("action", "change_settings")
    return of.verify_approval(
        doc,
        gov,
        kw.pop("head", HEAD),
        kw.pop("used", frozenset()),
        action,
        kw.pop("params", None) or params_for(action),
        now=kw.pop("now", T0 + dt.timedelta(minutes=5)),
    )


def resign(signer: of.OfficerSigner, doc: bytes, change: Any) -> bytes:
    """The approval with its payload changed by ``change`` and signed again: only the change is wrong."""
    d = json.loads(doc)
    change(d["payload"])
    message = of.APPROVAL_DOMAIN + canonical_json(d["payload"]).encode("utf-8")
    d["signature"] = base64.b64encode(signer.sign(message)).decode()
    return json.dumps(d).encode()


# ----------------------------------------------------------------------------- keys


def test_create_officer_writes_an_encrypted_key_a_recovery_key_and_a_self_signed_public_file(
    ann: Officer,
) -> None:
    files = ann.files
    assert files.public.name == f"officer-{ann.public.fingerprint.replace(' ', '')}-public.json"
    for private in (files.private, files.recovery):
        pem = private.read_bytes()
        assert pem.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
        if sys.platform != "win32":
            assert stat.S_IMODE(private.stat().st_mode) == 0o600
    doc = json.loads(files.public.read_text(encoding="utf-8"))
    raw = base64.b64decode(doc["key"])
    digest = hashlib.sha256(raw).hexdigest()
    assert (
        doc["fingerprint"] == ann.public.fingerprint == " ".join(digest[i : i + 4] for i in range(0, 16, 4))
    )
    assert doc["name"] == "Ann Officer" and doc["contact"] == "ann@example.org"
    assert ann.signer.key == doc["key"] and ann.recovery.key == doc["recovery_key"] != doc["key"]
    assert ann.signer.fingerprint == ann.public.fingerprint
    assert ann.recovery.fingerprint == ann.public.recovery_fingerprint
    assert of.parse_officer_public_key(ann.public.to_bytes()) == ann.public


def test_a_private_key_needs_its_own_passphrase(ann: Officer, tmp_path: Path) -> None:
    with pytest.raises(of.OfficerKeyError, match="wrong passphrase"):
        of.load_signer(ann.files.private, RPASS)
    with pytest.raises(of.OfficerKeyError, match="wrong passphrase"):
        of.load_signer(ann.files.recovery, PASS)
    junk = tmp_path / "junk.pem"
    junk.write_bytes(os.urandom(300))
    with pytest.raises(of.OfficerKeyError, match="wrong passphrase, or not an officer key"):
        of.load_signer(junk, PASS)
    huge = tmp_path / "huge.pem"
    huge.write_bytes(b"A" * (1 << 20))
    with pytest.raises(of.OfficerKeyError, match="larger than"):
        of.load_signer(huge, PASS)
    with pytest.raises(of.OfficerKeyError, match="cannot read"):
        of.load_signer(tmp_path / "missing.pem", PASS)


def test_weak_or_shared_passphrases_and_empty_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(of.OfficerKeyError, match="at least 8"):
        of.create_officer(tmp_path, "Ann", "", "short", RPASS)
    with pytest.raises(of.OfficerKeyError, match="different passphrase"):
        of.create_officer(tmp_path, "Ann", "", PASS, PASS)
    with pytest.raises(of.OfficerKeyError, match="name"):
        of.create_officer(tmp_path, "  ", "", PASS, RPASS)
    assert list(tmp_path.iterdir()) == []


def test_a_public_key_file_changed_after_it_was_made_is_refused(ann: Officer, bob: Officer) -> None:
    good = ann.public.to_document()
    of.OfficerPublicKey.from_document(good)
    cases: dict[str, dict[str, Any]] = {
        "name": {**good, "name": "Mallory"},
        "recovery key swapped": {
            **good,
            "recovery_key": bob.public.recovery_key,
            "recovery_fingerprint": bob.public.recovery_fingerprint,
        },
        "fingerprint": {**good, "fingerprint": bob.public.fingerprint},
        "signature": {**good, "signature": bob.public.signature},
        "recovery signature": {**good, "recovery_signature": bob.public.recovery_signature},
        "one key twice": {**good, "recovery_key": good["key"]},
        "extra field": {**good, "admin": True},
        "missing field": {k: v for k, v in good.items() if k != "created"},
    }
    for label, doc in cases.items():
        with pytest.raises(of.OfficerKeyError, match="not a dpdesk officer public key"):
            of.parse_officer_public_key(json.dumps(doc), label)


def test_public_key_files_are_read_within_the_size_cap(tmp_path: Path) -> None:
    huge = tmp_path / "officer-public.json"
    huge.write_bytes(b" " * (of.MAX_FILE_BYTES + 1))
    with pytest.raises(of.OfficerKeyError, match="larger than"):
        of.load_officer_public_key(huge)
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 20_000 + b"]" * 20_000)
    with pytest.raises(of.OfficerKeyError, match="nested more than"):
        of.load_officer_public_key(deep)
    with pytest.raises(of.OfficerKeyError, match="cannot read"):
        of.load_officer_public_key(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- governance


def test_governance_record_round_trips_through_canonical_json(gov: of.GovernanceRecord, ann: Officer) -> None:
    payload = gov.to_payload()
    back = of.GovernanceRecord.from_payload(json.loads(canonical_json(payload)))
    assert back == gov
    assert payload["dataset"] == DS and payload["policy"] == {"require_signed_plans": True}
    assert payload["officer"]["key"] == ann.public.key
    assert payload["officer"]["recovery_key"] == ann.public.recovery_key
    assert "Ann Officer" in of.describe_governance(gov) and ann.public.fingerprint in of.describe_governance(
        gov
    )
    assert "Only plans the officer has signed" in of.describe_governance(gov)
    assert "ungoverned" in of.describe_governance(None)
    with pytest.raises(of.OfficerKeyError, match="public name"):
        of.govern("sha-not-an-id", ann.public)


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.update(dataset="ds-short"),
        lambda p: p.update(version=True),
        lambda p: p["policy"].update(require_signed_plans="yes"),
        lambda p: p["officer"].update(name="Mallory"),
        lambda p: p.pop("policy"),
        lambda p: p.update(extra=1),
    ],
    ids=["dataset", "version", "policy", "officer", "missing", "extra"],
)
def test_a_damaged_governance_record_breaks_the_ledger(gov: of.GovernanceRecord, damage: Any) -> None:
    payload = json.loads(canonical_json(gov.to_payload()))
    damage(payload)
    with pytest.raises(of.GovernanceError, match="governance record is damaged") as err:
        of.GovernanceRecord.from_payload(payload)
    assert isinstance(err.value, LedgerError) and err.value.exit_code == 3
    with pytest.raises(of.GovernanceError):
        of.GovernanceRecord.from_payload([1, 2])


# ----------------------------------------------------------------------------- approvals: round trips


@pytest.mark.parametrize("action", [a for a in of.ACTIONS if a != of.ROTATE])
def test_each_action_round_trips(ann: Officer, gov: of.GovernanceRecord, action: str) -> None:
    doc = sign(ann, action)
    v = verify(doc, gov, action=action)
    assert v.action == action and v.signer == "officer" and v.fingerprint == ann.public.fingerprint
    assert v.params == json.loads(canonical_json(params_for(action)))
    assert v.payload["head"] == {"seq": HEAD.seq, "hash": HEAD.hash} and v.payload["dataset"] == DS
    assert v.issued == T0.isoformat() and v.expires is None
    assert len(v.nonce) == 32 and v.nonce in doc.decode()
    # what the ledger records verifies again (as review would do it, with the head and nonces before it)
    again = verify(json.dumps({"format": of.APPROVAL_FORMAT, **v.to_record()}), gov, action=action)
    assert again.nonce == v.nonce


def test_each_approval_has_its_own_nonce(ann: Officer, gov: of.GovernanceRecord) -> None:
    nonces = {verify(sign(ann), gov).nonce for _ in range(20)}
    assert len(nonces) == 20


def test_numbers_compare_by_value_but_booleans_are_not_numbers(
    ann: Officer, gov: of.GovernanceRecord
) -> None:
    doc = sign(ann, params={"settings": {"budget": {"epsilon": 2, "delta": 1e-6}}})
    verify(doc, gov, params={"settings": {"budget": {"epsilon": 2.0, "delta": 0.000001}}})
    doc = sign(ann, "change_policy", {"policy": {"require_signed_plans": True}})
    with pytest.raises(of.ApprovalMismatch):
        verify(doc, gov, action="change_policy", params={"policy": {"require_signed_plans": 1}})


# ----------------------------------------------------------------------------- approvals: refusals


def test_another_officers_approval_is_refused(ann: Officer, bob: Officer, gov: of.GovernanceRecord) -> None:
    with pytest.raises(of.ApprovalWrongKey, match=f"signed by key {bob.public.fingerprint}") as err:
        verify(sign(bob), gov)
    assert ann.public.fingerprint in str(err.value) and err.value.reason == "wrong-key"


def test_the_recovery_key_approves_nothing_but_a_rotation(ann: Officer, gov: of.GovernanceRecord) -> None:
    doc = of.sign_approval(ann.recovery, DS, HEAD, "change_settings", params_for("change_settings"), now=T0)
    with pytest.raises(of.ApprovalWrongKey, match="not by the officer key"):
        verify(doc, gov)
    rotate = of.sign_approval(ann.signer, DS, HEAD, of.ROTATE, of.rotate_params(ann.public), now=T0)
    with pytest.raises(of.ApprovalWrongKey, match="not by the recovery key"):
        verify(rotate, gov, action=of.ROTATE, params=of.rotate_params(ann.public))


def test_a_forged_signature_claiming_the_officers_key_is_refused(
    ann: Officer, bob: Officer, gov: of.GovernanceRecord
) -> None:
    doc = resign(bob.signer, sign(ann), lambda p: p["params"]["settings"]["budget"].update(epsilon=100.0))
    assert json.loads(doc)["payload"]["key"] == ann.public.key
    with pytest.raises(of.ApprovalBadSignature, match="does not verify") as err:
        verify(doc, gov, params={"settings": {**SETTINGS, "budget": {"epsilon": 100.0, "delta": 1e-6}}})
    assert err.value.reason == "bad-signature"


def test_a_raised_budget_edited_into_the_file_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    d = json.loads(sign(ann))
    d["payload"]["params"]["settings"]["budget"]["epsilon"] = 20.0
    with pytest.raises(of.ApprovalBadSignature):
        verify(
            json.dumps(d), gov, params={"settings": {**SETTINGS, "budget": {"epsilon": 20.0, "delta": 1e-6}}}
        )


def test_every_changed_byte_of_an_approval_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    doc = sign(ann)
    verify(doc, gov)
    accepted: list[bytes] = []
    for i in range(len(doc)):
        for flip in (0x01, 0x20):
            bad = doc[:i] + bytes([doc[i] ^ flip]) + doc[i + 1 :]
            try:
                verify(bad, gov)
            except of.ApprovalError:
                continue
            # what is signed is the JSON value, not its spelling: only a change that leaves it equal may pass
            # (1e-06 and 1E-06 are one number)
            accepted.append(bad[i - 4 : i + 4])
            assert canonical_json(json.loads(bad)) == canonical_json(json.loads(doc))
    assert len(accepted) <= 2


def test_a_non_canonical_base64_signature_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    d = json.loads(sign(ann))
    sig = d["signature"]
    assert sig.endswith("==")  # 64 bytes: the last character before the padding has 4 unused bits
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(sig[-3])
    d["signature"] = sig[:-3] + alphabet[last ^ 1] + "=="
    assert base64.b64decode(d["signature"]) == base64.b64decode(sig)  # the same signature bytes
    with pytest.raises(of.ApprovalMalformed, match="canonical base64"):
        verify(json.dumps(d), gov)


def test_an_approval_for_another_dataset_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    other = of.govern(OTHER_DS, ann.public)
    with pytest.raises(of.ApprovalOtherDataset, match=f"for dataset {DS}, not {OTHER_DS}") as err:
        verify(sign(ann), other)
    assert err.value.reason == "other-dataset"


@pytest.mark.parametrize(
    "now_head",
    [of.LedgerHead(8, HEAD.hash), of.LedgerHead(7, "f" * 64), of.LedgerHead(6, HEAD.hash)],
    ids=["moved-on", "other-hash", "rolled-back"],
)
def test_an_approval_for_another_ledger_head_is_refused(
    ann: Officer, gov: of.GovernanceRecord, now_head: of.LedgerHead
) -> None:
    doc = sign(ann)
    with pytest.raises(of.ApprovalStaleHead, match="signed for ledger entry 7") as err:
        verify(doc, gov, head=now_head)
    assert f"last entry is {now_head.seq}" in str(err.value) and err.value.reason == "stale-head"


def test_a_used_approval_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    doc = sign(ann)
    v = verify(doc, gov)
    with pytest.raises(of.ApprovalReplayed, match=v.nonce) as err:
        verify(doc, gov, used={"0" * 32, v.nonce})
    assert err.value.reason == "replayed"
    verify(doc, gov, used={"0" * 32})


def test_an_expired_approval_is_refused(ann: Officer, gov: of.GovernanceRecord) -> None:
    expires = T0 + dt.timedelta(hours=24)
    doc = sign(ann, expires=expires)
    assert verify(doc, gov, now=expires - dt.timedelta(seconds=1)).expires == expires.isoformat()
    with pytest.raises(of.ApprovalExpired, match="expired at 2026-03-02T12:00:00") as err:
        verify(doc, gov, now=expires)
    assert err.value.reason == "expired"
    with pytest.raises(of.OfficerKeyError, match="expiry"):
        sign(ann, expires=T0)


def test_an_approval_of_another_action_or_other_parameters_is_refused(
    ann: Officer, gov: of.GovernanceRecord
) -> None:
    doc = sign(ann, "approve_plan")
    with pytest.raises(of.ApprovalMismatch, match="approves approve_plan, not change_settings") as err:
        verify(doc, gov, action="change_settings")
    assert err.value.reason == "action-mismatch"
    other_plan = {**plan_params(), "plan_sha256": "0" * 64}
    with pytest.raises(of.ApprovalMismatch, match="differ in plan_sha256"):
        verify(doc, gov, action="approve_plan", params=other_plan)
    bigger = {**plan_params(), "budget": {"epsilon": 5.0, "delta": 1e-6}}
    with pytest.raises(of.ApprovalMismatch, match="differ in budget"):
        verify(doc, gov, action="approve_plan", params=bigger)
    with pytest.raises(of.ApprovalMismatch, match="differ in settings"):
        verify(sign(ann), gov, params={"settings": {**SETTINGS, "accounting": {"method": "zcdp"}}})


def test_signing_refuses_what_verification_would_refuse(ann: Officer) -> None:
    with pytest.raises(of.OfficerKeyError, match="unknown action"):
        sign(ann, "reset_budget", {"x": 1})
    with pytest.raises(of.OfficerKeyError, match=r"params\.new_dataset"):
        sign(ann, "declare_new", {"new_dataset": DS})
    with pytest.raises(of.OfficerKeyError, match="settings"):
        sign(ann, "change_settings", {"settings": {}})
    with pytest.raises(of.OfficerKeyError, match="cannot sign"):
        sign(ann, "acknowledge", {"reason": "x", "costs": [{"epsilon": float("nan")}]})
    with pytest.raises(of.OfficerKeyError, match=r"payload\.dataset"):
        sign(ann, dataset="ds-x")


# ----------------------------------------------------------------------------- rotation and policy


def test_the_recovery_key_rotates_a_lost_officer_key(
    ann: Officer, bob: Officer, gov: of.GovernanceRecord, tmp_path: Path
) -> None:
    new = Officer(tmp_path, "Ann Officer")  # Ann lost her key; she makes a new pair
    rotate = of.sign_approval(ann.recovery, DS, HEAD, of.ROTATE, of.rotate_params(new.public), now=T0)
    v = verify(rotate, gov, action=of.ROTATE, params=of.rotate_params(new.public))
    assert v.signer == "recovery" and v.fingerprint == ann.public.recovery_fingerprint
    rotated = gov.after(v)
    assert rotated.officer == new.public and rotated.dataset == DS and rotated.policy == gov.policy
    assert of.GovernanceRecord.from_payload(json.loads(canonical_json(rotated.to_payload()))) == rotated
    head2 = of.LedgerHead(8, "c" * 64)
    verify(sign(new, head=head2), rotated, head=head2)
    with pytest.raises(of.ApprovalWrongKey):  # the lost key approves nothing any more
        verify(sign(ann, head=head2), rotated, head=head2)
    # another officer's recovery key cannot take the dataset over
    takeover = of.sign_approval(bob.recovery, DS, HEAD, of.ROTATE, of.rotate_params(bob.public), now=T0)
    with pytest.raises(of.ApprovalWrongKey, match="not by the recovery key"):
        verify(takeover, gov, action=of.ROTATE, params=of.rotate_params(bob.public))


def test_a_policy_change_is_an_approval_too(ann: Officer, gov: of.GovernanceRecord) -> None:
    v = verify(sign(ann, "change_policy"), gov, action="change_policy")
    assert gov.policy.require_signed_plans and not gov.after(v).policy.require_signed_plans
    assert gov.after(verify(sign(ann), gov)) == gov  # other actions leave the record as it is


# ----------------------------------------------------------------------------- hostile files


def _signed_with(ann: Officer, change: Any) -> bytes:
    return resign(ann.signer, sign(ann), change)


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"x": value}
    return value


HOSTILE: dict[str, Any] = {
    "empty": lambda a: b"",
    "blank": lambda a: b"  \n",
    "not utf-8": lambda a: b'{"format": "\xff"}',
    "not json": lambda a: b"{format: approval}",
    "top-level list": lambda a: b"[]",
    "payload a string": lambda a: json.dumps({"format": of.APPROVAL_FORMAT, "payload": "x", "signature": ""}),
    "signature a number": lambda a: json.dumps({**json.loads(sign(a)), "signature": 5}),
    "signature too short": lambda a: json.dumps({**json.loads(sign(a)), "signature": "AAAA"}),
    "signature not base64": lambda a: json.dumps({**json.loads(sign(a)), "signature": "!" * 88}),
    "extra top-level field": lambda a: json.dumps({**json.loads(sign(a)), "note": "hi"}),
    "other format": lambda a: json.dumps({**json.loads(sign(a)), "format": "x"}),
    "duplicate key": lambda a: sign(a).replace(
        b'"format": "dpdesk-approval",', b'"format": 1, "format": 0,', 1
    ),
    "NaN": lambda a: sign(a).replace(b'"epsilon": 2.0', b'"epsilon": NaN'),
    "infinite number": lambda a: sign(a).replace(b'"epsilon": 2.0', b'"epsilon": 1e999'),
    "huge integer": lambda a: sign(a).replace(b'"epsilon": 2.0', b'"epsilon": ' + b"9" * 4000),
    "10^6 levels": lambda a: b"[" * 1_000_000 + b"]" * 1_000_000,
    "too large": lambda a: sign(a).replace(b'"basic"', b'"' + b"x" * of.MAX_FILE_BYTES + b'"'),
    # signed again after the change: only the structure is wrong
    "seq a string": lambda a: _signed_with(a, lambda p: p["head"].update(seq="7")),
    "seq a boolean": lambda a: _signed_with(a, lambda p: p["head"].update(seq=True)),
    "seq negative": lambda a: _signed_with(a, lambda p: p["head"].update(seq=-1)),
    "hash upper case": lambda a: _signed_with(a, lambda p: p["head"].update(hash=HEAD.hash.upper())),
    "nonce short": lambda a: _signed_with(a, lambda p: p.update(nonce="ab")),
    "nonce a list": lambda a: _signed_with(a, lambda p: p.update(nonce=[1])),
    "dataset a number": lambda a: _signed_with(a, lambda p: p.update(dataset=5)),
    "key a number": lambda a: _signed_with(a, lambda p: p.update(key=5)),
    "version a boolean": lambda a: _signed_with(a, lambda p: p.update(version=True)),
    "unknown action": lambda a: _signed_with(a, lambda p: p.update(action="reset_budget")),
    "action a list": lambda a: _signed_with(a, lambda p: p.update(action=["change_settings"])),
    "params a list": lambda a: _signed_with(a, lambda p: p.update(params=[1])),
    "params extra": lambda a: _signed_with(a, lambda p: p["params"].update(also="x")),
    "settings a string": lambda a: _signed_with(a, lambda p: p["params"].update(settings="all")),
    "issued naive": lambda a: _signed_with(a, lambda p: p.update(issued="2026-03-01T12:00:00")),
    "issued garbage": lambda a: _signed_with(a, lambda p: p.update(issued="yesterday")),
    "expires before issued": lambda a: _signed_with(
        a, lambda p: p.update(expires="2026-03-01T11:00:00+00:00")
    ),
    "field missing": lambda a: _signed_with(a, lambda p: p.pop("nonce")),
    "field added": lambda a: _signed_with(a, lambda p: p.update(admin=True)),
    "lone surrogate": lambda a: sign(a).replace(b'"basic"', b'"\\ud800"'),
    "one level too deep, signed": lambda a: _signed_with(
        a, lambda p: p["params"]["settings"].update(deep=_deep(of.MAX_DEPTH - 3))
    ),
    "over the size cap, signed": lambda a: _signed_with(
        a, lambda p: p["params"]["settings"].update(note="x" * of.MAX_FILE_BYTES)
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_files_give_the_typed_error(ann: Officer, gov: of.GovernanceRecord, case: str) -> None:
    doc = HOSTILE[case](ann)
    with pytest.raises(of.ApprovalMalformed, match="not a dpdesk approval file") as err:
        verify(doc, gov)
    assert err.value.reason == "malformed" and isinstance(err.value, DpdeskError)
    assert len(str(err.value)) < 600


def test_hostile_cases_other_than_the_change_still_verify(ann: Officer, gov: of.GovernanceRecord) -> None:
    """The helpers change only what they say: resigning an unchanged payload verifies."""
    verify(_signed_with(ann, lambda p: None), gov)
    verify(b"\xef\xbb\xbf" + sign(ann), gov)  # a BOM is tolerated


def test_a_deep_but_allowed_approval_verifies(ann: Officer, gov: of.GovernanceRecord) -> None:
    params = {"settings": {**SETTINGS, "deep": _deep(of.MAX_DEPTH - 4)}}
    verify(sign(ann, params=params), gov, params=params)


def test_a_huge_approval_file_is_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "approval.json"
    with big.open("wb") as f:
        f.truncate(1 << 30)  # a 1 GiB sparse file
    with pytest.raises(of.ApprovalMalformed, match="larger than"):
        of.read_approval_file(big)
    with pytest.raises(of.ApprovalMalformed, match="cannot read"):
        of.read_approval_file(tmp_path / "missing.json")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_random_input_gives_the_typed_error(
    ann: Officer, gov: of.GovernanceRecord, data: bytes | str
) -> None:
    with pytest.raises(of.ApprovalMalformed):
        verify(data, gov)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["dataset", "head", "nonce", "key", "action", "params", "issued", "expires"]),
    value=JSON,
)
def test_any_json_in_a_signed_field_gives_a_typed_error_or_verifies(
    ann: Officer, gov: of.GovernanceRecord, key: str, value: Any
) -> None:
    doc = _signed_with(ann, lambda p: p.update({key: value}))
    try:
        verify(doc, gov)
    except of.ApprovalError:
        pass
    else:  # only the one value that was there already (or an expiry still ahead) can verify
        assert key == "expires"


def test_an_officer_name_cannot_show_another_officer_s_fingerprint(
    ann: Officer, bob: Officer, tmp_path: Path
) -> None:
    """Issue 24, item 8: an officer's free-text name could hold another officer's fingerprint (or a line break and a
    forged line), which messages then showed beside the name. New names holding one are refused; a name made by an
    older version is shown with it masked, after the officer's own fingerprint."""
    import dataclasses

    from dpdesk.core.ledger import governed as governance

    fp = bob.public.fingerprint
    for name in (
        f"Ann (key {fp})",
        f"Ann {fp.replace(' ', '')}",
        f"Ann {fp.replace(' ', '-')}",
        "Ann\nIntact.",
    ):
        with pytest.raises(of.OfficerKeyError, match="fingerprint"):
            of.create_officer(tmp_path, name, "", PASS, RPASS)
    assert not list(tmp_path.iterdir())  # nothing written
    of.create_officer(tmp_path, "Ann Officer 2026 (room 4b)", "", PASS, RPASS)  # an ordinary name is accepted
    old = dataclasses.replace(ann.public, name=f"Ann (key {fp})")
    said = governance._who(of.govern(DS, old, require_signed_plans=False))
    assert fp not in said and "[...]" in said
    assert said.startswith(f"key {ann.public.fingerprint} (")
