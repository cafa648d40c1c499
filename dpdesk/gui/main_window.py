"""The main window: menus, the four tabs, the always-visible budget meter and noise preview."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QSettings, Qt, QThreadPool, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QGuiApplication, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common.progress import stage_label
from dpdesk.gui.actions.approvals import Approvals
from dpdesk.gui.actions.language import Language, language_names
from dpdesk.gui.actions.near_copy import NearCopy
from dpdesk.gui.actions.opening import Opening
from dpdesk.gui.actions.plan_file import PlanFile
from dpdesk.gui.actions.release import Release
from dpdesk.gui.actions.results import Results
from dpdesk.gui.actions.review import Review
from dpdesk.gui.actions.simulations import Simulations
from dpdesk.gui.actions.team import Dashboard, TeamLedger
from dpdesk.gui.actions.team_import import TeamImport
from dpdesk.gui.file_dialogs import FileDialogs
from dpdesk.gui.state import AppState
from dpdesk.gui.workers import Worker, start
from dpdesk.i18n import _, current_language

if TYPE_CHECKING:
    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QScreen

    from dpdesk.core.common.progress import Progress
    from dpdesk.core.release.steps import PreparedRelease
    from dpdesk.gui.state import ClusterSource
    from dpdesk.gui.views.engine_dialog import EngineChoice
    from dpdesk.gui.views.review_window import ReviewWindow
    from dpdesk.gui.views.simulate_dialog import SimulationChoice
    from dpdesk.gui.views.team_dashboard import TeamDashboard
    from dpdesk.gui.views.team_dialog import TeamDialog

log = logging.getLogger(__name__)
MAX_RECENT = 8
T = TypeVar("T")


def window_icon() -> QIcon:
    """dpdesk's icon (resources/icons/dpdesk.png, made by build_scripts/make_icons.py) for its windows."""
    from dpdesk.resources import resource

    return QIcon(str(resource("icons", "dpdesk.png")))


