"""Time from process start to the main window shown: dpdesk against a bare PySide6 window, same run.

Each measurement is a fresh process (offscreen), interleaved round by round; the time is read from
process start (/proc/self/stat starttime) to the first event-loop pass after show().
Run: python benchmarks/startup.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

SINCE_START = r"""
import os, time
def since_start():
    with open('/proc/self/stat') as f:
        start = int(f.read().rsplit(')', 1)[1].split()[19])
    with open('/proc/uptime') as f:
        up = float(f.read().split()[0])
    return up - start / os.sysconf('SC_CLK_TCK')
"""

BARE = (
    SINCE_START
    + r"""
from PySide6.QtWidgets import QApplication, QMainWindow
from PySide6.QtCore import QTimer
app = QApplication([])
w = QMainWindow(); w.resize(1320, 820); w.show()
QTimer.singleShot(0, lambda: (print(f"WINDOW_SHOWN {since_start():.3f}"), app.quit()))
app.exec()
"""
)

DPDESK = (
    SINCE_START
    + r"""
from dpdesk.gui import app as a
from PySide6.QtCore import QTimer
application, w = a.build(defer_views=True)  # as dpdesk.gui.app.main does
w.show()
def ready():
    w.build_views(); application.processEvents()
    print(f"VIEWS_READY {since_start():.3f}")
    application.quit()
QTimer.singleShot(0, lambda: (print(f"WINDOW_SHOWN {since_start():.3f}"), QTimer.singleShot(0, ready)))
application.exec()
"""
)


def once(code: str, home: str, key: str = "WINDOW_SHOWN") -> tuple[float, float]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DPDESK_HOME": home}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    shown = float(out.split("WINDOW_SHOWN")[1].split()[0])
    ready = float(out.split("VIEWS_READY")[1].split()[0]) if "VIEWS_READY" in out else shown
    return shown, ready


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    home = tempfile.mkdtemp()
    once(BARE, home), once(DPDESK, home)  # warm the page cache
    bare: list[tuple[float, float]] = []
    dp: list[tuple[float, float]] = []
    for r in range(args.rounds):
        order = [(BARE, bare), (DPDESK, dp)] if r % 2 == 0 else [(DPDESK, dp), (BARE, bare)]
        for code, acc in order:
            acc.append(once(code, home))
    mb = statistics.median(b[0] for b in bare)
    md = statistics.median(d[0] for d in dp)
    mr = statistics.median(d[1] for d in dp)
    print(f"bare PySide6 window:           median {mb:.3f} s  (min {min(b[0] for b in bare):.3f})")
    print(
        f"dpdesk window shown:           median {md:.3f} s  (min {min(d[0] for d in dp):.3f})  ratio {md / mb:.2f}x"
    )
    print(
        f"dpdesk all views built:        median {mr:.3f} s  (min {min(d[1] for d in dp):.3f})  ratio {mr / mb:.2f}x"
    )
    print("target: window shown within 1.5x of the bare window")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
