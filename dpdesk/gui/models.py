"""Qt table models over core objects: file preview, schema, queries, results and ledger."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.text import shown
from dpdesk.core.publish import words
from dpdesk.gui.state import AppState

if TYPE_CHECKING:
    from dpdesk.core.ledger.entries import Entry
    from dpdesk.core.loading import Peek
from dpdesk.i18n import _

Index = QModelIndex | QPersistentModelIndex
DISPLAY = Qt.ItemDataRole.DisplayRole
EDIT = Qt.ItemDataRole.EditRole


recorded_reason = words.recorded_reason


class PreviewModel(QAbstractTableModel):
    """The first rows of the opened file, as text (read-only)."""

    def __init__(self) -> None:
        super().__init__()
        self.peek: Peek | None = None

    def set_peek(self, peek: Peek | None) -> None:
        self.beginResetModel()
        self.peek = peek
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.peek is None else len(self.peek.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.peek is None else len(self.peek.header)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if self.peek is None or not index.isValid() or role != DISPLAY:
            return None
        return self.peek.rows[index.row()][index.column()]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role != DISPLAY or self.peek is None:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.peek.header[section]
        return str(section + 1)


SCHEMA_COLUMNS = ("use", "column", "type", "lower", "upper", "categories", "missing")


class SchemaModel(QAbstractTableModel):
    """One row per file column: whether it is declared, its type, bounds, categories and missing policy.

    Edits go to the plan through the app state (undoable).
    """

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.names: list[str] = []
        state.data_changed.connect(self.refresh)
        state.plan_changed.connect(self._data_refresh)

    def headers(self) -> list[str]:
        return [
            _("Use"),
            _("Column"),
            _("Type"),
            _("Lower bound"),
            _("Upper bound"),
            _("Categories"),
            _("If missing"),
        ]

    def refresh(self) -> None:
        self.beginResetModel()
        self.names = list(self.state.peek.header) if self.state.peek else []
        for name in self.state.plan_data["columns"]:
            if name not in self.names:
                self.names.append(name)
        self.endResetModel()

    def _data_refresh(self) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(SCHEMA_COLUMNS) - 1))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.names)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(SCHEMA_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal:
            return self.headers()[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return [
                _("Tick the columns your statistics use; the others are ignored."),
                _("The column's name in the file."),
                _(
                    "int, float or category. 'Suggest types' can propose these; bounds and categories it never reads."
                ),
                _(
                    "The smallest value that can occur, known without looking at this file (a codebook, a legal limit)."
                ),
                _(
                    "The largest value that can occur, known without looking at this file. Larger values are clamped."
                ),
                _(
                    "All possible categories, separated by commas, from a codebook or the questionnaire. "
                    "Values not listed count as missing."
                ),
                _("What to do with an empty or unreadable value: drop the row, or use a value you choose."),
            ][section]
        return None

    def spec(self, row: int) -> dict[str, Any] | None:
        spec: dict[str, Any] | None = self.state.plan_data["columns"].get(self.names[row])
        return spec

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        col = SCHEMA_COLUMNS[index.column()]
        if col == "use":
            return base | Qt.ItemFlag.ItemIsUserCheckable
        spec = self.spec(index.row())
        if spec is None or col == "column":
            return base
        if col in ("lower", "upper") and spec["type"] == "category":
            return base
        if col == "categories" and spec["type"] != "category":
            return base
        return base | Qt.ItemFlag.ItemIsEditable

    def cell_problems(self, name: str, col: str) -> list[str]:
        """The plan's problems that concern this cell (a column's bounds mark both bound cells; a problem of the
        column as a whole marks its name), each once."""
        fields = {"column": ("",), "type": ("type",), "lower": ("bounds",), "upper": ("bounds",)}
        fields |= {"categories": ("categories",), "missing": ("missing",)}
        keys = {f"columns.{name}" + (f".{f}" if f else "") for f in fields.get(col, ())}
        out: list[str] = []
        for p in self.state.plan_problems:
            key = p.key.split("[")[0]
            if key in keys and p.text not in out:
                out.append(p.text)
        return out

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        name = self.names[index.row()]
        spec = self.spec(index.row())
        col = SCHEMA_COLUMNS[index.column()]
        if role in (
            Qt.ItemDataRole.DecorationRole,
            Qt.ItemDataRole.ToolTipRole,
            Qt.ItemDataRole.BackgroundRole,
        ):
            problems = self.cell_problems(name, col) if spec is not None else []
            if not problems:
                return None
            if role == Qt.ItemDataRole.ToolTipRole:  # the problem in words, on the cell it is about
                return "\n".join(problems)
            if role == Qt.ItemDataRole.BackgroundRole:
                from PySide6.QtGui import QColor

                return QColor("#fdecea")
            from PySide6.QtWidgets import QApplication, QStyle

            return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        if role == Qt.ItemDataRole.CheckStateRole and col == "use":
            return Qt.CheckState.Checked if spec is not None else Qt.CheckState.Unchecked
        if role not in (DISPLAY, EDIT):
            return None
        if col == "column":
            return name
        if spec is None:
            if (
                col == "type"
                and role == DISPLAY
                and self.state.cluster is not None
                and name not in self.state.suggested
            ):
                # a timestamp, binary, nested: the engine refuses the table (every column names its content)
                return _("(a type Spark cannot name: release a view of the table without it)")
            if col == "type" and role == DISPLAY:
                return _("(suggested: {t})").format(t=words.column_type(self.state.suggested.get(name, "?")))
            return None
        if col == "type":  # the plan's word for editing, its name in the user's language for reading
            return spec["type"] if role == EDIT else words.column_type(spec["type"])
        if col in ("lower", "upper"):
            b = spec.get("bounds")
            return "" if not b else _num(b[0 if col == "lower" else 1])
        if col == "categories":
            return ", ".join(str(c) for c in spec.get("categories", []))
        if col == "missing":
            m = spec.get("missing", "drop")
            return _("drop the row") if m == "drop" else _("impute {v}").format(v=m["impute"])
        return None

    def setData(self, index: Index, value: Any, role: int = EDIT) -> bool:
        name = self.names[index.row()]
        col = SCHEMA_COLUMNS[index.column()]
        new = self.state.draft()
        cols = new["columns"]
        if col == "use" and role == Qt.ItemDataRole.CheckStateRole:
            if Qt.CheckState(value) == Qt.CheckState.Checked:
                t = self.state.suggested.get(name, "category")
                cols[name] = {"type": t, "categories": []} if t == "category" else {"type": t, "bounds": []}
            else:
                cols.pop(name, None)
            self.state.edit(_ordered(new, self.names), _("Use column {c}").format(c=name))
            return True
        if role != EDIT or name not in cols:
            return False
        spec = cols[name]
        text = str(value).strip()
        if col == "type":
            if text not in ("int", "float", "category") or text == spec["type"]:
                return False
            cols[name] = (
                {"type": text, "categories": []}
                if text == "category"
                else {"type": text, "bounds": spec.get("bounds", [])}
            )
        elif col in ("lower", "upper"):
            b = list(spec.get("bounds") or [None, None])
            while len(b) < 2:
                b.append(None)
            b[0 if col == "lower" else 1] = parse_number(text)
            spec["bounds"] = b if any(x is not None for x in b) else []
        elif col == "categories":
            spec["categories"] = [
                c.strip() for c in text.replace("\n", ",").replace("，", ",").split(",") if c.strip()
            ]
        elif col == "missing":
            if text in ("", "drop", _("drop the row")):
                spec["missing"] = "drop"
            else:
                v = text.removeprefix(_("impute")).strip()
                num = parse_number(v)
                spec["missing"] = {"impute": num if num is not None and spec["type"] != "category" else v}
        self.state.edit(new, _("Edit {c}").format(c=name), merge_id=hash((name, col)) & 0x7FFFFFFF)
        return True


def display_number(cell: str, v: float) -> str:
    """A released number for the screen: thousands separators, a few decimals (release.csv keeps all digits)."""
    if "." not in cell and v.is_integer():
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return numfmt.plain(v, 4)


def _num(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return "" if x is None else str(x)


def parse_number(text: str) -> Any:
    """A typed number as int or float; text that is no number is kept as typed (the plan validator names it)."""
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        return text  # kept as typed: the plan validator names the problem
    return int(v) if v.is_integer() and abs(v) < 2**53 and "." not in text and "e" not in text.lower() else v


def _ordered(plan: dict[str, Any], order: list[str]) -> dict[str, Any]:
    cols = plan["columns"]
    plan["columns"] = {n: cols[n] for n in order if n in cols}
    return plan


QUERY_COLUMNS = ("name", "statistic", "column", "group_by", "mechanism", "epsilon", "delta")


class _StateListModel(QAbstractTableModel):
    """A read-only table over one list held by the app state, reset whenever the state says it changed."""

    columns: tuple[str, ...] = ()

    def __init__(self, state: AppState, changed: Any) -> None:
        super().__init__()
        self.state = state
        changed.connect(self._reset)

    def _reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def items(self) -> list[Any]:
        """The rows shown."""
        raise NotImplementedError

    def headers(self) -> list[str]:
        """The column titles (translated when asked for, so the language in force is used)."""
        raise NotImplementedError

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.items())

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if role == DISPLAY and orientation == Qt.Orientation.Horizontal:
            return self.headers()[section]
        return None


class QueryListModel(_StateListModel):
    """The plan's queries, one row each; a query with a problem has a warning sign and the problem as tooltip."""

    columns = QUERY_COLUMNS

    def __init__(self, state: AppState) -> None:
        super().__init__(state, state.plan_changed)

    def queries(self) -> list[dict[str, Any]]:
        return list(self.state.plan_data.get("queries", []))

    items = queries

    def headers(self) -> list[str]:
        return [_("Name"), _("Statistic"), _("Column"), _("Grouped by"), _("Mechanism"), "ε", "δ"]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        q = self.queries()[index.row()]
        problems = self.state.query_problems(index.row())
        if role == Qt.ItemDataRole.DecorationRole and problems and index.column() == 0:
            from PySide6.QtWidgets import QApplication, QStyle

            return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        if role == Qt.ItemDataRole.ToolTipRole and problems:
            return "\n".join(p.text for p in problems)
        if role != DISPLAY:
            return None
        field = QUERY_COLUMNS[index.column()]
        v = q.get(field)
        if field == "epsilon" and "accuracy" in q:  # accuracy first: the epsilon solved from the target
            eps = self.state.solved_epsilon(index.row())
            return _("(not solved)") if eps is None else _("{e} (solved)").format(e=numfmt.epsilon(eps, "up"))
        if field in ("statistic", "mechanism") and isinstance(v, str):
            return word_label(v)
        if isinstance(v, float) and math.isfinite(v):  # as typed, in plain notation (1e-07 is 0.0000001)
            from dpdesk.core.dp.values import fmt_number

            return fmt_number(v)
        if (
            field == "column" and v is None and isinstance(q.get("columns"), list)
        ):  # a synthetic table's columns
            return ", ".join(str(c) for c in q["columns"])
        return "" if v is None else str(v)


