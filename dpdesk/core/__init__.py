"""dpdesk's engine: no Qt, importable with PySide6 uninstalled, light to import (each module loads its heavy
libraries when it needs them).

The layers, enforced by import-linter (``[tool.importlinter]`` in pyproject.toml, run by
``tests/test_layers.py``): the app (``dpdesk.gui``) and the command line (``dpdesk.cli``) over the services
(``dpdesk.services``) over this engine; no Qt here; noise only through the OpenDP adapter
``dpdesk.core.mechanisms``; nothing on the release path imports ``dpdesk.core.simulate`` (numpy's generator, for
previews only).
"""
