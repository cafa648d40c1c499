"""The 'Data' tab: the file's first rows, the declared schema, the unit of privacy and the budget."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.publish import words
from dpdesk.gui.models import PreviewModel, SchemaModel, parse_number
from dpdesk.gui.state import AppState
from dpdesk.i18n import _


def why_public() -> str:
    """Why bounds and categories must be public (translated when shown, not when this module is imported)."""
    return _(
        "Bounds and category lists must be public knowledge: a codebook, the questionnaire, a legal limit. "
        "Reading them off this file (its smallest or largest value, the categories that happen to occur) would "
        "reveal something about the people in it, so dpdesk never does. Values outside the bounds are clamped; "
        "values outside the categories count as missing."
    )


def why_public_short() -> str:
    """The same in one line."""
    return _(
        "Bounds and categories must be public (a codebook, the questionnaire): never read off this file."
    )


class TypeDelegate(QStyledItemDelegate):
    """A combo box for the type column."""

    def createEditor(self, parent: QWidget, option: Any, index: Any) -> QWidget:
        box = QComboBox(parent)
        for word in ("int", "float", "category"):  # named in the user's language, the plan's word as data
            box.addItem(words.column_type(word), word)
        return box

    def setEditorData(self, editor: QWidget, index: Any) -> None:
        assert isinstance(editor, QComboBox)
        editor.setCurrentIndex(
            max(0, editor.findData(str(index.data(Qt.ItemDataRole.EditRole) or "category")))
        )

    def setModelData(self, editor: QWidget, model: Any, index: Any) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


CATEGORIES_WIDTH = 200  # px: the Categories column's width (issue 28)


class SchemaView(QWidget):
    """Declare what is public about the table."""

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.file_label = QLabel(_("No table open. Use File > Open, or drop a file on the window."))
        self.file_label.setWordWrap(True)
        self.preview_model = PreviewModel()
        self.preview = QTableView()
        self.preview.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.preview.setAccessibleName(_("First rows of the table"))
        self.preview.setModel(self.preview_model)
        self.preview.setToolTip(_("The first rows of your file, for you only: nothing here is published."))
        self.preview.horizontalHeader().setDefaultSectionSize(110)
        # read-only rows one text line high (the editable declarations keep room for their editors): more rows
        # of the file in sight on a short screen
        self.preview.verticalHeader().setDefaultSectionSize(self.preview.fontMetrics().lineSpacing() + 6)

        self.schema_model = SchemaModel(state)
        self.schema = QTableView()
        self.schema.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.schema.setAccessibleName(_("Columns and what is public about them"))
        self.schema.setObjectName("schema_table")
        self.schema.setModel(self.schema_model)
        self.schema.setItemDelegateForColumn(2, TypeDelegate(self.schema))
        header = self.schema.horizontalHeader()
        # categories (5) get a readable width of their own (stretching, they fell to 15 px at zh 1024×700); the
        # last column takes what is left, and a narrow window scrolls sideways
        for c, w in ((0, 36), (1, 110), (2, 175), (3, 80), (4, 80), (5, CATEGORIES_WIDTH), (6, 100)):
            header.resizeSection(c, w)
        header.setStretchLastSection(True)
        self.schema.verticalHeader().setVisible(False)
        # rows as high as a type's drop-down needs, no higher: a row more in sight at 1024x700
        self.schema.verticalHeader().setDefaultSectionSize(self.schema.fontMetrics().lineSpacing() + 12)
        self.suggest_button = QPushButton(_("Suggest types"))
        self.suggest_button.setToolTip(
            _(
                "Propose int, float or category for the ticked columns. Only types: "
                "bounds and categories are never read off the data."
            )
        )
        self.suggest_button.clicked.connect(self._suggest)
        self.codebook_button = QPushButton(_("Import codebook…"))
        self.codebook_button.setToolTip(_("Read category lists from a CSV of column, category rows."))
        # one short line beside the buttons (three lines here left the declarations one row at 1024×700); the
        # whole reason is its tooltip and the guide's page on public bounds
        why = QLabel(
            '{short} <a href="guide:public_bounds_and_categories">{more}</a>'.format(
                short=html.escape(why_public_short()), more=html.escape(_("Why?"))
            )
        )
        why.setWordWrap(True)
        why.setObjectName("why_public")
        why.setToolTip(why_public())
        why.setTextFormat(Qt.TextFormat.RichText)
        why.linkActivated.connect(self._open_guide_page)

        schema_box = QGroupBox(_("What is public about the table"))
        sl = QVBoxLayout(schema_box)
        sl.addWidget(self.schema)
        row = QHBoxLayout()
        row.addWidget(self.suggest_button)
        row.addWidget(self.codebook_button)
        row.addWidget(why, 1)
        sl.addLayout(row)

        unit_box = QGroupBox(_("Unit of privacy and budget"))
        unit_lay = QVBoxLayout(unit_box)
        unit_cols = QHBoxLayout()
        unit_lay.addLayout(unit_cols)
        form = QFormLayout()
        form2 = QFormLayout()
        unit_cols.addLayout(form, 1)
        unit_cols.addLayout(form2, 1)
        self.relation = QComboBox()
        self.relation.addItem(_("add or remove one person"), "add_remove")
        self.relation.addItem(_("replace one person"), "replace")
        self.relation.setToolTip(
            _(
                "Who is protected: the difference between two tables that differ by one person "
                "added or removed, or by one person's rows replaced."
            )
        )
        self.k = QSpinBox()
        self.k.setRange(1, 100_000)
        self.k.setToolTip(
            _(
                "The most rows one person can have. Without an id column this is your declaration; "
                "dpdesk cannot check it."
            )
        )
        self.id_column = QComboBox()
        self.id_column.setToolTip(
            _("A person or household id: dpdesk then keeps at most k rows per id itself.")
        )
        self.expected_rows = QLineEdit()
        self.expected_rows.setObjectName("expected_rows")
        self.expected_rows.setPlaceholderText(_("a public estimate, e.g. 12000"))
        self.expected_rows.setToolTip(
            _(
                "A public estimate of how many rows the table has, never counted from the data: e.g. from the "
                "survey's design. The accuracy of means, proportions and quantiles is stated for it; it costs no "
                "privacy and is not checked against the table."
            )
        )
        self.budget_eps = QLineEdit()
        self.budget_eps.setObjectName("budget_epsilon")
        self.budget_eps.setToolTip(
            _(
                "The total privacy loss allowed for this dataset, over all its releases. "
                "Smaller is more private."
            )
        )
        self.budget_delta = QLineEdit()
        self.budget_delta.setToolTip(
            _(
                "The total probability allowed for the guarantee to fail (0 for pure "
                "epsilon-DP); needed by Gaussian noise. Keep it far below 1/rows."
            )
        )
        self.method = QComboBox()
        self.method.addItem(_("sequential (epsilons add)"), "sequential")
        self.method.addItem(_("advanced composition"), "advanced")
        self.method.addItem(_("zCDP"), "zcdp")
        self.method.setToolTip(
            _(
                "How the queries' costs add up. Fixed at the dataset's first release; the others "
                "are always shown beside it."
            )
        )
        self.delta_prime = QLineEdit()
        self.delta_prime.setToolTip(
            _("Advanced composition's extra delta (delta'), spent from the budget's delta.")
        )
        form.addRow(_("Neighbouring tables differ by"), self.relation)
        form.addRow(_("Rows per person (k)"), self.k)
        form.addRow(_("Person id column"), self.id_column)
        form.addRow(_("Expected rows"), self.expected_rows)
        form2.addRow(_("Total budget ε"), self.budget_eps)
        form2.addRow(_("Total budget δ"), self.budget_delta)
        form2.addRow(_("Accounting"), self.method)
        form2.addRow(_("δ′ (advanced)"), self.delta_prime)
        self.locked = QLabel("")
        self.locked.setWordWrap(True)
        self.locked.setStyleSheet("color: #7f8a94")
        self.locked.hide()  # below both columns, and only when there is something to say
        unit_lay.addWidget(self.locked)

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.file_label)
        tl.addWidget(self.preview)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("data_split")  # the window remembers where the user puts it
        split.addWidget(top)
        split.addWidget(schema_box)
        split.addWidget(unit_box)
        split.setSizes([170, 340, 300])  # the unit box's four rows and, once fixed, the note below them
        # Height beyond those goes to the column declarations (the rows the user edits), never to the unit box's
        # empty bottom; a short window (1024x700) shrinks the data rows and the declarations, not the unit box.
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 0)
        split.setCollapsible(2, False)
        self._split, self._unit_box, self._split_fitted = split, unit_box, False
        lay = QVBoxLayout(self)
        lay.addWidget(split)

        self._updating = False
        self.relation.currentIndexChanged.connect(self._unit_edited)
        self.k.valueChanged.connect(self._unit_edited)
        self.id_column.currentIndexChanged.connect(self._unit_edited)
        self.method.currentIndexChanged.connect(self._unit_edited)
        self.budget_eps.textEdited.connect(self._unit_edited)
        self.budget_delta.textEdited.connect(self._unit_edited)
        self.delta_prime.textEdited.connect(self._unit_edited)
        self.expected_rows.textEdited.connect(self._rows_edited)
        state.data_changed.connect(self._data_changed)
        state.plan_changed.connect(self._plan_changed)
        self._plan_changed()

    def _open_guide_page(self, link: str) -> None:
        from dpdesk.gui.views.guide import open_guide

        open_guide(self.window(), link.removeprefix("guide:"))

    def showEvent(self, event: Any) -> None:
        """The first time the tab is shown: the unit box gets the height its rows need, the data rows a quarter of
        the rest and the column declarations everything else (later resizes go to those two, see __init__)."""
        super().showEvent(event)
        if not self._split_fitted:
            self._split_fitted = True
            QTimer.singleShot(0, self._fit_split)  # once the window's layout has given the tab its height

    def _fit_split(self) -> None:
        if self._split.property("restored"):  # where the user put it last time
            return
        total = sum(self._split.sizes())
        unit = max(
            self._unit_box.minimumSizeHint().height(), min(self._unit_box.sizeHint().height(), total // 2)
        )
        top = max(120, (total - unit) // 4)
        self._split.setSizes([top, max(0, total - unit - top), unit])

    def _data_changed(self) -> None:
        peek = self.state.peek
        self.preview_model.set_peek(peek)
        if peek is not None and self.state.cluster is not None:  # its rows are where Spark reads them
            self.file_label.setToolTip(peek.path)
            self.file_label.setText(
                _("{path}  ·  {dataset}  ·  read by Spark: its rows stay there, none are shown here").format(
                    path=peek.path,
                    dataset=_("dataset {id}").format(id=self.state.dataset_id)
                    if self.state.dataset_id
                    else _("no releases yet"),
                )
            )
        elif peek is not None:
            self.file_label.setToolTip(str(peek.path))  # the whole path; the label names the file (one line)
            self.file_label.setText(
                _("{path}  ·  {dataset}  ·  first {n} rows shown (for you only)").format(
                    path=Path(peek.path).name,
                    n=len(peek.rows),
                    dataset=_("dataset {id}").format(id=self.state.dataset_id)
                    if self.state.dataset_id
                    else _("no releases yet"),
                )
            )
        self._updating = True
        self.id_column.clear()
        self.id_column.addItem(_("(none)"), None)
        for h in peek.header if peek else ():
            self.id_column.addItem(h, h)
        self._updating = False
        self._plan_changed()

    def _plan_changed(self) -> None:
        d = self.state.plan_data
        self._updating = True
        try:
            unit = d.get("privacy_unit", {})
            self.relation.setCurrentIndex(
                max(0, self.relation.findData(unit.get("neighbouring", "add_remove")))
            )
            k = unit.get("max_rows_per_person", 1)
            self.k.setValue(k if isinstance(k, int) else 1)
            self.id_column.setCurrentIndex(max(0, self.id_column.findData(unit.get("id_column"))))
            b = d.get("budget", {})
            _set_text(self.budget_eps, b.get("epsilon"))
            _set_text(self.budget_delta, b.get("delta", 0))
            acc = d.get("accounting", {})
            self.method.setCurrentIndex(max(0, self.method.findData(acc.get("method", "sequential"))))
            _set_text(self.delta_prime, acc.get("delta_prime"))
            _set_text(self.expected_rows, d.get("expected_rows"))  # only ever what the plan states
            self.delta_prime.setEnabled(acc.get("method") == "advanced")
            fixed = self.state.ledger_settings()
            self.locked.setText(
                _(
                    "This dataset's budget, unit of privacy and accounting were fixed at its first release; "
                    "a plan that differs will be refused."
                )
                if fixed
                else ""
            )
            if self.locked.isVisibleTo(self) != bool(fixed):
                self.locked.setVisible(bool(fixed))
                if self._split_fitted:
                    QTimer.singleShot(0, self._fit_split)  # the unit box's height changed with its note
        finally:
            self._updating = False

    def _unit_edited(self) -> None:
        if self._updating:
            return
        new = self.state.draft()
        unit: dict[str, Any] = {
            "neighbouring": self.relation.currentData(),
            "max_rows_per_person": self.k.value(),
        }
        if self.id_column.currentData():
            unit["id_column"] = self.id_column.currentData()
        new["privacy_unit"] = unit
        new["budget"] = {
            "epsilon": _number(self.budget_eps.text()),
            "delta": _number(self.budget_delta.text(), 0),
        }
        acc: dict[str, Any] = {"method": self.method.currentData()}
        if acc["method"] == "advanced":
            from dpdesk.core.dp.accounting import (
                default_delta_prime,  # the meter's delta', so the totals agree
            )

            b = new["budget"]["delta"]
            dp = _number(self.delta_prime.text(), default_delta_prime(b) if isinstance(b, float) else None)
            if dp is not None:  # else the plan check says delta' is required
                acc["delta_prime"] = dp
        new["accounting"] = acc
        self.state.edit(new, _("Edit unit of privacy and budget"), merge_id=1)

    def _rows_edited(self) -> None:
        """The public estimate of the number of rows, as typed (never counted from the table)."""
        if self._updating:
            return
        new = self.state.draft()
        text = self.expected_rows.text().strip().replace(",", "").replace("_", "").replace(" ", "")
        if not text:
            new.pop("expected_rows", None)
        else:
            new["expected_rows"] = parse_number(text)  # text that is no whole number: the plan check names it
        self.state.edit(new, _("Edit the expected number of rows"), merge_id=2)

    def _suggest(self) -> None:
        new = self.state.draft()
        for name, spec in list(new["columns"].items()):
            t = self.state.suggested.get(name)
            if t and t != spec["type"]:
                new["columns"][name] = (
                    {"type": t, "categories": []} if t == "category" else {"type": t, "bounds": []}
                )
        self.state.edit(new, _("Suggest types"))


def _set_text(edit: QLineEdit, value: Any) -> None:
    """A plan's number in its field as typed, in plain notation (a δ of 1e-06 reads 0.000001)."""
    if isinstance(value, float) and math.isfinite(value):
        from dpdesk.core.dp.values import fmt_number

        text = fmt_number(value)
    else:
        text = "" if value is None else str(value)
    if edit.text() != text and not edit.hasFocus():
        edit.setText(text)


def _number(text: str, default: Any = None) -> Any:
    text = text.strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        return text  # the plan validator names it
