"""Help > About: dpdesk's version (and whether it is a development build), its licence, the third-party notices
and Qt's LGPL notice, read from the resources when the build bundled them (``resources/licenses/``)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from dpdesk.i18n import _

#: The licence line shown above the texts (LICENSE holds the whole MIT licence).
COPYRIGHT = "Copyright (c) 2026 the dpdesk authors"


def licence_file() -> Path | None:
    """LICENSE: in the resources (an installed or bundled copy), else at the top of the source tree."""
    from dpdesk.resources import resource, resources_dir

    for p in (resource("licenses", "LICENSE"), resources_dir().parent / "LICENSE"):
        if p.is_file():
            return p
    return None


def notice_file(name: str) -> Path | None:
    """``resources/licenses/<name>`` when this copy has it (the build writes the third-party and Qt notices)."""
    from dpdesk.resources import resource

    p = resource("licenses", name)
    return p if p.is_file() else None


def read_notice(path: Path | None) -> str:
    """A notice's text, or the sentence that says this copy has none."""
    if path is None:
        return _("Not bundled with this copy.")
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return _("Not readable in this copy: {err}").format(err=exc.strerror or exc)


def version_line() -> str:
    """The version, and whether this copy is a development build (not a tagged release)."""
    from dpdesk import __version__, is_development_version

    if is_development_version(__version__):
        return _("Version {v} (a development build, not a tagged release)").format(v=__version__)
    return _("Version {v}").format(v=__version__)


class AboutDialog(QDialog):
    """The About box; its texts are ``licence``, ``third_party`` and ``qt_notice`` (read-only)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(_("About dpdesk"))
        layout = QVBoxLayout(self)
        self.header = QLabel(
            "<b>dpdesk</b><br>"
            + version_line()
            + "<br>"
            + _("Publish statistics under differential privacy, with a durable budget ledger.")
            + "<br>"
            + _("Free software under the MIT licence.")
            + " "
            + COPYRIGHT
        )
        self.header.setWordWrap(True)
        layout.addWidget(self.header)
        self.tabs = QTabWidget()
        self.licence = self._text(read_notice(licence_file()))
        self.third_party = self._text(read_notice(notice_file("THIRD_PARTY_NOTICES.txt")))
        self.qt_notice = self._text(read_notice(notice_file("QT_LGPL_NOTICE.txt")))
        self.tabs.addTab(self.licence, _("Licence"))
        self.tabs.addTab(self.third_party, _("Third-party notices"))
        self.tabs.addTab(self.qt_notice, _("Qt (LGPL)"))
        layout.addWidget(self.tabs, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 480)

    @staticmethod
    def _text(text: str) -> QPlainTextEdit:
        edit = QPlainTextEdit(text)
        edit.setReadOnly(True)
        return edit
