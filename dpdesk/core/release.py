"""Releases: validate, load, compute exactly, charge the ledger, draw noise, and only then reveal.

Order of a release (spend before reveal):

1. the plan's designs are computed from public facts; the output folder is checked;
2. the data is loaded (its SHA-256 names its ledger) and the exact statistics computed in memory;
3. under the ledger's exclusive lock: the chain is verified, the dataset's settings checked, the
   remaining budget checked, the noise drawn (OpenDP), and the spend entry with the noisy values
   appended and fsynced;
4. only then are the values written (``release.csv``, ``plan.json``) or returned for display.

A crash before step 3 ends charges nothing and reveals nothing; a crash after it has charged the
release, whose values stay in the ledger and can be re-exported at no cost.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from dpdesk import __version__
from dpdesk.core import accounting as acc
from dpdesk.core import mechanisms as mech
from dpdesk.core.aggregates import Exact, bound_rows_per_person, exact_statistic
from dpdesk.core.data import Column, Table, load_table
from dpdesk.core.errors import BudgetExceeded, DpdeskError, LedgerError, UsageError
from dpdesk.core.ledger import Ledger, write_atomic
from dpdesk.core.plan import Plan, canonical_json
from dpdesk.core.progress import NULL_PROGRESS, Progress
from dpdesk.core.queries import QueryDesign, design_plan, grid_bounds
from dpdesk.i18n import _

CSV_COLUMNS = ("query", "group", "value", "ci_low", "ci_high", "mechanism", "epsilon", "delta")


def simulation_notice() -> str:
    """The warning printed with, and written at the top of, every simulation output (in the user's language)."""
    return _(
        "NOT FOR PUBLICATION: simulated draws, uncharged. Many noisy draws of a private table average back "
        "to the truth; share none of this."
    )


class SettingsMismatch(DpdeskError):
    """The plan's budget, unit of privacy or accounting method differs from the dataset's ledger."""


@dataclass(frozen=True)
class Row:
    """One released value (one line of release.csv); numbers already in plain notation."""

    query: str
    group: str
    value: str
    ci_low: str
    ci_high: str
    mechanism: str
    epsilon: str
    delta: str

    def as_list(self) -> list[str]:
        """The row's cells in CSV column order."""
        return [self.query, self.group, self.value, self.ci_low, self.ci_high, self.mechanism, self.epsilon, self.delta]


def fmt_number(x: float | int) -> str:
    """A number in plain notation (no exponent), as short as round-trips.

    >>> fmt_number(1e-07), fmt_number(12.0), fmt_number(-3), fmt_number(2.5e20)
    ('0.0000001', '12', '-3', '250000000000000000000')
    """
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not math.isfinite(x):
        raise ValueError("a released value must be finite")
    d = Decimal(repr(float(x)))
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1)))
    return format(d, "f")


# ----------------------------------------------------------------------------- budget report (no data)


def plan_costs(designs: Sequence[QueryDesign]) -> list[acc.QueryCost]:
    """What each query costs."""
    return [acc.QueryCost(d.spec.name, d.epsilon, d.delta, d.rho) for d in designs]


def past_releases(entries: Sequence[dict[str, Any]]) -> list[acc.Release]:
    """The charged releases recorded in a ledger, at what they cost now (see :mod:`dpdesk.core.recost`):
    spends, spends carried over from a broken ledger, and uncharged simulations of the data by older versions."""
    from dpdesk.core.recost import effective

    return [eff.release() for eff in effective(entries)]


