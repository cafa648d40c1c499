"""Noise preview for the selected query, computed from the plan alone (no data is touched)."""

from __future__ import annotations

import math
import os
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from dpdesk.core.common import shown as numfmt
from dpdesk.gui.models import word_label
from dpdesk.gui.state import AppState
from dpdesk.i18n import _


def guarantee_text(epsilon: float, delta: float) -> str:
    """What the guarantee means, in plain words."""
    factor = math.exp(epsilon)
    if delta > 0:
        return _(
            "With ε = {e}, adding or removing any one person changes the probability of any published result by at "
            "most a factor of e<sup>{e}</sup> = {f}, except with a probability of at most δ = {d}."
        ).format(e=numfmt.epsilon(epsilon), f=numfmt.plain(factor, 3, "up"), d=numfmt.delta(delta))
    return _(
        "With ε = {e}, adding or removing any one person changes the probability of any published result by at "
        "most a factor of e<sup>{e}</sup> = {f}."
    ).format(e=numfmt.epsilon(epsilon), f=numfmt.plain(factor, 3, "up"))


def accuracy_lines(state: AppState, row: int) -> list[str]:
    """The selected query's accuracy in its own units (the engine's sentence, from the plan alone), and what it
    depends on: the public estimate of the number of rows, and for a quantile the data (its value range is
    shown only by simulating on a stand-in table or a file declared public, never on the private table)."""
    from dpdesk.core.dp import statistics
    from dpdesk.core.dp.accuracy_base import RANK, RATIO, SPREAD, query_rows
    from dpdesk.core.model.spec import describe_where

    acc = state.query_accuracy(row)
    at = state.valid_query(row)
    if acc is None or at is None or state.valid_plan is None:
        return []
    spec = state.valid_plan.queries[at]
    rows = query_rows(spec, state.valid_plan)
    lines = [_("<b>Accuracy</b>: {sentence}.").format(sentence=_escape(acc[0]))]
    if spec.where:  # a subset's rows are the query's own estimate (the Data tab's counts every row)
        lines.append(
            _(
                "It counts only the rows where {cond}: its accuracy is stated for the query's own estimate of "
                "them (Rows that meet it)."
            ).format(cond=_escape(describe_where(spec.where)))
            if rows is not None
            else _(
                "It counts only the rows where {cond}: give a public estimate of how many rows meet it (Rows "
                "that meet it) to see its accuracy in units."
            ).format(cond=_escape(describe_where(spec.where)))
        )
        return lines
    if spec.accuracy is not None:
        lines.append(
            _("ε = {e} is the smallest epsilon that meets the accuracy this query asks for.").format(
                e=numfmt.epsilon(spec.epsilon, "up")
            )
        )
    kind = statistics.get(spec.statistic).accuracy_kind
    if kind == RANK:
        lines.append(
            _("The percentiles are for {n} rows, the public estimate given in the Data tab.").format(
                n=f"{rows:,}"
            )
            if rows is not None
            else _(
                "Give a public estimate of the number of rows (Expected rows, in the Data tab) to see the ranks "
                "as percentiles."
            )
        )
    if kind in (RATIO, SPREAD):
        lines.append(
            _(
                "This depends on the number of rows: it is stated for {n} rows, the public estimate given in the "
                "Data tab (fewer rows, less accurate)."
            ).format(n=f"{rows:,}")
            if rows is not None
            else _(
                "This depends on the number of rows: give a public estimate of it (Expected rows, in the Data "
                "tab) to see it in the column's units."
            )
        )
    if kind == RANK:
        lines.append(
            _(
                "Which values these ranks span depends on the data: see it with Simulate releases…, on a stand-in "
                "table or a file you declare public; dpdesk never computes it from your table."
            )
        )
    return lines


def synthetic_lines(design: Any, plan: Any) -> list[str]:
    """What a synthetic-table query does, in plain words, with its noise scales (from the plan's design alone),
    and where its expected utility can be seen: only on a file the user declares public, never on the table."""
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, attributes
    from dpdesk.core.dp.synthetic.pipeline import MAX_ROWS

    spec = design.spec
    assert isinstance(spec, SyntheticQuery)
    one, sel, two = design.components
    attrs = attributes(spec, plan.columns)
    d = len(attrs)
    if spec.mechanism == "aim":
        return [_adaptive_line(design, attrs, spec.rows), _utility_line()]
    noise = _("Gaussian") if one.mechanism == "gaussian" else _("Laplace")
    rows = (
        _("{n} rows").format(n=f"{spec.rows:,}")
        if spec.rows is not None
        else _("as many rows as the fitted model's total (free; at most {n})").format(n=f"{MAX_ROWS:,}")
    )
    return [
        _(
            "<b>What it does</b>: measures the one-way marginal of each of the {d} columns ({levels}) with "
            "{noise} noise of scale {s1} per cell; chooses {r} two-way marginals in {r} rounds of the "
            "exponential mechanism (ε {es} per round) and measures them with noise of scale {s2} per cell; fits "
            "one consistent model to these noisy counts and draws {rows} from it. Nothing else is read from "
            "the data."
        ).format(
            d=d,
            levels=", ".join(_("{name}: {n} levels").format(name=_escape(a.name), n=a.size) for a in attrs),
            noise=noise,
            s1=numfmt.plain(one.scale, 4),
            r=max(d - 1, 0),
            es=numfmt.epsilon(sel.epsilon),
            s2=numfmt.plain(two.scale, 4),
            rows=rows,
        ),
        _utility_line(),
    ]


