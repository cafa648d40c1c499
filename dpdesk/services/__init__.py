"""The service layer: each flow that the command line and the app share, written once.

One module per flow: :mod:`~dpdesk.services.budget` (a plan's budget, with or without the ledger),
:mod:`~dpdesk.services.release` (check a table, then release a plan on it), :mod:`~dpdesk.services.export`
(write a shown release as a package), :mod:`~dpdesk.services.review` (check a package or an exported
ledger), :mod:`~dpdesk.services.ledger` (list and verify, export, export a past release again, the budget
statement, acknowledge, change settings) and :mod:`~dpdesk.services.simulate` (uncharged previews).

Each service is a function taking a typed request (a frozen dataclass) and a
:class:`~dpdesk.core.common.progress.Progress` (which also carries the cancel), returning a typed result (a frozen
dataclass) and raising the engine's typed errors (:mod:`dpdesk.core.common.errors`). Services never print, never
touch Qt and never parse arguments: the command line parses its arguments, builds the request, calls the
service and prints the result; the app runs the same service as a job in its worker. Services import only the
engine (``[tool.importlinter]`` in pyproject.toml).
"""

from __future__ import annotations

from dpdesk.services.common import Dataset, Notify

__all__ = ["Dataset", "Notify"]
