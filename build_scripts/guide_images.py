"""Make the guide's illustrations (resources/guide/img/<language>/*.png) with the app's own figure code.

Usage (from the repository root)::

    python build_scripts/guide_images.py              # writes resources/guide/img/{en,zh_CN}/*.png
    python build_scripts/guide_images.py --out DIR    # writes DIR/{en,zh_CN}/*.png (the tests render here)

Each language runs in its own process (``DPDESK_LANG``), since the figures' labels are translated when
drawn. The charts use ``dpdesk.core.dp.figures`` (the preview panel's and the report's matplotlib figures)
on fixed, made-up numbers of a plan — no data is read — and the epsilon scale is the app's
``EpsilonScale`` widget, drawn offscreen.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMG = ROOT / "resources" / "guide" / "img"
LANGUAGES = ("en", "zh_CN")
#: the images each language has (the pages refer to them as ../img/<language>/<name>)
NAMES = ("accuracy_laplace.png", "composition_budget.png", "results_histogram.png", "epsilon_scale.png")
#: the made-up plan's query names and chart title, per language (build scripts are not in the catalogue)
WORDS = {
    "en": (
        "count of people",
        "mean wage",
        "age histogram",
        "sequential",
        "Age groups (illustration, epsilon 0.5)",
    ),
    "zh_CN": ("人数", "平均工资", "年龄直方图", "顺序组合", "年龄组（示意，ε = 0.5）"),
}


def render(out: Path) -> list[Path]:
    """Draw every image into ``out`` in the current language."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import matplotlib

    matplotlib.use("Agg")
    from dpdesk.core.dp import figures, mechanisms
    from dpdesk.core.dp.queries_base import Component
    from dpdesk.i18n import current_language

    out.mkdir(parents=True, exist_ok=True)
    made = []
    count, mean, hist, method, title = WORDS[current_language()]
    eps = 0.1
    b = mechanisms.laplace_scale(1.0, eps)
    comp = Component(
        label="count",
        kind="count",
        mechanism="laplace",
        epsilon=eps,
        delta=0.0,
        rho=eps * eps / 2,
        l1=1.0,
        l2=1.0,
        scale=b,
        bound95=mechanisms.laplace_bound(b),
        unit=1.0,
        formula="",
        derivation="",
    )
    fig = figures.noise_figure(comp)
    path = out / "accuracy_laplace.png"
    fig.savefig(path, dpi=100)
    made.append(path)

    fig = figures.budget_figure(
        [(count, 0.3), (mean, 0.3), (hist, 0.3)],
        total=2.0,
        earlier=0.5,
        remaining=0.6,
        method=method,
    )
    path = out / "composition_budget.png"
    fig.savefig(path, dpi=100)
    made.append(path)

    labels = ["18-29", "30-44", "45-59", "60+"]
    values = [412.0, 655.0, 590.0, 343.0]
    half = mechanisms.laplace_bound(mechanisms.laplace_scale(1.0, 0.5))
    fig = figures.results_figure(
        title,
        labels,
        values,
        [v - half for v in values],
        [v + half for v in values],
    )
    path = out / "results_histogram.png"
    fig.savefig(path, dpi=100)
    made.append(path)

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from dpdesk.gui.app import _add_cjk_font
    from dpdesk.gui.views.epsilon_scale import EpsilonScale

    _add_cjk_font()
    scale = EpsilonScale(epsilon=1.0)
    scale.resize(420, 320)
    path = out / "epsilon_scale.png"
    if not scale.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    made.append(path)
    del app
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=IMG, help="folder to write <language>/*.png into")
    parser.add_argument("--language", choices=LANGUAGES, help=argparse.SUPPRESS)  # one language, in-process
    args = parser.parse_args(argv)
    if args.language:
        for p in render(args.out / args.language):
            print(p)
        return 0
    for lang in LANGUAGES:
        env = dict(
            os.environ,
            DPDESK_LANG=lang,
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        )
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--out", str(args.out), "--language", lang],
            check=True,
            env=env,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