def word_label(word: str) -> str:
    """A plan word (statistic, mechanism, relation, method, column type) as the user reads it; the plan file
    keeps the word itself."""
    return words.any_word(word)


RESULT_COLUMNS = ("query", "group", "value", "ci_low", "ci_high", "mechanism", "epsilon", "delta")


class ResultsModel(_StateListModel):
    """Released rows (exactly the cells of release.csv)."""

    columns = RESULT_COLUMNS

    def __init__(self, state: AppState) -> None:
        super().__init__(state, state.results_changed)

    def items(self) -> list[Any]:
        return self.state.results

    def headers(self) -> list[str]:
        return [_("Query"), _("Group"), _("Value"), _("95% low"), _("95% high"), _("Mechanism"), "ε", "δ"]

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in (2, 3, 4, 6, 7):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != DISPLAY:
            return None
        cell = self.state.results[index.row()][index.column()]
        if index.column() in (2, 3, 4) and cell:
            try:
                v = float(cell)
            except ValueError:
                return cell
            return display_number(cell, v)
        if index.column() == 5 and cell:  # the mechanism in the user's language (release.csv keeps its word)
            return word_label(cell)
        return cell


LEDGER_COLUMNS = ("seq", "time", "type", "epsilon", "delta", "what")


def release_number(entries: list[Entry], seq: int) -> int:
    """The number of the release recorded as ledger entry ``seq``, counting the dataset's releases from 1 (the
    ledger's entry numbers also count its settings, packages and other entries)."""
    return sum(1 for e in entries if e.type == "spend" and e.seq <= seq)


