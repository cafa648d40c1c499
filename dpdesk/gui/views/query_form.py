"""The 'Queries' tab: the plan's statistics, and a form that only offers valid combinations."""

from __future__ import annotations

import math
import re
from typing import Any

from PySide6.QtCore import QEvent, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import field_of
from dpdesk.core.dp import statistics
from dpdesk.core.dp.accuracy_base import LEAD, RANK, RATIO, SPREAD, VALUE
from dpdesk.core.dp.statistics.base import Param, ParamKind
from dpdesk.core.model.mechanism_kinds import MECHANISMS, get_mechanism
from dpdesk.gui.models import QUERY_COLUMNS, QueryListModel, parse_number
from dpdesk.gui.state import AppState
from dpdesk.i18n import _

#: Before the label of a field that has a problem (its tooltip says which).
PROBLEM_MARK = "⚠ "

#: Every statistic's own parameters (not column or group_by), by form key, in the registry's order: the
#: form has one widget for each, built from its kind, shown when the selected statistic declares it. The form
#: key is the plan key, or "key:kind" for a plan key another statistic uses with another kind (a histogram's
#: bins are a list of edges, a synthetic table's a map of them per column).
PARAMS: dict[str, Param] = {}
for _stat in statistics.REGISTRY.values():
    if not _stat.in_form:
        continue
    for _p in _stat.params:
        if _p.kind not in (ParamKind.COLUMN, ParamKind.GROUP_BY):
            _same = _p.key not in PARAMS or PARAMS[_p.key].kind is _p.kind
            PARAMS.setdefault(_p.key if _same else f"{_p.key}:{_p.kind}", _p)
OPTIONAL = ("group_by", *dict.fromkeys(p.key for p in PARAMS.values()), "delta", "calibration", "accuracy")


def form_key(param: Param) -> str:
    """The form's key of a statistic's parameter (see :data:`PARAMS`)."""
    return next(k for k, p in PARAMS.items() if p.key == param.key and p.kind is param.kind)


#: The kinds the form writes as lists typed with commas.
LIST_KINDS = (ParamKind.NUMBER_LIST, ParamKind.CATEGORY_SET)


def default_query(plan: dict[str, Any], n: int) -> dict[str, Any]:
    """A new query: a count, with a tenth of the total budget."""
    eps = plan.get("budget", {}).get("epsilon", 1.0)
    eps = round(float(eps) / 10, 6) if isinstance(eps, (int, float)) and eps > 0 else 0.1
    return {"name": _("query {n}").format(n=n), "statistic": "count", "mechanism": "laplace", "epsilon": eps}


