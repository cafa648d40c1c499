"""Uncharged simulations: releases of the plan on a stand-in table or a public file, and a synthetic table's
expected fidelity. Never on the table opened for release (its hash is passed for the services to refuse it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.preview.simulate import Fidelity
    from dpdesk.gui.workers import Worker
    from dpdesk.services.simulate import Simulated


class Simulations(Action):
    """Tools > Simulate releases; the preview's "Estimate fidelity" of a synthetic-table query."""

    def simulate_releases(self) -> Worker | None:
        """Uncharged noisy releases of the plan on a stand-in table or a file declared public, written to a
        CSV marked not for publication (never on the table opened for release)."""
        window, state = self.window, self.state
        if state.plan is None:
            window.show_error(state.plan_error or _("The plan is not complete."))
            return None
        choice = window.ask_simulation()
        if choice is None:
            return None
        replace = choice.replace_confirmed
        if not replace and choice.out.is_file():  # typed by hand: ask here, in the app's words
            replace = window.ask_confirm(
                _("Replace the file?"),
                _("{path} already exists. Replace it with the simulated releases?").format(path=choice.out),
            )
            if not replace:
                return None
        plan, home, private = state.plan, state.home, state.sha256
        reads = tuple(p for p in (state.plan_path, state.data_path) if p is not None)

        def job(progress: Progress) -> Simulated:
            from dpdesk.services.simulate import SimulateRequest, simulate_releases

            request = SimulateRequest(
                plan,
                home,
                choice.out,
                runs=choice.runs,
                rows=choice.rows,
                public=choice.public,
                private_sha=private,
                force=replace,  # the user agreed to replace it (the data, the plan and the home stay refused)
                reads=reads,
            )
            return simulate_releases(request, progress)

        def done(result: Simulated) -> None:
            from dpdesk.core.preview.simulate import simulation_notice

            text = _("Wrote {runs} simulated release(s) to {path}\n({source}).").format(
                runs=result.runs, path=result.out, source=result.source
            )
            status = _("Wrote {runs} simulated release(s) to {path} (not for publication).")
            window.set_status(status.format(runs=result.runs, path=result.out))
            window.show_info(_("Simulated releases"), text + "\n\n" + simulation_notice())

        return self.run(job, done, _("Simulating releases…"))

    def estimate_fidelity(self, query: str) -> Worker | None:
        """How faithful the synthetic-table query ``query`` would be, estimated by uncharged simulated releases
        on a file the user declares public (never on the table opened for release); shown in the preview."""
        window, state = self.window, self.state
        plan = state.valid_plan
        specs = [q for q in plan.queries if q.name == query] if plan is not None else []
        if plan is None or not specs or window.job is not None:
            return None
        choice = window.ask_fidelity(query)
        if choice is None:
            return None
        path, runs = choice
        home, private, spec = state.home, state.sha256, specs[0]

        def job(progress: Progress) -> Fidelity:
            from dpdesk.services.simulate import FidelityRequest, synthetic_fidelity

            return synthetic_fidelity(
                FidelityRequest(plan, home, query, path, runs, private_sha=private), progress
            )

        def done(result: Fidelity) -> None:
            window.set_status(
                _("Estimated the synthetic table's fidelity on {path} (uncharged).").format(path=path.name)
            )
            window.preview.show_fidelity(spec, result, str(path))

        return self.run(job, done, _("Estimating the synthetic table's fidelity…"))
