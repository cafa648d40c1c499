"""The golden table of costs: what plans and past releases cost under the costing rules the code declares.

A ledger checkpoint holds totals costed by the code that wrote it, and is trusted only by code of the same costing
rules (``COSTING_RULES`` in ``dpdesk/core/dp/accounting.py``, recorded in every checkpoint). This table pins those
rules: ``tests/core/golden_costs.json`` holds, for the ``COSTING_RULES`` it was generated with,

- ``plans``: every registered statistic with every mechanism and calibration it accepts (its ``examples()``, one plan
  each), under both relations of the unit of privacy, one row or k rows per person, an id column, rows that can or
  cannot drop out: each query's epsilon, delta and rho as exact strings (``repr`` of the float), and the plan's
  totals under every accounting method (sequential, advanced at the default delta' and at a stated one, zCDP);
- ``accuracy``: the epsilon solved from an accuracy target, for every statistic, mechanism and calibration that
  takes one (every one but a composite statistic's, whose epsilon is stated), and its costs;
- ``recost``: what past releases cost now (``dpdesk/core/ledger/recost.py``): every statistic's release re-costed
  through changes of the unit of privacy (k up, add_remove to replace, back down: never lower), a k an id column
  enforced, releases booked too low by older versions (a sum under replace, an analytic Gaussian) corrected, an old
  ``simulate --data`` run with its plan recorded or not, and a release carried over without a trace.

When a cost here changes, checkpoints written before the change hold totals this code would not compute: bump
``COSTING_RULES``, regenerate the table and note the change in CHANGELOG.md. Regenerate with::

    PYTHONPATH=$PWD .venv/bin/python tests/core/test_golden_costs.py --write

which refuses to overwrite the table with other costs under the same ``COSTING_RULES``. A statistic, mechanism or
calibration added to the registry must be added to the table (regenerate: the generator reads the registry).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import statistics
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.dp.statistics.base import Statistic
from dpdesk.core.ledger.budget import design_to_dict, plan_costs
from dpdesk.core.ledger.entries import GENESIS, Entry, salvaged
from dpdesk.core.ledger.recost import effective
from dpdesk.core.model.mechanism_kinds import MECHANISMS
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan

TABLE = Path(__file__).with_name("golden_costs.json")
COMMAND = "PYTHONPATH=$PWD .venv/bin/python tests/core/test_golden_costs.py --write"
WHAT_TO_DO = (
    "If the change is intended, bump COSTING_RULES in dpdesk/core/dp/accounting.py (a checkpoint written under "
    f"the old rules must not be trusted by this code), regenerate the table with `{COMMAND}` and note the change "
    "in CHANGELOG.md; otherwise undo the change."
)

BOUNDS = (-7.0, 3.0)
BUDGET = {"epsilon": 100.0, "delta": 1e-5}
EPSILON = 0.5
DELTA = 1e-7
#: advanced composition: a plan's own delta' besides the default (min(budget delta / 10, 1e-7))
DELTA_PRIME = 1e-8
METHODS = ("sequential", "advanced", "zcdp")
CATEGORIES = ["a", "b", "c"]
#: The units of privacy (and columns) each plan is costed under: (unit, whether missing values are imputed, so that
#: under replace no row of a statistic can drop out).
UNITS: dict[str, tuple[dict[str, Any], bool]] = {
    "add_remove k=1": ({"neighbouring": "add_remove", "max_rows_per_person": 1}, False),
    "add_remove k=3": ({"neighbouring": "add_remove", "max_rows_per_person": 3}, False),
    "replace k=1": ({"neighbouring": "replace", "max_rows_per_person": 1}, False),
    "replace k=3": ({"neighbouring": "replace", "max_rows_per_person": 3}, False),
    "replace k=1 imputed": ({"neighbouring": "replace", "max_rows_per_person": 1}, True),
    "add_remove k=2 id column": (
        {"neighbouring": "add_remove", "max_rows_per_person": 2, "id_column": "pid"},
        False,
    ),
    "replace k=2 id column": (
        {"neighbouring": "replace", "max_rows_per_person": 2, "id_column": "pid"},
        False,
    ),
}
#: The units a past release goes through, in order (the recost section): k up, to replace, back to where it was.
UNIT_CHANGES = ("add_remove k=3", "replace k=3", "add_remove k=1")


def variants() -> Iterator[tuple[Statistic, str, str | None]]:
    """Every registered statistic with every mechanism and calibration it accepts."""
    for stat in statistics.statistics():
        for mechanism in stat.mechanisms:
            for calibration in MECHANISMS[mechanism].calibrations or (None,):
                yield stat, str(mechanism), str(calibration) if calibration is not None else None


def variant_key(stat: Statistic, mechanism: str, calibration: str | None) -> str:
    """How the table names one: ``statistic/mechanism`` or ``statistic/mechanism/calibration``."""
    return "/".join([stat.name, mechanism, *([calibration] if calibration else [])])


def exact(x: float | Decimal | None) -> str | None:
    """A cost as an exact string: a float's shortest round-trip form, a decimal as it is."""
    if x is None:
        return None
    return str(x) if isinstance(x, Decimal) else repr(float(x))


