"""Uncharged noisy releases for accuracy previews, on a stand-in table or a file declared public (never on the
private table, never touching a ledger)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.loading import Table
    from dpdesk.core.model.spec import Plan
    from dpdesk.core.preview.look import Look
    from dpdesk.core.preview.simulate import Fidelity


@dataclass(frozen=True)
class SimulateRequest:
    """``runs`` simulated releases of ``plan`` into the CSV ``out``: on a stand-in table of ``rows`` rows, or
    on ``public``, a file the user declares public (refused when it has a ledger or is ``private_sha``, the
    table opened for release)."""

    plan: Plan
    home: Path
    out: Path
    runs: int
    rows: int = 1000
    public: str | Path | None = None
    seed: int | None = None
    private_sha: str | None = None
    #: replace an existing ``out`` (never the public file, ``reads`` or anything under ``home``)
    force: bool = False
    #: other files being read (the plan's file), which ``out`` must never be
    reads: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Simulated:
    """Where the simulation went, how many runs it holds and the line naming what it was drawn on."""

    out: Path
    runs: int
    source: str


def simulate_releases(request: SimulateRequest, progress: Progress = NULL_PROGRESS) -> Simulated:
    """Run the simulation (:func:`dpdesk.core.preview.simulate.run_simulation`) and write it under its notice."""
    from dpdesk.core.preview.simulate import run_simulation
    from dpdesk.core.publish.outputs import check_out_file

    reads = (*request.reads, *((request.public,) if request.public is not None else ()))
    check_out_file(request.out, force=request.force, home=request.home, reads=reads)
    result = run_simulation(
        request.plan,
        request.home,
        request.out,
        runs=request.runs,
        rows=request.rows,
        public=request.public,
        seed=request.seed,
        private_sha=request.private_sha,
        progress=progress,
    )
    return Simulated(result.out, result.runs, result.source)


@dataclass(frozen=True)
class FidelityRequest:
    """How faithful the plan's synthetic-table query ``query`` would be, estimated by ``runs`` uncharged
    simulated releases on ``public``, a file the user declares public (refused when it has a ledger or is
    ``private_sha``, the table opened for release)."""

    plan: Plan
    home: Path
    query: str
    public: str | Path
    runs: int = 3
    seed: int | None = None
    private_sha: str | None = None


def synthetic_fidelity(request: FidelityRequest, progress: Progress = NULL_PROGRESS) -> Fidelity:
    """Load the public file and estimate the query's fidelity on it (:func:`dpdesk.core.preview.simulate.synthetic_fidelity`)."""
    import numpy as np

    from dpdesk.core.preview.simulate import public_table
    from dpdesk.core.preview.simulate import synthetic_fidelity as estimate

    table = public_table(
        request.plan, request.public, request.home, progress=progress, private_sha=request.private_sha
    )
    return estimate(
        request.plan,
        request.query,
        table=table,
        runs=request.runs,
        rng=np.random.default_rng(request.seed),
        progress=progress,
    )


@dataclass(frozen=True)
class LookRequest:
    """One simulated release of the plan's query ``query`` as its table would look, uncharged: on a stand-in table
    generated from the schema (the plan's expected rows), or on ``public``, a file the user declares public
    (refused when it has a ledger or is ``private_sha``, the table opened for release)."""

    plan: Plan
    home: Path
    query: str
    public: Path | None = None
    private_sha: str | None = None


class StandIns:
    """The last table a look was drawn on, kept for the next look of the same schema (a changed epsilon draws new
    noise, not a new table). Safe to share between a worker that ends and the next one."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._key: object = None
        self._table: Table | None = None

    def table(self, request: LookRequest, progress: Progress) -> Table:
        """The table for ``request``: the kept one when its schema, rows and source are the same, else a new one."""
        import numpy as np

        from dpdesk.core.preview.look import stand_in_rows
        from dpdesk.core.preview.simulate import public_table, stand_in_table

        plan = request.plan
        rows = stand_in_rows(plan)
        key = (
            tuple((name, repr(spec)) for name, spec in plan.columns.items()),
            plan.privacy_unit.id_column,
            rows if request.public is None else None,
            str(request.public) if request.public is not None else None,
        )
        with self._lock:
            if key == self._key and self._table is not None:
                return self._table
        if request.public is not None:
            table = public_table(
                plan, request.public, request.home, progress=progress, private_sha=request.private_sha
            )
        else:
            table = stand_in_table(plan, rows, np.random.default_rng(0))
        with self._lock:
            self._key, self._table = key, table
        return table


def query_look(request: LookRequest, stand_ins: StandIns, progress: Progress = NULL_PROGRESS) -> Look:
    """The look of one query (:func:`dpdesk.core.preview.look.query_look`) on its stand-in or public table."""
    from dpdesk.core.preview.look import query_look as draw

    table = stand_ins.table(request, progress)
    progress.check_cancelled()
    return draw(
        request.plan, request.query, table=table, public=request.public is not None, progress=progress
    )
