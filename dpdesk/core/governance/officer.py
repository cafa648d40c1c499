"""A privacy officer who holds the key: officer keys, governance records and signed approvals.

Not yet wired into the ledger: this module gives the lead the pieces, each pure and typed.

**Keys.** :func:`create_officer` makes two Ed25519 key pairs at once: the officer's key, kept on the
officer's machine, and an offline *recovery* key, kept apart (printed, or on a drive in a safe), which
can do one thing only: approve the replacement of a lost officer key (``rotate_key``). Both private
keys are PEM files encrypted with a passphrase (``BestAvailableEncryption``). The public half is a small
JSON file (``format`` ``dpdesk-officer-key``) naming the officer, holding both public keys with their
fingerprints (the first 16 hex digits of SHA-256 of the raw 32-byte key, in groups of four, to be read
out over the phone) and signed by both keys, so that neither key can be swapped in transit without the
officer's fingerprint changing.

**Governance.** :class:`GovernanceRecord` is what placing a dataset under an officer's key records: the
dataset's public name (``ds-...``), the officer's public key file as above and the policy flags
(``require_signed_plans``). :meth:`GovernanceRecord.to_payload` is canonical-JSON-ready (a ledger entry's
payload); :meth:`GovernanceRecord.from_payload` reads it back and checks it, the key binding included.

**Approvals.** An approval file is ``{"format": "dpdesk-approval", "payload": {...}, "signature": ...}``:
an Ed25519 signature (standard base64) over ``APPROVAL_DOMAIN`` followed by the canonical JSON of the
payload. The payload binds the action to the dataset's public name, the ledger head it applies to
(sequence number and entry hash), a random 128-bit nonce (single use), the signing key, the action kind
and its parameters, the time of issue and an optional expiry. :func:`verify_approval` checks all of it
against what the caller expects and returns a :class:`VerifiedApproval`, or raises one of the
:class:`ApprovalError` subclasses, each naming what is wrong. Hostile files (too large, too deeply
nested, invalid UTF-8, duplicate keys, NaN, wrong types, non-canonical base64) give
:class:`ApprovalMalformed`, never another exception.

Action kinds (:data:`ACTIONS`) and their parameters:

- ``change_settings``: ``{"settings": {...}}``, the new settings (budget, unit of privacy, accounting);
- ``acknowledge``: ``{"reason": str, "costs": [{...}, ...]}``, a broken ledger accepted at stated costs (and
  ``"settings"`` when the officer states them too);
- ``declare_new``: ``{"new_dataset": "ds-..."}``, a near-copy declared a new dataset;
- ``forget_identity``: ``{"reason": str}``, the home's content identities forgotten (the lost secret);
- ``merge``: ``{"retired": "ds-...", "into": "ds-..."}``, two datasets of one table merged (one approval for each
  governed side, each bound to that side's head);
- ``approve_plan``: ``{"plan_sha256": hex, "budget": {...}}``, a plan by its canonical hash, and its budget;
- ``change_policy``: ``{"policy": {"require_signed_plans": bool}}``;
- ``rotate_key``: ``{"officer": <new public key file>}``, signed by the *recovery* key (every other action
  is signed by the officer key, never the recovery key).

What signatures do and do not do: they make an unapproved change *detectable* (a settings entry without a
valid approval is named by review), not impossible: whoever can write the ledger can still delete or
roll it back, which only the anchoring of the chain (and the officer's own copies) detects.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as _dt
import errno
import hashlib
import json
import os
import re
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import DpdeskError, LedgerError
from dpdesk.core.common.jsonin import JsonInputError, read_json
from dpdesk.core.common.text import shown
from dpdesk.core.model.spec import Plan, canonical_json
from dpdesk.i18n import _

APPROVAL_FORMAT: Final = "dpdesk-approval"
KEY_FORMAT: Final = "dpdesk-officer-key"
VERSION: Final = 1
#: Signed messages start with a domain label, so that a signature made for one kind of document can
#: never be presented as another.
APPROVAL_DOMAIN: Final = b"dpdesk approval v1\x00"
KEY_DOMAIN: Final = b"dpdesk officer key v1\x00"

ACTIONS: Final = (
    "change_settings",
    "acknowledge",
    "declare_new",
    "approve_plan",
    "change_policy",
    "rotate_key",
    "forget_identity",
    "merge",
)
#: The one action the recovery key signs (and the officer key does not).
ROTATE: Final = "rotate_key"

#: Caps on what is read from a file before it is parsed.
MAX_FILE_BYTES: Final = jsonin.OFFICER.max_bytes
MAX_DEPTH: Final = jsonin.MAX_DEPTH
MAX_INT_DIGITS: Final = jsonin.MAX_INT_DIGITS
MAX_TEXT: Final = 2000
#: Sixteen hex digits in four groups, however separated: what a fingerprint looks like (:func:`fingerprint`).
#: A name holding one could make a message show another officer's fingerprint beside it (issue 24, item 8).
FINGERPRINT_LIKE: Final = re.compile(r"[0-9a-fA-F]{4}(?:[^0-9a-zA-Z]{0,3}[0-9a-fA-F]{4}){3}")


def shown_name(name: str) -> str:
    """An officer's free-text name as dpdesk shows it: control characters made visible, and anything that looks
    like a fingerprint replaced by "[...]" (a name made by an older version may hold one; new names cannot)."""
    return FINGERPRINT_LIKE.sub("[...]", shown(name))


MIN_PASSPHRASE: Final = 8

_HEX64 = re.compile(r"[0-9a-f]{64}")
_NONCE = re.compile(r"[0-9a-f]{32}")
_DATASET = re.compile(r"ds-[0-9a-f]{32}")


# ----------------------------------------------------------------------------- errors


class OfficerKeyError(DpdeskError):
    """An officer key file that cannot be made or used (wrong passphrase, not a dpdesk key, damaged)."""


class GovernanceError(LedgerError):
    """A governance record (read from a ledger) that is damaged: the ledger must be treated as broken."""


class ApprovalError(DpdeskError):
    """An approval refused; ``reason`` names the check that refused it (stable, for machines)."""

    reason = "refused"


class ApprovalMalformed(ApprovalError):
    """Not a dpdesk approval file: unreadable, too large, too deep, wrong types or missing fields."""

    reason = "malformed"


class ApprovalWrongKey(ApprovalError):
    """Signed by a key that is not the one the dataset's governance names for this action."""

    reason = "wrong-key"


