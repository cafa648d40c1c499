"""A new table that resembles a known dataset: charge it to that dataset, or (the officer) declare it new."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.gui.workers import Worker
    from dpdesk.services.ledger import DeclaredNew, Linked


class NearCopy(Action):
    """The Ledger tab's "Charge it to that dataset" and "Declare it a new dataset"."""

    def link_near_copy(self) -> Worker | None:
        """(Curator) charge the opened table, which resembles a known dataset, to that dataset's ledger."""
        window, s = self.window, self.state
        if not s.near_copy or s.data_path is None:
            return None
        to, data, home, sha = s.near[0].dataset, s.data_path, s.home, s.sha256

        def job(progress: Progress) -> Linked:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import LinkRequest, link_dataset

            return link_dataset(LinkRequest(Dataset(home, data, sha256=sha), to), progress)

        def done(result: Linked) -> None:
            s.read_ledger()
            window.set_status(
                _("This table is now charged to dataset {dataset}.").format(dataset=result.dataset)
            )

        return self.run(job, done, _("Linking…"))

    def declare_near_copy_new(self) -> Worker | None:
        """(Officer) declare the opened table, which resembles a known dataset, a new dataset: a reason, and the
        officer's approval file when that dataset is governed (cancel the file dialog when it is not)."""
        window, s = self.window, self.state
        if not s.near_copy or s.data_path is None:
            return None
        known, data, home, sha = s.near[0].dataset, s.data_path, s.home, s.sha256
        reason = window.ask_text(
            _("Declare it a new dataset"),
            _(
                "Why is this table a new dataset and not a copy of {dataset}? (recorded in both ledgers)"
            ).format(dataset=known),
        ).strip()
        if not reason:
            return None
        approval = window.ask_open_path(
            _("The officer's approval (cancel if the dataset is not governed)"),
            _("Approval (*.json)"),
            "approval",
        )

        def job(progress: Progress) -> DeclaredNew | tuple[str, str]:
            from dpdesk.core.ledger.governed import ApprovalRequired
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import DeclareNewRequest, declare_new, new_dataset_name

            dataset = Dataset(home, data, sha256=sha)
            request = DeclareNewRequest(dataset, known, reason, Path(approval) if approval else None)
            try:
                return declare_new(request, progress)
            except ApprovalRequired as exc:  # the officer's approval is needed: say which one
                return str(exc), new_dataset_name(dataset)

        def done(result: DeclaredNew | tuple[str, str]) -> None:
            if isinstance(result, tuple):
                message, new = result
                window.show_error(
                    message
                    + "\n\n"
                    + _(
                        "The officer approves declaring it new (dpdesk officer approve-declare-new) for dataset "
                        "{known} at its ledger head, naming the new dataset {new}."
                    ).format(known=known, new=new)
                )
                return
            s.read_ledger()
            window.set_status(
                _("This table is now the new dataset {dataset}, with its own budget.").format(
                    dataset=result.dataset
                )
            )

        return self.run(job, done, _("Declaring a new dataset…"))
