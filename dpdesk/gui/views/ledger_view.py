"""The 'Ledger' tab: every past release of the opened dataset and the chain's verification status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.text import shown
from dpdesk.gui.models import LedgerModel, release_number
from dpdesk.gui.state import AppState
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.identity.recognition import Resemblance


class LedgerView(QWidget):
    """Read-only view of the dataset's ledger; reopening a past release costs nothing."""

    #: a past release was shown again (in the results)
    shown = Signal()

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.status = QLabel()
        self.status.setObjectName("ledger_status")
        self.status.setWordWrap(True)
        self.model = LedgerModel(state)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setAccessibleName(_("Ledger entries"))
        self.table.setObjectName("ledger_table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.show_button = QPushButton(_("Show this release"))
        self.show_button.setToolTip(
            _("Show a past release's values again. This costs no budget and shows the same values.")
        )
        self.show_button.clicked.connect(self.show_selected)
        self.table.doubleClicked.connect(lambda _i: self.show_selected())
        self.statement_button = QPushButton(_("Budget statement (PDF)…"))
        self.statement_button.setToolTip(
            _("Everything this dataset has spent, across all its releases, as a PDF for a privacy officer.")
        )
        self.link_button = QPushButton(_("Use that dataset's ledger"))
        self.link_button.setObjectName("link_button")
        self.link_button.setToolTip(
            _("Charge this table's releases to the budget of the dataset it resembles (recommended).")
        )
        self.declare_button = QPushButton(_("Declare it a new dataset…"))
        self.declare_button.setObjectName("declare_button")
        self.declare_button.setToolTip(
            _(
                "(Privacy officer) give this table a budget of its own, with a reason recorded in both ledgers; a "
                "governed dataset needs the officer's approval file."
            )
        )
        near = QHBoxLayout()
        near.addWidget(self.link_button)
        near.addWidget(self.declare_button)
        near.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.statement_button)
        row.addStretch(1)
        row.addWidget(self.show_button)
        lay = QVBoxLayout(self)
        lay.addWidget(self.status)
        lay.addLayout(near)
        lay.addWidget(self.table)
        lay.addLayout(row)
        state.ledger_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        s = self.state
        if s.sha256 is None:
            self.status.setText(_("Open a table to see its ledger."))
        elif s.ledger_error:
            self.status.setText(
                _(
                    "<b style='color:#c0392b'>The ledger is broken:</b> {e}. dpdesk will not release on "
                    "this dataset."
                ).format(e=_html(s.ledger_error))
            )
        elif s.near_copy:
            from dpdesk.core.identity.recognition import compared_sentence

            near = s.near[0]
            self.status.setText(
                _(
                    "<b>This table is new to dpdesk but resembles dataset {dataset}</b>: it holds about {contained} "
                    "of that dataset's rows, and about {found} of its own rows are in it (local estimates, for you "
                    "only). {spent} It gets no budget of its own until you use that dataset's ledger, or a privacy "
                    "officer declares it a new dataset."
                ).format(
                    dataset=_html(near.dataset),
                    contained=f"{near.contained:.0%}",
                    found=f"{near.found:.0%}",
                    spent=_html(" ".join(filter(None, (compared_sentence(near), _near_spent(near))))),
                )
            )
        elif not s.ledger_entries:
            self.status.setText(_("Nothing has been released from this dataset yet."))
        else:
            from dpdesk.core.ledger.entries import SpendEntry

            n = sum(1 for e in s.ledger_entries if isinstance(e, SpendEntry))
            self.status.setText(
                _("Chain verified: {n} entries, {r} release(s). Dataset {id}").format(
                    n=len(s.ledger_entries), r=n, id=_html(s.dataset_id)
                )
            )
        self.link_button.setVisible(s.near_copy and not s.ledger_error)
        self.declare_button.setVisible(s.near_copy and not s.ledger_error)
        if s.sha256 is not None and not s.ledger_error and not s.near_copy:
            from dpdesk.core.ledger.governed import describe

            self.status.setText(self.status.text() + "<br>" + _html(describe(s.ledger_entries)))
        if s.ledger_notice:
            self.status.setText(self.status.text() + "<br>" + _html(s.ledger_notice))

    def show_selected(self) -> None:
        from dpdesk.core.ledger.entries import rows_from_entry

        idx = self.table.currentIndex()
        if not idx.isValid():
            return
        from dpdesk.core.ledger.entries import SpendEntry

        e = self.model.entry(idx.row())
        if not isinstance(e, SpendEntry):
            return
        rows = [r.as_list() for r in rows_from_entry(e)]
        self.state.show_results(
            rows,
            _("Release #{seq} of {time} (shown again: no budget spent)").format(
                seq=release_number(self.state.ledger_entries, e.seq), time=e.time.replace("T", " ")
            ),
            e,
        )
        self.shown.emit()


def _near_spent(near: Resemblance) -> str:
    """How much of the dataset a near-copy resembles was spent (from the curator's own ledger)."""
    if near.ledger_broken:
        return _("That dataset's ledger does not verify, so what it spent cannot be read.")
    h = near.spent
    if h is None or h.releases == 0:
        return _("Nothing has been released from that dataset yet.")
    return _("That dataset has spent ε {spent} of its budget of {budget} in {n} release(s).").format(
        spent=numfmt.epsilon(h.spent_epsilon, "up"), budget=numfmt.epsilon(h.budget.epsilon), n=h.releases
    )


def _html(text: object) -> str:
    """Text for the status label (rich text): control characters made visible (:func:`shown`), markup
    characters escaped, line breaks kept."""
    import html

    return html.escape(shown(text, keep_newlines=True), quote=False).replace("\n", "<br>")
