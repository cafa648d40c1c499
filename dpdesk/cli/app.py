"""``dpdesk`` and ``dpdesk open PATH``: start the desktop app."""

from __future__ import annotations

import argparse
import sys

from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.text import shown
from dpdesk.i18n import _


def run(args: argparse.Namespace) -> int:
    """Start the desktop app; a start-up failure is one line with its cause and fix on the terminal, exit 2 (and
    a dialog where Qt can start, a line in the dpdesk home's startup.log where it is writable). A path that is
    none of what dpdesk opens is named, with what it opens, before the app starts (exit 2)."""
    from dpdesk.gui import startup

    if getattr(args, "file", None):
        from dpdesk.services.opening import identify

        try:
            identify(args.file)
        except DpdeskError as exc:
            print("dpdesk: " + shown(exc, keep_newlines=True), file=sys.stderr)
            return 2

    problem = startup.display_problem() or startup.qt_problem()  # before Qt can abort the process
    if problem is None:
        home, problem = startup.home_problem()
    if problem is not None:
        print(f"dpdesk: {startup.report(problem)}", file=sys.stderr)
        return 2
    try:
        from dpdesk.gui.app import main as gui_main

        return int(gui_main(getattr(args, "file", None)))  # pragma: no cover - the GUI has its own tests
    except DpdeskError as exc:
        print(f"dpdesk: {startup.report(str(exc), home=home)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - any failure to start is reported, never a bare traceback
        what = _(
            "the desktop app could not start ({kind}); use the command line meanwhile: dpdesk --help"
        ).format(kind=type(exc).__name__)
        print(f"dpdesk: {startup.report(what, exc, home)}", file=sys.stderr)
        return 2
