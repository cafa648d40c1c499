"""Start the desktop app: the window first, the heavy libraries afterwards in the background."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from dpdesk.gui.main_window import MainWindow

_T0 = time.perf_counter()
log = logging.getLogger("dpdesk")


def _warm_imports() -> None:
    """Import what the first preview, load and release need, off the GUI thread."""
    try:
        import numpy  # noqa: F401
        import polars  # noqa: F401

        from dpdesk.core.dp import mechanisms

        mechanisms._dp()
        import matplotlib.backends.backend_qtagg
        import matplotlib.figure  # noqa: F401
    except Exception:  # a warm-up failure shows up again, with a message, when the feature is used
        log.exception("background import failed")


def _install_excepthook(home: Path, window: Any) -> None:
    def hook(exc_type: Any, exc: BaseException, tb: Any) -> None:
        log.error("unexpected error", exc_info=(exc_type, exc, tb))
        from PySide6.QtWidgets import QMessageBox

        from dpdesk.i18n import _

        QMessageBox.warning(
            window,
            "dpdesk",
            _("Something went wrong: {err}\n\nYour plan is kept. Details were written to {log}.").format(
                err=exc, log=home / "dpdesk.log"
            ),
        )

    sys.excepthook = hook


def _add_cjk_font() -> None:
    """Register the bundled CJK font, so Chinese labels render even where the system has no CJK font."""
    from PySide6.QtGui import QFont, QFontDatabase
    from PySide6.QtWidgets import QApplication

    from dpdesk.resources import resource

    font_id = QFontDatabase.addApplicationFont(str(resource("fonts", "DroidSansFallbackFull.ttf")))
    if font_id < 0:  # pragma: no cover - a damaged installation
        log.warning("the bundled CJK font could not be loaded")
        return
    families = QFontDatabase.applicationFontFamilies(font_id)
    base = QApplication.font()
    # the system's font first; the bundled one fills in the characters it lacks
    QFont.insertSubstitutions(base.family(), families)


#: Qt's own translations (its dialogs' buttons) installed by :func:`build`, if any.
_qt_translator: Any = None


def build(home: Path | None = None, *, defer_views: bool = False) -> tuple[QApplication, MainWindow]:
    """Create the application objects (used by main and by tests): (QApplication, MainWindow)."""
    from PySide6.QtCore import QLibraryInfo, QLocale, QSettings, QTranslator
    from PySide6.QtWidgets import QApplication

    from dpdesk.core.common.home import dpdesk_home
    from dpdesk.gui.main_window import MainWindow
    from dpdesk.gui.state import AppState
    from dpdesk.i18n import current_language

    home = home or dpdesk_home()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("dpdesk")
    app.setOrganizationName("dpdesk")
    from dpdesk.gui import gc_guard

    gc_guard.install(app)  # cycles are collected on this thread only: a worker's collection can crash Qt
    from dpdesk.gui import focus

    focus.install(app)  # a focus ring a keyboard user can see
    global _qt_translator  # noqa: PLW0603 - one per application, replaced when a window is built in another language
    if _qt_translator is not None:
        app.removeTranslator(_qt_translator)
        _qt_translator = None
    if current_language() == "zh_CN":
        tr = QTranslator(app)
        if tr.load(
            QLocale("zh_CN"), "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        ):
            app.installTranslator(tr)
            _qt_translator = tr
    _add_cjk_font()
    settings = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)
    from dpdesk.gui.main_window import window_icon

    app.setWindowIcon(window_icon())  # its dialogs' too
    window = MainWindow(AppState(home), settings, defer_views=defer_views)
    return app, window


def main(path: str | None = None) -> int:
    """Run the app, optionally opening a table or a plan."""
    from dpdesk.core.common.home import dpdesk_home

    home = dpdesk_home()
    logging.basicConfig(
        filename=str(home / "dpdesk.log"),
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from dpdesk.gui.actions.language import apply_language_setting

    apply_language_setting(home)  # the language chosen in the app (Tools > Language), before any text is made
    app, window = build(home, defer_views=True)
    window.show()
    from PySide6.QtCore import QTimer

    def shown() -> None:
        elapsed = time.perf_counter() - _T0
        log.info("window shown %.3f s after import", elapsed)
        probe = bool(os.environ.get("DPDESK_STARTUP_PROBE"))
        if probe:
            print(f"WINDOW_SHOWN {elapsed:.3f}", flush=True)

        def ready() -> None:
            window.build_views()
            if probe:
                app.processEvents()
                print(f"VIEWS_READY {time.perf_counter() - _T0:.3f}", flush=True)
                app.quit()
                return
            threading.Thread(target=_warm_imports, name="warm-imports", daemon=True).start()
            if path:
                window.open_path(path)

        QTimer.singleShot(0, ready)

    QTimer.singleShot(0, shown)
    _install_excepthook(home, window)
    return int(app.exec())
