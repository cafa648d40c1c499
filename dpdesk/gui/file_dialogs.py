"""The file dialogs as a desktop app has them: each kind of file (a table, a plan, an export, a package to
review, ...) opens in the folder last chosen for it, Save and Export propose a name, and a table remembers the
plan last used with it. What is remembered is kept in the home's settings (``dialogs/<kind>``,
``files/last_plans``): folders and file names the user chose, never a value from a table."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QWidget

#: a kind with no folder of its own yet opens where its neighbour's last went (a package to review, where exports go)
FALLBACK = {"package": "export", "statement": "export", "synthetic": "export", "simulation": "export"}
MAX_PLANS = 50  # tables whose last plan is remembered


def plan_name(table: Path | None) -> str:
    """The name proposed for a new plan: ``<table stem>_plan.json`` (the file's name, not its content)."""
    return f"{table.stem}_plan.json" if table is not None else "plan.json"


def export_name(table: Path | None, number: int) -> str:
    """The folder proposed for a release package: ``<table stem>_release_<N>``, N the dataset's release number."""
    return f"{table.stem}_release_{number}" if table is not None else f"release_{number}"


class FileDialogs:
    """QFileDialog's static dialogs with a remembered folder per kind and a proposed name."""

    def __init__(self, parent: QWidget, settings: QSettings) -> None:
        self.parent = parent
        self.settings = settings

    # ------------------------------------------------------------------ folders
    def folder(self, kind: str) -> str:
        """The folder the last dialog of ``kind`` chose (or its fallback kind's), if it still exists; else ""."""
        for k in (kind, FALLBACK.get(kind)):
            if not k:
                continue
            value = self.settings.value(f"dialogs/{k}", "")
            if isinstance(value, str) and value and os.path.isdir(value):
                return value
        return ""

    def remember(self, kind: str, folder: Path) -> None:
        """The next dialog of ``kind`` opens in ``folder`` (absolute: not relative to where dpdesk started)."""
        self.settings.setValue(f"dialogs/{kind}", os.path.abspath(folder))

    def _start(self, kind: str, name: str) -> str:
        where = self.folder(kind)
        if name:
            return os.path.join(where, name) if where else name
        return where

    # ------------------------------------------------------------------ the dialogs
    def open_file(self, title: str, filt: str, kind: str) -> str:
        """A file to open, chosen in the folder last used for ``kind``; its folder is remembered."""
        path = QFileDialog.getOpenFileName(self.parent, title, self._start(kind, ""), filt)[0]
        if path:
            self.remember(kind, Path(path).parent)
        return path

    def save_file(self, title: str, filt: str, kind: str, name: str = "") -> str:
        """A file to write, proposed as ``name`` in the folder last used for ``kind``; its folder is remembered."""
        path = QFileDialog.getSaveFileName(self.parent, title, self._start(kind, name), filt)[0]
        if path:
            self.remember(kind, Path(path).parent)
        return path

    def folder_to_open(self, title: str, kind: str) -> str:
        """An existing folder (a package to review); the folder it is in is remembered."""
        path = QFileDialog.getExistingDirectory(self.parent, title, self.folder(kind))
        if path:
            self.remember(kind, Path(path).parent)
        return path

    def new_folder(self, title: str, kind: str, name: str) -> str:
        """A folder to write into, new or not, proposed as ``name``: a save dialog, where a name that does not
        exist yet can be typed (a folder dialog refuses it: "Directory not found"); the caller makes it."""
        path = QFileDialog.getSaveFileName(
            self.parent,
            title,
            self._start(kind, name),
            "",
            options=QFileDialog.Option.DontConfirmOverwrite,  # an existing folder is not replaced: a new one is made in it
        )[0]
        if path:
            self.remember(kind, Path(path).parent)
        return path

    # ------------------------------------------------------------------ a table's last plan
    def _plans(self) -> dict[str, str]:
        value = self.settings.value("files/last_plans", "")
        try:
            plans = json.loads(value) if isinstance(value, str) and value else {}
        except ValueError:
            return {}
        if not isinstance(plans, dict):
            return {}
        return {str(k): str(v) for k, v in plans.items()}

    def remember_plan(self, table: Path, plan: Path) -> None:
        """``plan`` is the plan last used with ``table`` (both by absolute path; the latest first, a bounded list)."""
        key, value = os.path.abspath(table), os.path.abspath(plan)
        plans = {key: value} | {k: v for k, v in self._plans().items() if k != key}
        kept = dict(list(plans.items())[:MAX_PLANS])
        self.settings.setValue("files/last_plans", json.dumps(kept, ensure_ascii=False))

    def last_plan(self, table: Path) -> Path | None:
        """The plan last used with ``table``, if its file is still there."""
        plan = self._plans().get(os.path.abspath(table))
        return Path(plan) if plan and os.path.isfile(plan) else None
