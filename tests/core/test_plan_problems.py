"""Plan errors in plain words (issue 15, item 6): every problem at once, each query named by its number from 1
and its name, the likely fix read off the plan (never the data), in the user's language; the valid part of a
plan stays usable."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import PlanError, PlanErrors
from dpdesk.core.dp.statistics import REGISTRY
from dpdesk.core.plan.reader import check_plan, parse_plan
from dpdesk.i18n import translation
from tests.conftest import SAMPLES

EXAMPLE = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))


def plan_with(**changes: Any) -> dict[str, Any]:
    """The sample plan with query fields changed: ``q0={"epsilon": "0.1x"}`` changes query index 0."""
    data = copy.deepcopy(EXAMPLE)
    for name, fields in changes.items():
        data["queries"][int(name[1:])].update(fields)
    return data


def problems(data: dict[str, Any]) -> tuple[PlanError, ...]:
    with pytest.raises(PlanErrors) as err:
        parse_plan(data)
    assert [str(p) for p in err.value.problems] == [str(p) for p in check_plan(data).problems]
    return err.value.problems


def test_every_problem_is_reported_at_once_in_plan_order() -> None:
    data = plan_with(q0={"epsilon": "0.1x"}, q1={"column": "wag"}, q4={"statistic": "median"})
    found = problems(data)
    assert [p.key for p in found] == ["queries[0].epsilon", "queries[1].column", "queries[4].statistic"]
    with pytest.raises(PlanErrors) as err:
        parse_plan(data)
    lines = str(err.value).splitlines()
    assert lines[0] == "The plan has 3 problems:"
    assert len(lines) == 4 and all(line.startswith("  - query ") for line in lines[1:])
    assert err.value.key == "queries[0].epsilon"  # the first problem's key, for the form


def test_a_query_is_named_by_its_number_from_1_and_its_name() -> None:
    (p,) = problems(plan_with(q0={"epsilon": "0.1x"}))
    assert str(p) == (
        'query 1 ("people"): epsilon must be a number, not text (you wrote "0.1x"); '
        "write the number 0.1 without quotes"
    )
    (p,) = problems(plan_with(q5={"epsilon": -1}))
    assert str(p).startswith('query 6 ("largest region"): epsilon must be greater than 0')
    (p,) = problems(plan_with(q2={"name": ""}))
    assert str(p).startswith("query 3: name must not be empty")  # no usable name: the number alone


@pytest.mark.parametrize(
    ("changes", "hint"),
    [
        ({"q1": {"column": "wag"}}, 'did you mean "wage"?'),
        ({"q3": {"group_by": "regoin"}}, 'did you mean "region"?'),
        ({"q4": {"statistic": "median"}}, "use quantile with q = 0.5 for a median"),
        ({"q1": {"statistic": "average"}}, "use mean for an average"),
        ({"q1": {"statistic": "meen"}}, 'did you mean "mean"?'),
        ({"q0": {"mechanism": "laplase"}}, 'did you mean "laplace"?'),
        ({"q0": {"epsilom": 0.1}}, 'did you mean "epsilon"?'),
        ({"q0": {"epsilon": "ε=0,25"}}, "write the number 0.25 without quotes"),
        ({"q4": {"mechanism": "laplace"}}, 'write "exponential"'),
    ],
)
def test_the_likely_fix_is_suggested_from_the_plan(changes: dict[str, Any], hint: str) -> None:
    (p,) = problems(plan_with(**changes))
    assert p.hint == hint
    assert str(p).endswith("; " + hint)


def test_an_unknown_category_suggests_the_closest_declared_one() -> None:
    data = copy.deepcopy(EXAMPLE)
    data["queries"].append(
        {
            "name": "share south",
            "statistic": "proportion",
            "column": "region",
            "categories": ["sout"],
            "mechanism": "laplace",
            "epsilon": 0.1,
        }
    )
    (p,) = problems(data)
    assert p.key == "queries[6].categories[0]"
    assert str(p) == (
        'query 7 ("share south"): "sout" is not a declared category of column "region"; did you mean "south"?'
    )
    data = copy.deepcopy(EXAMPLE)
    data["columns"]["region"]["missing"] = {"impute": "West"}
    (p,) = problems(data)
    assert p.key == "columns.region.missing.impute" and p.hint == 'did you mean "west"?'
    assert str(p).startswith('column "region": the value to impute must be one of the declared categories')


def test_the_valid_part_of_a_plan_is_kept_and_a_whole_plan_problem_keeps_nothing() -> None:
    check = check_plan(plan_with(q1={"column": "wag"}, q4={"q": 2}))
    assert check.plan is None and len(check.problems) == 2
    assert check.rows == (0, 2, 3, 5)
    assert check.valid is not None
    assert [q.name for q in check.valid.queries] == ["people", "regions", "wage by region", "largest region"]
    assert check.valid.queries == tuple(parse_plan(EXAMPLE).queries[i] for i in check.rows)

    whole = check_plan(EXAMPLE)
    assert whole.problems == () and whole.plan == parse_plan(EXAMPLE) and whole.rows == tuple(range(6))

    broken_budget = copy.deepcopy(EXAMPLE)
    broken_budget["budget"]["epsilon"] = "one"
    check = check_plan(broken_budget)
    assert check.valid is None and [p.key for p in check.problems] == ["budget.epsilon"]
    assert str(check.problems[0]) == 'budget: epsilon must be a number, not text (you wrote "one")'


def test_a_broken_column_is_reported_once_not_for_every_query_that_uses_it() -> None:
    data = copy.deepcopy(EXAMPLE)
    data["columns"]["wage"]["bounds"] = [5000, 0]
    data["queries"][0]["epsilon"] = 0  # a problem of its own, still reported
    check = check_plan(data)
    assert [p.key for p in check.problems] == ["columns.wage.bounds", "queries[0].epsilon"]
    assert check.valid is None
    assert check.problems[0].hint == "write [0, 5000]"


def test_names_are_compared_across_broken_queries() -> None:
    found = problems(plan_with(q0={"epsilon": 0}, q1={"name": "people"}))
    assert [x.key for x in found] == ["queries[0].epsilon", "queries[1].name"]
    assert str(found[1]) == (
        'query 2 ("people"): the name "people" is used by an earlier query; names must differ'
    )


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    translation.cache_clear()
    yield
    monkeypatch.delenv("DPDESK_LANG")
    translation.cache_clear()


@pytest.mark.usefixtures("chinese")
def test_a_problem_reads_in_chinese() -> None:
    found = problems(plan_with(q0={"epsilon": "0.1x"}, q4={"statistic": "median"}))
    text = str(PlanErrors(found))
    assert text.splitlines() == [
        "计划有 2 个问题：",
        '  - 查询 1（"people"）：epsilon 必须是数字，而不是文本（你写的是 "0.1x"）；请写数字 0.1，不要加引号',
        '  - 查询 5（"median education"）：statistic 必须是 '
        + ", ".join(REGISTRY)  # every registered statistic, in the registry's order
        + ' 之一（你写的是 "median"）；中位数请用 quantile，并设 q = 0.5',
    ]


@pytest.mark.slow
def test_the_command_line_prints_every_problem_on_its_own_line(tmp_path: Path, dpdesk_home: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(plan_with(q0={"epsilon": "0.1x"}, q1={"column": "wag"})), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "budget", str(p)],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(dpdesk_home)},
        timeout=300,
        check=False,
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == "dpdesk: The plan has 2 problems:"
    assert lines[1].startswith('  - query 1 ("people"): epsilon must be a number')
    assert (
        lines[2] == '  - query 2 ("mean wage"): column "wag" is not declared in columns; did you mean "wage"?'
    )


def test_a_declared_column_missing_from_the_file_suggests_the_closest_header(tmp_path: Path) -> None:
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.loading.columns import match_columns

    plan = parse_plan(EXAMPLE)
    with pytest.raises(InputError) as err:
        match_columns(["age", "Wage", "educ", "region"], plan.columns, None, tmp_path / "t.csv")
    assert "'wage', 'education' not found in the header" in str(err.value)
    assert str(err.value).endswith('; did you mean "Wage"?; did you mean "educ"?')