#: Examples added to a statistic after the table pinned its plan (whose totals they would change): costed in a plan
#: of their own, under the key ``statistic/mechanism/<example>`` (the quantile by group, issue 31: its epsilon once,
#: not once per group; the adaptive synthetic table, issue 33, costed under each of the statistic's mechanisms).
SEPARATE = ("quantile_by", "synthetic_aim")


def _queries(
    stat: Statistic, mechanism: str, calibration: str | None, only: str | None = None, **cost: Any
) -> list[dict[str, Any]]:
    out = []
    for name, example in stat.examples(BOUNDS).items():
        if (
            "where" in example
        ):  # a row condition costs as rows that drop out, which the units here already pin
            continue
        if (name in SEPARATE) != (only is not None) or (only is not None and name != only):
            continue
        q: dict[str, Any] = {"name": name, **example, "mechanism": mechanism}
        if calibration is not None:
            q["calibration"] = calibration
        info = MECHANISMS[mechanism]  # type: ignore[index]
        if info.takes_delta and not info.delta_optional and "delta" not in q:
            q["delta"] = DELTA
        q.update(cost if "accuracy" in cost else {"epsilon": EPSILON, **cost})
        out.append(q)
    return out


def _plan_dict(queries: list[dict[str, Any]], unit: str, **over: Any) -> dict[str, Any]:
    privacy_unit, imputed = UNITS[unit]
    columns: dict[str, Any] = {
        "x": {"type": "float", "bounds": list(BOUNDS)},
        "g": {"type": "category", "categories": CATEGORIES},
    }
    if imputed:
        columns["x"]["missing"] = {"impute": 0.0}
        columns["g"]["missing"] = {"impute": "a"}
    return {
        "version": 1,
        "title": "golden",
        "budget": dict(BUDGET),
        "privacy_unit": copy.deepcopy(privacy_unit),
        "columns": columns,
        "queries": queries,
        **over,
    }


def _costs(costs: Any) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "epsilon": exact(c.epsilon), "delta": exact(c.delta), "rho": exact(c.rho)}
        for c in costs
    ]


def _total(t: acc.Total) -> dict[str, Any]:
    return {
        "epsilon": exact(t.epsilon),
        "delta": exact(t.delta),
        "rho": exact(t.rho),
        "epsilon_exact": exact(t.epsilon_decimal),
    }


def _plan_totals(costs: list[acc.QueryCost]) -> dict[str, Any]:
    out = {m: _total(acc.plan_total(m, costs, None, BUDGET["delta"])) for m in METHODS}
    out[f"advanced delta'={DELTA_PRIME!r}"] = _total(
        acc.plan_total("advanced", costs, DELTA_PRIME, BUDGET["delta"])
    )
    return out


def _costed(plan: Plan) -> dict[str, Any]:
    costs = plan_costs(design_plan(plan))
    return {"queries": _costs(costs), "totals": _plan_totals(costs)}


def plans_section() -> dict[str, Any]:
    """Every variant under every unit of privacy."""
    out: dict[str, Any] = {}
    for stat, mechanism, calibration in variants():
        key = variant_key(stat, mechanism, calibration)
        out[key] = {
            unit: _costed(parse_plan(_plan_dict(_queries(stat, mechanism, calibration), unit)))
            for unit in UNITS
        }
        for only in SEPARATE:
            if only in stat.examples(BOUNDS):
                out[f"{key}/{only}"] = {
                    unit: _costed(parse_plan(_plan_dict(_queries(stat, mechanism, calibration, only), unit)))
                    for unit in UNITS
                }
    return out


