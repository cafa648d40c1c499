"""``dpdesk review``: check a release package or an exported ledger (read-only)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.text import shown
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.entries import SpendEntry


def run(args: argparse.Namespace) -> int:
    """``dpdesk review PATH``: check a package or an exported ledger; 0 if intact, 1 if not."""
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
        s: SpendEntry | dict[str, Any] = r.spend or {}
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
                        + _("epsilon {e}, delta {d}").format(
                            e=numfmt.plain(t["epsilon"], 6), d=numfmt.delta(t["delta"])
                        )
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
