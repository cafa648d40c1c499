"""Review mode for privacy officers: a release package or an exported ledger, read-only."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.text import shown
from dpdesk.core.dp.accounting import method_name
from dpdesk.core.publish import words
from dpdesk.i18n import _


class ReviewWindow(QDialog):
    """Shows whether a package is intact (naming any tampered file), its plan, budget and ledger entries."""

    def __init__(self, result: Any, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("Review: {path}").format(path=shown(path)))
        self.resize(900, 640)
        self.review_result = result
        lay = QVBoxLayout(self)
        self.status = QLabel()
        self.status.setObjectName("review_status")
        self.status.setWordWrap(True)
        if result.intact:
            what = _("release package") if result.kind == "package" else _("ledger")
            self.status.setText(
                f"<b style='color:#2e7d32'>✓ {_('Intact')}</b> — "
                + _("this {what} matches its recorded hashes.").format(what=what)
                + f"<br><small>{_esc(result.proves)}</small>"
            )
        else:
            items = "".join(f"<li>{_esc(p)}</li>" for p in result.problems)
            self.status.setText(f"<b style='color:#c0392b'>✗ {_('NOT INTACT')}</b><ul>{items}</ul>")
        lay.addWidget(self.status)

        spend = result.spend
        if spend:
            c = _object(spend.get("charged"))  # null in a forged package: shown as None, never a crash
            plan = result.plan or _object(spend.get("plan"))
            info = QLabel(
                _(
                    "Release {rid} of {time}<br>Dataset {id}<br>Plan: {title} ({n} queries)<br>"
                    "Accounting: {m}; this release spent ε {e}, δ {d}"
                ).format(
                    rid=_esc(spend.get("release_id", "?")),
                    time=_esc(spend.get("time", "?")),
                    id=_esc(str(spend.get("dataset", "?"))),
                    title=_esc(plan.get("title") or _("untitled")),
                    n=len(queries) if isinstance(queries := plan.get("queries", []), list) else "?",
                    m=_esc(method_name(str(spend.get("method")))),
                    e=_esc(c.get("epsilon")),
                    d=_esc(c.get("delta")),
                )
            )
            info.setWordWrap(True)
            lay.addWidget(info)
            totals = spend.get("totals") or {}
            t = QTableWidget(len(totals), 2)
            t.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
            t.setHorizontalHeaderLabels([_("Accounting"), _("This release")])
            for i, (m, v) in enumerate(totals.items()):
                mark = " ▶" if m == spend.get("method") else ""
                t.setItem(i, 0, QTableWidgetItem(shown(method_name(str(m))) + mark))
                t.setItem(
                    i,
                    1,
                    QTableWidgetItem(
                        "—"
                        if v is None
                        else f"ε {numfmt.epsilon(v['epsilon'], 'up')}, δ {numfmt.delta(v['delta'], 'up')}"
                    ),
                )
            t.resizeColumnToContents(0)  # a method's whole name (zCDP's is long in Chinese)
            t.horizontalHeader().setStretchLastSection(True)
            t.verticalHeader().setVisible(False)
            t.setMaximumHeight(130)
            lay.addWidget(t)
        if result.files:
            files = QTableWidget(len(result.files), 2)
            files.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
            files.setObjectName("review_files")
            files.setHorizontalHeaderLabels([_("File"), _("Status")])
            for i, (name, st) in enumerate(result.files.items()):
                files.setItem(i, 0, QTableWidgetItem(shown(name)))
                files.setItem(i, 1, QTableWidgetItem(shown(st)))
            files.horizontalHeader().setStretchLastSection(True)
            files.verticalHeader().setVisible(False)
            files.setMaximumHeight(120)
            lay.addWidget(files)
        entries = QTableWidget(len(result.stored), 4)
        entries.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        entries.setAccessibleName(_("Ledger entries"))
        entries.setHorizontalHeaderLabels(["#", _("Entry"), _("Time (UTC)"), _("Hash")])
        for i, e in enumerate(result.stored):  # as stored: an entry of an unknown type is shown too
            kind = e.get("type")
            kind = (
                words.entry_type(kind) if isinstance(kind, str) else kind
            )  # its name in the user's language
            for j, v in enumerate((e.get("seq"), kind, e.get("time"), e.get("hash"))):
                entries.setItem(i, j, QTableWidgetItem(shown(v)))
        entries.resizeColumnsToContents()
        entries.horizontalHeader().setStretchLastSection(True)
        entries.verticalHeader().setVisible(False)
        lay.addWidget(QLabel(_("Ledger entries")))
        lay.addWidget(entries, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)


def _object(v: Any) -> dict[str, Any]:
    """A JSON object of a package's entry, or an empty one when it holds something else (null)."""
    return v if isinstance(v, dict) else {}


def _esc(s: Any) -> str:
    """Text from a package for rich text: control characters made visible, then HTML-escaped."""
    return shown(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
