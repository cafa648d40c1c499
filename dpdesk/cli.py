"""The ``dpdesk`` command line: the same engine as the desktop app, headless.

Exit codes: 0 done; 1 over or exhausted budget; 2 bad plan, data or usage; 3 ledger broken or
unacknowledged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk import __version__
from dpdesk.core.errors import DpdeskError, PlanError, UsageError
from dpdesk.core.home import dpdesk_home
from dpdesk.core.plan import Plan, apply_codebook, parse_plan, parse_plan_text, read_codebook
from dpdesk.core.progress import Progress, stage_label
from dpdesk.i18n import _, ngettext

if TYPE_CHECKING:
    from dpdesk.core.budget import BudgetReport


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter with its "usage: " heading translated (its other words come from argparse)."""

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.setdefault("add_help", False)
        super().__init__(*args, **kwargs)
        # argparse's own headings and -h text are not in dpdesk's catalogue: set them translated
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        self.add_argument("-h", "--help", action="help", help=_("show this help message and exit"))

    def error(self, message: str) -> Any:  # argparse's usage errors exit 2, like ours
        self.print_usage(sys.stderr)
        print("dpdesk: " + _("error: {message}").format(message=message), file=sys.stderr)
        raise SystemExit(2)


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="dpdesk", description=_("Publish statistics from a sensitive table under differential privacy.")
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"dpdesk {__version__}",
        help=_("show program's version number and exit"),
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    o = sub.add_parser("open", help=_("open the desktop app with a table or a plan"))
    o.add_argument("file")

    b = sub.add_parser("budget", help=_("sensitivity, noise and budget of a plan, without reading data"))
    b.add_argument("plan")
    b.add_argument("--data", help=_("subtract what the ledger of this file already holds (hashes it only)"))
    b.add_argument("--json", action="store_true", help=_("print JSON"))
    b.add_argument("--codebook", help=_("CSV of column, category filling category lists"))

    r = sub.add_parser("release", help=_("charge the ledger, then write the noisy release"))
    r.add_argument("plan")
    r.add_argument("--data", required=True)
    r.add_argument("--out", required=True, help=_("a new or empty folder"))
    r.add_argument("--codebook")
    r.add_argument("--encoding", help=_("the CSV's encoding if detection fails (e.g. gb18030, utf-16)"))
    r.add_argument("--delimiter", help=_("the CSV's delimiter if sniffing fails"))
    r.add_argument("--bom", action="store_true", help=_("write release.csv with a UTF-8 BOM (for Excel)"))
    r.add_argument(
        "--accept-data-problems",
        action="store_true",
        help=_(
            "release even if a declared column has values outside its categories or "
            "unparsable values (they count as missing); without it the release stops before "
            "charging"
        ),
    )

    s = sub.add_parser(
        "simulate", help=_("draw N uncharged releases for accuracy previews (not for publication)")
    )
    s.add_argument("plan")
    s.add_argument("--data", help=argparse.SUPPRESS)  # refused with an explanation (see _cmd_simulate)
    s.add_argument(
        "--public",
        metavar="FILE",
        help=_(
            "simulate on this file, which you declare public (a published sample, last year's "
            "published table); a file with a ledger is refused"
        ),
    )
    s.add_argument("--runs", type=int, required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--rows", type=int, default=1000, help=_("rows of the stand-in table (without --public)"))
    s.add_argument("--seed", type=int, help=_("seed of the simulation's (non-cryptographic) generator"))
    s.add_argument("--codebook")

    lg = sub.add_parser("ledger", help=_("list what was spent and verify the hash chain"))
    lg.add_argument("--data", help=_("the dataset file (its SHA-256 names its ledger)"))
    lg.add_argument("--json", action="store_true")
    lg.add_argument(
        "--export-release", type=int, metavar="SEQ", help=_("re-export a past release (costs nothing)")
    )
    lg.add_argument("--out", help=_("folder for --export-release"))
    lg.add_argument(
        "--change-settings",
        metavar="PLAN",
        help=_("(privacy officer) take budget, unit and method from PLAN"),
    )
    lg.add_argument("--reason", help=_("why the settings change (recorded in the ledger)"))
    lg.add_argument(
        "--export", metavar="OUT", help=_("write the dataset's whole ledger for a privacy officer")
    )
    lg.add_argument("--statement", metavar="OUT.pdf", help=_("write a PDF budget statement of the dataset"))
    lg.add_argument(
        "--acknowledge",
        metavar="REASON",
        help=_("(privacy officer) accept a broken ledger: keep it as evidence, carry its spends over"),
    )

    rv = sub.add_parser("review", help=_("check a release package or an exported ledger (read-only)"))
    rv.add_argument(
        "path", help=_("a release package folder, or a ledger exported with dpdesk ledger --export")
    )
    rv.add_argument("--json", action="store_true")

    sg = sub.add_parser(
        "suggest", help=_("propose column types (only types: bounds and categories are yours)")
    )
    sg.add_argument("file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == [
        "--selftest"
    ]:  # a small release on the bundled sample, in a temporary home (installers' check)
        from dpdesk.selftest import run

        return run()
    args = _build_parser().parse_args(argv)
    try:
        if args.command is None or args.command == "open":
            return _gui(args)
        handler = {
            "budget": _cmd_budget,
            "release": _cmd_release,
            "simulate": _cmd_simulate,
            "ledger": _cmd_ledger,
            "review": _cmd_review,
            "suggest": _cmd_suggest,
        }[args.command]
        return int(handler(args))
    except DpdeskError as exc:
        print(f"dpdesk: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("dpdesk: " + _("interrupted"), file=sys.stderr)
        return 130


def _gui(args: argparse.Namespace) -> int:
    try:
        from dpdesk.gui.app import main as gui_main
    except ImportError as exc:
        gui_missing = _(
            "The dpdesk desktop app cannot start: Qt (PySide6) is not installed. Everything it does is available "
            "from the command line: dpdesk budget, release, simulate, ledger (see dpdesk --help)."
        )
        print(f"{gui_missing} ({exc})", file=sys.stderr)
        return 2
    return int(gui_main(getattr(args, "file", None)))  # pragma: no cover - the GUI has its own tests


def _load_plan(path: str, codebook: str | None) -> Plan:
    if codebook is None:
        from dpdesk.core.plan import load_plan

        return load_plan(path)
    try:
        raw = Path(path).read_bytes().decode("utf-8-sig")
        data = json.loads(raw)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        # let the ordinary reader produce its precise message
        del exc
        return parse_plan_text(Path(path).read_bytes() if Path(path).exists() else b"", source=path)
    return parse_plan(apply_codebook(data, read_codebook(codebook)))


def _progress() -> Progress:
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, stage: str) -> None:
        pct = 100 * done // total if total else 100
        print(f"\r{stage_label(stage)} {pct:3d}%", end="", file=sys.stderr, flush=True)

    return Progress(show)


def _open_ledger(home: Path, data: str) -> Any:
    """The ledger of a data file; tells the user once when it was migrated from the old format."""
    from dpdesk.core.data import file_sha256
    from dpdesk.core.ledger import Ledger

    ledger = Ledger.for_dataset(home, file_sha256(data))
    _tell_migration(ledger)
    return ledger


def _tell_migration(ledger: Any) -> None:
    from dpdesk.core.ledger import migration_notice

    if ledger is not None and ledger.migrated is not None:
        for line in migration_notice(ledger.migrated).split("\n"):
            print("dpdesk: " + _("note: {line}").format(line=line), file=sys.stderr)


def _ledger_entries(data: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A data file's verified ledger entries and its public dataset id (None before its first release)."""
    if data is None:
        return [], None
    ledger = _open_ledger(dpdesk_home(), data)
    return ledger.verify(), ledger.dataset


def _cmd_budget(args: argparse.Namespace) -> int:
    from dpdesk.core.budget import budget_report

    plan = _load_plan(args.plan, args.codebook)
    entries, dataset = _ledger_entries(args.data)
    if args.data:
        from dpdesk.core.release import _check_settings

        _check_settings(plan, _settings_of(entries))
    rep = budget_report(plan, entries)
    if args.json:
        out = rep.to_dict()
        if dataset:
            out["dataset"] = dataset
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_budget(rep)
    return 0 if rep.fits else 1


def _settings_of(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    from dpdesk.core.ledger import settings_in_force

    return settings_in_force(entries)


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def _print_budget(rep: BudgetReport) -> None:
    out = sys.stdout
    title = rep.title or _("(untitled plan)")
    print(
        _("{title}: budget epsilon {e}, delta {d}").format(
            title=title, e=f"{rep.budget.epsilon:g}", d=f"{rep.budget.delta:g}"
        ),
        file=out,
    )
    print(_("Computed from the plan alone; no data was read.") + "\n", file=out)
    for q in rep.queries:
        extra = " " + _("by {g}").format(g=q.group_by) if q.group_by else ""
        col = f"({q.column})" if q.column else ""
        print(
            _("- {name}: {what}, {mechanism}, epsilon {e}").format(
                name=q.name,
                what=f"{q.statistic}{col}{extra}",
                mechanism=q.mechanism,
                e=_g(q.epsilon),
            )
            + (_(", delta {d}").format(d=f"{q.delta:g}") if q.delta else ""),
            file=out,
        )
        for c in q.components:
            if c.mechanism == "exponential":
                print(
                    "    "
                    + _("utility sensitivity {s}: {why}").format(s=_g(c.sensitivity_used), why=c.derivation),
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
                        label=c.label,
                        kind=kind,
                        s=_g(c.sensitivity_used),
                        why=c.derivation,
                        name=name,
                        scale=_g(c.scale),
                        err=_g(c.error95),
                    ),
                    file=out,
                )
            print(f"    {c.formula}", file=out)
        if q.rank_error95 is not None:
            print(
                "    "
                + _(
                    "95% rank error ±{r}: the released value's rank is within ±{r} of q·n with "
                    "95% probability (n: the rows with a value; from public quantities only, no "
                    "value interval)"
                ).format(r=_g(q.rank_error95)),
                file=out,
            )
        for n in q.notes:
            print("    " + _("note: {n}").format(n=n), file=out)
    print("\n" + _("Totals (the method in force is marked *):"), file=out)
    for m, v in rep.methods.items():
        mark = "*" if m == rep.method else " "
        if v is None:
            print(f" {mark} {m:<10} " + _("not available (needs a budget delta > 0)"), file=out)
            continue
        p = v.plan
        line = f" {mark} {m:<10} " + _("this plan: epsilon {e}, delta {d}").format(
            e=_g(p.epsilon), d=f"{p.delta:.3g}"
        )
        if m == "zcdp":
            line += " " + _("(rho {rho}; simple bound epsilon {e})").format(
                rho=_g(p.rho), e=_g(p.epsilon_simple)
            )
        if m == "advanced" and v.delta_prime is not None:
            line += " " + _("(delta' {d})").format(d=f"{v.delta_prime:g}")
        a = v.after
        if rep.releases_so_far:
            line += _("; with earlier releases: epsilon {e}, delta {d}").format(
                e=_g(a.epsilon), d=f"{a.delta:.3g}"
            )
        line += "" if v.fits else "  " + _("OVER BUDGET")
        print(line, file=out)
    rb, ra = rep.remaining_before, rep.remaining_after
    if rep.releases_so_far:
        print(
            "\n"
            + _(
                "Earlier releases of this dataset: {n}; left before this plan: epsilon {e}, delta {d}"
            ).format(n=rep.releases_so_far, e=_g(rb.epsilon), d=f"{rb.delta:.3g}"),
            file=out,
        )
    if rep.fits:
        print(
            _("Left after this plan: epsilon {e}, delta {d}").format(e=_g(ra.epsilon), d=f"{ra.delta:.3g}"),
            file=out,
        )
    else:
        print(
            _("OVER BUDGET under {method} accounting: left before this plan epsilon {e}, delta {d}").format(
                method=rep.method, e=_g(max(0.0, rb.epsilon)), d=f"{rb.delta:.3g}"
            ),
            file=out,
        )


def _cmd_release(args: argparse.Namespace) -> int:
    from dpdesk.core.release import check_out_dir, release

    plan = _load_plan(args.plan, args.codebook)
    out = Path(args.out)
    check_out_dir(out)

    def show_check(check: Any) -> None:  # before anything is charged; on stderr, never in a file
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print("dpdesk: " + check.heading(), file=sys.stderr)
        for line in check.lines():
            print("  " + line, file=sys.stderr)

    result = release(
        plan,
        args.data,
        dpdesk_home(),
        out,
        progress=_progress(),
        encoding=args.encoding,
        delimiter=args.delimiter,
        bom=args.bom,
        accept_data_problems=args.accept_data_problems,
        on_data_check=show_check,
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    _tell_migration(result.ledger)
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
            out=out,
            e=_g(e["charged"]["epsilon"]),
            d=f"{e['charged']['delta']:.3g}",
            method=e["method"],
            seq=e["seq"],
            hash=e["hash"][:12],
        )
    )
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from dpdesk.core.simulate import run_simulation, simulation_notice

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
    plan = _load_plan(args.plan, args.codebook)
    result = run_simulation(
        plan,
        dpdesk_home(),
        Path(args.out),
        runs=args.runs,
        rows=args.rows,
        public=args.public,
        seed=args.seed,
        progress=_progress(),
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(
        _("Wrote {runs} simulated release(s) to {out} ({src}).").format(
            runs=result.runs, out=result.out, src=result.source
        )
    )
    print(simulation_notice())
    return 0


def _cmd_ledger(args: argparse.Namespace) -> int:
    from dpdesk.core.budget import past_releases
    from dpdesk.core.ledger import list_ledgers
    from dpdesk.core.release import write_release_dir
    from dpdesk.core.values import rows_from_entry

    modes = [
        flag
        for flag, value in (
            ("--export-release", args.export_release),
            ("--change-settings", args.change_settings),
            ("--export", args.export),
            ("--statement", args.statement),
            ("--acknowledge", args.acknowledge),
        )
        if value is not None
    ]
    if len(modes) > 1:  # each is its own action; doing only the first would silently skip the others
        raise UsageError(
            _("{modes} cannot be combined: run dpdesk ledger once for each").format(modes=", ".join(modes))
        )
    home = dpdesk_home()
    if args.data is None:
        if args.export_release or args.change_settings or args.export or args.statement or args.acknowledge:
            raise UsageError(_("--export-release, --change-settings, --export and --statement need --data"))
        ledgers = list_ledgers(home)
        if not ledgers:
            print(_("No ledgers yet in {folder}.").format(folder=home / "ledgers"))
            return 0
        worst = 0
        for lg in ledgers:
            worst = max(worst, _print_ledger(lg, args.json, brief=True))
        return worst
    ledger = _open_ledger(home, args.data)
    if args.acknowledge is not None:
        e = ledger.acknowledge(args.acknowledge)
        print(
            _(
                "Acknowledged: the broken ledger was kept as {file}; {n} release(s) were carried over and still "
                "count against the budget (ledger entry {seq})."
            ).format(file=e["broken_file"], n=len(e["carried"]), seq=e["seq"])
        )
        return 0
    if args.export:
        entries = ledger.verify()
        if not entries:
            raise UsageError(_("nothing has been recorded for {path} yet").format(path=args.data))
        from dpdesk.core.ledger import write_atomic

        write_atomic(Path(args.export), ledger.path.read_bytes())
        print(
            _("Wrote the ledger of {path} ({n} entries, chain verified) to {out}.").format(
                path=args.data, n=len(entries), out=args.export
            )
        )
        return 0
    if args.statement:
        from dpdesk.core.budget import budget_report
        from dpdesk.core.errors import LedgerError
        from dpdesk.core.report import write_budget_statement

        try:
            entries = ledger.verify()
            status = _("chain verified")
        except LedgerError as exc:
            entries, status = [], _("BROKEN: {err}").format(err=exc)
        spends = [e for e in entries if e["type"] == "spend"]
        rep = budget_report(parse_plan(spends[-1]["plan"]), entries) if spends else None
        write_budget_statement(
            Path(args.statement),
            dataset_name=Path(args.data).name,
            entries=entries,
            report=rep,
            chain_status=status,
        )
        print(_("Wrote the budget statement of {path} to {out}.").format(path=args.data, out=args.statement))
        return 0 if entries else 3
    if args.change_settings:
        if not args.reason or not args.reason.strip():
            raise UsageError(_('--change-settings needs --reason "..." (it is recorded in the ledger)'))
        from dpdesk.core.plan import load_plan
        from dpdesk.core.recost import UnboundedChange, check_unit_change
        from dpdesk.core.release import record_corrections

        new = load_plan(args.change_settings)
        with ledger.transaction() as tx:
            try:
                rescaled = check_unit_change(tx.entries, new.settings()["privacy_unit"])
            except UnboundedChange:
                raise UsageError(
                    _(
                        "this change of the unit of privacy cannot be accepted: a past release carried over from a broken "
                        "ledger has no trace, and its cost under the new unit has no bound. Keep the current unit, or "
                        "start a new dataset"
                    )
                ) from None
            record_corrections(tx)
            e = tx.append("settings", {"settings": new.settings(), "reason": args.reason.strip()})
            corr = record_corrections(tx)
        print(
            _("Recorded new settings for dataset {id} (ledger entry {seq}).").format(
                id=ledger.dataset, seq=e["seq"]
            )
        )
        if rescaled and corr is not None:
            print(
                _(
                    "The new unit of privacy protects each person less per past release: {n} past release(s) now "
                    "cost epsilon {e} more in total (ledger entry {seq}, a correction)."
                ).format(n=len(rescaled), e=_g(corr["added_epsilon"]), seq=corr["seq"])
            )
        return 0
    if args.export_release is not None:
        if not args.out:
            raise UsageError(_("--export-release needs --out DIR"))
        entries = ledger.verify()
        match = [e for e in entries if e["seq"] == args.export_release]
        if not match or match[0]["type"] != "spend":
            raise UsageError(
                _("ledger entry {seq} is not a release of this dataset").format(seq=args.export_release)
            )
        from dpdesk.core.release import check_out_dir

        out = Path(args.out)
        check_out_dir(out)
        rows = rows_from_entry(match[0])
        write_release_dir(out, rows, parse_plan(match[0]["plan"]), match[0], ledger, Path(args.data).name)
        print(
            _("Re-exported release {seq} to {out} (no budget spent).").format(
                seq=args.export_release, out=out
            )
        )
        return 0
    del past_releases
    return _print_ledger(ledger, args.json, brief=False)


def _print_ledger(ledger: Any, as_json: bool, *, brief: bool) -> int:
    from dpdesk.core.budget import budget_report, past_releases
    from dpdesk.core.errors import LedgerError

    try:
        entries = ledger.verify()
        status, shown, code = "chain verified", _("chain verified"), 0
    except LedgerError as exc:  # JSON keeps the English status words for scripts; the screen is translated
        entries, status, shown, code = [], f"BROKEN: {exc}", _("BROKEN: {err}").format(err=exc), 3
    if as_json:
        print(
            json.dumps({"dataset": ledger.dataset, "status": status, "entries": entries}, ensure_ascii=False)
        )
        return code
    print(
        _("Dataset {id}: {status}").format(
            id=ledger.dataset or _("(older format, not yet migrated)"), status=shown
        )
    )
    settings = _settings_of(entries)
    if settings:
        b = settings["budget"]
        method = settings["accounting"]["method"]
        spent = None
        spends = [e for e in entries if e["type"] == "spend"]
        if spends:
            plan = parse_plan(spends[-1]["plan"])
            spent = budget_report(plan, entries).remaining_before
        print(
            "  "
            + _("budget epsilon {e}, delta {d}; {method} accounting; {n} release(s)").format(
                e=f"{b['epsilon']:g}", d=f"{b['delta']:g}", method=method, n=len(past_releases(entries))
            )
            + (
                _("; left: epsilon {e}, delta {d}").format(e=_g(spent.epsilon), d=f"{spent.delta:.3g}")
                if spent
                else ""
            )
        )
    from dpdesk.core.recost import pending_corrections

    pending = pending_corrections(entries) if entries else []
    if pending:
        print(
            "  "
            + _(
                "{n} past release(s) cost more than the ledger records (booked too low by an older version, or "
                "re-costed under the current unit of privacy): the budget left counts it, and the next release "
                "records a correction entry"
            ).format(n=len(pending))
        )
    if brief:
        return code
    from dpdesk.core.ledger import CorrectionEntry, SettingsEntry, SimulateEntry, SpendEntry, parse_entries

    for e in parse_entries(entries):
        if isinstance(e, SpendEntry):
            c = e.charged
            names = ", ".join(e.query_names)
            print(
                f"  {e.seq:>4}  {e.time}  "
                + _("release  epsilon {e}, delta {d}  [{names}]").format(
                    e=_g(c.epsilon), d=f"{c.delta:.3g}", names=names
                )
            )
        elif isinstance(e, SimulateEntry):
            print(
                f"  {e.seq:>4}  {e.time}  "
                + _("simulate  {n} run(s) of the data by an older version; charged by a correction").format(
                    n=e.runs
                )
            )
        elif isinstance(e, CorrectionEntry):
            print(
                f"  {e.seq:>4}  {e.time}  "
                + _("correction  epsilon +{e} for {n} past release(s) booked too low").format(
                    e=_g(e.added_epsilon), n=len(e.releases)
                )
            )
        elif isinstance(e, SettingsEntry):
            print(
                f"  {e.seq:>4}  {e.time}  "
                + _("settings  budget epsilon {e}, delta {d}, {method}: {reason}").format(
                    e=f"{e.budget_epsilon:g}",
                    d=f"{e.budget_delta:g}",
                    method=e.method,
                    reason=e.fields["reason"],
                )
            )
        else:
            print(f"  {e.seq:>4}  {e.time}  {_('package') if e.type == 'package' else e.type}")
    return code


def _cmd_review(args: argparse.Namespace) -> int:
    from dpdesk.core.review import review, review_summary

    r = review(args.path)
    if args.json:
        print(json.dumps(review_summary(r), indent=2, ensure_ascii=False))
        return 0 if r.intact else 1
    if r.kind == "ledger":
        print(
            _("Ledger {path}: {status} ({n} entries)").format(
                path=args.path, status=_("chain verified") if r.intact else _("BROKEN"), n=len(r.entries)
            )
        )
    else:
        s = r.spend or {}
        print(_("Release package {path}").format(path=args.path))
        if s:
            c = s.get("charged", {})
            print(
                "  "
                + _("release {rid} of {time}, dataset {id}").format(
                    rid=s.get("release_id", "?"), time=s.get("time", "?"), id=s.get("dataset", "?")
                )
            )
            print(
                "  "
                + _("accounting: {method}; spent epsilon {e}, delta {d}").format(
                    method=s.get("method"), e=c.get("epsilon"), d=c.get("delta")
                )
            )
            for m, t in (s.get("totals") or {}).items():
                if t:
                    print(
                        f"    {m:<10} "
                        + _("epsilon {e}, delta {d}").format(e=f"{t['epsilon']:.6g}", d=f"{t['delta']:.3g}")
                    )
            if r.plan:
                print(
                    "  "
                    + _("plan: {title}, {n} queries").format(
                        title=r.plan.get("title") or _("(untitled)"), n=len(r.plan.get("queries", []))
                    )
                )
        for name, status in r.files.items():
            print(f"  {name}: {status}")
    for p in r.problems:
        print("  " + _("PROBLEM: {p}").format(p=p))
    print(_("Intact.") if r.intact else _("NOT INTACT: see the problems above."))
    return 0 if r.intact else 1


def _cmd_suggest(args: argparse.Namespace) -> int:
    from dpdesk.core.data import suggest_types

    types = suggest_types(args.file)
    print(
        _(
            "Suggested column types (bounds and categories are not suggested: they must come from you, "
            "not from the data):"
        )
    )
    for name, t in types.items():
        print(f"  {name}: {t}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["PlanError", "main"]
