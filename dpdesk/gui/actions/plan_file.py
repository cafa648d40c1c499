"""The plan's file: open, save (and ask to save before it is replaced), import a codebook's categories."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from dpdesk.core.common.errors import DpdeskError
from dpdesk.gui.actions.base import Action
from dpdesk.gui.file_dialogs import plan_name
from dpdesk.i18n import _


def plan_filter() -> str:
    """The file dialog's filter for plans."""
    return _("dpdesk plans") + " (*.json);;" + _("All files") + " (*)"


class PlanFile(Action):
    """File > Open plan, Save plan, Save plan as; the Data tab's codebook import."""

    def open_plan(self, path: str | None = None) -> bool:
        """Read a plan file (small, JSON) into the form; its problems are listed, its valid part kept."""
        window = self.window
        if not window.maybe_save():
            return False
        path = path or window.ask_open_path(_("Open plan"), plan_filter(), "plan")
        if not path:
            return False
        from dpdesk.core.common import jsonin
        from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file

        try:
            data = jsonin.read_json(read_small_file(path, MAX_PLAN_BYTES), jsonin.PLAN)
            if not isinstance(data, dict):
                raise ValueError(_("a plan is a JSON object"))
        except (OSError, ValueError) as exc:
            why: object = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            if isinstance(exc, jsonin.JsonInputError) and exc.reason == "depth":
                why = _("it nests too deeply to be a plan")
            window.show_error(_("Cannot open the plan {path}: {err}").format(path=path, err=why))
            return False
        self.state.load_plan_data(data, Path(path))
        window.add_recent(Path(path))
        self._remember_with_table(Path(path))
        if self.state.plan_error:
            window.set_status(self.state.plan_error)
        window.query_form.select_row(0)
        return True

    def save_plan(self, ask: bool = False) -> bool:
        """Write the plan to its file (asked for when it has none, or with ``ask``)."""
        window = self.window
        path = self.state.plan_path
        if ask or path is None:
            name = path.name if path is not None else plan_name(self.state.data_path)
            chosen = window.ask_save_path(_("Save plan"), plan_filter(), "plan", name)
            if not chosen:
                return False
            path = Path(chosen if chosen.lower().endswith(".json") else chosen + ".json")
        try:
            path.write_text(self.state.plan_json(), encoding="utf-8")
        except OSError as exc:
            window.show_error(
                _("Cannot save the plan to {path}: {err}").format(path=path, err=exc.strerror or exc)
            )
            return False
        self.state.mark_saved(path)
        window.add_recent(path)  # File > Open recent and the welcome page
        self._remember_with_table(path)
        window.update_title()
        return True

    def _remember_with_table(self, plan: Path) -> None:
        """The open table's last plan is now ``plan`` (offered when the table is opened again with no plan)."""
        if self.state.data_path is not None:
            self.window.files.remember_plan(self.state.data_path, plan)

    def maybe_save(self) -> bool:
        """Before the plan is replaced or the window closed: save, discard or cancel its unsaved changes."""
        window = self.window
        if not self.state.dirty:
            return True
        answer = window.ask_save_changes()
        if answer == QMessageBox.StandardButton.Save:
            return window.save_plan()
        return answer == QMessageBox.StandardButton.Discard

    def import_codebook(self) -> None:
        """Fill the ticked category columns' categories from a codebook (CSV), as one undoable edit."""
        window = self.window
        path = window.ask_open_path(
            _("Import codebook"), "CSV (*.csv);;" + _("All files") + " (*)", "codebook"
        )
        if not path:
            return
        from dpdesk.core.plan.reader import read_codebook

        try:
            book = read_codebook(path)
        except DpdeskError as exc:
            window.show_error(str(exc))
            return
        new = self.state.draft()
        filled = []
        for name, cats in book.items():
            spec = new["columns"].get(name)
            if spec is not None and spec.get("type") == "category":
                spec["categories"] = list(cats)
                filled.append(name)
        self.state.edit(new, _("Import codebook"))
        window.set_status(
            _("Categories imported for: {cols}").format(
                cols=", ".join(filled) or _("no ticked category column")
            )
        )
