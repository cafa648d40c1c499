"""Help > Guide: the pages exist in both languages with the same structure, open in the window, and the
epsilon scale marks the epsilon it is given."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor

from dpdesk.resources import resource

ROOT = Path(__file__).resolve().parents[2]
GUIDE = resource("guide")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)]+)\)")


def _files(lang: str) -> list[str]:
    return sorted(p.name for p in (GUIDE / lang).glob("*.md"))


def test_every_page_exists_in_both_languages_with_the_same_structure() -> None:
    en, zh = _files("en"), _files("zh_CN")
    assert en == zh and len(en) >= 9
    assert all(re.fullmatch(r"\d\d_[a-z_]+\.md", n) for n in en)
    for name in en:
        texts = {lang: (GUIDE / lang / name).read_text(encoding="utf-8") for lang in ("en", "zh_CN")}
        shape = {}
        for lang, text in texts.items():
            lines = text.splitlines()
            shape[lang] = (
                [len(h) - len(h.lstrip("#")) for h in lines if h.startswith("#")],
                sum(1 for line in lines if line.startswith("|")),  # table rows
                [Path(i).name for i in IMAGE.findall(text)],
                sorted(LINK.findall(text)),
                "<!-- epsilon-scale -->" in text,
            )
            assert lines[0].startswith("# "), (lang, name)
            for ref in IMAGE.findall(text):
                assert ref.startswith(f"../img/{lang}/"), (lang, name, ref)
                assert (GUIDE / lang / ref).resolve().is_file(), (lang, name, ref)
            for ref in LINK.findall(text):
                if not ref.startswith("http"):
                    assert (GUIDE / lang / ref).is_file(), (lang, name, ref)
        assert shape["en"] == shape["zh_CN"], name
        # the same worked numbers in both languages (every decimal number: 2.72, 29.96, 0.3, 1.68, ...)
        nums = {lang: set(re.findall(r"\d+\.\d+", t)) for lang, t in texts.items()}
        assert nums["en"] == nums["zh_CN"], (name, nums["en"] ^ nums["zh_CN"])


def test_the_guide_covers_what_the_issue_asks() -> None:
    text = " ".join((GUIDE / "en" / n).read_text(encoding="utf-8") for n in _files("en"))
    for needle in (
        "2.72×",
        "Delta (δ)",
        "unit of privacy",
        "must come from outside the data",
        "sensitivity",
        "Sequential composition",
        "Parallel composition",
        "Advanced composition",
        "zCDP",
        "post-processing",
        "±29.96",
        "b = Δ / ε",
        "not directly comparable",
        "Side channels",
        "Groups larger than the unit of privacy",
    ):
        assert needle in text, needle


@pytest.mark.slow
def test_guide_images_render(tmp_path: Path) -> None:
    """The build script draws every image with the app's figure code, in both languages."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("guide_images", ROOT / "build_scripts" / "guide_images.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    NAMES = script.NAMES

    subprocess.run(
        [sys.executable, str(ROOT / "build_scripts" / "guide_images.py"), "--out", str(tmp_path)],
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    for lang in ("en", "zh_CN"):
        for name in NAMES:
            made = tmp_path / lang / name
            assert made.stat().st_size > 2000, made
            assert (GUIDE / "img" / lang / name).is_file(), (lang, name)  # committed too


@pytest.fixture
def guide(qtbot: Any) -> Any:
    from dpdesk.gui.views.guide import GuideWindow

    win = GuideWindow()
    qtbot.addWidget(win)
    win.show()
    return win


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_guide_window_opens_every_page(qtbot: Any, lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDESK_LANG", lang)
    from dpdesk.gui.views.guide import GuideWindow

    win = GuideWindow()
    qtbot.addWidget(win)
    win.show()
    assert win.page_list.count() == len(_files(lang))
    assert win.windowTitle() == ("Guide to differential privacy" if lang == "en" else "差分隐私指南")
    for row in range(win.page_list.count()):
        win.page_list.setCurrentRow(row)
        page = win.current_page()
        assert page is not None and page.path.parent.name == lang
        doc = win.browser.document()
        shown = doc.toPlainText()
        assert page.title in shown
        assert "<!--" not in shown
        text = page.path.read_text(encoding="utf-8")
        for ref in IMAGE.findall(text):  # the image is loaded, not a broken-image placeholder
            from PySide6.QtCore import QUrl
            from PySide6.QtGui import QTextDocument

            image = doc.resource(QTextDocument.ResourceType.ImageResource.value, QUrl(ref))
            assert image is not None and not image.isNull(), (lang, page.stem, ref)
        assert win.scale_box.isVisibleTo(win) == ("<!-- epsilon-scale -->" in text)
    assert win.show_page("choosing_epsilon") and win.current_page().stem == "08_choosing_epsilon"
    assert win.scale_box.isVisibleTo(win)


@pytest.mark.slow
def test_open_guide_from_the_help_menu(qtbot: Any, dpdesk_home: Path) -> None:
    from dpdesk.gui.app import build

    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    action = next(a for a in help_menu.actions() if a.text() == "&Guide to differential privacy…")
    action.trigger()
    win = window._guide_window
    assert win.isVisible() and win.current_page().stem.startswith("01_")
    from dpdesk.gui.views.guide import open_guide

    assert open_guide(window, page=7) is win  # one guide per window, at the page asked
    assert win.current_page().stem == "07_accuracy"
    win.close()


def test_scale_marks_the_epsilon_it_is_given(qtbot: Any) -> None:
    from dpdesk.gui.views.epsilon_scale import EpsilonScale

    scale = EpsilonScale()
    qtbot.addWidget(scale)
    hint = scale.sizeHint()
    assert hint.width() <= 280 and hint.height() <= 320  # fits a narrow side panel
    scale.resize(hint)
    assert scale.marker_rect() is None
    red = QColor("#c0392b")

    def red_rows() -> list[int]:
        img = scale.grab().toImage()
        x = int(scale._axis_x()) - 8
        return [y for y in range(img.height()) if img.pixelColor(x, y) == red]

    assert red_rows() == []
    ys = {}
    for eps in (0.05, 1.0, 12.2):
        scale.set_epsilon(eps)
        assert scale.epsilon() == eps
        rows = red_rows()
        assert rows, eps
        centre = (min(rows) + max(rows)) / 2
        assert abs(centre - scale.y_of(eps)) <= 2, (eps, centre, scale.y_of(eps))
        ys[eps] = centre
        assert "not directly comparable" in scale.toolTip() and f"{eps:g}" in scale.toolTip()
    assert ys[0.05] > ys[1.0] > ys[12.2]  # larger epsilons higher up, on a log axis
    low, high = scale.axis_range()
    mid = scale.y_of(math_sqrt(low * high))
    assert abs(mid - (scale.y_of(low) + scale.y_of(high)) / 2) < 1e-6
    scale.set_epsilon(1000.0)  # beyond the axis: the axis widens to hold it
    assert scale.axis_range()[1] >= 1000.0 and red_rows()
    scale.set_epsilon(None)
    assert red_rows() == []


def math_sqrt(x: float) -> float:
    return float(x**0.5)