def _rows_words(rows: int | None) -> str:
    from dpdesk.core.dp.synthetic.pipeline import MAX_ROWS

    return (
        _("{n} rows").format(n=f"{rows:,}")
        if rows is not None
        else _("as many rows as the fitted model's total (free; at most {n})").format(n=f"{MAX_ROWS:,}")
    )


def _adaptive_line(design: Any, attrs: Any, rows: int | None) -> str:
    """The adaptive synthesiser's stages in plain words (from the plan's design alone)."""
    one, sel, _measure = design.components
    return _(
        "<b>What it does</b>: measures the one-way marginal of each of the {d} columns ({levels}) with Gaussian "
        "noise of scale {s} per cell, and once more if their own released counts show them to be mostly noise (at "
        "most half the budget on them); then, round by round (up to {t} rounds), picks with the exponential "
        "mechanism (ε {es} per round to start) the marginal its current model gets most wrong, measures it, and "
        "refits the model; when a round teaches the model little, the next rounds get less noise and fewer are "
        "left. It draws {rows} from the final model. Nothing else is read from the data."
    ).format(
        d=len(attrs),
        levels=", ".join(_("{name}: {n} levels").format(name=_escape(a.name), n=a.size) for a in attrs),
        s=numfmt.plain(one.scale, 4),
        t=16 * len(attrs),
        es=numfmt.epsilon(sel.epsilon),
        rows=_rows_words(rows),
    )


def _utility_line() -> str:
    return _(
        "<b>Expected utility</b>: how faithful the table is depends on the data, so dpdesk estimates it only "
        "on a file you declare public (a published sample, last year's published table), uncharged, never "
        "on your table. A stand-in table's columns are independent, so a simulation on it says nothing "
        "about how well two-way relations are kept."
    )


def fidelity_text(result: Any, path: str, epsilon: float) -> str:
    """The estimate's result in plain words (a :class:`dpdesk.core.preview.simulate.Fidelity`)."""

    def pct(x: float) -> str:
        return f"{100.0 * x:.1f}%"

    return _(
        "<b>On {file}</b> (declared public, {rows} rows; {runs} simulated releases at ε {eps}, uncharged): "
        "pairs of columns in the synthetic table differ from the file's by {t2} on average, single columns by "
        "{t1}. Sampling each column on its own at the same ε: {b2} for pairs, {b1} for single columns. 0% "
        "would be an exact copy; the figure is the share of rows that would have to change for the two "
        "tables' counts to agree (total-variation distance)."
    ).format(
        file=_escape(os.path.basename(path)),
        rows=f"{result.rows:,}",
        runs=result.runs,
        eps=numfmt.epsilon(epsilon),
        t2=pct(result.two_way),
        t1=pct(result.one_way),
        b2=pct(result.independent_two_way),
        b1=pct(result.independent_one_way),
    )


