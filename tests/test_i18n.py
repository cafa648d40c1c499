"""Translations: the zh_CN catalogue is complete and safe to format, and the CLI, PDF and GUI speak Chinese on request.

The rest of the suite runs in English (conftest sets LANGUAGE=en); these tests ask for Chinese with
DPDESK_LANG, which wins over the locale.
"""

from __future__ import annotations

import gettext
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT, SAMPLES

TOOL = ROOT / "build_scripts" / "i18n.py"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dpdesk_i18n_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


i18n_tool = _tool()


def test_catalogue_check_passes() -> None:
    """Every message in the code has a zh_CN translation and the committed .mo is the .po compiled."""
    r = subprocess.run(
        [sys.executable, str(TOOL), "check"], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_translation_keeps_the_placeholders_of_its_message() -> None:
    entries = i18n_tool.read_po(i18n_tool.po_path("zh_CN"))
    live = [e for e in entries if e.msgid and not e.obsolete]
    assert len(live) > 300
    for e in live:
        fields = set(i18n_tool.placeholders(e.msgid))
        if e.msgid_plural is not None:
            fields |= set(i18n_tool.placeholders(e.msgid_plural))
        for s in e.msgstr:
            assert set(i18n_tool.placeholders(s)) == fields, (e.msgid, s)
            names = {f.strip("{}").split(":")[0].split("!")[0] for f in fields}
            s.format(**dict.fromkeys(names, "1"))  # .format never raises on a translation


def test_compiled_catalogue_matches_gettext_and_has_one_plural_form() -> None:
    mo = i18n_tool.mo_path("zh_CN")
    with mo.open("rb") as f:
        t = gettext.GNUTranslations(f)
    assert t.info()["plural-forms"] == "nplurals=1; plural=0;"
    assert t.gettext("Privacy budget") == "隐私预算"
    assert t.ngettext("{n} x", "{n} xs", 3) == "{n} xs"  # unknown messages fall back to English
    plural = [e for e in i18n_tool.read_po(i18n_tool.po_path("zh_CN")) if e.msgid_plural]
    assert plural
    for n in (1, 2):
        assert CJK.search(t.ngettext(plural[0].msgid, plural[0].msgid_plural, n))


def test_mo_writer_round_trips_through_gettext(tmp_path: Path) -> None:
    po = tmp_path / "x.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Plural-Forms: nplurals=2; plural=n != 1;\\n"\n\n'
        '#, python-brace-format\nmsgid "{n} file"\nmsgid_plural "{n} files"\nmsgstr[0] "{n} Datei"\nmsgstr[1] "{n} Dateien"\n\n'
        'msgctxt "menu"\nmsgid "Open"\nmsgstr "打开"\n\n'
        '#, fuzzy\nmsgid "Close"\nmsgstr "关闭"\n\n'
        'msgid "multi"\n"line \\"quoted\\"\\n"\nmsgstr ""\n"多行\\n"\n',
        encoding="utf-8",
    )
    entries = i18n_tool.read_po(po)
    t = gettext.GNUTranslations(io.BytesIO(i18n_tool.mo_bytes(entries)))
    assert t.ngettext("{n} file", "{n} files", 1) == "{n} Datei"
    assert t.ngettext("{n} file", "{n} files", 5) == "{n} Dateien"
    assert t.pgettext("menu", "Open") == "打开"
    assert t.gettext("Close") == "Close"  # fuzzy translations are not compiled
    assert t.gettext('multiline "quoted"\n') == "多行\n"
    i18n_tool.write_po(tmp_path / "y.po", entries)
    assert [
        (e.msgctxt, e.msgid, e.msgid_plural, e.msgstr, e.flags) for e in i18n_tool.read_po(tmp_path / "y.po")
    ] == [(e.msgctxt, e.msgid, e.msgid_plural, e.msgstr, e.flags) for e in entries]


def test_update_keeps_translations_and_retires_removed_messages() -> None:
    E = i18n_tool.Entry
    old = [
        E("", msgstr=["Plural-Forms: nplurals=1; plural=0;\n"]),
        E("Kept", msgstr=["保留"]),
        E("Gone for good", msgstr=["已删除"]),
        E("Budget left: {e}", msgstr=["剩余预算：{e}"]),
    ]
    pot = [
        E("Kept", references=["a.py:1"]),
        E("Budget left now: {e}", references=["a.py:2"]),
        E("New", references=["a.py:3"]),
    ]
    new = {e.msgid: e for e in i18n_tool.merge(pot, old, "zh_CN")}
    assert new["Kept"].msgstr == ["保留"] and new["Kept"].references == ["a.py:1"]
    assert new["Budget left now: {e}"].fuzzy and new["Budget left now: {e}"].msgstr == ["剩余预算：{e}"]
    assert new["New"].msgstr == [""]
    assert new["Gone for good"].obsolete and new["Budget left: {e}"].obsolete
    dropped = {e.msgid for e in i18n_tool.merge(pot, old, "zh_CN", keep_obsolete=False)}
    assert "Gone for good" not in dropped


def test_extract_refuses_messages_that_are_not_literals(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text('x = _("Hello {name}")\ny = _(x)\nz = ngettext("one", "many", 2)\n', encoding="utf-8")
    found, problems = i18n_tool.extract_file(src, "m.py")
    assert [(e.msgid, e.msgid_plural) for e in found] == [("Hello {name}", None), ("one", "many")]
    assert len(problems) == 1 and "m.py:2" in problems[0]


def test_cli_speaks_chinese_when_asked(tmp_path: Path) -> None:
    env = {**os.environ, "DPDESK_LANG": "zh_CN", "DPDESK_HOME": str(tmp_path / "home")}
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(SAMPLES / "cps_wages_plan.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert CJK.search(r.stdout)
    assert "仅根据方案计算，未读取任何数据。" in r.stdout
    assert "b = 敏感度 / ε = 1 / 0.1 = 10" in r.stdout  # the numbers as in English
    assert "本方案之后剩余：ε 0.1，δ 0.0000009" in r.stdout
    assert "no data was read" not in r.stdout


def test_english_stays_the_default(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DPDESK_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
    }
    env["DPDESK_HOME"] = str(tmp_path / "home")
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(SAMPLES / "cps_wages_plan.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "Computed from the plan alone; no data was read." in r.stdout and not CJK.search(r.stdout)


def test_gui_in_chinese(
    qtbot: Any, dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window built with DPDESK_LANG=zh_CN shows Chinese tabs, menus and meter (screenshot kept in tmp_path)."""
    from PySide6.QtCore import Qt, QThreadPool, QTranslator
    from PySide6.QtWidgets import QApplication

    from dpdesk.gui.app import build
    from dpdesk.i18n import translation

    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    translation.cache_clear()
    app, window = build(dpdesk_home)
    try:
        qtbot.addWidget(window)
        window.show()
        assert window.tabs.tabText(0) == "1 · 数据"
        assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
            "1 · 数据",
            "2 · 查询",
            "3 · 结果",
            "4 · 账本",
        ]
        assert window.menuBar().actions()[0].text() == "文件(&F)"
        assert window.meter.title() == "隐私预算"
        assert window.schema_view.schema_model.headerData(1, Qt.Orientation.Horizontal) == "列"
        assert CJK.search(window.status_label.text())
        assert window.grab().save(str(tmp_path / "main_window_zh_CN.png"))
    finally:
        QThreadPool.globalInstance().waitForDone(30_000)
        for tr in app.findChildren(QTranslator):  # later tests run in English
            QApplication.removeTranslator(tr)
        translation.cache_clear()
