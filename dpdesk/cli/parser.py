"""The argument parser of ``dpdesk``: every command, verb and option, its help, an example and its exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from dpdesk import __version__
from dpdesk.i18n import _


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter with its "usage: " heading translated (its other words come from argparse)."""

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Each line of a description or epilog filled on its own: an example (an indented line) kept as written,
        an exit code's meaning (an indented number) wrapped under itself."""
        import re
        import textwrap

        lines = []
        for line in text.splitlines():
            code = re.match(r"(  \d+ +)(.*)", line)
            if code:
                lead = indent + code.group(1)
                lines.append(
                    textwrap.fill(
                        code.group(2), width, initial_indent=lead, subsequent_indent=" " * len(lead)
                    )
                )
            elif line.startswith("  "):
                lines.append(indent + line)
            else:
                words = " ".join(line.split())
                lines.append(textwrap.fill(words, width, initial_indent=indent, subsequent_indent=indent))
        return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.setdefault("add_help", False)
        super().__init__(*args, **kwargs)
        # argparse's own headings and -h text are not in dpdesk's catalogue: set them translated
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        self.add_argument("-h", "--help", action="help", help=_("show this help message and exit"))

    def error(self, message: str) -> NoReturn:  # argparse's usage errors exit 2, like ours
        self.print_usage(sys.stderr)
        print("dpdesk: " + _("error: {message}").format(message=message), file=sys.stderr)
        raise SystemExit(2)


#: The ledger's actions before they became verbs (old flag, type of its value), with the two options that went
#: with them; the old spellings still work, with a note naming the new one.
OLD_LEDGER_FLAGS: tuple[tuple[str, Any], ...] = (
    ("--export-release", int),
    ("--change-settings", str),
    ("--export", str),
    ("--statement", str),
    ("--acknowledge", str),
    ("--out", str),
    ("--reason", str),
)


