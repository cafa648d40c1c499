"""The plan file: the issue's example is accepted as written; every bad key gets a message naming it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import InputError, PlanError
from dpdesk.core.plan.reader import (
    apply_codebook,
    load_plan,
    parse_plan,
    parse_plan_text,
    read_codebook,
    save_plan,
)
from tests.conftest import SAMPLES

EXAMPLE = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))


def mutated(path: tuple[Any, ...], value: Any = None, *, delete: bool = False) -> dict[str, Any]:
    data = copy.deepcopy(EXAMPLE)
    obj = data
    for p in path[:-1]:
        obj = obj[p]
    if delete:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return data


def test_issue_example_is_accepted_exactly_as_written() -> None:
    plan = load_plan(SAMPLES / "cps_wages_plan.json")
    assert plan.title == "CPS wages"
    assert plan.budget.epsilon == 1.0 and plan.budget.delta == 1e-6
    assert [q.name for q in plan.queries] == [
        "people",
        "mean wage",
        "regions",
        "wage by region",
        "median education",
        "largest region",
    ]
    wbr = plan.queries[3]
    assert (wbr.statistic, wbr.group_by, wbr.mechanism, wbr.calibration, wbr.delta) == (
        "sum",
        "region",
        "gaussian",
        "analytic",
        1e-7,
    )
    assert plan.queries[4].q == 0.5
    assert plan.columns["region"].categories == ("northeast", "midwest", "south", "west")


def test_plan_round_trips_through_its_file_format(tmp_path: Path) -> None:
    plan = load_plan(SAMPLES / "cps_wages_plan.json")
    save_plan(plan, tmp_path / "p.json")
    again = load_plan(tmp_path / "p.json")
    assert again == plan
    assert again.plan_hash() == plan.plan_hash()


def test_plan_hash_changes_with_any_query_parameter() -> None:
    a = parse_plan(EXAMPLE)
    b = parse_plan(mutated(("queries", 0, "epsilon"), 0.11))
    assert a.plan_hash() != b.plan_hash()


@pytest.mark.parametrize(
    ("path", "value", "key", "words"),
    [
        (("queries", 0, "epsilon"), -0.1, "queries[0].epsilon", "greater than 0"),
        (("queries", 0, "epsilon"), 0, "queries[0].epsilon", "greater than 0"),
        (("queries", 0, "epsilon"), "0.1", "queries[0].epsilon", "must be a number"),
        (("queries", 0, "epsilon"), True, "queries[0].epsilon", "must be a number"),
        (("queries", 3, "delta"), 1.0, "queries[3].delta", "(0, 1)"),
        (("queries", 3, "delta"), -1e-9, "queries[3].delta", "(0, 1)"),
        (("budget", "delta"), 1.5, "budget.delta", "[0, 1)"),
        (("budget", "epsilon"), 0, "budget.epsilon", "greater than 0"),
        (("columns", "wage", "bounds"), [5000, 0], "columns.wage.bounds", "reversed"),
        (("columns", "wage", "bounds"), [0], "columns.wage.bounds", "two numbers"),
        (("privacy_unit", "max_rows_per_person"), 0, "privacy_unit.max_rows_per_person", "whole number"),
        (("privacy_unit", "max_rows_per_person"), 10**9, "privacy_unit.max_rows_per_person", "whole number"),
        (("privacy_unit", "neighbouring"), "swap", "privacy_unit.neighbouring", "add_remove, replace"),
        (("queries", 0, "mechanism"), "exponential", "queries[0].mechanism", "laplace or gaussian"),
        (("queries", 4, "mechanism"), "laplace", "queries[4].mechanism", "exponential"),
        (("queries", 1, "column"), "salary", "queries[1].column", "not declared"),
        (("queries", 0, "colour"), "red", "queries[0].colour", "unknown key"),
        (("budget", "rho"), 0.1, "budget.rho", "unknown key"),
        (("surprise",), 1, "surprise", "unknown key"),
        (("version",), 2, "version", "must be 1"),
        (("queries", 2, "group_by"), "wage", "queries[2].group_by", "category column"),
        (("queries", 5, "column"), "wage", "queries[5].column", "category column"),
        (("queries", 4, "q"), 1.0, "queries[4].q", "strictly between 0 and 1"),
        (("queries", 0, "delta"), 1e-7, "queries[0].delta", "only the Gaussian"),
        (("queries", 0, "column"), "wage", "queries[0].column", "takes no column"),
        (("columns", "region", "categories"), ["a", "a"], "columns.region.categories[1]", "listed twice"),
    ],
)
def test_bad_plans_name_the_key(path: tuple[Any, ...], value: Any, key: str, words: str) -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(mutated(path, value))
    assert err.value.key == key
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (("version",), "version"),
        (("budget",), "budget"),
        (("privacy_unit",), "privacy_unit"),
        (("columns",), "columns"),
        (("queries",), "queries"),
        (("queries", 0, "name"), "queries[0].name"),
        (("queries", 0, "epsilon"), "queries[0].epsilon"),
        (("queries", 1, "column"), "queries[1].column"),
        (("queries", 3, "delta"), "queries[3].delta"),
        (("columns", "wage", "bounds"), "columns.wage.bounds"),
        (("columns", "region", "categories"), "columns.region.categories"),
    ],
)
def test_missing_required_keys_are_named(path: tuple[Any, ...], key: str) -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(mutated(path, delete=True))
    assert err.value.key == key
    assert "required" in str(err.value)


def test_missing_bounds_explain_why_they_must_not_come_from_the_data() -> None:
    with pytest.raises(PlanError, match="must not be read off the data"):
        parse_plan(mutated(("columns", "wage", "bounds"), delete=True))


def test_non_finite_numbers_in_json_are_refused() -> None:
    text = json.dumps(EXAMPLE).replace('"epsilon": 0.1', '"epsilon": NaN', 1)
    with pytest.raises(PlanError, match="NaN is not a number") as err:
        parse_plan_text(text)
    assert err.value.key == "queries[0].epsilon"  # the bare token is named by its key, like any other value
    text = json.dumps(EXAMPLE).replace('"bounds": [0, 5000]', '"bounds": [0, -Infinity]', 1)
    assert text != json.dumps(EXAMPLE)
    with pytest.raises(PlanError, match="-Infinity is not a number") as err:
        parse_plan_text(text)
    assert err.value.key == "columns.wage.bounds[1]"
    with pytest.raises(PlanError) as err:
        parse_plan_text("Infinity")
    assert err.value.key == "(the whole plan)"
    text = json.dumps(EXAMPLE).replace('"epsilon": 0.1', '"epsilon": 1e400', 1)
    with pytest.raises(PlanError) as err:
        parse_plan_text(text)
    assert err.value.key == "queries[0].epsilon"


def test_classic_gaussian_with_large_epsilon_is_refused_with_a_hint() -> None:
    data = mutated(("queries", 3, "calibration"), delete=True)
    data["queries"][3]["epsilon"] = 1.0
    with pytest.raises(PlanError, match='use "calibration": "analytic"') as err:
        parse_plan(data)
    assert err.value.key == "queries[3].epsilon"


def test_gaussian_needs_a_budget_delta() -> None:
    with pytest.raises(PlanError, match="budget with delta > 0"):
        parse_plan(mutated(("budget", "delta"), 0))


def test_advanced_needs_delta_prime_within_the_budget_delta() -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(mutated(("accounting",), {"method": "advanced"}))
    assert err.value.key == "accounting.delta_prime"
    with pytest.raises(PlanError, match=r"must not exceed budget\.delta"):
        parse_plan(mutated(("accounting",), {"method": "advanced", "delta_prime": 1e-3}))
    plan = parse_plan(mutated(("accounting",), {"method": "advanced", "delta_prime": 1e-7}))
    assert plan.accounting.delta_prime == 1e-7


def test_deltas_below_1e_30_are_refused_naming_the_key() -> None:
    """The analytic Gaussian is proven and tested (tests/core/test_formulas.py) down to delta 1e-30."""
    for path, key, extra in (
        (("queries", 3, "delta"), "queries[3].delta", "use a delta of at least 1e-30"),
        (("budget", "delta"), "budget.delta", "or 0 for a budget of pure epsilon"),
    ):
        for value in (9.99e-31, 1e-31, 1e-300, 5e-324):
            data = mutated(path, value)
            data["queries"][3]["delta"] = min(data["queries"][3]["delta"], 1e-30)  # keep the other one valid
            with pytest.raises(PlanError) as err:
                parse_plan(data)
            assert err.value.key == key
            assert "the smallest delta dpdesk accepts" in err.value.message and extra in err.value.message
    # the floor itself, and pure epsilon, are accepted
    data = mutated(("budget", "delta"), 1e-30)
    data["queries"][3]["delta"] = 1e-30
    plan = parse_plan(data)
    assert plan.budget.delta == 1e-30 and plan.queries[3].delta == 1e-30
    pure = mutated(("budget", "delta"), 0)
    pure["queries"] = [q for q in pure["queries"] if q["mechanism"] != "gaussian"]
    assert parse_plan(pure).budget.delta == 0.0
    # delta' only enters the closed-form advanced bound (exact for any delta' > 0): no floor there
    plan = parse_plan(mutated(("accounting",), {"method": "advanced", "delta_prime": 1e-40}))
    assert plan.accounting.delta_prime == 1e-40


def test_the_delta_floor_message_is_translated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    with pytest.raises(PlanError) as err:
        parse_plan(mutated(("queries", 3, "delta"), 1e-31))
    assert err.value.key == "queries[3].delta"
    assert "1e-30" in err.value.message and "1e-31" in err.value.message
    assert any("\u4e00" <= ch <= "\u9fff" for ch in err.value.message)


def test_impute_must_lie_inside_the_bounds_or_categories() -> None:
    with pytest.raises(PlanError, match="outside the bounds") as err:
        parse_plan(mutated(("columns", "wage", "missing"), {"impute": 9999}))
    assert err.value.key == "columns.wage.missing.impute"
    with pytest.raises(PlanError, match="declared categories"):
        parse_plan(mutated(("columns", "region", "missing"), {"impute": "mars"}))
    plan = parse_plan(mutated(("columns", "education", "missing"), {"impute": 12}))
    assert plan.columns["education"].missing.impute == 12


def test_numeric_histogram_needs_increasing_bins() -> None:
    data = copy.deepcopy(EXAMPLE)
    data["queries"].append(
        {"name": "wages", "statistic": "histogram", "column": "wage", "mechanism": "laplace", "epsilon": 0.05}
    )
    with pytest.raises(PlanError, match="needs bin edges"):
        parse_plan(data)
    data["queries"][-1]["bins"] = [0, 100, 50]
    with pytest.raises(PlanError) as err:
        parse_plan(data)
    assert err.value.key == "queries[6].bins[2]"
    data["queries"][-1]["bins"] = [0, 100, 1000]
    assert parse_plan(data).queries[-1].bins == (0.0, 100.0, 1000.0)


def test_select_needs_candidates_and_a_named_utility() -> None:
    data = copy.deepcopy(EXAMPLE)
    data["queries"].append(
        {
            "name": "price",
            "statistic": "select",
            "column": "wage",
            "mechanism": "exponential",
            "epsilon": 0.05,
            "candidates": [1, 5, 10],
        }
    )
    with pytest.raises(PlanError, match="named utility"):
        parse_plan(data)
    data["queries"][-1]["utility"] = "profit"
    with pytest.raises(PlanError, match="revenue"):
        parse_plan(data)
    data["queries"][-1]["utility"] = "revenue"
    assert parse_plan(data).queries[-1].utility == "revenue"


def test_deep_nesting_and_garbage_get_plan_errors() -> None:
    with pytest.raises(PlanError, match=r"nested too deeply|not valid JSON"):
        parse_plan_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(PlanError, match="not valid JSON"):
        parse_plan_text("{not json")
    with pytest.raises(PlanError, match="not UTF-8"):
        parse_plan_text(b"\xff\xfe{")


def test_duplicate_query_names_are_refused() -> None:
    with pytest.raises(PlanError, match="names must differ"):
        parse_plan(mutated(("queries", 1, "name"), "people"))


def test_codebook_fills_category_lists(tmp_path: Path) -> None:
    book = tmp_path / "codebook.csv"
    book.write_text("column,category\nregion,北\nregion,南\n", encoding="utf-8")
    cats = read_codebook(book)
    assert cats == {"region": ["北", "南"]}
    data = mutated(("columns", "region", "categories"), delete=True)
    plan = parse_plan(apply_codebook(data, cats))
    assert plan.columns["region"].categories == ("北", "南")


def test_codebook_errors_name_the_line(tmp_path: Path) -> None:
    book = tmp_path / "codebook.csv"
    book.write_text("region,north\nregion\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_codebook(book)
    assert err.value.line == 2 and str(book) in str(err.value)
