"""``dpdesk team VERB``: the team's ledger in PostgreSQL (create it, give roles, connect this home, status)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dpdesk.core.common import shown as numfmt
from dpdesk.core.publish import words
from dpdesk.i18n import _


def run(args: argparse.Namespace) -> int:
    """``dpdesk team VERB``."""
    from dpdesk.core.common.home import dpdesk_home
    from dpdesk.services import team as svc

    verb = args.team_verb
    if verb == "init":
        if args.print_sql:
            print(svc.upgrade_sql(args.prefix) if args.upgrade else svc.init_sql(args.prefix), end="")
            return 0
        if not args.url:
            from dpdesk.core.common.errors import UsageError

            raise UsageError(_("dpdesk team init needs the database's URL (or --print-sql)"))
        server, outcome = svc.init(args.url, args.prefix)
        if outcome == "current":
            print(_("The team ledger at {server} is up to date; nothing was changed.").format(server=server))
            return 0
        if outcome == "upgraded":
            print(
                _(
                    "Upgraded the team ledger at {server} to this dpdesk's schema; its entries were kept."
                ).format(server=server)
            )
            return 0
        print(
            _(
                "Created the team ledger at {server} (roles {prefix}_curator, {prefix}_officer, {prefix}_auditor)."
            ).format(server=server, prefix=args.prefix)
        )
        print(
            _("Next: dpdesk team add-curator NAME --url URL, then each curator runs dpdesk team connect URL.")
        )
        return 0
    if verb == "grant":
        made = svc.grant(args.url, args.user, args.role)
        if made:
            print(
                _("Made the login role {user} (set its password with your database's tools).").format(
                    user=args.user
                )
            )
        print(_("{user} is now {role} of the team.").format(user=args.user, role=_a_role(args.role)))
        return 0
    home = dpdesk_home()
    if verb == "import":
        return _import(args, home)
    if verb.startswith(("add-", "remove-")):
        return _people(args, home)
    if verb == "who":
        return _who(args, home)
    if verb == "statement":
        return _statement(args, home)
    if verb == "connect":
        st = svc.connect(home, args.url, leave_local=args.leave_local_ledgers)
        assert st.details is not None
        print(
            _("This dpdesk home now uses the team ledger at {server} as {user}.").format(
                server=st.url, user=st.details["user"]
            )
        )
        return 0
    if verb == "disconnect":
        if svc.disconnect(home):
            print(_("This dpdesk home uses its own ledgers again."))
            print(
                _(
                    "What was released through the team's ledger is not in them: a table of the team released here "
                    "starts from this home's own history."
                )
            )
        else:
            print(_("This dpdesk home was not connected to a team ledger."))
        return 0
    st = svc.status(home, max(args.latest, 0))
    if args.json:
        print(
            json.dumps({"team_ledger": st.url, **(st.details or {}), "team_datasets": st.datasets}, indent=2)
        )
        return 0
    if st.url is None:
        print(_("This dpdesk home uses its own ledgers (no team ledger)."))
        return 0
    d = st.details
    assert d is not None
    role = _("officer") if d["officer"] else _("curator") if d["curator"] else _("auditor (read only)")
    print(_("Team ledger: {server}").format(server=st.url))
    print(_("User: {user} ({role})").format(user=d["user"], role=role))
    print(_("Datasets with entries: {n}").format(n=d["datasets"]))
    for ds in st.datasets or []:
        _print_dataset(ds)
    return 0


def _num(x: float) -> str:
    return numfmt.plain(x, 6)


def _print_dataset(ds: dict[str, Any]) -> None:
    print()
    print(
        _("{dataset}: {entries} entries, {n} release(s)").format(
            dataset=ds["dataset"], entries=ds["entries"], n=ds["releases"]
        )
    )
    if ds["budget"] is not None:
        b = ds["budget"]
        print(
            _("  budget: epsilon {e}, delta {d} ({method})").format(
                e=_num(b["epsilon"]), d=_num(b["delta"]), method=ds["method"]
            )
        )
    if ds["spent"] is not None and ds["left"] is not None:
        s, left = ds["spent"], ds["left"]
        print(
            _("  spent: epsilon {e}, delta {d}; left: epsilon {le}, delta {ld}").format(
                e=_num(s["epsilon"]), d=_num(s["delta"]), le=_num(left["epsilon"]), ld=_num(left["delta"])
            )
        )
    problems = {
        "no_budget": _("  pending: no budget fixed yet (no settings entry)"),
        "total_unknown": _(
            "  broken: its total cannot be computed from its entries (ask the privacy officer)"
        ),
        "overspent": _(
            "  broken: spent more than its budget (carried or merged releases; no release is possible)"
        ),
        "merged": _("  closed: merged into another dataset"),
    }
    for p in ds["problems"]:
        print(problems.get(p, p))
    for r in ds["latest"]:
        if r.get("kind") == "import":
            print(
                _(
                    "  imported {when} by {user}: {n} release(s) of their home's dataset {source}, epsilon {e}, "
                    "delta {d}"
                ).format(
                    when=r["released"][:19].replace("T", " "),
                    user=r["released_by"],
                    n=r["releases"],
                    source=r["imported_from"],
                    e=_num(r["charged"]["epsilon"]),
                    d=_num(r["charged"]["delta"]),
                )
            )
            continue
        print(
            _("  released {when} by {user}: epsilon {e}, delta {d} ({release})").format(
                when=r["released"][:19].replace("T", " "),
                user=r["released_by"],
                e=_num(r["charged"]["epsilon"]),
                d=_num(r["charged"]["delta"]),
                release=r["release_id"],
            )
        )


def _a_role(role: str) -> str:
    """A team role as a sentence names one person holding it."""
    return {"curator": _("a curator"), "officer": _("an officer"), "auditor": _("an auditor")}[role]


def _people(args: argparse.Namespace, home: Path) -> int:
    from dpdesk.services import team as svc

    action, role, user = args.team_action, args.team_role, args.user
    if args.print_sql:
        print(svc.person_sql(args.prefix, user, role, remove=action == "remove"), end="")
        return 0
    url = svc.people_url(home, args.url)
    if action == "add":
        if svc.grant(url, user, role):
            print(
                _(
                    "Made the login role {user}, without a password: libpq's password file, the server's pg_hba.conf "
                    "or your database's tools decide how it logs in."
                ).format(user=user)
            )
        print(_("{user} is now {role} of the team.").format(user=user, role=_a_role(role)))
        return 0
    if svc.revoke(url, user, role):
        print(
            _(
                "{user} is no longer {role} of the team; every entry they made stays in the ledger, under their name."
            ).format(user=user, role=_a_role(role))
        )
    else:
        print(
            _("{user} was not {role} of the team; nothing was changed.").format(user=user, role=_a_role(role))
        )
    return 0


def _who(args: argparse.Namespace, home: Path) -> int:
    from dpdesk.services import team as svc

    team = svc.who(svc.people_url(home, args.url))
    if args.json:
        print(json.dumps({"team_ledger": team.server, **team.people}, indent=2))
        return 0
    print(_("Team ledger: {server}").format(server=team.server))
    labels = {"curator": _("Curators"), "officer": _("Officers"), "auditor": _("Auditors")}
    for role, names in team.people.items():
        print(_("{label}: {names}").format(label=labels[role], names=", ".join(names) or _("(none)")))
    return 0


def _statement(args: argparse.Namespace, home: Path) -> int:
    """``dpdesk team statement --out FILE.pdf``: exit 3 when a dataset's chain is broken (its page says so)."""
    from dpdesk.cli.printer import progress
    from dpdesk.core.common.text import shown
    from dpdesk.services import team as svc

    done = svc.write_team_statement(home, Path(args.out), force=args.force, progress=progress())
    if sys.stderr.isatty():
        print(file=sys.stderr)  # after the progress line
    print(
        _("Wrote the budget statement of the team's {n} dataset(s) to {out}.").format(
            n=done.datasets, out=shown(str(done.out))
        )
    )
    if done.broken:
        print(
            _("{n} dataset(s) have a broken ledger; the statement says which (dpdesk ledger verify).").format(
                n=done.broken
            )
        )
        return 3
    return 0


