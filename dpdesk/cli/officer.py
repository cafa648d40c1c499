"""``dpdesk officer VERB``: the privacy officer's key and signed approvals."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpdesk.cli.inputs import stated_costs
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.smallfile import read_small_file
from dpdesk.core.common.text import shown
from dpdesk.i18n import _


def _passphrase(path: str | None, prompt: str, *, confirm: bool = False) -> str:
    """A passphrase: the first line of ``path``, or asked for without echo (twice to confirm a new one)."""
    if path is not None:
        try:
            text = read_small_file(path, 64 * 1024).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(
                _("cannot read the passphrase file {path}: {err}").format(path=shown(path), err=shown(why))
            ) from None
        return text.splitlines()[0] if text.splitlines() else ""
    import getpass

    first = getpass.getpass(prompt)
    if confirm and getpass.getpass(_("Again, to confirm: ")) != first:
        raise UsageError(_("the two passphrases differ"))
    return first


def run(args: argparse.Namespace) -> int:
    """``dpdesk officer VERB``: make a key pair, show a public key, or sign an approval."""
    from dpdesk.services import officer as svc

    verb = args.officer_verb
    if verb == "create":
        files = svc.create_officer(
            svc.CreateOfficerRequest(
                Path(args.out),
                args.name,
                args.contact,
                _passphrase(args.passphrase_file, _("Passphrase for the officer key: "), confirm=True),
                _passphrase(
                    args.recovery_passphrase_file, _("Passphrase for the recovery key: "), confirm=True
                ),
            )
        )
        print(
            _("Officer key of {name}: fingerprint {fp}").format(
                name=files.officer.shown_name, fp=files.officer.fingerprint
            )
        )
        print(_("Recovery key fingerprint: {fp}").format(fp=files.officer.recovery_fingerprint))
        print(_("Give to curators: {path}").format(path=shown(files.public)))
        print(_("Keep, with its passphrase: {path}").format(path=shown(files.private)))
        print(
            _("Keep offline and apart (it replaces a lost officer key): {path}").format(
                path=shown(files.recovery)
            )
        )
        return 0
    if verb == "show":
        pub = svc.show_officer(Path(args.public))
        print(
            _("Officer: {name} {contact}").format(
                name=pub.shown_name, contact=f"<{shown(pub.contact)}>" if pub.contact else ""
            )
        )
        print(_("Officer key fingerprint: {fp}").format(fp=pub.fingerprint))
        print(_("Recovery key fingerprint: {fp}").format(fp=pub.recovery_fingerprint))
        print(_("Created: {when}").format(when=shown(pub.created)))
        return 0
    from dpdesk.core.ledger.entries import is_dataset_id
    from dpdesk.core.ledger.governed import parse_head

    if not is_dataset_id(args.dataset):
        raise UsageError(_("{name} is not a dataset's public name (ds-...)").format(name=shown(args.dataset)))
    head = parse_head(args.head)
    if verb == "approve-plan":
        action, params = "approve_plan", svc.plan_approval(Path(args.plan))
    elif verb == "approve-settings":
        action, params = "change_settings", svc.settings_approval(Path(args.plan))
    elif verb == "approve-acknowledge":
        action = "acknowledge"
        params = svc.acknowledge_approval(
            args.reason, stated_costs(args.cost, args.costs), Path(args.settings) if args.settings else None
        )
    elif verb == "approve-policy":
        action, params = "change_policy", svc.policy_approval(args.require_signed_plans)
    elif verb == "approve-declare-new":
        action, params = "declare_new", svc.declare_new_approval(args.new_dataset)
    elif verb == "approve-forget-identity":
        action, params = "forget_identity", svc.forget_identity_approval(args.reason)
    elif verb == "approve-merge":
        action, params = "merge", svc.merge_approval(args.retired, args.into)
    else:
        action, params = "rotate_key", svc.rotate_approval(Path(args.new_officer))
    prompt = (
        _("Passphrase for the recovery key: ")
        if action == "rotate_key"
        else _("Passphrase for the officer key: ")
    )
    done = svc.approve(
        svc.ApproveRequest(
            Path(args.key),
            _passphrase(args.passphrase_file, prompt),
            args.dataset,
            head,
            action,
            params,
            Path(args.out),
            args.expires_days,
        )
    )
    print(
        _(
            "Wrote {out}: {action} for dataset {id} at ledger entry {seq}, signed by key {fp}. It is good for one use."
        ).format(
            out=shown(done.out),
            action=shown(done.action),
            id=shown(done.dataset),
            seq=done.head.seq,
            fp=done.fingerprint,
        )
    )
    return 0
