"""Typed values at the boundaries (issue 12, stage 2): the plan's vocabularies are enums that compare and
serialise as their text, and the plan's values are frozen and validated when built, by hand or by the parser,
with the parser's key and message, so that building one by hand cannot bypass a check."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from dpdesk.core.common.errors import PlanError
from dpdesk.core.model.spec import (
    ACCOUNTING_METHODS,
    COLUMN_TYPES,
    NEIGHBOURING,
    Accounting,
    AccountingMethod,
    Budget,
    ColumnSpec,
    ColumnType,
    Missing,
    MissingPolicy,
    Neighbouring,
    PrivacyUnit,
    canonical_json,
)
from dpdesk.core.plan.reader import parse_plan
from tests.conftest import SAMPLES

EXAMPLE = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))


def _plan_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(EXAMPLE)
    obj = data
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value
    return data


def _error(build: Callable[[], object]) -> tuple[str, str]:
    with pytest.raises(PlanError) as info:
        build()
    return info.value.key, info.value.message


def test_enums_are_their_text() -> None:
    assert tuple(ColumnType) == COLUMN_TYPES == ("int", "float", "category")
    assert tuple(Neighbouring) == NEIGHBOURING == ("add_remove", "replace")
    assert tuple(AccountingMethod) == ACCOUNTING_METHODS == ("sequential", "advanced", "zcdp")
    assert tuple(MissingPolicy) == ("drop", "impute")
    assert (
        json.dumps([ColumnType.INT, Neighbouring.REPLACE, AccountingMethod.ZCDP])
        == '["int", "replace", "zcdp"]'
    )
    assert f"{ColumnType.CATEGORY}" == "category"


def test_parsed_plan_holds_enums_and_writes_plain_text() -> None:
    plan = parse_plan(EXAMPLE)
    assert isinstance(plan.privacy_unit.neighbouring, Neighbouring)
    assert isinstance(plan.accounting.method, AccountingMethod)
    assert all(isinstance(c.type, ColumnType) for c in plan.columns.values())
    d = plan.to_dict()
    assert type(d["privacy_unit"]["neighbouring"]) is str
    assert type(d["accounting"]["method"]) is str
    assert all(type(c["type"]) is str for c in d["columns"].values())
    # the file format and its hash are unchanged: the canonical JSON of the parsed plan is the input's
    assert json.loads(canonical_json(d))["columns"] == {
        name: {"missing": "drop", **col} for name, col in EXAMPLE["columns"].items()
    }


# (what is built by hand, the same value in the example plan): both must fail with the same key and message
CASES: list[tuple[str, Callable[[], object], tuple[Any, ...], Any]] = [
    ("budget epsilon negative", lambda: Budget(-1), ("budget", "epsilon"), -1),
    ("budget epsilon zero", lambda: Budget(0), ("budget", "epsilon"), 0),
    ("budget epsilon text", lambda: Budget("1"), ("budget", "epsilon"), "1"),
    ("budget epsilon bool", lambda: Budget(True), ("budget", "epsilon"), True),
    ("budget delta one", lambda: Budget(1.0, 1), ("budget", "delta"), 1),
    ("budget delta negative", lambda: Budget(1.0, -0.5), ("budget", "delta"), -0.5),
    ("budget delta below floor", lambda: Budget(1.0, 1e-40), ("budget", "delta"), 1e-40),
    ("unit relation", lambda: PrivacyUnit("swap"), ("privacy_unit", "neighbouring"), "swap"),
    ("unit rows zero", lambda: PrivacyUnit("add_remove", 0), ("privacy_unit", "max_rows_per_person"), 0),
    ("unit rows float", lambda: PrivacyUnit("add_remove", 2.5), ("privacy_unit", "max_rows_per_person"), 2.5),
    ("unit id empty", lambda: PrivacyUnit("add_remove", 2, " "), ("privacy_unit", "id_column"), " "),
    ("accounting method", lambda: Accounting("renyi"), ("accounting", "method"), "renyi"),
    ("delta prime zero", lambda: Accounting("advanced", 0.0), ("accounting", "delta_prime"), 0.0),
]


@pytest.mark.parametrize(("build", "path", "value"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_built_by_hand_is_refused_like_the_parser_refuses(
    build: Callable[[], object], path: tuple[Any, ...], value: Any
) -> None:
    if path[0] == "accounting":
        data = copy.deepcopy(EXAMPLE)
        data["accounting"] = {"method": "advanced", "delta_prime": 1e-7, path[-1]: value}
    else:
        data = _plan_with(path, value)
    assert _error(build) == _error(lambda: parse_plan(data))


def test_non_finite_numbers_are_refused_when_built() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        assert _error(lambda bad=bad: Budget(bad)) == ("budget.epsilon", "epsilon must be a finite number")
        assert _error(lambda bad=bad: Budget(1.0, bad)) == ("budget.delta", "delta must be a finite number")
        assert _error(lambda bad=bad: Accounting(AccountingMethod.ADVANCED, bad)) == (
            "accounting.delta_prime",
            "delta_prime must be a finite number",
        )
        assert _error(lambda bad=bad: Missing(bad)) == (
            "missing.impute",
            "missing.impute must be a finite number",
        )
        assert (
            _error(lambda bad=bad: ColumnSpec("x", ColumnType.FLOAT, (0.0, bad)))[0] == "columns.x.bounds[1]"
        )


def test_accounting_pairs_delta_prime_with_advanced_only() -> None:
    assert _error(lambda: Accounting(AccountingMethod.ADVANCED)) == (
        "accounting.delta_prime",
        "delta_prime is required with advanced composition (for example 1e-7)",
    )
    assert _error(lambda: Accounting(AccountingMethod.SEQUENTIAL, 1e-7)) == (
        "accounting.delta_prime",
        "delta_prime only applies to advanced composition",
    )
    assert Accounting("advanced", 1e-40).delta_prime == 1e-40


def test_columns_are_checked_when_built() -> None:
    assert _error(lambda: ColumnSpec("age", ColumnType.INT, (0, 1.5))) == (
        "columns.age.bounds",
        "an int column needs whole-number bounds",
    )
    assert _error(lambda: ColumnSpec("age", ColumnType.INT, (5, 1)))[0] == "columns.age.bounds"
    assert _error(lambda: ColumnSpec("age", ColumnType.INT, (1, 1)))[0] == "columns.age.bounds"
    assert _error(lambda: ColumnSpec("age", ColumnType.INT, (0, 1e16)))[0] == "columns.age.bounds"
    assert _error(lambda: ColumnSpec("age", ColumnType.INT))[0] == "columns.age.bounds"
    assert _error(lambda: ColumnSpec("age", ColumnType.INT, (0, 9), ("a",)))[0] == "columns.age.categories"
    assert _error(lambda: ColumnSpec("r", ColumnType.CATEGORY))[0] == "columns.r.categories"
    assert _error(lambda: ColumnSpec("r", ColumnType.CATEGORY, (0, 1), ("a",)))[0] == "columns.r.bounds"
    assert (
        _error(lambda: ColumnSpec("r", ColumnType.CATEGORY, None, ("a", "a")))[0] == "columns.r.categories[1]"
    )
    assert _error(lambda: ColumnSpec("r", ColumnType.CATEGORY, None, ()))[0] == "columns.r.categories"
    assert _error(lambda: ColumnSpec("r", "text", None, ("a",)))[0] == "columns.r.type"
    assert _error(lambda: ColumnSpec(" ", ColumnType.CATEGORY, None, ("a",)))[0] == "columns. "
    assert (
        _error(lambda: ColumnSpec("a", ColumnType.INT, (0, 9), missing=Missing(10)))[0]
        == "columns.a.missing.impute"
    )
    assert _error(lambda: ColumnSpec("a", ColumnType.INT, (0, 9), missing=Missing(1.5)))[1] == (
        "an int column needs a whole number to impute"
    )
    assert _error(lambda: ColumnSpec("a", ColumnType.FLOAT, (0, 9), missing=Missing("x")))[0] == (
        "columns.a.missing.impute"
    )
    assert _error(lambda: ColumnSpec("r", ColumnType.CATEGORY, None, ("a",), Missing("b")))[1] == (
        'the value to impute must be one of the declared categories (you wrote "b")'
    )


def test_a_valid_value_built_by_hand_equals_the_parsed_one() -> None:
    plan = parse_plan(EXAMPLE)
    assert Budget(1, 1e-6) == plan.budget
    assert PrivacyUnit("add_remove", 1) == plan.privacy_unit
    assert (
        ColumnSpec("region", "category", None, ("northeast", "midwest", "south", "west"))
        == (plan.columns["region"])
    )
    assert ColumnSpec("x", "int", (0, 10)).bounds == (0.0, 10.0)
    assert Missing(3).impute == 3.0 and Missing(3).policy == MissingPolicy.IMPUTE
    assert Missing().policy == MissingPolicy.DROP


def test_values_are_frozen_and_replace_validates() -> None:
    b = Budget(1.0, 1e-6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.epsilon = 5.0
    with pytest.raises(PlanError):
        dataclasses.replace(b, epsilon=-1.0)
