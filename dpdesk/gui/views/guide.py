"""Help > Guide: short pages on differential privacy, in the UI's language, with the app's own charts.

The pages are markdown files ``resources/guide/<language>/NN_name.md`` (the same numbered files in every
language); images are ``resources/guide/img/<language>/*.png``, made by ``build_scripts/guide_images.py``.
A page holding the line ``<!-- epsilon-scale -->`` shows the live epsilon scale (``EpsilonScale``) above
the text, with a field to try an epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _, current_language
from dpdesk.resources import resource

SCALE_MARK = "<!-- epsilon-scale -->"


@dataclass(frozen=True)
class Page:
    """One guide page: its file stem (``03_public_bounds``), title (its first heading) and path."""

    stem: str
    title: str
    path: Path


def guide_dir(language: str | None = None) -> Path:
    """The folder of the guide's pages in a language (English when the language has none)."""
    lang = language or current_language()
    folder = resource("guide", lang)
    return folder if folder.is_dir() else resource("guide", "en")


def pages(language: str | None = None) -> list[Page]:
    """The guide's pages in order."""
    out = []
    for path in sorted(guide_dir(language).glob("[0-9][0-9]_*.md")):
        title = path.stem
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                title = line[2:].strip()
                break
        out.append(Page(path.stem, title, path))
    return out


class GuideWindow(QDialog):
    """The guide: the page list on the left, the page on the right (and the epsilon scale where asked)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guide_window")
        self.setWindowTitle(_("Guide to differential privacy"))
        self.resize(980, 680)
        self.pages = pages()
        lay = QVBoxLayout(self)
        split = QSplitter()
        self.page_list = QListWidget()
        self.page_list.setAccessibleName(_("Pages of the guide"))
        self.page_list.setObjectName("guide_pages")
        for p in self.pages:
            self.page_list.addItem(p.title)
        self.page_list.setMinimumWidth(190)
        self.page_list.setWordWrap(True)
        self.page_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        split.addWidget(self.page_list)
        right = QWidget()
        rlay = QVBoxLayout(right)
        rlay.setContentsMargins(0, 0, 0, 0)
        self.scale_box = QWidget()
        blay = QHBoxLayout(self.scale_box)
        blay.setContentsMargins(0, 0, 0, 0)
        from dpdesk.gui.views.epsilon_scale import EpsilonScale

        self.scale = EpsilonScale(epsilon=1.0)
        self.scale.setMinimumHeight(260)
        side = QVBoxLayout()
        side.addWidget(QLabel(_("Try an epsilon:")))
        self.epsilon_field = QDoubleSpinBox()
        self.epsilon_field.setObjectName("guide_epsilon")
        self.epsilon_field.setDecimals(3)
        self.epsilon_field.setRange(0.001, 1000.0)
        self.epsilon_field.setValue(1.0)
        self.epsilon_field.valueChanged.connect(self._epsilon_changed)
        side.addWidget(self.epsilon_field)
        self.scale_text = QLabel()
        self.scale_text.setWordWrap(True)
        self.scale_text.setObjectName("guide_scale_text")
        side.addWidget(self.scale_text, 1)
        blay.addWidget(self.scale, 1)
        blay.addLayout(side, 1)
        rlay.addWidget(self.scale_box)
        self.browser = QTextBrowser()
        self.browser.setObjectName("guide_text")
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._link)
        rlay.addWidget(self.browser, 1)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([250, 730])
        lay.addWidget(split)
        self.page_list.currentRowChanged.connect(self._show)
        self._epsilon_changed(1.0)
        if self.pages:
            self.page_list.setCurrentRow(0)

    def current_page(self) -> Page | None:
        """The page shown."""
        row = self.page_list.currentRow()
        return self.pages[row] if 0 <= row < len(self.pages) else None

    def show_page(self, page: str | int) -> bool:
        """Show a page by its stem (``08_choosing_epsilon``), its name without the number, or its number."""
        for i, p in enumerate(self.pages):
            if page in (p.stem, p.stem.split("_", 1)[1], i + 1, f"{i + 1:02d}"):
                self.page_list.setCurrentRow(i)
                return True
        return False

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.pages):
            return
        page = self.pages[row]
        text = page.path.read_text(encoding="utf-8")
        self.scale_box.setVisible(SCALE_MARK in text)
        self.browser.document().setBaseUrl(QUrl.fromLocalFile(str(page.path.parent) + "/"))
        self.browser.setMarkdown(text.replace(SCALE_MARK, ""))
        self.browser.verticalScrollBar().setValue(0)

    def _epsilon_changed(self, value: float) -> None:
        from dpdesk.core.dp import deployments

        self.scale.set_epsilon(value)
        self.scale_text.setText(deployments.describe(value))

    def _link(self, url: QUrl) -> None:
        name = url.fileName()
        if url.scheme() in ("", "file") and name.endswith(".md"):
            self.show_page(name[:-3])
        elif url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)


def open_guide(parent: QWidget | None = None, page: str | int | None = None) -> GuideWindow:
    """Open (or raise) the guide window of ``parent``, optionally at a page; returns the window."""
    win: GuideWindow | None = getattr(parent, "_guide_window", None) if parent is not None else None
    if win is None:
        win = GuideWindow(parent)
        if parent is not None:
            parent._guide_window = win  # type: ignore[attr-defined]  # one guide per window, kept alive by it
    if page is not None:
        win.show_page(page)
    win.show()
    win.raise_()
    win.activateWindow()
    return win
