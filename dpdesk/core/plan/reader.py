"""The release plan: a versioned JSON file, parsed into immutable, validated values.

Everything public about a dataset lives here (column types, bounds, categories, the unit of
privacy, the budget), together with the queries to release. Nothing here is ever read off the
private data. :func:`check_plan` collects every problem (a :class:`~dpdesk.core.common.errors.PlanError` naming
the key, e.g. ``queries[2].epsilon``, with a message in the user's language and a likely fix read off the plan
alone) and the plan restricted to its valid queries; :func:`parse_plan` raises them all at once
(:class:`~dpdesk.core.common.errors.PlanErrors`).

The values themselves (:class:`Plan`, :class:`QuerySpec`, the budget, the columns, ...) and the validators the
reader shares with them are :mod:`dpdesk.core.model.spec`, below the statistics registry, and re-exported here;
this module reads and writes plan files, with each query's statistic from the registry
(:mod:`dpdesk.core.dp.statistics`) and an accuracy target's epsilon from the solver (:mod:`dpdesk.core.dp.accuracy`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import InputError, PlanError, PlanErrors
from dpdesk.core.common.jsonin import JsonInputError, read_json
from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file
from dpdesk.core.model.spec import (
    MAX_CONDITIONS,
    MAX_PLAN_CANDIDATES,
    MAX_PLAN_CELLS,
    MAX_QUERIES,
    MIN_EPSILON,
    PLAN_VERSION,
    Accounting,
    BrokenColumn,
    Budget,
    ColumnSpec,
    ColumnType,
    Condition,
    Plan,
    PrivacyUnit,
    QuerySpec,
    aim_delta_required,
    calibration_only_gaussian,
    cannot_group,
    check_keys,
    column_required,
    condition_shape,
    gaussian_delta_required,
    inside_bounds,
    install_registry,
    is_placeholder,
    json_type,
    key_problems,
    no_self_grouping,
    no_where,
    not_released_with,
    only_gaussian_delta,
    or_list,
    parse_accounting,
    parse_accuracy,
    parse_budget,
    parse_columns,
    parse_expected_rows,
    parse_unit,
    quoted,
    read_column,
    read_delta,
    read_number,
    read_object,
    read_positive,
    read_statistic,
    read_text,
    subject_of,
    takes_no_column,
    too_many_conditions,
)
from dpdesk.i18n import _

__all__ = [
    "PlanCheck",
    "apply_codebook",
    "check_plan",
    "load_plan",
    "parse_plan",
    "parse_plan_text",
    "read_codebook",
    "save_plan",
]


def _registry() -> ModuleType:
    """The statistics registry (loaded when a query is first validated: it imports numpy)."""
    from dpdesk.core.dp import statistics

    return statistics


install_registry(_registry)


# ----------------------------------------------------------------------------- reading


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    p = Path(path)
    try:
        raw = read_small_file(p, MAX_PLAN_BYTES)
    except OSError as exc:
        raise PlanError("", _("cannot read {path}: {why}").format(path=p, why=exc.strerror or exc)) from None
    return parse_plan_text(raw, source=str(p))


def parse_plan_text(raw: bytes | str, source: str = "plan") -> Plan:
    """Parse plan JSON text (bytes in UTF-8, with or without BOM) and validate it; the JSON is read by
    :func:`dpdesk.core.common.jsonin.read_json` under its limits, each refusal named as a plan's problem."""
    try:
        data = read_json(raw, jsonin.PLAN)
    except JsonInputError as exc:
        raise _plan_json_error(exc, source) from None
    return parse_plan(data)


