"""The ``dpdesk`` command line: the same engine as the desktop app, headless.

Exit codes: 0 done; 1 over or exhausted budget; 2 bad plan, data or usage; 3 ledger broken or
unacknowledged.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk import __version__
from dpdesk.core.common.errors import DpdeskError, PlanError, UsageError
from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.progress import Progress, stage_label
from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file
from dpdesk.core.common.text import shown
from dpdesk.core.plan.reader import Plan, apply_codebook, parse_plan, parse_plan_text, read_codebook
from dpdesk.i18n import _, ngettext

if TYPE_CHECKING:
    from dpdesk.core.ledger.budget import BudgetReport


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

    def error(self, message: str) -> Any:  # argparse's usage errors exit 2, like ours
        self.print_usage(sys.stderr)
        print("dpdesk: " + _("error: {message}").format(message=message), file=sys.stderr)
        raise SystemExit(2)


#: The ledger's actions before they became verbs (old flag, type of its value), with the two options that went
#: with them; the old spellings still work, with a note naming the new one.
_OLD_LEDGER_FLAGS: tuple[tuple[str, Any], ...] = (
    ("--export-release", int),
    ("--change-settings", str),
    ("--export", str),
    ("--statement", str),
    ("--acknowledge", str),
    ("--out", str),
    ("--reason", str),
)
#: Each old action: its old spelling, its new one, and the old option that went with it (if any).
_OLD_LEDGER_MODES: dict[str, tuple[str, str, str | None]] = {
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
    s.add_argument("--data", help=argparse.SUPPRESS)  # refused with an explanation (see _cmd_simulate)
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
    for flag, kind in _OLD_LEDGER_FLAGS:
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
    _add_help_notes(p)
    return p


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
        "officer approve-rotate": (
            (
                "dpdesk officer approve-rotate --new-officer new/officer-YYYY-public.json --dataset ds-... --head SEQ:HASH --key officer/officer-XXXX-recovery.pem --out approval.json",
            ),
            (signed, officer_usage),
        ),
    }
    for path, parser in _parsers(top):
        examples, codes = notes[path]
        parser.epilog = _epilog(examples, codes)


def _parsers(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every parser under it, each with its command path ("", "budget", "ledger verify", ...)."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _parsers(child, f"{path} {name}".strip())
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    as_program = argv is None  # the process ends when this returns (the dpdesk command, python -m dpdesk)
    argv = list(sys.argv[1:] if argv is None else argv)
    _DONE.clear()
    if argv == [
        "--selftest"
    ]:  # a small release on the bundled sample, in a temporary home (installers' check)
        from dpdesk.selftest import run

        return run()
    parser = _build_parser()
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
        return _gui(args)
    real_stdout = sys.stdout
    sys.stdout = _Stdout(real_stdout)  # all that print and json.dump use of a text stream
    try:
        return _run(args, as_program)
    finally:
        if sys.stdout is not None and isinstance(sys.stdout, _Stdout):
            sys.stdout = real_stdout


def _run(args: argparse.Namespace, as_program: bool) -> int:
    """Run one command; every exit is a documented code (see :mod:`dpdesk.core.common.errors`)."""
    code: int | None = None
    try:
        handler = {
            "budget": _cmd_budget,
            "release": _cmd_release,
            "simulate": _cmd_simulate,
            "ledger": _cmd_ledger,
            "review": _cmd_review,
            "suggest": _cmd_suggest,
            "officer": _cmd_officer,
        }[args.command]
        code = int(handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not after main returned
        if as_program:
            # Everything is written, fsynced and closed; the process is about to end. Leave the objects for the
            # operating system instead of a last collection of every cycle in numpy and OpenDP (30-40 ms, a
            # sixth of ``dpdesk budget``; benchmarks/cli_startup.py).
            gc.freeze()
        return code
    except BrokenPipeError:  # the reader went away (dpdesk ledger | head -1): end quietly
        _silence_stdout()
        return 0 if code is None else code
    except (
        _StdoutFailed
    ) as exc:  # standard output cannot be written (dpdesk ledger > /dev/full): one line, exit 2
        _silence_stdout()
        print(
            "dpdesk: "
            + _("cannot write to standard output: {err}").format(err=exc.error.strerror or exc.error),
            file=sys.stderr,
        )
        if _DONE:  # what was done stays done (a release charged and written): say so, and do not say "failed"
            for note in _DONE:
                print("dpdesk: " + note, file=sys.stderr)
            return 0
        return 2
    except DpdeskError as exc:
        print("dpdesk: " + shown(exc, keep_newlines=True), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("dpdesk: " + _("interrupted"), file=sys.stderr)
        return 130


#: What the running command has done that cannot be undone (a release charged and written), said on stderr if its
#: report then cannot be printed: a caller must not take the failure for "nothing happened" and run it again.
_DONE: list[str] = []


class _StdoutFailed(Exception):
    """Standard output could not be written (not a closed pipe: a full disk, an I/O error)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _Stdout:
    """Standard output, whose write errors (but a closed pipe's) are told apart from every other OSError."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush cannot fail on a closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stream)
        pass


def _a_path(word: str) -> bool:
    """Whether ``dpdesk WORD`` means a file to open: it exists, or it looks like a path (a misspelt command, such
    as ``dpdesk relase``, keeps argparse's message listing the commands)."""
    import os

    return (
        bool(word)
        and not word.startswith("-")
        and (os.path.exists(word) or "/" in word or os.sep in word or "." in word)
    )


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    """The top-level command words (budget, release, open, ...)."""
    return {n for a in parser._actions if isinstance(a, argparse._SubParsersAction) for n in a.choices}


def _gui(args: argparse.Namespace) -> int:
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


def _load_plan(path: str, codebook: str | None) -> Plan:
    from dpdesk.core.common.jsonin import PLAN, JsonInputError, read_json
    from dpdesk.core.plan.reader import load_plan

    if codebook is None:
        return load_plan(path)
    try:
        raw = read_small_file(path, MAX_PLAN_BYTES)
        data = read_json(raw, PLAN)
    except OSError:
        return load_plan(path)  # its precise message ("cannot read PATH: why"), read through the same reader
    except JsonInputError:
        return parse_plan_text(raw, source=path)  # let the ordinary reader produce its precise message
    return parse_plan(apply_codebook(data, read_codebook(codebook)))


def _progress() -> Progress:
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, stage: str) -> None:
        pct = 100 * done // total if total else 100
        print(f"\r{stage_label(stage)} {pct:3d}%", end="", file=sys.stderr, flush=True)

    return Progress(show)


