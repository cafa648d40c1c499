"""``dpdesk simulate``: uncharged simulated releases on a stand-in or a public table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpdesk.cli.inputs import read_plan
from dpdesk.cli.printer import progress
from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.text import shown
from dpdesk.core.model.spec import Plan
from dpdesk.i18n import _


def run(args: argparse.Namespace) -> int:
    """``dpdesk simulate PLAN``: write uncharged simulated releases (never of the private table)."""
    from dpdesk.core.preview.simulate import simulation_notice
    from dpdesk.services.simulate import SimulateRequest, simulate_releases

    if args.data is not None:
        raise UsageError(
            _(
                "simulate does not read the private table: each simulated release is an uncharged noisy draw, "
                "and many of them average back to the true values, so they would reveal the data without "
                "charging its budget. Leave out --data to simulate on a stand-in table generated from the plan's "
                "schema (--rows sets its size), or use --public FILE for a file that is truly public (a "
                "published sample, last year's published table). dpdesk budget PLAN shows each query's noise "
                "without any data."
            )
        )
    plan = read_plan(args.plan, args.codebook)
    request = SimulateRequest(
        plan,
        dpdesk_home(),
        Path(args.out),
        runs=args.runs,
        rows=args.rows,
        public=args.public,
        seed=args.seed,
        force=args.force,
        reads=(Path(args.plan), *((Path(args.codebook),) if args.codebook else ())),
    )
    result = simulate_releases(request, progress())
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(
        _("Wrote {runs} simulated release(s) to {out} ({src}).").format(
            runs=result.runs, out=shown(result.out), src=shown(result.source)
        )
    )
    if args.public is not None:
        _print_fidelity(plan, Path(args.public), min(args.runs, 5), args.seed)
    print(simulation_notice())
    return 0


def _print_fidelity(plan: Plan, public: Path, runs: int, seed: int | None) -> None:
    """For each synthetic-table query, how faithful its tables are on the public file (uncharged estimate)."""
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery
    from dpdesk.services.simulate import FidelityRequest, synthetic_fidelity

    for q in plan.queries:
        if not isinstance(q, SyntheticQuery):
            continue
        f = synthetic_fidelity(FidelityRequest(plan, dpdesk_home(), q.name, public, runs, seed), progress())
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(
            _(
                "Synthetic table {name} on {file} ({runs} simulated releases at epsilon {eps}): pairs of columns "
                "differ from the file's by {t2} on average, single columns by {t1}; each column sampled on its "
                "own: {b2} and {b1} (mean total-variation distance; 0% is an exact copy)."
            ).format(
                name=shown(q.name),
                file=shown(public.name),
                runs=f.runs,
                eps=numfmt.plain(q.epsilon, 6),
                t2=f"{100 * f.two_way:.1f}%",
                t1=f"{100 * f.one_way:.1f}%",
                b2=f"{100 * f.independent_two_way:.1f}%",
                b1=f"{100 * f.independent_one_way:.1f}%",
            )
        )
