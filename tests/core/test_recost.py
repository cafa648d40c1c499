"""Issue 11, items 6 and 2/3/5 (corrections): past releases cost what they cost now, never less.

A change of the unit of privacy re-costs every earlier release from its recorded trace
(c = Delta_new / Delta_old: Laplace and exponential epsilon * c, Gaussian epsilon re-solved at its
delta, rho * c^2), except the k that an id column enforced; costs are never lowered; a change that
cannot be bounded is refused. Releases booked too low by older versions, and their uncharged
``simulate --data`` runs, are charged by a ``correction`` entry.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.dp import accounting as acc
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.carryover import parse_stated_cost
from dpdesk.core.ledger.entries import GENESIS, entry_hash, salvaged
from dpdesk.core.ledger.recost import effective, gaussian_epsilon
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import release

BASE: dict[str, Any] = {
    "version": 1,
    "title": "t",
    "budget": {"epsilon": 3.0, "delta": 1e-6},
    "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
    "columns": {
        "x": {"type": "float", "bounds": [0, 10], "missing": {"impute": 5}},
        "g": {"type": "category", "categories": ["a", "b"], "missing": {"impute": "a"}},
    },
    "queries": [
        {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
        {"name": "hist", "statistic": "histogram", "column": "g", "mechanism": "laplace", "epsilon": 0.2},
    ],
}


def plan(**unit: Any) -> dict[str, Any]:
    d = copy.deepcopy(BASE)
    d["privacy_unit"].update(unit)
    return d


def data(tmp_path: Path, with_id: bool = False) -> Path:
    p = tmp_path / "d.csv"
    rows = [f"{i % 10},{'ab'[i % 2]}" + (f",p{i}" if with_id else "") for i in range(40)]
    p.write_text("x,g" + (",pid" if with_id else "") + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return p


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def change(tmp_path: Path, home: Path, d: Path, new: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    p = tmp_path / "new.json"
    p.write_text(json.dumps(new), encoding="utf-8")
    return cli("ledger", "--data", str(d), "--change-settings", str(p), "--reason", "officer", home=home)


def spent(home: Path, d: Path, p: dict[str, Any]) -> Decimal:
    entries = Ledger.for_dataset(home, _sha(d)).verify()
    rep = budget_report(parse_plan(p), entries)
    seq = rep.methods["sequential"]
    assert seq is not None
    return Decimal(str(seq.spent.epsilon))


def _sha(p: Path) -> str:
    import hashlib

    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.slow
def test_k_up_multiplies_past_costs_and_never_comes_back(dpdesk_home: Path, tmp_path: Path) -> None:
    d = data(tmp_path)
    release(parse_plan(plan()), d, dpdesk_home)
    assert spent(dpdesk_home, d, plan()) == Decimal("0.3")
    r = change(tmp_path, dpdesk_home, d, plan(max_rows_per_person=5))
    assert r.returncode == 0, r.stderr
    assert "epsilon 1.2 more" in r.stdout  # 0.3 x 5 - 0.3
    assert spent(dpdesk_home, d, plan(max_rows_per_person=5)) == Decimal("1.5")
    entries = Ledger.for_dataset(dpdesk_home, _sha(d)).verify()
    corr = [e for e in entries if e.type == "correction"]
    assert len(corr) == 1 and corr[0].seq > next(
        e.seq for e in entries if e.type == "settings" and e.reason == "officer"
    )
    # k back down to 1: recorded costs are never lowered
    assert change(tmp_path, dpdesk_home, d, plan()).returncode == 0
    assert spent(dpdesk_home, d, plan()) == Decimal("1.5")
    # the budget left is the truth: 3 - 1.5; a plan for 1.6 is refused
    big = plan()
    big["queries"][0]["epsilon"] = 1.6
    q = tmp_path / "big.json"
    q.write_text(json.dumps(big), encoding="utf-8")
    assert (
        cli("release", str(q), "--data", str(d), "--out", str(tmp_path / "o"), home=dpdesk_home).returncode
        == 1
    )


@pytest.mark.slow
def test_add_remove_to_replace_and_back(dpdesk_home: Path, tmp_path: Path) -> None:
    d = data(tmp_path)
    p = plan()
    p["queries"].append(
        {"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.1}
    )
    p["columns"]["x"]["bounds"] = [99, 100]
    p["columns"]["x"]["missing"] = {"impute": 99.5}
    release(parse_plan(p), d, dpdesk_home)
    assert spent(dpdesk_home, d, p) == Decimal("0.4")
    rep = copy.deepcopy(p)
    rep["privacy_unit"]["neighbouring"] = "replace"
    assert change(tmp_path, dpdesk_home, d, rep).returncode == 0
    # count: k -> k (x1); histogram L1 k -> 2k (x2); sum kM = 100 -> k max(U-L, M) or k(U-L): not lower
    eff = effective(Ledger.for_dataset(dpdesk_home, _sha(d)).verify())
    (costs,) = [e.costs for e in eff]
    assert [round(c.epsilon, 9) for c in costs] == [0.1, 0.4, 0.1]
    # and back to add_remove: the histogram stays at 0.4 (never lowered)
    assert change(tmp_path, dpdesk_home, d, p).returncode == 0
    (costs,) = [e.costs for e in effective(Ledger.for_dataset(dpdesk_home, _sha(d)).verify())]
    assert [round(c.epsilon, 9) for c in costs] == [0.1, 0.4, 0.1]


@pytest.mark.slow
def test_replace_to_add_remove_raises_what_replace_understated(dpdesk_home: Path, tmp_path: Path) -> None:
    """Under replace with nothing that can drop, a sum over [99, 100] has sensitivity U - L = 1; under add_remove M = 100."""
    d = data(tmp_path)
    p = plan(neighbouring="replace")
    p["columns"]["x"].update({"bounds": [99, 100], "missing": {"impute": 99.5}})
    p["queries"] = [{"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.01}]
    release(parse_plan(p), d, dpdesk_home)
    ar = copy.deepcopy(p)
    ar["privacy_unit"]["neighbouring"] = "add_remove"
    assert change(tmp_path, dpdesk_home, d, ar).returncode == 0
    assert spent(dpdesk_home, d, ar) == Decimal("1")  # 0.01 x 100


@pytest.mark.slow
def test_an_id_column_that_enforced_k_is_not_rescaled(dpdesk_home: Path, tmp_path: Path) -> None:
    d = data(tmp_path, with_id=True)
    release(parse_plan(plan(id_column="pid")), d, dpdesk_home)
    assert change(tmp_path, dpdesk_home, d, plan(id_column="pid", max_rows_per_person=4)).returncode == 0
    assert spent(dpdesk_home, d, plan(id_column="pid", max_rows_per_person=4)) == Decimal("0.3")
    assert change(tmp_path, dpdesk_home, d, plan(max_rows_per_person=4)).returncode == 0
    assert spent(dpdesk_home, d, plan(max_rows_per_person=4)) == Decimal("0.3")


@pytest.mark.slow
def test_a_gaussian_is_re_solved_at_its_delta(dpdesk_home: Path, tmp_path: Path) -> None:
    d = data(tmp_path)
    p = plan()
    p["queries"] = [
        {
            "name": "h",
            "statistic": "histogram",
            "column": "g",
            "mechanism": "gaussian",
            "calibration": "analytic",
            "epsilon": 0.5,
            "delta": 1e-7,
        }
    ]
    release(parse_plan(p), d, dpdesk_home)
    entries = Ledger.for_dataset(dpdesk_home, _sha(d)).verify()
    comp = next(e for e in entries if e.type == "spend").fields["trace"][0]["components"][0]
    assert change(tmp_path, dpdesk_home, d, plan(max_rows_per_person=3)).returncode == 0
    (eff,) = effective(Ledger.for_dataset(dpdesk_home, _sha(d)).verify())
    expected = gaussian_epsilon(comp["scale"], 3 * comp["sensitivity_used"], 1e-7 * (1 - 1e-9))
    assert eff.costs[0].epsilon == pytest.approx(expected, rel=1e-9)
    from dpdesk.core.dp.mechanisms import gaussian_delta

    assert expected > 2 * 0.5  # three times the sensitivity at the same sigma and delta
    assert gaussian_delta(comp["scale"], 3 * comp["sensitivity_used"], expected) <= 1e-7
    assert eff.costs[0].rho == pytest.approx(9 * comp["rho"], rel=1e-9)
    assert eff.costs[0].delta == 1e-7


@pytest.mark.slow
def test_a_carried_release_without_trace_cannot_go_back_to_add_remove(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    d = data(tmp_path)
    rp = plan(neighbouring="replace")
    release(parse_plan(rp), d, dpdesk_home)
    lg = Ledger.for_dataset(dpdesk_home, _sha(d))
    assert lg.path is not None
    lines = lg.path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["reason"] = "edited"
    lg.path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    # carried: with plan and trace (issue 13: the edited settings entry's cost and the settings are stated)
    carried_entry = lg.acknowledge(
        "restored", costs=[parse_stated_cost("1=0")], settings=parse_plan(rp).settings()
    )
    carried_entry = carried_entry.to_dict()  # rewritten as an older version wrote it
    for c in carried_entry["carried"]:
        c["plan"] = c["trace"] = None  # as an older version carried them
    carried_entry.pop("hash")
    carried_entry["hash"] = entry_hash(carried_entry)
    lg.path.write_text(json.dumps(carried_entry) + "\n", encoding="utf-8")
    # as a home of that older version: no register of heads yet (it is made at the next opening)
    shutil.rmtree(dpdesk_home / "ledgers" / "heads")
    (dpdesk_home / "ledgers" / "anchored").unlink()
    r = change(tmp_path, dpdesk_home, d, plan())
    assert r.returncode == 2 and "cannot be accepted" in r.stderr
    assert [e.type for e in lg.verify()] == ["acknowledge"]


@pytest.mark.slow
def test_an_old_simulate_run_on_the_data_is_charged(dpdesk_home: Path, tmp_path: Path) -> None:
    d = data(tmp_path)
    p = parse_plan(plan())
    release(p, d, dpdesk_home)
    lg = Ledger.for_dataset(dpdesk_home, _sha(d))
    assert lg.path is not None
    with lg.transaction() as tx:  # what `simulate --data` wrote before this issue
        tx.append("simulate", {"plan_hash": p.plan_hash(), "runs": 4, "charged": None})
        tx.append("simulate", {"plan_hash": "0" * 64, "runs": 1, "charged": None})
    rep = budget_report(p, lg.verify())
    # the recorded plan: 4 runs x 0.3; the unknown plan takes the whole budget
    seq = rep.methods["sequential"]
    assert seq is not None and seq.spent.epsilon == pytest.approx(0.3 + 1.2 + 3.0)
    assert not rep.fits
    r = cli(
        "release",
        str(_write(tmp_path, plan())),
        "--data",
        str(d),
        "--out",
        str(tmp_path / "o"),
        home=dpdesk_home,
    )
    assert r.returncode == 1
    corr = [e for e in lg.verify() if e.type == "correction"]
    assert len(corr) == 1 and len(corr[0].releases) == 2  # recorded before the refusal
    r = cli("ledger", "--data", str(d), home=dpdesk_home)
    assert "correction  epsilon +4.2" in r.stdout


def _write(tmp_path: Path, p: dict[str, Any]) -> Path:
    f = tmp_path / "p.json"
    f.write_text(json.dumps(p), encoding="utf-8")
    return f


def test_effective_costs_are_read_from_entries_alone() -> None:
    """A hand-made ledger: a release at k=1 and a settings entry at k=2 cost twice the release (Laplace)."""
    p = parse_plan(plan())
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.ledger.budget import design_to_dict

    designs = design_plan(p)
    spend = {
        "seq": 2,
        "type": "spend",
        "release_id": "r1",
        "plan": p.to_dict(),
        "plan_hash": p.plan_hash(),
        "costs": [acc.QueryCost(x.spec.name, x.epsilon, x.delta, x.rho).to_dict() for x in designs],
        "trace": [design_to_dict(x) for x in designs],
        "delta_prime": None,
        "prev": GENESIS,
    }
    s1 = {"seq": 1, "type": "settings", "settings": p.settings()}
    s3 = {"seq": 3, "type": "settings", "settings": parse_plan(plan(max_rows_per_person=2)).settings()}
    (eff,) = effective([salvaged(e) for e in (s1, spend, s3)])
    assert [c.epsilon for c in eff.costs] == [0.2, 0.4]
    s4 = {"seq": 4, "type": "settings", "settings": p.settings()}  # k back to 1, no correction recorded yet
    (eff,) = effective([salvaged(e) for e in (s1, spend, s3, s4)])
    assert [c.epsilon for c in eff.costs] == [0.2, 0.4]
    (eff,) = effective([salvaged(e) for e in (s1, spend)])
    assert [c.epsilon for c in eff.costs] == [0.1, 0.2]


def test_a_replace_sum_booked_by_the_old_code_is_corrected(dpdesk_home: Path, tmp_path: Path) -> None:
    """Issue 11, item 2: a sum over [99, 100] under replace with rows that can drop was booked with U - L = 1;
    today's code says max(U - L, M) = 100, so that release costs 100 times its booking."""
    d = data(tmp_path)
    p = plan(neighbouring="replace")
    p["columns"]["x"].update({"bounds": [99, 100], "missing": "drop"})
    p["queries"] = [{"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.01}]
    release(parse_plan(p), d, dpdesk_home)
    entries = Ledger.for_dataset(dpdesk_home, _sha(d)).verify()
    spend = next(e for e in entries if e.type == "spend")
    comp = spend.fields["trace"][0]["components"][0]
    assert comp["sensitivity_used"] == 100.0
    (eff,) = effective(entries)
    assert eff.costs[0].epsilon == pytest.approx(0.01)
    comp["sensitivity_used"] = comp["sensitivity_l1"] = 1.0  # what the code before this issue booked
    (eff,) = effective(entries)
    assert eff.costs[0].epsilon == pytest.approx(1.0)


def test_huge_costs_keep_every_total_finite() -> None:
    """A correction can make one query cost more than e^epsilon can hold (1e6 simulated runs of a plan):
    every accounting total stays a finite number (ledgers and reports are JSON), and beyond any budget."""
    costs = [acc.QueryCost("q", 1e5, 0.0, 5e9)]
    for method in ("sequential", "advanced", "zcdp"):
        t = acc.dataset_total(method, [acc.Release(tuple(costs), 1e-7)], 1e-6)
        assert math.isfinite(t.epsilon) and t.epsilon >= 1e5, method
        json.dumps(t.to_dict(), allow_nan=False)


def test_an_analytic_gaussian_booked_by_the_old_code_is_corrected(dpdesk_home: Path, tmp_path: Path) -> None:
    """Issue 11, item 3: at (epsilon 1, delta 1e-20) the old Phi = (1 + erf)/2 gave sigma 7.9516 for sensitivity 1,
    about 10% below the exact 8.83823; a release drawn with it costs more than epsilon 1 at its delta."""
    d = data(tmp_path)
    p = plan()
    p["budget"] = {"epsilon": 10.0, "delta": 1e-6}
    p["queries"] = [
        {
            "name": "n",
            "statistic": "count",
            "mechanism": "gaussian",
            "calibration": "analytic",
            "epsilon": 1.0,
            "delta": 1e-20,
        }
    ]
    release(parse_plan(p), d, dpdesk_home)
    entries = Ledger.for_dataset(dpdesk_home, _sha(d)).verify()
    (eff,) = effective(entries)
    assert eff.costs[0].epsilon == 1.0  # drawn by today's calibration: nothing to correct
    comp = next(e for e in entries if e.type == "spend").fields["trace"][0]["components"][0]
    assert comp["scale"] > 8.838
    comp["scale"] = 7.9516  # the old code's sigma
    (eff,) = effective(entries)
    assert eff.costs[0].epsilon > 1.05 and eff.costs[0].delta == 1e-20
    assert eff.costs[0].epsilon == pytest.approx(gaussian_epsilon(7.9516, 1.0, 1e-20 * (1 - 1e-9)), rel=1e-9)


def corrected(method: str, home: Path, tmp_path: Path) -> tuple[Path, float]:
    """A dataset under ``method`` with two releases, then k 1 -> 5: the data file and how much the accounted
    total rose (what was left before the change less what is left after it). Checks that the change-settings
    message and the ledger's listing state that rise."""
    d = data(tmp_path)
    p = plan()
    p["budget"] = {"epsilon": 500.0, "delta": 1e-6}
    p["accounting"] = {"method": method} | ({"delta_prime": 1e-7} if method == "advanced" else {})
    p["queries"] = [
        {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.8},
        {"name": "hist", "statistic": "histogram", "column": "g", "mechanism": "laplace", "epsilon": 1.2},
    ]
    release(parse_plan(p), d, home)

    def total(q: dict[str, Any]) -> float:
        rep = budget_report(parse_plan(q), Ledger.for_dataset(home, _sha(d)).verify())
        return rep.budget.epsilon - rep.remaining_before.epsilon

    before = total(p)
    k5 = copy.deepcopy(p)
    k5["privacy_unit"]["max_rows_per_person"] = 5
    r = change(tmp_path, home, d, k5)
    assert r.returncode == 0, r.stderr
    rise = total(k5) - before
    added = sum(5 * q["epsilon"] - q["epsilon"] for q in p["queries"])  # the queries' epsilons: 8
    assert rise > 0 and (method == "sequential") == (rise == pytest.approx(added))
    said = re.search(r"cost epsilon (\S+) more in total", r.stdout)
    assert said is not None, r.stdout
    assert float(said.group(1)) == pytest.approx(rise, rel=1e-5)
    listed = re.search(r"correction  epsilon \+(\S+) for", cli("ledger", "--data", str(d), home=home).stdout)
    assert listed is not None and float(listed.group(1)) == pytest.approx(rise, rel=1e-5)
    return d, rise


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sequential", "advanced", "zcdp"])
def test_a_correction_states_the_change_of_the_total_under_the_dataset_s_method(
    method: str, dpdesk_home: Path, tmp_path: Path
) -> None:
    """Issue 34, item 4: under advanced composition the change-settings message said "+9.36" (the queries'
    epsilons added) while the total rose by about 49.6. The message, the ledger's listing and the officer's
    statement (PDF) state the change of the accounted total; the app's ledger table: tests/gui/test_ledger_text.py."""
    d, rise = corrected(method, dpdesk_home, tmp_path)
    pdf = tmp_path / "statement.pdf"
    r = cli("ledger", "statement", "--data", str(d), "--out", str(pdf), home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    from pypdf import PdfReader

    text = " ".join((page.extract_text() or "") for page in PdfReader(str(pdf)).pages)
    stated = re.search(r"ε \+(\S+)", text)
    assert stated is not None and float(stated.group(1)) == pytest.approx(rise, rel=1e-3), text


def test_costs_of_different_lengths_are_raised_without_lowering_any_total() -> None:
    """A correction whose list of costs does not match the release's query by query (an older version's, or a
    forged one) was taken whole when its epsilon was larger: a larger epsilon with no delta lowered the release's
    delta (and rho). Every total of the result is at least each side's."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from dpdesk.core.ledger.recost import _raise

    cost = st.builds(
        lambda e, d, r: acc.QueryCost("q", e, d, r),
        st.floats(0, 10),
        st.floats(0, 1e-3),
        st.floats(0, 5),
    )

    @settings(max_examples=300, deadline=None)
    @given(st.lists(cost, min_size=1, max_size=5), st.lists(cost, min_size=1, max_size=5))
    def check(a: list[acc.QueryCost], b: list[acc.QueryCost]) -> None:
        out = _raise(tuple(a), tuple(b))
        for side in (a, b):
            for field in ("epsilon", "delta", "rho"):
                total = math.fsum(getattr(c, field) for c in out)
                want = math.fsum(getattr(c, field) for c in side)
                assert total >= want * (1 - 1e-12), (field, out, side)

    check()
    # the case: a longer forged list of larger epsilon and no delta keeps the release's delta
    release = (acc.QueryCost("g", 0.5, 1e-6, 0.1),)
    forged = (acc.QueryCost("x", 0.4, 0.0, 0.0), acc.QueryCost("y", 0.4, 0.0, 0.0))
    out = _raise(release, forged)
    assert math.fsum(c.delta for c in out) >= 1e-6 and math.fsum(c.epsilon for c in out) >= 0.8
