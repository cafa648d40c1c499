"""The live budget meter: spent, this plan (per query), what remains, under each accounting method."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dpdesk.core.common import shown as numfmt
from dpdesk.core.publish.words import accounting as accounting_name
from dpdesk.gui.state import AppState
from dpdesk.i18n import _, ngettext

PALETTE = ("#2a6fbb", "#3fa34d", "#d98e04", "#8e44ad", "#16a085", "#c2185b", "#5d6d7e")


class BudgetBar(QWidget):
    """One bar: earlier releases (grey), each query of this plan (colours), what is left (light)."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 1.0
        self.spent = 0.0
        self.parts: list[tuple[str, float]] = []
        self.over = False
        self.setMinimumHeight(26)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(300, 28)

    def set_values(self, total: float, spent: float, parts: list[tuple[str, float]], over: bool) -> None:
        self.total, self.spent, self.parts, self.over = max(total, 1e-12), spent, parts, over
        tips = [_("earlier releases: ε {e}").format(e=numfmt.epsilon(spent, "up"))] + [
            f"{n}: ε {numfmt.epsilon(e, 'up')}" for n, e in parts
        ]
        self.setToolTip("\n".join(tips))
        self.update()

    def paintEvent(self, _event: Any) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        p.fillRect(r, QColor("#e8edf2"))
        used = self.spent + sum(e for _n, e in self.parts)
        scale = r.width() / max(self.total, used)
        x = r.left()
        w = self.spent * scale
        p.fillRect(QRectF(x, r.top(), w, r.height()), QColor("#8a8f96"))
        x += w
        for i, (_name, e) in enumerate(self.parts):
            w = e * scale
            p.fillRect(QRectF(x, r.top(), w, r.height()), QColor(PALETTE[i % len(PALETTE)]))
            p.setPen(QPen(QColor("white"), 1))
            p.drawLine(int(x + w), int(r.top()), int(x + w), int(r.bottom()))
            x += w
        if used > self.total:
            limit = r.left() + self.total * scale
            p.setPen(QPen(QColor("#c0392b"), 3))
            p.drawLine(int(limit), int(r.top()), int(limit), int(r.bottom()))
        p.setPen(QPen(QColor("#c0392b") if self.over else QColor("#5d6d7e"), 2 if self.over else 1))
        p.drawRect(r)
        p.end()