def _import(args: argparse.Namespace, home: Path) -> int:
    from dpdesk.services.team_import import import_dataset

    done = import_dataset(home, Path(args.data), encoding=args.encoding)
    if done.already:
        print(
            _(
                "Dataset {local} of this home was imported into the team's dataset {team} before; nothing was "
                "changed."
            ).format(local=done.local, team=done.team)
        )
    else:
        print(
            _(
                "Imported dataset {local} of this home into the team ledger at {server} as dataset {team}."
            ).format(local=done.local, server=done.server, team=done.team)
        )
        print(_("Releases carried into the team's ledger: {n}.").format(n=done.carried))
        if done.joined:
            print(
                _(
                    "The team already held this table: its releases and this home's are charged to one budget, the "
                    "smaller of the two."
                )
            )
        print(
            _(
                "This home's own ledger of it is closed: nothing is charged to it any more, connected to the team "
                "or not."
            )
        )
    s = done.spent
    if s is not None:
        print(
            _("The team's dataset: epsilon {spent} spent of {budget} ({method}).").format(
                spent=numfmt.plain(s.spent_epsilon, 6, "up"),
                budget=_num(s.budget.epsilon),
                method=words.accounting(s.method),
            )
        )
    if done.overspent:
        print(
            _(
                "The team's dataset has spent more than its budget: no release of it is possible until a privacy "
                "officer of the team decides (dpdesk ledger change-settings, as an officer)."
            )
        )
    return 0
