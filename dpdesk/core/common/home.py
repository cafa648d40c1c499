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
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from dpdesk.core.common.errors import UsageError
        from dpdesk.i18n import _

        raise UsageError(
            _("cannot use the dpdesk folder {home}: {err} (set DPDESK_HOME to a writable folder)").format(
                home=home, err=exc.strerror or exc
            )
        ) from None
    return home
