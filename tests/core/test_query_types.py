"""Queries are validated when built (issue 12, item 2): a query built by hand, or by ``dataclasses.replace``, is
refused with the plan reader's message and hint, keyed ``query.<field>`` (the plan reader keys the same field by
the query's place, ``queries[0].<field>``), so that a query built outside :func:`parse_plan` cannot bypass a
check. What needs the plan's columns or budget (a declared column, bounds, the budget's delta) stays the plan's."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import subprocess
import sys
from typing import Any

import pytest

from dpdesk.core.common.errors import PlanError, field_of
from dpdesk.core.dp.statistics.histogram import HistogramQuery
from dpdesk.core.dp.statistics.proportion import ProportionQuery
from dpdesk.core.dp.statistics.quantile import QuantileQuery
from dpdesk.core.dp.statistics.select import SelectQuery
from dpdesk.core.dp.statistics.synthetic import SyntheticQuery
from dpdesk.core.model.spec import QuerySpec
from dpdesk.core.plan.reader import parse_plan
from tests.conftest import ROOT, SAMPLES

EXAMPLE = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))

COUNT = {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}
MEAN = {"name": "m", "statistic": "mean", "column": "wage", "mechanism": "laplace", "epsilon": 0.1}
GAUSS = {
    "name": "s",
    "statistic": "sum",
    "column": "wage",
    "mechanism": "gaussian",
    "epsilon": 0.5,
    "delta": 1e-7,
}
QUANT = {
    "name": "q",
    "statistic": "quantile",
    "column": "education",
    "mechanism": "exponential",
    "epsilon": 0.1,
}
HIST = {
    "name": "h",
    "statistic": "histogram",
    "column": "wage",
    "bins": [0, 100, 5000],
    "mechanism": "laplace",
}
SELECT = {
    "name": "p",
    "statistic": "select",
    "column": "wage",
    "candidates": [1, 2],
    "utility": "revenue",
    "mechanism": "exponential",
    "epsilon": 0.1,
}
SHARE = {
    "name": "r",
    "statistic": "proportion",
    "column": "region",
    "categories": ["south"],
    "mechanism": "laplace",
}
SHARE_N = {"name": "w", "statistic": "proportion", "column": "wage", "at_least": 100, "mechanism": "laplace"}
SYNTH = {
    "name": "t",
    "statistic": "synthetic",
    "columns": ["wage", "region"],
    "mechanism": "mst",
    "epsilon": 1,
}


def _kwargs(query: dict[str, Any]) -> dict[str, Any]:
    """The query as constructor arguments (lists as tuples, as the dataclasses hold them)."""
    out = {k: tuple(v) if isinstance(v, list) else v for k, v in query.items()}
    out.setdefault("epsilon", 0.1)
    return out


def _with(query: dict[str, Any], **changes: Any) -> dict[str, Any]:
    q = {**copy.deepcopy(query), **changes}
    return {k: v for k, v in q.items() if v is not _DROP}


_DROP = object()

# (what is built by hand, the same query in a plan): both must fail on the same field with the same message
CASES: list[tuple[str, type[QuerySpec], dict[str, Any]]] = [
    ("statistic word", QuerySpec, _with(COUNT, statistic="bogus")),
    ("statistic with a hint", QuerySpec, _with(COUNT, statistic="median")),
    ("mechanism word", QuerySpec, _with(COUNT, mechanism="zzz")),
    ("mechanism of another statistic", QuerySpec, _with(MEAN, mechanism="exponential")),
    ("epsilon negative", QuerySpec, _with(COUNT, epsilon=-1.0)),
    ("epsilon zero", QuerySpec, _with(COUNT, epsilon=0)),
    ("epsilon text", QuerySpec, _with(COUNT, epsilon="0.1")),
    ("name empty", QuerySpec, _with(COUNT, name=" ")),
    ("delta of a Laplace query", QuerySpec, _with(COUNT, delta=1e-6)),
    ("delta missing for Gaussian", QuerySpec, _with(GAUSS, delta=_DROP)),
    ("delta one", QuerySpec, _with(GAUSS, delta=1.0)),
    ("delta below the floor", QuerySpec, _with(GAUSS, delta=1e-40)),
    ("calibration of a Laplace query", QuerySpec, _with(COUNT, calibration="analytic")),
    ("calibration word", QuerySpec, _with(GAUSS, calibration="tight")),
    ("column of a count", QuerySpec, _with(COUNT, column="wage")),
    ("column missing", QuerySpec, _with(MEAN, column=_DROP)),
    ("mode grouped", QuerySpec, _with(QUANT, statistic="mode", column="region", group_by="region")),
    ("proportion epsilon", ProportionQuery, _with(SHARE, epsilon=-1.0)),
    ("proportion listed twice", ProportionQuery, _with(SHARE, categories=["south", "south"])),
    ("proportion empty condition", ProportionQuery, _with(SHARE_N, at_least=300, at_most=200)),
    ("quantile q", QuantileQuery, _with(QUANT, q=1.5)),
    ("quantile candidates order", QuantileQuery, _with(QUANT, candidates=[3, 1])),
    ("quantile candidates and step", QuantileQuery, _with(QUANT, candidates=[1, 3], grid_step=1)),
    ("quantile step", QuantileQuery, _with(QUANT, grid_step=-1)),
    ("histogram bins", HistogramQuery, _with(HIST, bins=[100, 0])),
    ("select candidates missing", SelectQuery, _with(SELECT, candidates=_DROP)),
    ("select negative price", SelectQuery, _with(SELECT, candidates=[-1, 2])),
    ("select utility missing", SelectQuery, _with(SELECT, utility=_DROP)),
    ("select utility word", SelectQuery, _with(SELECT, utility="profit")),
    ("synthetic one column", SyntheticQuery, _with(SYNTH, columns=["wage"])),
    ("synthetic rows", SyntheticQuery, _with(SYNTH, rows=0)),
]


def _plan_error(query: dict[str, Any]) -> PlanError:
    data = copy.deepcopy(EXAMPLE)
    data["queries"] = [query if "epsilon" in query else {**query, "epsilon": 0.1}]
    with pytest.raises(PlanError) as info:
        parse_plan(data)
    return info.value


def _built_error(kind: type[QuerySpec], query: dict[str, Any]) -> PlanError:
    with pytest.raises(PlanError) as info:
        kind(**_kwargs(query))
    return info.value


@pytest.mark.parametrize(("kind", "query"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_built_by_hand_is_refused_like_the_plan_refuses(kind: type[QuerySpec], query: dict[str, Any]) -> None:
    parsed, built = _plan_error(query), _built_error(kind, query)
    assert built.key.startswith("query.")
    assert field_of(built.key) == field_of(parsed.key)
    assert (built.message, built.hint) == (parsed.message, parsed.hint)


def test_the_audits_examples_are_refused_when_built() -> None:
    """The audit's two examples (issue 12, gap 5), named by their query."""
    with pytest.raises(PlanError) as info:
        QuerySpec(name="x", statistic="bogus", mechanism="zzz", epsilon=-1.0)
    assert info.value.key == "query.statistic"
    assert str(info.value).startswith('query "x": statistic must be one of count, sum, mean')
    with pytest.raises(PlanError) as info:
        ProportionQuery(
            name="y", statistic="proportion", mechanism="laplace", epsilon=-1.0, column="g", categories=("a",)
        )
    assert str(info.value) == 'query "y": epsilon must be greater than 0 (you wrote -1.0)'
    with pytest.raises(PlanError) as info:
        ProportionQuery(name="y", statistic="proportion", mechanism="laplace", epsilon=1.0, column="g")
    assert info.value.key == "query.categories"


