"""``dpdesk budget``: sensitivity, noise and budget of a plan (``--fit`` to fit it to the budget)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.cli.inputs import dataset_of, read_plan
from dpdesk.cli.printer import num, tell_migration
from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.text import shown
from dpdesk.core.model.spec import Plan
from dpdesk.core.publish import words
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.services.common import Dataset


def run(args: argparse.Namespace) -> int:
    """``dpdesk budget PLAN``: print the plan's costs and noise (with ``--data``, what the dataset has left); 1 if it does not fit."""
    from dpdesk.services.budget import BudgetRequest, plan_budget

    plan = read_plan(args.plan, args.codebook)
    dataset = dataset_of(args.data) if args.data is not None else None
    if args.fit:
        return _fit_budget(args, plan, dataset)
    if args.weight or args.lock or args.reserve or args.write:
        raise UsageError(_("--weight, --lock, --reserve and --write go with --fit"))
    result = plan_budget(BudgetRequest(plan, dataset), notify=tell_migration)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print_budget(result.report, read_data=dataset is not None)
        if result.governance:
            print(result.governance)
    return 0 if result.fits else 1


def _fit_budget(args: argparse.Namespace, plan: Plan, dataset: Dataset | None) -> int:
    from dpdesk.core.ledger.fit import FitError
    from dpdesk.services.budget import BudgetRequest, FitRequest, fit_plan

    weights: dict[str, float] = {}
    for item in args.weight:
        name, sep, w = item.rpartition("=")
        try:
            value = float(w)
        except ValueError:
            value = -1.0
        if not sep or not name or not math.isfinite(value) or value < 0:
            raise UsageError(
                _("--weight wants NAME=W with W a number, 0 or more (got {item!r})").format(item=item)
            )
        weights[name] = value
    if not math.isfinite(args.reserve) or args.reserve < 0:
        raise UsageError(_("--reserve wants an epsilon, 0 or more"))
    out = Path(args.write) if args.write else None
    if out is not None and (out.exists() or out.is_symlink()):
        raise UsageError(_("{path} exists; --write makes a new file").format(path=shown(str(out))))
    request = FitRequest(BudgetRequest(plan, dataset), weights, frozenset(args.lock), args.reserve)
    try:
        fitted, result = fit_plan(request, notify=tell_migration)
    except FitError as exc:
        if exc.usage:
            raise UsageError(str(exc)) from exc
        print(_("Nothing to fit: {reason}").format(reason=exc), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print_budget(result.report, read_data=dataset is not None)
        if result.governance:
            print(result.governance)
    for note in result.notes:
        print("dpdesk: " + _("note: {line}").format(line=shown(note)), file=sys.stderr)
    if out is not None:
        text = json.dumps(fitted.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:  # a new file only: never through a link planted meanwhile, never over a file
            fd = os.open(out, flags, 0o644)
        except OSError as exc:
            raise UsageError(
                _("cannot create {path} ({reason}); --write makes a new file in an existing folder").format(
                    path=shown(str(out)), reason=exc.strerror or type(exc).__name__
                )
            ) from exc
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        print(_("Fitted plan saved to {path}.").format(path=shown(str(out))), file=sys.stderr)
    return 0 if result.fits else 1


def print_budget(rep: BudgetReport, *, read_data: bool = False) -> None:
    from dpdesk.core.ledger.budget import report_warnings

    out = sys.stdout
    title = rep.title or _("(untitled plan)")
    print(
        _("{title}: budget epsilon {e}, delta {d}").format(
            title=shown(title), e=numfmt.plain(rep.budget.epsilon, 6), d=numfmt.plain(rep.budget.delta, 6)
        ),
        file=out,
    )
    if read_data:
        line = _(
            "Computed from the plan and the dataset's ledger; the data file was read only to recognise which "
            "dataset it is, and nothing computed from its values is shown."
        )
    else:
        line = _("Computed from the plan alone; no data was read.")
    print(line + "\n", file=out)
    for q in rep.queries:
        extra = " " + _("by {g}").format(g=shown(q.group_by)) if q.group_by else ""
        extra += shown(words.where({"where": list(q.where)}))
        col = f"({shown(q.column)})" if q.column else ""
        print(
            _("- {name}: {what}, {mechanism}, epsilon {e}").format(
                name=shown(q.name),
                what=f"{q.statistic}{col}{extra}",
                mechanism=q.mechanism,
                e=num(q.epsilon),
            )
            + (_(", delta {d}").format(d=numfmt.plain(q.delta, 6)) if q.delta else ""),
            file=out,
        )
        if q.accuracy is not None:
            print("    " + _("Accuracy: {text}").format(text=shown(q.accuracy)), file=out)
        if q.accuracy_target is not None:
            t = q.accuracy_target
            print(
                "    "
                + _(
                    "Target: error {e} with confidence {c}{cells}; solved: epsilon {eps}, the smallest that "
                    "meets it (rounded up)"
                ).format(
                    e=num(t["error"]),
                    c=numfmt.plain(t["confidence"], 6),
                    cells=" " + _("(all cells together)") if t.get("cells") == "all" else "",
                    eps=num(q.epsilon),
                ),
                file=out,
            )
        for c in q.components:
            if c.mechanism == "exponential":
                print(
                    "    "
                    + _("utility sensitivity {s}: {why}").format(
                        s=num(c.sensitivity_used), why=shown(c.derivation)
                    ),
                    file=out,
                )
            else:
                kind = "L2" if c.mechanism == "gaussian" else "L1"
                name = _("sigma") if c.mechanism == "gaussian" else "b"
                print(
                    "    "
                    + _(
                        "{label}: {kind} sensitivity {s} ({why}); {name} = {scale}; 95% of errors within "
                        "±{err}"
                    ).format(
                        label=shown(c.label),
                        kind=kind,
                        s=num(c.sensitivity_used),
                        why=shown(c.derivation),
                        name=shown(name),
                        scale=num(c.scale),
                        err=num(c.error95),
                    ),
                    file=out,
                )
            print(f"    {c.formula}", file=out)
        if q.rank_error95 is not None and q.group_by is not None:
            print(
                "    "
                + _(
                    "95% rank error ±{r} per group: each group's released value's rank is within ±{r} of q·n_g "
                    "with 95% probability (n_g: the group's rows with a value; from public quantities only, no "
                    "value interval)"
                ).format(r=num(q.rank_error95)),
                file=out,
            )
        elif q.rank_error95 is not None:
            print(
                "    "
                + _(
                    "95% rank error ±{r}: the released value's rank is within ±{r} of q·n with "
                    "95% probability (n: the rows with a value; from public quantities only, no "
                    "value interval)"
                ).format(r=num(q.rank_error95)),
                file=out,
            )
        for n in q.notes:
            print("    " + _("note: {n}").format(n=shown(n)), file=out)
    from dpdesk.core.dp.accounting import method_name

    print(
        "\n"
        + _("Totals under each accounting method; in force: {method} (marked *).").format(
            method=method_name(rep.method)
        ),
        file=out,
    )
    for m, v in rep.methods.items():
        mark = "*" if m == rep.method else " "
        if v is None:
            print(f" {mark} {m:<10} " + _("not available (needs a budget delta > 0)"), file=out)
            continue
        p = v.plan
        line = f" {mark} {m:<10} " + _("this plan: epsilon {e}, delta {d}").format(
            e=num(p.epsilon), d=numfmt.delta(p.delta)
        )
        if m == "zcdp":
            line += " " + _("(rho {rho}; simple bound epsilon {e})").format(
                rho=num(p.rho), e=num(p.epsilon_simple)
            )
        if m == "advanced" and v.delta_prime is not None:
            line += " " + _("(delta' {d})").format(d=numfmt.plain(v.delta_prime, 6))
        a = v.after
        if rep.releases_so_far:
            line += _("; with earlier releases: epsilon {e}, delta {d}").format(
                e=num(a.epsilon), d=numfmt.delta(a.delta)
            )
        if m != rep.method:  # only the method in force decides; the others are shown for comparison
            line += "  " + (
                _("(not in force; would fit)") if v.fits else _("(not in force; would exceed the budget)")
            )
        elif not v.fits:
            line += "  " + _("OVER BUDGET")
        print(line, file=out)
    rb, ra = rep.remaining_before, rep.remaining_after
    if rep.releases_so_far:
        print(
            "\n"
            + _(
                "Earlier releases of this dataset: {n}; left before this plan: epsilon {e}, delta {d}"
            ).format(n=rep.releases_so_far, e=num(rb.epsilon), d=numfmt.delta(rb.delta)),
            file=out,
        )
    if rep.fits:
        print(
            _("Left after this plan: epsilon {e}, delta {d}").format(
                e=num(ra.epsilon), d=numfmt.delta(ra.delta, "down")
            ),
            file=out,
        )
        for warning in report_warnings(rep):
            print(warning, file=out)
    else:
        print(
            _(
                "OVER BUDGET under {method}, the method in force: left before this plan epsilon {e}, delta {d}"
            ).format(method=method_name(rep.method), e=num(max(0.0, rb.epsilon)), d=numfmt.delta(rb.delta)),
            file=out,
        )
