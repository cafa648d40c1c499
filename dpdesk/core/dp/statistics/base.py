"""What a statistic declares: its plan word, labels, parameters, mechanisms, query type, design, exact
aggregate, released rows, figure and examples.

One module per statistic in this package defines a subclass of :class:`Statistic` and an instance of it
named ``STATISTIC``; the package finds them (see :mod:`dpdesk.core.dp.statistics`). A statistic imports them
and the shared machinery through :mod:`dpdesk.core.dp.statistics.kit` only. That machinery is below the registry:
the plan's values in :mod:`dpdesk.core.model.spec`,
the designs' :class:`~dpdesk.core.dp.queries_base.Component` and noise-component builder in
:mod:`dpdesk.core.dp.queries_base`, the fixed-point grid and exact sums in :mod:`dpdesk.core.dp.aggregates_base`, the
accuracy statement in :mod:`dpdesk.core.dp.accuracy_base`, the number formatting in :mod:`dpdesk.core.dp.values`
(:mod:`dpdesk.core.dp.queries`, :mod:`dpdesk.core.dp.aggregates`, :mod:`dpdesk.core.dp.accuracy` and
:mod:`dpdesk.core.plan.reader` read the registry and are above it).

Parameters are declared in a small typed vocabulary (:class:`ParamKind`) that both the plan validator
(:mod:`dpdesk.core.plan.reader`) and the query form (``dpdesk/gui/views/query_form.py``) read: the form builds
one widget per kind, the validator checks the column, the grouping and the keys that do not apply, and
the statistic parses its own fields with the kind's parser (:func:`parse_param`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp.accuracy_base import Accuracy, statistic_accuracy
from dpdesk.core.dp.queries_base import QueryDesign, interval_halfwidth, to_natural, value_spread
from dpdesk.core.dp.values import Row, fmt_number, rounded_row
from dpdesk.core.model.mechanism_kinds import Mechanism
from dpdesk.core.model.spec import (
    MAX_ABS_BOUND,
    ColumnSpec,
    Plan,
    QuerySpec,
    did_you_mean,
    increasing,
    json_type,
    listed_twice,
    quoted,
    read_number,
    read_positive,
    read_text,
    subject_of,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    import numpy as np

    from dpdesk.core.dp.aggregates_base import Exact
    from dpdesk.core.loading import Table

NUMERIC = ("int", "float")
CATEGORY = ("category",)


class ParamKind(StrEnum):
    """The kinds of query parameter; the form has one widget per kind, the validator one parser."""

    COLUMN = "column"  # a declared column of the allowed types (``Param.column_types``)
    GROUP_BY = "group_by"  # a category column whose categories split the statistic
    FRACTION = "fraction"  # a number strictly between 0 and 1
    POSITIVE = "positive"  # a number greater than 0
    NUMBER = "number"  # any finite number within the supported range
    NUMBER_LIST = "number_list"  # strictly increasing numbers, from min_len to max_len of them
    CATEGORY_SET = "category_set"  # distinct declared categories of the query's column
    CHOICE = "choice"  # one of fixed words (the form hides it when there is one)
    COLUMN_LIST = "column_list"  # distinct declared columns, from min_len to max_len of them
    WHOLE_NUMBER = "whole_number"  # a whole number from 1 to max_len
    BIN_MAP = "bin_map"  # public bin edges per numeric column of the query's columns


@dataclass(frozen=True)
class Param:
    """One parameter of a statistic, as the plan writes it (``key``) and the form shows it."""

    key: str
    kind: ParamKind
    label: Callable[[], str]
    help: Callable[[], str]
    #: COLUMN: the allowed column types, in the form's order. Other kinds: the types of the query's
    #: column for which the parameter applies (empty: whatever the column).
    column_types: tuple[str, ...] = ()
    #: COLUMN: the order in which the form picks a default column (empty: ``column_types``).
    prefer: tuple[str, ...] = ()
    min_len: int = 0
    max_len: int = 0
    choices: tuple[str, ...] = ()
    #: The value the form shows when the plan has none (a FRACTION's default, e.g. q = 0.5).
    shown_default: Any = None

    def applies_to(self, column_type: str | None) -> bool:
        """Whether the parameter applies when the query's column has this type (the form shows it then)."""
        if self.kind in (ParamKind.COLUMN, ParamKind.GROUP_BY) or not self.column_types:
            return True
        return column_type in self.column_types


