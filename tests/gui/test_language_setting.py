"""Issue 28 item 4: the language is chosen in the app (Tools > Language), kept in the home's settings and applied
at the next start (or at once with "Restart now"); an explicit DPDESK_LANG still wins."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from dpdesk.gui.actions import language
from dpdesk.gui.app import build
from dpdesk.i18n import current_language

pytestmark = pytest.mark.timeout(300)


def test_choosing_chinese_is_kept_and_used_at_the_next_start(
    qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "en")  # recorded first: whatever the test sets is undone after it
    monkeypatch.delenv("DPDESK_LANG")
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    asked: list[str] = []
    win.ask_restart = lambda title, text: asked.append(text) or False
    menu = win.language_menu
    assert [a.text() for a in menu.actions()] == ["System language", "English", "中文（简体）"]
    assert win.language_actions["system"].isChecked()
    win.language_actions["zh_CN"].trigger()  # as a click on the menu item does
    assert asked and "中文（简体）" in asked[0] and "next start" in win.status_label.text()
    win.settings.sync()
    assert "language=zh_CN" in (dpdesk_home / "settings.ini").read_text(encoding="utf-8")
    # the next start: the setting is applied before any window is built
    assert language.apply_language_setting(dpdesk_home) == "zh_CN" and current_language() == "zh_CN"
    monkeypatch.delenv("DPDESK_LANG")
    _app2, win2 = build(dpdesk_home)
    qtbot.addWidget(win2)
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    assert win2.language_actions["zh_CN"].isChecked()
    # back to the system's language: the setting is removed, nothing applied at the next start
    win2.ask_restart = lambda title, text: False
    win2.language_actions["system"].trigger()
    monkeypatch.delenv("DPDESK_LANG")
    assert language.apply_language_setting(dpdesk_home) is None and current_language() == "en"


def test_an_explicit_dpdesk_lang_wins_over_the_setting(
    dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDESK_LANG", "en")  # recorded first: whatever the test sets is undone after it
    dpdesk_home.mkdir(parents=True, exist_ok=True)
    (dpdesk_home / "settings.ini").write_text("[ui]\nlanguage=zh_CN\n", encoding="utf-8")
    monkeypatch.setenv("DPDESK_LANG", "en")
    assert language.apply_language_setting(dpdesk_home) is None and current_language() == "en"
    monkeypatch.delenv("DPDESK_LANG")
    (dpdesk_home / "settings.ini").write_text("[ui]\nlanguage=klingon\n", encoding="utf-8")
    assert language.apply_language_setting(dpdesk_home) is None and current_language() == "en"


def test_restart_now_starts_dpdesk_again_in_the_chosen_language(
    qtbot: Any, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DPDESK_LANG", raising=False)
    _app, win = build(dpdesk_home)
    qtbot.addWidget(win)
    started: list[tuple[list[str], dict[str, str]]] = []

    class Recorder:
        def __init__(self, args: list[str], env: dict[str, str], **_kw: Any) -> None:
            started.append((args, env))

    real = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", Recorder)
    win.ask_restart = lambda title, text: True
    assert win.language.choose("zh_CN")
    assert not win.isVisible()
    ((args, env),) = started
    assert args == language.restart_command() and env["DPDESK_LANG"] == "zh_CN"
    # the command really is dpdesk: it answers --version
    monkeypatch.setattr(subprocess, "Popen", real)
    out = subprocess.run([*args, "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "dpdesk" in out.stdout