def test_non_finite_numbers_are_refused_when_built() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(PlanError, match="epsilon must be a finite number"):
            QuerySpec("n", "count", "laplace", bad)
        with pytest.raises(PlanError, match="delta must be a finite number"):
            QuerySpec("s", "sum", "gaussian", 0.5, bad, column="wage")
        with pytest.raises(PlanError, match="q must be a finite number"):
            QuantileQuery("q", "quantile", "exponential", 0.1, column="x", q=bad)


def test_every_parsed_query_built_again_by_hand_is_equal() -> None:
    """Every statistic's valid query, rebuilt from its fields, is the parsed one (normalised the same way)."""
    data = copy.deepcopy(EXAMPLE)
    data["queries"] = [
        {**q, "epsilon": 0.1} if "epsilon" not in q else q
        for q in (COUNT, MEAN, GAUSS, QUANT, HIST, SELECT, SHARE, SHARE_N, SYNTH)
    ] + [_with(QUANT, name="q2", candidates=[1, 5]), _with(QUANT, name="q3", grid_step=2)]
    data["budget"] = {"epsilon": 5.0, "delta": 1e-6}
    plan = parse_plan(data)
    assert len(plan.queries) == 11
    for spec in plan.queries:
        fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
        assert type(spec)(**fields) == spec
        plain = {
            k: str(v) if k in ("statistic", "mechanism", "calibration") else v for k, v in fields.items()
        }
        assert type(spec)(**plain) == spec  # the plain words are read as the enums
    assert QuantileQuery("q", "quantile", "exponential", 0.1, column="x", candidates=(1, 3)).candidates == (
        1.0,
        3.0,
    )


