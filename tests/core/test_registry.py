"""The registry of statistics and of mechanisms (issue 12, stage 1): one module per statistic, read by plan
validation, the designs, the exact aggregates, the release and the form."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from dpdesk.core import statistics
from dpdesk.core.errors import PlanError
from dpdesk.core.mechanism_kinds import MECHANISMS, Mechanism
from dpdesk.core.plan import QuerySpec, parse_plan
from dpdesk.core.queries import design_query
from dpdesk.core.statistics.base import ParamKind, Statistic

BOUNDS = ((-7.0, 3.0), (99.0, 100.0))


def plan_of(
    query: dict[str, Any], bounds: tuple[float, float] = (-7.0, 3.0), relation: str = "replace"
) -> Any:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": relation},
            "columns": {
                "x": {"type": "float", "bounds": list(bounds)},
                "g": {"type": "category", "categories": ["a", "b", "c"]},
            },
            "queries": [{"name": "q", "epsilon": 0.5, **query}],
        }
    )


def test_the_registry_lists_the_statistics_in_a_stable_order() -> None:
    names = statistics.names()
    assert names[:7] == ("count", "sum", "mean", "histogram", "quantile", "mode", "select")
    assert list(statistics.REGISTRY) == list(names)
    assert [s.name for s in statistics.statistics()] == list(names)
    assert all(isinstance(statistics.get(n), Statistic) for n in names)
    with pytest.raises(KeyError):
        statistics.get("median")


def test_the_vocabularies_are_str_enums_that_serialise_as_plain_words() -> None:
    spec = plan_of({"statistic": "count", "mechanism": "laplace"}).queries[0]
    assert isinstance(spec.statistic, statistics.StatisticName)
    assert isinstance(spec.mechanism, Mechanism)
    assert spec.statistic == "count" and spec.mechanism == "laplace"
    assert json.dumps([spec.statistic, spec.mechanism]) == '["count", "laplace"]'
    assert f"{spec.statistic}/{spec.mechanism}" == "count/laplace"


@pytest.mark.parametrize("stat", list(statistics.REGISTRY.values()), ids=lambda s: s.name)
def test_every_statistic_declares_what_the_plan_and_the_form_read(stat: Statistic) -> None:
    assert stat.mechanisms and all(m in MECHANISMS for m in stat.mechanisms)
    assert stat.label() and stat.word()
    assert stat.figure in ("noise", "selection")
    assert (stat.figure == "selection") == (Mechanism.EXPONENTIAL in stat.mechanisms)
    keys = [p.key for p in stat.params]
    assert len(keys) == len(set(keys))
    for p in stat.params:
        assert isinstance(p.kind, ParamKind) and p.label() and p.help()
    assert issubclass(stat.query_type, QuerySpec)


@pytest.mark.parametrize("stat", list(statistics.REGISTRY.values()), ids=lambda s: s.name)
def test_every_example_parses_designs_and_round_trips(stat: Statistic) -> None:
    for bounds in BOUNDS:
        examples = stat.examples(bounds)
        assert examples
        for query in examples.values():
            plan = plan_of(query, bounds)
            spec = plan.queries[0]
            assert type(spec) is stat.query_type
            assert parse_plan(plan.to_dict()) == plan
            design = design_query(spec, plan)
            assert design.components and all(c.derivation for c in design.components)
            assert stat.accuracy(design)
            for mech in stat.mechanisms:  # every declared mechanism is accepted
                extra = {"delta": 1e-6} if MECHANISMS[mech].takes_delta else {}
                assert (
                    plan_of({**query, "mechanism": str(mech), **extra}, bounds).queries[0].mechanism == mech
                )


@pytest.mark.parametrize("stat", list(statistics.REGISTRY.values()), ids=lambda s: s.name)
def test_undeclared_mechanisms_and_parameters_are_refused(stat: Statistic) -> None:
    query = next(iter(stat.examples((-7.0, 3.0)).values()))
    for mech in set(Mechanism) - set(stat.mechanisms):
        with pytest.raises(PlanError) as err:
            plan_of({**query, "mechanism": str(mech)})
        assert err.value.key == "queries[0].mechanism"
    others = {p.key for s in statistics.REGISTRY.values() for p in s.params} - {p.key for p in stat.params}
    for key in sorted(others - {"column", "group_by"}):
        with pytest.raises(PlanError) as err:
            plan_of({**query, key: 1})
        assert err.value.key == f"queries[0].{key}"
        assert f"does not apply to {stat.name}" in str(err.value)


def test_group_by_is_refused_with_the_list_of_statistics_that_can_be_grouped() -> None:
    with pytest.raises(PlanError) as err:
        plan_of({"statistic": "mode", "column": "g", "mechanism": "exponential", "group_by": "g"})
    groupable = [s.name for s in statistics.REGISTRY.values() if s.groupable]
    assert groupable[:4] == ["count", "sum", "mean", "histogram"]
    assert f"{', '.join(groupable[:-1])} and {groupable[-1]} can" in str(err.value)


def test_the_mechanism_registry() -> None:
    assert list(MECHANISMS) == ["laplace", "gaussian", "exponential", "mst"]
    gauss = MECHANISMS[Mechanism.GAUSSIAN]
    assert gauss.takes_delta and gauss.calibrations == ("classic", "analytic")
    assert len(gauss.calibration_labels) == len(gauss.calibrations)
    mst = MECHANISMS[Mechanism.MST]  # the synthesiser: delta optional (0: Laplace parts), no calibration
    assert mst.takes_delta and mst.delta_optional and not mst.calibrations
    one_shot = {k: m for k, m in MECHANISMS.items() if k not in (Mechanism.GAUSSIAN, Mechanism.MST)}
    assert not any(m.takes_delta or m.calibrations for m in one_shot.values())
    assert all(m.label() and m.formula() for m in MECHANISMS.values())


def test_a_query_type_is_frozen() -> None:
    spec = plan_of({"statistic": "quantile", "column": "x", "mechanism": "exponential", "q": 0.25}).queries[0]
    assert spec.q == 0.25  # type: ignore[attr-defined]  # a QuantileQuery
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.q = 0.5  # type: ignore[attr-defined, misc]  # frozen
