"""``dpdesk suggest``: column types proposed for a table."""

from __future__ import annotations

import argparse

from dpdesk.core.common.text import shown
from dpdesk.i18n import _


def run(args: argparse.Namespace) -> int:
    """``dpdesk suggest FILE``: print the column types proposed for a table."""
    from dpdesk.core.loading import suggest_types

    types = suggest_types(args.file)
    print(
        _(
            "Suggested column types (bounds and categories are not suggested: they must come from you, "
            "not from the data):"
        )
    )
    for name, t in types.items():
        print(f"  {shown(name)}: {shown(t)}")
    return 0