class LedgerModel(_StateListModel):
    """The dataset's ledger entries (read-only)."""

    columns = LEDGER_COLUMNS

    def __init__(self, state: AppState) -> None:
        super().__init__(state, state.ledger_changed)

    def items(self) -> list[Any]:
        return self.state.ledger_entries

    def headers(self) -> list[str]:
        return ["#", _("Time (UTC)"), _("Entry"), "ε", "δ", _("Details")]

    def entry(self, row: int) -> Entry:
        return self.state.ledger_entries[row]

    def _correction_changes(self) -> dict[int, float]:
        """How much each correction raised the total under the method in force (computed once per ledger)."""
        from dpdesk.core.ledger.recost import correction_changes

        entries = self.state.ledger_entries
        key = (id(entries), len(entries))
        if getattr(self, "_changes_key", None) != key:
            try:
                self._changes = correction_changes(entries)
            except Exception:  # noqa: BLE001 - a ledger the chain check flagged: its stored figure is shown
                self._changes = {}
            self._changes_key = key
        return self._changes

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid() or role != DISPLAY:
            return None
        from dpdesk.core.ledger.entries import CorrectionEntry, SettingsEntry, SimulateEntry, SpendEntry

        e = self.entry(index.row())
        col = LEDGER_COLUMNS[index.column()]
        if col == "seq":
            return str(e.seq)
        if col == "time":
            return shown(e.time.replace("T", " ").replace("+00:00", ""))
        if col == "type":
            return shown(words.entry_type(e.type))
        if isinstance(e, SpendEntry):
            if col == "epsilon":
                return numfmt.plain(e.charged.epsilon, 6, "up")  # a record: six digits, as the report
            if col == "delta":
                return numfmt.delta(e.charged.delta, "up")
            return ", ".join(shown(n) for n in e.query_names)
        if isinstance(e, SettingsEntry) and col == "what":
            from dpdesk.core.dp import accounting

            b = e.settings["budget"]
            return _("budget ε {e}, δ {d}, {m}: {r}").format(
                e=numfmt.epsilon(b["epsilon"])
                if isinstance(b["epsilon"], (int, float))
                else shown(b["epsilon"]),
                d=numfmt.delta(b["delta"]) if isinstance(b["delta"], (int, float)) else shown(b["delta"]),
                m=shown(accounting.method_name(e.method)),
                r=shown(recorded_reason(e.get("reason", ""))),
            )
        if isinstance(e, SimulateEntry) and col == "what":
            return _("{n} simulated run(s) of the data by an older version; charged by a correction").format(
                n=shown(e.get("runs", "?"))
            )
        if isinstance(e, CorrectionEntry):
            if col == "epsilon":  # the change of the total under the dataset's accounting method (issue 34)
                return "+" + numfmt.plain(
                    self._correction_changes().get(e.seq, e.get("added_epsilon", 0)), 6, "up"
                )
            if col == "what":
                return _("past releases booked too low: {list}").format(
                    list=", ".join(shown(r.get("seq")) for r in e.get("releases", []))
                )
        if e.type == "checkpoint" and col == "what":
            return _("totals carried forward")
        if e.type == "migrate" and col == "what":
            return _("renamed {id}: the data's hash is no longer published").format(id=shown(e.dataset))
        return ""
