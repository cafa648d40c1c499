"""The 'Results' tab: released values (new or reopened at no cost), a chart, and CSV export."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from dpdesk.gui.models import ResultsModel
from dpdesk.gui.state import AppState
from dpdesk.i18n import _


class ResultsView(QWidget):
    """Shows rows exactly as in release.csv, and a bar chart of a histogram or grouped statistic."""

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.title = QLabel(_("No results yet: release the plan, or pick a past release in the Ledger tab."))
        self.title.setWordWrap(True)
        self.model = ResultsModel(state)
        self.table = QTableView()
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
        row = QHBoxLayout()
        row.addWidget(QLabel(_("Chart:")))
        row.addWidget(self.chart_query, 1)
        export_row = QHBoxLayout()
        export_row.addWidget(QLabel(_("Report title:")))
        export_row.addWidget(self.report_title, 1)
        export_row.addWidget(self.export_button)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.table, 3)
        lay.addLayout(row)
        lay.addLayout(export_row)
        lay.addLayout(self.chart_holder, 2)
        self.canvas: Any = None
        self.chart_query.currentIndexChanged.connect(self._chart)
        state.results_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
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

        from dpdesk.core.figures import results_figure

        rows = [r for r in self.state.results if r[0] == name]
        try:
            values = [float(r[2]) for r in rows]
            lows = [float(r[3]) for r in rows] if all(r[3] for r in rows) else None
            highs = [float(r[4]) for r in rows] if all(r[4] for r in rows) else None
        except ValueError:
            return
        self.canvas = FigureCanvasQTAgg(results_figure(name, [r[1] for r in rows], values, lows, highs))
        self.canvas.setMinimumHeight(220)
        self.chart_holder.addWidget(self.canvas)
