"""``python -m dpdesk.cli``: the same entry point as the ``dpdesk`` command."""

import sys

from dpdesk.cli.program import main

if __name__ == "__main__":
    sys.exit(main())
