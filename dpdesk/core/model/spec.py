"""The release plan's values: the vocabularies, the budget, the unit of privacy, the columns, the queries and the
plan itself, immutable and validated when built, with the validators and messages the plan reader shares.

Everything public about a dataset lives here (column types, bounds, categories, the unit of privacy, the
budget), together with the queries to release. Reading and writing a plan file is :mod:`dpdesk.core.plan.reader`, which
re-exports everything here. This module is below the statistics registry (:mod:`dpdesk.core.dp.statistics`), whose
modules subclass :class:`QuerySpec` and read :class:`Plan`: it never imports the registry. What a query's
validation and a plan's serialisation need to know of the registered statistics (their words, mechanisms,
columns and own fields) they read through :func:`install_registry`, which the registry calls when it is imported
(and :mod:`dpdesk.core.plan.reader`, above it, when that is imported).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import StrEnum
from types import ModuleType
from typing import Any

from dpdesk.core.common.errors import PlanError, field_of
from dpdesk.i18n import _

PLAN_VERSION = 1
#: The statistics and their parameters live in the registry (:mod:`dpdesk.core.dp.statistics`), the
#: mechanisms in :mod:`dpdesk.core.model.mechanism_kinds`; both are read when a query is validated.


class Neighbouring(StrEnum):
    """The privacy unit's relation: which two tables count as neighbours."""

    ADD_REMOVE = "add_remove"
    REPLACE = "replace"


class AccountingMethod(StrEnum):
    """How the queries of a dataset compose (see :mod:`dpdesk.core.dp.accounting`)."""

    SEQUENTIAL = "sequential"
    ADVANCED = "advanced"
    ZCDP = "zcdp"


class ColumnType(StrEnum):
    """A declared column's type."""

    INT = "int"
    FLOAT = "float"
    CATEGORY = "category"


class MissingPolicy(StrEnum):
    """What happens to a missing, unparsable or undeclared value: the row is dropped, or a value imputed."""

    DROP = "drop"
    IMPUTE = "impute"


NEIGHBOURING = tuple(x.value for x in Neighbouring)
ACCOUNTING_METHODS = tuple(x.value for x in AccountingMethod)
COLUMN_TYPES = tuple(x.value for x in ColumnType)
#: Public limits that keep arithmetic exact and inputs sane; they are not read off any data.
MAX_ROWS_PER_PERSON = 100_000
MAX_CANDIDATES = 100_000
MAX_CATEGORIES = 10_000
MAX_BINS = 10_000
MAX_ABS_BOUND = 1e15
MAX_QUERIES = 1_000
#: At most this many released cells in one plan (a grouped histogram has categories x bins x groups): the
#: designs, the tables and the noise are allocated per cell, so a larger plan is refused before any of them, and
#: before anything is charged. The limit is what a release can finish: every cell is a line of the ledger's spend
#: entry, which every later command on the dataset reads. Measured on the largest plans it accepts (one grouped
#: histogram of 100 x 1,000 cells; 1,000 histograms of 100 bins): the release 8-23 s at 310-380 MB peak, a 6-8 MB
#: ledger line, later commands 1-3 s at under 150 MB; at 999,000 cells the release took 113 s and 2 GB, a 69 MB
#: ledger line and a 175 MB ledger.json (issue 24 item 6).
MAX_PLAN_CELLS = 100_000
#: At most this many candidates scored in one plan (a quantile's candidates or grid, a select's candidates; a
#: mode's categories are not counted: 1,000 modes of 10,000 stay within the cells' bound), before anything is charged: each candidate costs about 115 bytes and its share of the
#: scoring while a release runs. Measured (release of the sample table, quantiles of 100,000 candidates each): 1
#: query 155 MB and 1.8 s, 10 queries 254 MB and 3.6 s, 40 queries 601 MB and 15 s; a plan of 1,000 such queries
#: would have needed about 11 GB (issue 24: 150 of them reached 1.8 GB). At this limit (20 such queries) the release
#: peaked at 363 MB in 9-12 s.
MAX_PLAN_CANDIDATES = 2_000_000
MAX_NAME_LENGTH = 200
#: The smallest non-zero delta a budget or a query may have: the Gaussian calibration is proven (and
#: tested against 50-digit references) down to here; smaller deltas buy nothing a person could notice.
MIN_DELTA = 1e-30
#: The smallest epsilon a query may have: below it the noise scale (sensitivity / epsilon) leaves the floats
#: (5e-324 makes it infinite) and no released number would carry information anyway.
MIN_EPSILON = 1e-9
#: The narrowest range a column's bounds may span: a narrower one makes sensitivities underflow to zero.
MIN_BOUND_WIDTH = 1e-9
#: What a plan template (``dpdesk plan new``) leaves for the user to fill: refused, naming what to write, wherever
#: the reader finds it in place of a type, a number, bounds or categories (where "?" was never valid anyway).
PLACEHOLDER = "?"
#: A key the reader ignores in any object of a plan: a template's explanations (JSON has no comments).
HELP_KEY = "_help"


#: How the query types reach the statistics registry (:mod:`dpdesk.core.dp.statistics`) without importing it: the
#: registry installs itself when it is imported, and :mod:`dpdesk.core.plan.reader` installs a loader of it.
_registry: Callable[[], ModuleType] | None = None


def install_registry(load: Callable[[], ModuleType]) -> None:
    """Give the query types the statistics registry (``load`` returns the module :mod:`dpdesk.core.dp.statistics`)."""
    global _registry  # noqa: PLW0603 - set by the registry (and the plan reader) when imported
    _registry = load


def _statistics() -> ModuleType:
    """The statistics registry, as installed (a query is validated against its statistic there)."""
    if _registry is None:
        raise RuntimeError(
            "the statistics registry is not loaded: import dpdesk.core.plan.reader or dpdesk.core.dp.statistics first"
        )
    return _registry()


