"""What a path given to the app is (``dpdesk PATH``, ``dpdesk open PATH``, the file manager, a drop), told by its
content, not by its name: a release package (its folder, or its ``ledger.json``), an exported ledger, a plan or a
table. Reads at most a small head of the file; the review or the loader then reads it whole."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.jsonin import JsonInputError, read_json
from dpdesk.i18n import _

#: How much of a file is read to tell what it is (a plan is at most dpdesk.core.common.smallfile.MAX_PLAN_BYTES; a larger
#: JSON file is told by its first fields).
HEAD_BYTES = 1024 * 1024

#: The table formats the loader reads, by their names' endings (a table's content has no signature to tell it by,
#: but Parquet's and Excel's).
TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".xlsx", ".parquet")

Kind = Literal["package", "ledger", "plan", "table", "database"]


@dataclass(frozen=True)
class Opened:
    """What to open: ``kind`` and the path to open it at (a package's folder for its ``ledger.json``)."""

    kind: Kind
    path: Path


def what_can_open() -> str:
    """The sentence that names what dpdesk opens (in the messages for anything else)."""
    return _(
        "dpdesk opens a table (CSV, TSV, Excel .xlsx, Parquet), a plan (.json), a release package (its folder or "
        "its ledger.json) or an exported ledger (.jsonl)"
    )


def identify(path: str | Path) -> Opened:
    """What ``path`` is; a :class:`DpdeskError` naming the problem and what dpdesk opens when it is none of them.
    A PostgreSQL URL is a table in a database (``docs/databases.md``)."""
    from dpdesk.core.common.dataurl import is_database_url

    if is_database_url(path):
        return Opened("database", Path())
    p = Path(path).expanduser()
    if p.is_dir():
        if (p / "ledger.json").is_file() and (p / "plan.json").is_file():
            return Opened("package", p)
        raise DpdeskError(
            _(
                "{path} is a folder but not a release package (a package holds ledger.json and plan.json); {what}"
            ).format(path=p, what=what_can_open())
        )
    if not p.is_file():
        raise DpdeskError(_("{path}: no such file or folder").format(path=p))
    try:
        with p.open("rb") as f:
            head = f.read(HEAD_BYTES)
            whole = not f.read(1)
    except OSError as exc:
        raise DpdeskError(_("{path} cannot be read: {err}").format(path=p, err=exc.strerror or exc)) from None
    if head.startswith((b"PAR1", b"PK\x03\x04")):  # Parquet, or a zip (Excel's .xlsx)
        return Opened("table", p)
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if text.startswith("{"):
        kind = _json_kind(text, whole)
        if kind == "package":
            return Opened("package", p.parent)
        if kind is not None:
            return Opened(kind, p)
        if p.suffix.lower() in TABLE_SUFFIXES:  # a CSV whose first header starts with "{" is still a table
            return Opened("table", p)
        raise DpdeskError(
            _(
                "{path} is a JSON file but neither a plan, a release package's ledger.json nor an exported ledger; {what}"
            ).format(path=p, what=what_can_open())
        )
    if p.suffix.lower() in TABLE_SUFFIXES:
        return Opened("table", p)
    raise DpdeskError(_("{path} is not a file dpdesk opens; {what}").format(path=p, what=what_can_open()))


_LINE_KEYS = ("seq", "type", "prev", "hash", "dataset")
_PLAN_KEY = re.compile(r'"(?:queries|columns|budget|privacy_unit)"\s*:')


def _json_kind(text: str, whole: bool) -> Kind | None:
    """A JSON file's kind by its fields: a package's ledger.json (dataset, head, entries), an exported ledger (one
    entry a line: seq, type, prev, hash), a plan (queries, columns, a budget or a privacy unit: the plan's checks name its problems); None: another JSON file."""
    first_line = text.split("\n", 1)[0]
    try:
        entry = read_json(first_line, jsonin.LEDGER_LINE)
    except JsonInputError as exc:  # not JSON on its own line, or past a limit: a damaged ledger by its keys
        entry = None
        if exc.reason != "syntax" and all(f'"{k}"' in first_line for k in _LINE_KEYS):
            return "ledger"
    if isinstance(entry, dict) and set(_LINE_KEYS) <= set(entry):
        return "ledger"
    data = None
    if whole:
        try:
            data = read_json(text, jsonin.PACKAGE)
        except JsonInputError as exc:  # past a limit: a plan by its keys (its reader names the problem)
            if exc.reason != "syntax" and _PLAN_KEY.search(text):
                return "plan"
            return None
    if isinstance(data, dict):
        if {"dataset", "entries"} <= set(data) and isinstance(data["entries"], list):
            return "package"
        if {"queries", "columns", "budget", "privacy_unit"} & set(data):  # a plan, perhaps with problems
            return "plan"
        return None
    # too large to be a plan: a large package's ledger.json, by its first fields
    if (
        data is None
        and not whole
        and re.match(r'\{\s*"dataset"\s*:\s*"[^"]*"\s*,\s*"head"\s*:', text)
        and '"entries"' in text
    ):
        return "package"
    return None
