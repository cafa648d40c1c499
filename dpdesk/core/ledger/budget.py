"""The budget report: what a plan costs under every accounting method, and what is left, without touching any data."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.shown import plain
from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp.deployments import HIGH_EPSILON  # a release of this epsilon or more is warned about
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.queries_base import QueryDesign
from dpdesk.core.model.spec import Plan
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.checkpoint import Spent, State
    from dpdesk.core.ledger.entries import Entry, SpendEntry


def plan_costs(designs: Sequence[QueryDesign]) -> list[acc.QueryCost]:
    """What each query costs."""
    return [acc.QueryCost(d.spec.name, d.epsilon, d.delta, d.rho) for d in designs]


def past_releases(entries: Sequence[Entry]) -> list[acc.Release]:
    """The charged releases recorded in a ledger, at what they cost now (see :mod:`dpdesk.core.ledger.recost`):
    spends, spends carried over from a broken ledger, and uncharged simulations of the data by older versions."""
    from dpdesk.core.ledger.recost import effective

    return [eff.release() for eff in effective(entries)]


@dataclass(frozen=True)
class EpsilonDelta:
    """An (epsilon, delta) pair: a budget, or what is left of one."""

    epsilon: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class MethodTotals:
    """One accounting method's totals: this plan, the releases so far, both together, and whether they fit."""

    name: str
    plan: acc.Total
    spent: acc.Total
    after: acc.Total
    fits: bool
    #: advanced composition: this plan's delta' (its own, or the default); None for the other methods
    delta_prime: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "plan": self.plan.to_dict(),
            "spent": self.spent.to_dict(),
            "after": self.after.to_dict(),
            "fits": self.fits,
            "delta_prime": self.delta_prime,
        }


