"""Issue 15 item 5: a release of epsilon 5 or more, and one that spends everything that is left, are warned about by
one rule in the engine, which the command line's ``budget`` and ``release`` print (a line; the exit code is kept)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpdesk.cli import main
from dpdesk.core.dp.deployments import HIGH_EPSILON
from dpdesk.core.ledger.budget import budget_report, report_warnings, spend_warnings
from dpdesk.core.plan.reader import parse_plan
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def plan_with(budget: float, epsilons: list[float]) -> dict[str, Any]:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = budget
    counts = [q for q in data["queries"] if q["statistic"] == "count"]
    data["queries"] = [{**counts[0], "name": f"count {i}", "epsilon": e} for i, e in enumerate(epsilons)]
    return data


def test_the_rule_warns_at_five_and_when_everything_left_is_spent() -> None:
    assert spend_warnings(4.99, 5.0, 10.0) == ()
    high = spend_warnings(HIGH_EPSILON, 5.0, 10.0)
    assert len(high) == 1 and "ε 5" in high[0]
    assert len(spend_warnings(0.5, 0.0, 1.0)) == 1  # all that was left
    assert len(spend_warnings(0.5, 0.0004, 1.0)) == 1  # a rounded-down even split leaves crumbs: still all
    assert spend_warnings(0.5, 0.01, 1.0) == ()
    assert len(spend_warnings(6.0, 0.0, 6.0)) == 2


def test_a_report_warns_only_when_the_plan_fits() -> None:
    fits_all = budget_report(parse_plan(plan_with(1.0, [0.5, 0.5])))
    assert fits_all.fits and len(report_warnings(fits_all)) == 1
    over = budget_report(parse_plan(plan_with(1.0, [0.5, 0.6])))
    assert not over.fits and report_warnings(over) == ()
    room = budget_report(parse_plan(plan_with(1.0, [0.2, 0.2])))
    assert report_warnings(room) == ()


@pytest.mark.parametrize(
    ("budget", "epsilons", "expected"),
    [(10.0, [3.0, 3.0], "6"), (1.0, [0.5, 0.5], "everything that is left"), (1.0, [0.1], None)],
)
def test_budget_and_release_print_the_warning_and_keep_the_exit_code(
    tmp_path: Path, capsys: Any, budget: float, epsilons: list[float], expected: str | None
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_with(budget, epsilons)), encoding="utf-8")
    assert main(["budget", str(plan)]) == 0
    said = capsys.readouterr().out
    assert (expected is None) == ("Warning:" not in said), said
    if expected is not None:
        assert expected in said.split("Warning:", 1)[1]
    assert main(["release", str(plan), "--data", str(DATA), "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().out
    assert (expected is None) == ("Warning:" not in said), said
    if expected is not None:
        assert expected in said.split("Warning:", 1)[1]