def _dataset(data: str) -> Any:
    """The dataset of a data file, under the dpdesk home (its SHA-256 names its ledger)."""
    from dpdesk.services.common import Dataset

    return Dataset(dpdesk_home(), data)


def _tell_migration(text: str | None) -> None:
    """Tell the user, on stderr, that a ledger was migrated from the old format (a service's notice)."""
    if text is not None:
        for line in text.split("\n"):
            print("dpdesk: " + _("note: {line}").format(line=shown(line)), file=sys.stderr)


def _cmd_budget(args: argparse.Namespace) -> int:
    from dpdesk.services.budget import BudgetRequest, plan_budget

    plan = _load_plan(args.plan, args.codebook)
    dataset = _dataset(args.data) if args.data is not None else None
    if args.fit:
        return _fit_budget(args, plan, dataset)
    if args.weight or args.lock or args.reserve or args.write:
        raise UsageError(_("--weight, --lock, --reserve and --write go with --fit"))
    result = plan_budget(BudgetRequest(plan, dataset), notify=_tell_migration)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_budget(result.report, read_data=dataset is not None)
        if result.governance:
            print(result.governance)
    return 0 if result.fits else 1


def _fit_budget(args: argparse.Namespace, plan: Plan, dataset: Any) -> int:
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
        fitted, result = fit_plan(request, notify=_tell_migration)
    except FitError as exc:
        if exc.usage:
            raise UsageError(str(exc)) from exc
        print(_("Nothing to fit: {reason}").format(reason=exc), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_budget(result.report, read_data=dataset is not None)
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


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def _print_budget(rep: BudgetReport, *, read_data: bool = False) -> None:
    from dpdesk.core.ledger.budget import report_warnings

    out = sys.stdout
    title = rep.title or _("(untitled plan)")
    print(
        _("{title}: budget epsilon {e}, delta {d}").format(
            title=shown(title), e=f"{rep.budget.epsilon:g}", d=f"{rep.budget.delta:g}"
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
        col = f"({shown(q.column)})" if q.column else ""
        print(
            _("- {name}: {what}, {mechanism}, epsilon {e}").format(
                name=shown(q.name),
                what=f"{q.statistic}{col}{extra}",
                mechanism=q.mechanism,
                e=_g(q.epsilon),
            )
            + (_(", delta {d}").format(d=f"{q.delta:g}") if q.delta else ""),
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
                    e=_g(t["error"]),
                    c=f"{t['confidence']:g}",
                    cells=" " + _("(all cells together)") if t.get("cells") == "all" else "",
                    eps=_g(q.epsilon),
                ),
                file=out,
            )
        for c in q.components:
            if c.mechanism == "exponential":
                print(
                    "    "
                    + _("utility sensitivity {s}: {why}").format(
                        s=_g(c.sensitivity_used), why=shown(c.derivation)
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
                        s=_g(c.sensitivity_used),
                        why=shown(c.derivation),
                        name=shown(name),
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
            ).format(n=rep.releases_so_far, e=_g(rb.epsilon), d=f"{rb.delta:.3g}"),
            file=out,
        )
    if rep.fits:
        print(
            _("Left after this plan: epsilon {e}, delta {d}").format(e=_g(ra.epsilon), d=f"{ra.delta:.3g}"),
            file=out,
        )
        for warning in report_warnings(rep):
            print(warning, file=out)
    else:
        print(
            _(
                "OVER BUDGET under {method}, the method in force: left before this plan epsilon {e}, delta {d}"
            ).format(method=method_name(rep.method), e=_g(max(0.0, rb.epsilon)), d=f"{rb.delta:.3g}"),
            file=out,
        )


def _cmd_release(args: argparse.Namespace) -> int:
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
    plan = _load_plan(args.plan, args.codebook)

    def show_check(check: Any) -> None:  # before anything is charged; on stderr, never in a file
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
    )
    if args.check:
        return _check_release(request, show_check)
    result = release_plan(request, _progress(), on_data_check=show_check)
    _DONE.append(
        _(
            "the release was done nonetheless: charged to the ledger (entry {seq}) and written to {out}; do not run "
            "it again (dpdesk ledger verify --data FILE lists it)"
        ).format(seq=result.entry.seq, out=shown(out))
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    _tell_migration(result.migration)
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
            e=_g(e.charged.epsilon),
            d=f"{e.charged.delta:.3g}",
            method=e.method,
            seq=e.seq,
            hash=e.hash[:12],
        )
    )
    from dpdesk.core.ledger.budget import entry_warnings

    for warning in entry_warnings(e):
        print(warning)
    return 0


