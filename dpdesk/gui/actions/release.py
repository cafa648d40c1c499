"""The release in two steps: *prepare* in the worker (nothing charged), the curator's confirmation with the budget
and the data check's counts, then *commit* in the worker (charged only if the ledger has not moved since).

The table's exact statistics are computed where File > Aggregation engine says: this computer (the default) or
Apache Spark (``local[N]`` inside dpdesk, or a Spark Connect server). The choice is kept in the settings, but for a
token in the address, kept for the session only (:meth:`Release.remember_engine`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common import shown as numfmt
from dpdesk.core.publish import words
from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.core.release.datacheck import DataCheck
    from dpdesk.core.release.steps import PreparedRelease
    from dpdesk.gui.views.engine_dialog import EngineChoice
    from dpdesk.gui.workers import Worker
    from dpdesk.services.release import Released

log = logging.getLogger(__name__)


#: the settings' keys of the engine's choice (never the token of a Spark Connect address)
ENGINE_KEY, CORES_KEY, REMOTE_KEY = "release/engine", "release/spark_cores", "release/spark_remote"


def release_question(
    rep: BudgetReport, name: str, check: DataCheck, spark: str | None = None
) -> tuple[str, str]:
    """The confirmation's title and text: what will be spent and remain, the data check's counts and, with
    ``spark`` (the Spark's master or address as shown, never its token), that Spark aggregates the table."""
    m = rep.in_force
    text = _(
        "This release will spend ε {e} and δ {d} ({method} accounting) from the budget of {name}.\n"
        "Afterwards ε {le} and δ {ld} will remain.\n\nThe noisy values are recorded in the dataset's ledger "
        "before they are shown. Running the plan again later costs budget again."
    ).format(
        e=numfmt.epsilon(m.plan.epsilon, "up"),
        d=numfmt.delta(m.plan.delta, "up"),
        method=words.accounting(rep.method),
        name=name,
        le=numfmt.epsilon(rep.remaining_after.epsilon, "down"),
        ld=numfmt.delta(rep.remaining_after.delta, "down"),
    )
    from dpdesk.core.ledger.budget import report_warnings

    for warning in report_warnings(rep):
        text += "\n\n" + warning
    if spark is not None:
        text += "\n\n" + _(
            "The table will be aggregated by Spark at {address}: its exact statistics are computed there; the "
            "noise is drawn here."
        ).format(address=spark)
    text += "\n\n" + check.heading() + "\n" + "\n".join("• " + line for line in check.lines())
    title = _("Release")
    if check.problems:
        title = _("Release despite data problems?")
        text += "\n\n" + _(
            "Warning: values outside the declared categories, or unparsable values, in {cols}. They "
            "count as missing, so the statistics would leave them out (a misspelled category gets a "
            "count of almost nothing). Check the plan's category lists and the data before you spend "
            "budget on them."
        ).format(cols=", ".join(repr(c.name) for c in check.problems))
    return title, text + "\n\n" + _("Release now?")


class Release(Action):
    """File > Release: the open plan on the open table, with the approval imported for it, if any."""

    def release(self) -> Worker | None:
        """Load and check the table (nothing charged), ask with the budget and the data check's counts, then
        charge and release in a worker."""
        window, state = self.window, self.state
        ok, why = state.can_release()
        if not ok or state.plan is None or state.report is None or state.data_path is None:
            window.show_error(why)
            return None
        plan, path, home = state.plan, state.data_path, state.home
        approval = window.pending_approval
        from dpdesk.core.common.errors import DpdeskError

        try:
            spark = self.engine_choice().target()  # the engine chosen (File > Aggregation engine)
        except DpdeskError as exc:  # an address kept from before and refused now: said, nothing done
            window.show_error(str(exc))
            return None
        cluster = state.cluster
        if cluster is not None and spark is None:  # its rows are not here: only Spark can aggregate it
            window.show_error(
                _(
                    "{source} is read by Spark: choose Apache Spark in File > Aggregation engine to release it."
                ).format(source=cluster.source)
            )
            return None
        if cluster is None and spark is not None:
            from dpdesk.core.release.engines.spark.session import on_this_machine

            if not on_this_machine(spark):
                # the opened file is this computer's: a server elsewhere would read a file of its own at that path
                window.show_error(
                    _(
                        "{address} is not this computer: it reads the cluster's tables (File > Open Spark table), "
                        "not the file opened here. Choose this computer or Spark inside dpdesk in File > "
                        "Aggregation engine to release it. Nothing was charged"
                    ).format(address=spark.shown)
                )
                return None
        # a table only the cluster reads: its source as --data names it, which Spark reads and names by its content
        data: str | Path = cluster.source if cluster is not None else path

        def prepare(progress: Progress) -> PreparedRelease:
            from dpdesk.services.release import ReleaseRequest, prepare_plan_release

            # the release's first step: nothing is charged; the curator sees its numbers and the data check's
            # counts, and chooses (data problems included) before the second step charges
            request = ReleaseRequest(
                plan,
                data,
                home,
                None,
                encoding=cluster.encoding if cluster is not None else None,
                delimiter=cluster.delimiter if cluster is not None else None,
                accept_data_problems=True,
                approval=approval,
                spark=spark,
            )
            return prepare_plan_release(request, progress)

        def prepared(result: PreparedRelease) -> None:
            rep = result.report
            assert rep is not None  # the service read the ledger (read_ledger=True)
            if not rep.fits:
                result.close()
                state.read_ledger()  # the meter shows what the ledger holds now
                window.show_error(
                    _(
                        "This plan no longer fits what is left of the budget of {name} (the ledger has changed "
                        "since it was opened); nothing was charged."
                    ).format(name=path.name)
                )
                return
            window.confirm_yes_text = _("Spend ε {e} and release").format(
                e=numfmt.epsilon(rep.in_force.plan.epsilon, "up")
            )
            if window.ask_confirm(
                *release_question(rep, path.name, result.check, spark.shown if spark is not None else None)
            ):
                window._charge_and_release(result, approval)  # through the window, where a test can watch it
            else:
                result.close()

        return self.run(prepare, prepared, _("Checking {name}…").format(name=path.name))

    def charge_and_release(self, prepared: PreparedRelease, approval: Path | None) -> Worker:
        """The second step, after the curator said yes: charge, draw, show the results."""
        window, state = self.window, self.state

        def job(progress: Progress) -> Released:
            from dpdesk.services.release import commit_plan_release

            # charged only if the ledger is where it was when the curator was asked (else nothing is charged)
            return commit_plan_release(prepared, None, progress=progress)

        def done(result: Released) -> None:
            if approval is not None:
                window.pending_approval = None  # used: an approval is good for one release
            from dpdesk.gui.models import release_number

            state.read_ledger()
            e = result.entry
            title = _("Release #{seq}: spent ε {e}, δ {d}. These values are recorded in the ledger.").format(
                seq=release_number(state.ledger_entries, e.seq),
                e=numfmt.epsilon(e.charged.epsilon, "up"),
                d=numfmt.delta(e.charged.delta, "up"),
            )
            state.show_results([r.as_list() for r in result.rows], title, e)
            window.set_status(title)
            if result.notes:
                log.info("load note shown (its counts are for the screen only, not for the log)")
            if result.notes:
                window.set_status(_("Note (for you only, not released): {n}").format(n=result.notes[0]))
            window.tabs.setCurrentWidget(window.results_view)

        return self.run(job, done, _("Releasing…"))

    # ------------------------------------------------------------------ where the table is aggregated
    def engine_choice(self) -> EngineChoice:
        """The engine chosen: the settings', with the session's Spark Connect address if it has a token."""
        from dpdesk.gui.views.engine_dialog import HERE, LOCAL, REMOTE, EngineChoice

        settings = self.window.settings
        kind = str(settings.value(ENGINE_KEY, HERE) or HERE)
        try:
            cores = max(1, int(str(settings.value(CORES_KEY, 2))))
        except ValueError:
            cores = 2
        remote = self.window.session_remote or str(settings.value(REMOTE_KEY, "") or "")
        return EngineChoice(kind if kind in (HERE, LOCAL, REMOTE) else HERE, cores, remote)

    def remember_engine(self, choice: EngineChoice) -> None:
        """Keep the choice in the settings; an address with a token is kept whole for this session only (the
        settings keep it without its token)."""
        from dpdesk.core.release.engines.spark.session import has_token, without_token

        settings = self.window.settings
        settings.setValue(ENGINE_KEY, choice.kind)
        settings.setValue(CORES_KEY, choice.cores)
        settings.setValue(REMOTE_KEY, without_token(choice.remote))
        self.window.session_remote = choice.remote if has_token(choice.remote) else None

    def choose_engine(self) -> EngineChoice | None:
        """File > Aggregation engine: the dialog (which checks the address), then the choice kept; None if
        cancelled."""
        window = self.window
        choice = window.ask_engine(self.engine_choice())
        if choice is None:
            return None
        from dpdesk.core.common.errors import DpdeskError

        try:
            target = choice.target()
        except DpdeskError as exc:  # the dialog checks it first; said here too, and nothing kept
            window.show_error(str(exc))
            return None
        self.remember_engine(choice)
        from dpdesk.core.release.engines.spark.session import on_this_machine

        if target is None:
            window.set_status(_("Releases will be aggregated on this computer."))
        elif on_this_machine(target):
            window.set_status(
                _("Releases will be aggregated by Spark at {address}.").format(address=target.shown)
            )
        else:
            window.set_status(
                _("Spark at {address} will aggregate the cluster's tables (File > Open Spark table).").format(
                    address=target.shown
                )
            )
        return choice