def _plan_json_error(exc: JsonInputError, source: str) -> PlanError:
    """A refusal of the plan's JSON as the plan's message."""
    if exc.reason == "utf8":
        return PlanError(
            "", _("{source} is not UTF-8 text (byte {byte})").format(source=source, byte=exc.detail)
        )
    if exc.reason == "size":
        return PlanError(
            "", _("{source} is too large for a plan ({n} characters)").format(source=source, n=exc.detail)
        )
    if exc.reason == "syntax":
        return PlanError(
            "",
            _("{source} is not valid JSON: {why} at line {line}, column {column}").format(
                source=source, why=exc.detail, line=exc.line, column=exc.column
            ),
        )
    if exc.reason == "depth":
        return PlanError("", _("{source} is nested too deeply").format(source=source))
    if exc.reason == "int":
        return PlanError(exc.key, _("{source} holds a number with too many digits").format(source=source))
    if exc.reason in ("constant", "overflow"):
        key = exc.key or "(the whole plan)"
        return PlanError(
            key,
            _("{field}: {token} is not a number a plan may hold (use a finite number)").format(
                field=subject_of(key), token=exc.detail
            ),
        )
    return PlanError("", _("{source}: {why}").format(source=source, why=exc.message))


_TOP_KEYS = {
    "version",
    "title",
    "budget",
    "privacy_unit",
    "columns",
    "queries",
    "accounting",
    "expected_rows",
}


_TOP_REQUIRED = ("version", "budget", "privacy_unit", "columns", "queries")


@dataclass(frozen=True)
class PlanCheck:
    """What :func:`check_plan` found: every problem, and the plan restricted to its valid queries."""

    #: Every problem, in plan order (the whole plan's first, then each query's), each a whole sentence.
    problems: tuple[PlanError, ...]
    #: The plan with only its valid queries (all of them when there is no problem); None when a problem of the
    #: whole plan (its budget, unit of privacy, accounting, columns or query list) leaves nothing valid.
    valid: Plan | None
    #: The plan's indices (from 0) of the queries ``valid`` holds, in order.
    rows: tuple[int, ...] = ()

    @property
    def plan(self) -> Plan | None:
        """The whole plan, when it has no problem."""
        return None if self.problems else self.valid

    def raise_problems(self) -> Plan:
        """The whole plan, or every problem at once (:class:`~dpdesk.core.common.errors.PlanErrors`)."""
        if self.problems:
            raise PlanErrors(self.problems)
        assert self.valid is not None
        return self.valid


def parse_plan(data: Any) -> Plan:
    """Validate a plan already parsed from JSON; every problem at once if it has any."""
    return check_plan(data).raise_problems()


