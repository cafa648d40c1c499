"""Tools > Team ledger: the dialog that connects this home to a team's ledger or disconnects it, and the line beside
the budget that says which ledger is in use; Tools > Team dashboard: the team's datasets and the officer's actions
(:mod:`dpdesk.services.team`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.gui.views.team_dashboard import TeamDashboard
    from dpdesk.gui.views.team_dialog import TeamDialog


def ledger_line(choice_url: str | None, server: str, from_env: bool, error: str | None) -> tuple[str, str]:
    """The line beside the budget and its tooltip."""
    if error is not None:
        return _("Ledger: team (its setting cannot be read)"), error
    if choice_url is None:
        return _("Ledger: this computer"), _("This home's own ledgers, in files on this computer.")
    tip = _("The team ledger at {server}.").format(server=choice_url)
    if from_env:
        tip += " " + _("Chosen by the environment variable DPDESK_LEDGER.")
    return _("Ledger: team ({server})").format(server=server), tip


class TeamLedger(Action):
    """Tools > Team ledger."""

    def open_dialog(self) -> TeamDialog:
        """Open the dialog (window-modal, not blocking); when it closes, the line beside the budget is updated and
        an open table is read again from the ledger now in use."""
        from dpdesk.gui.views.team_dialog import TeamDialog

        window = self.window
        dialog = TeamDialog(window, self.state.home, window.pool)
        window.team_dialog = dialog
        dialog.finished.connect(lambda _result: self.closed(dialog))
        dialog.open()
        return dialog

    def closed(self, dialog: TeamDialog) -> None:
        window, state = self.window, self.state
        window.show_ledger_in_use()
        if dialog.was_changed and state.data_path is not None and window.job is None:
            if state.cluster is not None:  # its dataset and budget, from the ledger now in use
                window.open_spark(state.cluster.source)
            else:
                window.open_data(str(state.data_path))

    def line(self) -> tuple[str, str]:
        """Which ledger the home uses, for the line beside the budget."""
        from dpdesk.services.team import in_use

        c = in_use(self.state.home)
        return ledger_line(c.url, c.server, c.from_env, c.error)


class Dashboard(Action):
    """Tools > Team dashboard."""

    def open_dashboard(self) -> TeamDashboard:
        """Open the team dashboard (not modal: the officer keeps it beside the main window), or raise the one
        already open and ask the server again. A home that uses no team ledger is told how to connect it."""
        from dpdesk.gui.views.team_dashboard import TeamDashboard

        window = self.window
        dashboard = window.team_dashboard
        if dashboard is not None and dashboard.isVisible():
            dashboard.raise_()
            dashboard.activateWindow()
            dashboard.refresh()
            return dashboard
        dashboard = TeamDashboard(window, self.state.home, window.pool)
        window.team_dashboard = dashboard
        dashboard.show()
        dashboard.table.setFocus()
        return dashboard
