"""Runtime hook of the frozen dpdesk: runs before ``entry.py``.

PyInstaller's own matplotlib runtime hook (``pyi_rth_mplconfig``, removed in dpdesk.spec) points
MPLCONFIGDIR at a new temporary folder on every start, so matplotlib rebuilds its font list (a scan
of every system font: seconds on a desktop with many fonts) before the first chart or report of
every session. dpdesk is a one-folder build whose paths do not change between runs, so a per-user
cache folder is safe; if a bundle is moved, matplotlib rebuilds the list once when a cached font
path is missing. A user's own MPLCONFIGDIR is respected.

Only ``os`` and ``sys`` are used (no platformdirs): this runs on every start, before the window.
matplotlib creates the folder when it first needs it, and falls back to a temporary one if it cannot.
The folders are platformdirs' ``user_cache_dir("dpdesk")`` + ``matplotlib``.
"""


def _pyi_rthook() -> None:
    import os
    import sys

    if os.environ.get("MPLCONFIGDIR"):
        return
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        folder = os.path.join(base, "dpdesk", "Cache", "matplotlib")
    elif sys.platform == "darwin":
        folder = os.path.join(home, "Library", "Caches", "dpdesk", "matplotlib")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = xdg if os.path.isabs(xdg) else os.path.join(home, ".cache")
        folder = os.path.join(base, "dpdesk", "matplotlib")
    os.environ["MPLCONFIGDIR"] = folder


_pyi_rthook()
del _pyi_rthook