def _check_release(request: Any, show_check: Callable[[Any], None]) -> int:
    """``release --check``: the release's first step alone; exit 0 when the plan fits, 1 when it does not."""
    from dpdesk.services.release import check_release

    checked = check_release(request, _progress(), on_data_check=show_check)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if checked.dataset:
        print(_("Dataset {id}.").format(id=checked.dataset))
    else:
        print(_("A new dataset: its first release fixes its budget, unit of privacy and accounting."))
    _print_budget(checked.report, read_data=True)
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


def _cmd_simulate(args: argparse.Namespace) -> int:
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
    plan = _load_plan(args.plan, args.codebook)
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
    result = simulate_releases(request, _progress())
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
        f = synthetic_fidelity(FidelityRequest(plan, dpdesk_home(), q.name, public, runs, seed), _progress())
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
                eps=f"{q.epsilon:g}",
                t2=f"{100 * f.two_way:.1f}%",
                t1=f"{100 * f.one_way:.1f}%",
                b2=f"{100 * f.independent_two_way:.1f}%",
                b1=f"{100 * f.independent_one_way:.1f}%",
            )
        )


def _cmd_ledger(args: argparse.Namespace) -> int:
    """``dpdesk ledger VERB``; without a verb, list and verify as before, or run an old spelling (with a note)."""
    if args.verb is not None:
        given = [flag for flag, _kind in _OLD_LEDGER_FLAGS if getattr(args, _old_dest(flag)) is not None]
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
    modes = [flag for flag in _OLD_LEDGER_MODES if getattr(args, _old_dest(flag)) is not None]
    if len(modes) > 1:  # each is its own action; doing only the first would silently skip the others
        raise UsageError(
            _("{modes} cannot be combined: run dpdesk ledger once for each").format(modes=", ".join(modes))
        )
    data = args.ledger_data
    if modes and data is None:
        raise UsageError(_("--export-release, --change-settings, --export and --statement need --data"))
    mode = modes[0] if modes else None
    companion = _OLD_LEDGER_MODES[mode][2] if mode else None
    stray = [f for f in ("--out", "--reason") if f != companion and getattr(args, _old_dest(f)) is not None]
    stray += ["--json"] if mode and args.ledger_json else []
    if stray:  # an option of another action would be ignored silently: refuse it
        raise UsageError(
            _("{options} cannot be used with {command}").format(
                options=", ".join(stray), command=_OLD_LEDGER_MODES[mode][0] if mode else "dpdesk ledger"
            )
        )
    if mode is None:
        if data is None:
            return _ledger_list(args.ledger_json)
        return _ledger_verify(data, args.ledger_json)
    old, new, _companion = _OLD_LEDGER_MODES[mode]
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

    status = verify_ledger(VerifyRequest(_dataset(data)), notify=_tell_migration)
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
        _dataset(data),
        reason,
        _stated_costs(costs, costs_file),
        Path(settings) if settings else None,
        tuple(Path(x) for x in exported),
        approval=Path(approval) if approval else None,
    )
    try:
        e = acknowledge(request, notify=_tell_migration).entry
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