#: Each old action: its old spelling, its new one, and the old option that went with it (if any).
OLD_LEDGER_MODES: dict[str, tuple[str, str, str | None]] = {
    "--export-release": (
        "dpdesk ledger --data FILE --export-release SEQ --out DIR",
        "dpdesk ledger export-release SEQ --data FILE --out DIR",
        "--out",
    ),
    "--change-settings": (
        'dpdesk ledger --data FILE --change-settings PLAN --reason "..."',
        'dpdesk ledger change-settings PLAN --data FILE --reason "..."',
        "--reason",
    ),
    "--export": (
        "dpdesk ledger --data FILE --export OUT",
        "dpdesk ledger export --data FILE --out OUT",
        None,
    ),
    "--statement": (
        "dpdesk ledger --data FILE --statement OUT.pdf",
        "dpdesk ledger statement --data FILE --out OUT.pdf",
        None,
    ),
    "--acknowledge": (
        'dpdesk ledger --data FILE --acknowledge "reason"',
        'dpdesk ledger acknowledge --data FILE --reason "reason"',
        None,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="dpdesk", description=_("Publish statistics from a sensitive table under differential privacy.")
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"dpdesk {__version__}",
        help=_("show program's version number and exit"),
    )
    p.add_argument(
        "--selftest",
        action="store_true",
        help=_(
            "release the bundled sample in a temporary dpdesk home and check it end to end (for installers; "
            "given alone; exit 0 if every check passed, 1 if not)"
        ),
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND", title=_("commands"))

    o = sub.add_parser(
        "open",
        help=_("open the desktop app with a table, a plan or a release package (also: dpdesk PATH)"),
    )
    o.add_argument(
        "file",
        help=_(
            "a table (CSV, Excel, Parquet), a plan (.json), a release package (its folder or its ledger.json) or "
            "an exported ledger (.jsonl), told apart by their content"
        ),
    )

    b = sub.add_parser("budget", help=_("sensitivity, noise and budget of a plan, without reading data"))
    b.add_argument("plan", help=_("the plan file (JSON)"))
    b.add_argument("--data", help=_("subtract what the ledger of this file already holds (hashes it only)"))
    b.add_argument("--json", action="store_true", help=_("print JSON"))
    b.add_argument("--codebook", help=_("CSV of column, category filling category lists"))
    b.add_argument(
        "--fit",
        action="store_true",
        help=_(
            "fit the plan to what is left: split it across the queries by weight (equal unless --weight), in the "
            "accounting method's own unit; show the fitted plan's budget"
        ),
    )
    b.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="NAME=W",
        help=_("with --fit: the query NAME gets W shares (default 1; 0 leaves it as it is); repeatable"),
    )
    b.add_argument(
        "--lock", action="append", default=[], metavar="NAME", help=_("with --fit: keep this query's epsilon")
    )
    b.add_argument(
        "--reserve",
        type=float,
        default=0.0,
        metavar="EPS",
        help=_("with --fit: epsilon to keep for later releases"),
    )
    b.add_argument("--write", metavar="FILE", help=_("with --fit: save the fitted plan to this new file"))

    r = sub.add_parser("release", help=_("charge the ledger, then write the noisy release"))
    r.add_argument("plan", help=_("the plan file (JSON)"))
    r.add_argument(
        "--data", required=True, metavar="FILE", help=_("the sensitive table (its SHA-256 names its ledger)")
    )
    r.add_argument("--out", help=_("a new or empty folder (not with --check)"))
    r.add_argument(
        "--check",
        action="store_true",
        help=_(
            "check the release without charging anything: load and check the table, find its dataset, cost the "
            "plan against what is left; nothing is charged or written"
        ),
    )
    r.add_argument("--codebook", help=_("CSV of column, category filling category lists"))
    r.add_argument("--encoding", help=_("the CSV's encoding if detection fails (e.g. gb18030, utf-16)"))
    r.add_argument("--delimiter", help=_("the CSV's delimiter if sniffing fails"))
    r.add_argument("--bom", action="store_true", help=_("write release.csv with a UTF-8 BOM (for Excel)"))
    r.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help=_(
            "the most memory the release may use, e.g. 512MiB or 4GiB (default: half the machine's memory); "
            "a larger table is read in one streaming pass instead of loaded whole"
        ),
    )
    r.add_argument(
        "--approval",
        metavar="FILE",
        help=_("the privacy officer's signed approval of this plan (a dataset that requires signed plans)"),
    )
    r.add_argument(
        "--engine",
        choices=("auto", "spark"),
        default="auto",
        help=_(
            "who computes the exact aggregates: auto (this computer: in memory, or streamed when the table is "
            "larger than the memory limit) or spark (Apache Spark, where the table lies; see docs/spark.md)"
        ),
    )
    r.add_argument(
        "--spark-master",
        metavar="local[N]",
        help=_("with --engine spark: run Spark inside dpdesk on N cores of this computer"),
    )
    r.add_argument(
        "--spark-remote",
        metavar="sc://HOST:PORT",
        help=_(
            "with --engine spark: a cluster's Spark Connect server (add ;use_ssl=true;token=TOKEN for any "
            "host but this computer)"
        ),
    )
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
    s.add_argument("plan", help=_("the plan file (JSON)"))
    s.add_argument("--data", help=argparse.SUPPRESS)  # refused with an explanation (see simulate.run)
    s.add_argument(
        "--public",
        metavar="FILE",
        help=_(
            "simulate on this file, which you declare public (a published sample, last year's "
            "published table); a file with a ledger is refused"
        ),
    )
    s.add_argument("--runs", type=int, required=True, metavar="N", help=_("how many releases to simulate"))
    s.add_argument(
        "--out",
        required=True,
        metavar="FILE.csv",
        help=_("the CSV file to write (marked not for publication)"),
    )
    s.add_argument(
        "--force",
        action="store_true",
        help=_("replace the file if it exists (never the data, the plan, or a file in the dpdesk home)"),
    )
    s.add_argument("--rows", type=int, default=1000, help=_("rows of the stand-in table (without --public)"))
    s.add_argument("--seed", type=int, help=_("seed of the simulation's (non-cryptographic) generator"))
    s.add_argument("--codebook", help=_("CSV of column, category filling category lists"))

    lg = sub.add_parser(
        "ledger",
        usage="%(prog)s [-h] [--data FILE] [--json] [VERB ...]",
        help=_("list what was spent and verify the hash chain"),
        description=_(
            "Without a verb: list every dataset's ledger, or with --data one dataset's ledger entry by entry, "
            "verifying the hash chain (the same as the verbs list and verify)."
        ),
    )
    lg.add_argument(
        "--data",
        dest="ledger_data",
        metavar="FILE",
        help=_("the dataset file (its SHA-256 names its ledger)"),
    )
    lg.add_argument("--json", dest="ledger_json", action="store_true", help=_("print JSON"))
    # the old spellings (before the verbs): still accepted, with a note naming the new spelling
    for flag, kind in OLD_LEDGER_FLAGS:
        lg.add_argument(flag, dest="old_" + flag[2:].replace("-", "_"), type=kind, help=argparse.SUPPRESS)
    verbs = lg.add_subparsers(dest="verb", parser_class=_Parser, metavar="VERB", title=_("verbs"))
    data_help = _("the dataset file (its SHA-256 names its ledger)")
    approval_help = _("the privacy officer's signed approval (a governed dataset needs one)")

    v = verbs.add_parser(
        "list",
        prog="dpdesk ledger list",
        help=_("list every dataset's ledger in brief, verifying each hash chain"),
    )
    v.add_argument("--json", action="store_true", help=_("print JSON"))

    v = verbs.add_parser(
        "verify",
        prog="dpdesk ledger verify",
        help=_("list one dataset's ledger entry by entry and verify its hash chain"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--json", action="store_true", help=_("print JSON"))

    v = verbs.add_parser(
        "export",
        prog="dpdesk ledger export",
        help=_("write the dataset's whole ledger for a privacy officer"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument(
        "--out", required=True, metavar="OUT", help=_("the file to write (dpdesk review checks it)")
    )
    v.add_argument(
        "--force",
        action="store_true",
        help=_("replace the file if it exists (never the data, the plan, or a file in the dpdesk home)"),
    )

    v = verbs.add_parser(
        "export-release",
        prog="dpdesk ledger export-release",
        help=_("re-export a past release (costs nothing)"),
    )
    v.add_argument("seq", type=int, metavar="SEQ", help=_("the release's ledger entry number"))
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--out", required=True, metavar="DIR", help=_("a new or empty folder"))

    v = verbs.add_parser(
        "statement", prog="dpdesk ledger statement", help=_("write a PDF budget statement of the dataset")
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--out", required=True, metavar="OUT.pdf", help=_("the PDF file to write"))
    v.add_argument(
        "--force",
        action="store_true",
        help=_("replace the file if it exists (never the data, the plan, or a file in the dpdesk home)"),
    )

    v = verbs.add_parser(
        "forget-identity",
        prog="dpdesk ledger forget-identity",
        help=_(
            "(privacy officer) start the content identities over when the identity secret is lost for good"
        ),
    )
    v.add_argument("--reason", required=True, help=_("why (kept with the old identity folder)"))
    v.add_argument(
        "--approval",
        action="append",
        default=[],
        metavar="FILE",
        help=_("the officer's approval, one for each governed dataset of this home"),
    )

    v = verbs.add_parser(
        "link",
        prog="dpdesk ledger link",
        help=_("charge a table that resembles a known dataset to that dataset's ledger"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--to", required=True, metavar="ds-...", help=_("the known dataset's public name"))

    v = verbs.add_parser(
        "merge",
        prog="dpdesk ledger merge",
        help=_(
            "merge the datasets that hold one table (made by saves first released at once by an older version)"
        ),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument(
        "--approval",
        action="append",
        default=[],
        metavar="FILE",
        help=_("the officer's approval of the merge, one for each governed dataset merged"),
    )

    v = verbs.add_parser(
        "declare-new",
        prog="dpdesk ledger declare-new",
        help=_("(privacy officer) declare a table that resembles a known dataset a new dataset"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--resembles", required=True, metavar="ds-...", help=_("the known dataset it resembles"))
    v.add_argument("--reason", required=True, help=_("why it is a new dataset (recorded in both ledgers)"))
    v.add_argument("--approval", metavar="FILE", help=approval_help)

    v = verbs.add_parser(
        "acknowledge",
        prog="dpdesk ledger acknowledge",
        help=_("(privacy officer) accept a broken ledger: keep it as evidence, carry its spends over"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument(
        "--reason", required=True, help=_("why the broken ledger is accepted (recorded in the ledger)")
    )
    v.add_argument(
        "--cost",
        action="append",
        default=[],
        metavar="SEQ=EPS[,DELTA,RHO]",
        help=_(
            "the cost of a ledger entry that does not verify, or of a gap (FIRST-LAST=EPS), as you state it; "
            "dpdesk lists those it needs, with what it offers"
        ),
    )
    v.add_argument(
        "--costs",
        metavar="FILE.json",
        help=_(
            'the stated costs as a JSON file: a list "costs" of objects with "entries", "epsilon" and optionally "delta" and "rho"'
        ),
    )
    v.add_argument(
        "--settings",
        metavar="PLAN",
        help=_(
            "a plan whose budget, unit and method become the settings (only when no settings entry verifies)"
        ),
    )
    v.add_argument(
        "--exported",
        action="append",
        default=[],
        metavar="PATH",
        help=_("an exported copy of the ledger or a release package: its costs are offered too"),
    )
    v.add_argument("--approval", metavar="FILE", help=approval_help)

    v = verbs.add_parser(
        "change-settings",
        prog="dpdesk ledger change-settings",
        help=_("(privacy officer) take budget, unit and method from PLAN"),
    )
    v.add_argument(
        "plan",
        metavar="PLAN",
        help=_("the plan file whose budget, unit of privacy and accounting method are taken"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--reason", required=True, help=_("why the settings change (recorded in the ledger)"))
    v.add_argument("--approval", metavar="FILE", help=approval_help)

    v = verbs.add_parser(
        "head",
        prog="dpdesk ledger head",
        help=_("print the dataset's public name and ledger head (what an officer's approval is signed for)"),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--json", action="store_true", help=_("print JSON"))

    v = verbs.add_parser(
        "govern",
        prog="dpdesk ledger govern",
        help=_(
            "place the dataset under a privacy officer's key (or change the policy or key, with approval)"
        ),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=data_help)
    v.add_argument("--officer", required=True, metavar="PUBLIC.json", help=_("the officer's public key file"))
    v.add_argument(
        "--require-signed-plans",
        action="store_true",
        help=_("release only plans the officer signed (the two-person rule)"),
    )
    v.add_argument(
        "--approval",
        metavar="FILE",
        help=_(
            "on a governed dataset: the officer's approval of the new policy (or the recovery key's of a new key)"
        ),
    )

    _add_officer_parser(sub)
    _add_team_parser(sub)

    rv = sub.add_parser("review", help=_("check a release package or an exported ledger (read-only)"))
    rv.add_argument(
        "path", help=_("a release package folder, or a ledger exported with dpdesk ledger --export")
    )
    rv.add_argument(
        "--against",
        metavar="LATER_EXPORT",
        help=_(
            "a later export of the same dataset's ledger: check that it still reaches the head this package or "
            "export was made at (a ledger rolled back behind it is named)"
        ),
    )
    rv.add_argument("--json", action="store_true", help=_("print JSON"))

    sg = sub.add_parser(
        "suggest", help=_("propose column types (only types: bounds and categories are yours)")
    )
    sg.add_argument("file", help=_("the table whose column types to propose"))
    _add_plan_parser(sub)
    _add_help_notes(p)
    return p


def _add_plan_parser(sub: Any) -> None:
    """``dpdesk plan new|check``: a plan without writing JSON (a template from a table's header, its problems)."""
    pl = sub.add_parser(
        "plan",
        help=_("write a plan template from a table's header, and list what a plan still lacks"),
        description=_(
            "A plan without writing JSON: plan new writes a template declaring the table's columns from its "
            "header alone (no value is read), with every type, bounds and categories left for you to fill; plan "
            "check lists, one a line, what is still missing or wrong."
        ),
    )
    verbs = pl.add_subparsers(dest="plan_verb", parser_class=_Parser, metavar="VERB", title=_("verbs"))
    verbs.required = True
    v = verbs.add_parser(
        "new",
        prog="dpdesk plan new",
        help=_("write a plan template from a table's header (no value is read)"),
    )
    v.add_argument(
        "--data",
        required=True,
        metavar="FILE",
        help=_("the table (CSV, Excel, Parquet); only its header is read"),
    )
    v.add_argument(
        "--out",
        metavar="PLAN.json",
        help=_("the plan file to write (default: beside the table, its name and _plan.json)"),
    )
    v.add_argument("--force", action="store_true", help=_("replace the plan file if it exists"))
    v.add_argument(
        "--epsilon",
        type=float,
        metavar="E",
        help=_("the dataset's total privacy budget (default: left for you to fill)"),
    )
    v.add_argument("--encoding", help=_("the CSV's encoding if detection fails (e.g. gb18030, utf-16)"))
    v.add_argument("--delimiter", help=_("the CSV's delimiter if sniffing fails"))
    v = verbs.add_parser(
        "check",
        prog="dpdesk plan check",
        help=_("list what a plan still lacks or gets wrong, one a line"),
    )
    v.add_argument("plan", metavar="PLAN", help=_("the plan file (JSON)"))
    v.add_argument(
        "--data",
        metavar="FILE",
        help=_("the table: check that its header has the plan's columns (no value is read)"),
    )
    v.add_argument("--codebook", help=_("CSV of column, category filling category lists"))
    v.add_argument("--encoding", help=_("the CSV's encoding if detection fails (e.g. gb18030, utf-16)"))
    v.add_argument("--delimiter", help=_("the CSV's delimiter if sniffing fails"))


def _epilog(examples: Sequence[str], codes: Sequence[tuple[int, str]]) -> str:
    """A help's closing notes: example commands, then the exit codes with what each means."""
    lines = [_("Examples:") if len(examples) > 1 else _("Example:")]
    lines += ["  " + e for e in examples]
    lines += ["", _("Exit codes:")]
    lines += [f"  {code:<4} {meaning}" for code, meaning in codes]
    return "\n".join(lines)


def _add_help_notes(top: argparse.ArgumentParser) -> None:
    """Give dpdesk's help and each command's an example and its exit codes (the parsers are built first)."""
    # files of the user's (an installed copy has no resources/samples folder to point to)
    plan = "plan.json"
    data = "your.csv"
    done = (0, _("done"))
    usage = (2, _("bad plan, data or usage"))
    broken = (
        3,
        _(
            "the dataset's ledger is broken or unacknowledged, or the table resembles a known dataset "
            "(dpdesk ledger link)"
        ),
    )
    not_written = (
        4,
        _(
            "charged, but the package was not written (a full disk, say): the message says how to write it "
            "again at no cost (dpdesk ledger export-release)"
        ),
    )
    verified = (0, _("done; the hash chain verified"))
    chain = (3, _("a hash chain is broken"))
    recorded = (0, _("recorded in the ledger"))
    approval = (2, _("bad plan or usage, or the officer's approval is missing or refused"))
    signed = (0, _("the approval file was written"))
    officer_usage = (2, _("bad usage, an unreadable key or a wrong passphrase"))
    approve = ("--dataset ds-... --head SEQ:HASH --key officer/officer-XXXX-private.pem --out approval.json",)
    team_down = (
        5,
        _(
            "the team ledger could not be reached, or refused what was asked: nothing was charged or revealed "
            "(the message names the server and the fix)"
        ),
    )
    team_url = "postgresql://USER@HOST/DATABASE"
    team_done = (0, _("done"))
    notes: dict[str, tuple[tuple[str, ...], tuple[tuple[int, str], ...]]] = {
        "": (
            (
                f"dpdesk budget {plan}",
                f"dpdesk release {plan} --data {data} --out demo-release",
                "dpdesk review demo-release",
                "dpdesk --selftest",
            ),
            (
                done,
                (1, _("over or exhausted budget (budget, release), or a package that was changed (review)")),
                usage,
                (3, _("a ledger broken or unacknowledged, or a table that resembles a known dataset")),
                not_written,
                team_down,
                (130, _("interrupted (Ctrl+C)")),
            ),
        ),
        "open": (
            (f"dpdesk open {data}", f"dpdesk open {plan}", "dpdesk open demo-release/ledger.json"),
            (
                (0, _("the app was closed")),
                (
                    2,
                    _(
                        "the app could not start, or the path is none of what it opens (the cause and the fix are "
                        "printed)"
                    ),
                ),
            ),
        ),
        "budget": (
            (
                f"dpdesk budget {plan}",
                f"dpdesk budget {plan} --data {data}",
                f"dpdesk budget {plan} --data {data} --fit --write fitted_plan.json",
            ),
            (
                (0, _("the plan fits the budget (with --data: what is left of it)")),
                (1, _("the plan does not fit the budget")),
                usage,
                broken,
                team_down,
            ),
        ),
        "release": (
            (
                f"dpdesk release {plan} --data {data} --check",
                f"dpdesk release {plan} --data {data} --out demo-release",
            ),
            (
                (0, _("charged, then written (with --check: the plan fits; nothing charged or written)")),
                (1, _("over or exhausted budget: nothing charged or written")),
                (2, _("bad plan, data or usage: nothing charged or written")),
                broken,
                not_written,
                team_down,
            ),
        ),
        "simulate": (
            (f"dpdesk simulate {plan} --runs 100 --out simulated.csv",),
            (done, (2, _("bad plan or usage, the private table given, or a public file that has a ledger"))),
        ),
        "ledger": (
            (f"dpdesk ledger --data {data}", f"dpdesk ledger export --data {data} --out ledger-export.json"),
            (verified, usage, chain),
        ),
        "ledger list": (("dpdesk ledger list",), (verified, chain)),
        "ledger verify": ((f"dpdesk ledger verify --data {data}",), (verified, usage, chain)),
        "ledger export": (
            (f"dpdesk ledger export --data {data} --out ledger-export.json",),
            ((0, _("written; the hash chain verified")), usage, chain),
        ),
        "ledger export-release": (
            (f"dpdesk ledger export-release 2 --data {data} --out again",),
            ((0, _("re-exported (no budget spent)")), usage, broken),
        ),
        "ledger statement": (
            (f"dpdesk ledger statement --data {data} --out statement.pdf",),
            ((0, _("written")), usage, (3, _("the hash chain is broken (the statement, written, says so)"))),
        ),
        "ledger acknowledge": (
            (f'dpdesk ledger acknowledge --data {data} --reason "restored from a backup"',),
            (
                recorded,
                approval,
                (
                    3,
                    _(
                        "a stated cost is still needed (listed, with what dpdesk offers), or the ledger cannot be read"
                    ),
                ),
            ),
        ),
        "ledger change-settings": (
            (f'dpdesk ledger change-settings new_budget_plan.json --data {data} --reason "new budget year"',),
            (recorded, approval, broken),
        ),
        "ledger head": (
            (f"dpdesk ledger head --data {data}",),
            (
                verified,
                usage,
                (3, _("the hash chain is broken (the head printed is the one to acknowledge at)")),
            ),
        ),
        "ledger govern": (
            (f"dpdesk ledger govern --data {data} --officer officer/officer-XXXX-public.json",),
            (recorded, approval, broken),
        ),
        "ledger forget-identity": (
            ('dpdesk ledger forget-identity --reason "the identity secret was lost"',),
            (recorded, approval, broken),
        ),
        "ledger link": (("dpdesk ledger link --data new_copy.csv --to ds-...",), (recorded, usage, broken)),
        "ledger merge": ((f"dpdesk ledger merge --data {data}",), (recorded, approval, broken)),
        "ledger declare-new": (
            (
                'dpdesk ledger declare-new --data new_survey.csv --resembles ds-... --reason "a new survey wave"',
            ),
            (recorded, approval, broken),
        ),
        "review": (
            ("dpdesk review demo-release", "dpdesk review ledger-export.json --against later-export.json"),
            ((0, _("intact")), (1, _("something was changed, added or removed (named)")), usage),
        ),
        "suggest": ((f"dpdesk suggest {data}",), (done, usage)),
        "plan": (
            (f"dpdesk plan new --data {data}", "dpdesk plan check your_plan.json"),
            ((0, _("written, or the plan is complete")), usage),
        ),
        "plan new": (
            (f"dpdesk plan new --data {data}", f"dpdesk plan new --data {data} --out {plan} --epsilon 1"),
            (
                (0, _("the template was written")),
                (2, _("bad data or usage (an existing file is not replaced)")),
            ),
        ),
        "plan check": (
            ("dpdesk plan check your_plan.json", f"dpdesk plan check {plan} --data {data}"),
            (
                (0, _("the plan is complete and valid")),
                (2, _("the plan has problems (listed, one a line), or bad data or usage")),
            ),
        ),
        "officer": (
            (
                'dpdesk officer create --name "A. Officer" --out officer',
                "dpdesk officer show officer/officer-XXXX-public.json",
            ),
            (done, officer_usage),
        ),
        "officer create": (
            ('dpdesk officer create --name "A. Officer" --out officer',),
            ((0, _("the key files were written")), officer_usage),
        ),
        "officer show": (("dpdesk officer show officer/officer-XXXX-public.json",), (done, officer_usage)),
        "officer approve-plan": (
            (f"dpdesk officer approve-plan {plan} " + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-settings": (
            ("dpdesk officer approve-settings new_budget_plan.json " + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-acknowledge": (
            ('dpdesk officer approve-acknowledge --reason "restored from a backup" ' + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-policy": (
            ("dpdesk officer approve-policy --require-signed-plans " + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-declare-new": (
            ("dpdesk officer approve-declare-new --new-dataset ds-... " + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-merge": (
            ("dpdesk officer approve-merge --retired ds-... --into ds-... " + approve[0],),
            (signed, officer_usage),
        ),
        "officer approve-forget-identity": (
            ('dpdesk officer approve-forget-identity --reason "the identity secret was lost" ' + approve[0],),
            (signed, officer_usage),
        ),
        "team": (
            (f"dpdesk team init {team_url}", f"dpdesk team connect {team_url}", "dpdesk team status"),
            (team_done, (2, _("bad usage")), team_down),
        ),
        "team init": (
            (f"dpdesk team init {team_url}", "dpdesk team init --print-sql --prefix stats"),
            (
                (0, _("the team ledger was created, upgraded or found up to date (or its SQL printed)")),
                (2, _("bad usage")),
                team_down,
            ),
        ),
        "team grant": (
            (f"dpdesk team grant {team_url} alice --role curator",),
            ((0, _("the role was given")), (2, _("bad usage")), team_down),
        ),
        "team connect": (
            (f"dpdesk team connect {team_url}",),
            ((0, _("this home now uses the team ledger")), (2, _("bad usage")), team_down),
        ),
        "team disconnect": (("dpdesk team disconnect",), (team_done, (2, _("bad usage")))),
        "team import": (
            ("dpdesk team import --data census.csv",),
            (
                (0, _("the table's history is in the team's ledger (or was already)")),
                (2, _("bad usage, or nothing of the table in this home's own ledgers")),
                (
                    3,
                    _(
                        "this home's ledger of it does not verify, or is governed (an officer of the team imports it)"
                    ),
                ),
                team_down,
            ),
        ),
        "team status": (("dpdesk team status", "dpdesk team status --json"), (team_done, team_down)),
        **{
            f"team add-{role}": (
                (
                    f"dpdesk team add-{role} alice --url {team_url}",
                    f"dpdesk team add-{role} alice --print-sql",
                ),
                ((0, _("the role was given (or its SQL printed)")), (2, _("bad usage")), team_down),
            )
            for role in ("curator", "officer", "auditor")
        },
        **{
            f"team remove-{role}": (
                (f"dpdesk team remove-{role} alice --url {team_url}",),
                ((0, _("the role was taken (the entries they made stay)")), (2, _("bad usage")), team_down),
            )
            for role in ("curator", "officer", "auditor")
        },
        "team who": (("dpdesk team who",), (team_done, (2, _("bad usage")), team_down)),
        "team statement": (
            ("dpdesk team statement --out team-statement.pdf",),
            (
                (0, _("written")),
                (2, _("bad usage: no team ledger, or the file exists (--force replaces it)")),
                (3, _("a dataset's hash chain is broken (the statement, written, says which)")),
                team_down,
            ),
        ),
        "officer approve-rotate": (
            (
                "dpdesk officer approve-rotate --new-officer new/officer-YYYY-public.json --dataset ds-... --head SEQ:HASH --key officer/officer-XXXX-recovery.pem --out approval.json",
            ),
            (signed, officer_usage),
        ),
    }
    for path, parser in parsers(top):
        examples, codes = notes[path]
        parser.epilog = _epilog(examples, codes)


def parsers(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every parser under it, each with its command path ("", "budget", "ledger verify", ...)."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += parsers(child, f"{path} {name}".strip())
    return found


def _add_officer_parser(sub: Any) -> None:
    """``dpdesk officer VERB``: the privacy officer's key and approvals (on the officer's machine)."""
    of = sub.add_parser(
        "officer",
        help=_("(privacy officer) make a key pair, show a public key, sign approvals"),
        description=_(
            "The privacy officer's key: make it once, give the public file to curators, and sign an approval for "
            "each change of a governed dataset (its public name and ledger head come from dpdesk ledger head). "
            "Passphrases are asked for, or read from the first line of a file with --passphrase-file; never "
            "given on the command line."
        ),
    )
    verbs = of.add_subparsers(dest="officer_verb", parser_class=_Parser, metavar="VERB", title=_("verbs"))
    verbs.required = True
    pass_help = _("read the passphrase from the first line of this file (for scripts) instead of asking")

    v = verbs.add_parser(
        "create", prog="dpdesk officer create", help=_("make an officer key pair and a recovery key")
    )
    v.add_argument("--name", required=True, help=_("the officer's name (public)"))
    v.add_argument("--contact", default="", help=_("how curators reach the officer (public)"))
    v.add_argument("--out", required=True, metavar="DIR", help=_("the folder for the three key files"))
    v.add_argument("--passphrase-file", metavar="FILE", help=pass_help)
    v.add_argument(
        "--recovery-passphrase-file", metavar="FILE", help=_("the same, for the recovery key's passphrase")
    )

    v = verbs.add_parser(
        "show", prog="dpdesk officer show", help=_("check a public key file and show its fingerprints")
    )
    v.add_argument("public", metavar="PUBLIC.json", help=_("the officer's public key file"))

    def approval_args(v: Any, *, recovery: bool = False) -> None:
        v.add_argument("--dataset", required=True, metavar="ds-...", help=_("the dataset's public name"))
        v.add_argument(
            "--head",
            required=True,
            metavar="SEQ:HASH",
            help=_("the ledger head, as dpdesk ledger head prints it"),
        )
        v.add_argument(
            "--key",
            required=True,
            metavar="RECOVERY.pem" if recovery else "PRIVATE.pem",
            help=_("the recovery key file") if recovery else _("the officer's private key file"),
        )
        v.add_argument("--out", required=True, metavar="APPROVAL.json", help=_("the approval file to write"))
        v.add_argument("--passphrase-file", metavar="FILE", help=pass_help)
        v.add_argument(
            "--expires-days", type=float, metavar="DAYS", help=_("the approval is valid this long")
        )

    v = verbs.add_parser(
        "approve-plan", prog="dpdesk officer approve-plan", help=_("approve a plan and its budget")
    )
    v.add_argument("plan", metavar="PLAN", help=_("the plan file to approve (JSON)"))
    approval_args(v)
    v = verbs.add_parser(
        "approve-settings",
        prog="dpdesk officer approve-settings",
        help=_("approve new settings: the budget, unit of privacy and accounting method of PLAN"),
    )
    v.add_argument(
        "plan",
        metavar="PLAN",
        help=_("the plan file whose budget, unit of privacy and accounting method are taken"),
    )
    approval_args(v)
    v = verbs.add_parser(
        "approve-acknowledge",
        prog="dpdesk officer approve-acknowledge",
        help=_("approve the acknowledgement of a broken ledger, with its reason and stated costs"),
    )
    approval_args(v)
    v.add_argument("--reason", required=True, help=_("the reason the curator will record (the same words)"))
    v.add_argument(
        "--cost", action="append", default=[], metavar="SEQ=EPS[,DELTA,RHO]", help=_("a stated cost")
    )
    v.add_argument("--costs", metavar="FILE.json", help=_("the stated costs as a JSON file"))
    v.add_argument(
        "--settings", metavar="PLAN", help=_("the settings stated, when no settings entry verifies")
    )
    v = verbs.add_parser(
        "approve-policy",
        prog="dpdesk officer approve-policy",
        help=_("approve a change of the dataset's policy"),
    )
    approval_args(v)
    v.add_argument(
        "--require-signed-plans", action="store_true", help=_("the new policy requires signed plans")
    )
    v = verbs.add_parser(
        "approve-declare-new",
        prog="dpdesk officer approve-declare-new",
        help=_("approve declaring a near-copy a new dataset"),
    )
    approval_args(v)
    v.add_argument("--new-dataset", required=True, metavar="ds-...", help=_("the near-copy's public name"))
    v = verbs.add_parser(
        "approve-merge",
        prog="dpdesk officer approve-merge",
        help=_("approve merging two datasets of one table (one approval for each governed one)"),
    )
    approval_args(v)
    v.add_argument("--retired", required=True, metavar="ds-...", help=_("the dataset merged into the other"))
    v.add_argument(
        "--into", required=True, metavar="ds-...", help=_("the dataset that charges the table after")
    )
    v = verbs.add_parser(
        "approve-forget-identity",
        prog="dpdesk officer approve-forget-identity",
        help=_("approve forgetting the content identities of the curator's dpdesk home"),
    )
    approval_args(v)
    v.add_argument("--reason", required=True, help=_("the reason the curator will record (the same words)"))
    v = verbs.add_parser(
        "approve-rotate",
        prog="dpdesk officer approve-rotate",
        help=_("(recovery key) approve replacing a lost officer key by a new one"),
    )
    approval_args(v, recovery=True)
    v.add_argument(
        "--new-officer", required=True, metavar="PUBLIC.json", help=_("the new officer key's public file")
    )


def _add_team_parser(sub: Any) -> None:
    """``dpdesk team VERB``: a team's ledger in PostgreSQL, shared by its curators (docs/team-ledger.md)."""
    tm = sub.add_parser(
        "team",
        help=_("a team's ledger in PostgreSQL: create it, give roles, connect this home"),
        description=_(
            "A team ledger keeps every dataset's budget in one PostgreSQL database that all the team's curators "
            "use, and enforces it there. URLs are libpq's (postgresql://USER@HOST/DATABASE?sslmode=verify-full) and "
            "hold no password: libpq reads it from ~/.pgpass or PGPASSWORD. DPDESK_LEDGER=URL overrides the "
            "home's setting."
        ),
    )
    verbs = tm.add_subparsers(dest="team_verb", parser_class=_Parser, metavar="VERB", title=_("verbs"))
    verbs.required = True
    v = verbs.add_parser(
        "init", prog="dpdesk team init", help=_("(administrator) create the team ledger in a database")
    )
    v.add_argument(
        "url", nargs="?", metavar="URL", help=_("the database, as a user who may create roles there")
    )
    v.add_argument(
        "--prefix",
        default="dpdesk",
        help=_("the roles' prefix (default dpdesk): two teams on one server need two"),
    )
    v.add_argument(
        "--print-sql",
        action="store_true",
        help=_("print the SQL instead, for a database administrator to read and run"),
    )
    v.add_argument(
        "--upgrade",
        action="store_true",
        help=_(
            "with --print-sql: the SQL that upgrades a team ledger made by an older dpdesk (dpdesk team init URL "
            "does it by itself)"
        ),
    )
    v = verbs.add_parser(
        "grant", prog="dpdesk team grant", help=_("(administrator) give a database user a team role")
    )
    v.add_argument("url", metavar="URL", help=_("the database, as its administrator"))
    v.add_argument("user", metavar="USER", help=_("the database user (made a login role when missing)"))
    v.add_argument(
        "--role", required=True, choices=["curator", "officer", "auditor"], help=_("the team role")
    )
    v = verbs.add_parser(
        "connect", prog="dpdesk team connect", help=_("use a team ledger in this dpdesk home from now on")
    )
    v.add_argument("url", metavar="URL", help=_("the team's database, as this curator"))
    v.add_argument(
        "--leave-local-ledgers",
        action="store_true",
        help=_(
            "connect a home that has releases in its own ledgers (what they spent is not carried into the team's "
            "ledger)"
        ),
    )
    verbs.add_parser("disconnect", prog="dpdesk team disconnect", help=_("use this home's own ledgers again"))
    v = verbs.add_parser(
        "import",
        prog="dpdesk team import",
        help=_(
            "bring a table's history from this home's own ledger into the team's (its releases charged there, "
            "the home's ledger closed)"
        ),
    )
    v.add_argument("--data", required=True, metavar="FILE", help=_("the table, as this home released it"))
    v.add_argument("--encoding", help=_("the CSV's encoding if detection fails (e.g. gb18030, utf-16)"))
    v = verbs.add_parser(
        "status",
        prog="dpdesk team status",
        help=_(
            "which ledger this home uses, and every dataset of the team: budget, spent, left, latest releases"
        ),
    )
    v.add_argument("--json", action="store_true", help=_("print it as JSON"))
    v.add_argument(
        "--latest",
        type=int,
        default=3,
        metavar="N",
        help=_("how many of each dataset's latest releases (default 3)"),
    )
    for role in ("curator", "officer", "auditor"):
        for action, text in (
            ("add", _("(administrator) give a database user the team's {role} role")),
            (
                "remove",
                _("(administrator) take the team's {role} role from a database user (their entries stay)"),
            ),
        ):
            v = verbs.add_parser(
                f"{action}-{role}", prog=f"dpdesk team {action}-{role}", help=text.format(role=role)
            )
            v.add_argument(
                "user",
                metavar="NAME",
                help=_("the database user (a plain name; made a login role without a password when missing)"),
            )
            v.add_argument(
                "--url",
                metavar="URL",
                help=_("the team's database, as its administrator (default: the team ledger this home uses)"),
            )
            v.add_argument(
                "--print-sql",
                action="store_true",
                help=_("print the SQL instead, for a database administrator to read and run"),
            )
            v.add_argument(
                "--prefix",
                default="dpdesk",
                help=_("with --print-sql: the team's roles' prefix (default dpdesk)"),
            )
            v.set_defaults(team_action=action, team_role=role)
    v = verbs.add_parser(
        "statement",
        prog="dpdesk team statement",
        help=_("write a PDF budget statement of every dataset of the team, one page each"),
    )
    v.add_argument("--out", required=True, metavar="FILE.pdf", help=_("the PDF file to write"))
    v.add_argument(
        "--force",
        action="store_true",
        help=_("replace the file if it exists (never a file in the dpdesk home)"),
    )
    v = verbs.add_parser("who", prog="dpdesk team who", help=_("the team's curators, officers and auditors"))
    v.add_argument(
        "--url", metavar="URL", help=_("the team's database (default: the team ledger this home uses)")
    )
    v.add_argument("--json", action="store_true", help=_("print it as JSON"))
