"""Take screenshots of each main screen of the running app, with the bundled sample, into docs/screenshots/.

Run: QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py [--lang zh_CN]
A temporary dpdesk home is used, so no real ledger is touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lang", default="en")
    args = ap.parse_args()
    os.environ["DPDESK_LANG"] = args.lang
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = Path(tempfile.mkdtemp(prefix="dpdesk-shots-"))
    os.environ["DPDESK_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QThreadPool

    from dpdesk.gui.app import build

    app, win = build(home)
    win.ask_confirm = lambda *_a: True  # the confirmation dialog is answered yes
    win.resize(1440, 900)
    win.show()
    suffix = "" if args.lang == "en" else f"_{args.lang}"

    def wait() -> None:
        for _ in range(10):  # a release is two jobs: loading and checking the table, then the charge
            QThreadPool.globalInstance().waitForDone(60_000)
            for _ in range(20):
                app.processEvents()
            if win.job is None:
                break

    def shot(name: str) -> None:
        wait()
        OUT.mkdir(parents=True, exist_ok=True)
        win.grab().save(str(OUT / f"{name}{suffix}.png"))
        print("saved", OUT / f"{name}{suffix}.png")

    sample = ROOT / "resources" / "samples"
    win.open_data(str(sample / "census_sample.csv"))
    wait()
    win.open_plan(str(sample / "cps_wages_plan.json"))
    win.tabs.setCurrentWidget(win.schema_view)
    shot("1_data")
    win.tabs.setCurrentWidget(win.query_form)
    win.query_form.select_row(3)
    win.preview.refresh()
    shot("2_queries")
    win.release()
    wait()
    win.results_view.chart_query.setCurrentIndex(0)
    shot("3_results")
    win.tabs.setCurrentWidget(win.ledger_view)
    shot("4_ledger")
    win.tabs.setCurrentWidget(win.query_form)
    shot("5_over_budget")
    pkg = home / "package"
    win.ask_folder = lambda *_a: str(pkg)
    win.export_release()
    wait()
    (pkg / "release.csv").write_bytes((pkg / "release.csv").read_bytes().replace(b"laplace", b"Laplace", 1))
    review = win.review(str(pkg))
    review.resize(960, 640)
    wait()
    OUT.mkdir(parents=True, exist_ok=True)
    review.grab().save(str(OUT / f"6_review_tampered{suffix}.png"))
    print("saved", OUT / f"6_review_tampered{suffix}.png")
    review.close()
    win.state.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