def _stated_costs(costs: Sequence[str], costs_file: str | None) -> tuple[Any, ...]:
    """The stated costs of ``--cost`` options and a ``--costs`` file."""
    from dpdesk.core.ledger.carryover import parse_stated_cost, stated_costs_from_json

    stated = [parse_stated_cost(c) for c in costs]
    if costs_file is not None:
        try:
            stated += stated_costs_from_json(read_small_file(costs_file, MAX_PLAN_BYTES))
        except OSError as exc:
            raise UsageError(
                _("cannot read {path}: {err}").format(path=shown(costs_file), err=exc.strerror or exc)
            ) from None
    return tuple(stated)


def _ledger_head(data: str, as_json: bool) -> int:
    from dpdesk.services.ledger import HeadRequest, ledger_head

    info = ledger_head(HeadRequest(_dataset(data)), notify=_tell_migration)
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
            _dataset(data), Path(officer), require_signed_plans, Path(approval) if approval else None
        ),
        notify=_tell_migration,
    )
    print(
        _("Recorded governance for dataset {id} (ledger entry {seq}).").format(
            id=shown(done.record.dataset), seq=done.entry.seq
        )
    )
    from dpdesk.core.governance.officer import describe_governance

    print(describe_governance(done.record))
    return 0


def _passphrase(path: str | None, prompt: str, *, confirm: bool = False) -> str:
    """A passphrase: the first line of ``path``, or asked for without echo (twice to confirm a new one)."""
    if path is not None:
        try:
            text = read_small_file(path, 64 * 1024).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise UsageError(
                _("cannot read the passphrase file {path}: {err}").format(path=shown(path), err=shown(why))
            ) from None
        return text.splitlines()[0] if text.splitlines() else ""
    import getpass

    first = getpass.getpass(prompt)
    if confirm and getpass.getpass(_("Again, to confirm: ")) != first:
        raise UsageError(_("the two passphrases differ"))
    return first


