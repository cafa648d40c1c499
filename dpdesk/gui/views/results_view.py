"""The 'Results' tab: released values (new or reopened at no cost), a chart, and CSV export; a synthetic table's
first rows, its one-way marginals charted against the released noisy ones, and its CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from dpdesk.gui.models import ResultsModel
from dpdesk.gui.state import AppState
from dpdesk.i18n import _
from dpdesk.services.synthetic import SyntheticTable

if TYPE_CHECKING:
    from dpdesk.core.ledger.entries import SpendEntry

#: The height of one column's panel in the synthetic table's chart (the chart scrolls).
PANEL_HEIGHT = 190
#: the rows of released values always in sight
MIN_ROWS = 6


class ResultsView(QWidget):
    """Shows rows exactly as in release.csv, and a bar chart of a histogram or grouped statistic."""

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.title = QLabel(_("No results yet: release the plan, or pick a past release in the Ledger tab."))
        self.title.setWordWrap(True)
        self.model = ResultsModel(state)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setAccessibleName(_("Released values"))
        self.table.setObjectName("results_table")
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.chart_query = QComboBox()
        self.chart_query.setToolTip(_("Chart one histogram or grouped statistic."))
        self.export_button = QPushButton(_("Export release…"))
        self.export_button.setToolTip(_("Write release.csv and plan.json into a new folder (costs nothing)."))
        self.report_title = QLineEdit()
        self.report_title.setObjectName("report_title")
        self.report_title.setMaxLength(200)  # a title, not a document (the PDF's first page holds it)
        self.report_title.setToolTip(
            _("The title of the exported PDF report (the plan's title unless you change it).")
        )
        self.chart_holder = QVBoxLayout()
        #: the released values keep at least this many rows in sight, whatever the chart and the synthetic table
        self.table.setMinimumHeight(self.table_height(MIN_ROWS))
        row = QHBoxLayout()
        row.addWidget(QLabel(_("Chart:")))
        row.addWidget(self.chart_query, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(QLabel(_("Report title:")))
        export_row.addWidget(self.report_title, 1)
        export_row.addWidget(self.export_button)
        self._build_synthetic()
        # below the table, behind a splitter: the chart and the synthetic table, each on its own sub-tab
        chart_page = QWidget()
        chart_lay = QVBoxLayout(chart_page)
        chart_lay.addLayout(row)
        chart_lay.addLayout(self.chart_holder, 1)
        self.lower_tabs = QTabWidget()
        self.lower_tabs.setObjectName("results_lower")
        self.lower_tabs.addTab(chart_page, _("Chart"))
        self.lower_tabs.addTab(self.synth_box, _("Synthetic table"))
        self.lower_tabs.setTabVisible(1, False)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("results_split")  # the window remembers where the user puts it
        self.split.addWidget(self.table)
        self.split.addWidget(self.lower_tabs)
        self.split.setCollapsible(0, False)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        lay = self._lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addLayout(export_row)
        lay.addWidget(self.split, 1)
        self.canvas: Any = None
        self.chart_query.currentIndexChanged.connect(self._chart)
        state.results_changed.connect(self.refresh)
        self.refresh()

    def _build_synthetic(self) -> None:
        """The synthetic table's box: what it is, its first rows, its marginals' chart and a button to save it."""
        self.synthetic: tuple[SyntheticTable, ...] = ()
        self.synth_entry: SpendEntry | None = None  # the spend entry the shown tables come from
        self.synth_canvas: Any = None
        self.synth_box = QGroupBox(_("Synthetic table"))
        self.synth_box.setObjectName("synthetic_box")
        self.synth_query = QComboBox()
        self.synth_query.setToolTip(
            _("The synthetic table to show (one per synthetic query of the release).")
        )
        self.synth_info = QLabel("")
        self.synth_info.setObjectName("synthetic_info")
        self.synth_info.setWordWrap(True)
        # at most two lines (the whole text in its tooltip): a narrow window never squeezes the rows below
        self.synth_info.setMaximumHeight(2 * self.synth_info.fontMetrics().lineSpacing() + 4)
        self.synth_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.save_table_button = QPushButton(_("Save table as CSV…"))
        self.save_table_button.setToolTip(
            _(
                "Write the synthetic table as a CSV file, the same bytes as in the release package (costs nothing)."
            )
        )
        self.synth_model = QStandardItemModel(self)
        self.synth_table = QTableView()
        self.synth_table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.synth_table.setAccessibleName(_("Synthetic table"))
        self.synth_table.setObjectName("synthetic_table")
        self.synth_table.setModel(self.synth_model)
        self.synth_table.verticalHeader().setVisible(False)
        self.synth_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.synth_chart = QWidget()
        self.synth_chart_layout = QVBoxLayout(self.synth_chart)
        self.synth_chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_scroll = QScrollArea()
        chart_scroll.setWidgetResizable(True)
        chart_scroll.setFrameShape(QFrame.Shape.NoFrame)
        chart_scroll.setWidget(self.synth_chart)
        chart_scroll.setMinimumWidth(300)
        split = QHBoxLayout()  # the first rows beside the chart, which scrolls (one panel per column)
        split.addWidget(self.synth_table, 2)
        split.addWidget(chart_scroll, 3)
        top = QHBoxLayout()
        top.addWidget(self.synth_info, 1)
        top.addWidget(self.synth_query)
        top.addWidget(self.save_table_button)
        box = QVBoxLayout(self.synth_box)
        box.addLayout(top)
        box.addLayout(split, 1)
        self.synth_query.currentIndexChanged.connect(self._show_synthetic_table)

    def show_synthetic(self, entry: SpendEntry, tables: tuple[SyntheticTable, ...]) -> None:
        """Show the synthetic tables of ``entry`` (computed in the worker), if its results are still shown."""
        if entry is not self.state.results_entry:
            return
        self.synthetic, self.synth_entry = tables, entry
        self.synth_query.blockSignals(True)
        self.synth_query.clear()
        for t in tables:
            self.synth_query.addItem(t.query, t.query)
        self.synth_query.setVisible(len(tables) > 1)
        self.synth_query.blockSignals(False)
        self.lower_tabs.setTabVisible(1, bool(tables))
        if tables:
            self.lower_tabs.setCurrentIndex(1)  # the release's synthetic table, one click from its chart
        self._show_synthetic_table()

    def table_height(self, rows: int) -> int:
        """The results table's height to show ``rows`` rows (with its header, frame and a scroll bar)."""
        t = self.table
        return (
            t.horizontalHeader().sizeHint().height()
            + rows * t.verticalHeader().defaultSectionSize()
            + t.horizontalScrollBar().sizeHint().height()
            + 2 * t.frameWidth()
            + 2
        )

    def shown_synthetic(self) -> SyntheticTable | None:
        """The synthetic table on screen, if any."""
        i = self.synth_query.currentIndex()
        return self.synthetic[i] if 0 <= i < len(self.synthetic) else None

    def _show_synthetic_table(self) -> None:
        if self.synth_canvas is not None:
            self.synth_canvas.setParent(None)
            self.synth_canvas.deleteLater()
            self.synth_canvas = None
        self.synth_model.clear()
        t = self.shown_synthetic()
        if t is None:
            self.synth_info.setText("")
            return
        self.synth_info.setText(
            info := _(
                "{file}: {n} made-up rows of {cols} columns (no row is a person); the first {shown} below. The "
                "chart compares each column's counts in the table with the released noisy counts."
            ).format(file=t.file, n=f"{t.rows:,}", cols=len(t.header), shown=len(t.head))
        )
        self.synth_info.setToolTip(info)
        self.synth_model.setHorizontalHeaderLabels(list(t.header))
        for r in t.head:
            items = [QStandardItem(v) for v in r]
            for it in items:
                it.setEditable(False)
            self.synth_model.appendRow(items)
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # heavy: on first chart

        from dpdesk.gui.synthetic_chart import marginals_figure

        fig = marginals_figure(t.marginals, columns=1)
        self.synth_canvas = FigureCanvasQTAgg(fig)
        self.synth_canvas.setObjectName("synthetic_chart")
        self.synth_canvas.setMinimumHeight(PANEL_HEIGHT * len(t.marginals))
        self.synth_chart_layout.addWidget(self.synth_canvas)

    def refresh(self) -> None:
        if (
            self.state.results_entry is not self.synth_entry
        ):  # other results: their tables come from the worker
            self.synthetic, self.synth_entry = (), None
            self.synth_query.blockSignals(True)
            self.synth_query.clear()
            self.synth_query.blockSignals(False)
            self.lower_tabs.setTabVisible(1, False)
            self._show_synthetic_table()
        rows = self.state.results
        self.title.setText(
            self.state.results_title
            or _("No results yet: release the plan, or pick a past release in the Ledger tab.")
        )
        self.export_button.setEnabled(bool(rows))
        self.report_title.setEnabled(bool(rows))
        entry = self.state.results_entry
        plan = entry.get("plan") if entry is not None else None
        self.report_title.setText(str(plan.get("title") or "") if isinstance(plan, dict) else "")
        self.chart_query.blockSignals(True)
        self.chart_query.clear()
        multi = [q for q in dict.fromkeys(r[0] for r in rows) if sum(1 for r in rows if r[0] == q) > 1]
        for q in multi:
            self.chart_query.addItem(q, q)
        self.chart_query.blockSignals(False)
        self._chart()

    def _chart(self) -> None:
        if self.canvas is not None:
            self.canvas.setParent(None)
            self.canvas.deleteLater()
            self.canvas = None
        name = self.chart_query.currentData()
        if not name:
            return
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # heavy: on first chart

        from dpdesk.core.dp.figures import results_figure

        rows = [r for r in self.state.results if r[0] == name]
        try:
            values = [float(r[2]) for r in rows]
            lows = [float(r[3]) for r in rows] if all(r[3] for r in rows) else None
            highs = [float(r[4]) for r in rows] if all(r[4] for r in rows) else None
        except ValueError:
            return
        self.canvas = FigureCanvasQTAgg(results_figure(name, [r[1] for r in rows], values, lows, highs))
        self.canvas.setMinimumHeight(120)
        self.chart_holder.addWidget(self.canvas)
