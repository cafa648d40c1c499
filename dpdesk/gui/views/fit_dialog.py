"""'Fit to the budget': share what is left across the queries by weight, with locks and a reserve."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.dp.values import fmt_number
from dpdesk.gui.models import parse_number
from dpdesk.gui.state import AppState
from dpdesk.i18n import _

NAME, NOW, WEIGHT, LOCK, NEW = range(5)


class FitDialog(QDialog):
    """Choose weights, locks and a reserve; the new epsilons are computed live by the engine."""

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Fit to the budget"))
        self.state = state
        self.result_epsilons: tuple[float, ...] | None = None
        queries: list[dict[str, Any]] = list(state.plan_data.get("queries", []))
        rep = state.report
        method = rep.method if rep is not None else "sequential"
        unit = _("rho (zCDP)") if method == "zcdp" else _("epsilon")
        left = rep.remaining_before.epsilon if rep is not None else 0.0
        self.intro = QLabel(
            _(
                "Share what is left of the budget (epsilon {left}) across the queries, in proportion to "
                "their weights; the shares are split in {unit}, the unit of the accounting method in force. "
                "A locked query keeps its epsilon, and so does a query that states the accuracy it needs. "
                "Keep a reserve for later releases if you plan any."
            ).format(left=fmt_number(left), unit=unit)
        )
        self.intro.setWordWrap(True)

        self.table = QTableWidget(len(queries), 5)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setObjectName("fit_table")
        self.table.setHorizontalHeaderLabels(
            [_("Query"), _("Epsilon now"), _("Weight"), _("Locked"), _("New epsilon")]
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        self.weights: list[QDoubleSpinBox] = []
        self.locks: list[QCheckBox] = []
        #: by row: the query keeps its epsilon by the service's rule (it states its accuracy), not by its lock
        self.kept = [self._keeps_epsilon(i) for i in range(len(queries))]
        for i, q in enumerate(queries):
            self.table.setItem(i, NAME, QTableWidgetItem(f"{i + 1}. {q.get('name', '')}"))
            eps = q.get("epsilon")
            self.table.setItem(
                i, NOW, QTableWidgetItem(fmt_number(eps) if isinstance(eps, float | int) else "")
            )
            w = QDoubleSpinBox()
            w.setRange(0.0, 1_000_000.0)
            w.setDecimals(4)
            w.setValue(1.0)
            w.setToolTip(
                _("A query with weight 2 gets twice the share of a query with weight 1; 0 leaves it out.")
            )
            w.valueChanged.connect(self._schedule)
            self.table.setCellWidget(i, WEIGHT, w)
            self.weights.append(w)
            lock = QCheckBox()
            if self.kept[i]:
                lock.setChecked(True)
                lock.setEnabled(False)
                lock.setToolTip(_("This query states the accuracy it needs; its epsilon is what that costs."))
                w.setEnabled(False)
            else:
                lock.setToolTip(_("Keep this query's epsilon as it is."))
            lock.toggled.connect(self._schedule)
            self.table.setCellWidget(i, LOCK, lock)
            self.locks.append(lock)
            self.table.setItem(i, NEW, QTableWidgetItem(""))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)

        self.reserve = QLineEdit("0")
        self.reserve.setObjectName("fit_reserve")
        self.reserve.setToolTip(_("Epsilon to leave unspent for later releases of this table."))
        self.reserve.textChanged.connect(self._schedule)
        self.as_weights = QPushButton(_("Weights from the current epsilons"))
        self.as_weights.setToolTip(
            _("Keep the queries' epsilons in proportion and scale them to what is left.")
        )
        self.as_weights.clicked.connect(self.weights_from_epsilons)
        form = QFormLayout()
        form.addRow(_("Keep in reserve (epsilon):"), self.reserve)
        form.addRow("", self.as_weights)

        self.status = QLabel()
        self.status.setObjectName("fit_status")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel
        )
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.apply_button.setText(_("Apply"))
        self.apply_button.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addWidget(self.intro)
        lay.addWidget(self.table, 1)
        lay.addLayout(form)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self.resize(640, 420)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.recompute)
        self.recompute()

    def _keeps_epsilon(self, row: int) -> bool:
        from dpdesk.services.budget import keeps_epsilon

        at, valid = self.state.valid_query(row), self.state.valid_plan
        return at is not None and valid is not None and keeps_epsilon(valid.queries[at])

    def weights_from_epsilons(self) -> None:
        """Each free query's weight in proportion to its epsilon now (the smallest gets 1)."""
        now = [q.get("epsilon") for q in self.state.plan_data.get("queries", [])]
        valid = [e for e in now if isinstance(e, int | float) and not isinstance(e, bool) and e > 0]
        if not valid:
            return
        smallest = min(valid)
        for w, e in zip(self.weights, now, strict=True):
            if w.isEnabled() and e in valid:
                w.setValue(float(e) / smallest)
        self.recompute()

    def _schedule(self, *_args: Any) -> None:
        self._timer.start()

    def recompute(self) -> None:
        """Run the service's fit with the current weights, locks and reserve; show the new epsilons."""
        from dpdesk.core.ledger.fit import FitError
        from dpdesk.services.budget import fit_entries

        self.result_epsilons = None
        self.apply_button.setEnabled(False)
        plan = self.state.plan
        if plan is None:
            self.status.setText(
                _("Make the plan complete first: {problem}").format(problem=self.state.plan_error)
            )
            return
        reserve = parse_number(self.reserve.text())
        if not isinstance(reserve, float | int) or reserve < 0:
            self.status.setText(_("The reserve must be a number, 0 or more (an epsilon)."))
            return
        try:
            fit = fit_entries(
                plan,
                self.state.ledger_entries,
                weights=[w.value() for w in self.weights],
                locked=[lk.isChecked() for lk in self.locks],
                reserve=float(reserve),
            )
        except FitError as exc:
            for i in range(self.table.rowCount()):
                cell = self.table.item(i, NEW)
                if cell is not None:
                    cell.setText("")
            self.status.setText(_("Nothing to fit: {reason}").format(reason=str(exc)))
            return
        for i, e in enumerate(fit.epsilons):
            item = self.table.item(i, NEW)
            if item is None:  # pragma: no cover - every row has its cell
                continue
            item.setText(fmt_number(e))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.result_epsilons = fit.epsilons
        self.status.setText(
            _("After this plan, epsilon {left} is left for later releases.").format(
                left=fmt_number(fit.left_after)
            )
        )
        self.apply_button.setEnabled(True)
