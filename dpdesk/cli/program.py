"""``dpdesk``: parse the arguments, then open the app or run one command (each in its own module)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from dpdesk.cli import app, budget, ledger, officer, plan, release, review, simulate, suggest, team
from dpdesk.cli.inputs import with_database_data
from dpdesk.cli.parser import build_parser
from dpdesk.cli.printer import run_command
from dpdesk.i18n import _

#: Each command word and the function that runs it (a new command: its module here, its options in parser.py).
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "budget": budget.run,
    "release": release.run,
    "simulate": simulate.run,
    "ledger": ledger.run,
    "review": review.run,
    "suggest": suggest.run,
    "plan": plan.run,
    "officer": officer.run,
    "team": team.run,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    as_program = argv is None  # the process ends when this returns (the dpdesk command, python -m dpdesk)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == [
        "--selftest"
    ]:  # a small release on the bundled sample, in a temporary home (installers' check)
        from dpdesk.selftest import run

        return run()
    parser = build_parser()
    if len(argv) == 1 and _a_path(argv[0]) and argv[0] not in _commands(parser):
        # dpdesk PATH, as a file manager runs it (the desktop entry's Exec=dpdesk %f)
        argv = ["open", argv[0]]
    args = parser.parse_args(argv)
    if args.selftest:
        parser.error(_("--selftest is given alone"))
    if (
        args.command not in (None, "open") and sys.stdout is None
    ):  # started with stdout closed (dpdesk ... >&-)
        print("dpdesk: " + _("standard output is closed; nothing was done"), file=sys.stderr)
        return 2
    if args.command is None or args.command == "open":
        return app.run(args)
    return run_command(with_database_data(COMMANDS[args.command]), args, as_program)


def _a_path(word: str) -> bool:
    """Whether ``dpdesk WORD`` means a file to open: it exists, or it looks like a path (a misspelt command, such
    as ``dpdesk relase``, keeps argparse's message listing the commands)."""

    return (
        bool(word)
        and not word.startswith("-")
        and (os.path.exists(word) or "/" in word or os.sep in word or "." in word)
    )


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    """The top-level command words (budget, release, open, ...)."""
    return {n for a in parser._actions if isinstance(a, argparse._SubParsersAction) for n in a.choices}