def accuracy_targets(stat: Statistic) -> tuple[dict[str, Any], ...]:
    """Targets in the statistic's own units (as tests/core/test_accuracy.py states them)."""
    kind = stat.accuracy_kind
    if kind == "value":
        return ({"error": 12, "confidence": 0.9}, {"error": 12, "confidence": 0.9, "cells": "all"})
    if kind == "ratio":
        return ({"error": 0.6 if stat.name == "mean" else 0.12, "confidence": 0.9},)
    if kind == "spread":  # a variance in units squared, a standard deviation in units (bounds -7, 3)
        return ({"error": 6.0 if stat.accuracy_unit == "squared" else 2.0, "confidence": 0.9},)
    if kind == "rank":
        return ({"error": 60, "confidence": 0.9},)
    return ({"error": 20, "confidence": 0.9},)


def accuracy_section() -> dict[str, Any]:
    """The epsilon solved from each target, under both relations (add_remove k=1, replace k=3)."""
    out: dict[str, Any] = {}
    for stat, mechanism, calibration in variants():
        if stat.composite:
            continue
        key = variant_key(stat, mechanism, calibration)
        examples = stat.examples(BOUNDS)
        for only in (None, *(o for o in SEPARATE if o in examples)):
            where = key if only is None else f"{key}/{only}"
            out[where] = {}
            for unit in ("add_remove k=1", "replace k=3"):
                for i, target in enumerate(accuracy_targets(stat)):
                    if calibration == "classic":  # its formula holds only for epsilon < 1: a looser target
                        target = {**target, "error": target["error"] * 40}
                    queries = _queries(stat, mechanism, calibration, only, accuracy=target)
                    plan = parse_plan(_plan_dict(queries, unit, expected_rows=300))
                    out[where][f"{unit}, target {i + 1}"] = {
                        "target": target,
                        "epsilon": [exact(q.epsilon) for q in plan.queries],
                        **_costed(plan),
                    }
    return out