@dataclass(frozen=True)
class ComponentReport:
    """One mechanism of a query, as the report traces it."""

    label: str
    mechanism: str
    epsilon: float
    delta: float
    rho: float
    sensitivity_l1: float
    sensitivity_l2: float
    sensitivity_used: float
    scale: float
    error95: float | None
    resolution: float
    noise_grid: float
    formula: str
    derivation: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the fields in this order)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class QueryReport:
    """A query's design as the report shows it: statistic, cost, and the trace of its mechanisms."""

    name: str
    statistic: str
    column: str | None
    group_by: str | None
    mechanism: str
    calibration: str | None  # the Gaussian calibration; None for the other mechanisms
    epsilon: float
    delta: float
    rho: float
    cells: int
    candidates: int | None
    notes: tuple[str, ...]
    #: the exponential mechanism: (utility gap, probability that the better of two candidates wins)
    selection_curve: tuple[tuple[float, float], ...]
    #: quantiles: the released value's rank is within +-rank_error95 of q n with 95% probability (public)
    rank_error95: float | None
    rank_error95_exact_candidate: bool | None
    components: tuple[ComponentReport, ...]
    #: the accuracy in the statistic's own units, in words (with the plan; None in a release's trace)
    accuracy: str | None = None
    #: the same in numbers (:class:`dpdesk.core.dp.accuracy.Accuracy`: kind, confidence, error, ...)
    accuracy_value: dict[str, Any] | None = None
    #: the accuracy target the epsilon was solved from (None: the plan states the epsilon)
    accuracy_target: dict[str, Any] | None = None
    #: the public row conditions, in the plan file's format (empty: every row)
    where: tuple[dict[str, Any], ...] = ()

    @staticmethod
    def of(d: QueryDesign, plan: Plan | None = None) -> QueryReport:
        """The report of one query design (with the plan: its accuracy in its own units too)."""
        acc_text = acc_value = None
        if plan is not None:
            from dpdesk.core.dp import statistics

            a = statistics.get(d.spec.statistic).value_accuracy(d, plan)
            acc_text, acc_value = a.sentence(), a.to_dict()
        return QueryReport(
            name=d.spec.name,
            statistic=d.spec.statistic,
            column=d.spec.column,
            group_by=d.spec.group_by,
            mechanism=d.spec.mechanism,
            calibration=d.spec.calibration if d.spec.mechanism == "gaussian" else None,
            epsilon=d.epsilon,
            delta=d.delta,
            rho=d.rho,
            cells=len(d.cells),
            candidates=len(d.candidates) if d.candidates is not None else None,
            notes=tuple(d.notes),
            selection_curve=tuple(d.selection_curve),
            rank_error95=d.rank_error95,
            rank_error95_exact_candidate=d.rank_exact if d.rank_error95 is not None else None,
            components=tuple(
                ComponentReport(
                    label=c.label,
                    mechanism=c.mechanism,
                    epsilon=c.epsilon,
                    delta=c.delta,
                    rho=c.rho,
                    sensitivity_l1=c.l1,
                    sensitivity_l2=c.l2,
                    sensitivity_used=c.sensitivity,
                    scale=c.scale,
                    error95=c.bound95,
                    resolution=c.unit,
                    noise_grid=c.grid,
                    formula=c.formula,
                    derivation=c.derivation,
                )
                for c in d.components
            ),
            accuracy=acc_text,
            accuracy_value=acc_value,
            accuracy_target=d.spec.accuracy.to_dict() if d.spec.accuracy is not None else None,
            where=tuple(c.to_dict() for c in d.spec.where),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the trace a spend entry records."""
        return (
            {
                "name": self.name,
                "statistic": self.statistic,
                "column": self.column,
                "group_by": self.group_by,
                "mechanism": self.mechanism,
                "calibration": self.calibration,
                "epsilon": self.epsilon,
                "delta": self.delta,
                "rho": self.rho,
                "cells": self.cells,
                "candidates": self.candidates,
                "notes": list(self.notes),
                "selection_curve": [{"gap": g, "probability": p} for g, p in self.selection_curve],
                "rank_error95": self.rank_error95,
                "rank_error95_exact_candidate": self.rank_error95_exact_candidate,
                "components": [c.to_dict() for c in self.components],
            }
            | ({"where": list(self.where)} if self.where else {})
            | (
                {}  # a release's trace (no plan) keeps its former keys
                if self.accuracy is None
                else {
                    "accuracy": self.accuracy,
                    "accuracy_value": self.accuracy_value,
                    "accuracy_target": self.accuracy_target,
                }
            )
        )


@dataclass(frozen=True)
class BudgetReport:
    """Everything the budget meter shows; :meth:`to_dict` is ``dpdesk budget --json``."""

    title: str
    budget: EpsilonDelta
    method: str  # the method in force: the dataset's (from its ledger), else the plan's
    method_from_ledger: bool
    fits: bool
    remaining_before: EpsilonDelta
    remaining_after: EpsilonDelta
    #: every method (METHOD_NAMES order); None where it is not available (needs a budget delta > 0)
    methods: dict[str, MethodTotals | None]
    queries: tuple[QueryReport, ...]
    releases_so_far: int

    @property
    def in_force(self) -> MethodTotals:
        """The totals of the method in force (always available)."""
        m = self.methods[self.method]
        assert m is not None
        return m

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "title": self.title,
            "budget": self.budget.to_dict(),
            "method": self.method,
            "method_from_ledger": self.method_from_ledger,
            "fits": self.fits,
            "remaining_before": self.remaining_before.to_dict(),
            "remaining_after": self.remaining_after.to_dict(),
            "methods": {m: (v.to_dict() if v is not None else None) for m, v in self.methods.items()},
            "queries": [q.to_dict() for q in self.queries],
            "releases_so_far": self.releases_so_far,
        }


def budget_report(
    plan: Plan, entries: Sequence[Entry] | None = None, *, state: State | None = None
) -> BudgetReport:
    """Everything the budget meter shows, computed without touching any data.

    ``entries`` are the dataset's ledger entries (what earlier releases spent), if known; or ``state``, what its
    ledger's history adds up to (:meth:`dpdesk.core.ledger.book.Ledger.read`: from its last checkpoint).
    """
    if state is not None and state.full:
        entries, state = state.tail, None  # the whole chain was read: exactly as from its entries
    designs = design_plan(plan)
    costs = plan_costs(designs)
    settings = state.settings if state is not None else (_ledger_settings(entries) if entries else None)
    method = str(settings["accounting"]["method"] if settings else plan.accounting.method)
    budget = settings["budget"] if settings else {"epsilon": plan.budget.epsilon, "delta": plan.budget.delta}
    b_eps, b_delta = float(budget["epsilon"]), float(budget["delta"])
    past = past_releases(entries or []) if state is None else []
    base = _base(state, b_delta)
    rel = acc.Release(tuple(costs), plan.accounting.delta_prime)
    methods: dict[str, MethodTotals | None] = {}
    for m in acc.METHOD_NAMES:
        if m in ("zcdp", "advanced") and b_delta <= 0:  # both spend from the budget's delta
            methods[m] = None
            continue
        plan_t = acc.dataset_total(m, [rel], b_delta)
        if base is not None:  # the checkpoint's running totals, folded as dataset_total folds the releases
            spent_t, after_t = base.total(m), base.add(rel).total(m)
        else:
            spent_t = acc.dataset_total(m, [*past_as(m, past, b_delta)], b_delta)
            after_t = acc.dataset_total(m, [*past_as(m, past, b_delta), rel], b_delta)
        methods[m] = MethodTotals(
            name=acc.METHOD_NAMES[m],
            plan=plan_t,
            spent=spent_t,
            after=after_t,
            fits=acc.fits(after_t, b_eps, b_delta),
            delta_prime=acc.release_delta_prime(rel.delta_prime, b_delta) if m == "advanced" else None,
        )
    in_force = methods[method]
    assert in_force is not None  # a dataset's method is available under its own budget (the plan checks it)
    return BudgetReport(
        title=plan.title,
        budget=EpsilonDelta(b_eps, b_delta),
        method=method,
        method_from_ledger=settings is not None,
        fits=in_force.fits,
        remaining_before=EpsilonDelta(
            _remaining(b_eps, in_force.spent), max(0.0, b_delta - in_force.spent.delta)
        ),
        remaining_after=EpsilonDelta(
            _remaining(b_eps, in_force.after), max(0.0, b_delta - in_force.after.delta)
        ),
        methods=methods,
        queries=tuple(QueryReport.of(d, plan) for d in designs),
        releases_so_far=base.releases if base is not None else len(past),
    )


def _base(state: State | None, b_delta: float) -> Spent | None:
    """The running totals of a state read from a checkpoint (composed at the budget's delta), or None."""
    if state is None:
        return None
    from dpdesk.core.ledger.checkpoint import Spent

    if state.spent.releases == 0:
        return Spent(budget_delta=b_delta)
    if state.spent.budget_delta != b_delta:  # the checkpoint's reader refuses this; never compose at another
        raise ValueError("running totals composed at another budget delta")
    return state.spent


@dataclass(frozen=True)
class HistorySpend:
    """What a ledger's history spent under the accounting method in force: the total, the budget, and how many
    releases (spends, releases carried over by an acknowledgement, old uncharged simulations) it counts."""

    method: str
    spent: acc.Total
    budget: EpsilonDelta
    releases: int

    @property
    def spent_epsilon(self) -> float:
        """The epsilon spent (the exact decimal sum when the method keeps one)."""
        t = self.spent
        return float(t.epsilon_decimal) if t.epsilon_decimal is not None else float(t.epsilon)

    @property
    def left(self) -> EpsilonDelta:
        """What is left of the budget, as :attr:`BudgetReport.remaining_before` states it."""
        return EpsilonDelta(
            _remaining(self.budget.epsilon, self.spent), max(0.0, self.budget.delta - self.spent.delta)
        )


def spent_of(state: State) -> HistorySpend | None:
    """What a ledger's history spent (None without settings)."""
    settings = state.settings
    if not settings:
        return None
    method = str(settings["accounting"]["method"])
    b_eps, b_delta = float(settings["budget"]["epsilon"]), float(settings["budget"]["delta"])
    if state.full:
        past = past_releases(state.tail)
        return HistorySpend(
            method, acc.dataset_total(method, past, b_delta), EpsilonDelta(b_eps, b_delta), len(past)
        )
    base = _base(state, b_delta)
    assert base is not None
    return HistorySpend(method, base.total(method), EpsilonDelta(b_eps, b_delta), base.releases)


def left_of(state: State) -> EpsilonDelta | None:
    """What is left of the budget after the releases of a ledger's history (None before the first release or
    without settings), as :attr:`BudgetReport.remaining_before` states it. The releases an acknowledgement
    carried over count as releases."""
    history = spent_of(state)
    if history is None or (state.full and history.releases == 0):
        return None
    return history.left


def past_as(method: str, past: list[acc.Release], b_delta: float) -> list[acc.Release]:
    """Past releases as seen by ``method`` (unchanged; kept as a seam for officers' comparisons)."""
    del method, b_delta
    return past


def _remaining(b_eps: float, total: acc.Total) -> float:
    if total.epsilon_decimal is not None:
        return float(acc.dec(b_eps) - total.epsilon_decimal)
    return b_eps - float(total.epsilon)


def design_to_dict(d: QueryDesign) -> dict[str, Any]:
    """A query design as JSON: its trace (statistic, sensitivity and derivation, mechanism, formula)."""
    return QueryReport.of(d).to_dict()


def _ledger_settings(entries: Sequence[Entry]) -> dict[str, Any] | None:
    from dpdesk.core.ledger.entries import settings_in_force

    return settings_in_force(entries)


#: what is left after a release, as a share of the budget's epsilon, at or under which the release spends it all
USED_UP_SHARE = 1e-3


def used_up(left: float, budget: float) -> bool:
    """Whether ``left`` of a budget of ``budget`` (epsilon) counts as nothing left."""
    return left <= USED_UP_SHARE * budget


def spend_warnings(epsilon: float, left_after: float, budget: float) -> tuple[str, ...]:
    """The warnings a release that spends ``epsilon`` and leaves ``left_after`` of ``budget`` gets (the one rule the
    app's confirmation and meter and the command line's ``budget`` and ``release`` share): an epsilon of
    :data:`HIGH_EPSILON` or more, and a release that spends everything that is left."""
    out = []
    if epsilon >= HIGH_EPSILON:
        out.append(
            _(
                "Warning: this release spends ε {e}, which is {high} or more: the probability of any outcome may "
                "change by a factor of up to e^{e} = {f} when one person is added or removed, a weak promise."
            ).format(
                e=plain(epsilon, 4, "up"),
                high=plain(HIGH_EPSILON, 6),
                f=plain(math.exp(min(epsilon, 700.0)), 3, "up"),
            )
        )
    if epsilon > 0 and used_up(left_after, budget):
        out.append(
            _(
                "Warning: this release spends everything that is left of the budget (ε {b}): no later release of "
                "this dataset will be possible unless its budget is raised (a settings change the ledger records)."
            ).format(b=plain(budget, 6))
        )
    return tuple(out)


def report_warnings(report: BudgetReport) -> tuple[str, ...]:
    """:func:`spend_warnings` for a plan that fits (one that does not is refused whole, with its own message)."""
    if not report.fits:
        return ()
    return spend_warnings(report.in_force.plan.epsilon, report.remaining_after.epsilon, report.budget.epsilon)


def entry_warnings(entry: SpendEntry) -> tuple[str, ...]:
    """:func:`spend_warnings` for a release already recorded (a spend entry)."""
    charged = entry.charged.epsilon
    budget = float((entry.get("budget") or {}).get("epsilon", math.inf))
    after = float((entry.get("spent_after") or {}).get("epsilon", charged))
    return spend_warnings(charged, budget - after, budget)
