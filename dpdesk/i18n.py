"""Translations: one gettext catalogue (domain ``dpdesk``) for the engine, the CLI, the GUI and reports.

The language comes from ``DPDESK_LANG`` (``en`` or ``zh_CN``), else the system locale
(``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``). English is the source language.
Use ``_("text {name}").format(name=...)``: translators see the placeholders.
"""

from __future__ import annotations

import gettext
import os
from functools import lru_cache

DOMAIN = "dpdesk"
LANGUAGES = ("en", "zh_CN")


def current_language() -> str:
    """The language in use: ``en`` or ``zh_CN``."""
    wanted = os.environ.get("DPDESK_LANG")
    if not wanted:
        for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
            if os.environ.get(var):
                wanted = os.environ[var].split(":")[0]
                break
    if wanted and wanted.lower().startswith("zh"):
        return "zh_CN"
    return "en"


@lru_cache(maxsize=4)
def translation(language: str) -> gettext.NullTranslations:
    """The catalogue for a language (English: the identity)."""
    if language == "en":
        return gettext.NullTranslations()
    from dpdesk.resources import resource

    return gettext.translation(DOMAIN, localedir=str(resource("i18n")), languages=[language], fallback=True)


def _(message: str) -> str:
    """Translate a message into the current language."""
    return translation(current_language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Translate a message with a count."""
    return translation(current_language()).ngettext(singular, plural, n)
