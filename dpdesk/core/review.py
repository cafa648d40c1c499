"""Review: check a release package or an exported ledger, read-only, on any machine."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpdesk.core.errors import DpdeskError, LedgerError
from dpdesk.core.ledger import Ledger, entry_hash, loads_entries
from dpdesk.core.package import PACKAGE_FILES, file_hash
from dpdesk.i18n import _


@dataclass
class Review:
    """What a review found: problems (empty when intact), and what was reviewed."""

    kind: str  # "package" or "ledger"
    problems: list[str] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    spend: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)  # file -> "ok" / problem

    @property
    def intact(self) -> bool:
        """True when nothing was found wrong."""
        return not self.problems


def review(path: str | Path) -> Review:
    """Review a release package folder, or an exported ledger file (.jsonl)."""
    p = Path(path)
    if p.is_dir():
        return review_package(p)
    if p.is_file():
        return review_ledger_file(p)
    raise DpdeskError(_("{path}: no such release package or ledger file").format(path=p))


def review_ledger_file(path: Path) -> Review:
    """Verify the hash chain of an exported ledger (its dataset is read from its first entry)."""
    out = Review("ledger")
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        dataset = json.loads(first)["dataset"] if first.strip() else ""
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        out.problems.append(_("{path}: not a dpdesk ledger").format(path=path))
        return out
    try:
        out.entries = Ledger(dataset, path).verify()
    except LedgerError as exc:
        out.problems.append(str(exc))
    return out


def review_package(folder: Path) -> Review:
    """Check that a package's files are those its ledger entries recorded."""
    out = Review("package")
    try:
        data = loads_entries((folder / "ledger.json").read_text(encoding="utf-8"))
        entries = list(data["entries"])
    except (OSError, ValueError, KeyError, TypeError):  # ValueError: undecodable, invalid JSON, NaN/Infinity
        out.problems.append(_("ledger.json is missing or unreadable: the package cannot be checked"))
        return out
    out.entries = entries
    for e in entries:
        if not isinstance(e, dict) or entry_hash(e) != e.get("hash"):
            out.problems.append(
                _("ledger.json: entry {n} was edited (its hash does not match)").format(
                    n=e.get("seq", "?") if isinstance(e, dict) else "?"
                )
            )
    spend = next((e for e in entries if isinstance(e, dict) and e.get("type") == "spend"), None)
    package = next((e for e in entries if isinstance(e, dict) and e.get("type") == "package"), None)
    out.spend = spend
    if spend is None or package is None:
        out.problems.append(_("ledger.json lacks the release's spend or package entry"))
        return out
    if package.get("spend_hash") != spend.get("hash"):
        out.problems.append(_("ledger.json: the package entry does not belong to this release"))
    recorded = package.get("files", {})
    for name in PACKAGE_FILES:
        f = folder / name
        if not f.exists():
            out.files[name] = _("missing")
            out.problems.append(_("{name} is missing").format(name=name))
        elif file_hash(f) != recorded.get(name):
            out.files[name] = _("modified")
            out.problems.append(
                _("{name} was modified after the release (its SHA-256 differs from the recorded one)").format(
                    name=name
                )
            )
        else:
            out.files[name] = _("intact")
    try:
        out.plan = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
        from dpdesk.core.plan import parse_plan

        if parse_plan(out.plan).plan_hash() != spend.get("plan_hash"):
            out.problems.append(_("plan.json is not the plan that was released (plan hash differs)"))
    except (OSError, ValueError, DpdeskError):
        out.problems.append(_("plan.json cannot be read as a plan"))
    try:
        from dpdesk.core.values import rows_from_entry, rows_to_csv

        raw = (folder / "release.csv").read_bytes()
        expected = rows_to_csv(rows_from_entry(spend))
        if raw.removeprefix(b"\xef\xbb\xbf") != expected:
            out.problems.append(_("release.csv does not hold the values recorded in the ledger"))
    except (OSError, ValueError, TypeError, KeyError, LedgerError):
        out.problems.append(_("release.csv cannot be checked against the ledger"))
    return out


def review_summary(r: Review) -> dict[str, Any]:
    """A JSON-ready summary for the command line."""
    return {
        "kind": r.kind,
        "intact": r.intact,
        "problems": r.problems,
        "files": r.files,
        "entries": len(r.entries),
    }