def parse_param(param: Param, value: Any, key: str, column: ColumnSpec | None = None) -> Any:
    """Validate one parameter value by its kind (``key``: the plan key for messages)."""
    kind = param.kind
    if kind is ParamKind.FRACTION:
        x = read_number(value, key)
        if not 0 < x < 1:
            raise PlanError(
                key,
                _("{field} must lie strictly between 0 and 1 (you wrote {value})").format(
                    field=subject_of(key), value=value
                ),
            )
        return x
    if kind is ParamKind.POSITIVE:
        return read_positive(value, key)
    if kind is ParamKind.NUMBER:
        x = read_number(value, key)
        if abs(x) > MAX_ABS_BOUND:
            raise PlanError(
                key, _("values beyond ±{most} are not supported").format(most=f"{MAX_ABS_BOUND:g}")
            )
        return x
    if kind is ParamKind.NUMBER_LIST:
        return increasing(value, key, minimum=param.min_len, maximum=param.max_len)
    if kind is ParamKind.CHOICE:
        return read_text(value, key, param.choices)
    if kind is ParamKind.CATEGORY_SET:
        return _category_set(param, value, key, column)
    raise AssertionError(f"{kind} is validated by the plan itself")  # pragma: no cover


def check_field(spec: QuerySpec, param: Param, value: Any) -> Any:
    """A query's own field validated when the query is built, by its kind as the plan's parser does (keyed
    ``query.<key>``; a tuple reads as the plan's list); the normalised value is stored and returned."""
    x = parse_param(param, list(value) if isinstance(value, tuple) else value, f"query.{param.key}")
    object.__setattr__(spec, param.key, x)
    return x


def _category_set(param: Param, value: Any, key: str, column: ColumnSpec | None) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise PlanError(
            key,
            _("{field} must be a list of categories, not {kind}").format(
                field=subject_of(key), kind=json_type(value)
            ),
        )
    lo = max(1, param.min_len)
    hi = param.max_len or len(column.categories or ()) if column is not None else param.max_len
    if len(value) < lo or (hi and len(value) > hi):
        raise PlanError(
            key,
            _("{field} must list from {lo} to {hi} categories (you gave {n})").format(
                field=subject_of(key), lo=lo, hi=hi, n=len(value)
            ),
        )
    declared = column.categories if column is not None and column.categories is not None else ()
    out: list[str] = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise PlanError(f"{key}[{i}]", _("a category label must be text (or a whole number)"))
        label = str(v)
        if label not in declared:
            raise PlanError(
                f"{key}[{i}]",
                _("{label} is not a declared category of column {column}").format(
                    label=quoted(label), column=quoted(column.name if column else "")
                ),
                hint=did_you_mean(label, declared),
            )
        if label in out:
            raise PlanError(f"{key}[{i}]", listed_twice(label))
        out.append(label)
    return tuple(out)


@dataclass(frozen=True)
class Rows:
    """A query's kept rows, as the exact aggregate reads them (secret: never shown, saved or logged)."""

    design: QueryDesign
    column: ColumnSpec | None
    x: np.ndarray | None  # the column's values under its missing policy, on the kept rows
    groups: np.ndarray | None  # the group codes of the kept rows
    n_groups: int
    n_kept: int
    #: The whole table and the kept rows (None: all), for a statistic of several columns (the synthesiser).
    table: Table | None = None
    keep: np.ndarray | None = None


@dataclass(frozen=True)
class DesignContext:
    """The unit of privacy as a design reads it, with the texts its derivations share."""

    k: int
    replace: bool
    rel: str  # "replace" or "add/remove", translated
    who: str  # "one row" or "one person (up to k rows)", translated
    drops: bool  # under replace, whether a row of this query can drop out
    causes: str  # how it can, for the derivation text
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AuditExample:
    """Two neighbouring tables for the privacy audit (tests/trust/test_audit.py), on a float column ``x``
    with ``bounds`` and a category column ``g`` of categories a, b, c; rows are (x, category code)."""

    name: str
    query: dict[str, Any]  # with mechanism and epsilon, without name
    relation: str
    d: tuple[tuple[float, int], ...]
    dp: tuple[tuple[float, int], ...]
    draws: int
    #: Whether halving the noise must be caught: the pair reaches the claimed epsilon.
    tight: bool = True
    bounds: tuple[float, float] = (-7.0, 3.0)
    #: For a query of rounds (the adaptive synthesiser): which mechanism of its first adaptive round is audited,
    #: "selection" or "measurement", with the rounds before it fixed to the same released values on both tables.
    part: str = ""