class ApprovalBadSignature(ApprovalError):
    """The signature does not verify: the file was changed after signing, or forged."""

    reason = "bad-signature"


class ApprovalOtherDataset(ApprovalError):
    """Signed for another dataset."""

    reason = "other-dataset"


class ApprovalStaleHead(ApprovalError):
    """Signed for another ledger head (the ledger has moved on, or was rolled back)."""

    reason = "stale-head"


class ApprovalReplayed(ApprovalError):
    """Its nonce was already used: an approval is good for one action."""

    reason = "replayed"


class ApprovalExpired(ApprovalError):
    """Past its expiry time."""

    reason = "expired"


class ApprovalMismatch(ApprovalError):
    """Approves another action, or the same action with other parameters."""

    reason = "action-mismatch"


class _Bad(Exception):
    """Internal: a structural problem, turned into the caller's typed error with its detail."""


# ----------------------------------------------------------------------------- small helpers


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def _iso(t: _dt.datetime) -> str:
    return t.astimezone(_dt.UTC).isoformat(timespec="seconds")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: str, length: int, what: str) -> bytes:
    """Strict base64: the canonical encoding of exactly ``length`` bytes, nothing else."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise _Bad(_("{what} is not base64").format(what=what)) from None
    if len(raw) != length or _b64(raw) != text:
        raise _Bad(_("{what} is not {n} bytes in canonical base64").format(what=what, n=length))
    return raw


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape
        raise _Bad(_("the text holds an invalid character (a lone surrogate)")) from None


def _signed_message(domain: bytes, payload: Mapping[str, Any]) -> bytes:
    return domain + _utf8(canonical_json(payload))


def fingerprint(raw_public_key: bytes) -> str:
    """The first 16 hex digits of SHA-256 of a raw 32-byte public key, in groups of four."""
    h = hashlib.sha256(raw_public_key).hexdigest()[:16]
    return " ".join(h[i : i + 4] for i in range(0, 16, 4))


def _raw_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _public_from_b64(text: str, what: str) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(_unb64(text, 32, what))


def _fingerprint_b64(key_b64: str) -> str:
    return fingerprint(base64.b64decode(key_b64))


# ----------------------------------------------------------------------------- hostile JSON


def _parse_json(raw: bytes | str) -> Any:
    """JSON from an untrusted file, within the caps (:func:`dpdesk.core.common.jsonin.read_json`); raises
    :class:`_Bad` with the reason."""
    try:
        return read_json(raw, jsonin.OFFICER)
    except JsonInputError as exc:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if exc.reason == "syntax" and not text.removeprefix("\ufeff").strip():
            raise _Bad(_("the file is empty")) from None
        raise _Bad(exc.message[:200]) from None


def _read_capped(path: Path, cap: int = MAX_FILE_BYTES) -> bytes:
    """At most ``cap`` bytes of a file; :class:`_Bad` if it is larger or unreadable."""
    from dpdesk.core.common.smallfile import NotSmallFile, read_small_file

    try:
        return read_small_file(path, cap)
    except NotSmallFile as exc:
        if exc.errno == errno.EFBIG:
            raise _Bad(_("larger than {n} bytes").format(n=cap)) from None
        raise _Bad(str(exc.strerror)) from None
    except OSError as exc:
        raise _Bad(_("cannot read it: {err}").format(err=exc.strerror or exc)) from None


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(_("{what} must be a JSON object").format(what=what))
    return value


def _exact_keys(
    obj: Mapping[str, Any], required: Collection[str], optional: Collection[str], what: str
) -> None:
    missing = sorted(set(required) - obj.keys())
    if missing:
        raise _Bad(_("{what} lacks {keys}").format(what=what, keys=", ".join(missing)))
    unknown = sorted(obj.keys() - set(required) - set(optional))
    if unknown:
        raise _Bad(
            _("{what} has unknown fields: {keys}").format(
                what=what, keys=", ".join(json.dumps(k)[:40] for k in unknown[:5])
            )
        )


def _text(obj: Mapping[str, Any], key: str, what: str, *, empty: bool = True) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or len(value) > MAX_TEXT or (not empty and not value.strip()):
        raise _Bad(
            _("{what}.{key} must be text of at most {n} characters").format(what=what, key=key, n=MAX_TEXT)
            if empty
            else _("{what}.{key} must be non-empty text of at most {n} characters").format(
                what=what, key=key, n=MAX_TEXT
            )
        )
    _utf8(value)
    return value


def _match(pattern: re.Pattern[str], obj: Mapping[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise _Bad(
            _("{what}.{key} is not of the form {form}").format(what=what, key=key, form=pattern.pattern)
        )
    return value


def _time(obj: Mapping[str, Any], key: str, what: str) -> _dt.datetime:
    value = obj.get(key)
    try:
        if not isinstance(value, str) or len(value) > 40:
            raise ValueError
        t = _dt.datetime.fromisoformat(value)
    except ValueError:
        raise _Bad(_("{what}.{key} is not a date and time").format(what=what, key=key)) from None
    if t.tzinfo is None:
        raise _Bad(_("{what}.{key} has no time zone").format(what=what, key=key))
    return t


def same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values: numbers by value (1 == 1.0), but never a boolean for a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# ----------------------------------------------------------------------------- officer keys


@dataclass(frozen=True, slots=True)
class OfficerPublicKey:
    """An officer's public key file: name and contact (public labels), both public keys, self-signed."""

    name: str
    contact: str
    key: str  # raw Ed25519 public key, base64
    recovery_key: str
    created: str
    signature: str  # by the officer key over the rest (KEY_DOMAIN)
    recovery_signature: str  # by the recovery key over the same

    @property
    def fingerprint(self) -> str:
        """The officer key's fingerprint (``abcd ef01 2345 6789``), to compare by phone."""
        return _fingerprint_b64(self.key)

    @property
    def shown_name(self) -> str:
        """The name as messages show it (:func:`shown_name`): never a fingerprint of its own."""
        return shown_name(self.name)

    @property
    def recovery_fingerprint(self) -> str:
        """The recovery key's fingerprint."""
        return _fingerprint_b64(self.recovery_key)

    def _signed_part(self) -> dict[str, Any]:
        return {
            "format": KEY_FORMAT,
            "version": VERSION,
            "name": self.name,
            "contact": self.contact,
            "key": self.key,
            "fingerprint": self.fingerprint,
            "recovery_key": self.recovery_key,
            "recovery_fingerprint": self.recovery_fingerprint,
            "created": self.created,
        }

    def to_document(self) -> dict[str, Any]:
        """The JSON object of the public key file (and of a governance record's ``officer``)."""
        return {
            **self._signed_part(),
            "signature": self.signature,
            "recovery_signature": self.recovery_signature,
        }

    def to_bytes(self) -> bytes:
        """The public key file's contents."""
        return (json.dumps(self.to_document(), indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()

    @classmethod
    def from_document(cls, doc: Any, what: str = "officer") -> OfficerPublicKey:
        """Read and check a public key document (raises :class:`_Bad`)."""
        d = _object(doc, what)
        _exact_keys(
            d,
            (
                "format",
                "version",
                "name",
                "contact",
                "key",
                "fingerprint",
                "recovery_key",
                "recovery_fingerprint",
                "created",
                "signature",
                "recovery_signature",
            ),
            (),
            what,
        )
        if d["format"] != KEY_FORMAT or d["version"] != VERSION or isinstance(d["version"], bool):
            raise _Bad(_("{what} is not a dpdesk officer key of version {v}").format(what=what, v=VERSION))
        key = _public_from_b64(_text(d, "key", what), f"{what}.key")
        recovery = _public_from_b64(_text(d, "recovery_key", what), f"{what}.recovery_key")
        if d["key"] == d["recovery_key"]:
            raise _Bad(_("{what}: the recovery key must differ from the officer key").format(what=what))
        _time(d, "created", what)
        out = cls(
            name=_text(d, "name", what, empty=False),
            contact=_text(d, "contact", what),
            key=d["key"],
            recovery_key=d["recovery_key"],
            created=d["created"],
            signature=_text(d, "signature", what),
            recovery_signature=_text(d, "recovery_signature", what),
        )
        if d["fingerprint"] != out.fingerprint or d["recovery_fingerprint"] != out.recovery_fingerprint:
            raise _Bad(_("{what}: a fingerprint does not match its key").format(what=what))
        message = _signed_message(KEY_DOMAIN, out._signed_part())
        for public, sig, label in (
            (key, out.signature, f"{what}.signature"),
            (recovery, out.recovery_signature, f"{what}.recovery_signature"),
        ):
            try:
                public.verify(_unb64(sig, 64, label), message)
            except InvalidSignature:
                raise _Bad(
                    _(
                        "{what}: the key file's signatures do not verify (it was changed after it was made)"
                    ).format(what=what)
                ) from None
        return out


class OfficerSigner:
    """An officer's (or recovery) private key, unlocked with its passphrase."""

    __slots__ = ("_private",)

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private

    @property
    def key(self) -> str:
        """The public key, raw and base64, as governance records and approvals name it."""
        return _b64(_raw_public(self._private))

    @property
    def fingerprint(self) -> str:
        """The public key's fingerprint."""
        return fingerprint(_raw_public(self._private))

    def sign(self, message: bytes) -> bytes:
        """An Ed25519 signature (64 bytes)."""
        return self._private.sign(message)


@dataclass(frozen=True, slots=True)
class OfficerKeyFiles:
    """What :func:`create_officer` wrote: the public file to give out and the two private files to keep."""

    officer: OfficerPublicKey
    public: Path
    private: Path
    recovery: Path


def _check_passphrase(passphrase: str, what: str) -> bytes:
    if len(passphrase) < MIN_PASSPHRASE:
        raise OfficerKeyError(
            _("the {what} passphrase must have at least {n} characters").format(what=what, n=MIN_PASSPHRASE)
        )
    try:
        return passphrase.encode("utf-8")
    except UnicodeEncodeError:
        raise OfficerKeyError(
            _("the {what} passphrase holds an invalid character").format(what=what)
        ) from None


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` (never overwrite), write, fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def create_officer(
    folder: str | Path,
    name: str,
    contact: str,
    passphrase: str,
    recovery_passphrase: str,
    *,
    now: _dt.datetime | None = None,
) -> OfficerKeyFiles:
    """Make an officer's key pair and recovery key pair, and write their files into ``folder``.

    Files (``XXXX`` the officer key's fingerprint without spaces): ``officer-XXXX-public.json`` to give to
    curators, ``officer-XXXX-private.pem`` to keep, ``officer-XXXX-recovery.pem`` to keep offline and apart.
    Existing files are never overwritten.
    """
    if not name.strip() or len(name) > MAX_TEXT or len(contact) > MAX_TEXT:
        raise OfficerKeyError(
            _("the officer needs a name (and a contact) of at most {n} characters").format(n=MAX_TEXT)
        )
    if FINGERPRINT_LIKE.search(name) or shown(name) != name:
        raise OfficerKeyError(
            _(
                "the officer's name must not hold anything that looks like a key fingerprint (16 hex digits) or a "
                "line break or other control character: dpdesk shows every fingerprint itself, beside the name"
            )
        )
    secret = _check_passphrase(passphrase, _("officer key"))
    recovery_secret = _check_passphrase(recovery_passphrase, _("recovery key"))
    if secret == recovery_secret:
        raise OfficerKeyError(
            _(
                "use a different passphrase for the recovery key: it is kept apart, so that one lost secret is not both"
            )
        )
    private, recovery = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    unsigned = OfficerPublicKey(
        name=name,
        contact=contact,
        key=_b64(_raw_public(private)),
        recovery_key=_b64(_raw_public(recovery)),
        created=_iso(now or _now()),
        signature="",
        recovery_signature="",
    )
    message = _signed_message(KEY_DOMAIN, unsigned._signed_part())
    officer = dataclasses.replace(
        unsigned, signature=_b64(private.sign(message)), recovery_signature=_b64(recovery.sign(message))
    )
    out = Path(folder)
    stem = "officer-" + officer.fingerprint.replace(" ", "")
    files = OfficerKeyFiles(
        officer=officer,
        public=out / f"{stem}-public.json",
        private=out / f"{stem}-private.pem",
        recovery=out / f"{stem}-recovery.pem",
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path, key, pw in ((files.private, private, secret), (files.recovery, recovery, recovery_secret)):
            pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(pw),
            )
            _write_new(path, pem, 0o600)
        _write_new(files.public, officer.to_bytes(), 0o644)
    except OSError as exc:
        raise OfficerKeyError(
            _("cannot write the officer's key files in {folder}: {err}").format(
                folder=out, err=exc.strerror or exc
            )
        ) from None
    return files


def parse_officer_public_key(raw: bytes | str, source: str | None = None) -> OfficerPublicKey:
    """Read an officer's public key file's contents, checking its fingerprints and signatures."""
    source = source or _("the officer's public key")
    try:
        return OfficerPublicKey.from_document(_parse_json(raw))
    except _Bad as exc:
        raise OfficerKeyError(
            _("{source}: not a dpdesk officer public key: {detail}").format(source=source, detail=exc)
        ) from None


def load_officer_public_key(path: str | Path) -> OfficerPublicKey:
    """Read an officer's public key file (``officer-XXXX-public.json``)."""
    p = Path(path)
    try:
        raw = _read_capped(p)
    except _Bad as exc:
        raise OfficerKeyError(
            _("{source}: not a dpdesk officer public key: {detail}").format(source=p, detail=exc)
        ) from None
    return parse_officer_public_key(raw, str(p))


def load_signer(path: str | Path, passphrase: str) -> OfficerSigner:
    """Unlock a private key file (the officer key or the recovery key) with its passphrase."""
    p = Path(path)
    try:
        raw = _read_capped(p, 16 * 1024)
    except _Bad as exc:
        raise OfficerKeyError(_("{source}: {detail}").format(source=p, detail=exc)) from None
    try:
        key = serialization.load_pem_private_key(raw, password=passphrase.encode("utf-8", "surrogatepass"))
    except TypeError:  # not encrypted: dpdesk never writes such a file
        raise OfficerKeyError(
            _(
                "{source}: not an encrypted officer key; dpdesk only uses keys protected by a passphrase"
            ).format(source=p)
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        raise OfficerKeyError(
            _("{source}: wrong passphrase, or not an officer key file").format(source=p)
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise OfficerKeyError(_("{source}: not an Ed25519 key, so not a dpdesk officer key").format(source=p))
    return OfficerSigner(key)


# ----------------------------------------------------------------------------- governance


@dataclass(frozen=True, slots=True)
class Policy:
    """What the officer requires of a governed dataset."""

    require_signed_plans: bool = False

    def to_payload(self) -> dict[str, Any]:
        """The policy as JSON."""
        return {"require_signed_plans": self.require_signed_plans}

    @classmethod
    def from_payload(cls, value: Any, what: str = "policy") -> Policy:
        """Read a policy object (raises :class:`_Bad`)."""
        d = _object(value, what)
        _exact_keys(d, ("require_signed_plans",), (), what)
        if not isinstance(d["require_signed_plans"], bool):
            raise _Bad(_("{what}.require_signed_plans must be true or false").format(what=what))
        return cls(require_signed_plans=d["require_signed_plans"])


@dataclass(frozen=True, slots=True)
class GovernanceRecord:
    """A dataset placed under an officer's key: the payload of a governance ledger entry."""

    dataset: str
    officer: OfficerPublicKey
    policy: Policy = Policy()

    def to_payload(self) -> dict[str, Any]:
        """JSON-ready (canonical-JSON-ready) payload for the ledger."""
        return {
            "version": VERSION,
            "dataset": self.dataset,
            "officer": self.officer.to_document(),
            "policy": self.policy.to_payload(),
        }

    @classmethod
    def from_payload(cls, payload: Any) -> GovernanceRecord:
        """Read a governance record back from a ledger entry's payload, checking every field."""
        try:
            d = _object(payload, "governance")
            _exact_keys(d, ("version", "dataset", "officer", "policy"), (), "governance")
            if d["version"] != VERSION or isinstance(d["version"], bool):
                raise _Bad(_("governance.version must be {v}").format(v=VERSION))
            return cls(
                dataset=_match(_DATASET, d, "dataset", "governance"),
                officer=OfficerPublicKey.from_document(d["officer"], "governance.officer"),
                policy=Policy.from_payload(d["policy"], "governance.policy"),
            )
        except _Bad as exc:
            raise GovernanceError(
                _("the governance record is damaged: {detail}").format(detail=exc)
            ) from None

    def key_for(self, action: str) -> str:
        """The public key that must sign ``action``: the recovery key for ``rotate_key``, else the officer's."""
        return self.officer.recovery_key if action == ROTATE else self.officer.key

    def after(self, approval: VerifiedApproval) -> GovernanceRecord:
        """The record once a verified ``rotate_key`` or ``change_policy`` approval is applied (else itself)."""
        if approval.action == ROTATE:
            return GovernanceRecord(
                self.dataset, OfficerPublicKey.from_document(approval.params["officer"]), self.policy
            )
        if approval.action == "change_policy":
            return GovernanceRecord(
                self.dataset, self.officer, Policy.from_payload(approval.params["policy"])
            )
        return self


def govern(
    dataset: str, officer: OfficerPublicKey, *, require_signed_plans: bool = False
) -> GovernanceRecord:
    """The record that places ``dataset`` (its public name, ``ds-...``) under ``officer``'s key."""
    if _DATASET.fullmatch(dataset) is None:
        raise OfficerKeyError(_("{name} is not a dataset's public name (ds-...)").format(name=dataset))
    return GovernanceRecord(dataset, officer, Policy(require_signed_plans=require_signed_plans))


def describe_governance(record: GovernanceRecord | None) -> str:
    """One line for the curator: who governs the dataset, or that nobody does."""
    if record is None:
        return _(
            "This dataset is ungoverned: whoever runs dpdesk with it can change its budget and settings; the ledger only records it."
        )
    line = _(
        "Governed by {name} (key {fp}); budget, settings and acknowledgements need their signed approval."
    ).format(name=record.officer.shown_name, fp=shown(record.officer.fingerprint))
    if record.policy.require_signed_plans:
        line += " " + _("Only plans the officer has signed may be released.")
    return line


# ----------------------------------------------------------------------------- approvals


@dataclass(frozen=True, slots=True)
class LedgerHead:
    """The last entry of a ledger: its sequence number and hash (what an approval applies to)."""

    seq: int
    hash: str

    def to_payload(self) -> dict[str, Any]:
        """The head as JSON."""
        return {"seq": self.seq, "hash": self.hash}


@dataclass(frozen=True, slots=True)
class VerifiedApproval:
    """An approval that passed every check of :func:`verify_approval`.

    ``payload`` and ``signature`` are what to record in the ledger (so that review can verify it again);
    ``nonce`` is what makes it single-use.
    """

    payload: dict[str, Any]
    signature: str
    action: str
    params: dict[str, Any]
    nonce: str
    signer: str  # "officer" or "recovery"
    fingerprint: str
    issued: str
    expires: str | None

    def to_record(self) -> dict[str, Any]:
        """The approval as a ledger entry records it."""
        return {"payload": self.payload, "signature": self.signature}


def _check_params(action: str, params: Any, dataset: str) -> dict[str, Any]:
    """The parameters of an action kind, checked (raises :class:`_Bad`)."""
    p = _object(params, "params")
    if action == "change_settings":
        _exact_keys(p, ("settings",), (), "params")
        if not _object(p["settings"], "params.settings"):
            raise _Bad(_("params.settings must not be empty"))
    elif action == "acknowledge":
        _exact_keys(p, ("reason", "costs"), ("settings",), "params")
        if "settings" in p:
            _object(p["settings"], "params.settings")
        _text(p, "reason", "params", empty=False)
        if not isinstance(p["costs"], list) or not all(isinstance(c, dict) for c in p["costs"]):
            raise _Bad(_("params.costs must be a list of objects (the stated costs)"))
    elif action == "declare_new":
        _exact_keys(p, ("new_dataset",), (), "params")
        if _match(_DATASET, p, "new_dataset", "params") == dataset:
            raise _Bad(_("params.new_dataset must differ from the approval's dataset"))
    elif action == "forget_identity":
        _exact_keys(p, ("reason",), (), "params")
        _text(p, "reason", "params", empty=False)
    elif action == "merge":
        _exact_keys(p, ("retired", "into"), (), "params")
        if _match(_DATASET, p, "retired", "params") == _match(_DATASET, p, "into", "params"):
            raise _Bad(_("params.retired must differ from params.into"))
        if dataset not in (p["retired"], p["into"]):
            raise _Bad(_("a merge's approval must name its own dataset as retired or into"))
    elif action == "approve_plan":
        _exact_keys(p, ("plan_sha256", "budget"), (), "params")
        _match(_HEX64, p, "plan_sha256", "params")
        _object(p["budget"], "params.budget")
    elif action == "change_policy":
        _exact_keys(p, ("policy",), (), "params")
        Policy.from_payload(p["policy"], "params.policy")
    elif action == ROTATE:
        _exact_keys(p, ("officer",), (), "params")
        OfficerPublicKey.from_document(p["officer"], "params.officer")
    else:
        raise _Bad(
            _("unknown action {action}; known: {known}").format(
                action=json.dumps(action)[:60], known=", ".join(ACTIONS)
            )
        )
    return p


def settings_params(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a ``change_settings`` approval: the new settings."""
    return {"settings": dict(settings)}


def plan_params(plan: Plan) -> dict[str, Any]:
    """The parameters of an ``approve_plan`` approval: the plan's canonical hash and its budget."""
    return {"plan_sha256": plan.plan_hash(), "budget": plan.to_dict()["budget"]}


def rotate_params(new_officer: OfficerPublicKey) -> dict[str, Any]:
    """The parameters of a ``rotate_key`` approval: the new officer's public key file."""
    return {"officer": new_officer.to_document()}


def sign_approval(
    signer: OfficerSigner,
    dataset: str,
    head: LedgerHead,
    action: str,
    params: Mapping[str, Any],
    *,
    expires: _dt.datetime | None = None,
    now: _dt.datetime | None = None,
) -> bytes:
    """An approval file's contents: ``action`` with ``params`` on ``dataset`` at ``head``, signed.

    ``rotate_key`` is to be signed with the recovery key, every other action with the officer key.
    """
    issued = now or _now()
    if expires is not None and expires <= issued:
        raise OfficerKeyError(_("the expiry must be after the time of issue"))
    try:
        checked = _check_params(action, json.loads(canonical_json(dict(params))), dataset)
        payload: dict[str, Any] = {
            "format": APPROVAL_FORMAT,
            "version": VERSION,
            "dataset": dataset,
            "head": head.to_payload(),
            "nonce": secrets.token_hex(16),
            "key": signer.key,
            "action": action,
            "params": checked,
            "issued": _iso(issued),
            "expires": None if expires is None else _iso(expires),
        }
        _payload(payload)  # what verify_approval will accept, checked before signing
        message = _signed_message(APPROVAL_DOMAIN, payload)
    except (_Bad, ValueError, TypeError) as exc:
        raise OfficerKeyError(_("cannot sign this approval: {detail}").format(detail=exc)) from None
    doc = {"format": APPROVAL_FORMAT, "payload": payload, "signature": _b64(signer.sign(message))}
    return (json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Payload:
    dataset: str
    head: LedgerHead
    nonce: str
    key: str
    action: str
    params: dict[str, Any]
    issued: _dt.datetime
    expires: _dt.datetime | None


def _payload(value: Any) -> _Payload:
    """The signed payload, every field checked (raises :class:`_Bad`)."""
    p = _object(value, "payload")
    _exact_keys(
        p,
        ("format", "version", "dataset", "head", "nonce", "key", "action", "params", "issued", "expires"),
        (),
        "payload",
    )
    if p["format"] != APPROVAL_FORMAT or p["version"] != VERSION or isinstance(p["version"], bool):
        raise _Bad(_("payload is not a dpdesk approval of version {v}").format(v=VERSION))
    dataset = _match(_DATASET, p, "dataset", "payload")
    h = _object(p["head"], "payload.head")
    _exact_keys(h, ("seq", "hash"), (), "payload.head")
    seq = h["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise _Bad(_("payload.head.seq must be a whole number, 0 or more"))
    head = LedgerHead(seq, _match(_HEX64, h, "hash", "payload.head"))
    key = _text(p, "key", "payload")
    _unb64(key, 32, "payload.key")
    action = p["action"]
    if not isinstance(action, str) or action not in ACTIONS:
        raise _Bad(
            _("unknown action {action}; known: {known}").format(
                action=json.dumps(action)[:60], known=", ".join(ACTIONS)
            )
        )
    issued = _time(p, "issued", "payload")
    expires = None if p["expires"] is None else _time(p, "expires", "payload")
    if expires is not None and expires <= issued:
        raise _Bad(_("payload.expires is not after payload.issued"))
    return _Payload(
        dataset=dataset,
        head=head,
        nonce=_match(_NONCE, p, "nonce", "payload"),
        key=key,
        action=action,
        params=_check_params(action, p["params"], dataset),
        issued=issued,
        expires=expires,
    )


def read_approval_file(path: str | Path) -> bytes:
    """An approval file's bytes, read no further than the size cap."""
    p = Path(path)
    try:
        return _read_capped(p)
    except _Bad as exc:
        raise ApprovalMalformed(
            _("{source}: not a dpdesk approval file: {detail}").format(source=p, detail=exc)
        ) from None


def verify_approval(
    doc: bytes | str,
    governance: GovernanceRecord,
    head: LedgerHead,
    used_nonces: Collection[str],
    action: str,
    params: Mapping[str, Any],
    *,
    now: _dt.datetime | None = None,
    source: str | None = None,
) -> VerifiedApproval:
    """Check an approval file against the dataset's governance, its ledger head now, the nonces already
    used (read by the caller from the ledger) and the action and parameters the caller is about to apply.

    Returns the verified approval, or raises the :class:`ApprovalError` subclass that names the problem.
    ``source`` names the file in messages.
    """
    source = source or _("the approval")
    try:
        top = _("the file")
        d = _object(_parse_json(doc), top)
        _exact_keys(d, ("format", "payload", "signature"), (), top)
        if d["format"] != APPROVAL_FORMAT:
            raise _Bad(_("the file's format is not {f}").format(f=APPROVAL_FORMAT))
        signature = _unb64(_text(d, "signature", top), 64, "signature")
        p = _payload(d["payload"])
        message = _signed_message(APPROVAL_DOMAIN, d["payload"])
    except _Bad as exc:
        raise ApprovalMalformed(
            _("{source}: not a dpdesk approval file: {detail}").format(source=source, detail=exc)
        ) from None

    # who signed: the key the governance names for this kind of action
    wanted = governance.key_for(p.action)
    if p.key != wanted:
        role = _("recovery key") if p.action == ROTATE else _("officer key")
        raise ApprovalWrongKey(
            _("{source} is signed by key {got}, not by the {role} of {dataset} ({want})").format(
                source=source,
                got=_fingerprint_b64(p.key),
                role=role,
                dataset=governance.dataset,
                want=_fingerprint_b64(wanted),
            )
        )
    try:
        _public_from_b64(p.key, "payload.key").verify(signature, message)
    except InvalidSignature:
        raise ApprovalBadSignature(
            _(
                "{source}: the signature does not verify; the file was changed after it was signed, or it was not signed by key {fp}"
            ).format(source=source, fp=_fingerprint_b64(p.key))
        ) from None

    if p.dataset != governance.dataset:
        raise ApprovalOtherDataset(
            _("{source} is for dataset {got}, not {want}").format(
                source=source, got=p.dataset, want=governance.dataset
            )
        )
    if p.head != head:
        raise ApprovalStaleHead(
            _(
                "{source} was signed for ledger entry {seq} ({hash}), but the ledger's last entry is {now_seq} ({now_hash}); ask the officer for a new approval"
            ).format(
                source=source,
                seq=p.head.seq,
                hash=p.head.hash[:12],
                now_seq=head.seq,
                now_hash=head.hash[:12],
            )
        )
    t = now or _now()
    if p.expires is not None and t >= p.expires:
        raise ApprovalExpired(_("{source} expired at {when}").format(source=source, when=_iso(p.expires)))
    if p.nonce in used_nonces:
        raise ApprovalReplayed(
            _("{source} (nonce {nonce}) was already used; an approval is good for one action only").format(
                source=source, nonce=p.nonce
            )
        )
    if p.action != action:
        raise ApprovalMismatch(
            _("{source} approves {got}, not {want}").format(source=source, got=p.action, want=action)
        )
    if not same_json(p.params, dict(params)):
        differ = sorted(
            k
            for k in p.params.keys() | params.keys()
            if k not in p.params or k not in params or not same_json(p.params[k], params[k])
        )
        raise ApprovalMismatch(
            _("{source} approves {action} with other parameters than these (they differ in {keys})").format(
                source=source, action=action, keys=", ".join(differ)
            )
        )
    return VerifiedApproval(
        payload=d["payload"],
        signature=d["signature"],
        action=p.action,
        params=p.params,
        nonce=p.nonce,
        signer="recovery" if p.action == ROTATE else "officer",
        fingerprint=_fingerprint_b64(p.key),
        issued=_iso(p.issued),
        expires=None if p.expires is None else _iso(p.expires),
    )
