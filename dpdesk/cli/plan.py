"""``dpdesk plan new|check``: a plan template from a table's header, and what a plan still lacks."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.text import shown
from dpdesk.i18n import _, ngettext


def run(args: argparse.Namespace) -> int:
    """``dpdesk plan VERB``."""
    if args.plan_verb == "new":
        return _new(args)
    return _check(args)


def _new(args: argparse.Namespace) -> int:
    """``dpdesk plan new --data FILE``: write the template and say what to fill next."""
    from dpdesk.services.plans import NewPlanRequest, new_plan

    made = new_plan(
        NewPlanRequest(
            data=Path(args.data),
            home=dpdesk_home(),
            out=Path(args.out) if args.out else None,
            force=args.force,
            epsilon=args.epsilon,
            encoding=args.encoding,
            delimiter=args.delimiter,
            types=getattr(args, "types", None),
        )
    )
    plan = shown(made.path)
    print(
        ngettext(
            "Wrote {plan}: a plan template declaring {n} column from the header of {data} (no value was read).",
            "Wrote {plan}: a plan template declaring {n} columns from the header of {data} (no value was read).",
            len(made.columns),
        ).format(plan=plan, n=len(made.columns), data=shown(getattr(args, "data_label", args.data)))
    )
    if made.left_out:
        names = ", ".join(f'"{shown(n)}"' for n in made.left_out)
        print(_("Left out (a name that is empty or repeated in the header): {names}").format(names=names))
    if made.encoding_to_give:
        print(
            _(
                "The header is not UTF-8; its names were read as {enc}. If they look wrong, run this again with "
                "--encoding; give release and simulate the same: --encoding {enc}"
            ).format(enc=made.encoding_to_give)
        )
    print(_("Now fill in, in {plan}:").format(plan=plan))
    print(
        "  - "
        + _(
            "each column's type: int, float or category; then its bounds (int, float) or its categories "
            "(category), from public knowledge, never from the data; delete the columns no query uses"
        )
    )
    if made.epsilon_to_fill:
        print("  - " + _("the budget's epsilon (or run this again with --epsilon)"))
    print("  - " + _("the queries to release"))
    print(_("Then run: {command}").format(command=f"dpdesk plan check {plan}"))
    return 0


def _check(args: argparse.Namespace) -> int:
    """``dpdesk plan check PLAN``: every problem on its own line; exit 0 when there is none, else 2."""
    from dpdesk.services.plans import PlanCheckRequest, check_plan_file

    found = check_plan_file(
        PlanCheckRequest(
            plan=Path(args.plan),
            data=Path(args.data) if args.data else None,
            codebook=Path(args.codebook) if args.codebook else None,
            encoding=args.encoding,
            delimiter=args.delimiter,
        )
    )
    plan = shown(args.plan)
    if found.problems:
        n = len(found.problems)
        print(ngettext("{plan}: {n} thing to fix:", "{plan}: {n} things to fix:", n).format(plan=plan, n=n))
        for problem in found.problems:
            print("  - " + shown(problem))
        print(_("Fix them in the plan file, then run: {command}").format(command=f"dpdesk plan check {plan}"))
        return 2
    print(
        _("{plan} is complete, no problem found (columns declared: {columns}; queries: {queries}).").format(
            plan=plan, columns=found.columns, queries=found.queries
        )
    )
    data = shown(getattr(args, "data_label", args.data)) if args.data else "your.csv"
    print(_("Next: {command}").format(command=f"dpdesk budget {plan} --data {data}"))
    return 0