NoiseFn = Callable[[list[int], Any], list[int]]
PickFn = Callable[[list[float], Any], int]


class Statistic:
    """The base of every statistic: subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    #: Where the statistic sits in lists (plan vocabulary, the form): lower first, then by name.
    order: ClassVar[int] = 1000
    mechanisms: ClassVar[tuple[Mechanism, ...]]
    params: ClassVar[tuple[Param, ...]] = ()
    query_type: ClassVar[type[QuerySpec]] = QuerySpec
    #: The figure the preview draws for it: "noise" (the noise's density) or "selection" (the exponential
    #: mechanism's probability of picking the better candidate).
    figure: ClassVar[str] = "noise"
    #: Whether the exact statistic is a sum of per-row contributions (the brute-force test then needs few bases).
    additive: ClassVar[bool] = True
    #: How its accuracy is stated and solved (:mod:`dpdesk.core.dp.accuracy`): "value" (noise added to the
    #: value itself), "ratio" (a noisy sum over a noisy count), "rank" (a quantile) or "lead" (a selection).
    accuracy_kind: ClassVar[str] = "value"
    #: Whether the query form offers it (the synthesiser waits for its own form).
    in_form: ClassVar[bool] = True
    #: A query of adaptive stages over several columns (the synthesiser): the registry-wide harnesses of
    #: one-shot mechanisms (neighbour enumeration, the audit by examples, accuracy solving) do not apply; its
    #: own tests cover it (tests/core/test_synthetic*.py).
    composite: ClassVar[bool] = False
    #: Whether one query releases several cells even when it is not grouped (a histogram's bins): an accuracy
    #: target then says whether each cell on its own or all cells together must be within the error.
    several_cells: ClassVar[bool] = False
    #: The units its accuracy is stated in when they are not the column's (or a count's rows): "rows" for a
    #: lead whose utility counts rows (a mode), "share" for a ratio that is a share (a proportion); empty for
    #: the column's units, or a utility's own.
    accuracy_unit: ClassVar[str] = ""
    #: Whether a query of it may take a public row condition (``where``); the synthesiser draws from every row.
    takes_where: ClassVar[bool] = True
    #: The mechanism a plan may leave out for this statistic (the synthesiser's own); None: the plan names it.
    default_mechanism: ClassVar[Mechanism | None] = None

    # ------------------------------------------------------------------ labels
    def label(self) -> str:
        """The statistic's name in the form's list."""
        return self.name

    def word(self) -> str:
        """The statistic's short name in tables (the plan keeps its own word)."""
        return self.name

    def help(self) -> str:
        """A sentence on what it computes."""
        return ""

    def no_column_message(self) -> str:
        """The message for a column given to a statistic that takes none (empty: the plan's own)."""
        return ""

    def no_interval(self) -> str:
        """What the report's 95% interval column says for a released row without an interval."""
        return _("(a chosen candidate)")

    def lead_help(self) -> str:
        """What a selection's lead (its accuracy target's error) means, for the form's tooltip."""
        return _(
            "How far, in the utility's units, the best candidate is above every other when it must be chosen."
        )

    # ------------------------------------------------------------------ parameters
    def param(self, kind: ParamKind) -> Param | None:
        """The parameter of this kind, if the statistic has one."""
        return next((p for p in self.params if p.kind is kind), None)

    @property
    def column_param(self) -> Param | None:
        """Its column parameter (None: it takes no column)."""
        return self.param(ParamKind.COLUMN)

    @property
    def groupable(self) -> bool:
        """Whether it can be grouped by a category column."""
        return self.param(ParamKind.GROUP_BY) is not None

    @property
    def own_keys(self) -> tuple[str, ...]:
        """The plan keys of its own parameters (not column or group_by)."""
        return tuple(p.key for p in self.params if p.kind not in (ParamKind.COLUMN, ParamKind.GROUP_BY))

    def parse(
        self, obj: dict[str, Any], key: str, common: dict[str, Any], col: ColumnSpec | None
    ) -> QuerySpec:
        """Validate its own fields (the shared ones are in ``common``) and build its query."""
        return self.query_type(**common)

    def parse_with_columns(
        self,
        obj: dict[str, Any],
        key: str,
        common: dict[str, Any],
        columns: dict[str, ColumnSpec],
        broken: Any,
    ) -> QuerySpec:
        """A statistic of several columns validates them here (the plan's declared columns and those with a
        problem of their own); the others parse their fields with :meth:`parse`."""
        col = columns[common["column"]] if common.get("column") is not None else None
        return self.parse(obj, key, common, col)

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        """Its own fields in the plan file's format (after the shared ones)."""
        return {}

    def ledger_fields(self, exact: Exact) -> dict[str, Any] | None:
        """What the spend entry keeps of this query beyond its rows (the synthesiser's noisy marginals and
        seed), once :meth:`release_rows` has noised it; None for the others."""
        return None

    def n_cells(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        """How many cells its design will have (one per group, or one), counted from the plan alone so that
        a plan too large to design is refused before anything is allocated."""
        if spec.group_by is None:
            return 1
        return len(columns[spec.group_by].categories or ())

    def n_candidates(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        """How many candidates its selection scores (the exponential mechanism's outputs), counted from the plan
        alone: scoring allocates per candidate, so a plan's total is bounded (:data:`MAX_PLAN_CANDIDATES`)."""
        return 0

    # ------------------------------------------------------------------ design, exact, release
    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        """Sensitivity (with the derivation), components and cells, from the plan alone."""
        raise NotImplementedError

    def exact(self, rows: Rows) -> Exact:
        """The exact statistic of the kept rows: integer vectors per component, or the utilities."""
        raise NotImplementedError

    def partial(self, rows: Rows) -> list[list[int]]:
        """The exact statistic's mergeable state on some of the rows: integer vectors that add up, element by
        element, over disjoint sets of rows (a streaming pass merges its batches so, exactly; see
        :mod:`dpdesk.core.release.streaming`). By default the exact vectors themselves (counts and fixed-point sums)."""
        return self.exact(rows).vectors

    def from_partial(self, design: QueryDesign, state: list[list[int]]) -> Exact:
        """The exact statistic from its merged state (:meth:`partial` over every kept row)."""
        from dpdesk.core.dp.aggregates_base import Exact

        return Exact(state)

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        """Noise the exact statistic and format its released rows (post-processing only)."""

        spec = design.spec
        eps_s, delta_s = fmt_number(spec.epsilon), fmt_number(spec.delta)
        if spec.mechanism == "exponential":
            assert exact.utilities is not None and design.candidates is not None
            idx = pick(exact.utilities, design.components[0])
            chosen = design.candidates[idx]
            value = chosen if isinstance(chosen, str) else fmt_number(chosen)
            return [Row(spec.name, "", value, "", "", spec.mechanism, eps_s, delta_s)]
        rows: list[Row] = []
        (comp,) = design.components
        noisy = noise(exact.vectors[0], comp)
        bound, spread = interval_halfwidth(comp), value_spread(comp)
        for cell, v in zip(design.cells, noisy, strict=True):
            val = to_natural(v, comp)
            rows.append(
                rounded_row(
                    spec.name, cell, val, val - bound, val + bound, spec.mechanism, eps_s, delta_s, spread
                )
            )
        return rows

    def accuracy(self, design: QueryDesign) -> dict[str, float | None]:
        """Its accuracy in its own units, from the design (public): the 95% error of each component, or
        for a quantile the rank error."""
        return {c.label: c.bound95 for c in design.components}

    def value_accuracy(self, design: QueryDesign, plan: Plan, confidence: float = 0.95) -> Accuracy:
        """Its accuracy in the statistic's own units, from the plan (and its expected_rows) alone: see
        :func:`dpdesk.core.dp.accuracy.query_accuracy` (the same statement, without the registry)."""
        return statistic_accuracy(
            design, plan, confidence, self.accuracy_kind, self.accuracy_unit, self.ratio_shape
        )

    def ratio_shape(self, spec: QuerySpec, plan: Plan) -> tuple[float, float]:
        """A ratio statistic's (h, U - L): the largest |x - mid| and the width of the released value's range."""
        raise NotImplementedError

    # ------------------------------------------------------------------ tests
    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        """Public example queries (without name and epsilon) on a numeric column ``x`` with these bounds
        and a category column ``g`` of categories a, b, c; the tests that cover every statistic use them."""
        return {}

    def audit_examples(self) -> tuple[AuditExample, ...]:
        """Neighbouring tables for the privacy audit (see :class:`AuditExample`)."""
        return ()
