"""Take screenshots of each main screen of the running app, with the bundled sample, into docs/screenshots/.

Run: QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py [--lang zh_CN] [--size 1024x700]
(the default size, 1440x900, has no size in the file names; other sizes add it, e.g. 2_queries_1024x700.png)
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
    ap.add_argument("--size", default="1440x900")
    args = ap.parse_args()
    width, height = (int(x) for x in args.size.split("x"))
    os.environ["DPDESK_LANG"] = args.lang
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = Path(tempfile.mkdtemp(prefix="dpdesk-shots-"))
    os.environ["DPDESK_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QLabel, QScrollArea

    from dpdesk.gui.app import build

    app, win = build(home)
    win.ask_confirm = lambda *_a: True  # the confirmation dialog is answered yes
    win.resize(width, height)
    win.show()
    suffix = ("" if args.lang == "en" else f"_{args.lang}") + (
        "" if args.size == "1440x900" else f"_{args.size}"
    )

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

    shot("0_welcome")
    win.welcome.sample_button.click()  # the sample table and its plan, in one click
    wait()
    win.tabs.setCurrentWidget(win.schema_view)
    shot("1_data")
    win.tabs.setCurrentWidget(win.query_form)
    win.query_form.select_row(3)
    win.preview.refresh()
    shot("2_queries")

    def dialog_shot(dialog: object, name: str) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        dialog.grab().save(str(OUT / f"{name}{suffix}.png"))  # type: ignore[attr-defined]
        print("saved", OUT / f"{name}{suffix}.png")

    def fit_shot(dialog: object) -> bool:
        dialog.weights[0].setValue(2.0)  # type: ignore[attr-defined]
        dialog.reserve.setText("0.1")  # type: ignore[attr-defined]
        dialog.recompute()  # type: ignore[attr-defined]
        dialog.resize(720, 460)  # type: ignore[attr-defined]
        dialog.show()  # type: ignore[attr-defined]
        app.processEvents()
        dialog_shot(dialog, "7_fit_to_budget")
        return False  # cancelled: the screenshots release the sample plan as it is

    win.query_form.exec_dialog = fit_shot
    win.query_form.fit_to_budget()
    scale = win.meter.scale_dialog()
    scale.show()
    app.processEvents()
    dialog_shot(scale, "8_epsilon_scale")
    scale.close()
    from dpdesk.gui.views.guide import open_guide

    guide = open_guide(win, "choosing_epsilon")
    guide.resize(width, height)
    app.processEvents()
    dialog_shot(guide, "9_guide")
    guide.close()
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
    win.review(str(pkg))
    wait()  # the review runs in the worker; its window opens when it is done
    review = win.review_window
    review.resize(960, 640)
    wait()
    OUT.mkdir(parents=True, exist_ok=True)
    review.grab().save(str(OUT / f"6_review_tampered{suffix}.png"))
    print("saved", OUT / f"6_review_tampered{suffix}.png")
    review.close()
    # a synthetic table, on a fresh home (the sample's budget is spent): its form, then its results
    win.state.undo_stack.setClean()
    win.state.home = Path(tempfile.mkdtemp(prefix="dpdesk-shots-synthetic-"))
    plan = win.state.draft()
    plan["budget"] = {"epsilon": 2.0, "delta": 1e-5}
    plan["queries"] = [
        {
            "name": "people table",
            "statistic": "synthetic",
            "mechanism": "mst",
            "columns": ["wage", "education", "region"],
            "bins": {"wage": [0, 500, 1000, 1500, 2000, 3000, 5000]},
            "epsilon": 1.0,
            "delta": 1e-6,
        }
    ]
    win.state.load_plan_data(plan, None)
    win.open_data(str(win.state.data_path))
    wait()
    win.tabs.setCurrentWidget(win.query_form)
    win.query_form.select_row(0)
    shot("11_synthetic_form")
    # its expected fidelity, estimated on a file declared public (another table of the same columns)
    from dpdesk.core.preview.sample import write_census_csv
    from dpdesk.core.preview.simulate import simulation_notice
    from dpdesk.gui.views.fidelity_dialog import FidelityDialog

    public = Path(tempfile.mkdtemp(prefix="dpdesk-shots-public-")) / "published_sample_2025.csv"
    write_census_csv(public, 20_000, seed=7)
    dialog = FidelityDialog(win, "people table", win.ask_open_path, simulation_notice())
    dialog.path.setText(str(public))
    dialog.declare.setChecked(True)
    dialog.show()
    app.processEvents()
    dialog_shot(dialog, "13_fidelity_dialog")
    dialog.close()
    win.ask_fidelity = lambda _q: (public, 3)
    win.estimate_fidelity("people table")
    wait()
    found = win.preview.findChild(QLabel, "preview_fidelity")
    if found is not None:  # scrolled into view, as a user would after the estimate
        app.processEvents()
        scroll = win.preview.findChild(QScrollArea)
        scroll.ensureWidgetVisible(found)
    shot("12_synthetic_fidelity")
    win.release()
    wait()
    wait()  # the synthetic table is regenerated from the ledger in the worker
    win.tabs.setCurrentWidget(win.results_view)
    shot("10_synthetic")
    win.state.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
