"""The privacy officer's own actions, on the officer's machine: make a key pair, show a public key file's
fingerprints, and sign an approval of one change of one dataset at one ledger head (no ledger is read: the
curator gives the dataset's public name and head, from ``dpdesk ledger head``)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.governance.officer import LedgerHead, OfficerKeyFiles, OfficerPublicKey
    from dpdesk.core.ledger.carryover import StatedCost


@dataclass(frozen=True)
class CreateOfficerRequest:
    """Make an officer key pair and a recovery key pair in ``folder`` (files never overwritten)."""

    folder: Path
    name: str
    contact: str
    passphrase: str
    recovery_passphrase: str


def create_officer(request: CreateOfficerRequest, progress: Progress = NULL_PROGRESS) -> OfficerKeyFiles:
    """Write ``officer-XXXX-public.json`` (to give to curators), ``-private.pem`` and ``-recovery.pem`` (to keep,
    the recovery key offline and apart); :class:`~dpdesk.core.governance.officer.OfficerKeyError` when they cannot be made."""
    from dpdesk.core.governance.officer import create_officer as make

    progress.check_cancelled()
    return make(
        request.folder, request.name, request.contact, request.passphrase, request.recovery_passphrase
    )


def show_officer(path: Path) -> OfficerPublicKey:
    """An officer's public key file, checked (its fingerprints and both signatures)."""
    from dpdesk.core.governance.officer import load_officer_public_key

    return load_officer_public_key(path)


@dataclass(frozen=True)
class ApproveRequest:
    """Sign an approval of ``action`` with ``params`` for ``dataset`` at ``head`` with the private key ``key``
    (unlocked with ``passphrase``), written to ``out`` (a new file); ``expires_days``: valid that long."""

    key: Path
    passphrase: str
    dataset: str
    head: LedgerHead
    action: str
    params: dict[str, Any]
    out: Path
    expires_days: float | None = None


@dataclass(frozen=True)
class Approved:
    """Where the approval went, what it approves, and the signing key's fingerprint."""

    out: Path
    action: str
    dataset: str
    head: LedgerHead
    fingerprint: str


def approve(request: ApproveRequest, progress: Progress = NULL_PROGRESS) -> Approved:
    """Unlock the key, sign, and write the approval file (never over an existing file)."""
    from dpdesk.core.governance.officer import load_signer, sign_approval

    signer = load_signer(request.key, request.passphrase)
    expires = None
    if request.expires_days is not None:
        if not request.expires_days > 0:
            raise UsageError(_("the approval's validity must be more than 0 days"))
        expires = dt.datetime.now(dt.UTC) + dt.timedelta(days=request.expires_days)
    doc = sign_approval(
        signer, request.dataset, request.head, request.action, request.params, expires=expires
    )
    progress.check_cancelled()
    try:
        fd = os.open(request.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(doc)
            f.flush()
            os.fsync(f.fileno())
    except FileExistsError:
        raise UsageError(
            _("{path} exists: choose a new file for the approval").format(path=request.out)
        ) from None
    except OSError as exc:
        raise UsageError(
            _("cannot write {path}: {err}").format(path=request.out, err=exc.strerror or exc)
        ) from None
    return Approved(request.out, request.action, request.dataset, request.head, signer.fingerprint)


# ----------------------------------------------------------------------------- what each action approves


def plan_approval(plan_path: Path) -> dict[str, Any]:
    """``approve_plan``: the plan's hash and budget."""
    from dpdesk.core.governance.officer import plan_params
    from dpdesk.core.plan.reader import load_plan

    return plan_params(load_plan(plan_path))


def settings_approval(plan_path: Path) -> dict[str, Any]:
    """``change_settings``: the budget, unit of privacy and accounting method of a plan file."""
    from dpdesk.core.governance.officer import settings_params
    from dpdesk.core.plan.reader import load_plan

    return settings_params(load_plan(plan_path).settings())


def acknowledge_approval(
    reason: str, costs: tuple[StatedCost, ...] = (), settings_plan: Path | None = None
) -> dict[str, Any]:
    """``acknowledge``: the reason, the stated costs and (when the officer states them) the settings."""
    from dpdesk.core.ledger.governed import acknowledge_params

    if not reason.strip():
        raise UsageError(_("an acknowledgement needs a reason"))
    settings = None
    if settings_plan is not None:
        from dpdesk.core.plan.reader import load_plan

        settings = load_plan(settings_plan).settings()
    return acknowledge_params(reason, [c.to_dict() for c in costs], settings)


def policy_approval(require_signed_plans: bool) -> dict[str, Any]:
    """``change_policy``: the new policy."""
    return {"policy": {"require_signed_plans": require_signed_plans}}


def rotate_approval(new_officer: Path) -> dict[str, Any]:
    """``rotate_key`` (signed with the recovery key): the new officer's public key file."""
    from dpdesk.core.governance.officer import load_officer_public_key, rotate_params

    return rotate_params(load_officer_public_key(new_officer))


def declare_new_approval(new_dataset: str) -> dict[str, Any]:
    """``declare_new``: the near-copy's public name."""
    return {"new_dataset": new_dataset}


def merge_approval(retired: str, into: str) -> dict[str, Any]:
    """``merge``: which dataset of one table is retired into which (the same words in both approvals)."""
    return {"retired": retired, "into": into}


def forget_identity_approval(reason: str) -> dict[str, Any]:
    """``forget_identity``: the reason the curator will record (the same words)."""
    return {"reason": reason.strip()}
