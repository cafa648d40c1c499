"""What is done with a release once shown, all free: its package, its synthetic tables, the budget statement."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.gui.workers import Worker
    from dpdesk.services.synthetic import SyntheticTable


def package_folder(chosen: Path, name: str) -> Path:
    """Where an export goes: the chosen folder if it is new or empty, else a new folder in it named ``name`` (the
    table's and the release's: ``census_release_3``, then ``census_release_3 (2)``, ...); the export makes it."""
    try:
        empty = not chosen.exists() or (chosen.is_dir() and not any(chosen.iterdir()))
    except OSError:
        empty = False
    if empty:
        return chosen
    base = name
    out, k = chosen / base, 2
    while out.exists():
        out, k = chosen / f"{base} ({k})", k + 1
    return out


class Results(Action):
    """The Results tab's Export and Save table, its synthetic tables, and the Ledger tab's statement."""

    def _dataset_name(self) -> str:
        state = self.state
        return state.data_path.name if state.data_path else (state.dataset_id or "")

    def _table_file_name(self, what: str) -> str:
        """A proposed file name: the table's file name's stem and ``what`` (never a value from the table)."""
        table = self.state.data_path
        return f"{table.stem}_{what}" if table is not None else what

    def _release_file_name(self, what: str) -> str:
        """A proposed file name for the shown release: ``<table stem>_release_<N>_<what>``."""
        from dpdesk.gui.file_dialogs import export_name
        from dpdesk.gui.models import release_number

        entry = self.state.results_entry
        if entry is None:
            return self._table_file_name(what)
        return f"{export_name(self.state.data_path, release_number(self.state.ledger_entries, entry.seq))}_{what}"

    def export_release(self) -> Worker | None:
        """Write the shown release as a package (release.csv, report.pdf, plan.json, ledger.json); costs nothing."""
        window, state = self.window, self.state
        entry = state.results_entry
        if not state.results or entry is None or state.sha256 is None:
            return None
        from dpdesk.gui.file_dialogs import export_name
        from dpdesk.gui.models import release_number

        proposed = export_name(state.data_path, release_number(state.ledger_entries, entry.seq))
        folder = window.ask_folder(
            _(
                "Name the release package's folder (made if new; in a folder that is not empty, a new one is made)"
            ),
            "export",
            proposed,
        )
        if not folder:
            return None
        home, sha, name = state.home, state.sha256, self._dataset_name()
        out = package_folder(Path(folder), proposed)
        window.files.remember("export", out.parent)  # the next export proposes its name beside this one
        title = window.results_view.report_title.text().strip() or None

        def job(progress: Progress) -> Path:
            from dpdesk.services.common import Dataset
            from dpdesk.services.export import ExportRequest, export_release

            dataset = Dataset(home, sha256=sha, name=name)
            return export_release(ExportRequest(dataset, entry, out, title), progress).out

        def done(folder_out: Path) -> None:
            state.read_ledger()
            window.show_outcome(
                _("Exported the release package to {folder}").format(folder=folder_out), folder_out
            )

        return self.run(job, done, _("Writing the release package…"))

    def load_synthetic(self) -> Worker | None:
        """Regenerate the shown release's synthetic tables from its spend entry (the ledger's noisy marginals and
        seeds: free, never the private table) in the worker, for the Results tab."""
        window = self.window
        entry = self.state.results_entry
        if entry is None or not entry.get("synthetic") or entry is window.results_view.synth_entry:
            return None

        def job(progress: Progress) -> tuple[SyntheticTable, ...]:
            from dpdesk.services.synthetic import synthetic_tables

            return synthetic_tables(entry, progress)

        def done(tables: tuple[SyntheticTable, ...]) -> None:
            window.results_view.show_synthetic(entry, tables)

        return self.run(job, done, _("Making the synthetic table…"))

    def save_synthetic_table(self) -> None:
        """Write the shown synthetic table as CSV: the bytes the release package holds (costs nothing)."""
        window = self.window
        table = window.results_view.shown_synthetic()
        if table is None:
            return
        path = window.ask_save_path(
            _("Save the synthetic table as CSV"),
            _("CSV files") + " (*.csv);;" + _("All files") + " (*)",
            "synthetic",
            self._release_file_name("synthetic.csv"),
        )
        if not path:
            return
        from dpdesk.core.common.fsio import write_atomic

        try:
            write_atomic(Path(path), table.csv)
        except OSError as exc:
            window.show_error(_("Could not write {path}: {err}").format(path=path, err=exc.strerror or exc))
            return
        window.show_outcome(_("Saved the synthetic table to {path}").format(path=path), Path(path))

    def export_statement(self, path: str | None = None) -> Worker | None:
        """Write the opened dataset's budget statement (all releases, all methods) as a PDF."""
        window, state = self.window, self.state
        if state.sha256 is None:
            return None
        path = path or window.ask_save_path(
            _("Save the budget statement"),
            "PDF (*.pdf)",
            "statement",
            self._table_file_name("budget_statement.pdf"),
        )
        if not path:
            return None
        target = Path(path if path.lower().endswith(".pdf") else path + ".pdf")
        home, sha, name = state.home, state.sha256, self._dataset_name()

        def job(progress: Progress) -> Path:
            from dpdesk.services.common import Dataset
            from dpdesk.services.ledger import StatementRequest, write_statement

            dataset = Dataset(home, sha256=sha, name=name)
            # the save dialog asked before replacing a file (the data and the home stay refused)
            return write_statement(StatementRequest(dataset, target, force=True), progress).out

        def done(out: Path) -> None:
            window.show_outcome(_("Wrote the budget statement to {path}").format(path=out), out)

        return self.run(job, done, _("Writing the budget statement…"))