def budget_report(plan: Plan, entries: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Everything the budget meter shows, computed without touching any data.

    ``entries`` are the dataset's ledger entries (what earlier releases spent), if known.
    """
    designs = design_plan(plan)
    costs = plan_costs(designs)
    settings = _ledger_settings(entries or [])
    method = settings["accounting"]["method"] if settings else plan.accounting.method
    budget = settings["budget"] if settings else {"epsilon": plan.budget.epsilon, "delta": plan.budget.delta}
    b_eps, b_delta = float(budget["epsilon"]), float(budget["delta"])
    past = past_releases(entries or [])
    rel = acc.Release(tuple(costs), plan.accounting.delta_prime)
    methods: dict[str, Any] = {}
    for m in acc.METHOD_NAMES:
        if m in ("zcdp", "advanced") and b_delta <= 0:  # both spend from the budget's delta
            methods[m] = None
            continue
        plan_t = acc.dataset_total(m, [rel], b_delta)
        spent_t = acc.dataset_total(m, [*past_as(m, past, b_delta)], b_delta)
        after_t = acc.dataset_total(m, [*past_as(m, past, b_delta), rel], b_delta)
        methods[m] = {
            "name": acc.METHOD_NAMES[m],
            "plan": plan_t.to_dict(),
            "spent": spent_t.to_dict(),
            "after": after_t.to_dict(),
            "fits": acc.fits(after_t, b_eps, b_delta),
            "delta_prime": acc.release_delta_prime(rel.delta_prime, b_delta) if m == "advanced" else None,
        }
    in_force = methods[method]
    remaining_eps = _remaining(b_eps, in_force["spent"])
    return {
        "title": plan.title,
        "budget": {"epsilon": b_eps, "delta": b_delta},
        "method": method,
        "method_from_ledger": settings is not None,
        "fits": in_force["fits"],
        "remaining_before": {"epsilon": remaining_eps, "delta": max(0.0, b_delta - in_force["spent"]["delta"])},
        "remaining_after": {
            "epsilon": _remaining(b_eps, in_force["after"]),
            "delta": max(0.0, b_delta - in_force["after"]["delta"]),
        },
        "methods": methods,
        "queries": [design_to_dict(d) for d in designs],
        "releases_so_far": len(past),
    }


def past_as(method: str, past: list[acc.Release], b_delta: float) -> list[acc.Release]:
    """Past releases as seen by ``method`` (unchanged; kept as a seam for officers' comparisons)."""
    del method, b_delta
    return past


def _remaining(b_eps: float, total: dict[str, Any]) -> float:
    if "epsilon_exact" in total:
        return float(acc.dec(b_eps) - Decimal(total["epsilon_exact"]))
    return b_eps - float(total["epsilon"])


def design_to_dict(d: QueryDesign) -> dict[str, Any]:
    """A query design as JSON: its trace (statistic, sensitivity and derivation, mechanism, formula)."""
    return {
        "name": d.spec.name,
        "statistic": d.spec.statistic,
        "column": d.spec.column,
        "group_by": d.spec.group_by,
        "mechanism": d.spec.mechanism,
        "calibration": d.spec.calibration if d.spec.mechanism == "gaussian" else None,
        "epsilon": d.epsilon,
        "delta": d.delta,
        "rho": d.rho,
        "cells": len(d.cells),
        "candidates": len(d.candidates) if d.candidates is not None else None,
        "notes": list(d.notes),
        "selection_curve": [{"gap": g, "probability": p} for g, p in d.selection_curve],
        # quantiles: the released value's rank is within +-rank_error95 of q n with 95% probability (public)
        "rank_error95": d.rank_error95,
        "rank_error95_exact_candidate": d.rank_exact if d.rank_error95 is not None else None,
        "components": [
            {
                "label": c.label,
                "mechanism": c.mechanism,
                "epsilon": c.epsilon,
                "delta": c.delta,
                "rho": c.rho,
                "sensitivity_l1": c.l1,
                "sensitivity_l2": c.l2,
                "sensitivity_used": c.sensitivity,
                "scale": c.scale,
                "error95": c.bound95,
                "resolution": c.unit,
                "noise_grid": c.grid,
                "formula": c.formula,
                "derivation": c.derivation,
            }
            for c in d.components
        ],
    }


def _ledger_settings(entries: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    from dpdesk.core.ledger import settings_in_force

    return settings_in_force(entries)


# ----------------------------------------------------------------------------- noise


def interval_halfwidth(comp: Any, conf: float = 0.95) -> float:
    """Half-width of the released interval, exact for the discrete noise drawn on the component's grid."""
    scale = comp.scale / comp.grid
    if comp.mechanism == "laplace":
        t = mech.discrete_laplace_halfwidth(scale, conf)
    else:
        t = mech.discrete_gaussian_halfwidth(scale, conf)
    return float(t * comp.grid)


NoiseFn = Callable[[list[int], Any], list[int]]
PickFn = Callable[[list[float], Any], int]


def _opendp_noise(values: list[int], comp: Any) -> list[int]:
    """Noisy integers on the component's noise grid (exact integers refined onto it first)."""
    f = comp.refine
    scaled = [v * f for v in values] if f != 1 else values
    if comp.mechanism == "laplace":
        l1 = round(comp.l1 / comp.grid)
        noisy, _ = mech.draw_laplace(scaled, l1, comp.epsilon)
        return noisy
    noisy, _ = mech.draw_gaussian(scaled, comp.l2 / comp.grid, comp.scale / comp.grid)
    return noisy


def to_natural(v: int, comp: Any) -> float | int:
    """A noisy integer on the noise grid, in natural units (an int when the grid is whole)."""
    g = comp.grid
    if g >= 1.0:
        return int(v) * int(g)
    return v * g


def _opendp_pick(utilities: list[float], comp: Any) -> int:
    return mech.draw_exponential(utilities, comp.l1, comp.epsilon)


def noisy_rows(
    design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn = _opendp_noise, pick: PickFn = _opendp_pick
) -> list[Row]:
    """Noise one query's exact statistic and format its rows (the only place values are made)."""
    spec = design.spec
    eps_s, delta_s = fmt_number(spec.epsilon), fmt_number(spec.delta)
    if spec.mechanism == "exponential":
        assert exact.utilities is not None and design.candidates is not None
        idx = pick(exact.utilities, design.components[0])
        chosen = design.candidates[idx]
        value = chosen if isinstance(chosen, str) else fmt_number(chosen)
        return [Row(spec.name, "", value, "", "", spec.mechanism, eps_s, delta_s)]
    rows: list[Row] = []
    if spec.statistic == "mean":
        count_c, sum_c = design.components
        counts = noise(exact.vectors[0], count_c)
        sums = noise(exact.vectors[1], sum_c)
        col = plan.columns[spec.column or ""]
        assert col.bounds is not None
        lo, hi = col.bounds
        mid = (lo + hi) / 2.0
        e_n, e_s = interval_halfwidth(count_c, 0.975), interval_halfwidth(sum_c, 0.975)
        for cell, n_g, s in zip(design.cells, counts, sums, strict=True):
            s_nat = to_natural(s, sum_c)
            n = to_natural(n_g, count_c)
            m = min(hi, max(lo, mid + s_nat / max(1, n)))
            if n - e_n <= 0:
                low, high = lo, hi
            else:
                cands = [mid + (s_nat + a) / (n + b) for a in (-e_s, e_s) for b in (-e_n, e_n)]
                low, high = max(lo, min(cands)), min(hi, max(cands))
            rows.append(_rounded_row(spec.name, cell, m, low, high, spec.mechanism, eps_s, delta_s))
        return rows
    (comp,) = design.components
    noisy = noise(exact.vectors[0], comp)
    bound = interval_halfwidth(comp)
    for cell, v in zip(design.cells, noisy, strict=True):
        val = to_natural(v, comp)
        rows.append(_rounded_row(spec.name, cell, val, val - bound, val + bound, spec.mechanism, eps_s, delta_s))
    return rows


def rounding_step(halfwidth: float) -> Decimal:
    """The power of ten that keeps three significant digits of a 95% interval's half-width.

    >>> rounding_step(29.96), rounding_step(209997.0), rounding_step(0.0123)
    (Decimal('0.1'), Decimal('1E+3'), Decimal('0.0001'))
    """
    if not math.isfinite(halfwidth) or halfwidth <= 0:
        return Decimal(1)
    return Decimal(1).scaleb(math.floor(math.log10(halfwidth)) - 2)


def _rounded(x: float | int, step: Decimal) -> str:
    if isinstance(x, int):
        return str(x) if step < 1 else fmt_number(int(Decimal(x).quantize(step, rounding="ROUND_HALF_EVEN")))
    d = Decimal(repr(float(x))).quantize(step, rounding="ROUND_HALF_EVEN")
    return fmt_number(float(d)) if step >= 1 else format(d, "f")


def _rounded_row(query: str, cell: str, value: float | int, low: float | int, high: float | int, mechanism: str,
                 eps: str, delta: str) -> Row:  # fmt: skip
    """One row with its numbers rounded once (post-processing): to 3 significant digits of the interval's
    half-width, never finer than needed; whole numbers (counts) stay whole."""
    step = rounding_step(max(float(value) - float(low), float(high) - float(value)))
    if isinstance(value, int):
        step = max(step, Decimal(1))
        return Row(query, cell, str(value), _rounded(low, step), _rounded(high, step), mechanism, eps, delta)
    return Row(query, cell, _rounded(value, step), _rounded(low, step), _rounded(high, step), mechanism, eps, delta)


def rows_to_csv(rows: Sequence[Row], *, bom: bool = False) -> bytes:
    """release.csv bytes: the header and one line per value, UTF-8 (optionally with a BOM)."""
    import csv

    # csv quotes a field holding any character of its line terminator: "\r\n" makes it quote fields with
    # either (a lone "\r" in a category label would otherwise break the row); lines still end in "\n"
    lines = []
    for cells in [list(CSV_COLUMNS)] + [[_neutralise(c) for c in r.as_list()] for r in rows]:
        one = io.StringIO()
        csv.writer(one, lineterminator="\r\n").writerow(cells)
        lines.append(one.getvalue()[:-2] + "\n")
    data = "".join(lines).encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if bom else data


def _neutralise(cell: str) -> str:
    """Prefix text a spreadsheet would run as a formula with ' (numbers are left alone)."""
    if cell and cell[0] in "=+-@\t\r":
        try:
            float(cell)
        except ValueError:
            return "'" + cell
    return cell


def rows_hash(rows: Sequence[Row]) -> str:
    """SHA-256 of the released values (canonical JSON of the rows)."""
    return hashlib.sha256(canonical_json([r.as_list() for r in rows]).encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------- release


@dataclass
class ReleaseResult:
    """What a release produced: its rows, its ledger entry and where its files went."""

    rows: list[Row]
    entry: dict[str, Any]
    out_dir: Path | None
    report_lines: list[str]
    ledger: Ledger | None = None
    data_check: DataCheck | None = None  # for the curator's screen only; never written anywhere


def check_out_dir(out_dir: Path) -> None:
    """The output folder must not exist, or be empty."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise UsageError(_("{path} exists and is not a folder").format(path=out_dir))
        if any(out_dir.iterdir()):
            raise UsageError(_("{path} is not empty; choose a new folder for the release").format(path=out_dir))


def _keep_mask(table: Table, plan: Plan) -> np.ndarray:
    if plan.privacy_unit.id_column is not None:
        return bound_rows_per_person(table, plan.privacy_unit.max_rows_per_person)
    return np.ones(table.n_rows, dtype=bool)


def _check_settings(plan: Plan, ledger_settings: dict[str, Any] | None) -> None:
    if ledger_settings is None:
        return
    mine = plan.settings()
    for key, message in (
        ("budget", _("this dataset's total budget was fixed at its first release as {fixed}; the plan says {plan}. "
                     "Only a privacy officer can change it (dpdesk ledger --data FILE --change-settings PLAN "
                     "--reason ...)")),
        ("privacy_unit", _("this dataset's unit of privacy was fixed at its first release as {fixed}; the plan says "
                           "{plan}. Only a privacy officer can change it (dpdesk ledger --data FILE "
                           "--change-settings PLAN --reason ...)")),
    ):  # fmt: skip
        if mine[key] != ledger_settings[key]:
            raise SettingsMismatch(message.format(fixed=json.dumps(ledger_settings[key]), plan=json.dumps(mine[key])))
    if mine["accounting"]["method"] != ledger_settings["accounting"]["method"]:
        raise SettingsMismatch(
            _("this dataset uses {fixed} accounting since its first release; the plan asks for {plan}. Only a "
              "privacy officer can change it").format(fixed=ledger_settings["accounting"]["method"],
                                                      plan=mine["accounting"]["method"])
        )  # fmt: skip


def release(
    plan: Plan,
    data_path: str | Path,
    home: Path,
    out_dir: Path | None = None,
    *,
    progress: Progress = NULL_PROGRESS,
    table: Table | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    bom: bool = False,
    accept_data_problems: bool = False,
    on_data_check: Callable[[DataCheck], None] | None = None,
) -> ReleaseResult:
    """Run a whole release: spend before reveal. Writes ``out_dir`` (if given) only after the ledger.

    ``bom`` writes release.csv with a UTF-8 byte-order mark, so that Excel shows Chinese labels.
    After loading and before the ledger is touched, the table is checked (:func:`check_data`) and
    ``on_data_check`` shown the counts; a declared column with values outside its categories or
    unparsable values stops the release (:class:`DataProblems`, nothing charged) unless
    ``accept_data_problems`` (the curator saw the counts and goes ahead: those values count as missing).
    """
    if out_dir is not None:
        check_out_dir(out_dir)
    designs = design_plan(plan)
    if table is None:
        table = load_table(
            data_path, plan.columns, id_column=plan.privacy_unit.id_column, progress=progress,
            encoding=encoding, delimiter=delimiter,
        )  # fmt: skip
    _check_table(table, plan)
    check = check_data(table, plan)
    if on_data_check is not None:
        on_data_check(check)
    if check.problems and not accept_data_problems:
        raise DataProblems(check)
    keep = _keep_mask(table, plan)
    exacts = []
    for i, d in enumerate(designs):
        progress.update(i, len(designs), "computing")
        exacts.append(exact_statistic(d, table, keep, plan.columns))
    progress.check_cancelled()
    costs = plan_costs(designs)
    ledger = Ledger.for_dataset(home, table.sha256)
    with ledger.transaction() as tx:
        settings = tx.settings()
        _check_settings(plan, settings)
        record_corrections(tx)
        report = budget_report(plan, tx.entries)
        if not report["fits"]:
            rem = report["remaining_before"]
            name = acc.method_name(report["method"])
            after = report["methods"][report["method"]]["plan"]
            raise BudgetExceeded(
                _("over budget: this plan needs epsilon {e}, delta {d} under {method}; this dataset has epsilon "
                  "{left_e} and delta {left_d} left of its budget (epsilon {budget_e}, delta {budget_d})").format(
                    e=f"{after['epsilon']:.6g}", d=f"{after['delta']:.3g}", method=name,
                    left_e=f"{max(0.0, rem['epsilon']):.6g}", left_d=f"{rem['delta']:.3g}",
                    budget_e=f"{report['budget']['epsilon']:g}", budget_d=f"{report['budget']['delta']:g}",
                )
            )  # fmt: skip
        progress.check_cancelled()  # the last point at which a cancel is honoured
        rows: list[Row] = []
        for d, ex in zip(designs, exacts, strict=True):
            rows.extend(noisy_rows(d, ex, plan))
        if settings is None:
            tx.append("settings", {"settings": plan.settings(), "reason": _("fixed at the dataset's first release")})
        method = report["method"]
        entry = tx.append(
            "spend",
            {
                "release_id": uuid.uuid4().hex,
                "dpdesk_version": __version__,
                "title": plan.title,
                "plan_hash": plan.plan_hash(),
                "plan": plan.to_dict(),
                "method": method,
                "delta_prime": plan.accounting.delta_prime,
                "costs": [c.to_dict() for c in costs],
                "charged": report["methods"][method]["plan"],
                "budget": report["budget"],
                "spent_after": report["methods"][method]["after"],
                "totals": {m: (v["plan"] if v else None) for m, v in report["methods"].items()},
                "trace": [design_to_dict(d) for d in designs],
                "columns": list(CSV_COLUMNS),
                "values": [r.as_list() for r in rows],
                "values_hash": rows_hash(rows),
            },
        )
    # revealed only now, after the spend entry is durable
    if out_dir is not None:
        write_release_dir(out_dir, rows, plan, entry, ledger, Path(table.path).name, bom=bom)
    return ReleaseResult(rows, entry, out_dir, table.report.lines(), ledger, check)


def record_corrections(tx: Any) -> dict[str, Any] | None:
    """Record what past releases cost above their booking (a ``correction`` entry), before anything else is charged."""
    from dpdesk.core.recost import pending_corrections

    pending = pending_corrections(tx.entries)
    if not pending:
        return None
    return tx.append(  # type: ignore[no-any-return]
        "correction",
        {"reason": "past releases cost more than was booked (re-costed under today's unit of privacy and code)",
         "releases": pending, "added_epsilon": math.fsum(r["added_epsilon"] for r in pending)},
    )  # fmt: skip


def write_release_dir(
    out_dir: Path, rows: Sequence[Row], plan: Plan, spend: dict[str, Any], ledger: Ledger, dataset_name: str,
    *, bom: bool = False,
) -> None:
    """Write the release package (release.csv, report.pdf, plan.json, ledger.json) into a new or empty folder."""
    from dpdesk.core.package import write_package

    write_package(out_dir, rows, plan, spend, ledger, dataset_name, bom=bom)


def rows_from_entry(entry: dict[str, Any]) -> list[Row]:
    """The rows of a past release, read back from its ledger entry (costs nothing)."""
    if entry.get("type") != "spend":
        raise LedgerError(_("ledger entry {seq} is not a release").format(seq=entry.get("seq")))
    rows = [Row(*[str(c) for c in v]) for v in entry["values"]]
    if rows_hash(rows) != entry["values_hash"]:
        raise LedgerError(_("ledger entry {seq}: the stored values do not match their hash").format(seq=entry.get("seq")))
    return rows


# ----------------------------------------------------------------------------- the data check (curator only)


@dataclass(frozen=True)
class ColumnCheck:
    """What one declared column of the loaded table holds that the plan does not expect."""

    name: str
    type: str
    missing: int  # empty fields
    undeclared: int  # values outside the declared categories, treated as missing
    unparsable: int  # values that are not numbers of the declared type, treated as missing
    clamped: int  # values outside the bounds (±infinity included), clamped to them
    first_problem: str | None = None  # where the first missing, undeclared or unparsable value is

    @property
    def stops(self) -> bool:
        """Values outside the categories or unparsable: a release stops on them unless accepted."""
        return self.undeclared > 0 or self.unparsable > 0


@dataclass(frozen=True)
class DataCheck:
    """Per declared column, how many values were missing, outside the categories, unparsable or clamped.

    For the curator's eyes only, before anything is charged: these are exact counts read off the private
    table, so they are never written to the ledger, the package, the report or any exported file.
    """

    rows: int
    columns: tuple[ColumnCheck, ...]
    bounds: dict[str, tuple[float, float]]

    @property
    def problems(self) -> tuple[ColumnCheck, ...]:
        """The columns with values outside their categories or unparsable."""
        return tuple(c for c in self.columns if c.stops)

    def lines(self) -> list[str]:
        """One line per declared column, in the user's language (clamping counts always included)."""
        out = []
        for c in self.columns:
            if c.type == "category":
                line = _("column {name}: {missing} missing, {undeclared} outside the declared categories")
                line = line.format(name=repr(c.name), missing=c.missing, undeclared=c.undeclared)
            else:
                lo, hi = self.bounds[c.name]
                line = _("column {name}: {missing} missing, {unparsable} unparsable, {clamped} clamped to "
                         "the bounds [{lo}, {hi}]")
                line = line.format(name=repr(c.name), missing=c.missing, unparsable=c.unparsable,
                                   clamped=c.clamped, lo=f"{lo:g}", hi=f"{hi:g}")
            if c.first_problem and (c.missing or c.undeclared or c.unparsable):
                line += " " + _("(first at {where})").format(where=c.first_problem)
            out.append(line)
        return out

    def heading(self) -> str:
        """What the lines are, and for whom."""
        return _("Data check of {rows} rows (for you only, never published; values outside the categories "
                 "and unparsable values count as missing):").format(rows=self.rows)  # fmt: skip


class DataProblems(UsageError):
    """A declared column has values outside its categories or unparsable values: stopped before charging."""

    def __init__(self, check: DataCheck) -> None:
        self.check = check
        bad = "; ".join(line for c, line in zip(check.columns, check.lines(), strict=True) if c.stops)
        super().__init__(_(
            "stopped before charging anything: {bad}. These values would count as missing and the release "
            "would spend budget on statistics without them (a misspelled category gets a count of almost "
            "nothing). Check the plan's category lists and the data's values (a typo, a missing category, a "
            "code for \"unknown\"), fix them and run again; to release anyway with these values counted as "
            "missing, add --accept-data-problems. Nothing was charged or written."
        ).format(bad=bad))  # fmt: skip


def check_data(table: Table, plan: Plan) -> DataCheck:
    """Count, per declared column, what the release will not use as it stands (curator only, never written).

    Missing, undeclared and unparsable values come from the loader's counts; int values are clamped (and
    counted) as they are loaded; float values outside the bounds are clamped at query time and counted here
    in one vectorised pass (two reductions, and a count only when one is out of bounds).
    """
    cols = []
    bounds: dict[str, tuple[float, float]] = {}
    for name, spec in plan.columns.items():
        col = table.columns[name]
        iss = table.report.issues.get(name)
        clamped = iss.clamped if iss is not None else 0
        if spec.bounds is not None and spec.type != "category":
            bounds[name] = spec.bounds
            clamped += _outside(col.values, *spec.bounds)  # floats; ints only if not loaded by the loader
        if iss is None:  # a table made in memory: what is missing is all that is known
            missing = int(np.count_nonzero(col.missing()))
            cols.append(ColumnCheck(name, spec.type, missing, 0, 0, clamped))
        else:
            cols.append(ColumnCheck(name, spec.type, iss.missing, iss.undeclared, iss.unparsable, clamped,
                                    iss.first_problem))  # fmt: skip
    return DataCheck(table.n_rows, tuple(cols), bounds)


def _outside(values: np.ndarray, lo: float, hi: float) -> int:
    """How many values lie outside [lo, hi] (NaN is missing, not outside; ±infinity is outside)."""
    if len(values) == 0:
        return 0
    if values.dtype.kind == "f":
        if not (np.fmin.reduce(values) < lo or np.fmax.reduce(values) > hi):  # NaN-ignoring min and max
            return 0
    elif not (values.min() < lo or values.max() > hi):
        return 0
    return int(np.count_nonzero(values < lo) + np.count_nonzero(values > hi))


def _check_table(table: Table, plan: Plan) -> None:
    for name, spec in plan.columns.items():
        if name not in table.columns or table.columns[name].spec != spec:
            raise UsageError(_("the loaded table does not match the plan's declaration of {name}; reload it").format(
                name=repr(name)))  # fmt: skip


# ----------------------------------------------------------------------------- simulation


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
        keep = bound_rows_per_person(table, plan.privacy_unit.max_rows_per_person)
    exacts = [exact_statistic(d, table, keep, plan.columns) for d in designs]

    def noise(values: list[int], comp: Any) -> list[int]:
        scale = comp.scale / comp.grid
        v = np.asarray(values, dtype=np.float64) * comp.refine
        if comp.mechanism == "laplace":
            return np.rint(v + rng.laplace(0.0, scale, len(v))).astype(np.int64).tolist()  # type: ignore[no-any-return]
        return np.rint(v + rng.normal(0.0, scale, len(v))).astype(np.int64).tolist()  # type: ignore[no-any-return]

    def pick(utilities: list[float], comp: Any) -> int:
        u = np.asarray(utilities) / comp.scale
        return int(np.argmax(u + rng.gumbel(size=len(u))))

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
    """A file offered as public for a simulation is a dataset dpdesk keeps a ledger for."""


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
    it is read into a table.
    """
    from dpdesk.core.data import file_sha256
    from dpdesk.core.ledger import is_known_dataset

    sha = file_sha256(path, progress)
    if sha == private_sha or is_known_dataset(home, sha):
        raise NotPublic(_(
            "{path} is not a public file: it is a dataset dpdesk releases from (it has a ledger in {home}, "
            "or it is the table opened for release). Simulations on it would be uncharged draws of private "
            "data, which average back to the truth. Simulate on the stand-in table generated from the plan's "
            "schema, or on a file that is really public (a published sample, last year's published table)."
        ).format(path=path, home=home))  # fmt: skip
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
        source = _("source: a stand-in table of {rows} rows generated from the plan's schema (no data was "
                   "read)").format(rows=rows)  # fmt: skip
    drawn = simulate(plan, runs, table=table, rng=rng, progress=progress)
    progress.update(0, 1, "writing")
    import csv

    buf = io.StringIO()
    buf.write(f"# {simulation_notice()}\n# {source}\n")
    csv.writer(buf, lineterminator="\n").writerows([["run", "query", "group", "value"], *drawn])
    try:
        Path(out).write_text(buf.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise UsageError(_("cannot write {path}: {err}").format(path=out, err=exc.strerror or exc)) from None
    return SimulationResult(Path(out), runs, source)


def grid_info(plan: Plan, column: str) -> tuple[int, int, int]:
    """The fixed-point grid of a numeric column (exposed for the trace and tests)."""
    return grid_bounds(plan.columns[column])