class MainWindow(QMainWindow):
    """dpdesk's main window. Dialogs go through :meth:`ask_*` hooks so that tests can answer them."""

    def __init__(
        self,
        state: AppState,
        settings: QSettings,
        pool: QThreadPool | None = None,
        *,
        defer_views: bool = False,
    ) -> None:
        """Build the window; with ``defer_views`` the tabs are filled at the first event-loop pass after show()."""
        super().__init__()
        self.state = state
        state.setParent(self)  # the state lives and dies with its window
        self.settings = settings
        self.files = FileDialogs(
            self, settings
        )  # the file dialogs' folders, names, and each table's last plan
        self.pool = pool
        self.job: Worker | None = None
        #: an officer's approval imported for the next release (File > Import an approval), used up by it
        self.pending_approval: Path | None = None
        #: a Spark Connect address with a token (File > Aggregation engine): kept while the app runs, never saved
        self.session_remote: str | None = None
        self.review_window: ReviewWindow | None = None  # the last review opened
        # the flows (dpdesk/gui/actions): each asks through this window's dialogs and runs its service as a job
        self.opening = Opening(self)
        self.plan_file = PlanFile(self)
        self.releasing = Release(self)
        self.simulations = Simulations(self)
        self.outputs = Results(self)
        self.reviewing = Review(self)
        self.approvals = Approvals(self)
        self.near_copies = NearCopy(self)
        self.team_ledger = TeamLedger(self)
        self.dashboard = Dashboard(self)
        self.team_import = TeamImport(self)
        self.language = Language(self)
        self.team_dialog: TeamDialog | None = None  # the last Team ledger dialog opened
        self.team_dashboard: TeamDashboard | None = None  # the Team dashboard, once opened
        self.setWindowTitle("dpdesk")
        self.setWindowIcon(window_icon())
        self.setAcceptDrops(True)
        self.views_ready = False

        self.tabs = QTabWidget()
        for title in (_("1 · Data"), _("2 · Queries"), _("3 · Results"), _("4 · Ledger")):
            self.tabs.addTab(QWidget(), title)
        self.right = QWidget()
        self.right_layout = QVBoxLayout(self.right)
        self.right_layout.setContentsMargins(0, 0, 0, 0)
        # the tabs under a banner that says, in words, what the current step still needs
        self.step_label = QLabel("")
        self.step_label.setObjectName("step_hint")
        self.step_label.setWordWrap(True)
        self.step_label.setStyleSheet(
            "QLabel { background: #eef2f6; color: #2c3e50; padding: 6px 8px; border-radius: 3px }"
        )
        # two lines' height whatever the step says, so that the tabs below never move when it changes
        self.step_label.setFixedHeight(2 * self.step_label.fontMetrics().lineSpacing() + 14)
        from dpdesk.gui.fit import elastic

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.step_label)
        left_layout.addWidget(self.tabs, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("main_split")
        split.addWidget(left)
        split.addWidget(self.right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([760, 560])
        from dpdesk.gui.views.welcome import WelcomePage

        self.welcome = WelcomePage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(split)
        self.main_page = split
        self.setCentralWidget(self.pages)
        self.welcome.open_button.clicked.connect(self.open_data)
        self.welcome.sample_button.clicked.connect(self.open_sample)
        self.welcome.review_button.clicked.connect(self.review)
        self.welcome.guide_button.clicked.connect(self.open_guide)
        self.welcome.empty_button.clicked.connect(self.show_main)
        self.welcome.recent_chosen.connect(self.open_path)
        self.tabs.currentChanged.connect(lambda _i: self._update_step())

        self._make_actions()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton(_("Cancel"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_job)
        self.status_label = QLabel("")
        elastic(self.status_label)  # a long message or path never widens the window
        #: "show" beside a message of several lines (a plan's problems): the list in a popup, not in the status bar
        self.status_more = QPushButton(_("show"))
        self.status_more.setObjectName("status_more")
        self.status_more.setFlat(True)
        self.status_more.setVisible(False)
        self.status_more.clicked.connect(self.show_status_details)
        #: a table opened with no plan whose last plan is remembered: "Open its last plan (name)", offered here,
        #: not asked in a box that stops the user (:meth:`offer_last_plan`)
        self.plan_offer = QPushButton("")
        self.plan_offer.setObjectName("plan_offer")
        self.plan_offer.setVisible(False)
        self.plan_offer.clicked.connect(self.open_offered_plan)
        self.offered_plan: Path | None = None
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addWidget(self.status_more)
        self.statusBar().addWidget(self.plan_offer)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)
        # one fixed height whatever it holds (a message, a progress bar, Cancel): the tabs never move under the mouse
        self.statusBar().setFixedHeight(
            max(w.sizeHint().height() for w in (self.status_label, self.progress, self.cancel_button)) + 6
        )
        #: the Yes button's words in the next confirmation (a verb: "Spend ε 1.5 and release"), then reset
        self.confirm_yes_text = ""
        self.status_details: list[str] = []
        self.status_popup: QMessageBox | None = None
        #: the last job's outcome in the window (:meth:`show_outcome`)
        self.outcome_box: QMessageBox | None = None

        state.plan_changed.connect(self._update_actions)
        state.data_changed.connect(self._update_actions)
        state.ledger_changed.connect(self._update_actions)
        state.results_changed.connect(self._update_actions)  # a release: the status line says what it spent
        state.plan_changed.connect(self._leave_welcome)
        state.plan_changed.connect(self._withdraw_plan_offer)
        state.data_changed.connect(self._leave_welcome)
        state.undo_stack.cleanChanged.connect(lambda _c: self.update_title())
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.fit_to_screen(first_start=geometry is None)
        if not defer_views:
            self.build_views()

    def set_status(self, text: str) -> None:
        """The status line: one line of fixed height. A message of several lines (a plan's problems) shows its
        first line and "show", which lists the rest in a popup (:meth:`show_status_details`)."""
        lines = [ln.strip().lstrip("-•").strip() for ln in text.splitlines() if ln.strip()]
        self.status_label.setText(lines[0].rstrip(":：") if lines else "")
        self.status_label.setToolTip(text if len(lines) > 1 else "")
        self.status_details = lines[1:]
        self.status_more.setVisible(bool(self.status_details))

    def show_status_details(self) -> QMessageBox:
        """The status line's list (a plan's problems) in a popup, one item a line."""
        box = QMessageBox(
            QMessageBox.Icon.Information,
            _("dpdesk"),
            self.status_label.text(),
            QMessageBox.StandardButton.Close,
            self,
        )
        box.setInformativeText("\n".join(f"• {line}" for line in self.status_details))
        box.setModal(False)
        box.show()
        self.status_popup = box
        return box

    #: the window's size at first start, where the screen has room for it (and its frame)
    PREFERRED_SIZE = (1320, 820)
    #: room left around the window for its frame and title bar, which resize() does not count
    FRAME_ROOM = (16, 48)

    def fit_to_screen(self, *, first_start: bool) -> None:
        """At first start, the preferred size where the screen has room for it, else the screen's available room
        less the frame (a 1024×700 screen showed a window cut at its right edge); a saved geometry larger than this
        screen (saved on a larger one) is brought within it the same way."""
        screen: QScreen | None = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:  # pragma: no cover - Qt always has a screen, offscreen too
            return
        room = screen.availableGeometry()
        max_w, max_h = room.width() - self.FRAME_ROOM[0], room.height() - self.FRAME_ROOM[1]
        want_w, want_h = self.PREFERRED_SIZE if first_start else (self.width(), self.height())
        if want_w <= max_w and want_h <= max_h:
            if first_start:
                self.resize(want_w, want_h)
            return
        self.resize(min(want_w, max(max_w, 1)), min(want_h, max(max_h, 1)))
        self.move(room.topLeft())

    def build_views(self) -> None:
        """Create the tabs' contents, the budget meter and the preview (idempotent)."""
        if self.views_ready:
            return
        from dpdesk.gui.views.budget_meter import BudgetMeter
        from dpdesk.gui.views.ledger_view import LedgerView
        from dpdesk.gui.views.preview_panel import PreviewPanel
        from dpdesk.gui.views.query_form import QueryForm
        from dpdesk.gui.views.results_view import ResultsView
        from dpdesk.gui.views.schema_view import SchemaView

        state = self.state
        self.schema_view = SchemaView(state)
        self.query_form = QueryForm(state)
        self.results_view = ResultsView(state)
        self.ledger_view = LedgerView(state)
        current = self.tabs.currentIndex()
        for i, (view, title) in enumerate(
            (
                (self.schema_view, _("1 · Data")),
                (self.query_form, _("2 · Queries")),
                (self.results_view, _("3 · Results")),
                (self.ledger_view, _("4 · Ledger")),
            )
        ):
            old = self.tabs.widget(i)
            self.tabs.removeTab(i)
            self.tabs.insertTab(i, view, title)
            if old is not None:
                old.deleteLater()
        self.tabs.setCurrentIndex(current)
        self.meter = BudgetMeter(state)
        self.preview = PreviewPanel(state)
        self.right_layout.addWidget(self.meter)
        self.show_ledger_in_use()
        self.right_layout.addWidget(self.preview, 1)
        self.query_form.selection_changed.connect(self.preview.show_query)
        self.query_form.look_view.look_ready.connect(self.preview.show_look)
        self.preview.fidelity_requested.connect(self.estimate_fidelity)
        self.schema_view.codebook_button.clicked.connect(self.import_codebook)
        self.results_view.export_button.clicked.connect(self.export_release)
        self.results_view.save_table_button.clicked.connect(self.save_synthetic_table)
        state.results_changed.connect(self.load_synthetic)
        self.ledger_view.statement_button.clicked.connect(self.export_statement)
        self.ledger_view.link_button.clicked.connect(self.link_near_copy)
        self.ledger_view.declare_button.clicked.connect(self.declare_near_copy_new)
        self.ledger_view.shown.connect(lambda: self.tabs.setCurrentWidget(self.results_view))
        from dpdesk.gui.fit import compact

        compact(self)
        self.remember_splitters()
        from dpdesk.gui import access

        # accessible names from the labels beside each input; again when a tab or a query's form changes
        access.name_all(self)
        self.tabs.currentChanged.connect(lambda _i: access.name_all(self))
        self.query_form.selection_changed.connect(lambda *_a: access.name_all(self.query_form))
        self.views_ready = True
        self._update_actions()

    def remember_splitters(self) -> None:
        """Every named splitter keeps where the user put it (QSettings "splitters/<name>", as the window's
        geometry)."""
        for split in self.findChildren(QSplitter):
            name = split.objectName()
            if not name:
                continue
            saved = self.settings.value(f"splitters/{name}")
            if saved is not None and split.restoreState(saved):
                split.setProperty("restored", True)
            split.splitterMoved.connect(
                lambda _pos, _i, s=split, n=name: self.settings.setValue(f"splitters/{n}", s.saveState())
            )

    # ------------------------------------------------------------------ actions
    def _make_actions(self) -> None:
        def act(
            text: str,
            slot: Callable[[], object],
            shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
            tip: str = "",
        ) -> QAction:
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setToolTip(tip)
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            return a

        self.open_action = act(
            _("&Open table…"),
            self.open_data,
            QKeySequence.StandardKey.Open,
            _("Open a CSV, Excel or Parquet table"),
        )
        self.open_database_action = act(
            _("Open &database table…"),
            self.open_database,
            None,
            _("Open a table (or a query's rows) in PostgreSQL"),
        )
        self.open_spark_action = act(
            _("Open &Spark table…"),
            self.open_spark,
            None,
            _(
                "Open a table only the cluster reads (a catalog table, a folder or a URI): its header, read by Spark"
            ),
        )
        self.open_plan_action = act(_("Open &plan…"), self.open_plan, "Ctrl+Shift+O")
        self.review_action = act(
            _("Re&view release…"),
            self.review,
            "Ctrl+Shift+R",
            _("Check a release package or an exported ledger (read-only)"),
        )
        self.save_action = act(_("&Save plan"), self.save_plan, QKeySequence.StandardKey.Save)
        self.save_as_action = act(
            _("Save plan &as…"), lambda: self.save_plan(ask=True), QKeySequence.StandardKey.SaveAs
        )
        self.release_action = act(
            _("&Release…"),
            self.release,
            "Ctrl+R",
            _("Charge the ledger, draw the noise and show the noisy results"),
        )
        self.engine_action = act(
            _("Aggregation en&gine…"),
            self.choose_engine,
            None,
            _("Where a release computes the table's exact statistics: this computer, or Apache Spark"),
        )
        self.simulate_action = act(
            _("&Simulate releases…"),
            self.simulate_releases,
            "Ctrl+Shift+M",
            _(
                "Uncharged noisy releases on a stand-in table or a public file, for "
                "accuracy previews (not for publication; never on the table you release "
                "from)"
            ),
        )
        self.approve_plan_action = act(
            _("&Approve a plan…"),
            self.approve_plan,
            None,
            _("(Privacy officer) sign an approval of the open plan and its budget with your private key"),
        )
        self.import_approval_action = act(
            _("&Import an approval…"),
            self.import_approval,
            None,
            _("Attach a privacy officer's signed approval to the next release"),
        )
        self.team_action = act(
            _("&Team ledger…"),
            self.open_team_ledger,
            None,
            _("Which ledger this home uses: its own files, or a team's ledger on a PostgreSQL server"),
        )
        self.dashboard_action = act(
            _("Team &dashboard…"),
            self.open_team_dashboard,
            "Ctrl+Shift+D",
            _(
                "Every dataset of the team ledger: budget, spent, left, latest releases, what needs attention, and "
                "the privacy officer's actions"
            ),
        )
        self.team_import_action = act(
            _("Import this table's &history into the team…"),
            self.import_team_history,
            None,
            _(
                "Charge the open table's releases from this home's own ledger to the team's ledger, and close this "
                "home's own ledger of it (dpdesk team import)"
            ),
        )
        self.export_action = act(
            _("&Export release…"),
            self.export_release,
            "Ctrl+E",
            _(
                "Write release.csv, the PDF report, the plan and a copy of the ledger into a folder (costs nothing)"
            ),
        )
        self.statement_action = act(
            _("Budget s&tatement (PDF)…"),
            self.export_statement,
            "Ctrl+Shift+E",
            _("Every release of this dataset and what is left, as a PDF"),
        )
        self.add_query_action = act(_("&Add query"), self.add_query, "Ctrl+N", _("Add a query to the plan"))
        self.remove_query_action = act(
            _("Re&move query"), self.remove_query, "Ctrl+Delete", _("Remove the selected query from the plan")
        )
        self.tab_actions = [
            act(title, functools.partial(self.show_tab, i), f"Ctrl+{i + 1}")
            for i, title in enumerate(
                (_("&Data tab"), _("&Queries tab"), _("&Results tab"), _("&Ledger tab"))
            )
        ]
        self.shortcuts_action = act(_("&Keyboard shortcuts"), self.show_shortcuts, "Ctrl+/")
        self.quit_action = act(_("&Quit"), self.close, QKeySequence.StandardKey.Quit)
        self.undo_action = self.state.undo_stack.createUndoAction(self, _("&Undo"))
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.state.undo_stack.createRedoAction(self, _("&Redo"))
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.recent_menu = None

        bar = self.menuBar()
        file_menu = bar.addMenu(_("&File"))
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_database_action)
        file_menu.addAction(self.open_spark_action)
        self.recent_menu = file_menu.addMenu(_("Open &recent"))
        file_menu.addAction(self.open_plan_action)
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.save_as_action)
        file_menu.addSeparator()
        file_menu.addAction(self.release_action)
        file_menu.addAction(self.engine_action)
        file_menu.addAction(self.export_action)
        file_menu.addAction(self.statement_action)
        file_menu.addAction(self.review_action)
        file_menu.addAction(self.import_approval_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu(_("&Edit"))
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        edit_menu.addSeparator()
        edit_menu.addAction(self.add_query_action)
        edit_menu.addAction(self.remove_query_action)
        view_menu = bar.addMenu(_("&View"))
        for a in self.tab_actions:
            view_menu.addAction(a)
        tools_menu = bar.addMenu(_("&Tools"))
        tools_menu.addAction(self.simulate_action)
        tools_menu.addAction(self.approve_plan_action)
        tools_menu.addSeparator()
        tools_menu.addAction(self.team_action)
        tools_menu.addAction(self.dashboard_action)
        tools_menu.addAction(self.team_import_action)
        tools_menu.addSeparator()
        # named in English too in another language, so that someone who cannot read it finds the way back
        self.language_menu = tools_menu.addMenu(
            _("&Language") + ("" if current_language() == "en" else " · Language")
        )
        self.language_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for code, name in language_names():
            a = QAction(name, self, checkable=True)
            a.setChecked(code == self.language.chosen())
            a.triggered.connect(lambda _checked=False, c=code: self.language.choose(c))
            group.addAction(a)
            self.language_menu.addAction(a)
            self.language_actions[code] = a
        help_menu = bar.addMenu(_("&Help"))
        self.guide_action = act(
            _("&Guide to differential privacy…"),
            self.open_guide,
            QKeySequence.StandardKey.HelpContents,
        )
        help_menu.addAction(self.guide_action)
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(act(_("&About dpdesk"), self.about))
        self._fill_recent()

        tb = QToolBar(_("Main"))
        tb.setObjectName("main_toolbar")
        tb.setMovable(False)
        tb.addAction(self.open_action)
        tb.addAction(self.save_action)
        tb.addSeparator()
        tb.addAction(self.undo_action)
        tb.addAction(self.redo_action)
        tb.addSeparator()
        tb.addAction(self.simulate_action)
        tb.addAction(self.release_action)
        self.addToolBar(tb)

    def _fill_recent(self) -> None:
        assert self.recent_menu is not None
        self.recent_menu.clear()
        for path in self.recent_files():
            a = QAction(path, self)
            a.triggered.connect(lambda _c=False, p=path: self.open_path(p))
            self.recent_menu.addAction(a)
        self.recent_menu.setEnabled(bool(self.recent_files()))
        if hasattr(self, "welcome"):
            self.welcome.set_recent(self.recent_files())

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent/files", [])
        if isinstance(value, str):  # QSettings gives one string for a list of one
            return [value]
        return [str(v) for v in value] if isinstance(value, list | tuple) else []

    def add_recent(self, path: Path | str) -> None:
        """Remember a table or a plan by its absolute path (a relative one would depend on the folder dpdesk
        was started from), a database table by its URL (which holds no password)."""
        from dpdesk.core.common.dataurl import is_database_url

        text = str(path)
        kept = (
            is_database_url(text) or text.startswith("table:") or "://" in text
        )  # a URL or a cluster's table
        name = text if isinstance(path, str) and kept else os.path.abspath(path)
        files = [name] + [f for f in self.recent_files() if f != name]
        self.settings.setValue("recent/files", files[:MAX_RECENT])
        self._fill_recent()

    def _update_actions(self) -> None:
        ok, why = self.state.can_release()
        busy = self.job is not None
        self.release_action.setEnabled(ok and not busy)
        self.release_action.setToolTip(
            why or _("Charge the ledger, draw the noise and show the noisy results")
        )
        self.open_action.setEnabled(not busy)
        self.open_spark_action.setEnabled(not busy)
        self.review_action.setEnabled(not busy)
        self.simulate_action.setEnabled(self.state.plan is not None and not busy)
        self.export_action.setEnabled(bool(self.state.results) and not busy)
        self.statement_action.setEnabled(not busy)
        for a in (self.add_query_action, self.remove_query_action):
            a.setEnabled(not busy and self.views_ready)
        if not busy and hasattr(self, "meter") and self.meter.just_released():
            self.set_status(
                self.meter.headline.text()
            )  # released: what was spent and is left, not "over budget"
        elif not busy:  # while a job runs, the status line says what it is doing
            self.set_status(why if not ok else _("Ready to release."))
        self.update_title()
        self._update_step()

    # ------------------------------------------------------------------ a table's last plan
    def offer_last_plan(self) -> None:
        """A table was opened with no plan: offer the plan last used with it, if its file is still there, by a
        button in the status line that stays until used or until a plan is opened or begun."""
        s = self.state
        plan = None
        if s.data_path is not None and s.plan_path is None and not s.dirty and not s.plan_data.get("queries"):
            plan = self.files.last_plan(s.data_path)
        self.offered_plan = plan
        if plan is not None:
            self.plan_offer.setText(_("Open its last plan ({name})").format(name=plan.name))
            self.plan_offer.setToolTip(str(plan))
        self.plan_offer.setVisible(plan is not None)

    def open_offered_plan(self) -> bool:
        """The status line's offer taken: open the table's last plan."""
        plan, self.offered_plan = self.offered_plan, None
        self.plan_offer.setVisible(False)
        return plan is not None and self.open_plan(str(plan))

    def _withdraw_plan_offer(self) -> None:
        s = self.state
        if self.offered_plan is not None and (s.plan_path is not None or s.plan_data.get("queries")):
            self.offered_plan = None
            self.plan_offer.setVisible(False)

    # ------------------------------------------------------------------ the welcome page and the steps
    def show_main(self) -> None:
        """Leave the welcome page for the numbered tabs."""
        self.pages.setCurrentWidget(self.main_page)

    def _leave_welcome(self) -> None:
        s = self.state
        if (
            s.data_path is not None
            or s.plan_path is not None
            or s.plan_data.get("queries")
            or s.plan_data.get("columns")
        ):
            self.show_main()

    def _update_step(self) -> None:
        if not self.views_ready:
            return
        from dpdesk.gui.views.steps import what_is_missing

        text = what_is_missing(self.state, self.tabs.currentIndex())
        self.step_label.setText(text)
        self.step_label.setToolTip(text)

    def update_title(self) -> None:
        name = self.state.data_path.name if self.state.data_path else _("no table")
        plan = self.state.plan_path.name if self.state.plan_path else _("unsaved plan")
        self.setWindowTitle(f"dpdesk — {name} — {plan}{' *' if self.state.dirty else ''}")

    # ------------------------------------------------------------------ dialogs (overridable in tests)
    # each kind of file (table, plan, export, package, ...) opens in the folder last chosen for it (dpdesk.gui.file_dialogs)
    def ask_open_path(self, title: str, filt: str, kind: str = "file") -> str:
        return self.files.open_file(title, filt, kind)

    def ask_save_path(self, title: str, filt: str, kind: str = "file", name: str = "") -> str:
        """A file to write, proposed as ``name`` in the folder last used for ``kind``."""
        return self.files.save_file(title, filt, kind, name)

    def ask_folder(self, title: str, kind: str = "package", name: str = "") -> str:
        """An existing folder; with ``name``, a folder to write into, proposed as ``name`` and made if new."""
        if name:
            return self.files.new_folder(title, kind, name)
        return self.files.folder_to_open(title, kind)

    def confirm_box(self, title: str, text: str) -> QMessageBox:
        """A yes/no question whose default (Return) and escape button is No: Return never spends."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        if self.confirm_yes_text:  # verbs on the buttons: what Yes does, and Cancel
            box.button(QMessageBox.StandardButton.Yes).setText(self.confirm_yes_text)
            box.button(QMessageBox.StandardButton.No).setText(_("Cancel"))
            self.confirm_yes_text = ""
        return box

    def show_outcome(self, text: str, path: Path) -> QMessageBox:
        """What a job wrote, said in the window (not only in the status line): a box that stays until closed,
        without blocking, with a button that opens the folder it went to."""
        self.set_status(text)
        if self.outcome_box is not None:
            self.outcome_box.close()
        box = QMessageBox(
            QMessageBox.Icon.Information, _("dpdesk"), text, QMessageBox.StandardButton.Close, self
        )
        folder = path if path.is_dir() else path.parent
        open_button = box.addButton(_("Open folder"), QMessageBox.ButtonRole.ActionRole)
        open_button.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))))
        box.setModal(False)
        box.show()
        self.outcome_box = box
        return box

    def ask_restart(self, title: str, text: str) -> bool:
        """Restart now (True) or later."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        now = box.addButton(_("Restart now"), QMessageBox.ButtonRole.AcceptRole)
        later = box.addButton(_("Later"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(later)
        box.exec()
        return box.clickedButton() is now

    def ask_confirm(self, title: str, text: str) -> bool:
        box = self.confirm_box(title, text)
        box.exec()
        return box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        return QMessageBox.question(
            self,
            _("Unsaved plan"),
            _("The plan has unsaved changes. Save them?"),
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
        )

    def ask_passphrase(self, title: str, label: str) -> str:
        from PySide6.QtWidgets import QInputDialog, QLineEdit

        text, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Password)
        return text if ok else ""

    def ask_text(self, title: str, label: str) -> str:
        from PySide6.QtWidgets import QInputDialog

        text, ok = QInputDialog.getText(self, title, label)
        return text if ok else ""

    def show_info(self, title: str, text: str) -> None:
        QMessageBox.information(self, title, text)

    def ask_engine(self, choice: EngineChoice) -> EngineChoice | None:
        """The aggregation engine's dialog (it checks the address before it closes), or None if cancelled."""
        from dpdesk.gui.views.engine_dialog import EngineDialog

        dialog = EngineDialog(choice, self)
        if dialog.exec() != EngineDialog.DialogCode.Accepted:
            return None
        return dialog.choice()

    def ask_spark_source(self, last: ClusterSource | None, engine: EngineChoice) -> ClusterSource | None:
        """File > Open Spark table's dialog (it checks the source and that Spark is chosen), or None if cancelled."""
        from dpdesk.gui.views.spark_dialog import SparkDialog

        dialog = SparkDialog(last, engine, self.choose_engine, self)
        if dialog.exec() != SparkDialog.DialogCode.Accepted:
            return None
        return dialog.opened()

    def ask_simulation(self) -> SimulationChoice | None:
        """The simulation dialog's choice (a SimulationChoice), or None if cancelled."""
        from dpdesk.core.preview.simulate import simulation_notice
        from dpdesk.gui.views.simulate_dialog import SimulateDialog

        table = self.state.data_path
        name = f"{table.stem}_simulated_releases.csv" if table is not None else "simulated_releases.csv"
        dialog = SimulateDialog(
            self,
            lambda title, filt: self.ask_open_path(title, filt, "public"),
            lambda title, filt: self.ask_save_path(title, filt, "simulation", name),
            simulation_notice(),
        )
        if dialog.exec() != SimulateDialog.DialogCode.Accepted:
            return None
        return dialog.choice()

    def ask_fidelity(self, query: str) -> tuple[Path, int] | None:
        """The fidelity dialog's choice (public file, runs), or None if cancelled."""
        from dpdesk.core.preview.simulate import simulation_notice
        from dpdesk.gui.views.fidelity_dialog import FidelityDialog

        dialog = FidelityDialog(
            self, query, lambda title, filt: self.ask_open_path(title, filt, "public"), simulation_notice()
        )
        if dialog.exec() != FidelityDialog.DialogCode.Accepted:
            return None
        return dialog.choice()

    def show_error(self, message: str, details: str = "") -> None:
        log.warning("shown to the user: %s", message)
        box = QMessageBox(QMessageBox.Icon.Warning, _("dpdesk"), message, parent=self)
        if details:
            box.setDetailedText(details)
        box.exec()

    # ------------------------------------------------------------------ jobs
    def run_job(self, job: Callable[[Progress], T], on_done: Callable[[T], None], label: str) -> Worker:
        """Run ``job`` in the worker, with the progress bar and Cancel in the status bar and the actions that
        would start another job disabled; ``on_done`` gets its result on the GUI thread, an error is shown."""
        worker = Worker(job)
        self.job = worker
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.set_status(label)

        def progress(done: int, total: int, stage: str) -> None:
            if total > 0:
                self.progress.setRange(0, total)
                self.progress.setValue(done)
            self.progress.setFormat(f"{stage_label(stage)} %p%")

        def finish() -> None:
            self.job = None
            self.progress.setVisible(False)
            self.cancel_button.setVisible(False)
            self._update_actions()

        def done(result: T) -> None:
            finish()
            on_done(result)

        def failed(message: str, details: str) -> None:
            finish()
            self.show_error(message, details)

        def cancelled() -> None:
            finish()
            self.set_status(_("Cancelled; nothing changed."))

        worker.signals.progress.connect(progress)
        worker.signals.finished.connect(done)
        worker.signals.failed.connect(failed)
        worker.signals.cancelled.connect(cancelled)
        self._update_actions()
        start(worker, self.pool)
        return worker

    def cancel_job(self) -> None:
        if self.job is not None:
            self.job.cancel()

    # ------------------------------------------------------------------ the flows (gui/actions), by their names
    def open_path(self, path: str) -> Worker | bool | None:
        """Open what ``path`` is: a package or a ledger for review, a plan, a table (:mod:`.actions.opening`)."""
        return self.opening.open_path(path)

    def open_data(self, path: str | None = None) -> Worker | None:
        """File > Open table (asked when ``path`` is not given)."""
        return self.opening.open_data(path)

    def open_database(self, url: str | None = None) -> Worker | None:
        """File > Open database table (asked when ``url`` is not given)."""
        return self.opening.open_database(url)

    def open_spark(self, source: str | None = None) -> Worker | None:
        """File > Open Spark table (asked when ``source`` is not given): a table only the cluster reads."""
        return self.opening.open_spark(source)

    def open_sample(self) -> Worker | None:
        """The welcome page's sample: the bundled table and its plan, unsaved."""
        return self.opening.open_sample()

    def open_plan(self, path: str | None = None) -> bool:
        """File > Open plan (asked when ``path`` is not given)."""
        return self.plan_file.open_plan(path)

    def save_plan(self, ask: bool = False) -> bool:
        """File > Save plan; with ``ask``, Save plan as."""
        return self.plan_file.save_plan(ask)

    def maybe_save(self) -> bool:
        """Save, discard or keep the plan's unsaved changes; False when the user cancelled."""
        return self.plan_file.maybe_save()

    def import_codebook(self) -> None:
        """The Data tab's codebook import."""
        self.plan_file.import_codebook()

    def release(self) -> Worker | None:
        """File > Release: prepare, confirm, commit (:mod:`.actions.release`)."""
        return self.releasing.release()

    def _charge_and_release(self, prepared: PreparedRelease, approval: Path | None) -> Worker:
        """The release's second step, after the confirmation (a test watches it here)."""
        return self.releasing.charge_and_release(prepared, approval)

    def choose_engine(self) -> EngineChoice | None:
        """File > Aggregation engine: this computer or Spark (:meth:`.actions.release.Release.choose_engine`)."""
        return self.releasing.choose_engine()

    def simulate_releases(self) -> Worker | None:
        """Tools > Simulate releases."""
        return self.simulations.simulate_releases()

    def estimate_fidelity(self, query: str) -> Worker | None:
        """The preview's fidelity estimate of a synthetic-table query."""
        return self.simulations.estimate_fidelity(query)

    def export_release(self) -> Worker | None:
        """The Results tab's Export: the release package."""
        return self.outputs.export_release()

    def load_synthetic(self) -> Worker | None:
        """The shown release's synthetic tables, regenerated from its ledger entry for the Results tab."""
        return self.outputs.load_synthetic()

    def save_synthetic_table(self) -> None:
        """The Results tab's Save table: the shown synthetic table as CSV."""
        self.outputs.save_synthetic_table()

    def export_statement(self, path: str | None = None) -> Worker | None:
        """The Ledger tab's budget statement (PDF)."""
        return self.outputs.export_statement(path)

    def review(self, path: str | None = None) -> Worker | None:
        """File > Review release: a package or an exported ledger, read-only."""
        return self.reviewing.review(path)

    def approve_plan(self) -> Worker | None:
        """Tools > Approve a plan (the privacy officer)."""
        return self.approvals.approve_plan()

    def import_approval(self, path: str | None = None) -> bool:
        """File > Import an approval, attached to the next release."""
        return self.approvals.import_approval(path)

    def link_near_copy(self) -> Worker | None:
        """The Ledger tab: charge a near copy to the dataset it resembles."""
        return self.near_copies.link_near_copy()

    def declare_near_copy_new(self) -> Worker | None:
        """The Ledger tab: declare a near copy a new dataset (the officer)."""
        return self.near_copies.declare_near_copy_new()

    def import_team_history(self) -> Worker | None:
        """Tools > Import this table's history into the team (:mod:`.actions.team_import`)."""
        return self.team_import.import_history()

    def open_team_ledger(self) -> TeamDialog:
        """Tools > Team ledger: connect this home to a team's ledger, or disconnect it (:mod:`.actions.team`)."""
        return self.team_ledger.open_dialog()

    def open_team_dashboard(self) -> TeamDashboard:
        """Tools > Team dashboard: the team's datasets and the officer's actions (:mod:`.actions.team`)."""
        return self.dashboard.open_dashboard()

    def show_ledger_in_use(self) -> None:
        """The line beside the budget: which ledger this home uses."""
        if hasattr(self, "meter"):  # the views are built
            text, tip = self.team_ledger.line()
            self.meter.show_ledger(text, tip)

    def show_tab(self, index: int, *_checked: object) -> None:
        """View > Data, Queries, Results, Ledger (Ctrl+1 to Ctrl+4): that tab, with the keyboard's focus in it."""
        if self.pages.currentWidget() is not self.main_page:
            return  # the welcome page: no table or plan yet
        self.tabs.setCurrentIndex(index)
        page = self.tabs.currentWidget()
        if page is not None:
            page.setFocus(Qt.FocusReason.ShortcutFocusReason)
            page.focusNextChild()

    def add_query(self) -> None:
        """Edit > Add query (Ctrl+N): a new query in the Queries tab, its name ready to type."""
        if self.views_ready and self.pages.currentWidget() is self.main_page:
            self.tabs.setCurrentWidget(self.query_form)
            self.query_form.add()
            self.query_form.name.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.query_form.name.selectAll()

    def remove_query(self) -> None:
        """Edit > Remove query (Ctrl+Delete): the selected query (undo brings it back)."""
        if self.views_ready and self.pages.currentWidget() is self.main_page:
            self.tabs.setCurrentWidget(self.query_form)
            self.query_form.remove()

    def show_shortcuts(self) -> QDialog:
        """Help > Keyboard shortcuts: every action's keys, read from the actions themselves."""
        from dpdesk.gui.views.shortcuts import ShortcutsDialog

        dialog = ShortcutsDialog(self)
        self.shortcuts_dialog = dialog
        dialog.show()
        return dialog

    def open_guide(self, page: str | None = None) -> None:
        """Help > Guide (and the welcome page): what differential privacy promises and how to use dpdesk."""
        from dpdesk.gui.views.guide import open_guide

        open_guide(self, page if isinstance(page, str) else None)  # QAction.triggered passes a bool

    def about(self) -> None:
        """Help > About: the version, the licence, the third-party notices and Qt's LGPL notice."""
        from dpdesk.gui.views.about import AboutDialog

        dialog = AboutDialog(self)
        self.about_dialog = dialog
        dialog.show()

    # ------------------------------------------------------------------ window events
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_path(urls[0].toLocalFile())

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.job is not None:
            self.job.cancel()
        if not self.maybe_save():
            event.ignore()
            return
        # drop discarded edits now: the stack's destructor would announce them to a half-deleted window
        self.state.undo_stack.clear()
        self.settings.setValue("window/geometry", self.saveGeometry())
        event.accept()