def check_plan(data: Any) -> PlanCheck:
    """Validate a plan already parsed from JSON, collecting every problem instead of stopping at the first.

    A broken query does not stop the others from being checked, and the valid ones make up ``valid`` (the
    meter and the previews show them); a problem of the whole plan leaves nothing valid.
    """
    problems: list[PlanError] = []

    def attempt(parse: Any, *args: Any) -> Any:
        try:
            return parse(*args)
        except PlanError as exc:
            problems.append(exc)
            return None

    try:
        obj = read_object(data, "")
    except PlanError as exc:
        return PlanCheck((exc,), None)
    problems.extend(key_problems(obj, "", _TOP_KEYS, _TOP_REQUIRED))
    version = obj.get("version", PLAN_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version != PLAN_VERSION:
        problems.append(
            PlanError(
                "version",
                _("version must be {v} (this dpdesk reads plan version {v})").format(v=PLAN_VERSION),
            )
        )
    title = obj.get("title", "")
    if not isinstance(title, str):
        problems.append(PlanError("title", _("title must be text, not {kind}").format(kind=json_type(title))))
    budget: Budget | None = attempt(parse_budget, obj["budget"]) if "budget" in obj else None
    unit: PrivacyUnit | None = attempt(parse_unit, obj["privacy_unit"]) if "privacy_unit" in obj else None
    accounting: Accounting | None = attempt(parse_accounting, obj.get("accounting", {}), budget)
    columns: dict[str, ColumnSpec] = {}
    broken: set[str] = set()
    if "columns" in obj:
        columns, broken = parse_columns(obj["columns"], problems)
    if unit is not None and unit.id_column is not None and unit.id_column in obj.get("columns", {}):
        problems.append(
            PlanError(
                "privacy_unit.id_column",
                _(
                    "id_column {name} is declared as a statistic column; an id column is only used to bound "
                    "each person's rows"
                ).format(name=quoted(unit.id_column)),
            )
        )
    expected_rows: int | None = (
        attempt(parse_expected_rows, obj["expected_rows"]) if "expected_rows" in obj else None
    )
    whole_plan_ok = not problems
    found: list[tuple[int, QuerySpec]] = []
    if "queries" in obj:
        found = _parse_queries(
            obj["queries"], columns, broken, budget, problems, unit, accounting, expected_rows
        )
    if not whole_plan_ok or budget is None or unit is None or accounting is None or "queries" not in obj:
        return PlanCheck(tuple(problems), None)
    if not isinstance(obj["queries"], list) or not obj["queries"] or len(obj["queries"]) > MAX_QUERIES:
        return PlanCheck(tuple(problems), None)
    valid = Plan(
        budget=budget,
        privacy_unit=unit,
        columns=columns,
        queries=tuple(spec for _i, spec in found),
        title=title,
        accounting=accounting,
        version=version,
        expected_rows=expected_rows,
    )
    return PlanCheck(tuple(problems), valid, tuple(i for i, _spec in found))


#: The fields every query has; each statistic adds its own (its parameters in the registry).
_COMMON_QUERY_KEYS = (
    "name",
    "statistic",
    "mechanism",
    "epsilon",
    "delta",
    "column",
    "group_by",
    "calibration",
    "accuracy",
    "where",
    "expected_rows",
)


def _query_keys() -> set[str]:
    """Every key a query may have: the shared ones and those of every registered statistic."""
    from dpdesk.core.dp import statistics

    keys = set(_COMMON_QUERY_KEYS)
    for stat in statistics.REGISTRY.values():
        keys.update(stat.own_keys)
    return keys


def _parse_queries(
    value: Any,
    columns: dict[str, ColumnSpec],
    broken: AbstractSet[str],
    budget: Budget | None,
    problems: list[PlanError],
    unit: PrivacyUnit | None = None,
    accounting: Accounting | None = None,
    expected_rows: int | None = None,
) -> list[tuple[int, QuerySpec]]:
    """The valid queries with their indices; each broken query's problem is appended to ``problems`` (named by
    its number and name), and the others are still checked."""
    try:
        if not isinstance(value, list):
            raise PlanError("queries", _("queries must be a list, not {kind}").format(kind=json_type(value)))
        if not value:
            raise PlanError("queries", _("list at least one query"))
        if len(value) > MAX_QUERIES:
            raise PlanError(
                "queries", _("at most {n} queries are supported in one plan").format(n=MAX_QUERIES)
            )
    except PlanError as exc:
        problems.append(exc)
        return []
    from dpdesk.core.dp import statistics

    out: list[tuple[int, QuerySpec]] = []
    names: set[str] = set()
    cells = 0
    candidates = 0
    for i, q in enumerate(value):
        raw_name = q.get("name") if isinstance(q, dict) else None
        query_name = raw_name if isinstance(raw_name, str) and raw_name.strip() else None
        n_cells = 0
        n_candidates = 0
        try:
            if query_name is not None and query_name in names:
                raise PlanError(
                    f"queries[{i}].name",
                    _("the name {name} is used by an earlier query; names must differ").format(
                        name=quoted(query_name)
                    ),
                )
            if query_name is not None:
                names.add(query_name)
            spec = _parse_query(q, f"queries[{i}]", columns, broken)
            if spec.accuracy is not None:
                if budget is None or unit is None or accounting is None:
                    continue  # the plan's own problems are reported; nothing to solve against
                from dpdesk.core.dp.accuracy import solve_query

                try:
                    spec = solve_query(
                        spec,
                        f"queries[{i}]",
                        Plan(budget, unit, columns, (spec,), "", accounting, PLAN_VERSION, expected_rows),
                    )
                except (ValueError, ArithmeticError) as exc:  # floating point at the edge: named, not a crash
                    raise PlanError(
                        f"queries[{i}].accuracy",
                        _(
                            "this accuracy target cannot be solved ({reason}): ask for a larger error or a "
                            "lower confidence"
                        ).format(reason=type(exc).__name__),
                    ) from exc
            n_cells = statistics.REGISTRY[spec.statistic].n_cells(spec, columns)
            n_candidates = statistics.REGISTRY[spec.statistic].n_candidates(spec, columns) * n_cells
            cells += n_cells
            candidates += n_candidates
            if candidates > MAX_PLAN_CANDIDATES:
                raise PlanError(
                    f"queries[{i}]",
                    _(
                        "the plan would score more than {n} candidates in all (quantiles' candidates or grids, "
                        "times their groups when grouped; selections' candidates); use fewer candidates (a larger "
                        "grid_step), fewer groups, or split it into smaller plans"
                    ).format(n=f"{MAX_PLAN_CANDIDATES:,}"),
                )
            if cells > MAX_PLAN_CELLS:
                raise PlanError(
                    f"queries[{i}]",
                    _(
                        "the plan would release more than {n} cells (a grouped histogram has "
                        "categories x bins x groups); split it into smaller plans"
                    ).format(n=f"{MAX_PLAN_CELLS:,}"),
                )
            if (
                spec.mechanism in ("mst", "aim")
                and spec.delta > 0
                and budget is not None
                and budget.delta <= 0
            ):
                raise PlanError(
                    f"queries[{i}].delta", _("a synthetic table with delta > 0 needs a budget with delta > 0")
                )
            if spec.mechanism == "gaussian" and budget is not None and budget.delta <= 0:
                raise PlanError(f"queries[{i}].delta", _("a Gaussian query needs a budget with delta > 0"))
        except BrokenColumn:
            continue
        except PlanError as exc:
            cells -= n_cells
            candidates -= n_candidates
            exc.query_name = query_name
            problems.append(exc)
            continue
        out.append((i, spec))
    return out


#: The largest epsilon a query may state (beyond it, no meaningful privacy).
MAX_EPSILON = 100.0
#: The classic Gaussian formula, sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon, holds only below this epsilon.
CLASSIC_GAUSSIAN_LIMIT = 1.0


def epsilon_limit(mechanism: str, calibration: str | None) -> float:
    """The epsilon a query with this mechanism and calibration must stay below (the plan reader's rule; an
    epsilon up to :data:`MAX_EPSILON` inclusive is accepted otherwise, so the limit then lies just above it)."""
    from dpdesk.core.model.mechanism_kinds import MECHANISMS, Calibration, Mechanism

    info = MECHANISMS[Mechanism(mechanism)]
    if info.calibrations and calibration == Calibration.CLASSIC:
        return CLASSIC_GAUSSIAN_LIMIT
    return math.nextafter(MAX_EPSILON, math.inf)


def largest_epsilon(spec: QuerySpec) -> float:
    """The largest epsilon the plan reader accepts for ``spec``'s mechanism and calibration: 100, or just below 1
    for the classic Gaussian."""
    return math.nextafter(epsilon_limit(spec.mechanism, spec.calibration), 0.0)


def _parse_query(
    value: Any, key: str, columns: dict[str, ColumnSpec], broken: AbstractSet[str] = frozenset()
) -> QuerySpec:
    from dpdesk.core.dp import statistics
    from dpdesk.core.model.mechanism_kinds import MECHANISMS, Calibration, Mechanism

    names = statistics.names()
    obj = read_object(value, key)
    word = obj.get("statistic")
    default = statistics.REGISTRY[word].default_mechanism if isinstance(word, str) and word in names else None
    if default is not None and "mechanism" not in obj:
        obj = {**obj, "mechanism": str(default)}  # a statistic's own mechanism word, by default
    keys = _query_keys()
    check_keys(obj, key, keys, ("name", "statistic", "mechanism"))
    name = read_text(obj["name"], f"{key}.name")
    stat = statistics.get(read_statistic(obj["statistic"], f"{key}.statistic", names))
    mech = Mechanism(read_text(obj["mechanism"], f"{key}.mechanism", tuple(MECHANISMS)))
    info = MECHANISMS[mech]
    if mech not in stat.mechanisms:
        raise not_released_with(f"{key}.mechanism", stat.name, stat.mechanisms, mech)
    target = None
    if "accuracy" in obj:
        if "epsilon" in obj:
            raise PlanError(
                f"{key}.epsilon",
                _("give epsilon or an accuracy target, not both (the epsilon is solved from the accuracy)"),
            )
        target = parse_accuracy(obj["accuracy"], f"{key}.accuracy")
    elif "epsilon" not in obj:
        raise PlanError(f"{key}.epsilon", _("epsilon is required (or state an accuracy target instead)"))
    # with an accuracy target, 1 stands in until the plan reader solves the epsilon
    eps = 1.0 if target is not None else read_positive(obj["epsilon"], f"{key}.epsilon")
    if eps < MIN_EPSILON:
        raise PlanError(
            f"{key}.epsilon",
            _("{value} is too small: use an epsilon of at least {floor}").format(
                value=obj["epsilon"], floor=f"{MIN_EPSILON:g}"
            ),
        )
    if eps > MAX_EPSILON:
        raise PlanError(
            f"{key}.epsilon",
            _("epsilon {value} is far beyond any meaningful privacy (at most 100)").format(
                value=obj["epsilon"]
            ),
        )
    delta = 0.0
    if mech == Mechanism.AIM and not obj.get("delta"):
        raise aim_delta_required(f"{key}.delta")
    if info.delta_optional:
        delta = read_delta(obj.get("delta", 0.0), f"{key}.delta", allow_zero=True)
    elif info.takes_delta:
        if "delta" not in obj:
            raise PlanError(f"{key}.delta", gaussian_delta_required())
        delta = read_delta(obj["delta"], f"{key}.delta", allow_zero=False)
    elif "delta" in obj:
        raise only_gaussian_delta(f"{key}.delta", mech)
    calibration = Calibration.CLASSIC
    if "calibration" in obj:
        if not info.calibrations:
            raise PlanError(f"{key}.calibration", calibration_only_gaussian())
        calibration = Calibration(
            read_text(obj["calibration"], f"{key}.calibration", tuple(info.calibrations))
        )
    if target is None and eps >= epsilon_limit(mech, calibration):
        raise PlanError(
            f"{key}.epsilon",
            _("the classic Gaussian formula holds only for epsilon < 1 (you wrote {value})").format(
                value=obj["epsilon"]
            ),
            hint=_('use "calibration": "analytic" for larger epsilon'),
        )

    column = obj.get("column")
    col_param = stat.column_param
    if col_param is None:
        if column is not None:
            raise PlanError(f"{key}.column", takes_no_column(stat))
    else:
        if column is None:
            raise PlanError(f"{key}.column", column_required(stat.name))
        column = read_column(column, f"{key}.column", columns, broken, _("column"))
    col = columns[column] if column is not None else None

    group_by = obj.get("group_by")
    if group_by is not None:
        group_by = read_text(group_by, f"{key}.group_by")
        if not stat.groupable:
            raise PlanError(f"{key}.group_by", cannot_group(stat.name))
        group_by = read_column(group_by, f"{key}.group_by", columns, broken, _("the grouping column"))
        if columns[group_by].type != "category":
            categories = [n for n, c in columns.items() if c.type == ColumnType.CATEGORY and n != column]
            raise PlanError(
                f"{key}.group_by",
                _("the grouping column {name} must be a category column").format(name=quoted(group_by)),
                hint=_("category columns: {names}").format(names=", ".join(categories)) if categories else "",
            )
        if group_by == column:
            raise PlanError(f"{key}.group_by", no_self_grouping())

    where = _parse_where(obj["where"], f"{key}.where", columns, broken, stat) if "where" in obj else ()
    query_rows = (
        parse_expected_rows(obj["expected_rows"], f"{key}.expected_rows") if "expected_rows" in obj else None
    )

    own = stat.own_keys
    for opt in sorted(keys - set(_COMMON_QUERY_KEYS), key=_option_order):
        if opt in obj and opt not in own:
            raise PlanError(
                f"{key}.{opt}",
                _("{field} does not apply to {statistic}").format(field=opt, statistic=stat.name),
                hint=_("remove {field}").format(field=opt),
            )

    if col_param is not None:
        assert col is not None
        allowed = col_param.column_types
        if col.type not in allowed:
            fitting = [n for n, c in columns.items() if c.type in allowed]
            hint = _("columns that fit: {names}").format(names=", ".join(fitting)) if fitting else ""
            if set(allowed) == {"int", "float"}:
                raise PlanError(
                    f"{key}.column",
                    _("{statistic} needs a numeric column; {name} is a category column").format(
                        statistic=stat.name, name=quoted(column)
                    ),
                    hint=hint,
                )
            raise PlanError(
                f"{key}.column",
                _("{statistic} needs a {types} column; {name} is {type}").format(
                    statistic=stat.name, types=or_list(list(allowed)), name=quoted(column), type=col.type
                ),
                hint=hint,
            )
    common: dict[str, Any] = {
        "name": name,
        "statistic": statistics.StatisticName(stat.name),
        "mechanism": mech,
        "epsilon": eps,
        "delta": delta,
        "column": column,
        "group_by": group_by,
        "calibration": calibration,
        "accuracy": target,
        "where": where,
        "expected_rows": query_rows,
    }
    return stat.parse_with_columns(obj, key, common, columns, broken)


def _parse_where(
    value: Any, key: str, columns: dict[str, ColumnSpec], broken: AbstractSet[str], stat: Any
) -> tuple[Condition, ...]:
    """A query's public row conditions: one object or a list of them, each ``{"column": c, "in": [...]}`` (a
    category column, declared categories) or ``{"column": c, "between": [low, high]}`` (a numeric column, inside its
    public bounds); a column at most once."""
    if not stat.takes_where:
        raise PlanError(key, no_where(stat.name), hint=_("remove where"))
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list) or not items:
        raise PlanError(key, condition_shape())
    if len(items) > MAX_CONDITIONS:
        raise PlanError(key, too_many_conditions())
    out: list[Condition] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        here = key if isinstance(value, dict) else f"{key}[{i}]"
        obj = read_object(item, here)
        check_keys(obj, here, {"column", "in", "between"}, ("column",))
        name = read_column(
            read_text(obj["column"], f"{here}.column"), f"{here}.column", columns, broken, _("column")
        )
        if name in seen:
            raise PlanError(f"{here}.column", _("{name} has a condition already").format(name=quoted(name)))
        seen.add(name)
        col = columns[name]
        if ("in" in obj) == ("between" in obj):
            raise PlanError(here, condition_shape())
        if col.type == ColumnType.CATEGORY:
            if "in" not in obj:
                raise PlanError(
                    f"{here}.between",
                    _("{name} is a category column: list its categories with in").format(name=quoted(name)),
                )
            cats = _condition_categories(obj["in"], f"{here}.in", col)
            out.append(Condition(name, categories=cats))
            continue
        if "between" not in obj:
            raise PlanError(
                f"{here}.in",
                _("{name} is a numeric column: give a range with between").format(name=quoted(name)),
            )
        assert col.bounds is not None
        rng = obj["between"]
        if not isinstance(rng, list) or len(rng) != 2:
            raise PlanError(f"{here}.between", _("between takes two numbers: [low, high]"))
        lo, hi = (read_number(x, f"{here}.between[{j}]") for j, x in enumerate(rng))
        if lo > hi:
            raise PlanError(f"{here}.between", _("the range's first number must not be above its second"))
        inside_bounds((lo, hi), col.bounds, f"{here}.between")
        if col.type == ColumnType.INT and math.ceil(lo) > math.floor(hi):
            raise PlanError(
                f"{here}.between",
                _(
                    "no whole number lies from {lo} to {hi}, and {name} holds whole numbers: no row can meet it"
                ).format(lo=f"{lo:g}", hi=f"{hi:g}", name=quoted(name)),
            )
        out.append(Condition(name, between=(lo, hi)))
    return tuple(out)


