"""Quit with an unsaved plan, choose Discard in the real question: the app ends quietly (issue 28; it printed a
traceback from the undo stack's destructor retitling a half-deleted window, once a fatal error)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMessageBox
    from dpdesk.gui.app import build

    app, w = build(Path(sys.argv[1]))
    w.show()
    w.open_sample()
    while w.job is not None or w.state.peek is None:
        app.processEvents()
        time.sleep(0.01)
    d = w.state.draft()
    d["title"] = str(d.get("title", "")) + " changed"
    w.state.edit(d, "title")
    assert w.state.dirty

    def discard():
        for top in app.topLevelWidgets():
            if isinstance(top, QMessageBox) and top.isVisible():
                top.button(QMessageBox.StandardButton.Discard).click()
                return
        QTimer.singleShot(20, discard)

    QTimer.singleShot(20, discard)
    assert w.close()
    QTimer.singleShot(100, app.quit)
    app.exec()
    print("QUIT-OK")
    """
)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quit_and_discard_ends_without_a_traceback(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
        "DPDESK_HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert "QUIT-OK" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "already deleted" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
