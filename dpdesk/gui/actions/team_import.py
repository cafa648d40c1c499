"""Tools > Import this table's history into the team: ``dpdesk team import`` for the open table
(:mod:`dpdesk.services.team_import`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.gui.workers import Worker
    from dpdesk.services.team_import import Imported


class TeamImport(Action):
    """Bring the open table's history from this home's own ledger into the team's ledger the home uses."""

    def import_history(self) -> Worker | None:
        """After a confirmation naming what happens, import in the worker; then read the table's ledger again."""
        from dpdesk.core.common import shown as numfmt
        from dpdesk.services.team import in_use

        window, s = self.window, self.state
        if s.data_path is None:
            window.show_error(_("Open the table whose history you want to bring into the team first."))
            return None
        used = in_use(s.home)
        if used.url is None:
            window.show_error(
                _(
                    "This home uses its own ledgers: connect it to the team first (Tools > Team ledger…), then "
                    "import the table's history."
                )
            )
            return None
        if not window.ask_confirm(
            _("Import this table's history into the team?"),
            _(
                "Every release of this table in this home's own ledger is charged to the team's ledger at "
                "{server}. If the team already holds the table, one budget applies to both, the smaller. This "
                "home's own ledger of the table is then closed for good: nothing is charged to it any more, "
                "connected to the team or not."
            ).format(server=used.url),
        ):
            return None
        data, home = s.data_path, s.home

        def job(progress: Progress) -> Imported:
            from dpdesk.services.team_import import import_dataset

            return import_dataset(home, data, progress=progress)

        def done(result: Imported) -> None:
            s.read_ledger()
            if result.already:
                text = _("This table's history was already in the team's ledger (dataset {team}).").format(
                    team=result.team
                )
            else:
                text = _(
                    "This table's history is in the team's ledger now: {n} release(s) carried into dataset {team}."
                ).format(n=result.carried, team=result.team)
            if result.overspent and result.spent is not None:
                text += " " + _(
                    "The team's dataset has spent epsilon {spent} of {budget}: no release is possible until a "
                    "privacy officer of the team decides."
                ).format(
                    spent=numfmt.plain(result.spent.spent_epsilon, 6, "up"),
                    budget=numfmt.plain(result.spent.budget.epsilon, 6),
                )
            window.set_status(text)

        return self.run(job, done, _("Importing the table's history…"))