def test_replace_validates_and_the_solvers_still_build_queries() -> None:
    spec = parse_plan(EXAMPLE).queries[0]
    with pytest.raises(PlanError, match="epsilon must be greater than 0"):
        dataclasses.replace(spec, epsilon=-1.0)
    # a fitted or solved epsilon may leave the plan's range (the plan reader's to refuse): it is only positive here
    assert dataclasses.replace(spec, epsilon=250.0).epsilon == 250.0
    data = copy.deepcopy(EXAMPLE)
    data["queries"] = [{"name": "n", "statistic": "count", "mechanism": "laplace", "accuracy": {"error": 50}}]
    solved = parse_plan(data).queries[0]
    assert solved.accuracy is not None and 0 < solved.epsilon < 1


def _python(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter on this tree."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=ROOT
    ).stdout


def test_a_query_built_in_a_fresh_process_from_the_plan_module_reads_the_registry() -> None:
    """The query types live below the statistics registry (dpdesk/core/model/spec.py never imports it); importing
    dpdesk.core.plan.reader, as before the split, is enough for a query built by hand to be validated against the
    registry (the plan reader installs it), and the import itself still loads no numpy."""
    code = (
        "import sys\n"
        "from dpdesk.core.plan.reader import Plan, QuerySpec\n"
        "assert 'numpy' not in sys.modules and 'dpdesk.core.dp.statistics' not in sys.modules\n"
        "print(QuerySpec('n', 'count', 'laplace', 0.5).statistic)\n"
        "try:\n"
        "    QuerySpec('x', 'bogus', 'laplace', 0.5)\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc.key)\n"
    )
    out = _python(code)
    assert out.splitlines() == ["count", "PlanError query.statistic"]


def test_the_query_types_alone_say_that_the_registry_is_not_loaded() -> None:
    """plan_base on its own (nothing above it imported) cannot check a statistic's word: a clear error, not a
    query that bypassed its checks."""
    code = (
        "from dpdesk.core.model.spec import QuerySpec\n"
        "try:\n"
        "    QuerySpec('n', 'count', 'laplace', 0.5)\n"
        "except RuntimeError as exc:\n"
        "    print(exc)\n"
    )
    out = _python(code)
    assert "the statistics registry is not loaded" in out