class PreviewPanel(QWidget):
    """Density of the selected query's noise, its error against epsilon, and the formula with numbers."""

    #: The user asks for a synthetic table's fidelity on a public file (the query's name).
    fidelity_requested = Signal(str)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        #: the last simulated look of the Queries tab (a dpdesk.core.preview.look.Look), drawn first here for a
        #: query whose noise is made of parts (a mean's own noise, before its count's and its sum's)
        self.look: Any = None
        self.own_holder: QWidget | None = None
        self.own_canvas: Any = None
        #: Estimates shown for synthetic-table queries: name -> (the query as estimated, the text).
        self.fidelity: dict[str, tuple[Any, str]] = {}
        self.row = -1
        self.title = QLabel(_("Select a query to preview its noise."))
        self.title.setWordWrap(True)
        self.body = QWidget()
        self.body_layout = QVBoxLayout(self.body)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(scroll)
        self.canvases: list[Any] = []
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(150)  # figures follow typing with a short delay; the meter is immediate
        self.timer.timeout.connect(self.refresh)
        state.plan_changed.connect(self.timer.start)

    def show_query(self, row: int) -> None:
        self.row = row
        self.refresh()

    def _clear(self) -> None:
        while self.body_layout.count():
            item = self.body_layout.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.hide()
                w.setParent(None)  # gone now, not at the next event loop pass
                w.deleteLater()
        self.canvases = []
        self.own_holder = None
        self.own_canvas = None

    def refresh(self) -> None:
        self._clear()
        plan = self.state.valid_plan  # the valid queries are previewed while others have problems
        at = self.state.valid_query(self.row)
        if plan is None or at is None:
            self.title.setText(_("Select a complete query to preview its noise (no data is used)."))
            return
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # heavy: imported on first preview

        from dpdesk.core.dp import statistics
        from dpdesk.core.dp.figures import noise_figure, selection_figure
        from dpdesk.core.dp.queries import design_query

        spec = plan.queries[at]
        design = design_query(spec, plan)
        self.title.setText(
            _("<b>{name}</b>: preview computed from the plan alone, before any data is used.").format(
                name=spec.name
            )
        )
        for line in accuracy_lines(self.state, self.row):
            acc = QLabel(line)
            acc.setWordWrap(True)
            acc.setObjectName("preview_accuracy")
            self.body_layout.addWidget(acc)
        stat = statistics.get(spec.statistic)
        if len(design.components) > 1 and not stat.composite:
            # the query's own noise first (a mean's, simulated in the Queries tab), then the parts it is made of
            self.own_holder = QWidget()
            self.own_holder.setObjectName("own_noise")
            QVBoxLayout(self.own_holder).setContentsMargins(0, 0, 0, 0)
            self.body_layout.addWidget(self.own_holder)
            self._draw_own(spec.name)
            parts = QLabel(
                _(
                    "<b>How it is drawn</b>: the released value is computed from these {n} noisy parts."
                ).format(n=len(design.components))
            )
            parts.setWordWrap(True)
            parts.setObjectName("preview_parts")
            self.body_layout.addWidget(parts)
        figure = stat.figure  # "selection" or "noise", as its statistic declares
        stacked = (
            self.width() < 560
        )  # a narrow panel (a 1024-pixel window): the two charts one above the other
        if stat.composite:  # a synthetic table: its stages in words (a chart per stage would say little)
            for line in synthetic_lines(design, plan):
                words = QLabel(line)
                words.setWordWrap(True)
                words.setObjectName("preview_synthetic")
                self.body_layout.addWidget(words)
            shown = self.fidelity.get(spec.name)
            if shown is not None and shown[0] == spec:
                estimate = QLabel(shown[1])
                estimate.setWordWrap(True)
                estimate.setObjectName("preview_fidelity")
                self.body_layout.addWidget(estimate)
            button = QPushButton(_("Estimate on a public file…"))
            button.setObjectName("fidelity_button")
            button.setToolTip(_("Uncharged simulated releases of this query on a file you declare public"))
            button.clicked.connect(lambda _c=False, name=spec.name: self.fidelity_requested.emit(name))
            self.body_layout.addWidget(button)
        for comp in design.components:
            if not stat.composite:
                fig = (
                    selection_figure(design) if figure == "selection" else noise_figure(comp, stacked=stacked)
                )
                canvas = FigureCanvasQTAgg(fig)
                canvas.setMinimumHeight(440 if stacked and figure != "selection" else 240)
                self.canvases.append(canvas)
                self.body_layout.addWidget(canvas)
            lines = []
            if comp.mechanism != "exponential":
                lines.append(
                    _("{label}: 95% of the noise lies within ±{b}.").format(
                        label=word_label(comp.label), b=numfmt.plain(comp.bound95 or 0.0, 4, "up")
                    )
                )
            lines.append(_("Sensitivity: {why}").format(why=comp.derivation))
            lines.append(_("Formula: {f}").format(f=comp.formula))
            text = QLabel("<br>".join(_escape(x) for x in lines))
            text.setWordWrap(True)
            self.body_layout.addWidget(text)
        for note in design.notes:
            n = QLabel(_("Note: {n}").format(n=note))
            n.setWordWrap(True)
            self.body_layout.addWidget(n)
        g = QLabel(guarantee_text(spec.epsilon, spec.delta))
        g.setWordWrap(True)
        g.setObjectName("guarantee")
        self.body_layout.addWidget(g)
        self.body_layout.addStretch(1)

    def show_look(self, look: Any) -> None:
        """Keep the Queries tab's latest simulated look, and draw it first when it is of the query shown."""
        self.look = look
        at = self.state.valid_query(self.row)
        plan = self.state.valid_plan
        if self.own_holder is not None and plan is not None and at is not None:
            self._draw_own(plan.queries[at].name)

    def _draw_own(self, name: str) -> None:
        """The query's own noise (its look) in the holder at the top, or a line saying it is on its way."""
        holder = self.own_holder
        layout = holder.layout() if holder is not None else None
        if layout is None:
            return
        while layout.count():
            item = layout.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.hide()
                w.setParent(None)
                w.deleteLater()
        self.own_canvas = None
        if self.look is None or self.look.query != name:
            wait = QLabel(_("Simulating a release on a stand-in table…"))
            wait.setObjectName("own_noise_waiting")
            layout.addWidget(wait)
            return
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # heavy: imported on first preview

        from dpdesk.core.preview.look import look_figure

        canvas = FigureCanvasQTAgg(look_figure(self.look, narrow=self.width() < 560))
        canvas.setObjectName("own_noise_chart")
        canvas.setMinimumSize(200, 220)
        self.own_canvas = canvas
        layout.addWidget(canvas)

    def show_fidelity(self, spec: Any, result: Any, path: str) -> None:
        """Keep and show the estimate of ``spec`` (until the query changes)."""
        self.fidelity[spec.name] = (spec, fidelity_text(result, path, spec.epsilon))
        self.refresh()


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
