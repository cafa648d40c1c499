"""The welcome page the empty window shows: what dpdesk does, four ways to begin, and the recent files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _


class WelcomePage(QScrollArea):
    """Shown until a table or a plan is opened (or an empty plan started); the buttons are the main window's."""

    #: a recent file was chosen (its absolute path)
    recent_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self.setWidgetResizable(True)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(32, 24, 32, 24)
        title = QLabel(_("Welcome to dpdesk"))
        title.setStyleSheet("font-size: 20pt; font-weight: bold")
        about = QLabel(
            _(
                "dpdesk publishes statistics from a sensitive table under differential privacy: it adds noise "
                "calibrated so that no published number reveals much about any one person, and keeps a ledger of "
                "how much of the table's privacy budget each release spends. You say what is public about the "
                "table and what to compute, see how accurate each statistic will be before any data is used, "
                "and release."
            )
        )
        about.setWordWrap(True)
        about.setObjectName("welcome_about")
        self.open_button = self._big(_("Open your table…"), _("A CSV, Excel or Parquet file"))
        self.sample_button = self._big(
            _("Try the sample"), _("A generated census-like table and a plan for it, in one click")
        )
        self.review_button = self._big(
            _("Review a release package…"), _("For a privacy officer: check a package, read-only")
        )
        self.guide_button = self._big(
            _("Read the guide"), _("What differential privacy promises, and how to choose epsilon")
        )
        self.empty_button = QPushButton(_("Start an empty plan"))
        self.empty_button.setFlat(True)
        self.empty_button.setToolTip(_("Plan and see the budget without a table; open the table later."))
        grid = QGridLayout()
        grid.setSpacing(12)
        for i, b in enumerate((self.open_button, self.sample_button, self.review_button, self.guide_button)):
            grid.addWidget(b, i // 2, i % 2)
        self.recent_label = QLabel(_("Recent files"))
        self.recent_label.setStyleSheet("font-weight: bold")
        self.recent = QListWidget()
        self.recent.setAccessibleName(_("Recent files"))
        self.recent.setObjectName("welcome_recent")
        self.recent.setMinimumHeight(60)
        self.recent.setMaximumHeight(200)
        self.recent.itemClicked.connect(
            lambda item: self.recent_chosen.emit(item.data(Qt.ItemDataRole.UserRole))
        )
        lay.addWidget(title)
        lay.addWidget(about)
        lay.addSpacing(12)
        lay.addLayout(grid)
        lay.addWidget(self.empty_button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addSpacing(12)
        lay.addWidget(self.recent_label)
        lay.addWidget(self.recent)
        lay.addStretch(1)
        self.setWidget(body)

    @staticmethod
    def _big(text: str, detail: str) -> QPushButton:
        button = QPushButton(f"{text}\n{detail}")
        button.setToolTip(detail)
        button.setMinimumHeight(64)
        button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        button.setStyleSheet("QPushButton { text-align: left; padding: 8px 14px; font-size: 11pt }")
        return button

    def set_recent(self, files: list[str]) -> None:
        """List the recent tables and plans (newest first), by name and folder."""
        self.recent.clear()
        for f in files:
            p = Path(f)
            item = QListWidgetItem(f"{p.name}    —    {p.parent}")
            item.setData(Qt.ItemDataRole.UserRole, f)
            item.setToolTip(f)
            self.recent.addItem(item)
        self.recent_label.setVisible(bool(files))
        self.recent.setVisible(bool(files))