def _cmd_officer(args: argparse.Namespace) -> int:
    from dpdesk.services import officer as svc

    verb = args.officer_verb
    if verb == "create":
        files = svc.create_officer(
            svc.CreateOfficerRequest(
                Path(args.out),
                args.name,
                args.contact,
                _passphrase(args.passphrase_file, _("Passphrase for the officer key: "), confirm=True),
                _passphrase(
                    args.recovery_passphrase_file, _("Passphrase for the recovery key: "), confirm=True
                ),
            )
        )
        print(
            _("Officer key of {name}: fingerprint {fp}").format(
                name=files.officer.shown_name, fp=files.officer.fingerprint
            )
        )
        print(_("Recovery key fingerprint: {fp}").format(fp=files.officer.recovery_fingerprint))
        print(_("Give to curators: {path}").format(path=shown(files.public)))
        print(_("Keep, with its passphrase: {path}").format(path=shown(files.private)))
        print(
            _("Keep offline and apart (it replaces a lost officer key): {path}").format(
                path=shown(files.recovery)
            )
        )
        return 0
    if verb == "show":
        pub = svc.show_officer(Path(args.public))
        print(
            _("Officer: {name} {contact}").format(
                name=pub.shown_name, contact=f"<{shown(pub.contact)}>" if pub.contact else ""
            )
        )
        print(_("Officer key fingerprint: {fp}").format(fp=pub.fingerprint))
        print(_("Recovery key fingerprint: {fp}").format(fp=pub.recovery_fingerprint))
        print(_("Created: {when}").format(when=shown(pub.created)))
        return 0
    from dpdesk.core.ledger.entries import is_dataset_id
    from dpdesk.core.ledger.governed import parse_head

    if not is_dataset_id(args.dataset):
        raise UsageError(_("{name} is not a dataset's public name (ds-...)").format(name=shown(args.dataset)))
    head = parse_head(args.head)
    if verb == "approve-plan":
        action, params = "approve_plan", svc.plan_approval(Path(args.plan))
    elif verb == "approve-settings":
        action, params = "change_settings", svc.settings_approval(Path(args.plan))
    elif verb == "approve-acknowledge":
        action = "acknowledge"
        params = svc.acknowledge_approval(
            args.reason, _stated_costs(args.cost, args.costs), Path(args.settings) if args.settings else None
        )
    elif verb == "approve-policy":
        action, params = "change_policy", svc.policy_approval(args.require_signed_plans)
    elif verb == "approve-declare-new":
        action, params = "declare_new", svc.declare_new_approval(args.new_dataset)
    elif verb == "approve-forget-identity":
        action, params = "forget_identity", svc.forget_identity_approval(args.reason)
    elif verb == "approve-merge":
        action, params = "merge", svc.merge_approval(args.retired, args.into)
    else:
        action, params = "rotate_key", svc.rotate_approval(Path(args.new_officer))
    prompt = (
        _("Passphrase for the recovery key: ")
        if action == "rotate_key"
        else _("Passphrase for the officer key: ")
    )
    done = svc.approve(
        svc.ApproveRequest(
            Path(args.key),
            _passphrase(args.passphrase_file, prompt),
            args.dataset,
            head,
            action,
            params,
            Path(args.out),
            args.expires_days,
        )
    )
    print(
        _(
            "Wrote {out}: {action} for dataset {id} at ledger entry {seq}, signed by key {fp}. It is good for one use."
        ).format(
            out=shown(done.out),
            action=shown(done.action),
            id=shown(done.dataset),
            seq=done.head.seq,
            fp=done.fingerprint,
        )
    )
    return 0


def _print_costs_needed(need: Any, data: str) -> None:
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
                    e=_g(o.cost.epsilon),
                    d=_g(o.cost.delta),
                    r=_g(o.cost.rho),
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
                    ).format(e=_g(whole.epsilon), d=_g(whole.delta), r=_g(whole.rho)),
                    file=sys.stderr,
                )
                suggest.append(f"--cost {shown(u.label)}={whole.epsilon!r},{whole.delta!r},{whole.rho!r}")
        else:
            print(
                "    "
                + _("offered (the largest): epsilon {e}, delta {d}, rho {r}").format(
                    e=_g(best.epsilon), d=_g(best.delta), r=_g(best.rho)
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

    done = export_ledger(ExportLedgerRequest(_dataset(data), Path(out), force), notify=_tell_migration)
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

    done = write_statement(StatementRequest(_dataset(data), Path(out), force), notify=_tell_migration)
    print(_("Wrote the budget statement of {path} to {out}.").format(path=shown(data), out=shown(out)))
    return 0 if done.entries else 3


def _ledger_change_settings(data: str, plan: str, reason: str | None, approval: str | None = None) -> int:
    from dpdesk.services.ledger import ChangeSettingsRequest, change_settings

    request = ChangeSettingsRequest(
        _dataset(data), Path(plan), reason or "", Path(approval) if approval else None
    )
    done = change_settings(request, notify=_tell_migration)
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
            ).format(n=len(done.rescaled), e=_g(done.added_total), seq=corr.seq)
        )
    return 0


def _ledger_export_release(data: str, seq: int, out: str) -> int:
    from dpdesk.services.ledger import ReexportRequest, reexport_release

    done = reexport_release(ReexportRequest(_dataset(data), seq, Path(out)), notify=_tell_migration)
    print(_("Re-exported release {seq} to {out} (no budget spent).").format(seq=seq, out=shown(done.out)))
    return 0