class BudgetMeter(QGroupBox):
    """Always visible: the dataset's budget and what the current plan would do to it."""

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(_("Privacy budget"), parent)
        self.state = state
        self.setObjectName("budget_meter")
        self.bar = BudgetBar()
        self.headline = QLabel()
        self.headline.setObjectName("budget_headline")
        self.headline.setWordWrap(True)
        self.warning = QLabel("")
        self.warning.setObjectName("budget_warning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #8a5a00")
        self.warning.setVisible(False)
        self.methods = QGridLayout()
        self.method_labels: dict[tuple[int, int], QLabel] = {}
        heads = [_("Accounting"), _("This plan"), _("With earlier releases"), ""]
        for c, h in enumerate(heads):
            lab = QLabel(f"<b>{h}</b>")
            lab.setWordWrap(True)
            self.methods.addWidget(lab, 0, c)
        for r in range(1, 4):
            for c in range(4):
                lab = QLabel("")
                lab.setWordWrap(True)  # the meter fits beside the tabs from 1024 pixels wide
                lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                self.methods.addWidget(lab, r, c)
                self.method_labels[(r, c)] = lab
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #7f8a94")
        #: the plan's problems in words; the meter counts the valid queries meanwhile
        self.problems = QLabel("")
        self.problems.setObjectName("plan_problems")
        self.problems.setWordWrap(True)
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: how the plan's total compares with real deployments' published budgets (a dialog with the scale)
        self.compare = QLabel("")
        self.compare.setObjectName("compare_deployments")
        self.compare.setWordWrap(True)  # a link that wraps: the meter fits beside the tabs from 1024 pixels
        self.compare.setTextFormat(Qt.TextFormat.RichText)
        self.compare.linkActivated.connect(lambda _link: self.show_scale())
        self.compare.setVisible(False)
        #: which ledger counts: this computer's or a team's (the window sets it, :meth:`show_ledger`)
        self.ledger_in_use = QLabel("")
        self.ledger_in_use.setObjectName("ledger_in_use")
        self.ledger_in_use.setStyleSheet("color: #5d6d7e")
        from dpdesk.gui.fit import elastic

        elastic(self.ledger_in_use)  # a long server name never widens the meter
        lay = QVBoxLayout(self)
        lay.addWidget(self.ledger_in_use)
        lay.addWidget(self.headline)
        lay.addWidget(self.warning)
        lay.addWidget(self.problems)
        lay.addWidget(self.bar)
        lay.addLayout(self.methods)
        lay.addWidget(self.note)
        lay.addWidget(self.compare)
        state.plan_changed.connect(self.refresh)
        state.ledger_changed.connect(self.refresh)
        state.results_changed.connect(self.refresh)
        self.refresh()

    def show_ledger(self, text: str, tip: str) -> None:
        """Say which ledger the budget is counted in."""
        self.ledger_in_use.setText(text)
        self.ledger_in_use.setToolTip(tip)

    def just_released(self) -> bool:
        """Whether the results shown are a release of this very plan (nothing edited since): then the meter says
        what it spent and what is left, not that the plan would now be over budget."""
        entry, plan = self.state.results_entry, self.state.plan
        if entry is None or plan is None:
            return False
        try:
            return bool(entry.plan_hash == plan.plan_hash())
        except (KeyError, TypeError, ValueError):  # an entry made by another version: as before
            return False

    def refresh(self) -> None:
        rep = self.state.report
        b = self.state.plan_data.get("budget", {})
        problems = self.state.plan_problems
        self.problems.setText("\n".join(f"• {p}" for p in problems))
        # the list is in the status line's popup and on the cells: the meter only counts them (shown once)
        self.problems.setVisible(False)
        self.compare.setVisible(rep is not None)
        if rep is not None:
            words = _("How large is ε {e}? Compare with real deployments…").format(
                e=numfmt.epsilon(rep.in_force.plan.epsilon, "up")
            )
            self.compare.setText(f'<a href="#scale" style="color: #2a6fbb">{words}</a>')
        if rep is None:
            eps_total = b.get("epsilon") if isinstance(b.get("epsilon"), (int, float)) else 0.0
            self.bar.set_values(float(eps_total or 1.0), 0.0, [], False)
            self.warning.setVisible(False)
            if problems:  # listed in words below, not as a red wall
                self.headline.setText(
                    ngettext(
                        "The plan is not complete yet: {n} problem to fix.",
                        "The plan is not complete yet: {n} problems to fix.",
                        len(problems),
                    ).format(n=len(problems))
                )
                self.headline.setStyleSheet("")
            else:
                self.headline.setText(
                    _("The plan is not complete yet: {why}").format(why=self.state.plan_error or "")
                )
                self.headline.setStyleSheet("color: #5d6d7e")  # a step still to do, not an error
            for lab in self.method_labels.values():
                lab.setText("")
            self.note.setText("")
            return
        method = rep.method
        total = rep.budget.epsilon
        spent = rep.in_force.spent.epsilon
        parts: list[tuple[str, float]]
        if method == "sequential":
            parts = [(q.name, q.epsilon) for q in rep.queries]
        else:  # other methods are not a sum of per-query shares: one segment for the plan
            parts = [(_("this plan"), rep.in_force.plan.epsilon)]
        over = not rep.fits
        self.bar.set_values(total, spent, parts, over)
        left = rep.remaining_after
        from dpdesk.core.ledger.budget import report_warnings, used_up

        warnings = report_warnings(rep)
        self.warning.setText("\n".join(warnings))
        self.warning.setVisible(bool(warnings))
        released = over and self.just_released()
        if (
            released
        ):  # what was spent, in calm colours; no red line (Release stays off: running it again costs again)
            self.bar.set_values(total, spent, [], False)
            self.warning.setVisible(False)
            text = _("Released — ε {s} spent of {t}, {l} left.").format(
                s=numfmt.epsilon(spent, "up"),
                t=numfmt.epsilon(total),
                l=numfmt.epsilon(max(0.0, rep.remaining_before.epsilon), "down"),
            )
            if used_up(rep.remaining_before.epsilon, total):
                text += " " + _(
                    "The budget is used up: no further release is possible; showing or exporting this release again "
                    "costs nothing."
                )
            self.headline.setStyleSheet("color: #1e6b3a; font-weight: bold")
        elif over and used_up(rep.remaining_before.epsilon, total):
            text = _(
                "The budget is used up: earlier releases of this dataset spent all of ε {t}. No further release "
                "is possible; showing or exporting a past release again costs nothing (Ledger tab). Raising the budget "
                "is a settings change the ledger records (the privacy officer's, if the dataset is governed)."
            ).format(t=numfmt.epsilon(total))
            self.headline.setStyleSheet("color: #c0392b; font-weight: bold")
        elif over:
            rb = rep.remaining_before
            text = _(
                "Over budget: this plan needs more than the ε {e} and δ {d} that are left. Release is disabled; "
                "Fit to the budget (Queries tab) shares what is left across the queries, or remove some."
            ).format(e=numfmt.epsilon(max(0.0, rb.epsilon), "down"), d=numfmt.delta(rb.delta, "down"))
            self.headline.setStyleSheet("color: #c0392b; font-weight: bold")
        else:
            text = _(
                "Budget ε {t}: earlier releases {s}, this plan {p}, left afterwards ε {l} (δ {dl})."
            ).format(
                t=numfmt.epsilon(total),
                s=numfmt.epsilon(spent, "up"),
                p=numfmt.epsilon(rep.in_force.plan.epsilon, "up"),
                l=numfmt.epsilon(left.epsilon, "down"),
                dl=numfmt.delta(left.delta, "down"),
            )
            self.headline.setStyleSheet("")
        if problems:  # the meter counts the valid queries; the others wait for their problems to be fixed
            n_bad = len(self.state.plan_data.get("queries", [])) - len(self.state.valid_rows)
            text += " " + ngettext(
                "It counts the complete queries only: {n} query has a problem (listed under "
                "“show” at the bottom of the window) and is not counted yet.",
                "It counts the complete queries only: {n} queries have problems (listed under "
                "“show” at the bottom of the window) and are not counted yet.",
                n_bad,
            ).format(n=n_bad)
        self.headline.setText(text)
        for r, m in enumerate(("sequential", "advanced", "zcdp"), start=1):
            v = rep.methods.get(m)
            mark = "▶ " if m == method else ""
            self.method_labels[(r, 0)].setText(f"{mark}{accounting_name(m)}")
            if v is None:
                self.method_labels[(r, 1)].setText(_("needs δ > 0"))
                self.method_labels[(r, 2)].setText("")
                self.method_labels[(r, 3)].setText("")
                continue
            # just released: this plan is one of the releases so far (the ledger's totals), not added to them again
            pl, af = v.plan, (v.spent if released else v.after)
            extra = f" (ρ {numfmt.plain(pl.rho, 3, 'up')})" if m == "zcdp" and pl.rho else ""
            self.method_labels[(r, 1)].setText(
                f"ε {numfmt.epsilon(pl.epsilon, 'up')}, δ {numfmt.delta(pl.delta, 'up')}{extra}"
            )
            self.method_labels[(r, 2)].setText(
                f"ε {numfmt.epsilon(af.epsilon, 'up')}, δ {numfmt.delta(af.delta, 'up')}"
            )
            self.method_labels[(r, 3)].setText("✓" if v.fits or released else _("over"))
            style = "font-weight: bold" if m == method else "color: #7f8a94"
            for c in range(4):
                self.method_labels[(r, c)].setStyleSheet(style)
        fixed = rep.method_from_ledger
        self.note.setText(
            _(
                "The dataset's accounting method (▶) was fixed at its first release. The other methods are shown for "
                "comparison only; parallel composition applies inside each histogram and grouped query."
            )
            if fixed
            else _(
                "The accounting method (▶) will be fixed at this dataset's first release. The other methods are "
                "shown for comparison only; parallel composition applies inside each histogram and grouped query."
            )
        )

    def show_scale(self) -> None:
        """The plan's total on the scale of real deployments, with the guide's page one click away."""
        dialog = self.scale_dialog()
        dialog.show()

    def scale_dialog(self) -> QDialog:
        """The dialog (tests read it): the scale, the comparison in words, a link to the guide's page."""
        from dpdesk.core.dp import deployments
        from dpdesk.gui.views.epsilon_scale import EpsilonScale

        rep = self.state.report
        eps = rep.in_force.plan.epsilon if rep is not None else None
        dialog = QDialog(self)
        dialog.setWindowTitle(_("Epsilon and real deployments"))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        scale = EpsilonScale(dialog, eps)
        text = QLabel(deployments.describe(eps) if eps is not None else "")
        text.setObjectName("deployments_text")
        text.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        guide = buttons.addButton(_("Choosing epsilon (guide)"), QDialogButtonBox.ButtonRole.HelpRole)
        guide.clicked.connect(self._open_guide_page)
        buttons.rejected.connect(dialog.reject)
        lay = QVBoxLayout(dialog)
        lay.addWidget(scale, 1)
        lay.addWidget(text)
        lay.addWidget(buttons)
        dialog.resize(560, 620)
        self.scale_window = dialog
        return dialog

    def _open_guide_page(self) -> None:
        from dpdesk.gui.views.guide import open_guide

        open_guide(self.window(), "choosing_epsilon")
