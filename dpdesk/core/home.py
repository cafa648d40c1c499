"""Where dpdesk keeps its ledgers and settings: ``DPDESK_HOME`` or a per-user data folder."""

from __future__ import annotations

import os
from pathlib import Path


def dpdesk_home() -> Path:
    """Return the dpdesk home folder, creating it if needed.

    ``DPDESK_HOME`` overrides it; otherwise platformdirs' per-user data folder is used.
    """
    env = os.environ.get("DPDESK_HOME")
    if env:
        home = Path(env).expanduser()
    else:
        import platformdirs  # light, but only needed here

        home = Path(platformdirs.user_data_dir("dpdesk", appauthor=False))
    home.mkdir(parents=True, exist_ok=True)
    return home