def _settings(unit: str) -> dict[str, Any]:
    one = {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": EPSILON}
    return parse_plan(_plan_dict([one], unit)).settings()


def _spend(seq: int, plan: Plan, release_id: str) -> dict[str, Any]:
    designs = design_plan(plan)
    return {
        "seq": seq,
        "type": "spend",
        "release_id": release_id,
        "plan": plan.to_dict(),
        "plan_hash": plan.plan_hash(),
        "costs": [c.to_dict() for c in plan_costs(designs)],
        "trace": [design_to_dict(d) for d in designs],
        "delta_prime": None,
        "prev": GENESIS,
    }


def _effective(entries: list[Entry]) -> dict[str, Any]:
    effs = effective(entries)
    releases = [e.release() for e in effs]
    return {
        "releases": {e.release_id: _costs(e.costs) for e in effs},
        "totals": {m: _total(acc.dataset_total(m, releases, BUDGET["delta"])) for m in METHODS},
    }


def _through_unit_changes(first: str, spends: list[dict[str, Any]]) -> dict[str, Any]:
    """The effective costs of ``spends`` (made under ``first``) after each change of :data:`UNIT_CHANGES`."""
    entries = [{"seq": 1, "type": "settings", "settings": _settings(first)}, *spends]
    out = {first: _effective([salvaged(e) for e in entries])}
    for unit in UNIT_CHANGES:
        entries.append({"seq": len(entries) + 1, "type": "settings", "settings": _settings(unit)})
        out[f"then {unit}"] = _effective([salvaged(e) for e in entries])
    return out


def recost_section() -> dict[str, Any]:
    """Past releases at what they cost now."""
    out: dict[str, Any] = {}
    for stat, mechanism, calibration in variants():
        plan = parse_plan(_plan_dict(_queries(stat, mechanism, calibration), "add_remove k=1"))
        out[variant_key(stat, mechanism, calibration)] = _through_unit_changes(
            "add_remove k=1", [_spend(2, plan, "r1")]
        )
    cases: dict[str, Any] = {}
    count_sum = [
        {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
        {"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.2},
    ]
    # an id column enforced k = 2 at the release: only a change of relation re-costs it
    cases["an id column enforced k"] = _through_unit_changes(
        "add_remove k=2 id column",
        [_spend(2, parse_plan(_plan_dict(count_sum, "add_remove k=2 id column")), "r1")],
    )
    # a sum over [99, 100] under replace with rows that can drop, booked by an older version with U - L = 1
    # (today: max(U - L, M) = 100)
    old_sum = _plan_dict([count_sum[1]], "replace k=1")
    old_sum["columns"]["x"]["bounds"] = [99, 100]
    spend = _spend(2, parse_plan(old_sum), "r1")
    comp = spend["trace"][0]["components"][0]
    comp["sensitivity_used"] = comp["sensitivity_l1"] = 1.0
    cases["a replace sum booked too low by an older version"] = _effective(
        [salvaged({"seq": 1, "type": "settings", "settings": _settings("replace k=1")}), salvaged(spend)]
    )
    # an analytic Gaussian drawn with the older Phi = (1 + erf)/2 (sigma 7.9516, not 8.83823) at delta 1e-20
    gauss = _plan_dict(
        [
            {
                "name": "n",
                "statistic": "count",
                "mechanism": "gaussian",
                "calibration": "analytic",
                "epsilon": 1.0,
                "delta": 1e-20,
            }
        ],
        "add_remove k=1",
    )
    spend = _spend(2, parse_plan(gauss), "r1")
    spend["trace"][0]["components"][0]["scale"] = 7.9516
    cases["an analytic Gaussian booked too low by an older version"] = _effective(
        [salvaged({"seq": 1, "type": "settings", "settings": _settings("add_remove k=1")}), salvaged(spend)]
    )
    # old `simulate --data` runs: three of a recorded plan, one of a plan the ledger does not hold
    plan = parse_plan(_plan_dict(count_sum, "add_remove k=1"))
    first = [
        {"seq": 1, "type": "settings", "settings": _settings("add_remove k=1")},
        _spend(2, plan, "r1"),
        {"seq": 3, "type": "simulate", "runs": 3, "plan_hash": plan.plan_hash()},
        {"seq": 4, "type": "simulate", "runs": 2, "plan_hash": "0" * 64},
    ]
    cases["simulate --data runs of older versions"] = _effective([salvaged(e) for e in first])
    # a release carried over from a broken ledger without a trace, then k 1 -> 2 and add_remove -> replace
    carried = {
        "seq": 1,
        "type": "acknowledge",
        "settings": _settings("add_remove k=1"),
        "carried": [
            {
                "release_id": "c1",
                "seq": 5,
                "costs": [c.to_dict() for c in plan_costs(design_plan(plan))],
                "delta_prime": None,
                "unit": UNITS["add_remove k=1"][0],
            }
        ],
    }
    entries = [carried, {"seq": 2, "type": "settings", "settings": _settings("replace k=3")}]
    cases["a release carried over without a trace"] = _effective([salvaged(e) for e in entries])
    out["cases"] = cases
    return out


def table() -> dict[str, Any]:
    """The whole table as this code computes it (through JSON, as the file holds it)."""
    got = {
        "costing_rules": acc.COSTING_RULES,
        "plans": plans_section(),
        "accuracy": accuracy_section(),
        "recost": recost_section(),
    }
    return json.loads(json.dumps(got, allow_nan=False, sort_keys=True))


def stored() -> dict[str, Any]:
    """The table as the file holds it."""
    return json.loads(TABLE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def differences(old: Any, new: Any, where: str = "") -> Iterator[str]:
    """Where two tables differ (paths into them), first ones first."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            if k not in new:
                yield f"{where}/{k}: in the table, no longer computed"
            elif k not in old:
                yield f"{where}/{k}: computed, not in the table"
            else:
                yield from differences(old[k], new[k], f"{where}/{k}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from differences(a, b, f"{where}[{i}]")
    elif old != new:
        yield f"{where}: {old!r} in the table, {new!r} now"


def _costs_only(t: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in t.items() if k != "costing_rules"}


# the tests ------------------------------------------------------------------------------------------------------


def test_the_table_is_of_the_costing_rules_in_force() -> None:
    rules = stored()["costing_rules"]
    assert rules == acc.COSTING_RULES, (
        f"tests/core/golden_costs.json was generated under COSTING_RULES {rules}, the code declares "
        f"{acc.COSTING_RULES}: regenerate it with `{COMMAND}` (and note the new rules in CHANGELOG.md)"
    )


def test_every_statistic_mechanism_and_calibration_is_in_the_table() -> None:
    """Adding a statistic (or a mechanism or calibration to one) means adding it to the table: otherwise its
    costs could change without anyone bumping COSTING_RULES."""
    t = stored()
    missing = []
    for stat, mechanism, calibration in variants():
        key = variant_key(stat, mechanism, calibration)
        if set(t["plans"].get(key, {})) != set(UNITS):
            missing.append(f"plans/{key}")
        if not stat.composite and not t["accuracy"].get(key):
            missing.append(f"accuracy/{key}")
        if len(t["recost"].get(key, {})) != 1 + len(UNIT_CHANGES):
            missing.append(f"recost/{key}")
    assert not missing, (
        f"the golden table of costs lacks {', '.join(missing)}: regenerate it with `{COMMAND}` (it reads the "
        "registry); if costs already in the table change too, bump COSTING_RULES in dpdesk/core/dp/accounting.py "
        "first and note it in CHANGELOG.md"
    )


@pytest.mark.slow
@pytest.mark.parametrize("section", ["plans", "accuracy", "recost"])
def test_the_costs_are_the_tables_under_the_same_costing_rules(section: str) -> None:
    """Every cost in the table, recomputed by this code, is the same exact string: a change of a cost formula, a
    sensitivity, a calibration, an accounting method or the re-costing of past releases shows up here."""
    builders = {"plans": plans_section, "accuracy": accuracy_section, "recost": recost_section}
    old = stored()
    new = json.loads(json.dumps(builders[section](), allow_nan=False, sort_keys=True))
    diff = list(differences(old[section], new, section))
    assert not diff, (
        f"{len(diff)} cost(s) of the golden table changed while COSTING_RULES is still {old['costing_rules']} "
        f"(first: {'; '.join(diff[:5])}). {WHAT_TO_DO}"
    )


@pytest.mark.slow
def test_the_generator_refuses_other_costs_under_the_same_costing_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regenerating the table without bumping COSTING_RULES would hide a change of costs from the test above: the
    generator refuses it (the file is left as it was) and says what to do; under other rules it writes."""
    real = stored()
    t = copy.deepcopy(real)
    t["plans"]["count/laplace"]["add_remove k=1"]["queries"][0]["epsilon"] = "0.25"  # another code's cost
    copy_ = tmp_path / "golden_costs.json"
    copy_.write_text(json.dumps(t), encoding="utf-8")
    before = copy_.read_bytes()
    monkeypatch.setattr(sys.modules[__name__], "TABLE", copy_)
    assert main(["--write"]) == 1
    assert copy_.read_bytes() == before
    assert "Bump COSTING_RULES" in capsys.readouterr().err
    t["costing_rules"] = acc.COSTING_RULES - 1  # a table of older rules: regenerated under the rules in force
    copy_.write_text(json.dumps(t), encoding="utf-8")
    assert main(["--write"]) == 0
    assert json.loads(copy_.read_text(encoding="utf-8")) == real


def main(argv: list[str]) -> int:
    """``--write``: (re)generate the table; refused when its costs change under the same COSTING_RULES."""
    if argv != ["--write"]:
        print(f"usage: {COMMAND}", file=sys.stderr)
        return 2
    new = table()
    if TABLE.exists():
        old = stored()
        if old.get("costing_rules") == new["costing_rules"] and _costs_only(old) != _costs_only(new):
            diff = list(differences(_costs_only(old), _costs_only(new)))
            lacks = all(d.endswith("computed, not in the table") for d in diff)
            if not lacks:
                print(
                    f"not written: {len(diff)} cost(s) changed under the same COSTING_RULES "
                    f"{new['costing_rules']} (first: {'; '.join(diff[:5])}). Bump COSTING_RULES in "
                    "dpdesk/core/dp/accounting.py, note it in CHANGELOG.md, and run this again.",
                    file=sys.stderr,
                )
                return 1
    TABLE.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {TABLE} (COSTING_RULES {new['costing_rules']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
