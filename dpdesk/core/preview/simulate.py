"""Simulations: uncharged noisy releases for accuracy previews, never of the private table.

They run on a stand-in table generated from the declared schema, or on a file the user declares public
(refused when it is a dataset with a ledger, or the table being released). numpy's generator draws
their noise: this module is not on the release path, and nothing on the release path imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.dp.aggregates import bound_rows_per_person, exact_statistic
from dpdesk.core.dp.bounding import BoundKey
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.values import csv_bytes
from dpdesk.core.loading import Column, Table, load_table
from dpdesk.core.model.spec import Plan
from dpdesk.core.release.steps import NoiseFn, PickFn, noisy_rows
from dpdesk.i18n import _


def simulation_notice() -> str:
    """The warning printed with, and written at the top of, every simulation output (in the user's language)."""
    return _(
        "NOT FOR PUBLICATION: simulated draws, uncharged. Many noisy draws of a private table average back "
        "to the truth; share none of this."
    )


def stand_in_table(plan: Plan, rows: int, rng: np.random.Generator) -> Table:
    """A table generated from the declared schema alone (uniform within bounds and categories)."""
    cols: dict[str, Column] = {}
    for name, spec in plan.columns.items():
        vals: np.ndarray
        if spec.type == "category":
            assert spec.categories is not None
            vals = rng.integers(0, len(spec.categories), rows).astype(np.int16)
        elif spec.type == "int":
            assert spec.bounds is not None
            vals = rng.integers(int(spec.bounds[0]), int(spec.bounds[1]) + 1, rows).astype(np.int64)
        else:
            assert spec.bounds is not None
            vals = rng.uniform(spec.bounds[0], spec.bounds[1], rows)
        cols[name] = Column(spec, vals)
    return Table("<stand-in>", "", rows, cols)


def numpy_noise(rng: np.random.Generator) -> NoiseFn:
    """The release's noise function drawn with numpy's generator (previews only): noisy integers on each
    component's grid, Laplace or Gaussian at the component's scale."""

    def noise(values: list[int], comp: Any) -> list[int]:
        scale = comp.scale / comp.grid
        v = np.asarray(values, dtype=np.float64) * comp.refine
        if comp.mechanism == "laplace":
            return np.rint(v + rng.laplace(0.0, scale, len(v))).astype(np.int64).tolist()  # type: ignore[no-any-return]
        return np.rint(v + rng.normal(0.0, scale, len(v))).astype(np.int64).tolist()  # type: ignore[no-any-return]

    return noise


def numpy_pick(rng: np.random.Generator) -> PickFn:
    """The exponential mechanism's choice drawn with numpy's generator (the Gumbel-max trick; previews only)."""

    def pick(utilities: list[float], comp: Any) -> int:
        u = np.asarray(utilities) / comp.scale
        return int(np.argmax(u + rng.gumbel(size=len(u))))

    return pick


def simulate(
    plan: Plan,
    runs: int,
    *,
    table: Table,
    rng: np.random.Generator,
    progress: Progress = NULL_PROGRESS,
) -> list[tuple[int, str, str, str]]:
    """Draw ``runs`` independent releases without charging anything (numpy noise: previews only).

    Only for a stand-in table (:func:`stand_in_table`) or a table its user declares public
    (:func:`public_table`): many uncharged draws of a private table average back to the truth.
    Returns rows (run, query, group, value). Not for publication.
    """
    designs = design_plan(plan)
    keep = np.ones(table.n_rows, dtype=bool)
    if plan.privacy_unit.id_column is not None and table.ids is not None:
        keep = bound_rows_per_person(table, plan.privacy_unit.max_rows_per_person, BoundKey.fresh())
    exacts = [exact_statistic(d, table, keep, plan.columns) for d in designs]

    noise, pick = numpy_noise(rng), numpy_pick(rng)
    out: list[tuple[int, str, str, str]] = []
    every = max(1, runs // 200)  # a few hundred progress reports at most; a cancel is honoured at every run
    for run in range(1, runs + 1):
        if (run - 1) % every == 0:
            progress.update(run - 1, runs, "simulating")
        progress.check_cancelled()
        for d, ex in zip(designs, exacts, strict=True):
            for r in noisy_rows(d, ex, plan, noise, pick):
                out.append((run, r.query, r.group, r.value))
    progress.update(runs, runs, "simulating")
    return out


class NotPublic(UsageError):
    """A file offered as public for a simulation is a dataset dpdesk keeps a ledger for, the table opened for release,
    or a copy or a large part of either (by content)."""


def public_table(
    plan: Plan,
    path: str | Path,
    home: Path,
    *,
    progress: Progress = NULL_PROGRESS,
    private_sha: str | None = None,
) -> Table:
    """Load a file its user declares public (a published sample, last year's public table) for simulations.

    A file with a ledger in this dpdesk home (``is_known_dataset``), or the table being released
    (``private_sha``), is private whatever it is called: it is refused after being hashed, before any of
    it is read into a table. So is a file whose CONTENT is, or largely overlaps, a known dataset's or the opened
    table's (:func:`dpdesk.core.identity.recognition.private_match`: a re-saved, sorted, converted or edited copy).
    """
    from dpdesk.core.ledger.book import is_known_dataset
    from dpdesk.core.loading import file_sha256

    sha = file_sha256(path, progress)
    if sha == private_sha or is_known_dataset(home, sha):
        raise NotPublic(
            _(
                "{path} is not a public file: it is a dataset dpdesk releases from (it has a ledger in {home}, "
                "or it is the table opened for release). Simulations on it would be uncharged draws of private "
                "data, which average back to the truth. Simulate on the stand-in table generated from the plan's "
                "schema, or on a file that is really public (a published sample, last year's published table)."
            ).format(path=path, home=home)
        )
    from dpdesk.core.identity.recognition import private_match

    owner = private_match(home, path, sha256=sha, private_sha=private_sha, progress=progress)
    if owner is not None:
        what = (
            _("the table opened for release")
            if owner.dataset == ""
            else _("dataset {id}").format(id=owner.dataset)
        )
        if owner.marginal:
            why = _(
                "{path} is not a public file: each of its columns holds exactly the values of a column of {what}, "
                "in as many rows (that table with columns left out, or with its headers and category labels "
                "renamed)."
            )
        elif owner.exact:
            why = _(
                "{path} is not a public file: it holds the rows of {what} (re-saved, sorted or converted, or with "
                "one column added, dropped, renamed or edited)."
            )
        else:
            why = _(
                "{path} is not a public file: most of its rows also occur in {what}, or it holds most of that "
                "table's rows."
            )
        raise NotPublic(
            why.format(path=path, what=what)
            + " "
            + _(
                "Simulations on it would be uncharged draws of private data, which average back to the truth. "
                "Simulate on the stand-in table generated from the plan's schema, or on a file that is really "
                "public (a published sample, last year's published table)."
            )
        )
    table = load_table(path, plan.columns, id_column=plan.privacy_unit.id_column, progress=progress)
    if table.sha256 != sha:
        raise UsageError(_("{path} changed while it was read; run the simulation again").format(path=path))
    return table


MAX_SIMULATION_RUNS = 1_000_000


MAX_STAND_IN_ROWS = 10_000_000


@dataclass
class SimulationResult:
    """Where a simulation went, how many runs it holds and what it was drawn on."""

    out: Path
    runs: int
    source: str


def run_simulation(
    plan: Plan,
    home: Path,
    out: Path,
    *,
    runs: int,
    rows: int = 1000,
    public: str | Path | None = None,
    seed: int | None = None,
    private_sha: str | None = None,
    progress: Progress = NULL_PROGRESS,
) -> SimulationResult:
    """Simulate ``runs`` uncharged releases on a stand-in table of ``rows`` rows (the default) or on a file
    declared ``public``, and write them to ``out`` (CSV) under the NOT FOR PUBLICATION notice and a line
    naming the source. Never reads a private table and never touches a ledger."""
    if not 1 <= runs <= MAX_SIMULATION_RUNS:
        raise UsageError(_("--runs must be from 1 to 1,000,000"))
    rng = np.random.default_rng(seed)
    if public is not None:
        table = public_table(plan, public, home, progress=progress, private_sha=private_sha)
        source = _("source: {path}, a file declared public by the user").format(path=public)
    else:
        if not 1 <= rows <= MAX_STAND_IN_ROWS:
            raise UsageError(_("--rows must be from 1 to 10,000,000"))
        table = stand_in_table(plan, rows, rng)
        source = _(
            "source: a stand-in table of {rows} rows generated from the plan's schema (no data was read)"
        ).format(rows=rows)
    drawn = simulate(plan, runs, table=table, rng=rng, progress=progress)
    progress.update(0, 1, "writing")
    data = csv_bytes(("run", "query", "group", "value"), drawn, comments=(simulation_notice(), source))
    from dpdesk.core.publish.outputs import write_out_file

    write_out_file(Path(out), data)  # whole or not at all: a full disk keeps the file it would replace
    return SimulationResult(Path(out), runs, source)


#: At most this many simulated synthetic tables in one fidelity estimate.
MAX_FIDELITY_RUNS = 20
#: A simulated synthetic table has at most this many times the public table's rows: the distances compare shares,
#: which a sample of that size already gives to within the noise (a query's explicit ``rows`` of 10,000,000 would
#: otherwise sample 10,000,000 rows per run for a file of a few thousand).
FIDELITY_ROWS_FACTOR = 4


@dataclass(frozen=True)
class Fidelity:
    """How faithful a synthetic-table query's tables are on a table declared public, over ``runs`` uncharged
    simulated releases (mean total-variation distances; 0 would be the table itself). ``independent_*``: the
    same at the same epsilon when each column is sampled alone from its noisy histogram (the baseline)."""

    query: str
    runs: int
    rows: int  # the rows of the public table the query reads
    columns: int
    one_way: float
    two_way: float
    independent_one_way: float
    independent_two_way: float


def _adaptive_fake(
    spec: Any,
    codes: np.ndarray,
    sizes: tuple[int, ...],
    replace: bool,
    k: int,
    cap: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """One simulated adaptive synthesis (mechanism aim) of the encoded public table with numpy's noise (uncharged,
    not for publication): its rounds, its final fit and a sample of at most ``cap`` rows."""
    from dpdesk.core.dp.statistics.synthetic import aim_budget
    from dpdesk.core.dp.synthetic import aim
    from dpdesk.core.dp.synthetic.pgm import sample_model
    from dpdesk.core.dp.synthetic.pipeline import table_rows

    budget = aim_budget(spec.epsilon, spec.delta, len(sizes), replace, k)

    def noise(values: list[int], _l2: float, sigma: float) -> list[int]:
        v = np.asarray(values, dtype=np.float64)
        return np.rint(v + rng.normal(0.0, sigma, len(v))).astype(np.int64).tolist()  # type: ignore[no-any-return]

    def pick(scores: list[float], sensitivity: float, eps: float) -> int:
        u = np.asarray(scores) * eps / (2.0 * sensitivity)
        return int(np.argmax(u + rng.gumbel(size=len(u))))

    released, _model = aim.adaptive_measure(codes, sizes, budget, noise=noise, pick=pick)
    model = aim.final_fit(released)
    return sample_model(model, min(table_rows(model.marginals.total, spec.rows), cap), rng)


def synthetic_fidelity(
    plan: Plan,
    query: str,
    *,
    table: Table,
    runs: int,
    rng: np.random.Generator,
    progress: Progress = NULL_PROGRESS,
) -> Fidelity:
    """Simulate ``runs`` releases of the synthetic-table query named ``query`` on ``table`` (a stand-in or a
    file its user declares public, never the private table) with numpy's noise, uncharged, and measure how far
    each synthetic table's one- and two-way marginals are from the table's; the same for the independent
    baseline. Not for publication. Refused (:class:`UsageError`) for a table without rows; each synthetic table
    has at most :data:`FIDELITY_ROWS_FACTOR` times the table's rows."""
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, encode_table
    from dpdesk.core.dp.synthetic import exact_marginals, fit, measure_marginals, sample_codes, split_budget
    from dpdesk.core.dp.synthetic.measure import Split
    from dpdesk.core.dp.synthetic.pipeline import table_rows
    from dpdesk.core.dp.synthetic.utility import tvd

    if not 1 <= runs <= MAX_FIDELITY_RUNS:
        raise UsageError(_("the number of runs must be from 1 to {n}").format(n=MAX_FIDELITY_RUNS))
    specs = [q for q in plan.queries if q.name == query and isinstance(q, SyntheticQuery)]
    if not specs:
        raise UsageError(_("the plan has no synthetic-table query named {name}").format(name=query))
    spec = specs[0]
    unit = plan.privacy_unit
    keep = None
    if unit.id_column is not None and table.ids is not None:
        keep = bound_rows_per_person(table, unit.max_rows_per_person, BoundKey.fresh())
    attrs, codes = encode_table(spec, table, keep)
    if codes.shape[0] == 0:
        raise UsageError(
            _(
                "the public file has no rows to compare with: a fidelity figure on it would describe nothing. "
                "Choose a file with rows"
            )
        )
    exact = exact_marginals(codes, attrs)
    replace, k = unit.neighbouring == "replace", unit.max_rows_per_person

    def noise(values: list[int], split: Split, scale: float) -> list[int]:
        v = np.asarray(values, dtype=np.float64)
        drawn = rng.normal(0.0, scale, len(v)) if split.gaussian else rng.laplace(0.0, scale, len(v))
        return np.rint(v + drawn).astype(np.int64).tolist()  # type: ignore[no-any-return]

    def pick(scores: list[float], split: Split) -> int:
        u = np.asarray(scores) * split.select_epsilon / (2.0 * split.score_sensitivity)
        return int(np.argmax(u + rng.gumbel(size=len(u))))

    splits = (
        split_budget(spec.epsilon, spec.delta, len(attrs), replace, k),
        split_budget(spec.epsilon, spec.delta, len(attrs), replace, k, shares=(1.0, 0.0, 0.0)),
    )
    sums = [[0.0, 0.0], [0.0, 0.0]]
    sizes = exact.sizes
    for run in range(runs):
        progress.update(run, runs, "simulating")
        for which, split in enumerate(splits):
            progress.check_cancelled()
            if which == 0 and spec.mechanism == "aim":  # the query's own method: the adaptive rounds
                cap = FIDELITY_ROWS_FACTOR * int(codes.shape[0])
                fake = _adaptive_fake(spec, codes, tuple(sizes), replace, k, cap, rng)
                sums[which][0] += tvd(codes, fake, sizes, 1)
                sums[which][1] += tvd(codes, fake, sizes, 2)
                continue
            model = fit(measure_marginals(exact, split, noise, pick))
            n = min(table_rows(model.total, spec.rows), FIDELITY_ROWS_FACTOR * int(codes.shape[0]))
            fake = sample_codes(model, n, rng)
            sums[which][0] += tvd(codes, fake, sizes, 1)
            sums[which][1] += tvd(codes, fake, sizes, 2)
    progress.update(runs, runs, "simulating")
    return Fidelity(
        spec.name,
        runs,
        int(codes.shape[0]),
        len(attrs),
        sums[0][0] / runs,
        sums[0][1] / runs,
        sums[1][0] / runs,
        sums[1][1] / runs,
    )
