"""Tools > Language: the app's language, chosen in the app (issue 28 item 4) and kept in the home's settings.

The choice applies when dpdesk starts: :func:`apply_language_setting` runs before the first window is built, and
"Restart now" starts dpdesk again in the chosen language (after the window has asked to save an unsaved plan).
An explicit ``DPDESK_LANG`` in the environment still wins (scripts and tests set it); "System" follows the
system's locale again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import LANGUAGES, _, current_language

#: The settings key of the chosen language: "en", "zh_CN", or absent (the system's)
KEY = "ui/language"
SYSTEM = "system"


def language_names() -> list[tuple[str, str]]:
    """(code, name) of each choice, each language named in itself so that it is found whatever is shown."""
    return [(SYSTEM, _("System language")), ("en", "English"), ("zh_CN", "中文（简体）")]


def apply_language_setting(home: Path) -> str | None:
    """Use the language chosen in the app (the home's settings) unless ``DPDESK_LANG`` is set; the choice applied,
    if any. Run before any window is built: every text is translated when it is made."""
    chosen = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat).value(KEY)
    if os.environ.get("DPDESK_LANG") or chosen not in LANGUAGES:
        return None
    os.environ["DPDESK_LANG"] = str(chosen)
    return str(chosen)


def restart_command() -> list[str]:
    """The command that starts this dpdesk's app again: the installed program itself, or this Python."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "dpdesk"]


class Language(Action):
    """Tools > Language: remember the choice; offer to restart in it."""

    def chosen(self) -> str:
        value = self.window.settings.value(KEY)
        return str(value) if value in LANGUAGES else SYSTEM

    def choose(self, code: str) -> bool:
        """Remember ``code`` ("en", "zh_CN" or "system"); when the window's language changes with it, offer to
        restart now. True when dpdesk is restarting."""
        window = self.window
        if code == SYSTEM:
            window.settings.remove(KEY)
        else:
            window.settings.setValue(KEY, code)
        window.settings.sync()
        wanted = code if code != SYSTEM else _system_language()
        if wanted == current_language():
            return False
        name = dict(language_names()).get(code, code)
        if not window.ask_restart(
            _("Language"),
            _("dpdesk will use {language} from its next start. Restart now?").format(language=name),
        ):
            window.set_status(_("dpdesk will use {language} from its next start.").format(language=name))
            return False
        if not window.close():  # an unsaved plan: the user chose to stay
            return False
        env = dict(os.environ)
        env.pop("DPDESK_LANG", None)
        if code != SYSTEM:
            env["DPDESK_LANG"] = code
        subprocess.Popen(restart_command(), env=env, start_new_session=True)  # noqa: S603 - this program itself
        return True


def _system_language() -> str:
    """The language the system's locale asks for (what "System" gives at the next start)."""
    saved = os.environ.pop("DPDESK_LANG", None)
    try:
        return current_language()
    finally:
        if saved is not None:
            os.environ["DPDESK_LANG"] = saved