_LEDGER_VERBS: dict[str, Any] = {
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

    done = link_dataset(LinkRequest(_dataset(data), to), _progress())
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

    dataset = _dataset(data)
    try:
        done = declare_new(
            DeclareNewRequest(dataset, resembles, reason, Path(approval) if approval else None), _progress()
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

    request = MergeRequest(_dataset(data), tuple(Path(a) for a in approvals))
    try:
        done = merge_datasets(request, _progress())
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
                spent=f"{h.spent_epsilon:.6g}",
                budget=f"{h.budget.epsilon:.6g}",
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


def _print_ledger(ledger: Any, as_json: bool, *, brief: bool) -> int:
    """Print a verified ledger (a :class:`dpdesk.services.ledger.LedgerStatus`); returns 0, or 3 if broken."""
    entries = list(ledger.entries)
    if ledger.error is None:
        status, said, code = "chain verified", _("chain verified"), 0
    else:  # JSON keeps the English status words for scripts; the screen is translated
        status, said, code = f"BROKEN: {ledger.error}", _("BROKEN: {err}").format(err=shown(ledger.error)), 3
    if as_json:
        print(
            json.dumps(
                {"dataset": ledger.dataset, "status": status, "entries": [e.to_dict() for e in entries]},
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
                e=f"{b['epsilon']:g}", d=f"{b['delta']:g}", method=shown(method), n=ledger.releases
            )
            + (
                _("; left: epsilon {e}, delta {d}").format(e=_g(spent.epsilon), d=f"{spent.delta:.3g}")
                if spent
                else ""
            )
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
                    e=_g(c.epsilon), d=f"{c.delta:.3g}", names=names
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
                    e=_g(changes.get(e.seq, e.added_epsilon)), n=len(e.releases)
                )
            )
        elif isinstance(e, SettingsEntry):
            print(
                f"  {e.seq:>4}  {shown(e.time)}  "
                + _("settings  budget epsilon {e}, delta {d}, {method}: {reason}").format(
                    e=f"{e.budget_epsilon:g}",
                    d=f"{e.budget_delta:g}",
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


def _cmd_review(args: argparse.Namespace) -> int:
    from dpdesk.services.review import ReviewRequest, review_path

    reviewed = review_path(ReviewRequest(args.path, args.against))
    r = reviewed.review
    if args.json:
        print(json.dumps(reviewed.summary(), indent=2, ensure_ascii=False))
        return 0 if r.intact else 1
    if r.kind == "ledger":
        print(
            _("Ledger {path}: {status} ({n} entries)").format(
                path=shown(args.path),
                status=_("chain verified") if r.intact_itself else _("BROKEN"),
                n=len(r.entries),
            )
        )
    else:
        s = r.spend or {}
        print(_("Release package {path}").format(path=shown(args.path)))
        if s:
            c = s.get("charged")
            c = c if isinstance(c, dict) else {}  # null in a forged package: shown as None, never a crash
            print(
                "  "
                + _("release {rid} of {time}, dataset {id}").format(
                    rid=shown(s.get("release_id", "?")),
                    time=shown(s.get("time", "?")),
                    id=shown(s.get("dataset", "?")),
                )
            )
            print(
                "  "
                + _("accounting: {method}; spent epsilon {e}, delta {d}").format(
                    method=shown(s.get("method")), e=shown(c.get("epsilon")), d=shown(c.get("delta"))
                )
            )
            for m, t in (s.get("totals") or {}).items():
                if t:
                    print(
                        f"    {shown(m):<10} "
                        + _("epsilon {e}, delta {d}").format(e=f"{t['epsilon']:.6g}", d=f"{t['delta']:.3g}")
                    )
            if r.plan:
                print(
                    "  "
                    + _("plan: {title}, {n} queries").format(
                        title=shown(r.plan.get("title") or _("(untitled)")), n=len(r.plan.get("queries", []))
                    )
                )
        for name, status in r.files.items():
            print(f"  {shown(name)}: {shown(status)}")
    if r.head is not None:
        print(
            "  "
            + _("ledger head: entry {seq} (hash {hash})").format(
                seq=shown(r.head["seq"]), hash=shown(r.head["hash"])
            )
        )
    for note in r.notes:
        print("  " + _("note: {line}").format(line=shown(note)))
    for p in r.problems:
        print("  " + _("PROBLEM: {p}").format(p=shown(p)))
    if r.intact:
        print(_("Intact."))
        print(shown(r.proves))
    elif r.intact_itself and r.against is not None:
        print(
            _(
                "NOT INTACT: the later ledger {later} is behind {path}, replaced or broken; {path} itself is intact "
                "(see the problems above)."
            ).format(later=shown(r.against), path=shown(args.path))
        )
    else:
        print(_("NOT INTACT: see the problems above."))
    return 0 if r.intact else 1


def _cmd_suggest(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["PlanError", "main"]
