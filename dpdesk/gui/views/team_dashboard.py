"""Tools > Team dashboard: every dataset of the team ledger with its budget, what it spent and what is left under its
method, its latest releases (who, when, what was charged), what needs attention, and the privacy officer's actions
on the selected dataset (:func:`dpdesk.services.team.status`, :mod:`dpdesk.services.ledger`,
:mod:`dpdesk.services.officer`).

The server is asked in a worker (:mod:`dpdesk.gui.workers`) with a busy bar in the window; a server that cannot be
reached is said in words (its :class:`~dpdesk.core.ledger.team.TeamLedgerError`), never as a traceback. Curators and
auditors see everything the officer sees; the officer's buttons are disabled for them, with a tooltip naming who may
act. Numbers are plain (:mod:`dpdesk.core.common.shown`): what was spent or charged is rounded up, what is left down.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QThreadPool
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common import shown as numfmt
from dpdesk.gui.workers import Worker, start
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.gui.main_window import MainWindow
    from dpdesk.services.team import TeamStatus

Index = QModelIndex | QPersistentModelIndex
DISPLAY = Qt.ItemDataRole.DisplayRole
#: how many latest releases of each dataset the dashboard asks for
LATEST = 5
#: the datasets table's columns
COLUMNS = ("dataset", "budget", "spent", "left", "method", "releases", "status")
#: a dataset id's characters shown in the table (its whole id is in the tooltip)
SHORT_ID = 11


def short_id(dataset: str) -> str:
    """A dataset's public id in its short form: ``ds-`` and its first eight hex digits.

    >>> short_id("ds-0123456789abcdef0123456789abcdef")
    'ds-01234567…'
    """
    return dataset if len(dataset) <= SHORT_ID else dataset[:SHORT_ID] + "…"


def pair(budget: dict[str, float] | None, rounding: numfmt.Rounding) -> str:
    """An (ε, δ) pair in plain notation, rounded the way that keeps the statement true ("—" when unknown).

    >>> pair({"epsilon": 0.30000000000000004, "delta": 1e-07}, "up"), pair(None, "up")
    ('ε 0.3, δ 0.0000001', '—')
    >>> pair({"epsilon": 0.12345, "delta": 0.0}, "up"), pair({"epsilon": 0.12345, "delta": 0.0}, "down")
    ('ε 0.1235, δ 0', 'ε 0.1234, δ 0')
    """
    if budget is None:
        return "—"
    return "ε {e}, δ {d}".format(
        e=numfmt.epsilon(budget["epsilon"], rounding), d=numfmt.delta(budget["delta"], rounding)
    )


def role_of(details: dict[str, Any]) -> str:
    """``officer``, ``curator`` or ``auditor``: what this user may do in the team."""
    if details.get("officer"):
        return "officer"
    if details.get("curator"):
        return "curator"
    return "auditor"


def role_words(role: str) -> str:
    """A role in words."""
    return {"officer": _("privacy officer"), "curator": _("curator")}.get(role, _("auditor (read only)"))


@dataclass(frozen=True)
class Health:
    """A dataset's state in words: ``kind`` is ``ok``, ``pending`` (no budget fixed yet), ``broken`` (its total
    unknown, or spent past its budget) or ``closed`` (merged into another); ``tip`` says what it means and who acts."""

    kind: str
    text: str
    tip: str


def health(ds: dict[str, Any]) -> Health:
    """What a dataset of :func:`dpdesk.core.ledger.pgstore.overview` needs, from its ``problems``."""
    problems = ds.get("problems") or []
    if "merged" in problems:
        return Health(
            "closed",
            _("closed: merged into another dataset"),
            _("Its releases count in the dataset it was merged into; nothing more is appended here."),
        )
    if "overspent" in problems:
        return Health(
            "broken",
            _("broken: spent more than its budget"),
            _(
                "Releases carried in by a merge or an acknowledgement spent more than its budget. A privacy "
                "officer decides: change its settings, or acknowledge."
            ),
        )
    if "total_unknown" in problems:
        return Health(
            "broken",
            _("broken: its total cannot be computed"),
            _(
                "The database cannot compute what it spent under its method. A privacy officer acknowledges it "
                "(Acknowledge…) or changes its settings."
            ),
        )
    if "no_budget" in problems:
        return Health(
            "pending",
            _("pending: no budget fixed yet"),
            _(
                "It has entries but no settings yet: a privacy officer fixes its first settings (Change settings…)."
            ),
        )
    return Health("ok", _("in order"), _("Its total is within its budget."))


def local_time(iso: str) -> str:
    """A time the server recorded, in this computer's local time, to the minute."""
    try:
        when = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