class QueryForm(QWidget):
    """Edit one query; each field has a plain-words tooltip."""

    selection_changed = Signal(int)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.model = QueryListModel(state)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setAccessibleName(_("Queries"))
        self.table.setObjectName("query_table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # the columns share the width (long words are elided) and ε and δ fit their numbers: never a
        # horizontal scroll that hides the ε column
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for col in (QUERY_COLUMNS.index("epsilon"), QUERY_COLUMNS.index("delta")):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self._select(cur.row()))

        self.add_button = QPushButton(_("Add"))
        self.dup_button = QPushButton(_("Duplicate"))
        self.remove_button = QPushButton(_("Remove"))
        self.up_button = QPushButton(_("Up"))
        self.down_button = QPushButton(_("Down"))
        self.fit_button = QPushButton(_("Fit to the budget…"))
        self.fit_button.setToolTip(
            _(
                "Share what is left of the budget across the queries by weights you choose, with locks and a "
                "reserve for later releases; rounded down so that the shares never add up to more."
            )
        )
        for b, slot in (
            (self.add_button, self.add),
            (self.dup_button, self.duplicate),
            (self.remove_button, self.remove),
            (self.up_button, lambda: self.move_query(-1)),
            (self.down_button, lambda: self.move_query(1)),
            (self.fit_button, self.fit_to_budget),
        ):
            b.clicked.connect(slot)
        # two rows, so that the tab fits from 1024 pixels wide in every language
        buttons = QVBoxLayout()
        edit_row, budget_row = QHBoxLayout(), QHBoxLayout()
        for b in (self.add_button, self.dup_button, self.remove_button, self.up_button, self.down_button):
            edit_row.addWidget(b)
        edit_row.addStretch(1)
        budget_row.addStretch(1)
        budget_row.addWidget(self.fit_button)
        buttons.addLayout(edit_row)
        buttons.addLayout(budget_row)

        self.name = QLineEdit()
        self.name.setToolTip(_("A name for this statistic; it heads its rows in the release."))
        self.statistic = QComboBox()
        for stat in statistics.REGISTRY.values():
            if stat.in_form:
                self.statistic.addItem(stat.label(), stat.name)
                if stat.help():
                    self.statistic.setItemData(
                        self.statistic.count() - 1, stat.help(), Qt.ItemDataRole.ToolTipRole
                    )
        self.statistic.setToolTip(_("What to compute."))
        self.column = QComboBox()
        self.column.setToolTip(
            _("The column the statistic is computed on (declared columns of the right type).")
        )
        self.group_by = QComboBox()
        self.group_by.setToolTip(
            _(
                "Compute the statistic separately for each category of this column; the whole "
                "table costs this query's epsilon once (parallel composition)."
            )
        )
        # a public row condition (the plan's "where"): one column and its categories or range; a plan may hold
        # several conditions, which the form then shows as text
        self.where_column = QComboBox()
        self.where_column.setObjectName("where_column")
        self.where_column.setToolTip(
            _(
                "Compute the statistic on the rows that meet a public condition only, e.g. the part-time workers. "
                "The condition is public: it is printed in the report."
            )
        )
        self.where_values = QLineEdit()
        self.where_values.setObjectName("where_values")
        # the form's label names the box they share: each says what it is to a screen reader
        self.where_column.setAccessibleName(_("Only rows where: column"))
        self.where_values.setAccessibleName(_("Only rows where: categories or range"))
        where_box = QWidget()
        where_row = QVBoxLayout(
            where_box
        )  # one above the other: the form stays narrow beside the simulated release
        where_row.setContentsMargins(0, 0, 0, 0)
        where_row.setSpacing(2)
        where_row.addWidget(self.where_column)
        where_row.addWidget(self.where_values)
        self.query_rows = QLineEdit()
        self.query_rows.setObjectName("query_expected_rows")
        self.query_rows.setPlaceholderText(_("a public estimate, e.g. 3000"))
        self.query_rows.setToolTip(
            _(
                "About how many rows meet the condition: a public estimate, never counted from the data. A mean's "
                "or a share's accuracy is stated for this many rows."
            )
        )
        self.mechanism = QComboBox()
        self.mechanism.setToolTip(
            _(
                "How noise is added. Laplace: pure epsilon-DP. Gaussian: needs a delta, better "
                "for many values. The exponential mechanism picks a candidate."
            )
        )
        # a synthetic table's two methods, in one line (shown when the statistic offers both)
        self.method_note = QLabel(
            _("MST: fast; delta may be 0. Adaptive (AIM): closer to the data, slower; needs delta above 0.")
        )
        self.method_note.setToolTip(
            _(
                "MST measures a tree of column pairs: fast, and delta may be 0. Adaptive (AIM) measures, round by "
                "round, the marginals its table gets most wrong: closer to the data for the same budget, slower, "
                "and it needs a delta above 0."
            )
        )
        self.method_note.setObjectName("query_method_note")
        self.method_note.setWordWrap(True)
        self.epsilon = QLineEdit()
        self.epsilon.setObjectName("query_epsilon")
        self.epsilon.setToolTip(
            _("The privacy this query spends. Smaller epsilon: more noise, more privacy.")
        )
        # accuracy first: the user types the epsilon OR the accuracy needed, and sees the other
        self.know_epsilon = QRadioButton(_("I know the epsilon"))
        self.know_epsilon.setObjectName("know_epsilon")
        self.know_accuracy = QRadioButton(_("I know the accuracy I need"))
        self.know_accuracy.setObjectName("know_accuracy")
        self.know_accuracy.setToolTip(
            _(
                "State the error you can accept, in the statistic's own units, and how sure it must be: "
                "dpdesk solves the smallest epsilon that meets it."
            )
        )
        self.know_epsilon.setChecked(True)
        self.spend_group = QButtonGroup(self)
        self.spend_group.addButton(self.know_epsilon)
        self.spend_group.addButton(self.know_accuracy)
        spend = QWidget()
        spend_row = QVBoxLayout(
            spend
        )  # one above the other: the form stays narrow beside the simulated release
        spend_row.setContentsMargins(0, 0, 0, 0)
        spend_row.setSpacing(2)
        spend_row.addWidget(self.know_epsilon)
        spend_row.addWidget(self.know_accuracy)
        self.target_error = QLineEdit()
        self.target_error.setObjectName("target_error")
        self.target_confidence = QLineEdit()
        self.target_confidence.setObjectName("target_confidence")
        self.target_confidence.setToolTip(
            _("How sure the error must be met, strictly between 0 and 1: 0.95 means 95 times in 100.")
        )
        self.target_cells = QComboBox()
        self.target_cells.addItem(_("each cell on its own"), "each")
        self.target_cells.addItem(_("all cells together"), "all")
        self.target_cells.setToolTip(
            _(
                "Each cell on its own: every cell is within the error with that probability. All cells "
                "together: all of them at once (this needs a larger epsilon)."
            )
        )
        self.accuracy_text = QLabel("")
        self.accuracy_text.setObjectName("accuracy_text")
        self.accuracy_text.setWordWrap(True)
        self.accuracy_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.delta = QLineEdit()
        self.delta.setToolTip(
            _(
                "The Gaussian mechanism's small probability of a weaker guarantee; "
                "far below 1/number of people."
            )
        )
        self.calibration = QComboBox()
        for info in MECHANISMS.values():
            for cal, cal_label in zip(info.calibrations, info.calibration_labels, strict=True):
                if self.calibration.findData(cal) < 0:
                    self.calibration.addItem(cal_label(), cal)
        self.calibration.setToolTip(
            _(
                "classic: sigma = sqrt(2 ln(1.25/delta)) x sensitivity / epsilon. "
                "analytic: the smallest sigma that gives (epsilon, delta)."
            )
        )
        #: One widget per parameter, built from its kind: a list to choose from, a list of columns to tick, one
        #: line per numeric column (bin edges), or a line to type in.
        self.params: dict[str, QLineEdit | QComboBox | QListWidget | BinEdges] = {}
        for key, param in PARAMS.items():
            widget: QLineEdit | QComboBox | QListWidget | BinEdges
            if param.kind is ParamKind.CHOICE:
                widget = QComboBox()
                for choice in param.choices:
                    widget.addItem(choice, choice)
            elif param.kind is ParamKind.COLUMN_LIST:
                widget = QListWidget()
                widget.setObjectName(f"param_{key}")
                widget.itemChanged.connect(self._edited)
            elif param.kind is ParamKind.BIN_MAP:
                widget = BinEdges()
                widget.edited.connect(self._edited)
                widget.finished.connect(self._next_session)
            else:
                widget = QLineEdit()
            widget.setToolTip(param.help())
            self.params[key] = widget
        self.form_box = QGroupBox(_("Selected query"))
        form = QFormLayout(self.form_box)
        self.rows: dict[str, tuple[QLabel, QWidget]] = {}
        for key, label, w in (
            ("name", _("Name"), self.name),
            ("statistic", _("Statistic"), self.statistic),
            ("column", _("Column"), self.column),
            ("group_by", _("Grouped by"), self.group_by),
            ("where", _("Only rows where"), where_box),
            ("query_rows", _("Rows that meet it"), self.query_rows),
            ("mechanism", _("Mechanism"), self.mechanism),
            ("method_note", "", self.method_note),
            ("spend", _("Privacy"), spend),
            ("accuracy", _("Error"), self.target_error),
            ("confidence", _("Confidence"), self.target_confidence),
            ("cells", _("Cells"), self.target_cells),
            ("epsilon", "ε", self.epsilon),
            ("accuracy_text", _("Accuracy"), self.accuracy_text),
            ("delta", "δ", self.delta),
            ("calibration", _("Calibration"), self.calibration),
            *((key, PARAMS[key].label(), w) for key, w in self.params.items()),
        ):
            lab = QLabel(label)
            form.addRow(lab, w)
            self.rows[key] = (lab, w)
        self.error = QLabel("")
        self.error.setObjectName("plan_error")
        self.error.setWordWrap(True)  # the plan's problems in words (their fields are marked in the form)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: the tooltips of the fields marked as having a problem, to give back once it is fixed
        self._tips: dict[str, str] = {}

        lay = QVBoxLayout(self)
        lay.addWidget(self.table, 2)
        lay.addLayout(buttons)
        # the form scrolls rather than set the window's height (a statistic may show many fields)
        form_scroll = QScrollArea()
        form_scroll.setObjectName("query_form_scroll")
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        form_scroll.setWidget(self.form_box)
        # beside the form, the selected query's release as it would look, simulated on a stand-in table: it
        # follows the epsilon or the accuracy typed (issue 28 item 7)
        from dpdesk.gui.views.look_view import LookView

        self.look_view = LookView(state)
        self.selection_changed.connect(self.look_view.show_query)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.setObjectName("queries_look")
        lower.setChildrenCollapsible(False)
        lower.addWidget(form_scroll)
        lower.addWidget(self.look_view)
        lower.setStretchFactor(0, 1)
        lower.setStretchFactor(1, 1)
        lower.setSizes([1000, 1000])  # halves, until the user moves the handle (remembered)
        lay.addWidget(lower, 3)
        lay.addWidget(self.error)

        self.current = -1
        self.shown: dict[str, bool] = {}
        self._updating = False
        self._session = 0  # typing in one field merges into one undo step until editing finishes
        lines = [w for w in self.params.values() if isinstance(w, QLineEdit)]
        combos = [w for w in self.params.values() if isinstance(w, QComboBox)]
        for w in (
            self.name,
            self.epsilon,
            self.target_error,
            self.target_confidence,
            self.delta,
            self.where_values,
            self.query_rows,
            *lines,
        ):
            w.textEdited.connect(self._edited)
            w.editingFinished.connect(self._next_session)
        self.where_column.activated.connect(
            lambda _i: self.where_values.clear()
        )  # another column: start again
        for c in (
            self.statistic,
            self.column,
            self.group_by,
            self.where_column,
            self.mechanism,
            self.calibration,
            self.target_cells,
            *combos,
        ):
            c.activated.connect(self._edited)
        from dpdesk.gui.fit import compact

        # the combo boxes' least width from their policy, not their longest item (Qt keeps the hint it computed
        # first, until a style change): the form stays narrow enough to leave room for the simulated release
        compact(self)
        for combo in self.findChildren(QComboBox):
            QApplication.sendEvent(combo, QEvent(QEvent.Type.StyleChange))
        self.know_epsilon.clicked.connect(lambda: self.set_accuracy_first(False))
        self.know_accuracy.clicked.connect(lambda: self.set_accuracy_first(True))
        state.plan_changed.connect(self._plan_changed)
        self._plan_changed()

    # ------------------------------------------------------------------ list actions
    def queries(self) -> list[dict[str, Any]]:
        """Copies of the plan's queries: edits go through the state (validated, undoable), never in place."""
        import copy

        return copy.deepcopy(list(self.state.plan_data.get("queries", [])))

    def _edit_queries(self, queries: list[dict[str, Any]], text: str, select: int) -> None:
        new = self.state.draft()
        new["queries"] = queries
        self.current = select
        self.state.edit(new, text)
        self.select_row(select)

    def select_row(self, row: int) -> None:
        if 0 <= row < self.model.rowCount():
            self.table.selectionModel().setCurrentIndex(
                self.model.index(row, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
        self._select(row)

    def add(self) -> None:
        qs = self.queries()
        qs.append(default_query(self.state.plan_data, len(qs) + 1))
        self._edit_queries(qs, _("Add query"), len(qs) - 1)

    def duplicate(self) -> None:
        qs = self.queries()
        if not 0 <= self.current < len(qs):
            return
        copy = dict(qs[self.current])
        names = {q.get("name") for q in qs}
        base = copy.get("name", "")
        n = 2
        while f"{base} ({n})" in names:
            n += 1
        copy["name"] = f"{base} ({n})"
        qs.insert(self.current + 1, copy)
        self._edit_queries(qs, _("Duplicate query"), self.current + 1)

    def remove(self) -> None:
        qs = self.queries()
        if not 0 <= self.current < len(qs):
            return
        del qs[self.current]
        self._edit_queries(qs, _("Remove query"), min(self.current, len(qs) - 1))

    def move_query(self, step: int) -> None:
        qs = self.queries()
        i, j = self.current, self.current + step
        if not (0 <= i < len(qs) and 0 <= j < len(qs)):
            return
        qs[i], qs[j] = qs[j], qs[i]
        self._edit_queries(qs, _("Move query"), j)

    def fit_to_budget(self) -> None:
        """Open 'Fit to the budget' (weights, locks, a reserve); apply its epsilons as one undoable edit."""
        from dpdesk.gui.views.fit_dialog import FitDialog

        qs = self.queries()
        if not qs:
            return
        dialog = FitDialog(self.state, self)
        if not self.exec_dialog(dialog) or dialog.result_epsilons is None:
            return
        for q, e, kept in zip(qs, dialog.result_epsilons, dialog.kept, strict=True):
            if not kept:  # a query that states its accuracy keeps it (its epsilon is what it costs)
                q["epsilon"] = e
        self._edit_queries(qs, _("Fit to the budget"), max(self.current, 0))

    def exec_dialog(self, dialog: Any) -> bool:
        """Run a modal dialog (tests replace this)."""
        return bool(dialog.exec())

    # ------------------------------------------------------------------ form
    def _plan_changed(self) -> None:
        self.error.setText(self.state.plan_error or "")
        n = len(self.queries())
        if self.current >= n:
            self.current = n - 1
        for b in (self.dup_button, self.remove_button, self.up_button, self.down_button):
            b.setEnabled(self.current >= 0)
        self._fill()
        self._mark_problems()

    def _select(self, row: int) -> None:
        self.current = row
        self._fill()
        self._mark_problems()
        self.selection_changed.emit(row)
        for b in (self.dup_button, self.remove_button, self.up_button, self.down_button):
            b.setEnabled(row >= 0)

    def _mark_problems(self) -> None:
        """Mark the fields of the selected query that have a problem: a warning sign before the label and the
        problem as the field's tooltip (the list of problems is below the form)."""
        marks: dict[str, list[str]] = {}
        for problem in self.state.query_problems(self.current) if self.current >= 0 else []:
            word = re.split(r"[.\[]", field_of(problem.key))[0] or "name"
            if not self.shown.get(word):  # a plan key the selected statistic's own widget writes
                word = next((k for k in self.params if self.shown.get(k) and PARAMS[k].key == word), word)
            marks.setdefault(word if word in self.rows else "name", []).append(problem.text)
        for key, (label, widget) in self.rows.items():
            label.setText(label.text().removeprefix(PROBLEM_MARK))
            if key in self._tips:
                widget.setToolTip(self._tips.pop(key))
            if key in marks:
                why = "\n".join(marks[key])
                label.setText(PROBLEM_MARK + label.text())
                label.setToolTip(why)
                self._tips[key] = widget.toolTip()
                widget.setToolTip(why + ("\n\n" + self._tips[key] if self._tips[key] else ""))
            else:
                label.setToolTip("")

    def _columns(self, kinds: tuple[str, ...]) -> list[str]:
        """Declared columns of these types, in the order of ``kinds`` (so the first is the best default)."""
        cols = self.state.plan_data["columns"].items()
        return [n for k in kinds for n, c in cols if c.get("type") == k]

    def _numeric_columns(self, columns: Any) -> list[tuple[str, str]]:
        """The numeric columns among ``columns`` and, for each, its default bin edges as text (the placeholder)."""
        from dpdesk.core.dp.synthetic import default_edges

        declared = self.state.plan_data["columns"]
        out = []
        for name in columns if isinstance(columns, list) else []:
            col = declared.get(name) if isinstance(name, str) else None
            if not isinstance(col, dict) or col.get("type") not in ("int", "float"):
                continue
            bounds: Any = col.get("bounds")  # checked by the unpacking below
            default = ""
            try:
                lo, hi = (float(b) for b in bounds)
                if lo < hi:
                    default = ", ".join(numfmt.plain(e, 6) for e in default_edges(col["type"], (lo, hi)))
            except (TypeError, ValueError):
                pass
            out.append((name, default))
        return out

    def _fill_column_list(self, widget: QListWidget, value: Any) -> None:
        """The declared columns, the query's ticked."""
        chosen = set(value) if isinstance(value, list) else set()
        widget.blockSignals(True)
        try:
            widget.clear()
            for name, col in self.state.plan_data["columns"].items():
                item = QListWidgetItem(f"{name} ({col.get('type', '?')})")
                item.setData(Qt.ItemDataRole.UserRole, name)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if name in chosen else Qt.CheckState.Unchecked)
                widget.addItem(item)
            rows = max(2, min(widget.count(), 6))
            widget.setFixedHeight(rows * max(widget.sizeHintForRow(0), 18) + 2 * widget.frameWidth() + 2)
        finally:
            widget.blockSignals(False)

    def _fill(self) -> None:
        qs = self.queries()
        self.form_box.setEnabled(0 <= self.current < len(qs))
        if not 0 <= self.current < len(qs):
            return
        q = qs[self.current]
        self._updating = True
        try:
            name = q.get("statistic", "count")
            stat = statistics.REGISTRY.get(name)
            _set(self.name, q.get("name"))
            self.statistic.setCurrentIndex(max(0, self.statistic.findData(name)))
            col_param = stat.column_param if stat is not None else None
            _fill_combo(
                self.column,
                self._columns(col_param.column_types if col_param is not None else ()),
                q.get("column"),
                none=False,
            )
            _fill_combo(
                self.group_by,
                [c for c in self._columns(("category",)) if c != q.get("column")],
                q.get("group_by"),
                none=True,
            )
            self.mechanism.clear()
            for m in stat.mechanisms if stat is not None else ():
                self.mechanism.addItem(MECHANISMS[m].label(), m)
                self.mechanism.setItemData(
                    self.mechanism.count() - 1, MECHANISMS[m].formula(), Qt.ItemDataRole.ToolTipRole
                )
            self.mechanism.setCurrentIndex(max(0, self.mechanism.findData(q.get("mechanism"))))
            self._fill_accuracy(q, stat)
            self._fill_where(q, stat)
            _set(self.delta, q.get("delta"))
            self.calibration.setCurrentIndex(
                max(0, self.calibration.findData(q.get("calibration", "classic")))
            )
            mech = _mechanism(q.get("mechanism"))
            col_type = self.state.plan_data["columns"].get(q.get("column") or "", {}).get("type")
            first = "accuracy" in q
            cells = stat is not None and stat.accuracy_kind == VALUE
            cells = cells and (q.get("group_by") is not None or (stat is not None and stat.several_cells))
            composite = stat is not None and stat.composite
            show = {
                "spend": not composite,  # a synthetic table takes an epsilon, never an accuracy target
                "method_note": composite and stat is not None and len(stat.mechanisms) > 1,
                "accuracy": first,
                "confidence": first,
                "cells": first and cells,
                "accuracy_text": bool(self.accuracy_text.text()),
                "column": col_param is not None,
                "group_by": stat is not None and stat.groupable,
                "where": stat is not None and stat.takes_where,
                "query_rows": stat is not None and stat.takes_where and bool(q.get("where")),
                "delta": mech is not None and mech.takes_delta,
                "calibration": mech is not None and bool(mech.calibrations),
            }
            own = (
                {form_key(p): p for p in stat.params if p.kind not in (ParamKind.COLUMN, ParamKind.GROUP_BY)}
                if stat is not None
                else {}
            )
            for key, widget in self.params.items():
                param = own.get(key)
                shown = param is not None and param.applies_to(col_type)
                if param is not None and param.kind is ParamKind.CHOICE:
                    shown = shown and len(param.choices) > 1
                show[key] = shown
                label = self.rows[key][0]
                if param is not None:  # the statistic's own words for a key others share
                    label.setText(param.label())
                    widget.setToolTip(param.help())
                value = q.get(PARAMS[key].key, param.shown_default if param is not None else None)
                if isinstance(widget, QListWidget):
                    self._fill_column_list(widget, value)
                elif isinstance(widget, BinEdges):
                    widget.fill(self._numeric_columns(q.get("columns")), value)
                    shown = shown and widget.count() > 0
                    show[key] = shown
                elif isinstance(widget, QComboBox):
                    widget.setCurrentIndex(max(0, widget.findData(value)))
                elif PARAMS[key].kind in LIST_KINDS:
                    _set(widget, _list_text(value))
                else:
                    _set(widget, value)
            self.shown = show
            for key, visible in show.items():
                for w in self.rows[key]:
                    w.setVisible(visible)
        finally:
            self._updating = False

    def _fill_accuracy(self, q: dict[str, Any], stat: Any) -> None:
        """The epsilon or the accuracy target, whichever the query states, and the other as the engine sees it."""
        first = "accuracy" in q
        self.know_accuracy.setChecked(first)
        self.know_epsilon.setChecked(not first)
        self.epsilon.setReadOnly(first)
        solved = self.state.solved_epsilon(self.current)
        if first:
            self.epsilon.setText(
                _("(not solved)")
                if solved is None
                else _("{e} (solved)").format(e=numfmt.epsilon(solved, "up"))
            )
            self.epsilon.setToolTip(
                _("The smallest epsilon that meets the accuracy you need, solved by dpdesk.")
            )
        else:
            _set(self.epsilon, q.get("epsilon"))
            self.epsilon.setToolTip(
                _("The privacy this query spends. Smaller epsilon: more noise, more privacy.")
            )
        accuracy = q.get("accuracy")
        target = accuracy if isinstance(accuracy, dict) else {}
        _set(self.target_error, target.get("error"))
        _set(self.target_confidence, target.get("confidence", 0.95 if first else None))
        self.target_cells.setCurrentIndex(max(0, self.target_cells.findData(target.get("cells", "each"))))
        label, tip = _target_words(stat)
        self.rows["accuracy"][0].setText(label)
        self.target_error.setToolTip(tip)
        self.rows["confidence"][0].setText(
            _("Chance the best wins") if stat is not None and stat.accuracy_kind == LEAD else _("Confidence")
        )
        acc = self.state.query_accuracy(self.current)
        if acc is None or solved is None:
            self.accuracy_text.setText("")
        else:
            self.accuracy_text.setText(
                _("With ε = {e}, {sentence}.").format(e=numfmt.epsilon(solved, "up"), sentence=acc[0])
            )

    def set_accuracy_first(self, first: bool) -> None:
        """Switch the selected query between stating its epsilon and stating the accuracy it needs, as one
        undoable edit: the new side starts from what the other gives (the accuracy at the epsilon, or the
        epsilon solved from the target)."""
        qs = self.queries()
        if not 0 <= self.current < len(qs) or first == ("accuracy" in qs[self.current]):
            self._fill()
            return
        q = dict(qs[self.current])
        if first:
            acc = self.state.query_accuracy(self.current)
            values = acc[1] if acc is not None else {}
            target: dict[str, Any] = {"confidence": values.get("confidence", 0.95)}
            error = values.get("error")
            if isinstance(error, (int, float)) and error > 0:
                target["error"] = parse_number(f"{error:.3g}")
            q.pop("epsilon", None)
            q["accuracy"] = target
            text = _("State the accuracy of {name}")
        else:
            solved = self.state.solved_epsilon(self.current)
            q.pop("accuracy", None)
            q["epsilon"] = solved if solved is not None else default_query(self.state.plan_data, 0)["epsilon"]
            text = _("State the epsilon of {name}")
        qs[self.current] = q
        self._edit_queries(qs, text.format(name=q.get("name", "")), self.current)

    def _next_session(self) -> None:
        self._session += 1

    def _edited(self, *_args: Any) -> None:
        if self._updating or not 0 <= self.current < len(self.queries()):
            return
        qs = self.queries()
        q = dict(qs[self.current])
        name = self.statistic.currentData()
        stat = statistics.get(name)
        changed_stat = name != q.get("statistic")
        q["name"] = self.name.text()
        q["statistic"] = name
        col_param = stat.column_param
        if changed_stat:
            if "accuracy" in q:  # a target is in the old statistic's units: back to its epsilon
                q["epsilon"] = (
                    self.state.solved_epsilon(self.current)
                    or default_query(self.state.plan_data, 0)["epsilon"]
                )
            for k in (*OPTIONAL, "column"):
                q.pop(k, None)
            if not stat.takes_where:
                q.pop("where", None)
                q.pop("expected_rows", None)
            q["mechanism"] = str(stat.mechanisms[0])
            cols = self._columns(col_param.prefer or col_param.column_types) if col_param else []
            if cols:
                q["column"] = cols[0]
            for param in stat.params:  # a single choice is written at once (the form does not show it)
                if param.kind is ParamKind.CHOICE and len(param.choices) == 1:
                    q[param.key] = param.choices[0]
                if param.kind is ParamKind.COLUMN_LIST:  # the first declared columns, as many as it needs
                    q[param.key] = list(self.state.plan_data["columns"])[: param.min_len]
        else:
            if col_param is not None and self.column.currentData():
                q["column"] = self.column.currentData()
            if self.shown.get("group_by") and self.group_by.currentData():
                q["group_by"] = self.group_by.currentData()
            else:
                q.pop("group_by", None)
            self._edited_where(q)
            mech = self.mechanism.currentData() or q.get("mechanism")
            q["mechanism"] = mech
            if self.know_accuracy.isChecked():  # the target replaces the epsilon (the engine solves it)
                q.pop("epsilon", None)
                q["accuracy"] = self._target()
            else:
                q.pop("accuracy", None)
                q["epsilon"] = _number(self.epsilon.text())
            info = _mechanism(mech)
            delta = _number(self.delta.text(), None if info is None or info.delta_optional else 1e-7)
            if info is not None and info.takes_delta and delta is not None:
                q["delta"] = delta
            else:
                q.pop("delta", None)
            if info is not None and info.calibrations:
                q["calibration"] = self.calibration.currentData()
            else:
                q.pop("calibration", None)
            shown_keys = {PARAMS[k].key for k in self.params if self.shown.get(k)}
            for fkey, widget in self.params.items():
                kind, key = PARAMS[fkey].kind, PARAMS[fkey].key
                if not self.shown.get(fkey) and key in shown_keys:
                    continue  # another statistic's widget for the same plan key: the shown one writes it
                if kind is ParamKind.CHOICE:
                    if self.shown.get(fkey):
                        assert isinstance(widget, QComboBox)
                        q[key] = widget.currentData()
                    continue  # a single choice keeps the value written with the statistic
                if kind is ParamKind.COLUMN_LIST:
                    assert isinstance(widget, QListWidget)
                    if self.shown.get(fkey):  # the ticked columns, in the declared order
                        q[key] = _ticked(widget)
                    continue
                if kind is ParamKind.BIN_MAP:
                    assert isinstance(widget, BinEdges)
                    ticked = set(q.get("columns") or ())
                    edges = {
                        c: [_number(x) for x in _split(t)] for c, t in widget.texts().items() if c in ticked
                    }
                    if self.shown.get(fkey) and edges:
                        q[key] = edges
                    else:
                        q.pop(key, None)
                    continue
                assert isinstance(widget, QLineEdit)
                text = widget.text().strip()
                if not (self.shown.get(fkey) and text):
                    q.pop(key, None)
                elif kind is ParamKind.NUMBER_LIST:
                    q[key] = [_number(x) for x in _split(text)]
                elif kind is ParamKind.CATEGORY_SET:
                    q[key] = [x.strip() for x in _split(text)]
                else:
                    q[key] = _number(text)
        qs[self.current] = q
        new = self.state.draft()
        new["queries"] = qs
        self.state.edit(
            new,
            _("Edit query {name}").format(name=q.get("name", "")),
            merge_id=hash(("query", self.current, self._session)) & 0x7FFFFFFF,
        )

    def _edited_where(self, q: dict[str, Any]) -> None:
        """The row condition and the query's expected rows, as typed (text that is no number or category is
        written as typed: the plan check names the problem)."""
        if not self.shown.get("where"):
            return
        if self.where_column.isEnabled():
            name = self.where_column.currentData()
            if name:
                col = self.state.plan_data["columns"].get(name, {})
                parts = _split(self.where_values.text())
                if col.get("type") == "category":
                    q["where"] = {"column": name, "in": parts}
                else:
                    q["where"] = {"column": name, "between": [_number(x, x) for x in parts]}
            else:
                q.pop("where", None)
        text = self.query_rows.text().strip().replace(",", "").replace("_", "").replace(" ", "")
        if text and q.get("where"):
            q["expected_rows"] = _number(text, text)
        else:
            q.pop("expected_rows", None)

    def _fill_where(self, q: dict[str, Any], stat: Any) -> None:
        """The row condition: the column and its categories or range; several conditions as text (edit them in
        the plan file)."""
        where = q.get("where")
        conds = where if isinstance(where, list) else [where] if isinstance(where, dict) else []
        columns = self.state.plan_data["columns"]
        several = len(conds) > 1
        cond = conds[0] if len(conds) == 1 and isinstance(conds[0], dict) else {}
        _fill_combo(self.where_column, list(columns), cond.get("column"), none=True)
        self.where_column.setItemText(0, _("(every row)"))
        self.where_column.setEnabled(not several)
        self.where_values.setReadOnly(several)
        if several:
            self.where_values.setText(_("{n} conditions: edit them in the plan file").format(n=len(conds)))
        elif "in" in cond:
            _set(self.where_values, _list_text(cond["in"]))
        elif "between" in cond:
            _set(self.where_values, _list_text(cond["between"]))
        else:
            self.where_values.setText("")
        col = columns.get(cond.get("column") or "", {})
        if col.get("type") == "category":
            cats = [str(c) for c in col.get("categories") or []]
            self.where_values.setPlaceholderText(_("categories, e.g. {ex}").format(ex=", ".join(cats[:2])))
            self.where_values.setToolTip(
                _("The categories a row must have, separated by commas: {cats}").format(
                    cats=", ".join(cats[:20])
                )
            )
        elif col:
            lo, hi = (col.get("bounds") or ["L", "U"])[:2]
            self.where_values.setPlaceholderText(_("from, to: e.g. {lo}, {hi}").format(lo=lo, hi=hi))
            self.where_values.setToolTip(
                _(
                    "The range a row's value must lie in, both ends included, inside the bounds [{lo}, {hi}]"
                ).format(lo=lo, hi=hi)
            )
        else:
            self.where_values.setPlaceholderText("")
        self.where_values.setEnabled(bool(col) or several)
        _set(self.query_rows, q.get("expected_rows"))

    def _target(self) -> dict[str, Any]:
        """The accuracy target as typed (an empty error is left out: the plan check asks for it)."""
        target: dict[str, Any] = {}
        error = _number(self.target_error.text())
        if error is not None:
            target["error"] = error
        target["confidence"] = _number(self.target_confidence.text(), 0.95)
        if self.shown.get("cells") and self.target_cells.currentData() == "all":
            target["cells"] = "all"
        return target


class BinEdges(QWidget):
    """One line of bin edges per numeric column of the query (the default rule shown as the placeholder)."""

    edited = Signal()
    finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.lines: dict[str, QLineEdit] = {}

    def count(self) -> int:
        return len(self.lines)

    def texts(self) -> dict[str, str]:
        """The edges typed per column (empty lines left out)."""
        return {c: e.text().strip() for c, e in self.lines.items() if e.text().strip()}

    def fill(self, columns: list[tuple[str, str]], value: Any) -> None:
        """Lines for these (column, default edges) pairs, holding the query's declared edges."""
        edges = value if isinstance(value, dict) else {}
        if [c for c, _d in columns] != list(self.lines):
            while self.form.rowCount():
                self.form.removeRow(0)
            self.lines = {}
            for name, _default in columns:
                line = QLineEdit()
                line.setObjectName(f"bins_{name}")
                line.textEdited.connect(lambda _t: self.edited.emit())
                line.editingFinished.connect(self.finished.emit)
                self.lines[name] = line
                self.form.addRow(QLabel(name), line)
        for name, default in columns:
            line = self.lines[name]
            line.setToolTip(self.toolTip())
            line.setPlaceholderText(_("default: {edges}").format(edges=default) if default else "")
            _set(line, _list_text(edges.get(name)))


def _ticked(widget: QListWidget) -> list[str]:
    """The ticked columns of a column list, in its order."""
    out = []
    for i in range(widget.count()):
        item = widget.item(i)
        if item.checkState() == Qt.CheckState.Checked:
            out.append(str(item.data(Qt.ItemDataRole.UserRole)))
    return out


def _target_words(stat: Any) -> tuple[str, str]:
    """The label and the tooltip of the accuracy target's error, in the statistic's own units."""
    kind = stat.accuracy_kind if stat is not None else VALUE
    if kind == RANK:
        return _("Rank error (±)"), _(
            "How far, in ranks, the released value may be from the true quantile: the released value's rank "
            "within ± this of q·n."
        )
    if kind == LEAD:
        return _("Lead"), stat.lead_help()  # a lead is a statistic's (kind is VALUE without one)
    if kind in (RATIO, SPREAD):
        return _("Error (±)"), _(
            "The largest error you accept, in the column's units (a share for a proportion), for a table of "
            "the expected number of rows (Data tab)."
        )
    return _("Error (±)"), _("The largest error you accept, in the statistic's own units (rows for a count).")


def _set(edit: QLineEdit, value: Any) -> None:
    """A plan's value in its field as typed, numbers in plain notation (a δ of 1e-06 reads 0.000001)."""
    if isinstance(value, float) and math.isfinite(value):
        from dpdesk.core.dp.values import fmt_number

        text = fmt_number(value)
    else:
        text = "" if value is None else str(value)
    if edit.text() != text and not edit.hasFocus():
        edit.setText(text)


def _mechanism(name: Any) -> Any:
    """The registered mechanism of a plan word, or None for a word the plan does not know."""
    try:
        return get_mechanism(name)
    except (KeyError, ValueError):
        return None


def _split(text: str) -> list[str]:
    """The items of a list typed with commas (Chinese commas too), empty items left out."""
    return [x for x in text.replace("，", ",").split(",") if x.strip()]


def _list_text(values: Any) -> str | None:
    if not isinstance(values, list):
        return None
    return ", ".join(str(v) for v in values)


def _fill_combo(box: QComboBox, items: list[str], current: Any, *, none: bool) -> None:
    box.clear()
    if none:
        box.addItem(_("(not grouped)"), None)
    for it in items:
        box.addItem(it, it)
    idx = box.findData(current)
    box.setCurrentIndex(max(0, idx))


def _number(text: str, default: Any = None) -> Any:
    value = parse_number(text.strip())
    return default if value is None else value


__all__ = ["Qt", "QueryForm", "default_query"]
