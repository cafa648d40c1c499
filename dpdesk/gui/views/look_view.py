"""The Queries tab's simulated release of the selected query: its table as it would look (bars with 95% intervals,
or a single value's spread), drawn on a stand-in table generated from the schema, never on the table opened for
release (:mod:`dpdesk.core.preview.look`, in a worker; a new plan cancels the look still being drawn)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, QThreadPool, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QGroupBox, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from dpdesk.gui.state import AppState
from dpdesk.i18n import _

#: the looks' workers still running (a worker must outlive the view that started it)
_RUNNING: set[Any] = set()


class LookView(QGroupBox):
    """A simulated release of the selected query, redrawn when its plan changes (after the typing stops).

    Signals:
        look_ready(object): a look was drawn (a :class:`dpdesk.core.preview.look.Look`).
    """

    look_ready = Signal(object)

    #: after the plan stops changing, this long (ms) before a new look is drawn (an epsilon being typed)
    DELAY = 300
    #: the chart's least height (it scrolls in a short window)
    CHART_HEIGHT = 160
    #: narrower than this (pixels), the chart has no key: the caption says what its marks are
    NARROW = 440

    def __init__(
        self, state: AppState, parent: QWidget | None = None, pool: QThreadPool | None = None
    ) -> None:
        super().__init__(_("Simulated release"), parent)
        self.setObjectName("simulated_look")
        self.setToolTip(
            _(
                "How the selected query's release would look, simulated on a stand-in table generated from the "
                "schema: uncharged, never on your table, not for publication."
            )
        )
        from dpdesk.services.simulate import StandIns

        self.state = state
        self.pool = pool
        self.row = -1
        #: the stand-in table of the last look, kept while the schema stays the same (a new epsilon: new noise)
        self.stand_ins = StandIns()
        #: the last look drawn (a dpdesk.core.preview.look.Look), the plan it was drawn for, why there is none
        self.look: Any = None
        self.key: Any = None
        self.error = ""
        #: what the selected query needs: (key, plan, query name), or None (nothing to simulate)
        self.wanted: Any = None
        self.worker: Any = None
        self.canvas: Any = None
        #: the look the chart shows (not redrawn while an epsilon is typed)
        self.drawn: Any = None
        self.narrow = False
        self.caption = QLabel("")
        self.caption.setObjectName("look_caption")
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.body = QWidget()
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(0, 0, 0, 0)
        self.chart_holder = QVBoxLayout()  # the chart first, its caption below (a short window scrolls to it)
        self.body_layout.addLayout(self.chart_holder, 1)
        self.body_layout.addWidget(self.caption)
        scroll = QScrollArea()
        scroll.setObjectName("look_scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(scroll)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(self.DELAY)
        self.timer.timeout.connect(self._start)
        state.plan_changed.connect(self.refresh)

    def show_query(self, row: int) -> None:
        self.row = row
        self.refresh()

    def refresh(self) -> None:
        """Show what is known for the selected query at once (while an epsilon is typed: its last look), and draw
        a new look :attr:`DELAY` ms after the plan stops changing."""
        from dpdesk.core.dp import statistics

        plan = self.state.valid_plan
        at = self.state.valid_query(self.row)
        if plan is None or at is None:
            self.wanted = None
            self._show(None, _("Select a complete query to see its release simulated on a stand-in table."))
            return
        spec = plan.queries[at]
        if statistics.get(spec.statistic).composite:
            self.wanted = None
            self._show(
                None,
                _(
                    "A synthetic table is not simulated here: its preview, on the right, estimates its fidelity "
                    "on a file you declare public."
                ),
            )
            return
        key = (spec, plan.columns, plan.privacy_unit, plan.expected_rows)
        self.wanted = (key, plan, spec.name)
        if key == self.key or (self.look is not None and self.look.query == spec.name):
            self._draw()
        else:
            self._show(None, _("Simulating a release on a stand-in table…"))
        if key != self.key:
            self.timer.start()

    def _start(self) -> None:
        """Draw the wanted look in a worker; the one still running is cancelled (its plan is gone)."""
        if self.wanted is None or self.wanted[0] == self.key:
            return
        from dpdesk.gui.workers import Worker, start

        key, plan, name = self.wanted
        if self.worker is not None:
            self.worker.cancel()
        home, private, stand_ins = self.state.home, self.state.sha256, self.stand_ins

        def job(progress: Any) -> tuple[Any, Any, str]:
            from dpdesk.core.common.errors import UsageError
            from dpdesk.services.simulate import LookRequest, query_look

            try:
                look = query_look(LookRequest(plan, home, name, private_sha=private), stand_ins, progress)
            except UsageError as exc:  # what the engine refuses to simulate, said in place
                return key, None, str(exc)
            return key, look, ""

        worker = Worker(job)
        _RUNNING.add(worker)  # held until it ends, even when the view goes first
        for signal in (worker.signals.finished, worker.signals.failed, worker.signals.cancelled):
            signal.connect(lambda *_a, w=worker: _RUNNING.discard(w))
        # bound methods of the view: never called once it is gone
        worker.signals.finished.connect(self._finished)
        worker.signals.failed.connect(self._failed)
        self.worker = worker
        start(worker, self.pool)

    def _finished(self, result: Any) -> None:
        key, look, error = result
        if self.wanted is None or self.wanted[0] != key:
            return  # the plan or the query changed meanwhile: a newer look is on its way
        self.worker = None
        self.look, self.key, self.error = look, key, error
        self._draw()

    def _failed(self, message: str, _details: str) -> None:
        """An unexpected error (logged by the worker), said where the look would be."""
        self.worker = None
        self.look, self.key, self.error = None, None, message
        self._draw()

    def _show(self, figure: Any, text: str, tip: str = "") -> None:
        if self.canvas is not None:
            self.canvas.hide()
            self.canvas.setParent(None)
            self.canvas.deleteLater()
            self.canvas = None
        self.drawn = None
        self.caption.setText(text)
        self.caption.setToolTip(tip)
        if figure is None:
            return
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # heavy: imported on the first look

        self.canvas = FigureCanvasQTAgg(figure)
        self.canvas.setObjectName("look_chart")
        self.canvas.setMinimumSize(180, self.CHART_HEIGHT)
        self.chart_holder.addWidget(self.canvas)

    def _draw(self) -> None:
        if self.look is None:
            self._show(None, _("No simulated release: {why}").format(why=self.error) if self.error else "")
            return
        if self.drawn is self.look and self.canvas is not None:
            return  # shown already (the plan changes while an epsilon is typed: the new look is on its way)
        from dpdesk.core.preview.look import look_caption, look_figure, look_headline, look_source

        self.narrow = self.width() < self.NARROW
        text = f"{look_headline(self.look)} {look_source(self.look)}"
        self._show(look_figure(self.look, narrow=self.narrow), text, look_caption(self.look))
        self.drawn = self.look
        self.look_ready.emit(self.look)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Drawn again with or without its key when it becomes narrow or wide (a splitter moved)."""
        super().resizeEvent(event)
        if self.drawn is not None and (self.width() < self.NARROW) != self.narrow:
            self.drawn = None
            self._draw()

    def sizeHint(self) -> QSize:
        return QSize(260, 240)

    def minimumSizeHint(self) -> QSize:
        return QSize(200, 150)
