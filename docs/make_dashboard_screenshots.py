"""Take screenshots of the Team dashboard with real data into docs/screenshots/ (14_team_dashboard*.png).

Run: QT_QPA_PLATFORM=offscreen python docs/make_dashboard_screenshots.py
It needs PostgreSQL's programs (as the team tests do, tests/pgserver.py): a temporary server holds a fresh team
ledger, two curators release from their own temporary homes (two tables), then the officer's dashboard is shot at
1440x900 and 1024x700 (the dashboard's size on that screen), in English and Chinese, named like
docs/make_screenshots.py's (``_zh_CN``, ``_1024x700``). Nothing outside temporary folders is touched. Under a real X server and window manager (QT_QPA_PLATFORM=xcb, e.g.
Xvfb and openbox; SHOT_SIZES=1024x700 for one size a run) it saves the whole screen, the maximized main window with
the dashboard over it, into the temporary folder instead, to look at.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
SAMPLES = ROOT / "resources" / "samples"
SHOTS = [("en", "1440x900"), ("en", "1024x700"), ("zh_CN", "1440x900"), ("zh_CN", "1024x700")]


def dpdesk(*args: str, home: Path, ledger: str) -> None:
    env = {**os.environ, "DPDESK_HOME": str(home), "DPDESK_LEDGER": ledger, "LANGUAGE": "en"}
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", *args], capture_output=True, text=True, env=env, check=False
    )
    if r.returncode != 0:
        raise SystemExit(f"dpdesk {' '.join(args)}: exit {r.returncode}\n{r.stderr}")


def plan(folder: Path, epsilon: float, accounting: str | None = None) -> Path:
    doc = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    doc["budget"]["epsilon"] = epsilon
    if accounting is not None:
        doc["accounting"] = {"method": accounting}
    out = folder / f"plan_{epsilon}_{accounting}.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def other_table(folder: Path) -> Path:
    """A second table of the same columns and other rows (another survey wave), so the team has two datasets."""
    rng = random.Random(7)
    with (SAMPLES / "census_sample.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["age"] = str(rng.randint(18, 80))
        r["hours"] = str(rng.randint(5, 60))
        r["wage"] = f"{rng.uniform(300, 4000):.2f}"
        r["weight"] = f"{rng.uniform(10, 500):.4f}"
    out = folder / "wave2.csv"
    with out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out


def shoot(url: str, lang: str, size: str) -> None:
    """In a fresh process (the language is chosen at start): the officer's dashboard, shot."""
    width, height = (int(x) for x in size.split("x"))
    os.environ["DPDESK_LANG"] = lang
    os.environ["DPDESK_LEDGER"] = url
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = Path(tempfile.mkdtemp(prefix="dpdesk-dash-"))
    os.environ["DPDESK_HOME"] = str(home)
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QThreadPool

    from dpdesk.gui.app import build

    app, win = build(home)
    win.resize(width, height)
    win.show()
    dashboard = win.open_team_dashboard()
    for _ in range(200):
        QThreadPool.globalInstance().waitForDone(200)
        app.processEvents()
        if dashboard.worker is None:
            break
    if os.environ["QT_QPA_PLATFORM"] == "xcb":  # a real screen (Xvfb and a window manager): the whole screen
        win.showMaximized()
        dashboard.raise_()
        for _ in range(50):
            QThreadPool.globalInstance().waitForDone(20)
            app.processEvents()
        path = Path(tempfile.gettempdir()) / f"dashboard_screen_{lang}_{size}.png"
        app.primaryScreen().grabWindow(0).save(str(path))
        print("saved", path)
        return
    dashboard.resize(min(1120, width - 24), min(700, height - 40))  # what it takes on that screen
    dashboard.table.selectRow(0)
    for _ in range(20):
        app.processEvents()
    suffix = ("" if lang == "en" else f"_{lang}") + ("" if size == "1440x900" else f"_{size}")
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"14_team_dashboard{suffix}.png"
    dashboard.grab().save(str(path))
    print("saved", path)


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--shoot":
        shoot(*sys.argv[2:])
        return 0
    sys.path.insert(0, str(ROOT))
    from dpdesk.core.ledger.pgstore import create_team, grant
    from tests.pgserver import running

    with running() as server, tempfile.TemporaryDirectory(prefix="dpdesk-team-") as tmp:
        folder = Path(tmp)
        database = server.new_database("dashboard")
        admin = server.url(database=database)
        create_team(admin, "stats")
        for user, role in (("alice", "curator"), ("bob", "curator"), ("olga", "officer")):
            grant(admin, user, role)
        homes = {who: folder / f"home-{who}" for who in ("alice", "bob")}
        wave1, wave2 = SAMPLES / "census_sample.csv", other_table(folder)
        steps = [
            ("alice", plan(folder, 3.0), wave1),
            ("bob", plan(folder, 3.0), wave1),
            ("alice", plan(folder, 3.0), wave1),
            ("bob", plan(folder, 2.0, "zcdp"), wave2),
        ]
        for n, (who, p, data) in enumerate(steps):
            out = folder / f"out{n}"
            dpdesk(
                "release",
                str(p),
                "--data",
                str(data),
                "--out",
                str(out),
                home=homes[who],
                ledger=server.url(who, database),
            )
        # SHOT_SIZES=1024x700 shoots only that size (one screen size a run under Xvfb, QT_QPA_PLATFORM=xcb)
        for lang, size in [
            (lang, size) for lang, size in SHOTS if size in os.environ.get("SHOT_SIZES", size)
        ]:
            subprocess.run(
                [sys.executable, __file__, "--shoot", server.url("olga", database), lang, size], check=True
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
