"""dpdesk: publish statistics from a sensitive table under differential privacy.

This module imports nothing heavy so that ``import dpdesk`` stays fast: ``__version__`` is found when first asked
for (:func:`_find_version`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: The version of a copy that has no build record: a source tree that was never installed (pyproject.toml's
#: ``fallback-version`` is the same: tests/test_version.py checks). A development version, never a release's.
FALLBACK_VERSION = "0.2.0.dev0"

_found: str | None = None


def __getattr__(name: str) -> Any:
    """``dpdesk.__version__``: found once, when first asked for."""
    if name == "__version__":
        global _found  # noqa: PLW0603 - the one cached answer
        if _found is None:
            _found = _find_version()
        return _found
    raise AttributeError(f"module 'dpdesk' has no attribute {name!r}")


def _find_version() -> str:
    """This copy's version: the one hatch-vcs wrote into ``dpdesk/_version.py`` when it was built or installed
    (from the git tag: a PyInstaller bundle carries no package metadata, but this module), else the installed
    distribution's metadata when it describes this very copy (never another checkout's editable install found on
    the path), else :data:`FALLBACK_VERSION`."""
    try:
        from dpdesk._version import version

        return str(version)
    except ImportError:
        pass
    try:
        from importlib import metadata

        dist = metadata.distribution("dpdesk")
        if _describes_this_copy(dist):
            return str(dist.version)
    except Exception:  # noqa: BLE001, S110 - no metadata, or unreadable metadata: the fallback says so
        pass
    return FALLBACK_VERSION


def _describes_this_copy(dist: Any) -> bool:
    """True when the installed distribution ``dist`` is this source file's: a wheel installed around it, or an
    editable install of the folder above it."""
    import json

    here = Path(__file__).resolve()
    try:
        if Path(str(dist.locate_file("dpdesk/__init__.py"))).resolve() == here and (dist.files or []):
            return True
        direct = dist.read_text("direct_url.json")
        if direct:
            info = json.loads(direct)
            url = str(info.get("url", ""))
            if info.get("dir_info", {}).get("editable") and url.startswith("file://"):
                from urllib.parse import unquote, urlparse

                return Path(unquote(urlparse(url).path)).resolve() == here.parent.parent
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    return False


def is_development_version(version: str) -> bool:
    """True for a build that is not a tagged release: a ``.devN`` version (commits after the last tag, or no tag),
    a local part (``+g1a2b3c4``: an untagged commit, ``.d20260101``: uncommitted changes) or anything else that is
    not ``X.Y.Z`` (with an optional ``aN``, ``bN`` or ``rcN`` pre-release)."""
    return re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?", version) is None