class TeamDatasetsModel(QAbstractTableModel):
    """The team's datasets, one a row (:data:`COLUMNS`), read only; a problem is tinted and marked with an icon
    like the schema's problems (:meth:`dpdesk.gui.models.SchemaModel.cell_problems`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.datasets: list[dict[str, Any]] = []

    def set_datasets(self, datasets: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.datasets = list(datasets)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.datasets)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role != DISPLAY:
            return None
        if orientation == Qt.Orientation.Vertical:
            return str(section + 1)
        return {
            "dataset": _("Dataset"),
            "budget": _("Budget"),
            "spent": _("Spent"),
            "left": _("Left"),
            "method": _("Accounting"),
            "releases": _("Releases"),
            "status": _("Status"),
        }[COLUMNS[section]]

    def text(self, row: int, col: str) -> str:
        """What the cell shows."""
        from dpdesk.core.publish.words import accounting

        ds = self.datasets[row]
        if col == "dataset":
            return short_id(ds["dataset"])
        if col == "budget":
            return pair(ds["budget"], "nearest")  # a budget as set is described, not spent
        if col == "spent":
            return pair(ds["spent"], "up")
        if col == "left":
            return pair(ds["left"], "down")
        if col == "method":
            return accounting(ds["method"]) if ds["method"] else "—"
        if col == "releases":
            return str(ds["releases"])
        return health(ds).text

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        ds = self.datasets[index.row()]
        col = COLUMNS[index.column()]
        if role == DISPLAY:
            return self.text(index.row(), col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == "dataset":
                return ds["dataset"]
            if col == "status":
                return health(ds).tip
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == "releases":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        state = health(ds).kind
        if state == "ok" or col != "status":
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            from PySide6.QtGui import QColor

            return QColor({"broken": "#fdecea", "pending": "#fff4d6"}.get(state, "#eef0f2"))
        if role == Qt.ItemDataRole.DecorationRole:
            from PySide6.QtWidgets import QApplication, QStyle

            icon = {
                "broken": QStyle.StandardPixmap.SP_MessageBoxWarning,
                "pending": QStyle.StandardPixmap.SP_MessageBoxInformation,
            }.get(state, QStyle.StandardPixmap.SP_DialogNoButton)
            return QApplication.style().standardIcon(icon)
        return None


class TeamDashboard(QDialog):
    """The team's datasets and their latest releases, Refresh, and the officer's actions on the selected dataset.

    Dialogs go through the main window's ``ask_*`` hooks (a test replaces them on the window); the services run in
    this window's worker, one at a time.
    """

    def __init__(self, window: MainWindow, home: Path, pool: QThreadPool | None = None) -> None:
        super().__init__(window)
        self.setWindowTitle(_("Team dashboard"))
        self.setObjectName("team_dashboard")
        self.window_ = window
        self.home = home
        self.pool = pool
        self.worker: Worker | None = None
        #: the last answer of the server (None before it, or when it failed)
        self.status: TeamStatus | None = None
        self.role = "auditor"
        #: what was just done, said once the table shows the server's new answer
        self.notice = ""

        self.summary = QLabel(_("Asking the team ledger…"))
        self.summary.setObjectName("dashboard_summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(10)
        self.busy.setVisible(False)
        self.message = QLabel("")
        self.message.setObjectName("dashboard_message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setVisible(False)

        self.model = TeamDatasetsModel(self)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move within it
        self.table.setObjectName("dashboard_datasets")
        self.table.setModel(self.model)
        self.table.setAccessibleName(_("The team's datasets"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(lambda *_a: self.show_selected())

        self.latest_label = QLabel(_("Latest releases"))
        self.latest_label.setObjectName("dashboard_latest_label")
        self.latest = QTableWidget(0, 5)
        self.latest.setTabKeyNavigation(False)
        self.latest.setObjectName("dashboard_latest")
        self.latest.setAccessibleName(_("Latest releases of the selected dataset"))
        self.latest.setHorizontalHeaderLabels(
            [_("Released by"), _("When (local time)"), _("ε charged"), _("δ charged"), _("Release id")]
        )
        self.latest.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.latest.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.latest.setWordWrap(False)
        self.latest.verticalHeader().setVisible(False)
        lh = self.latest.horizontalHeader()
        lh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        lh.setStretchLastSection(True)
        self.latest_label.setBuddy(self.latest)

        self.settings_button = QPushButton(_("Change &settings…"))
        self.settings_button.setObjectName("dashboard_change_settings")
        self.acknowledge_button = QPushButton(_("Ac&knowledge…"))
        self.acknowledge_button.setObjectName("dashboard_acknowledge")
        self.approve_button = QPushButton(_("&Approve a plan…"))
        self.approve_button.setObjectName("dashboard_approve")
        self.statement_button = QPushButton(_("Team s&tatement (PDF)…"))
        self.statement_button.setObjectName("dashboard_statement")
        self.statement_button.setToolTip(
            _(
                "Every dataset of the team with its budget, spent, left and entries, verified, as one PDF (any role)"
            )
        )
        self.refresh_button = QPushButton(_("&Refresh"))
        self.refresh_button.setObjectName("dashboard_refresh")
        self.close_button = QPushButton(_("Close"))
        self.settings_button.clicked.connect(self.change_settings)
        self.acknowledge_button.clicked.connect(self.acknowledge)
        self.approve_button.clicked.connect(self.approve_plan)
        self.refresh_button.clicked.connect(self.refresh)
        self.statement_button.clicked.connect(self.write_statement)
        self.close_button.clicked.connect(self.reject)
        for b in (
            self.settings_button,
            self.acknowledge_button,
            self.approve_button,
            self.statement_button,
            self.close_button,
        ):
            b.setAutoDefault(False)
        self.refresh_button.setAutoDefault(True)
        self.refresh_button.setDefault(True)

        datasets_label = QLabel(_("&Datasets of the team"))
        datasets_label.setBuddy(self.table)
        top = QWidget()
        top_lay = QVBoxLayout(top)
        top_lay.setContentsMargins(0, 0, 0, 0)
        top_lay.addWidget(datasets_label)
        top_lay.addWidget(self.table, 1)
        bottom = QWidget()
        bottom_lay = QVBoxLayout(bottom)
        bottom_lay.setContentsMargins(0, 0, 0, 0)
        bottom_lay.addWidget(self.latest_label)
        bottom_lay.addWidget(self.latest, 1)
        actions = QHBoxLayout()
        self.actions_label = QLabel(_("The selected dataset:"))
        actions.addWidget(self.actions_label)
        for b in (self.settings_button, self.acknowledge_button, self.approve_button):
            actions.addWidget(b)
        actions.addStretch(1)
        bottom_lay.addLayout(actions)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(bottom)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)

        lay = QVBoxLayout(self)
        lay.addWidget(self.summary)
        lay.addWidget(self.busy)
        lay.addWidget(self.message)
        lay.addWidget(self.splitter, 1)
        row = QHBoxLayout()
        row.addWidget(self.statement_button)
        row.addStretch(1)
        row.addWidget(self.refresh_button)
        row.addWidget(self.close_button)
        lay.addLayout(row)
        # the keyboard's order: the datasets, their latest releases, the actions on the selected one, then Refresh
        order: list[QWidget] = [
            self.table,
            self.latest,
            self.settings_button,
            self.acknowledge_button,
            self.approve_button,
            self.statement_button,
            self.refresh_button,
            self.close_button,
        ]
        for first, then in itertools.pairwise(order):
            QWidget.setTabOrder(first, then)
        # as large as the table needs, never past the screen (a 1024x700 screen shows it whole)
        screen = window.screen().availableGeometry()
        self.resize(min(1120, screen.width() - 24), min(700, screen.height() - 40))
        self.enable()
        self.refresh()

    # ------------------------------------------------------------------ what is shown
    def selected(self) -> dict[str, Any] | None:
        """The dataset selected in the table (None when none is)."""
        row = self.table.currentIndex().row()
        if 0 <= row < len(self.model.datasets):
            return self.model.datasets[row]
        return None

    def show_status(self, status: TeamStatus) -> None:
        """Show the server's answer, keeping the selected dataset selected."""
        before = self.selected()
        self.status = status
        details = status.details or {}
        if status.url is None:
            self.role = "auditor"
            self.summary.setText(
                _(
                    "This home uses its own ledgers, not a team's: connect it with Tools > Team ledger… to see the "
                    "team's datasets here."
                )
            )
            self.model.set_datasets([])
        else:
            self.role = role_of(details)
            datasets = status.datasets or []
            self.summary.setText(
                _("Team ledger at {server} · you are {user}, {role} · {n} dataset(s)").format(
                    server=status.url,
                    user=details.get("user", "?"),
                    role=role_words(self.role),
                    n=len(datasets),
                )
            )
            self.model.set_datasets(datasets)
        ids = [d["dataset"] for d in self.model.datasets]
        row = ids.index(before["dataset"]) if before is not None and before["dataset"] in ids else 0
        if ids:
            self.table.selectRow(row)
        self.show_selected()
        if self.notice:
            self.show_message(self.notice, error=False)
            self.notice = ""

    def show_selected(self) -> None:
        """The selected dataset's latest releases, and what may be done about it."""
        ds = self.selected()
        self.latest.setRowCount(0)
        if ds is None:
            self.latest_label.setText(_("Latest releases"))
        else:
            n = len(ds.get("latest") or [])
            self.latest_label.setText(
                _("Latest releases of {dataset} ({n} of {total})").format(
                    dataset=ds["dataset"], n=n, total=ds["releases"]
                )
            )
            for r in ds.get("latest") or []:
                row = self.latest.rowCount()
                self.latest.insertRow(row)
                charged = r["charged"]
                cells = [
                    r["released_by"],
                    local_time(r["released"]),
                    numfmt.epsilon(charged["epsilon"], "up"),
                    numfmt.delta(charged["delta"], "up"),
                    r.get("release_id") or "",
                ]
                if r.get("kind") == "import":  # a home's history brought in: its releases, charged together
                    cells[4] = _("imported: {n} release(s) of their home's dataset {source}").format(
                        n=r.get("releases", 0), source=r.get("imported_from", "")
                    )
                for col, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    if col == 1:
                        item.setToolTip(r["released"])  # the server's own record, UTC
                    if col in (2, 3):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.latest.setItem(row, col, item)
        self.enable()

    def enable(self) -> None:
        """The officer's buttons: enabled for an officer with a dataset they apply to; for anyone else disabled,
        with a tooltip saying who may act."""
        busy = self.worker is not None
        ds = self.selected()
        state = health(ds).kind if ds is not None else ""
        officer = self.role == "officer"
        only = _("Only the team's privacy officers may do this; you are {role}.").format(
            role=role_words(self.role)
        )
        rules = (
            (
                self.settings_button,
                state in ("ok", "pending", "broken"),
                _(
                    "Take the budget, unit of privacy and accounting method from a plan file (recorded with a reason)."
                ),
                _("A dataset merged into another takes no new settings."),
            ),
            (
                self.acknowledge_button,
                state == "broken",
                _("Accept this dataset's broken ledger for a reason, carrying over what it spent."),
                _("Only a broken dataset is acknowledged."),
            ),
            (
                self.approve_button,
                state in ("ok", "pending", "broken"),
                _(
                    "Sign an approval of a plan file for this dataset at its ledger head, with your private key."
                ),
                _("A dataset merged into another takes no approvals."),
            ),
        )
        for button, applies, tip, not_here in rules:
            button.setEnabled(officer and applies and not busy)
            button.setToolTip(only if not officer else tip if applies else not_here)
        self.refresh_button.setEnabled(not busy)
        self.statement_button.setEnabled(not busy and self.status is not None and self.status.url is not None)
        self.busy.setVisible(busy)

    def show_message(self, text: str, *, error: bool) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #c0392b" if error else "color: #1e7b34")
        self.message.setVisible(bool(text))

    # ------------------------------------------------------------------ the server, in a worker
    def _run(self, job: Callable[[], Any], done: Callable[[Any], None], label: str) -> Worker | None:
        if self.worker is not None:
            return None
        worker = Worker(lambda _progress: job())
        self.worker = worker
        self.show_message(label, error=False)
        self.message.setStyleSheet("color: #5d6d7e")

        def finished(result: Any) -> None:
            self.worker = None
            self.show_message("", error=False)
            done(result)
            self.enable()

        def failed(message: str, _details: str) -> None:
            self.worker = None
            self.notice = ""
            self.show_message(message, error=True)  # the engine's words, never a traceback
            self.enable()

        worker.signals.finished.connect(finished)
        worker.signals.failed.connect(failed)
        self.enable()
        start(worker, self.pool)
        return worker

    def refresh(self) -> Worker | None:
        """Ask the team's server again: who this user is, every dataset, their latest releases."""
        from dpdesk.services import team

        home = self.home
        url = team.in_use(home).url
        return self._run(
            lambda: team.status(home, latest=LATEST),
            self.show_status,
            _("Asking the team ledger at {server}…").format(server=url or "?"),
        )

    def _after(self, text: str) -> Callable[[Any], None]:
        """Say what was done, then ask the server again (the table shows the ledger, not a guess)."""

        def done(_result: Any) -> None:
            self.notice = text
            self.refresh()

        return done

    # ------------------------------------------------------------------ the officer's actions
    def change_settings(self) -> Worker | None:
        """(Officer) the selected dataset's budget, unit of privacy and accounting method from a plan file, with a
        reason recorded in its ledger (its first settings, for a dataset with no budget yet)."""
        from dpdesk.gui.actions.plan_file import plan_filter

        ds, window = self.selected(), self.window_
        if ds is None or not self.settings_button.isEnabled():
            return None
        dataset = ds["dataset"]
        plan = window.ask_open_path(_("The plan with the new settings"), plan_filter(), "plan")
        if not plan:
            return None
        reason = window.ask_text(_("Change settings"), _("Why (recorded in the ledger):")).strip()
        if not reason:
            return None
        home = self.home

        def job() -> Any:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import ChangeSettingsRequest, change_settings

            return change_settings(
                ChangeSettingsRequest(Dataset(home, dataset_id=dataset), Path(plan), reason)
            )

        return self._run(
            job,
            self._after(_("New settings recorded for {dataset}.").format(dataset=dataset)),
            _("Recording the new settings of {dataset}…").format(dataset=dataset),
        )

    def acknowledge(self) -> Worker | None:
        """(Officer) accept the selected dataset's broken ledger for a reason (what it spent is carried over); when
        it needs stated costs, the message says so and names the command that states them."""
        ds, window = self.selected(), self.window_
        if ds is None or not self.acknowledge_button.isEnabled():
            return None
        dataset = ds["dataset"]
        reason = window.ask_text(
            _("Acknowledge"), _("Why the broken ledger is accepted (recorded in it):")
        ).strip()
        if not reason:
            return None
        home = self.home

        def job() -> Any:
            from dpdesk.core.common.errors import UsageError
            from dpdesk.core.ledger.carryover import CostsNeeded
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import AcknowledgeRequest, acknowledge

            try:
                return acknowledge(AcknowledgeRequest(Dataset(home, dataset_id=dataset), reason))
            except CostsNeeded as exc:  # the stated costs are typed on the command line, not here (yet)
                raise UsageError(
                    _(
                        "{error}\n\nThe dashboard does not take stated costs: state them with dpdesk ledger "
                        'acknowledge --data FILE --reason "..." --cost ... on a computer that has the table.'
                    ).format(error=exc)
                ) from None

        return self._run(
            job,
            self._after(_("The broken ledger of {dataset} was acknowledged.").format(dataset=dataset)),
            _("Acknowledging {dataset}…").format(dataset=dataset),
        )

    def approve_plan(self) -> Worker | None:
        """(Officer) sign an approval of a plan file for the selected dataset at its ledger head, read from the
        team's chain (:func:`dpdesk.services.ledger.ledger_head`, :func:`dpdesk.services.officer.approve`)."""
        from dpdesk.gui.actions.plan_file import plan_filter

        ds, window = self.selected(), self.window_
        if ds is None or not self.approve_button.isEnabled():
            return None
        dataset = ds["dataset"]
        plan = window.ask_open_path(_("The plan to approve"), plan_filter(), "plan")
        if not plan:
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
        home = self.home

        def job() -> Any:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import HeadRequest, ledger_head
            from dpdesk.services.officer import ApproveRequest, approve, plan_approval

            head = ledger_head(HeadRequest(Dataset(home, dataset_id=dataset))).head
            params = plan_approval(Path(plan))
            return approve(
                ApproveRequest(Path(key), passphrase, dataset, head, "approve_plan", params, Path(out))
            )

        def done(result: Any) -> None:
            self.show_message(
                _(
                    "Wrote {out}: the plan approved for dataset {id} at ledger entry {seq}, signed by key {fp}."
                ).format(out=result.out, id=result.dataset, seq=result.head.seq, fp=result.fingerprint),
                error=False,
            )

        return self._run(job, done, _("Signing…"))

    def write_statement(self) -> Worker | None:
        """(Any role) the team's budget statement, one PDF of every dataset, verified on this computer
        (:func:`dpdesk.services.team.write_team_statement`), written in the worker."""
        window = self.window_
        if not self.statement_button.isEnabled():
            return None
        out = window.ask_save_path(
            _("Save the team's statement as"), _("PDF (*.pdf)"), "export", "team_statement.pdf"
        )
        if not out:
            return None
        home = self.home

        def job() -> Any:
            from dpdesk.services.team import write_team_statement

            return write_team_statement(home, Path(out), force=Path(out).exists())

        def done(result: Any) -> None:
            self.show_message(
                _("Wrote {out}: the statement of {n} dataset(s) of the team.").format(
                    out=result.out, n=result.datasets
                ),
                error=False,
            )

        return self._run(job, done, _("Writing the team's statement…"))
