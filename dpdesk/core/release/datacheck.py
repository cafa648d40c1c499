"""The data check: what the loaded table holds that the plan does not expect, for the curator only.

Counts of missing, undeclared, unparsable and clamped values per declared column, shown before
anything is charged; they are never written to the ledger, a package, a report or any exported file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.shown import plain
from dpdesk.core.loading import Table
from dpdesk.core.model.spec import Plan
from dpdesk.i18n import _


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
                line = _(
                    "column {name}: {missing} missing, {unparsable} unparsable, {clamped} clamped to "
                    "the bounds [{lo}, {hi}]"
                )
                line = line.format(
                    name=repr(c.name),
                    missing=c.missing,
                    unparsable=c.unparsable,
                    clamped=c.clamped,
                    lo=plain(lo, 15),
                    hi=plain(hi, 15),
                )
            if c.first_problem and (c.missing or c.undeclared or c.unparsable):
                line += " " + _("(first at {where})").format(where=c.first_problem)
            out.append(line)
        return out

    def heading(self) -> str:
        """What the lines are, and for whom."""
        return _(
            "Data check of {rows} rows (for you only, never published; values outside the categories "
            "and unparsable values count as missing):"
        ).format(rows=self.rows)


class DataProblems(UsageError):
    """A declared column has values outside its categories or unparsable values: stopped before charging."""

    def __init__(self, check: DataCheck) -> None:
        self.check = check
        bad = "; ".join(line for c, line in zip(check.columns, check.lines(), strict=True) if c.stops)
        super().__init__(
            _(
                "stopped before charging anything: {bad}. These values would count as missing and the release "
                "would spend budget on statistics without them (a misspelled category gets a count of almost "
                "nothing). Check the plan's category lists and the data's values (a typo, a missing category, a "
                'code for "unknown"), fix them and run again; to release anyway with these values counted as '
                "missing, add --accept-data-problems. Nothing was charged or written."
            ).format(bad=bad)
        )


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
            cols.append(
                ColumnCheck(
                    name, spec.type, iss.missing, iss.undeclared, iss.unparsable, clamped, iss.first_problem
                )
            )
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
