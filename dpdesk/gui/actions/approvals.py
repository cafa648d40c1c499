"""The privacy officer's approvals in the app: sign one for the open plan, or attach one to the next release."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.governance.officer import LedgerHead
    from dpdesk.gui.workers import Worker
    from dpdesk.services.officer import Approved


class Approvals(Action):
    """Tools > Approve a plan (the officer), File > Import an approval (the curator)."""

    def approve_plan(self) -> Worker | None:
        """(Officer) sign an approval of the open plan and its budget for a dataset at its ledger head: the open
        table's, or the dataset's public name and head as the curator gave them (dpdesk ledger head)."""
        from dpdesk.core.governance.officer import plan_params

        window, state = self.window, self.state
        if state.plan is None:
            window.show_error(state.plan_error or _("The plan is not complete."))
            return None
        head: LedgerHead
        if state.dataset_id is not None and not state.ledger_error:
            from dpdesk.core.ledger.governed import head_of

            dataset, head = state.dataset_id, head_of(state.ledger_entries)
        else:
            from dpdesk.core.common.errors import UsageError
            from dpdesk.core.ledger.governed import parse_head

            given = window.ask_text(
                _("Approve a plan"),
                _(
                    "The dataset's public name and ledger head, as dpdesk ledger head prints them (ds-... SEQ:HASH):"
                ),
            ).split()
            if not given:
                return None
            try:
                if len(given) != 2:
                    raise UsageError(_("give the public name and the head, separated by a space"))
                dataset, head = given[0], parse_head(given[1])
            except UsageError as exc:
                window.show_error(str(exc))
                return None
        key = window.ask_open_path(_("Choose your private key"), _("Officer private key (*.pem)"), "key")
        if not key:
            return None
        passphrase = window.ask_passphrase(_("Approve a plan"), _("Passphrase of the officer key:"))
        if not passphrase:
            return None
        out = window.ask_save_path(_("Save the approval as"), _("Approval (*.json)"), "approval")
        if not out:
            return None
        params = plan_params(state.plan)

        def job(progress: Progress) -> Approved:
            from dpdesk.services.officer import ApproveRequest, approve

            return approve(
                ApproveRequest(Path(key), passphrase, dataset, head, "approve_plan", params, Path(out)),
                progress,
            )

        def done(result: Approved) -> None:
            window.show_info(
                _("Approval written"),
                _(
                    "Wrote {out}: the plan approved for dataset {id} at ledger entry {seq}, signed by key {fp}."
                ).format(out=result.out, id=result.dataset, seq=result.head.seq, fp=result.fingerprint),
            )

        return self.run(job, done, _("Signing…"))

    def import_approval(self, path: str | None = None) -> bool:
        """(Curator) attach an officer's approval file to the next release (checked when the release runs)."""
        window = self.window
        path = path or window.ask_open_path(_("Import an approval"), _("Approval (*.json)"), "approval")
        if not path:
            return False
        from dpdesk.core.governance.officer import ApprovalError, read_approval_file

        try:
            read_approval_file(path)
        except ApprovalError as exc:
            window.show_error(str(exc))
            return False
        window.pending_approval = Path(path)
        window.set_status(
            _("Approval {name} will be attached to the next release.").format(name=Path(path).name)
        )
        return True
