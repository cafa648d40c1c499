"""The application state: the opened table, the plan being edited, the dataset's ledger.

The plan is edited as its JSON form (a dict), so that everything the GUI does is a plan file;
each edit is an undoable command holding the old and new dicts. After every edit the plan is
validated by the engine (:func:`dpdesk.core.plan.reader.check_plan`: every problem at once, and the plan's valid
part) and the budget recomputed by the service layer (:func:`dpdesk.services.budget.budget_of_entries`, from
the ledger entries read when the table was opened); the GUI does no DP arithmetic itself. While some queries have problems, the meter and the previews show the valid ones
(``valid_plan``); only a plan without problems (``plan``) can be released.

Signals:
    data_changed(): a new table was opened (or hashed).
    plan_changed(): the plan dict changed (validation and budget are up to date).
    ledger_changed(): the dataset's ledger was (re)read.
    results_changed(): results to show changed (a new release, or a past one reopened).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from dpdesk.core.common.errors import DpdeskError, LedgerError
from dpdesk.core.ledger.team import TeamLedgerError
from dpdesk.i18n import _

if TYPE_CHECKING:  # the engine is imported when first used, after the window is on screen
    from dpdesk.core.common.errors import PlanError
    from dpdesk.core.identity.recognition import Resemblance
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.core.ledger.entries import Entry, SpendEntry
    from dpdesk.core.loading import Peek
    from dpdesk.core.model.spec import Plan


def new_plan_data(title: str = "") -> dict[str, Any]:
    """The plan a new dataset starts with: a budget to adjust, no columns, no queries."""
    return {
        "version": 1,
        "title": title,
        "budget": {"epsilon": 1.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "accounting": {"method": "sequential"},
        "columns": {},
        "queries": [],
    }


@dataclass(frozen=True)
class ClusterSource:
    """A table only the cluster reads (File > Open Spark table): ``source`` as ``--data`` takes it (``table:NAME``,
    a folder, a path or a URI), and a CSV's ``encoding`` and ``delimiter`` as ``--encoding``/``--delimiter`` take
    them. Its rows are never on this computer: the app holds its header only, and Spark reads it at each release."""

    source: str
    encoding: str | None = None
    delimiter: str | None = None


class PlanEdit(QUndoCommand):
    """One undoable change of the plan: the old and the new plan dicts."""

    def __init__(
        self, state: AppState, old: dict[str, Any], new: dict[str, Any], text: str, merge_id: int = -1
    ):
        super().__init__(text)
        self.state = state
        self.old = old
        self.new = new
        self._merge = merge_id

    def redo(self) -> None:
        self.state._set_plan_data(self.new)

    def undo(self) -> None:
        self.state._set_plan_data(self.old)

    def id(self) -> int:
        return self._merge

    def mergeWith(self, other: QUndoCommand) -> bool:  # typing a number merges into one step
        if not isinstance(other, PlanEdit) or other.id() != self.id() or self.id() < 0:
            return False
        self.new = other.new
        return True


class AppState(QObject):
    """Owns the current table, plan and ledger; views subscribe to its signals."""

    data_changed = Signal()
    plan_changed = Signal()
    ledger_changed = Signal()
    results_changed = Signal()

    def __init__(self, home: Path) -> None:
        super().__init__()
        self.home = home
        self.undo_stack = QUndoStack(self)
        self.data_path: Path | None = None
        #: the opened table is one only the cluster reads (its header only here), or None for a file of this computer
        self.cluster: ClusterSource | None = None
        self.peek: Peek | None = None
        self.sha256: str | None = None  # the data file's SHA-256: its local ledger key, never shown or saved
        self.dataset_id: str | None = None  # the dataset's public id, once it has a ledger
        self.ledger_notice: str | None = None  # told once: the ledger was migrated from the old format
        #: the known datasets a new table resembles (local estimates, shown on screen only), most similar first
        self.near: tuple[Resemblance, ...] = ()
        self.identity_error: str | None = None  # the home's content identities cannot be trusted
        self.suggested: dict[str, str] = {}
        self.plan_data: dict[str, Any] = new_plan_data()
        self.plan: Plan | None = None
        self.plan_error: str | None = None
        self.plan_error_key: str | None = None
        #: every problem of the plan, in plan order (the form marks each one's field)
        self.plan_problems: tuple[PlanError, ...] = ()
        #: the plan restricted to its valid queries (the meter and the previews), and their rows in the plan
        self.valid_plan: Plan | None = None
        self.valid_rows: tuple[int, ...] = ()
        self.plan_path: Path | None = None
        self.report: BudgetReport | None = None
        self.ledger_entries: list[Entry] = []
        self.ledger_error: str | None = None
        self.results: list[list[str]] = []
        self.results_title = ""
        self.results_entry: SpendEntry | None = None  # the spend entry the shown results come from
        self.clean_index = 0
        # no validation yet: the engine loads after the window is shown
        self.plan_error = _("Open a table or a plan to begin.")

    # ------------------------------------------------------------------ plan
    @property
    def dirty(self) -> bool:
        """Unsaved plan changes."""
        return self.undo_stack.index() != self.clean_index

    def mark_saved(self, path: Path) -> None:
        """The plan was saved to ``path``."""
        self.plan_path = path
        self.clean_index = self.undo_stack.index()
        self.undo_stack.setClean()
        self.plan_changed.emit()

    def edit(self, new: dict[str, Any], text: str, merge_id: int = -1) -> None:
        """Apply an undoable plan edit (no-op if nothing changed)."""
        if new == self.plan_data:
            return
        self.undo_stack.push(
            PlanEdit(self, copy.deepcopy(self.plan_data), copy.deepcopy(new), text, merge_id)
        )

    def draft(self) -> dict[str, Any]:
        """A deep copy of the plan dict to modify and pass to :meth:`edit`."""
        return copy.deepcopy(self.plan_data)

    def load_plan_data(self, data: dict[str, Any], path: Path | None) -> None:
        """Replace the plan (from a file); the undo history starts afresh."""
        self.undo_stack.clear()
        self.clean_index = 0
        self.plan_path = path
        self._set_plan_data(copy.deepcopy(data))

    def _set_plan_data(self, data: dict[str, Any]) -> None:
        self.plan_data = data
        self._validate()
        self.plan_changed.emit()

    def _validate(self) -> None:
        from dpdesk.core.common.errors import PlanErrors
        from dpdesk.core.plan.reader import check_plan

        check = check_plan(self.plan_data)
        self.plan = check.plan
        self.valid_plan, self.valid_rows = check.valid, check.rows
        self.plan_problems = check.problems
        if check.problems:
            self.plan_error = str(PlanErrors(check.problems))
            self.plan_error_key = check.problems[0].key
        else:
            self.plan_error = self.plan_error_key = None
        self.report = None
        if self.valid_plan is not None:  # the valid part is metered while other queries have problems
            from dpdesk.services.budget import budget_of_entries

            try:  # the service's report, from the entries read and verified when the table was opened
                self.report = budget_of_entries(self.valid_plan, self.ledger_entries)
            except DpdeskError as exc:  # pragma: no cover - the report raises nothing for a valid plan
                self.plan_error = str(exc)

    def query_problems(self, row: int) -> list[PlanError]:
        """The problems of the plan's query at ``row`` (from 0)."""
        prefix = f"queries[{row}]"
        return [
            p for p in self.plan_problems if p.key == prefix or p.key.startswith((prefix + ".", prefix + "["))
        ]

    def valid_query(self, row: int) -> int | None:
        """Where the plan's query at ``row`` is in ``valid_plan`` (None: it has a problem)."""
        return self.valid_rows.index(row) if row in self.valid_rows else None

    def solved_epsilon(self, row: int) -> float | None:
        """The epsilon of the plan's query at ``row`` as the engine read it (solved from its accuracy target when
        it states one); None while the query has a problem."""
        at = self.valid_query(row)
        return None if at is None or self.valid_plan is None else self.valid_plan.queries[at].epsilon

    def query_accuracy(self, row: int) -> tuple[str, dict[str, Any]] | None:
        """The accuracy of the plan's query at ``row`` in its own units (the engine's sentence and numbers), from
        the plan alone; None while the query has a problem."""
        at = self.valid_query(row)
        if at is None or self.report is None or at >= len(self.report.queries):
            return None
        q = self.report.queries[at]
        return (q.accuracy, q.accuracy_value or {}) if q.accuracy is not None else None

    def plan_json(self) -> str:
        """The plan as it would be saved."""
        data = self.plan.to_dict() if self.plan is not None else self.plan_data
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    # ------------------------------------------------------------------ data
    def set_data(
        self,
        path: Path,
        peek: Peek,
        suggested: dict[str, str],
        sha256: str | None,
        near: tuple[Resemblance, ...] = (),
        identity_error: str | None = None,
        cluster: ClusterSource | None = None,
    ) -> None:
        """A table was opened (and resolved, in the worker): show it, read its ledger, and start a plan for it if
        none is open. ``near``: the known datasets it resembles when it is new; ``identity_error``: why its
        dataset could not be found by content; ``cluster``: a table only the cluster reads (``peek`` has its
        header and no rows; its ledger is found by the key Spark last named it with, none before its first
        release)."""
        self.data_path = path
        self.cluster = cluster
        self.peek = peek
        self.suggested = suggested
        self.sha256 = sha256
        self.near = near
        self.identity_error = identity_error
        self.ledger_notice = None
        self.results = []
        self.results_title = ""
        self.read_ledger()
        if not self.plan_data["columns"] and not self.plan_data["queries"]:
            data = new_plan_data(path.stem)
            settings = self.ledger_settings()
            if settings:
                data["budget"] = settings["budget"]
                data["privacy_unit"] = settings["privacy_unit"]
                data["accounting"] = settings["accounting"]
            self.load_plan_data(data, None)
        else:
            self._validate()
            self.plan_changed.emit()
        self.data_changed.emit()
        self.results_changed.emit()

    # ------------------------------------------------------------------ ledger
    def read_ledger(self) -> None:
        """(Re)read and verify the opened dataset's ledger."""
        from dpdesk.core.ledger.book import Ledger, migration_notice
        from dpdesk.services.ledger import ledger_status

        self.ledger_entries, self.ledger_error, self.dataset_id = [], None, None
        # a table only the cluster reads: the key Spark last named it with there, as `dpdesk ledger --data` finds it
        if self.cluster is not None:
            from dpdesk.services.common import Dataset

            self.sha256 = Dataset(self.home, self.cluster.source).key()
        if self.sha256:
            try:
                ledger = Ledger.for_dataset(self.home, self.sha256)
                ledger.refuse_unimported()  # a team home: a table whose history is still only in its own ledger
                self.dataset_id = ledger.dataset
                if ledger.migrated is not None:
                    self.ledger_notice = migration_notice(ledger.migrated)
                # the same verification as `dpdesk ledger verify`: the whole chain and its last checkpoint
                status = ledger_status(ledger)
                if status.error is not None:
                    raise LedgerError(status.error)
                self.ledger_entries = list(status.entries)
            except (
                LedgerError,
                TeamLedgerError,
            ) as exc:  # a team's server gone: named, never a slot's exception
                self.ledger_error = str(exc)
            if self.identity_error and not self.ledger_error:
                self.ledger_error = self.identity_error
        self._validate()
        self.ledger_changed.emit()
        self.plan_changed.emit()

    @property
    def near_copy(self) -> bool:
        """The opened table is new but resembles a known dataset: linked or declared new before a release."""
        return bool(self.near) and self.dataset_id is None

    def ledger_settings(self) -> dict[str, Any] | None:
        """The dataset's fixed settings, if it was released before."""
        from dpdesk.core.ledger.entries import settings_in_force

        return settings_in_force(self.ledger_entries)

    def can_release(self) -> tuple[bool, str]:
        """Whether Release is allowed now, and why not."""
        if self.data_path is None:
            return False, _("Open a table first.")
        if self.ledger_error:
            return False, _("The ledger of this dataset is broken; a privacy officer must look at it.")
        if self.near_copy:
            return False, _(
                "This table resembles a known dataset: use that dataset's ledger, or declare it a new dataset "
                "(Ledger tab), before releasing."
            )
        if self.plan is None:
            return False, self.plan_error or _("The plan is not complete.")
        if self.report is not None and not self.report.fits:
            return False, _("The plan exceeds the remaining budget.")
        return True, ""

    def show_results(self, rows: list[list[str]], title: str, entry: SpendEntry | None = None) -> None:
        """Show released rows (a new release, or a past one, which costs nothing) and their spend entry."""
        self.results = rows
        self.results_title = title
        self.results_entry = entry
        self.results_changed.emit()
