"""The main window: menus, the four tabs, the always-visible budget meter and noise preview."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtGui import QAction, QGuiApplication, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
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

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.progress import stage_label
from dpdesk.gui.state import AppState
from dpdesk.gui.workers import Worker, start
from dpdesk.i18n import _

if TYPE_CHECKING:
    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent

    from dpdesk.core.common.progress import Progress
    from dpdesk.core.ledger.budget import BudgetReport

log = logging.getLogger(__name__)
MAX_RECENT = 8


def window_icon() -> QIcon:
    """dpdesk's icon (resources/icons/dpdesk.png, made by build_scripts/make_icons.py) for its windows."""
    from dpdesk.resources import resource

    return QIcon(str(resource("icons", "dpdesk.png")))


def data_filter() -> str:
    """The file dialog's filter for tables."""
    return _("Tables") + " (*.csv *.tsv *.txt *.xlsx *.parquet);;" + _("All files") + " (*)"


def plan_filter() -> str:
    """The file dialog's filter for plans."""
    return _("dpdesk plans") + " (*.json);;" + _("All files") + " (*)"


def package_folder(chosen: Path, number: int) -> Path:
    """Where an export goes: the chosen folder if it is new or empty, else a new folder in it named after the
    release (``release-N``, then ``release-N (2)``, ...); the export makes it."""
    try:
        empty = not chosen.exists() or (chosen.is_dir() and not any(chosen.iterdir()))
    except OSError:
        empty = False
    if empty:
        return chosen
    base = f"release-{number}"
    out, k = chosen / base, 2
    while out.exists():
        out, k = chosen / f"{base} ({k})", k + 1
    return out


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
        self.pool = pool
        self.job: Worker | None = None
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
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.step_label)
        left_layout.addWidget(self.tabs, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
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
        from dpdesk.gui.fit import elastic

        elastic(self.status_label)  # a long message or path never widens the window
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)

        state.plan_changed.connect(self._update_actions)
        state.data_changed.connect(self._update_actions)
        state.ledger_changed.connect(self._update_actions)
        state.results_changed.connect(self._update_step)
        state.plan_changed.connect(self._leave_welcome)
        state.data_changed.connect(self._leave_welcome)
        state.undo_stack.cleanChanged.connect(lambda _c: self._update_title())
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        self.fit_to_screen(first_start=geometry is None)
        if not defer_views:
            self.build_views()

    def set_status(self, text: str) -> None:
        """The status line: one line (a message of several lines, a plan's problems say, is joined into one and
        kept whole in the tooltip), so the status bar never grows taller and takes room from the tabs."""
        lines = [ln.strip().lstrip("-•").strip() for ln in text.splitlines() if ln.strip()]
        self.status_label.setText(" ".join(lines[:1] + ["; ".join(lines[1:])]).strip())
        self.status_label.setToolTip(text if len(lines) > 1 else "")

    #: the window's size at first start, where the screen has room for it (and its frame)
    PREFERRED_SIZE = (1320, 820)
    #: room left around the window for its frame and title bar, which resize() does not count
    FRAME_ROOM = (16, 48)

    def fit_to_screen(self, *, first_start: bool) -> None:
        """At first start, the preferred size where the screen has room for it, else the screen's available room
        less the frame (a 1024×700 screen showed a window cut at its right edge); a saved geometry larger than this
        screen (saved on a larger one) is brought within it the same way."""
        screen = self.screen() or QGuiApplication.primaryScreen()
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
            old.deleteLater()
        self.tabs.setCurrentIndex(current)
        self.meter = BudgetMeter(state)
        self.preview = PreviewPanel(state)
        self.right_layout.addWidget(self.meter)
        self.right_layout.addWidget(self.preview, 1)
        self.query_form.selection_changed.connect(self.preview.show_query)
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
        self.views_ready = True
        self._update_actions()

    # ------------------------------------------------------------------ actions
    def _make_actions(self) -> None:
        def act(text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
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
        self.open_plan_action = act(_("Open &plan…"), self.open_plan, "Ctrl+Shift+O")
        self.review_action = act(
            _("Re&view release…"),
            self.review,
            None,
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
        self.simulate_action = act(
            _("&Simulate releases…"),
            self.simulate_releases,
            None,
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
        self.pending_approval: Path | None = None
        self.quit_action = act(_("&Quit"), self.close, QKeySequence.StandardKey.Quit)
        self.undo_action = self.state.undo_stack.createUndoAction(self, _("&Undo"))
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.state.undo_stack.createRedoAction(self, _("&Redo"))
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        self.recent_menu = None

        bar = self.menuBar()
        file_menu = bar.addMenu(_("&File"))
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu(_("Open &recent"))
        file_menu.addAction(self.open_plan_action)
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.save_as_action)
        file_menu.addSeparator()
        file_menu.addAction(self.release_action)
        file_menu.addAction(self.review_action)
        file_menu.addAction(self.import_approval_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu(_("&Edit"))
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        tools_menu = bar.addMenu(_("&Tools"))
        tools_menu.addAction(self.simulate_action)
        tools_menu.addAction(self.approve_plan_action)
        help_menu = bar.addMenu(_("&Help"))
        self.guide_action = act(
            _("&Guide to differential privacy…"),
            self.open_guide,
            QKeySequence.StandardKey.HelpContents,
        )
        help_menu.addAction(self.guide_action)
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
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: Path) -> None:
        """Remember a table or a plan by its absolute path (a relative one would depend on the folder dpdesk
        was started from)."""
        path = Path(os.path.abspath(path))
        files = [str(path)] + [f for f in self.recent_files() if f != str(path)]
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
        self.review_action.setEnabled(not busy)
        self.simulate_action.setEnabled(self.state.plan is not None and not busy)
        if not busy:  # while a job runs, the status line says what it is doing
            self.set_status(why if not ok else _("Ready to release."))
        self._update_title()
        self._update_step()

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

        self.step_label.setText(what_is_missing(self.state, self.tabs.currentIndex()))

    def open_sample(self) -> Worker | None:
        """Open the bundled sample table and its plan (the README's quick start) in one go. The plan is opened
        unsaved, so that Save asks where to put it and never writes over the bundled file."""
        from dpdesk.resources import resource

        if not self.maybe_save():
            return None
        plan = resource("samples", "cps_wages_plan.json")
        try:
            data = json.loads(plan.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # pragma: no cover - a damaged installation
            self.show_error(_("Cannot open the plan {path}: {err}").format(path=plan, err=exc))
            return None
        self.state.load_plan_data(data, None)
        self.show_main()
        if self.views_ready:
            self.query_form.select_row(0)
        return self.open_data(str(resource("samples", "census_sample.csv")))

    def _update_title(self) -> None:
        name = self.state.data_path.name if self.state.data_path else _("no table")
        plan = self.state.plan_path.name if self.state.plan_path else _("unsaved plan")
        self.setWindowTitle(f"dpdesk — {name} — {plan}{' *' if self.state.dirty else ''}")

    # ------------------------------------------------------------------ dialogs (overridable in tests)
    def ask_open_path(self, title: str, filt: str) -> str:
        return QFileDialog.getOpenFileName(self, title, "", filt)[0]

    def ask_save_path(self, title: str, filt: str) -> str:
        return QFileDialog.getSaveFileName(self, title, "", filt)[0]

    def ask_folder(self, title: str) -> str:
        return QFileDialog.getExistingDirectory(self, title)

    def confirm_box(self, title: str, text: str) -> QMessageBox:
        """A yes/no question whose default (Return) and escape button is No: Return never spends."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        return box

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

    def ask_simulation(self) -> Any:
        """The simulation dialog's choice (a SimulationChoice), or None if cancelled."""
        from dpdesk.core.preview.simulate import simulation_notice
        from dpdesk.gui.views.simulate_dialog import SimulateDialog

        dialog = SimulateDialog(self, self.ask_open_path, self.ask_save_path, simulation_notice())
        if dialog.exec() != SimulateDialog.DialogCode.Accepted:
            return None
        return dialog.choice()

    def show_error(self, message: str, details: str = "") -> None:
        log.warning("shown to the user: %s", message)
        box = QMessageBox(QMessageBox.Icon.Warning, _("dpdesk"), message, parent=self)
        if details:
            box.setDetailedText(details)
        box.exec()

    # ------------------------------------------------------------------ jobs
    def run_job(self, job: Any, on_done: Any, label: str) -> Worker:
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

        def done(result: Any) -> None:
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

    # ------------------------------------------------------------------ file actions
    def open_path(self, path: str) -> Worker | bool | None:
        """Open what ``path`` is, told by its content (:func:`dpdesk.services.opening.identify`): a release package
        (its folder or its ledger.json) or an exported ledger in the review window, a plan as the plan, a table as
        the table; anything else is named in an error with what dpdesk opens."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.services.opening import identify

        try:
            opened = identify(path)
        except DpdeskError as exc:
            self.show_error(str(exc))
            return None
        if opened.kind in ("package", "ledger"):
            return self.review(str(opened.path))
        if opened.kind == "plan":
            return self.open_plan(str(opened.path))
        return self.open_data(str(opened.path))

    def open_data(self, path: str | None = None) -> Worker | None:
        path = path or self.ask_open_path(_("Open table"), data_filter())
        if not path:
            return None
        p = Path(path)

        home = self.state.home

        def job(progress: Progress) -> Any:
            from dpdesk.core.common.errors import LedgerError
            from dpdesk.core.loading import file_sha256, peek, suggest_from_peek
            from dpdesk.services.common import Dataset

            pk = peek(p)
            sha = file_sha256(p, progress)
            # which dataset the table belongs to, by its bytes or its content (here in the worker: the first time,
            # the content identity reads the whole file); a re-saved copy is linked to its dataset here
            near: tuple[Any, ...] = ()
            error = None
            try:
                found = Dataset(home, p, sha256=sha).resolve(progress)
                if found is not None and found.dataset is None:
                    near = found.resembles
            except LedgerError as exc:
                error = str(exc)
            return pk, suggest_from_peek(pk), sha, near, error

        def done(result: Any) -> None:
            pk, suggested, sha, near, error = result
            self.state.set_data(p, pk, suggested, sha, near, error)
            self._add_recent(p)
            self.tabs.setCurrentWidget(self.schema_view)

        return self.run_job(job, done, _("Opening {name}…").format(name=p.name))

    def open_plan(self, path: str | None = None) -> bool:
        if not self.maybe_save():
            return False
        path = path or self.ask_open_path(_("Open plan"), plan_filter())
        if not path:
            return False
        from dpdesk.core.common import jsonin
        from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file

        try:
            data = jsonin.read_json(read_small_file(path, MAX_PLAN_BYTES), jsonin.PLAN)
            if not isinstance(data, dict):
                raise ValueError(_("a plan is a JSON object"))
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            if isinstance(exc, jsonin.JsonInputError) and exc.reason == "depth":
                why = _("it nests too deeply to be a plan")
            self.show_error(_("Cannot open the plan {path}: {err}").format(path=path, err=why))
            return False
        self.state.load_plan_data(data, Path(path))
        self._add_recent(Path(path))
        if self.state.plan_error:
            self.set_status(self.state.plan_error)
        self.query_form.select_row(0)
        return True

    def save_plan(self, ask: bool = False) -> bool:
        path = self.state.plan_path
        if ask or path is None:
            chosen = self.ask_save_path(_("Save plan"), plan_filter())
            if not chosen:
                return False
            path = Path(chosen if chosen.lower().endswith(".json") else chosen + ".json")
        try:
            path.write_text(self.state.plan_json(), encoding="utf-8")
        except OSError as exc:
            self.show_error(
                _("Cannot save the plan to {path}: {err}").format(path=path, err=exc.strerror or exc)
            )
            return False
        self.state.mark_saved(path)
        self._update_title()
        return True

    def maybe_save(self) -> bool:
        if not self.state.dirty:
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.StandardButton.Save:
            return self.save_plan()
        return answer == QMessageBox.StandardButton.Discard

    def import_codebook(self) -> None:
        path = self.ask_open_path(_("Import codebook"), "CSV (*.csv);;" + _("All files") + " (*)")
        if not path:
            return
        from dpdesk.core.plan.reader import read_codebook

        try:
            book = read_codebook(path)
        except DpdeskError as exc:
            self.show_error(str(exc))
            return
        new = self.state.draft()
        filled = []
        for name, cats in book.items():
            spec = new["columns"].get(name)
            if spec is not None and spec.get("type") == "category":
                spec["categories"] = list(cats)
                filled.append(name)
        self.state.edit(new, _("Import codebook"))
        self.set_status(
            _("Categories imported for: {cols}").format(
                cols=", ".join(filled) or _("no ticked category column")
            )
        )

    # ------------------------------------------------------------------ release
    def release(self) -> Worker | None:
        """Load and check the table (nothing charged), ask with the budget and the data check's counts, then
        charge and release in a worker."""
        ok, why = self.state.can_release()
        if not ok or self.state.plan is None or self.state.report is None or self.state.data_path is None:
            self.show_error(why)
            return None
        plan, path, home = self.state.plan, self.state.data_path, self.state.home
        approval = self.pending_approval

        def prepare(progress: Progress) -> Any:
            from dpdesk.services.release import ReleaseRequest, prepare_plan_release

            # the release's first step: nothing is charged; the curator sees its numbers and the data check's
            # counts, and chooses (data problems included) before the second step charges
            request = ReleaseRequest(plan, path, home, None, accept_data_problems=True, approval=approval)
            return prepare_plan_release(request, progress)

        def prepared(result: Any) -> None:
            rep = result.report
            if not rep.fits:
                result.close()
                self.state.read_ledger()  # the meter shows what the ledger holds now
                self.show_error(
                    _(
                        "This plan no longer fits what is left of the budget of {name} (the ledger has changed "
                        "since it was opened); nothing was charged."
                    ).format(name=path.name)
                )
                return
            if self.ask_confirm(*self.release_question(rep, path.name, result.check)):
                self._charge_and_release(result, approval)
            else:
                result.close()

        return self.run_job(prepare, prepared, _("Checking {name}…").format(name=path.name))

    @staticmethod
    def release_question(rep: BudgetReport, name: str, check: Any) -> tuple[str, str]:
        """The confirmation's title and text: what will be spent and remain, and the data check's counts."""
        m = rep.in_force
        text = _(
            "This release will spend ε {e} and δ {d} ({method} accounting) from the budget of {name}.\n"
            "Afterwards ε {le} and δ {ld} will remain.\n\nThe noisy values are recorded in the dataset's ledger "
            "before they are shown. Running the plan again later costs budget again."
        ).format(
            e=f"{m.plan.epsilon:.4g}",
            d=f"{m.plan.delta:.3g}",
            method=rep.method,
            name=name,
            le=f"{rep.remaining_after.epsilon:.4g}",
            ld=f"{rep.remaining_after.delta:.3g}",
        )
        from dpdesk.core.ledger.budget import report_warnings

        for warning in report_warnings(rep):
            text += "\n\n" + warning
        text += "\n\n" + check.heading() + "\n" + "\n".join("• " + line for line in check.lines())
        title = _("Release")
        if check.problems:
            title = _("Release despite data problems?")
            text += "\n\n" + _(
                "Warning: values outside the declared categories, or unparsable values, in {cols}. They "
                "count as missing, so the statistics would leave them out (a misspelled category gets a "
                "count of almost nothing). Check the plan's category lists and the data before you spend "
                "budget on them."
            ).format(cols=", ".join(repr(c.name) for c in check.problems))
        return title, text + "\n\n" + _("Release now?")

    def _charge_and_release(self, prepared: Any, approval: Any) -> Worker:
        def job(progress: Progress) -> Any:
            from dpdesk.services.release import commit_plan_release

            # charged only if the ledger is where it was when the curator was asked (else nothing is charged)
            return commit_plan_release(prepared, None, progress=progress)

        def done(result: Any) -> None:
            if approval is not None:
                self.pending_approval = None  # used: an approval is good for one release
            from dpdesk.gui.models import release_number

            self.state.read_ledger()
            e = result.entry
            title = _("Release #{seq}: spent ε {e}, δ {d}. These values are recorded in the ledger.").format(
                seq=release_number(self.state.ledger_entries, e.seq),
                e=f"{e.charged.epsilon:.4g}",
                d=f"{e.charged.delta:.3g}",
            )
            self.state.show_results([r.as_list() for r in result.rows], title, e)
            self.set_status(title)
            if result.notes:
                log.info("load note shown (its counts are for the screen only, not for the log)")
            if result.notes:
                self.set_status(_("Note (for you only, not released): {n}").format(n=result.notes[0]))
            self.tabs.setCurrentWidget(self.results_view)

        return self.run_job(job, done, _("Releasing…"))

    def simulate_releases(self) -> Worker | None:
        """Uncharged noisy releases of the plan on a stand-in table or a file declared public, written to a
        CSV marked not for publication (never on the table opened for release)."""
        if self.state.plan is None:
            self.show_error(self.state.plan_error or _("The plan is not complete."))
            return None
        choice = self.ask_simulation()
        if choice is None:
            return None
        replace = choice.replace_confirmed
        if not replace and choice.out.is_file():  # typed by hand: ask here, in the app's words
            replace = self.ask_confirm(
                _("Replace the file?"),
                _("{path} already exists. Replace it with the simulated releases?").format(path=choice.out),
            )
            if not replace:
                return None
        plan, home, private = self.state.plan, self.state.home, self.state.sha256
        reads = tuple(p for p in (self.state.plan_path, self.state.data_path) if p is not None)

        def job(progress: Progress) -> Any:
            from dpdesk.services.simulate import SimulateRequest, simulate_releases

            request = SimulateRequest(
                plan,
                home,
                choice.out,
                runs=choice.runs,
                rows=choice.rows,
                public=choice.public,
                private_sha=private,
                force=replace,  # the user agreed to replace it (the data, the plan and the home stay refused)
                reads=reads,
            )
            return simulate_releases(request, progress)

        def done(result: Any) -> None:
            from dpdesk.core.preview.simulate import simulation_notice

            text = _("Wrote {runs} simulated release(s) to {path}\n({source}).").format(
                runs=result.runs, path=result.out, source=result.source
            )
            status = _("Wrote {runs} simulated release(s) to {path} (not for publication).")
            self.set_status(status.format(runs=result.runs, path=result.out))
            self.show_info(_("Simulated releases"), text + "\n\n" + simulation_notice())

        return self.run_job(job, done, _("Simulating releases…"))

    def ask_fidelity(self, query: str) -> Any:
        """The fidelity dialog's choice (public file, runs), or None if cancelled."""
        from dpdesk.core.preview.simulate import simulation_notice
        from dpdesk.gui.views.fidelity_dialog import FidelityDialog

        dialog = FidelityDialog(self, query, self.ask_open_path, simulation_notice())
        if dialog.exec() != FidelityDialog.DialogCode.Accepted:
            return None
        return dialog.choice()

    def estimate_fidelity(self, query: str) -> Worker | None:
        """How faithful the synthetic-table query ``query`` would be, estimated by uncharged simulated releases
        on a file the user declares public (never on the table opened for release); shown in the preview."""
        plan = self.state.valid_plan
        specs = [q for q in plan.queries if q.name == query] if plan is not None else []
        if plan is None or not specs or self.job is not None:
            return None
        choice = self.ask_fidelity(query)
        if choice is None:
            return None
        path, runs = choice
        home, private, spec = self.state.home, self.state.sha256, specs[0]

        def job(progress: Progress) -> Any:
            from dpdesk.services.simulate import FidelityRequest, synthetic_fidelity

            return synthetic_fidelity(
                FidelityRequest(plan, home, query, path, runs, private_sha=private), progress
            )

        def done(result: Any) -> None:
            self.set_status(
                _("Estimated the synthetic table's fidelity on {path} (uncharged).").format(path=path.name)
            )
            self.preview.show_fidelity(spec, result, str(path))

        return self.run_job(job, done, _("Estimating the synthetic table's fidelity…"))

    def export_release(self) -> Worker | None:
        """Write the shown release as a package (release.csv, report.pdf, plan.json, ledger.json); costs nothing."""
        entry = self.state.results_entry
        if not self.state.results or entry is None or self.state.sha256 is None:
            return None
        folder = self.ask_folder(
            _("Choose a folder for the release package (a new folder is made in it unless it is empty)")
        )
        if not folder:
            return None
        home, sha = self.state.home, self.state.sha256
        name = self.state.data_path.name if self.state.data_path else (self.state.dataset_id or "")
        from dpdesk.gui.models import release_number

        out = package_folder(Path(folder), release_number(self.state.ledger_entries, entry.seq))
        title = self.results_view.report_title.text().strip() or None

        def job(progress: Progress) -> Path:
            from dpdesk.services.common import Dataset
            from dpdesk.services.export import ExportRequest, export_release

            dataset = Dataset(home, sha256=sha, name=name)
            return export_release(ExportRequest(dataset, entry, out, title), progress).out

        def done(folder_out: Path) -> None:
            self.state.read_ledger()
            self.set_status(_("Exported the release package to {folder}").format(folder=folder_out))

        return self.run_job(job, done, _("Writing the release package…"))

    def load_synthetic(self) -> Worker | None:
        """Regenerate the shown release's synthetic tables from its spend entry (the ledger's noisy marginals and
        seeds: free, never the private table) in the worker, for the Results tab."""
        entry = self.state.results_entry
        if entry is None or not entry.get("synthetic") or entry is self.results_view.synth_entry:
            return None

        def job(progress: Progress) -> Any:
            from dpdesk.services.synthetic import synthetic_tables

            return synthetic_tables(entry, progress)

        return self.run_job(
            job,
            lambda tables: self.results_view.show_synthetic(entry, tables),
            _("Making the synthetic table…"),
        )

    def save_synthetic_table(self) -> None:
        """Write the shown synthetic table as CSV: the bytes the release package holds (costs nothing)."""
        table = self.results_view.shown_synthetic()
        if table is None:
            return
        path = self.ask_save_path(
            _("Save the synthetic table as CSV"), _("CSV files") + " (*.csv);;" + _("All files") + " (*)"
        )
        if not path:
            return
        from dpdesk.core.common.fsio import write_atomic

        try:
            write_atomic(Path(path), table.csv)
        except OSError as exc:
            self.show_error(_("Could not write {path}: {err}").format(path=path, err=exc.strerror or exc))
            return
        self.set_status(_("Saved the synthetic table to {path}").format(path=path))

    def review(self, path: str | None = None) -> Worker | None:
        """Open a release package (folder) or an exported ledger file read-only, and show whether it is intact.

        The review service runs in the worker (a large package's files are hashed there, with progress and
        cancel); the window opens, as ``review_window``, when it is done."""
        path = path or self.ask_folder(_("Choose a release package folder"))
        if not path:
            return None
        from dpdesk.services.review import ReviewRequest, review_path

        def job(progress: Progress) -> Any:
            return review_path(ReviewRequest(path), progress).review

        def done(result: Any) -> None:
            from dpdesk.gui.views.review_window import ReviewWindow

            window = ReviewWindow(result, path, self)
            window.setModal(False)
            window.show()
            self.review_window = window

        return self.run_job(job, done, _("Reviewing {name}…").format(name=Path(path).name))

    # ------------------------------------------------------------------ the privacy officer
    def approve_plan(self) -> Worker | None:
        """(Officer) sign an approval of the open plan and its budget for a dataset at its ledger head: the open
        table's, or the dataset's public name and head as the curator gave them (dpdesk ledger head)."""
        from dpdesk.core.governance.officer import plan_params

        if self.state.plan is None:
            self.show_error(self.state.plan_error or _("The plan is not complete."))
            return None
        if self.state.dataset_id is not None and not self.state.ledger_error:
            from dpdesk.core.ledger.governed import head_of

            dataset, head = self.state.dataset_id, head_of(self.state.ledger_entries)
        else:
            from dpdesk.core.common.errors import UsageError
            from dpdesk.core.ledger.governed import parse_head

            given = self.ask_text(
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
                self.show_error(str(exc))
                return None
        key = self.ask_open_path(_("Choose your private key"), _("Officer private key (*.pem)"))
        if not key:
            return None
        passphrase = self.ask_passphrase(_("Approve a plan"), _("Passphrase of the officer key:"))
        if not passphrase:
            return None
        out = self.ask_save_path(_("Save the approval as"), _("Approval (*.json)"))
        if not out:
            return None
        params = plan_params(self.state.plan)

        def job(progress: Progress) -> Any:
            from dpdesk.services.officer import ApproveRequest, approve

            return approve(
                ApproveRequest(Path(key), passphrase, dataset, head, "approve_plan", params, Path(out)),
                progress,
            )

        def done(result: Any) -> None:
            self.show_info(
                _("Approval written"),
                _(
                    "Wrote {out}: the plan approved for dataset {id} at ledger entry {seq}, signed by key {fp}."
                ).format(out=result.out, id=result.dataset, seq=result.head.seq, fp=result.fingerprint),
            )

        return self.run_job(job, done, _("Signing…"))

    def import_approval(self, path: str | None = None) -> bool:
        """(Curator) attach an officer's approval file to the next release (checked when the release runs)."""
        path = path or self.ask_open_path(_("Import an approval"), _("Approval (*.json)"))
        if not path:
            return False
        from dpdesk.core.governance.officer import ApprovalError, read_approval_file

        try:
            read_approval_file(path)
        except ApprovalError as exc:
            self.show_error(str(exc))
            return False
        self.pending_approval = Path(path)
        self.set_status(
            _("Approval {name} will be attached to the next release.").format(name=Path(path).name)
        )
        return True

    def link_near_copy(self) -> Worker | None:
        """(Curator) charge the opened table, which resembles a known dataset, to that dataset's ledger."""
        s = self.state
        if not s.near_copy or s.data_path is None:
            return None
        to, data, home, sha = s.near[0].dataset, s.data_path, s.home, s.sha256

        def job(progress: Progress) -> Any:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import LinkRequest, link_dataset

            return link_dataset(LinkRequest(Dataset(home, data, sha256=sha), to), progress)

        def done(result: Any) -> None:
            self.state.read_ledger()
            self.set_status(
                _("This table is now charged to dataset {dataset}.").format(dataset=result.dataset)
            )

        return self.run_job(job, done, _("Linking…"))

    def declare_near_copy_new(self) -> Worker | None:
        """(Officer) declare the opened table, which resembles a known dataset, a new dataset: a reason, and the
        officer's approval file when that dataset is governed (cancel the file dialog when it is not)."""
        s = self.state
        if not s.near_copy or s.data_path is None:
            return None
        known, data, home, sha = s.near[0].dataset, s.data_path, s.home, s.sha256
        reason = self.ask_text(
            _("Declare it a new dataset"),
            _(
                "Why is this table a new dataset and not a copy of {dataset}? (recorded in both ledgers)"
            ).format(dataset=known),
        ).strip()
        if not reason:
            return None
        approval = self.ask_open_path(
            _("The officer's approval (cancel if the dataset is not governed)"), _("Approval (*.json)")
        )

        def job(progress: Progress) -> Any:
            from dpdesk.core.ledger.governed import ApprovalRequired
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import DeclareNewRequest, declare_new, new_dataset_name

            dataset = Dataset(home, data, sha256=sha)
            request = DeclareNewRequest(dataset, known, reason, Path(approval) if approval else None)
            try:
                return declare_new(request, progress)
            except ApprovalRequired as exc:
                return str(exc), new_dataset_name(dataset)

        def done(result: Any) -> None:
            if isinstance(result, tuple):
                message, new = result
                self.show_error(
                    message
                    + "\n\n"
                    + _(
                        "The officer approves declaring it new (dpdesk officer approve-declare-new) for dataset "
                        "{known} at its ledger head, naming the new dataset {new}."
                    ).format(known=known, new=new)
                )
                return
            self.state.read_ledger()
            self.set_status(
                _("This table is now the new dataset {dataset}, with its own budget.").format(
                    dataset=result.dataset
                )
            )

        return self.run_job(job, done, _("Declaring a new dataset…"))

    def export_statement(self, path: str | None = None) -> Worker | None:
        """Write the opened dataset's budget statement (all releases, all methods) as a PDF."""
        if self.state.sha256 is None:
            return None
        path = path or self.ask_save_path(_("Save the budget statement"), "PDF (*.pdf)")
        if not path:
            return None
        target = Path(path if path.lower().endswith(".pdf") else path + ".pdf")
        home, sha = self.state.home, self.state.sha256
        name = self.state.data_path.name if self.state.data_path else (self.state.dataset_id or "")

        def job(progress: Progress) -> Path:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import StatementRequest, write_statement

            dataset = Dataset(home, sha256=sha, name=name)
            # the save dialog asked before replacing a file (the data and the home stay refused)
            return write_statement(StatementRequest(dataset, target, force=True), progress).out

        def done(out: Path) -> None:
            self.set_status(_("Wrote the budget statement to {path}").format(path=out))

        return self.run_job(job, done, _("Writing the budget statement…"))

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
        self.settings.setValue("window/geometry", self.saveGeometry())
        event.accept()
