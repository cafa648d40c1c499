"""``dpdesk release``: charge the ledger, then write the noisy release (``--check``: check only)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.cli.budget import print_budget
from dpdesk.cli.inputs import read_plan
from dpdesk.cli.printer import num, progress, record_done, tell_migration
from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.text import shown
from dpdesk.core.publish import words
from dpdesk.i18n import _, ngettext

if TYPE_CHECKING:
    from dpdesk.core.release.datacheck import DataCheck
    from dpdesk.core.release.engines.spark.session import SparkTarget
    from dpdesk.services.release import ReleaseRequest


def run(args: argparse.Namespace) -> int:
    """``dpdesk release PLAN --data FILE --out DIR``: charge, then write the package (``--check``: the first step alone)."""
    from dpdesk.core.release.streaming import parse_memory
    from dpdesk.services.release import ReleaseRequest, release_plan

    if args.check and args.out:
        raise UsageError(
            _("--check charges and writes nothing: leave out --out (or leave out --check to release)")
        )
    if not args.check and not args.out:
        raise UsageError(
            _(
                "release needs --out FOLDER, a new or empty folder for the package (or --check, to check the "
                "release without charging anything)"
            )
        )
    plan = read_plan(args.plan, args.codebook)
    spark = _spark_target(args)

    def show_check(check: DataCheck) -> None:  # before anything is charged; on stderr, never in a file
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print("dpdesk: " + shown(check.heading()), file=sys.stderr)
        for line in check.lines():
            print("  " + shown(line), file=sys.stderr)

    out = Path(args.out) if args.out else Path()
    request = ReleaseRequest(
        plan,
        args.data,
        dpdesk_home(),
        out if args.out else None,
        encoding=args.encoding,
        delimiter=args.delimiter,
        bom=args.bom,
        accept_data_problems=args.accept_data_problems,
        approval=Path(args.approval) if args.approval else None,
        memory_limit=parse_memory(args.memory_limit) if args.memory_limit else None,
        spark=spark,
    )
    if args.check:
        return _check_release(request, show_check)
    result = release_plan(request, progress(), on_data_check=show_check)
    record_done(
        _(
            "the release was done nonetheless: charged to the ledger (entry {seq}) and written to {out}; do not run "
            "it again (dpdesk ledger verify --data FILE lists it)"
        ).format(seq=result.entry.seq, out=shown(out))
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    tell_migration(result.migration)
    if result.streamed:
        print(
            "dpdesk: "
            + _(
                "the table would not fit under the memory limit: its statistics were computed in one streaming "
                "pass over the file"
            ),
            file=sys.stderr,
        )
    e = result.entry
    n = len(plan.queries)
    print(
        ngettext(
            "Released {values} value(s) of {n} query to {out}; charged epsilon {e}, delta {d} ({method}); "
            "ledger entry {seq} ({hash}).",
            "Released {values} value(s) of {n} queries to {out}; charged epsilon {e}, delta {d} ({method}); "
            "ledger entry {seq} ({hash}).",
            n,
        ).format(
            values=len(result.rows),
            n=n,
            out=shown(out),
            e=num(e.charged.epsilon),
            d=numfmt.delta(e.charged.delta, "up"),
            method=words.accounting(e.method),
            seq=e.seq,
            hash=e.hash[:12],
        )
    )
    from dpdesk.core.ledger.budget import entry_warnings

    for warning in entry_warnings(e):
        print(warning)
    return 0


def _spark_target(args: argparse.Namespace) -> SparkTarget | None:
    """The Spark the release aggregates with (``--engine spark``), or None; --spark-* without it is refused."""
    from dpdesk.core.release.engines.spark.session import SparkTarget

    if args.engine != "spark":
        if args.spark_master or args.spark_remote:
            raise UsageError(_("--spark-master and --spark-remote go with --engine spark"))
        return None
    if args.memory_limit:
        raise UsageError(_("--memory-limit is for this computer's engines; leave it out with --engine spark"))
    return SparkTarget(master=args.spark_master, remote=args.spark_remote)


def _check_release(request: ReleaseRequest, show_check: Callable[[DataCheck], None]) -> int:
    """``release --check``: the release's first step alone; exit 0 when the plan fits, 1 when it does not."""
    from dpdesk.services.release import check_release

    checked = check_release(request, progress(), on_data_check=show_check)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if checked.dataset:
        print(_("Dataset {id}.").format(id=checked.dataset))
    else:
        print(_("A new dataset: its first release fixes its budget, unit of privacy and accounting."))
    print_budget(checked.report, read_data=True)
    print()
    if checked.report.fits:
        print(
            _(
                "Checked: nothing was charged or written. To release, run the same command with --out FOLDER "
                "instead of --check (the budget is checked again then)."
            )
        )
        return 0
    print(_("Checked: the plan does not fit what is left; nothing was charged or written."))
    return 1
