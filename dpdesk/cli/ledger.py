"""``dpdesk ledger VERB``: list, verify, export and change a dataset's ledger (and the old flag spellings)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.cli.inputs import dataset_of, stated_costs
from dpdesk.cli.parser import OLD_LEDGER_FLAGS, OLD_LEDGER_MODES
from dpdesk.cli.printer import num, progress, tell_migration
from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.text import shown
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.carryover import CostsNeeded
    from dpdesk.services.ledger import LedgerStatus


def run(args: argparse.Namespace) -> int:
    """``dpdesk ledger VERB``; without a verb, list and verify as before, or run an old spelling (with a note)."""
    if args.verb is not None:
        given = [flag for flag, _kind in OLD_LEDGER_FLAGS if getattr(args, _old_dest(flag)) is not None]
        given += [
            flag for flag, value in (("--data", args.ledger_data), ("--json", args.ledger_json)) if value
        ]
        if given:  # options before the verb would be dropped silently: refuse them
            raise UsageError(
                _(
                    "{options}: the options of dpdesk ledger {verb} come after the verb (see dpdesk ledger {verb} --help)"
                ).format(options=", ".join(given), verb=shown(args.verb))
            )
        return int(_LEDGER_VERBS[args.verb](args))
    modes = [flag for flag in OLD_LEDGER_MODES if getattr(args, _old_dest(flag)) is not None]
    if len(modes) > 1:  # each is its own action; doing only the first would silently skip the others
        raise UsageError(
            _("{modes} cannot be combined: run dpdesk ledger once for each").format(modes=", ".join(modes))
        )
    data = args.ledger_data
    if modes and data is None:
        raise UsageError(_("--export-release, --change-settings, --export and --statement need --data"))
    mode = modes[0] if modes else None
    companion = OLD_LEDGER_MODES[mode][2] if mode else None
    stray = [f for f in ("--out", "--reason") if f != companion and getattr(args, _old_dest(f)) is not None]
    stray += ["--json"] if mode and args.ledger_json else []
    if stray:  # an option of another action would be ignored silently: refuse it
        raise UsageError(
            _("{options} cannot be used with {command}").format(
                options=", ".join(stray), command=OLD_LEDGER_MODES[mode][0] if mode else "dpdesk ledger"
            )
        )
    if mode is None:
        if data is None:
            return _ledger_list(args.ledger_json)
        return _ledger_verify(data, args.ledger_json)
    old, new, _companion = OLD_LEDGER_MODES[mode]
    print(
        "dpdesk: "
        + _("note: {line}").format(
            line=_("{old} is now spelled {new} (the old spelling still works)").format(
                old=shown(old), new=shown(new)
            )
        ),
        file=sys.stderr,
    )
    if mode == "--acknowledge":
        return _ledger_acknowledge(data, args.old_acknowledge)
    if mode == "--export":
        return _ledger_export(data, args.old_export)
    if mode == "--statement":
        return _ledger_statement(data, args.old_statement)
    if mode == "--change-settings":
        return _ledger_change_settings(data, args.old_change_settings, args.old_reason)
    if not args.old_out:
        raise UsageError(_("--export-release needs --out DIR"))
    return _ledger_export_release(data, args.old_export_release, args.old_out)


def _old_dest(flag: str) -> str:
    return "old_" + flag[2:].replace("-", "_")


def _ledger_list(as_json: bool) -> int:
    from dpdesk.services.ledger import ListRequest, list_ledgers

    found = list_ledgers(ListRequest(dpdesk_home()))
    if not found.ledgers:
        print(_("No ledgers yet in {folder}.").format(folder=shown(found.folder)))
        return 0
    for status in found.ledgers:
        _print_ledger(status, as_json, brief=True)
    return found.exit_code


def _ledger_verify(data: str, as_json: bool) -> int:
    from dpdesk.services.ledger import VerifyRequest, verify_ledger

    status = verify_ledger(VerifyRequest(dataset_of(data)), notify=tell_migration)
    return _print_ledger(status, as_json, brief=False)


def _ledger_acknowledge(
    data: str,
    reason: str,
    costs: Sequence[str] = (),
    costs_file: str | None = None,
    settings: str | None = None,
    exported: Sequence[str] = (),
    approval: str | None = None,
) -> int:
    from dpdesk.core.ledger.carryover import CostsNeeded
    from dpdesk.services.ledger import AcknowledgeRequest, acknowledge

    request = AcknowledgeRequest(
        dataset_of(data),
        reason,
        stated_costs(costs, costs_file),
        Path(settings) if settings else None,
        tuple(Path(x) for x in exported),
        approval=Path(approval) if approval else None,
    )
    try:
        e = acknowledge(request, notify=tell_migration).entry
    except CostsNeeded as need:
        _print_costs_needed(need, data)
        return need.exit_code
    print(
        _(
            "Acknowledged: the broken ledger was kept as {file}; {n} release(s) were carried over and still "
            "count against the budget (ledger entry {seq})."
        ).format(file=shown(e.get("broken_file")), n=len(e.get("carried") or []), seq=e.seq)
    )
    return 0


def _ledger_head(data: str, as_json: bool) -> int:
    from dpdesk.services.ledger import HeadRequest, ledger_head

    info = ledger_head(HeadRequest(dataset_of(data)), notify=tell_migration)
    head = f"{info.head.seq}:{info.head.hash}"
    if as_json:
        print(
            json.dumps(
                {
                    "dataset": info.dataset,
                    "head": info.head.to_payload(),
                    "status": "chain verified" if info.error is None else f"BROKEN: {info.error}",
                    "governance": info.governance,
                },
                ensure_ascii=False,
            )
        )
        return info.exit_code
    if info.dataset is None:
        print(_("Nothing has been recorded for {path} yet: it has no public name.").format(path=shown(data)))
        return 0
    print(_("Dataset {id}").format(id=shown(info.dataset)))
    if info.error is None:
        print(_("Ledger head: {head}").format(head=shown(head)))
    else:
        print(_("BROKEN: {err}").format(err=shown(info.error)))
        print(_("Head to acknowledge at: {head}").format(head=shown(head)))
    print(info.governance)
    return info.exit_code


def _ledger_govern(data: str, officer: str, require_signed_plans: bool, approval: str | None) -> int:
    from dpdesk.services.ledger import GovernRequest, govern_dataset

    done = govern_dataset(
        GovernRequest(
            dataset_of(data), Path(officer), require_signed_plans, Path(approval) if approval else None
        ),
        notify=tell_migration,
    )
    print(
        _("Recorded governance for dataset {id} (ledger entry {seq}).").format(
            id=shown(done.record.dataset), seq=done.entry.seq
        )
    )
    from dpdesk.core.governance.officer import describe_governance

    print(describe_governance(done.record))
    return 0


def _print_costs_needed(need: CostsNeeded, data: str) -> None:
    """What an acknowledgement still needs from the officer (a :class:`dpdesk.core.ledger.carryover.CostsNeeded`)."""
    print(
        "dpdesk: "
        + _("the ledger of {path} is broken: {problem}").format(
            path=shown(data), problem=shown(need.assessment.problem)
        ),
        file=sys.stderr,
    )
    print("dpdesk: " + shown(need, keep_newlines=True), file=sys.stderr)
    sources = {
        "recorded": _("recorded"),
        "correction": _("raised by a correction"),
        "recomputed": _("recomputed from its plan"),
        "trace": _("recomputed from its trace"),
        "totals": _("in its recorded totals"),
        "exported": _("in an exported copy"),
    }
    whole = need.conservative
    suggest = []
    for u in need.missing:
        if u.missing:
            what = _("entries {label}: missing (no line holds them)").format(label=shown(u.label))
        elif u.claimed is None:
            what = _("entry {label}: unreadable").format(label=shown(u.label))
        else:
            what = _("entry {label}: claims to be a {type} entry, does not verify").format(
                label=shown(u.label), type=shown(u.claimed)
            )
        print("  " + what, file=sys.stderr)
        for o in u.offers:
            print(
                "    "
                + _("{source}: epsilon {e}, delta {d}, rho {r}").format(
                    source=sources.get(o.source, o.source),
                    e=num(o.cost.epsilon),
                    d=num(o.cost.delta),
                    r=num(o.cost.rho),
                ),
                file=sys.stderr,
            )
        best = u.offered()
        if best is None:
            print(
                "    "
                + (
                    _("every source gives 0: its cost cannot be recovered")
                    if u.offers
                    else _("nothing verifiable: its cost cannot be recovered")
                ),
                file=sys.stderr,
            )
            if whole is None:
                print(
                    "    "
                    + _(
                        "state it from your own records; the conservative value is the dataset's whole budget "
                        "(of the settings you state)"
                    ),
                    file=sys.stderr,
                )
                suggest.append(f"--cost {shown(u.label)}=EPS")
            else:
                print(
                    "    "
                    + _(
                        "state it from your own records; the conservative value is the dataset's whole budget: "
                        "epsilon {e}, delta {d}, rho {r}"
                    ).format(e=num(whole.epsilon), d=num(whole.delta), r=num(whole.rho)),
                    file=sys.stderr,
                )
                suggest.append(f"--cost {shown(u.label)}={whole.epsilon!r},{whole.delta!r},{whole.rho!r}")
        else:
            print(
                "    "
                + _("offered (the largest): epsilon {e}, delta {d}, rho {r}").format(
                    e=num(best.epsilon), d=num(best.delta), r=num(best.rho)
                ),
                file=sys.stderr,
            )
            suggest.append(f"--cost {shown(u.label)}={best.epsilon!r},{best.delta!r},{best.rho!r}")
    if need.settings_needed:
        suggest.append("--settings PLAN")
    print(
        "dpdesk: "
        + _("to accept, after checking each figure: {command}").format(
            command=f'dpdesk ledger acknowledge --data {shown(data)} --reason "..." ' + " ".join(suggest)
        ),
        file=sys.stderr,
    )


def _ledger_export(data: str, out: str, force: bool = False) -> int:
    from dpdesk.services.ledger import ExportLedgerRequest, export_ledger

    done = export_ledger(ExportLedgerRequest(dataset_of(data), Path(out), force), notify=tell_migration)
    print(
        _("Wrote the ledger of {path} ({n} entries, chain verified) to {out}.").format(
            path=shown(data), n=done.entries, out=shown(out)
        )
    )
    print(
        _(
            "Its head is entry {seq} (hash {hash}). Keep this copy: dpdesk review {out} --against LATER_EXPORT shows "
            "a later ledger rolled back behind it."
        ).format(seq=shown(done.head["seq"]), hash=shown(done.head["hash"]), out=shown(out))
    )
    return 0


def _ledger_statement(data: str, out: str, force: bool = False) -> int:
    from dpdesk.services.ledger import StatementRequest, write_statement

    done = write_statement(StatementRequest(dataset_of(data), Path(out), force), notify=tell_migration)
    print(_("Wrote the budget statement of {path} to {out}.").format(path=shown(data), out=shown(out)))
    return 0 if done.entries else 3


def _ledger_change_settings(data: str, plan: str, reason: str | None, approval: str | None = None) -> int:
    from dpdesk.services.ledger import ChangeSettingsRequest, change_settings

    request = ChangeSettingsRequest(
        dataset_of(data), Path(plan), reason or "", Path(approval) if approval else None
    )
    done = change_settings(request, notify=tell_migration)
    print(
        _("Recorded new settings for dataset {id} (ledger entry {seq}).").format(
            id=shown(done.dataset), seq=done.entry.seq
        )
    )
    corr = done.correction
    if done.rescaled and corr is not None:
        print(
            _(
                "The new unit of privacy protects each person less per past release: {n} past release(s) now "
                "cost epsilon {e} more in total (ledger entry {seq}, a correction)."
            ).format(n=len(done.rescaled), e=num(done.added_total), seq=corr.seq)
        )
    return 0


def _ledger_export_release(data: str, seq: int, out: str) -> int:
    from dpdesk.services.ledger import ReexportRequest, reexport_release

    done = reexport_release(ReexportRequest(dataset_of(data), seq, Path(out)), notify=tell_migration)
    print(_("Re-exported release {seq} to {out} (no budget spent).").format(seq=seq, out=shown(done.out)))
    return 0


_LEDGER_VERBS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": lambda a: _ledger_list(a.json),
    "verify": lambda a: _ledger_verify(a.data, a.json),
    "export": lambda a: _ledger_export(a.data, a.out, a.force),
    "export-release": lambda a: _ledger_export_release(a.data, a.seq, a.out),
    "statement": lambda a: _ledger_statement(a.data, a.out, a.force),
    "acknowledge": lambda a: _ledger_acknowledge(
        a.data, a.reason, a.cost, a.costs, a.settings, a.exported, a.approval
    ),
    "change-settings": lambda a: _ledger_change_settings(a.data, a.plan, a.reason, a.approval),
    "head": lambda a: _ledger_head(a.data, a.json),
    "govern": lambda a: _ledger_govern(a.data, a.officer, a.require_signed_plans, a.approval),
    "forget-identity": lambda a: _ledger_forget_identity(a.reason, a.approval),
    "link": lambda a: _ledger_link(a.data, a.to),
    "merge": lambda a: _ledger_merge(a.data, a.approval),
    "declare-new": lambda a: _ledger_declare_new(a.data, a.resembles, a.reason, a.approval),
}


def _ledger_link(data: str, to: str) -> int:
    from dpdesk.services.ledger import LinkRequest, link_dataset

    done = link_dataset(LinkRequest(dataset_of(data), to), progress())
    if done.entry is None:
        print(
            _("{data} is charged to dataset {dataset} already.").format(
                data=shown(data), dataset=shown(done.dataset)
            )
        )
    else:
        print(
            _(
                "{data} is now charged to dataset {dataset}: its releases spend that dataset's budget (ledger entry "
                "{seq}, a link)."
            ).format(data=shown(data), dataset=shown(done.dataset), seq=done.entry.seq)
        )
    return 0


def _ledger_declare_new(data: str, resembles: str, reason: str, approval: str | None) -> int:
    from dpdesk.core.ledger.governed import ApprovalRequired
    from dpdesk.services.ledger import DeclareNewRequest, declare_new, new_dataset_name

    dataset = dataset_of(data)
    try:
        done = declare_new(
            DeclareNewRequest(dataset, resembles, reason, Path(approval) if approval else None), progress()
        )
    except ApprovalRequired:
        print(
            _(
                "dpdesk: the officer signs this with: dpdesk officer approve-declare-new --dataset {known} "
                "--head SEQ:HASH --new-dataset {new} (the head of {known}: dpdesk ledger head --data <its file>)"
            ).format(known=shown(resembles), new=shown(new_dataset_name(dataset))),
            file=sys.stderr,
        )
        raise
    print(
        _(
            "{data} is a new dataset, {new}, with its own budget; recorded in the ledger of {known} (entry {seq}) "
            "and as the first entry of its own."
        ).format(data=shown(data), new=shown(done.dataset), known=shown(resembles), seq=done.entry.seq)
    )
    return 0


def _ledger_merge(data: str, approvals: list[str]) -> int:
    from dpdesk.core.ledger.governed import ApprovalRequired
    from dpdesk.services.ledger import MergeRequest, merge_approvals_needed, merge_datasets

    request = MergeRequest(dataset_of(data), tuple(Path(a) for a in approvals))
    try:
        done = merge_datasets(request, progress())
    except ApprovalRequired:
        for dataset, head, retired, into in merge_approvals_needed(request):
            print(
                _(
                    "dpdesk: the officer of {dataset} signs this with: dpdesk officer approve-merge --dataset "
                    "{dataset} --head {head} --retired {retired} --into {into}"
                ).format(dataset=shown(dataset), head=head, retired=shown(retired), into=shown(into)),
                file=sys.stderr,
            )
        raise
    if done.into is None:
        print(
            _("{data} has no dataset in this dpdesk home yet: there is nothing to merge.").format(
                data=shown(data)
            )
        )
        return 0
    if not done.retired:
        print(
            _("{data} belongs to one dataset, {dataset}: there is nothing to merge.").format(
                data=shown(data), dataset=shown(done.into)
            )
        )
    else:
        print(
            _(
                "Merged into dataset {dataset}: {retired}. Its ledger now charges every release of each (ledger "
                "entries {seqs}), under the smaller budget; nothing is charged to the others any more."
            ).format(
                dataset=shown(done.into),
                retired=", ".join(shown(d) for d in done.retired),
                seqs=", ".join(str(e.seq) for e in done.entries) or "-",
            )
        )
    h = done.spent
    if h is not None:
        print(
            _(
                "Spent: epsilon {spent} of a budget of {budget} in {n} release(s) ({method} accounting)."
            ).format(
                spent=numfmt.plain(h.spent_epsilon, 6),
                budget=numfmt.plain(h.budget.epsilon, 6),
                n=h.releases,
                method=h.method,
            )
        )
    if done.overspent:
        print(
            _(
                "dpdesk: dataset {dataset} is overspent: together its releases spent more than its budget, so every "
                "further release from it is refused (exit 1)."
            ).format(dataset=shown(done.into)),
            file=sys.stderr,
        )
    return 0


def _ledger_forget_identity(reason: str, approvals: list[str]) -> int:
    from dpdesk.services.ledger import ForgetIdentityRequest, forget_identity

    done = forget_identity(ForgetIdentityRequest(dpdesk_home(), reason, tuple(Path(a) for a in approvals)))
    print(
        _(
            "The content identities of {n} dataset(s) were forgotten; the old identity folder is kept beside the "
            "home as evidence. Open each known table's own file again so that its re-saved copies are recognised."
        ).format(n=len(done))
    )
    return 0


def _print_ledger(ledger: LedgerStatus, as_json: bool, *, brief: bool) -> int:
    """Print a verified ledger (a :class:`dpdesk.services.ledger.LedgerStatus`); returns 0, or 3 if broken."""
    entries = list(ledger.entries)
    if ledger.error is None:
        status, said, code = "chain verified", _("chain verified"), 0
    else:  # JSON keeps the English status words for scripts; the screen is translated
        status, said, code = f"BROKEN: {ledger.error}", _("BROKEN: {err}").format(err=shown(ledger.error)), 3
    if as_json:
        print(
            json.dumps(
                {
                    "dataset": ledger.dataset,
                    "status": status,
                    **({"merged_into": ledger.merged_into} if ledger.merged_into else {}),
                    "entries": [e.to_dict() for e in entries],
                },
                ensure_ascii=False,
            )
        )
        return code
    if not ledger.dataset and not entries and ledger.error is None:
        # a table never released has no ledger yet (it is not an old-format one)
        print(_("No releases yet from this table: its first release starts its ledger."))
        return 0
    print(
        _("Dataset {id}: {status}").format(
            id=shown(ledger.dataset or _("(older format, not yet migrated)")), status=said
        )
    )
    settings = ledger.settings
    if settings:
        b = settings["budget"]
        method = settings["accounting"]["method"]
        spent = ledger.left
        print(
            "  "
            + _("budget epsilon {e}, delta {d}; {method} accounting; {n} release(s)").format(
                e=numfmt.plain(b["epsilon"], 6),
                d=numfmt.plain(b["delta"], 6),
                method=shown(method),
                n=ledger.releases,
            )
            + (
                _("; left: epsilon {e}, delta {d}").format(
                    e=num(spent.epsilon), d=numfmt.delta(spent.delta, "down")
                )
                if spent and not ledger.merged_into
                else ""
            )
        )
    if ledger.merged_into:
        print(
            "  "
            + _(
                "merged into dataset {into}: closed, nothing is charged to it; its releases count in {into}'s budget"
            ).format(into=shown(ledger.merged_into))
        )
    if ledger.governance:
        print("  " + shown(ledger.governance, keep_newlines=True))
    if ledger.pending:
        print(
            "  "
            + _(
                "{n} past release(s) cost more than the ledger records (booked too low by an older version, or "
                "re-costed under the current unit of privacy): the budget left counts it, and the next release "
                "records a correction entry"
            ).format(n=ledger.pending)
        )
    if brief:
        return code
    from dpdesk.core.governance.officer import shown_name
    from dpdesk.core.ledger.entries import (
        CorrectionEntry,
        GovernEntry,
        SettingsEntry,
        SimulateEntry,
        SpendEntry,
    )
    from dpdesk.core.ledger.recost import correction_changes

    changes: dict[int, float] | None = None  # computed once, at the first correction listed

    for e in entries:
        if isinstance(e, SpendEntry):
            c = e.charged
            names = ", ".join(shown(n) for n in e.query_names)
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("release  epsilon {e}, delta {d}  [{names}]").format(
                    e=num(c.epsilon), d=numfmt.delta(c.delta), names=names
                )
            )
        elif isinstance(e, SimulateEntry):
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("simulate  {n} run(s) of the data by an older version; charged by a correction").format(
                    n=e.runs
                )
            )
        elif isinstance(e, CorrectionEntry):
            if changes is None:
                changes = correction_changes(entries) if ledger.error is None else {}
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("correction  epsilon +{e} for {n} past release(s) booked too low").format(
                    e=num(changes.get(e.seq, e.added_epsilon)), n=len(e.releases)
                )
            )
        elif isinstance(e, SettingsEntry):
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("settings  budget epsilon {e}, delta {d}, {method}: {reason}").format(
                    e=numfmt.plain(e.budget_epsilon, 6),
                    d=numfmt.plain(e.budget_delta, 6),
                    method=shown(e.method),
                    reason=shown(e.fields["reason"]),
                )
            )
        elif isinstance(e, GovernEntry):
            off = e.governance.get("officer", {})
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("govern  {name} (key {fp}){signed}").format(
                    name=shown_name(str(off.get("name", "?"))),
                    fp=shown(off.get("fingerprint", "?")),
                    signed=_(", signed plans only")
                    if e.governance.get("policy", {}).get("require_signed_plans")
                    else "",
                )
            )
        else:
            print(f"  {e.seq:>4}  {shown(e.time)}  {_('package') if e.type == 'package' else shown(e.type)}")
    return code