def _set(obj: object, name: str, value: object) -> None:
    """Store a validated (normalised) value in a frozen dataclass while it is being built."""
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class Budget:
    """The total privacy budget of a dataset, validated when built (as the plan's ``budget``)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "epsilon", read_positive(self.epsilon, "budget.epsilon"))
        _set(self, "delta", read_delta(self.delta, "budget.delta", allow_zero=True))


@dataclass(frozen=True)
class PrivacyUnit:
    """Who is protected: one row, or one person with up to ``max_rows_per_person`` rows.

    Validated when built (as the plan's ``privacy_unit``).
    """

    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    max_rows_per_person: int = 1
    id_column: str | None = None

    def __post_init__(self) -> None:
        _set(
            self,
            "neighbouring",
            Neighbouring(read_text(self.neighbouring, "privacy_unit.neighbouring", NEIGHBOURING)),
        )
        k = self.max_rows_per_person
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_ROWS_PER_PERSON:
            raise PlanError(
                "privacy_unit.max_rows_per_person",
                _("{field} must be a whole number from 1 to {most} (you wrote {value})").format(
                    field="max_rows_per_person", most=MAX_ROWS_PER_PERSON, value=_wrote(k)
                ),
            )
        if self.id_column is not None:
            read_text(self.id_column, "privacy_unit.id_column")


@dataclass(frozen=True)
class Accounting:
    """How the queries of a dataset compose, validated when built (as the plan's ``accounting``).

    The checks against the budget (delta' spent from its delta, zCDP needing one) are the plan's.
    """

    method: AccountingMethod = AccountingMethod.SEQUENTIAL
    delta_prime: float | None = None

    def __post_init__(self) -> None:
        method = AccountingMethod(read_text(self.method, "accounting.method", ACCOUNTING_METHODS))
        _set(self, "method", method)
        if method == AccountingMethod.ADVANCED:
            if self.delta_prime is None:
                raise PlanError("accounting.delta_prime", _delta_prime_required())
            # no floor: delta' enters only the closed-form advanced bound, exact for any delta' > 0
            _set(
                self,
                "delta_prime",
                read_delta(self.delta_prime, "accounting.delta_prime", allow_zero=False, floor=False),
            )
        elif self.delta_prime is not None:
            raise PlanError("accounting.delta_prime", _delta_prime_only_advanced())


@dataclass(frozen=True)
class Missing:
    """What to do with a missing, unparsable or undeclared value: drop the row, or impute ``value``.

    A number or a label, checked against its column by :class:`ColumnSpec`.
    """

    impute: float | str | None = None

    def __post_init__(self) -> None:
        v = self.impute
        if v is None or isinstance(v, str):
            return
        _set(self, "impute", read_number(v, "missing.impute"))

    @property
    def policy(self) -> MissingPolicy:
        """Drop or impute."""
        return MissingPolicy.DROP if self.impute is None else MissingPolicy.IMPUTE

    @property
    def drops(self) -> bool:
        """True when rows with a missing value are dropped (the default)."""
        return self.impute is None


@dataclass(frozen=True)
class ColumnSpec:
    """One declared column: its type and its public bounds or categories.

    Validated when built, with the plan's messages and keys (``columns.<name>.bounds`` ...).
    """

    name: str
    type: ColumnType
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    missing: Missing = field(default_factory=Missing)

    def __post_init__(self) -> None:
        key = f"columns.{self.name}"
        if not isinstance(self.name, str) or not self.name.strip():
            raise PlanError(key, _("a column name must not be empty"))
        ctype = ColumnType(read_text(self.type, f"{key}.type", COLUMN_TYPES))
        _set(self, "type", ctype)
        if ctype == ColumnType.CATEGORY:
            if self.bounds is not None:
                raise PlanError(f"{key}.bounds", _no_bounds_for_category())
            if self.categories is None:
                raise PlanError(f"{key}.categories", _categories_required())
            _set(self, "categories", _parse_categories(self.categories, f"{key}.categories"))
        else:
            if self.categories is not None:
                raise PlanError(f"{key}.categories", _no_categories_for_numbers(self.name, ctype))
            if self.bounds is None:
                raise PlanError(f"{key}.bounds", _bounds_required())
            _set(self, "bounds", _parse_bounds(self.bounds, f"{key}.bounds", integer=ctype == ColumnType.INT))
        if not isinstance(self.missing, Missing):
            raise PlanError(f"{key}.missing", _missing_shape())
        _check_impute(self.missing.impute, f"{key}.missing", ctype, self.bounds, self.categories)

    @property
    def is_numeric(self) -> bool:
        """Whether the column holds numbers (``int`` or ``float``)."""
        return self.type in (ColumnType.INT, ColumnType.FLOAT)


#: How many of a condition's categories its description names (a report's table cell must fit on a page).
DESCRIBED_CATEGORIES = 10


#: The most conditions a query's ``where`` may hold.
MAX_CONDITIONS = 8


@dataclass(frozen=True)
class Condition:
    """A public condition on a query's rows (one item of its ``where``): the row's value in ``column`` is one of
    ``categories`` (a category column) or lies in the closed range ``between`` (a numeric column; inside its
    public bounds). A row is read as the statistics read it: a missing value under "drop" meets no condition, an
    imputed one is tested as imputed, a number outside the bounds is clamped first. Nothing in it comes from the
    data: the plan states it, as it states the bounds."""

    column: str
    categories: tuple[str, ...] | None = None
    between: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        read_text(self.column, "where.column")
        if (self.categories is None) == (self.between is None):
            raise PlanError("where", condition_shape())
        if self.categories is not None:
            _set(self, "categories", tuple(str(c) for c in self.categories))
            if not self.categories:
                raise PlanError("where.in", _("list at least one category"))
        if self.between is not None:
            lo, hi = (read_number(x, "where.between") for x in self.between)
            if lo > hi:
                raise PlanError("where.between", _("the range's first number must not be above its second"))
            _set(self, "between", (lo, hi))

    def to_dict(self) -> dict[str, Any]:
        """The condition in the plan file's format."""
        if self.categories is not None:
            return {"column": self.column, "in": list(self.categories)}
        assert self.between is not None
        return {"column": self.column, "between": [num_out(self.between[0]), num_out(self.between[1])]}

    def describe(self, limit: int = DESCRIBED_CATEGORIES) -> str:
        """The condition in words (translated), as the report and review state it: each category quoted (a label
        may hold a comma), at most ``limit`` of them named; each number as the plan writes it, unrounded."""
        if self.categories is not None:
            shown = ", ".join(quoted(c) for c in self.categories[:limit])
            if len(self.categories) > limit:
                shown = _("{first} and {n} more (plan.json lists them all)").format(
                    first=shown, n=f"{len(self.categories) - limit:,}"
                )
            return _("{col} is one of {values}").format(col=self.column, values=shown)
        assert self.between is not None
        return _("{col} from {lo} to {hi}").format(
            col=self.column, lo=_plain(self.between[0]), hi=_plain(self.between[1])
        )


def _plain(x: float) -> str:
    """A number as the plan writes it, every digit kept (12.34567, 1234567.5, 100000.4)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def condition_shape() -> str:
    return _(
        'a condition names a "column" and either "in" (a list of its categories) or "between" (a low and a high number)'
    )


def describe_where(where: tuple[Condition, ...]) -> str:
    """A query's conditions in words, joined by "and" (empty: none)."""
    return _(" and ").join(c.describe() for c in where)


#: The largest public estimate of the number of rows a plan may state (the row cap of the exact sums).
MAX_EXPECTED_ROWS = 2**31
#: How an accuracy target applies to a query with several cells: each cell, or all cells together.
ACCURACY_CELLS = ("each", "all")
#: The highest confidence an accuracy target may ask for (closer to 1, the solvers' floating point fails).
MAX_CONFIDENCE = 0.999999


@dataclass(frozen=True)
class AccuracyTarget:
    """A query's accuracy target, stated instead of its epsilon (``"accuracy"`` in the plan).

    ``error``: the largest error wanted, in the statistic's own units (rows for a count or a histogram
    cell, the column's units for a sum or a mean, a share for a proportion, ranks for a quantile, and for
    a mode or a selection the lead L in the utility's units (rows for a mode) at which the best candidate
    must win); ``confidence``: the probability of meeting it (for a mode or a selection, the probability
    that the best candidate wins); ``cells``: for a query with several cells, whether every cell on its
    own ("each") or all cells together ("all") must be within the error.
    """

    error: float
    confidence: float = 0.95
    cells: str = "each"

    def to_dict(self) -> dict[str, Any]:
        """The target in the plan file's format (``cells`` only when it is "all")."""
        d: dict[str, Any] = {"error": num_out(self.error), "confidence": self.confidence}
        if self.cells != "each":
            d["cells"] = self.cells
        return d


def parse_accuracy(value: Any, key: str) -> AccuracyTarget:
    obj = read_object(value, key)
    check_keys(obj, key, {"error", "confidence", "cells"}, ("error",))
    error = read_positive(obj["error"], f"{key}.error")
    if error > MAX_ABS_BOUND:
        raise PlanError(
            f"{key}.error", _("an accuracy error beyond {m} is not supported").format(m=f"{MAX_ABS_BOUND:g}")
        )
    confidence = read_number(obj.get("confidence", 0.95), f"{key}.confidence")
    if not 0 < confidence <= MAX_CONFIDENCE:
        raise PlanError(
            f"{key}.confidence",
            _(
                "the confidence must lie above 0 and at most 0.999999 (got {value}): no amount of noise is "
                "within an error with certainty; 0.95 is usual"
            ).format(value=obj.get("confidence")),
        )
    cells = read_text(obj.get("cells", "each"), f"{key}.cells", ACCURACY_CELLS)
    return AccuracyTarget(error, confidence, cells)


def parse_expected_rows(value: Any, key: str = "expected_rows") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EXPECTED_ROWS:
        raise PlanError(
            key,
            _(
                "expected_rows must be a whole number from 1 to {max} (got {value!r}): a public estimate of the number "
                "of rows, never counted from the data"
            ).format(max=MAX_EXPECTED_ROWS, value=value),
        )
    return value


@dataclass(frozen=True)
class QuerySpec:
    """One statistic to release, as written in the plan: the fields every statistic has.

    Each statistic's module (:mod:`dpdesk.core.dp.statistics`) has its own frozen subclass with its own
    fields (a quantile's q and candidates, a histogram's bins, ...); ``statistic`` and ``mechanism`` are
    str enums (:class:`~dpdesk.core.dp.statistics.StatisticName`,
    :class:`~dpdesk.core.model.mechanism_kinds.Mechanism`) that compare and serialise as the plain words.
    """

    name: str
    statistic: str
    mechanism: str
    epsilon: float
    delta: float = 0.0
    column: str | None = None
    group_by: str | None = None
    calibration: str = "classic"
    #: The accuracy target the epsilon was solved from (None: the plan states the epsilon).
    accuracy: AccuracyTarget | None = None
    #: The public conditions a row must meet to be counted (all of them); empty: every row.
    where: tuple[Condition, ...] = ()
    #: The query's own public estimate of its rows (those that meet ``where``, before any grouping), for its
    #: accuracy in units; None: the plan's ``expected_rows`` when the query has no ``where``, else none.
    expected_rows: int | None = None

    def __post_init__(self) -> None:
        """Validated when built, with the plan's messages (:func:`parse_plan` checks the same first, with
        every problem at once and keyed by the query's place; built on its own, a query's problem is keyed
        ``query.<field>`` and named by the query's name). What needs the plan's columns or budget (a
        declared column, bounds, the budget's delta) is the plan's to check; so is the epsilon's range,
        which a fitted or solved epsilon may leave (it is only greater than 0 and finite here)."""
        try:
            self._check()
        except PlanError as exc:
            if isinstance(self.name, str) and self.name.strip():
                exc.query_name = self.name
            raise

    def _check(self) -> None:
        """The shared fields' checks; a statistic's subclass adds its own fields' after these."""
        from dpdesk.core.model.mechanism_kinds import MECHANISMS, Calibration, Mechanism

        statistics = _statistics()
        read_text(self.name, "query.name")
        stat = statistics.get(read_statistic(self.statistic, "query.statistic", statistics.names()))
        _set(self, "statistic", statistics.StatisticName(stat.name))
        mech = Mechanism(read_text(self.mechanism, "query.mechanism", tuple(MECHANISMS)))
        _set(self, "mechanism", mech)
        if mech not in stat.mechanisms:
            raise not_released_with("query.mechanism", stat.name, stat.mechanisms, mech)
        _set(self, "epsilon", read_positive(self.epsilon, "query.epsilon"))
        info = MECHANISMS[mech]
        if mech == Mechanism.AIM and self.delta == 0:
            raise aim_delta_required("query.delta")
        if info.takes_delta and not info.delta_optional and self.delta == 0:
            raise PlanError("query.delta", gaussian_delta_required())
        if info.takes_delta:
            _set(self, "delta", read_delta(self.delta, "query.delta", allow_zero=info.delta_optional))
        elif self.delta != 0:
            raise only_gaussian_delta("query.delta", mech)
        if info.calibrations:
            calibration = Calibration(
                read_text(self.calibration, "query.calibration", tuple(info.calibrations))
            )
        elif self.calibration != Calibration.CLASSIC:
            raise PlanError("query.calibration", calibration_only_gaussian())
        else:
            calibration = Calibration.CLASSIC
        _set(self, "calibration", calibration)
        if stat.column_param is None:
            if self.column is not None:
                raise PlanError("query.column", takes_no_column(stat))
        elif self.column is None:
            raise PlanError("query.column", column_required(stat.name))
        else:
            read_text(self.column, "query.column")
        if self.group_by is not None:
            read_text(self.group_by, "query.group_by")
            if not stat.groupable:
                raise PlanError("query.group_by", cannot_group(stat.name))
            if self.group_by == self.column:
                raise PlanError("query.group_by", no_self_grouping())
        if not isinstance(self.where, tuple) or not all(isinstance(c, Condition) for c in self.where):
            raise PlanError("query.where", _("where must be a list of conditions"))
        if self.where and not stat.takes_where:
            raise PlanError("query.where", no_where(stat.name))
        if len(self.where) > MAX_CONDITIONS:
            raise PlanError("query.where", too_many_conditions())
        if self.expected_rows is not None:
            _set(self, "expected_rows", parse_expected_rows(self.expected_rows, "query.expected_rows"))
        if self.accuracy is not None and not isinstance(self.accuracy, AccuracyTarget):
            raise PlanError(
                "query.accuracy",
                _("{field} must be an object, not {kind}").format(
                    field="accuracy", kind=json_type(self.accuracy)
                ),
            )


@dataclass(frozen=True)
class Plan:
    """A whole release plan."""

    budget: Budget
    privacy_unit: PrivacyUnit
    columns: dict[str, ColumnSpec]
    queries: tuple[QuerySpec, ...]
    title: str = ""
    accounting: Accounting = field(default_factory=Accounting)
    version: int = PLAN_VERSION
    #: A public estimate of the number of rows (never computed from the data): what accuracy that
    #: depends on the number of rows is stated for, and solved for.
    expected_rows: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The plan as a JSON-ready dict in the file format (defaults written out)."""
        return plan_to_dict(self)

    def plan_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`to_dict`."""
        return hashlib.sha256(canonical_json(self.to_dict()).encode("utf-8")).hexdigest()

    def settings(self) -> dict[str, Any]:
        """What the ledger fixes at a dataset's first release: budget, unit of privacy, accounting."""
        d = self.to_dict()
        return {"budget": d["budget"], "privacy_unit": d["privacy_unit"], "accounting": d["accounting"]}


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the form that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def read_object(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PlanError(
            key,
            _("{field} must be an object, not {kind}").format(field=subject_of(key), kind=json_type(value)),
        )
    return value


def json_type(value: Any) -> str:
    if value is None:
        return _("null")
    if isinstance(value, bool):
        return _("true/false")
    if isinstance(value, (int, float)):
        return _("a number")
    if isinstance(value, str):
        return _("text")
    if isinstance(value, list):
        return _("a list")
    return _("an object")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def subject_of(key: str) -> str:
    """What a message calls the value at ``key``: its field (``epsilon``), or the query, column or plan."""
    name = field_of(key)
    if name:
        return name
    if key.startswith("queries["):
        return _("the query")
    if key.startswith("columns."):
        return _("the column's declaration")
    return _("this part of the plan") if key else _("the plan")


def quoted(value: object) -> str:
    """A value the user wrote, quoted as the messages show it ("0.1x")."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) > 60:
        text = text[:57] + "..."
    return f'"{text}"'


def _wrote(value: object) -> str:
    """A value the user wrote, as written: text quoted, numbers and others as JSON."""
    if isinstance(value, str):
        return quoted(value)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def did_you_mean(word: str, known: Any) -> str:
    """'did you mean "wage"?' for the closest of the ``known`` words (plan words, column headers, codebook
    categories: never data values), or empty."""
    folded = {str(k).strip().casefold(): str(k) for k in known}
    guess = folded.get(str(word).strip().casefold())  # a difference of case or spaces only ("Wage", " wage")
    close = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)
    if guess is not None:
        close = [guess]
    return _('did you mean "{guess}"?').format(guess=close[0]) if close else ""


_NUMBER_INSIDE = re.compile(r"[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?")


def _number_hint(value: object) -> str:
    """For text that holds one number ("0.1x", " 0,5 "): write that number without quotes."""
    if not isinstance(value, str):
        return ""
    found = _NUMBER_INSIDE.findall(value)
    if len(found) != 1:
        return ""
    text = found[0].replace(",", ".")
    try:
        x = float(text)
    except ValueError:
        return ""
    if not math.isfinite(x):
        return ""
    return _("write the number {number} without quotes").format(number=f"{x:g}" if x != int(x) else text)


def key_problems(
    obj: dict[str, Any], prefix: str, allowed: set[str], required: tuple[str, ...]
) -> list[PlanError]:
    """Every unknown key (with the closest known one) and every missing required key of an object."""
    out: list[PlanError] = []
    for k in obj:
        if k not in allowed and k != HELP_KEY:
            out.append(
                PlanError(
                    _join(prefix, str(k)),
                    _("unknown key {key} (allowed here: {allowed})").format(
                        key=quoted(str(k)), allowed=", ".join(sorted(allowed))
                    ),
                    hint=did_you_mean(str(k), sorted(allowed)),
                )
            )
    out.extend(
        PlanError(_join(prefix, k), _("{field} is required").format(field=subject_of(_join(prefix, k))))
        for k in required
        if k not in obj
    )
    return out


def check_keys(obj: dict[str, Any], prefix: str, allowed: set[str], required: tuple[str, ...]) -> None:
    problems = key_problems(obj, prefix, allowed, required)
    if problems:
        raise problems[0]


def is_placeholder(value: Any) -> bool:
    """Whether ``value`` is a template's :data:`PLACEHOLDER`, left to fill."""
    return isinstance(value, str) and value == PLACEHOLDER


def still_to_fill(key: str) -> PlanError:
    """A template's placeholder left in place of a value."""
    return PlanError(
        key, _('{field} is still to fill in (the template\'s "?")').format(field=subject_of(key))
    )


def read_number(value: Any, key: str) -> float:
    if is_placeholder(value):
        raise still_to_fill(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        message = _("{field} must be a number, not {kind}").format(
            field=subject_of(key), kind=json_type(value)
        )
        if isinstance(value, str):
            message = _("{message} (you wrote {value})").format(message=message, value=quoted(value))
        raise PlanError(key, message, hint=_number_hint(value))
    try:
        x = float(value)
    except OverflowError:  # a whole number too large for a float, e.g. 10**400
        raise PlanError(key, _("{field} must be a finite number").format(field=subject_of(key))) from None
    if not math.isfinite(x):
        raise PlanError(key, _("{field} must be a finite number").format(field=subject_of(key)))
    return x


def read_positive(value: Any, key: str) -> float:
    x = read_number(value, key)
    if x <= 0:
        raise PlanError(
            key,
            _("{field} must be greater than 0 (you wrote {value})").format(
                field=subject_of(key), value=value
            ),
        )
    return x


def read_delta(value: Any, key: str, *, allow_zero: bool, floor: bool = True) -> float:
    x = read_number(value, key)
    if x < 0 or x >= 1 or (x == 0 and not allow_zero):
        lo = "[0, 1)" if allow_zero else "(0, 1)"
        raise PlanError(
            key,
            _("{field} must lie in {range} (you wrote {value})").format(
                field=subject_of(key), range=lo, value=value
            ),
        )
    if floor and 0 < x < MIN_DELTA:
        what = (
            _("use a delta of at least {floor}, or 0 for a budget of pure epsilon")
            if allow_zero
            else _("use a delta of at least {floor}")
        )
        raise PlanError(
            key,
            _(
                "{value} is below {floor}, the smallest delta dpdesk accepts: below it the "
                "Gaussian noise cannot be calibrated reliably; {what}"
            ).format(value=f"{x:g}", floor=f"{MIN_DELTA:g}", what=what.format(floor=f"{MIN_DELTA:g}")),
        )
    return x


def read_text(value: Any, key: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str):
        raise PlanError(
            key, _("{field} must be text, not {kind}").format(field=subject_of(key), kind=json_type(value))
        )
    if choices is not None and value not in choices:
        raise PlanError(
            key,
            _("{field} must be one of {choices} (you wrote {value})").format(
                field=subject_of(key), choices=", ".join(choices), value=quoted(value)
            ),
            hint=did_you_mean(value, choices),
        )
    if choices is None and not value.strip():
        raise PlanError(key, _("{field} must not be empty").format(field=subject_of(key)))
    if len(value) > MAX_NAME_LENGTH and choices is None:
        raise PlanError(
            key,
            _("{field} is longer than {n} characters").format(field=subject_of(key), n=MAX_NAME_LENGTH),
        )
    return value


def parse_budget(value: Any) -> Budget:
    obj = read_object(value, "budget")
    check_keys(obj, "budget", {"epsilon", "delta"}, ("epsilon",))
    if is_placeholder(obj["epsilon"]):
        raise PlanError(
            "budget.epsilon",
            _(
                "epsilon is still to fill in: the dataset's total privacy budget, for example 1 (fixed at its "
                "first release)"
            ),
        )
    return Budget(obj["epsilon"], obj.get("delta", 0.0))  # validated when built


def parse_unit(value: Any) -> PrivacyUnit:
    obj = read_object(value, "privacy_unit")
    check_keys(obj, "privacy_unit", {"neighbouring", "max_rows_per_person", "id_column"}, ("neighbouring",))
    # validated when built
    return PrivacyUnit(obj["neighbouring"], obj.get("max_rows_per_person", 1), obj.get("id_column"))


def _delta_prime_required() -> str:
    return _("delta_prime is required with advanced composition (for example 1e-7)")


def _delta_prime_only_advanced() -> str:
    return _("delta_prime only applies to advanced composition")


def parse_accounting(value: Any, budget: Budget | None) -> Accounting:
    """The accounting; with ``budget`` None (it has a problem of its own) the checks against it are skipped."""
    obj = read_object(value, "accounting")
    check_keys(obj, "accounting", {"method", "delta_prime"}, ())
    method = read_text(obj.get("method", "sequential"), "accounting.method", ACCOUNTING_METHODS)
    delta_prime = None
    if method == "advanced":
        if "delta_prime" not in obj:
            raise PlanError("accounting.delta_prime", _delta_prime_required())
        # no floor: delta' enters only the closed-form advanced bound, exact for any delta' > 0
        delta_prime = read_delta(obj["delta_prime"], "accounting.delta_prime", allow_zero=False, floor=False)
        if budget is not None and delta_prime > budget.delta:
            raise PlanError(
                "accounting.delta_prime",
                _("delta_prime ({dp}) must not exceed budget.delta ({d}): it is spent from it").format(
                    dp=f"{delta_prime:g}", d=f"{budget.delta:g}"
                ),
            )
    elif "delta_prime" in obj:
        raise PlanError("accounting.delta_prime", _delta_prime_only_advanced())
    if method == "zcdp" and budget is not None and budget.delta <= 0:
        raise PlanError(
            "budget.delta", _("zCDP accounting converts to (epsilon, delta) and needs budget.delta > 0")
        )
    return Accounting(AccountingMethod(method), delta_prime)


_COLUMN_KEYS = {"type", "bounds", "categories", "missing"}


def parse_columns(value: Any, problems: list[PlanError]) -> tuple[dict[str, ColumnSpec], set[str]]:
    """The valid columns and the names of the broken ones (their problems appended to ``problems``)."""
    try:
        obj = read_object(value, "columns")
        if not obj:
            raise PlanError("columns", _("declare at least one column"))
    except PlanError as exc:
        problems.append(exc)
        return {}, set()
    out: dict[str, ColumnSpec] = {}
    broken: set[str] = set()
    for name, spec in obj.items():
        key = f"columns.{name}"
        try:
            if not name.strip():
                raise PlanError(key, _("a column name must not be empty"))
            out[name] = _parse_column(name, spec, key)
        except PlanError as exc:
            problems.append(exc)
            broken.add(name)
    return out, broken


def _no_bounds_for_category() -> str:
    return _("a category column has categories, not bounds")


def _categories_required() -> str:
    return _(
        "categories are required for a category column: list the possible values, or import them from a "
        "codebook (they must not be read off the data)"
    )


def _no_categories_for_numbers(name: str, ctype: str) -> str:
    return _("only category columns have categories ({name} is {type})").format(name=name, type=ctype)


def _bounds_required() -> str:
    return _(
        "bounds are required for a numeric column: type the public lower and upper bound "
        "(they must not be read off the data)"
    )


def _missing_shape() -> str:
    return _('missing must be "drop" or the value to impute, as in {example}').format(example='{"impute": 0}')


def _parse_column(name: str, value: Any, key: str) -> ColumnSpec:
    obj = read_object(value, key)
    check_keys(obj, key, _COLUMN_KEYS, ("type",))
    if is_placeholder(obj["type"]):
        raise PlanError(
            f"{key}.type",
            _(
                "the type is still to fill in: write int (whole numbers), float (numbers) or category (labels); "
                'then keep "bounds" for int or float, or "categories" for category, and delete the other (or '
                "delete the column if no query uses it)"
            ),
        )
    ctype = read_text(obj["type"], f"{key}.type", COLUMN_TYPES)
    bounds: tuple[float, float] | None = None
    categories: tuple[str, ...] | None = None
    if ctype in ("int", "float"):
        if "categories" in obj and is_placeholder(obj["categories"]):
            raise PlanError(
                f"{key}.categories",
                _('a number column (int or float) has bounds, not categories: delete "categories"'),
            )
        if "categories" in obj:
            raise PlanError(f"{key}.categories", _no_categories_for_numbers(name, ctype))
        if "bounds" not in obj:
            raise PlanError(f"{key}.bounds", _bounds_required())
        bounds = _parse_bounds(obj["bounds"], f"{key}.bounds", integer=ctype == "int")
    else:
        if "bounds" in obj and _template_bounds(obj["bounds"]):
            raise PlanError(
                f"{key}.bounds", _('a category column has categories, not bounds: delete "bounds"')
            )
        if "bounds" in obj:
            raise PlanError(f"{key}.bounds", _no_bounds_for_category())
        if "categories" not in obj:
            raise PlanError(f"{key}.categories", _categories_required())
        categories = _parse_categories(obj["categories"], f"{key}.categories")
    missing = _parse_missing(obj.get("missing", "drop"), f"{key}.missing", ctype, bounds, categories)
    return ColumnSpec(name, ColumnType(ctype), bounds, categories, missing)


def _template_bounds(value: Any) -> bool:
    """Bounds that still hold a template's placeholder (``["?", "?"]``, or one of them filled)."""
    return isinstance(value, (list, tuple)) and any(is_placeholder(x) for x in value)


def _parse_bounds(value: Any, key: str, *, integer: bool) -> tuple[float, float]:
    if _template_bounds(value):
        raise PlanError(
            key,
            _(
                'the bounds are still to fill in: write the public lower and upper bound in place of each "?", '
                "for example [0, 100] (they must not be read off the data)"
            ),
        )
    if value is None or (isinstance(value, (list, tuple)) and not any(v is not None for v in value)):
        raise PlanError(
            key,
            _(
                "the lower and upper bounds are missing: give the smallest and largest values that can occur, "
                "known without looking at the data (a codebook, a legal limit)"
            ),
        )
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise PlanError(key, _("bounds must be a list of two numbers [lower, upper]"))
    lo = read_number(value[0], f"{key}[0]")
    hi = read_number(value[1], f"{key}[1]")
    if lo > hi:
        raise PlanError(
            key,
            _("the lower bound {lo} is above the upper bound {hi} (reversed bounds)").format(
                lo=value[0], hi=value[1]
            ),
            hint=_("write [{hi}, {lo}]").format(lo=value[0], hi=value[1]),
        )
    if lo == hi:
        raise PlanError(key, _("the lower and upper bound are equal ({x}); give a range").format(x=value[0]))
    if hi - lo < MIN_BOUND_WIDTH:
        raise PlanError(
            key,
            _("the bounds span less than {width}: give a wider range (or rescale the column)").format(
                width=f"{MIN_BOUND_WIDTH:g}"
            ),
        )
    if max(abs(lo), abs(hi)) > MAX_ABS_BOUND:
        raise PlanError(key, _("bounds beyond ±{most} are not supported").format(most=f"{MAX_ABS_BOUND:g}"))
    step = grid_step(lo, hi, integer=integer)
    rounded = not integer or step > 1.0  # whole numbers on a step of 1 are exact
    if rounded and hi - lo < MIN_GRID_STEPS * step:
        raise PlanError(
            key,
            _(
                "the bounds are too narrow for numbers this large: dpdesk keeps each value to a step of {step} "
                "here, and [{lo}, {hi}] spans fewer than {n} steps"
            ).format(step=f"{step:g}", lo=value[0], hi=value[1], n=MIN_GRID_STEPS),
            hint=_(
                "subtract a constant from the column first (e.g. the lower bound), so that its values are small"
            ),
        )
    if integer and (lo != math.floor(lo) or hi != math.floor(hi)):
        raise PlanError(
            key,
            _("an int column needs whole-number bounds"),
            hint=_("write [{lo}, {hi}], or make the column float").format(
                lo=math.floor(lo), hi=math.ceil(hi)
            ),
        )
    return (lo, hi)


#: A numeric column's bounds span at least this many steps of its fixed-point grid (see :func:`grid_step`).
MIN_GRID_STEPS = 64


def grid_step(lo: float, hi: float, *, integer: bool) -> float:
    """The step of the fixed-point grid a numeric column's values are held on (2^-s): the same exponent as
    :func:`dpdesk.core.dp.queries_base.grid_exponent` (30 bits of the largest bound; whole numbers for an int
    column whose bounds are within 2^30); tests/core/test_where.py checks that they agree."""
    m = max(abs(lo), abs(hi))
    s = 30 - math.ceil(math.log2(m)) if m > 0 else 30
    if integer:
        s = min(0, s)
    return math.ldexp(1.0, -s)


def _parse_categories(value: Any, key: str) -> tuple[str, ...]:
    if is_placeholder(value):
        raise PlanError(
            key,
            _(
                'the categories are still to fill in: list every possible label in place of the "?", for '
                'example ["north", "south"], or import them from a codebook (they must not be read off the data)'
            ),
        )
    if value is None or (isinstance(value, (list, tuple)) and not value):
        raise PlanError(
            key,
            _(
                "no categories yet: list every category the column can hold, from a codebook or the questionnaire "
                "(never from the data); values not listed count as missing"
            ),
        )
    if not isinstance(value, (list, tuple)):
        raise PlanError(key, _("categories must be a non-empty list of category labels"))
    if len(value) > MAX_CATEGORIES:
        raise PlanError(key, _("at most {n} categories are supported").format(n=MAX_CATEGORIES))
    out: list[str] = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise PlanError(f"{key}[{i}]", _("a category label must be text (or a whole number)"))
        label = str(v)
        if not label.strip():
            raise PlanError(f"{key}[{i}]", _("a category label must not be empty"))
        out.append(label)
    seen: set[str] = set()
    for i, label in enumerate(out):
        if label in seen:
            raise PlanError(f"{key}[{i}]", listed_twice(label))
        seen.add(label)
    return tuple(out)


def listed_twice(label: str) -> str:
    return _("category {label} is listed twice").format(label=quoted(label))


def _not_a_category(v: object, categories: tuple[str, ...] | None) -> PlanError:
    """An impute value that is not a declared category (``key`` set by the caller)."""
    return PlanError(
        "",
        _("the value to impute must be one of the declared categories (you wrote {value})").format(
            value=_wrote(v)
        ),
        hint=did_you_mean(str(v), categories or ()),
    )


def _impute_outside(v: object, bounds: tuple[float, float]) -> str:
    return _("the value to impute, {value}, lies outside the bounds [{lo}, {hi}]").format(
        value=v, lo=f"{bounds[0]:g}", hi=f"{bounds[1]:g}"
    )


def _parse_missing(
    value: Any,
    key: str,
    ctype: str,
    bounds: tuple[float, float] | None,
    categories: tuple[str, ...] | None,
) -> Missing:
    if value == MissingPolicy.DROP:
        return Missing()
    if isinstance(value, dict):
        check_keys(value, key, {"impute"}, ("impute",))
        v = value["impute"]
        if ctype == "category":
            if not isinstance(v, (str, int)) or isinstance(v, bool) or str(v) not in (categories or ()):
                err = _not_a_category(v, categories)
                raise PlanError(f"{key}.impute", err.message, hint=err.hint)
            return Missing(str(v))
        x = read_number(v, f"{key}.impute")
        assert bounds is not None
        if not bounds[0] <= x <= bounds[1]:
            raise PlanError(f"{key}.impute", _impute_outside(v, bounds))
        if ctype == "int" and x != math.floor(x):
            raise PlanError(f"{key}.impute", _("an int column needs a whole number to impute"))
        return Missing(x)
    raise PlanError(key, _missing_shape(), hint=did_you_mean(str(value), ("drop",)))


def _check_impute(
    v: float | str | None,
    key: str,
    ctype: ColumnType,
    bounds: tuple[float, float] | None,
    categories: tuple[str, ...] | None,
) -> None:
    """The checks of :func:`_parse_missing` on a built :class:`Missing`'s value (None: rows are dropped)."""
    if v is None:
        return
    if ctype == ColumnType.CATEGORY:
        if not isinstance(v, str) or v not in (categories or ()):
            err = _not_a_category(v, categories)
            raise PlanError(f"{key}.impute", err.message, hint=err.hint)
        return
    x = read_number(v, f"{key}.impute")
    assert bounds is not None
    if not bounds[0] <= x <= bounds[1]:
        raise PlanError(f"{key}.impute", _impute_outside(v, bounds))
    if ctype == ColumnType.INT and x != math.floor(x):
        raise PlanError(f"{key}.impute", _("an int column needs a whole number to impute"))


def _and_list(words: list[str]) -> str:
    """'a, b and c'."""
    if len(words) == 1:
        return words[0]
    return _("{items} and {last}").format(items=", ".join(words[:-1]), last=words[-1])


def or_list(words: list[str]) -> str:
    """'a or b'."""
    return _(" or ").join(words)


#: A statistic a plan cannot name, and the registered one that gives it (the hint says how).
_STATISTIC_HINTS = {
    "median": lambda: _("use quantile with q = 0.5 for a median"),
    "percentile": lambda: _("use quantile with q between 0 and 1 (q = 0.9 for the 90th percentile)"),
    "quartile": lambda: _("use quantile with q = 0.25 or q = 0.75 for a quartile"),
    "min": lambda: _("use quantile with a small q (for example 0.05): an exact minimum cannot be released"),
    "minimum": lambda: _(
        "use quantile with a small q (for example 0.05): an exact minimum cannot be released"
    ),
    "max": lambda: _("use quantile with a large q (for example 0.95): an exact maximum cannot be released"),
    "maximum": lambda: _(
        "use quantile with a large q (for example 0.95): an exact maximum cannot be released"
    ),
    "average": lambda: _("use mean for an average"),
    "avg": lambda: _("use mean for an average"),
    "total": lambda: _("use sum for a total"),
    "frequency": lambda: _("use histogram for counts per category or bin"),
    "frequencies": lambda: _("use histogram for counts per category or bin"),
    "distribution": lambda: _("use histogram for counts per category or bin"),
    "share": lambda: _("use proportion for a share"),
    "percentage": lambda: _("use proportion for a share"),
    "rate": lambda: _("use proportion for a share"),
    "most_common": lambda: _("use mode for the most common category"),
    "argmax": lambda: _("use select to pick the best of declared candidates"),
}


def read_statistic(value: Any, key: str, names: tuple[str, ...]) -> str:
    """The query's statistic word, with a hint that names the statistic to use for a common other word."""
    if isinstance(value, str) and value not in names:
        word = value.strip().casefold().replace(" ", "_").replace("-", "_")
        known = {n.casefold(): n for n in names}
        hint = _STATISTIC_HINTS[word]() if word in _STATISTIC_HINTS else did_you_mean(value, names)
        if word in known:
            hint = _('write "{word}"').format(word=known[word])
        raise PlanError(
            key,
            _("statistic must be one of {choices} (you wrote {value})").format(
                choices=", ".join(names), value=quoted(value)
            ),
            hint=hint,
        )
    return read_text(value, key, names)


class BrokenColumn(PlanError):
    """A query names a declared column whose declaration has a problem (reported once, for the column)."""


def read_column(
    value: Any, key: str, columns: dict[str, ColumnSpec], broken: AbstractSet[str], what: str
) -> str:
    """A query's column (or grouping column): declared and without a problem of its own."""
    name = read_text(value, key)
    if name in broken:  # its declaration's problem is reported; the query is checked again once it is fixed
        raise BrokenColumn(key, "")
    if name not in columns:
        raise PlanError(
            key,
            _("{what} {name} is not declared in columns").format(what=what, name=quoted(name)),
            hint=did_you_mean(name, list(columns) + sorted(broken)),
        )
    return name


def not_released_with(key: str, statistic: str, allowed: tuple[str, ...], mechanism: str) -> PlanError:
    return PlanError(
        key,
        _("{statistic} is released with {allowed}, not {mechanism}").format(
            statistic=statistic, allowed=or_list(list(allowed)), mechanism=mechanism
        ),
        hint=_('write "{word}"').format(word=allowed[0]) if len(allowed) == 1 else "",
    )


def gaussian_delta_required() -> str:
    return _("delta is required for the Gaussian mechanism (for example 1e-7)")


def aim_delta_required(key: str) -> PlanError:
    """The adaptive synthesiser is zCDP throughout: a delta of 0 (or none) is refused, naming the two fixes."""
    return PlanError(
        key,
        _(
            "the adaptive synthesiser (mechanism aim) needs a delta above 0: its rounds are measured with "
            "Gaussian noise under zCDP"
        ),
        hint=_(
            'write a delta such as "delta": 1e-6, or use "mechanism": "mst" for a synthetic table with delta 0'
        ),
    )


def only_gaussian_delta(key: str, mechanism: str) -> PlanError:
    return PlanError(
        key,
        _("only the Gaussian mechanism takes a delta ({mechanism} is pure epsilon-DP)").format(
            mechanism=mechanism
        ),
        hint=_("remove delta, or choose the Gaussian mechanism"),
    )


def calibration_only_gaussian() -> str:
    return _("calibration only applies to the Gaussian mechanism")


def takes_no_column(stat: Any) -> str:
    return str(stat.no_column_message() or _("{statistic} takes no column").format(statistic=stat.name))


def column_required(statistic: str) -> str:
    return _("column is required for {statistic}").format(statistic=statistic)


def cannot_group(statistic: str) -> str:
    can = _and_list([s.name for s in _statistics().REGISTRY.values() if s.groupable])
    return _("{statistic} cannot be grouped ({can} can)").format(statistic=statistic, can=can)


def no_where(statistic: str) -> str:
    return _("{statistic} reads every row: it takes no where").format(statistic=statistic)


def too_many_conditions() -> str:
    return _("a where holds at most {n} conditions").format(n=MAX_CONDITIONS)


def no_self_grouping() -> str:
    return _("a query cannot group a column by itself")


def increasing(value: Any, key: str, *, minimum: int, maximum: int) -> tuple[float, ...]:
    if not isinstance(value, list):
        raise PlanError(key, _("{field} must be a list of numbers").format(field=subject_of(key)))
    if not minimum <= len(value) <= maximum:
        raise PlanError(
            key,
            _("{field} must hold from {lo} to {hi} numbers (you gave {n})").format(
                field=subject_of(key), lo=minimum, hi=maximum, n=len(value)
            ),
        )
    xs = tuple(read_number(v, f"{key}[{i}]") for i, v in enumerate(value))
    for i in range(1, len(xs)):
        if xs[i] <= xs[i - 1]:
            raise PlanError(
                f"{key}[{i}]",
                _("the values of {field} must be strictly increasing ({a} is followed by {b})").format(
                    field=subject_of(key), a=f"{xs[i - 1]:g}", b=f"{xs[i]:g}"
                ),
            )
    if max(abs(xs[0]), abs(xs[-1])) > MAX_ABS_BOUND:
        raise PlanError(key, _("values beyond ±{most} are not supported").format(most=f"{MAX_ABS_BOUND:g}"))
    return xs


def inside_bounds(xs: tuple[float, ...], bounds: tuple[float, float], key: str) -> None:
    for i, x in enumerate(xs):
        if not bounds[0] <= x <= bounds[1]:
            raise PlanError(
                f"{key}[{i}]",
                _("{x} lies outside the column bounds [{lo}, {hi}]").format(
                    x=f"{x:g}", lo=f"{bounds[0]:g}", hi=f"{bounds[1]:g}"
                ),
            )


# ----------------------------------------------------------------------------- writing


def num_out(x: float) -> int | float:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else x


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """Serialise a plan in the file format, defaults written out, so that it round-trips."""
    cols: dict[str, Any] = {}
    for name, c in plan.columns.items():
        d: dict[str, Any] = {"type": c.type.value}
        if c.bounds is not None:
            d["bounds"] = [num_out(c.bounds[0]), num_out(c.bounds[1])]
        if c.categories is not None:
            d["categories"] = list(c.categories)
        d["missing"] = (
            "drop"
            if c.missing.drops
            else {
                "impute": c.missing.impute
                if isinstance(c.missing.impute, str)
                else num_out(float(c.missing.impute or 0.0))
            }
        )
        cols[name] = d
    queries: list[dict[str, Any]] = []
    statistics = _statistics()
    for q in plan.queries:
        d = {"name": q.name, "statistic": q.statistic, "mechanism": q.mechanism}
        if q.accuracy is not None:  # the epsilon is solved from it again when the plan is read
            d["accuracy"] = q.accuracy.to_dict()
        else:
            d["epsilon"] = q.epsilon
        if q.mechanism == "gaussian":
            d["delta"] = q.delta
            d["calibration"] = q.calibration
        elif q.mechanism in ("mst", "aim"):
            d["delta"] = q.delta
        if q.column is not None:
            d["column"] = q.column
        if q.group_by is not None:
            d["group_by"] = q.group_by
        if q.where:  # only when stated: the hashes of plans without it do not change
            d["where"] = [c.to_dict() for c in q.where]
        if q.expected_rows is not None:
            d["expected_rows"] = q.expected_rows
        d.update(statistics.get(q.statistic).fields_to_dict(q))
        queries.append(d)
    unit: dict[str, Any] = {
        "neighbouring": plan.privacy_unit.neighbouring.value,
        "max_rows_per_person": plan.privacy_unit.max_rows_per_person,
    }
    if plan.privacy_unit.id_column is not None:
        unit["id_column"] = plan.privacy_unit.id_column
    accounting: dict[str, Any] = {"method": plan.accounting.method.value}
    if plan.accounting.delta_prime is not None:
        accounting["delta_prime"] = plan.accounting.delta_prime
    out: dict[str, Any] = {
        "version": plan.version,
        "title": plan.title,
        "budget": {"epsilon": plan.budget.epsilon, "delta": plan.budget.delta},
        "privacy_unit": unit,
        "accounting": accounting,
        "columns": cols,
        "queries": queries,
    }
    if plan.expected_rows is not None:  # only when stated: the hashes of plans without it do not change
        out["expected_rows"] = plan.expected_rows
    return out