def _condition_categories(value: Any, key: str, col: ColumnSpec) -> tuple[str, ...]:
    """A condition's categories: distinct declared categories of its column (the plan's parser and messages)."""
    from dpdesk.core.dp.statistics.base import Param, ParamKind, parse_param

    param = Param("in", ParamKind.CATEGORY_SET, lambda: "in", lambda: "", min_len=1)
    return cast(tuple[str, ...], parse_param(param, value, key, col))


#: The order in which keys that do not apply are reported (as before the registry); others follow by name.
_OPTION_ORDER = ("q", "grid_step", "bins", "candidates", "utility")


def _option_order(opt: str) -> tuple[int, str]:
    return (_OPTION_ORDER.index(opt) if opt in _OPTION_ORDER else len(_OPTION_ORDER), opt)


# ----------------------------------------------------------------------------- writing


def save_plan(plan: Plan, path: str | Path) -> None:
    """Write a plan file (UTF-8, indented)."""
    Path(path).write_text(
        json.dumps(plan.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )


# ----------------------------------------------------------------------------- codebook


def read_codebook(path: str | Path) -> dict[str, list[str]]:
    """Read a codebook: a CSV of ``column, category`` rows (a header row is optional).

    Returns the category lists in file order. Raises :class:`InputError` naming the line.
    """
    p = Path(path)
    try:
        text = read_small_file(p, MAX_PLAN_BYTES).decode("utf-8-sig")
    except OSError as exc:
        raise InputError(str(p), f"cannot read the codebook: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            str(p), f"the codebook must be UTF-8 text (bad byte at offset {exc.start})"
        ) from None
    out: dict[str, list[str]] = {}
    for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 2:
            raise InputError(str(p), f"expected two fields (column, category), found {len(row)}", line=lineno)
        col, cat = row[0].strip(), row[1].strip()
        if lineno == 1 and col.lower() == "column" and cat.lower() == "category":
            continue
        if not col or not cat:
            raise InputError(str(p), "empty column or category", line=lineno)
        cats = out.setdefault(col, [])
        if cat in cats:
            raise InputError(str(p), f"category {cat!r} of column {col!r} is listed twice", line=lineno)
        cats.append(cat)
    if not out:
        raise InputError(str(p), "the codebook lists no categories")
    return out


def apply_codebook(plan_data: dict[str, Any], codebook: dict[str, list[str]]) -> dict[str, Any]:
    """Fill the categories of category columns that have none (or a template's "?") from a codebook (a new
    dict)."""
    data = json.loads(json.dumps(plan_data))
    cols = data.get("columns")
    if isinstance(cols, dict):
        for name, spec in cols.items():
            if (
                isinstance(spec, dict)
                and spec.get("type") == "category"
                and ("categories" not in spec or is_placeholder(spec["categories"]))  # a template's "?" too
                and name in codebook
            ):
                spec["categories"] = list(codebook[name])
    return cast(dict[str, Any], data)
