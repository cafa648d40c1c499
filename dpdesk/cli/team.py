"""``dpdesk team VERB``: the team's ledger in PostgreSQL (create it, give roles, connect this home, status)."""

from __future__ import annotations

import argparse

from dpdesk.i18n import _


def run(args: argparse.Namespace) -> int:
    """``dpdesk team VERB``."""
    from dpdesk.core.common.home import dpdesk_home
    from dpdesk.services import team as svc

    verb = args.team_verb
    if verb == "init":
        if args.print_sql:
            print(svc.init_sql(args.prefix), end="")
            return 0
        if not args.url:
            from dpdesk.core.common.errors import UsageError

            raise UsageError(_("dpdesk team init needs the database's URL (or --print-sql)"))
        server = svc.init(args.url, args.prefix)
        print(
            _(
                "Created the team ledger at {server} (roles {prefix}_curator, {prefix}_officer, {prefix}_auditor)."
            ).format(server=server, prefix=args.prefix)
        )
        print(
            _(
                "Next: dpdesk team grant URL USER --role curator, then each curator runs dpdesk team connect URL."
            )
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
        print(_("{user} is now a {role} of the team.").format(user=args.user, role=args.role))
        return 0
    home = dpdesk_home()
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
    st = svc.status(home)
    if st.url is None:
        print(_("This dpdesk home uses its own ledgers (no team ledger)."))
        return 0
    d = st.details
    assert d is not None
    role = _("officer") if d["officer"] else _("curator") if d["curator"] else _("auditor (read only)")
    print(_("Team ledger: {server}").format(server=st.url))
    print(_("User: {user} ({role})").format(user=d["user"], role=role))
    print(_("Datasets with entries: {n}").format(n=d["datasets"]))
    return 0
