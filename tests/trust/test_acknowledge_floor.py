"""Issue 13, item 2 (audit gap 2): the acknowledgement never offers less than was spent.

An unverified spend whose costs, charge, totals and plan were all edited to 0, with no exported copy, was
offered 0 and the suggested command read ``--cost 2=0.0``. The entry still records its trace (each
mechanism's cost, noise scale and sensitivity), which bounds its cost from below: dpdesk offers it. When
nothing the entry holds gives more than 0, its cost cannot be recovered: dpdesk offers nothing, says so and
suggests the dataset's whole budget as the conservative value to state.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.carryover import CostsNeeded, assess
from tests.core.test_recost import _sha as sha
from tests.core.test_recost import cli, plan
from tests.trust.test_acknowledge import _edit, _first_spend, _lines, _need, _released, _spent


def _zeroed(e: dict[str, Any]) -> None:
    """Every cost a spend records as a number, and its plan, edited to 0 (the audit's hand trial)."""
    for c in e["costs"]:
        c["epsilon"] = c["rho"] = 0.0
    for t in (e["charged"], e["spent_after"], *[t for t in e["totals"].values() if t]):
        for k in ("epsilon", "delta", "rho", "epsilon_simple"):
            if k in t:
                t[k] = 0.0
        if "epsilon_exact" in t:
            t["epsilon_exact"] = "0"
    for q in e["plan"]["queries"]:
        q["epsilon"] = 0.0


def _no_trace(e: dict[str, Any]) -> None:
    """The trace's costs and noise edited away too."""
    for q in e["trace"]:
        q["epsilon"] = q["rho"] = 0.0
        for c in q["components"]:
            c["epsilon"] = c["rho"] = 0.0
            c["scale"] = "edited"


def test_a_spend_with_its_costs_and_plan_edited_is_offered_its_trace(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Main offered 0 for it (``--cost 2=0.0``); the trace still says 0.3 (0.1 + 0.2 from b = 1/0.1, 1/0.2)."""
    d, lg, before = _released(dpdesk_home, tmp_path)
    seq = _first_spend(lg)
    _edit(lg, seq, _zeroed)
    need = _need(lg.acknowledge, "checked")
    (u,) = [u for u in need.missing if u.label == str(seq)]
    best = u.offered()
    assert best is not None and best.epsilon == pytest.approx(0.3) and best.rho == pytest.approx(0.025)
    assert {o.source for o in u.offers} >= {"trace"}
    # the noise alone (the recorded costs in the trace edited to 0, the scales kept) gives the same floor
    _edit(lg, seq, lambda e: [c.update(epsilon=0.0, rho=0.0) for q in e["trace"] for c in q["components"]])
    _edit(lg, seq, lambda e: [q.update(epsilon=0.0, rho=0.0) for q in e["trace"]])
    (u,) = [u for u in _need(lg.acknowledge, "checked").missing if u.label == str(seq)]
    best = u.offered()
    assert best is not None and best.epsilon == pytest.approx(0.3) and best.rho == pytest.approx(0.025)
    # the command line suggests it, and accepting it never reads less spent
    pf = tmp_path / "plan.json"
    pf.write_text(json.dumps(plan()), encoding="utf-8")
    r = cli("ledger", "acknowledge", "--data", str(d), "--reason", "x", home=dpdesk_home)
    assert r.returncode == 3 and "recomputed from its trace" in r.stderr, r.stderr
    suggested = r.stderr.rsplit('--reason "..." ', 1)[1].split()
    assert f"{seq}=0.0" not in " ".join(suggested)
    args = [a if a != "PLAN" else str(pf) for a in suggested]
    r = cli("ledger", "acknowledge", "--data", str(d), "--reason", "x", *args, home=dpdesk_home)
    assert r.returncode == 0, r.stderr
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) >= before


def test_a_spend_with_nothing_left_to_go_by_is_never_offered_zero(dpdesk_home: Path, tmp_path: Path) -> None:
    """Costs, plan and trace all edited: no source gives more than 0, so none is offered; the officer is told the
    cost cannot be recovered and the whole budget (epsilon 3) is suggested."""
    d, lg, before = _released(dpdesk_home, tmp_path)
    seq = _first_spend(lg)
    _edit(lg, seq, _zeroed)
    _edit(lg, seq, _no_trace)
    need = _need(lg.acknowledge, "checked")
    (u,) = [u for u in need.missing if u.label == str(seq)]
    assert u.offers and all(o.cost.epsilon == 0 for o in u.offers) and u.offered() is None
    # a settings entry edited the same way still costs nothing: 0 is offered for it
    assert lg.dataset is not None
    raw = b"".join(x.encode() + b"\n" for x in _lines(lg))
    settings = assess(raw.replace(b'"fixed at', b'"fixes at', 1), lg.dataset, "x")
    (s,) = [u for u in settings.unconfirmed if u.claimed == "settings"]
    assert not s.may_charge and s.offered() is not None
    pf = tmp_path / "plan.json"
    pf.write_text(json.dumps(plan()), encoding="utf-8")
    r = cli(
        "ledger", "acknowledge", "--data", str(d), "--reason", "x", "--settings", str(pf), home=dpdesk_home
    )
    assert r.returncode == 3 and "its cost cannot be recovered" in r.stderr, r.stderr
    assert "whole budget: epsilon 3," in r.stderr
    suggested = r.stderr.rsplit('--reason "..." ', 1)[1].split()
    assert f"{seq}=3.0," in " ".join(suggested), suggested
    r = cli(
        "ledger",
        "acknowledge",
        "--data",
        str(d),
        "--reason",
        "x",
        "--settings",
        str(pf),
        *suggested,
        home=dpdesk_home,
    )
    assert r.returncode == 0, r.stderr
    # the other spend (0.3) and the whole budget (3) stated for the lost one: never less than was spent
    assert _spent(Ledger.for_dataset(dpdesk_home, sha(d))) == before - Decimal("0.3") + 3


def test_costs_needed_names_the_whole_budget_once_the_settings_are_known(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    _d, lg, _before = _released(dpdesk_home, tmp_path)
    _edit(lg, _first_spend(lg), _zeroed)
    _edit(lg, _first_spend(lg), _no_trace)
    need = _need(lg.acknowledge, "checked")
    assert isinstance(need, CostsNeeded) and need.settings_needed and need.conservative is None
    from tests.trust.test_acknowledge import plan_settings

    need = _need(lg.acknowledge, "checked", settings=plan_settings())
    assert (
        need.conservative is not None and need.conservative.epsilon == 3.0 and need.conservative.delta == 1e-6
    )
