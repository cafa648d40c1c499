"""The ``dpdesk`` command line: the same engine as the desktop app, headless.

Exit codes: 0 done; 1 over or exhausted budget; 2 bad plan, data or usage; 3 ledger broken or
unacknowledged.

The package: :mod:`dpdesk.cli.program` parses and dispatches, :mod:`dpdesk.cli.parser` builds the
parser, :mod:`dpdesk.cli.printer` prints and maps errors to exit codes, one module per command runs it
(docs/commands.md, "How the command line is built").
"""

from dpdesk.cli.program import main
from dpdesk.core.common.errors import PlanError

__all__ = ["PlanError", "main"]
