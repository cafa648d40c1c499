"""The adaptive synthesiser as a query (``"mechanism": "aim"`` on the synthetic statistic, issue 33): the plan,
its design and cost, the release through the release's noise adapters, the ledger's record of every round, the
table regenerated from it, and re-costing that counts every recorded round."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.cli import main as cli_main
from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import accounting as acc
from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp.queries import design_plan, design_query
from dpdesk.core.dp.statistics import synthetic as stat
from dpdesk.core.dp.synthetic import aim
from dpdesk.core.ledger.budget import budget_report, design_to_dict
from dpdesk.core.ledger.entries import GENESIS, salvaged
from dpdesk.core.ledger.recost import effective, pending_corrections
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.publish.synthetic_report_aim import marginal_rows, pair_estimate, unmeasured_pairs
from tests.conftest import SAMPLES

DATA = SAMPLES / "census_sample.csv"
COLUMNS = {
    "wage": {"type": "float", "bounds": [0, 5000]},
    "education": {"type": "int", "bounds": [0, 18]},
    "region": {"type": "category", "categories": ["northeast", "midwest", "south", "west"]},
    "sex": {"type": "category", "categories": ["female", "male"]},
}
QUERY = {
    "name": "people table",
    "statistic": "synthetic",
    "mechanism": "aim",
    "columns": ["wage", "education", "region", "sex"],
    "epsilon": 1.0,
    "delta": 1e-7,
    "bins": {"wage": [0, 500, 1000, 2000, 5000]},
}


def plan_dict(
    query: dict[str, Any] | None = None, method: str = "sequential", unit: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "version": 1,
        "title": "adaptive",
        "budget": {"epsilon": 3.0, "delta": 1e-6},
        "privacy_unit": unit or {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "accounting": {"method": method},
        "columns": COLUMNS,
        "queries": [query if query is not None else QUERY],
    }


# ----------------------------------------------------------------------------- the plan


def test_the_plan_takes_aim_and_round_trips_with_mst_still_the_default() -> None:
    plan = parse_plan(plan_dict())
    (q,) = plan.queries
    assert isinstance(q, stat.SyntheticQuery) and q.mechanism == "aim" and q.delta == 1e-7
    again = parse_plan(plan.to_dict())
    assert again.to_dict() == plan.to_dict() and again.plan_hash() == plan.plan_hash()
    mst = parse_plan(plan_dict({k: v for k, v in QUERY.items() if k != "mechanism"}))
    assert mst.queries[0].mechanism == "mst"


@pytest.mark.parametrize("delta", [None, 0, 0.0])
def test_delta_zero_is_refused_with_a_message_naming_the_fix(delta: float | None) -> None:
    q = {k: v for k, v in QUERY.items() if k != "delta"}
    if delta is not None:
        q["delta"] = delta
    with pytest.raises(PlanError) as err:
        parse_plan(plan_dict(q))
    assert err.value.key == "queries[0].delta"
    text = err.value.message
    assert "aim" in text and "delta above 0" in text and "zCDP" in text
    hint = err.value.hint or ""
    assert '"delta": 1e-6' in hint and '"mechanism": "mst"' in hint


def test_the_messages_are_translated() -> None:
    from dpdesk.i18n import translation

    zh = translation("zh_CN").gettext
    for msg in (
        (
            "the adaptive synthesiser (mechanism aim) needs a delta above 0: its rounds are measured with "
            "Gaussian noise under zCDP"
        ),
        'write a delta such as "delta": 1e-6, or use "mechanism": "mst" for a synthetic table with delta 0',
        "adaptive synthesiser (AIM: marginals chosen round by round)",
    ):
        assert zh(msg) != msg


# ----------------------------------------------------------------------------- the cost


@pytest.mark.parametrize(("rel", "k"), [("add_remove", 1), ("replace", 1), ("replace", 3)])
def test_the_design_books_the_conversion_of_rho_and_shows_each_part(rel: str, k: int) -> None:
    plan = parse_plan(plan_dict(unit={"neighbouring": rel, "max_rows_per_person": k}))
    design = design_query(plan.queries[0], plan)
    one, sel, measure = design.components
    assert (one.mechanism, sel.mechanism, measure.mechanism) == ("gaussian", "exponential", "gaussian")
    rho = acc.rho_budget(1.0, 1e-7)
    assert rho * (1 - 1e-8) <= design.rho <= rho
    assert design.epsilon == 1.0 and design.delta == 1e-7
    # the parts: d one-way marginals at the starting sigma, then 9 : 1 between measurement and selection
    replace = rel == "replace"
    l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))
    budget = aim.Budget(design.rho, l1, l2, 4)
    assert one.scale == pytest.approx(budget.sigma(), rel=1e-9)
    assert one.rho == pytest.approx(4 * l2 * l2 / (2 * one.scale**2), rel=1e-12)
    assert measure.rho == pytest.approx(9 * sel.rho, rel=1e-12)
    assert sel.epsilon == pytest.approx(budget.select_epsilon(), rel=1e-9)
    weights = max(c.weight for c in aim.workload((4, 4, 4, 2)))
    assert sel.l1 == weights * l1  # the score's sensitivity: the largest weight times a marginal's L1
    # each part's own formula: sigma, rho per measurement, eps_t^2 / 8 per selection, T = 16 d, annealing
    assert "T = 16 d = 64 planned rounds" in one.formula
    assert "rho = L2^2 / (2 sigma^2)" in measure.formula and "halved" in measure.formula
    assert "eps_t^2 / 8" in sel.derivation and "max w_r x L1" in sel.derivation
    assert any("Canonne, Kamath & Steinke" in n and "every round" in n for n in design.notes)
    z = budget_report(parse_plan(plan_dict(method="zcdp")), []).methods["zcdp"]
    assert z is not None and z.plan.rho == pytest.approx(design.rho, rel=1e-12)


# ----------------------------------------------------------------------------- the release


def _codes(n: int, sizes: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in sizes], axis=1)
    codes[:, 3] = (codes[:, 2] + rng.integers(0, 2, n)) % sizes[3]  # a dependence to find
    return codes


@pytest.mark.parametrize("rel", ["add_remove", "replace"])
def test_every_round_goes_through_the_release_adapters_with_its_own_component(rel: str) -> None:
    """The statistic hands each measurement to the release's noise function with a Gaussian component of that
    round's sigma and one marginal's L2, and each selection to its pick function with that round's epsilon and the
    score's sensitivity; what they return is what the ledger keeps."""
    plan = parse_plan(plan_dict(unit={"neighbouring": rel, "max_rows_per_person": 2}))
    design = design_query(plan.queries[0], plan)
    sizes = tuple(a.size for a in stat.attributes(plan.queries[0], plan.columns))  # type: ignore[arg-type]
    codes = _codes(800, sizes, 1)
    exact = stat.SyntheticExact([], None, None, None, codes.copy())
    noised: list[Any] = []
    picked: list[Any] = []

    def noise(values: list[int], comp: Any) -> list[int]:
        noised.append(comp)
        return [v + 7 for v in values]

    def pick(scores: list[float], comp: Any) -> int:
        picked.append(comp)
        return int(np.argmax(scores))

    (row,) = stat.STATISTIC.release_rows(design, exact, plan, noise, pick)
    rec = stat.STATISTIC.ledger_fields(exact)
    assert rec is not None and rec["method"] == "aim" and exact.codes is None  # the secret table is let go
    rounds = rec["rounds"]
    starts = [r for r in rounds if r["select_epsilon"] == 0]
    # 800 rows on this budget: the one-way marginals are measured twice (aim.second_one_way_sigma), both through
    # the adapters and both in the ledger's rounds
    assert [r["clique"] for r in starts] == [[0], [1], [2], [3]] * 2
    assert len(noised) == len(rounds) and len(picked) == len(rounds) - len(starts)
    l2 = math.sqrt(2.0) * 2 if rel == "replace" else 2.0
    for comp, r in zip(noised, rounds, strict=True):
        assert comp.mechanism == "gaussian" and comp.scale == r["sigma"] and comp.l2 == l2
        real = aim.exact_marginal(codes, sizes, tuple(r["clique"])).ravel()
        assert r["noisy"] == [int(v) + 7 for v in real]
    selections = [r for r in rounds if r["select_epsilon"] > 0]
    for comp, r in zip(picked, selections, strict=True):
        assert comp.mechanism == "exponential" and comp.epsilon == r["select_epsilon"]
        assert comp.l1 == design.components[1].l1
    assert aim.rounds_rho(rec, *((2 * 2.0, l2) if rel == "replace" else (2.0, l2))) == pytest.approx(
        design.rho, rel=1e-9
    )
    assert row.query == "people table" and row.value == str(rec["rows"])


def _spend(home: Path) -> dict[str, Any]:
    (ledger,) = (home / "ledgers").glob("*.jsonl")
    entries = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()]
    return next(e for e in entries if e["type"] == "spend")


def test_release_keeps_every_round_and_the_table_regenerates_from_the_ledger(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    """Through the CLI: the spend entry keeps every round, the seed, the domain and the fit's version; the package's
    table is what the record gives (regenerated twice: bit-identical on this machine); review finds it intact, and
    finds an edited table."""
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan_dict()), encoding="utf-8")
    out = tmp_path / "out"
    assert cli_main(["release", str(p), "--data", str(DATA), "--out", str(out)]) == 0
    fields = _spend(dpdesk_home)["synthetic"]["people table"]
    assert set(fields) == {"method", "sizes", "budget", "rounds", "file", "rows", "seed", "fit", "domain"}
    assert fields["fit"] == aim.FIT_VERSION and [len(r["clique"]) for r in fields["rounds"][:4]] == [1] * 4
    assert all(set(r) == {"clique", "noisy", "sigma", "select_epsilon"} for r in fields["rounds"])
    assert aim.rounds_rho(fields, 1.0, 1.0) <= acc.rho_budget(1.0, 1e-7)
    plan = parse_plan(plan_dict())
    spec = plan.queries[0]
    assert isinstance(spec, stat.SyntheticQuery)
    first = stat.regenerate_columns(fields, spec, plan).csv()
    assert first == stat.regenerate_columns(fields, spec, plan).csv() == (out / fields["file"]).read_bytes()
    attrs, table = stat.regenerate(fields, spec, plan)
    assert stat.table_csv(attrs, table) == first and len(table) == fields["rows"]
    assert cli_main(["review", str(out)]) == 0
    ex = tmp_path / "ex"
    assert cli_main(["ledger", "export-release", "2", "--data", str(DATA), "--out", str(ex)]) == 0
    assert (ex / fields["file"]).read_bytes() == first
    # the app's Results tab: the same table from the ledger, and the released one-way counts beside its own
    from dpdesk.services.synthetic import synthetic_tables

    (shown,) = synthetic_tables(salvaged(_spend(dpdesk_home)))  # type: ignore[arg-type]
    assert shown.csv == first and shown.rows == fields["rows"]
    # each column's released one-way counts: its measurements' inverse-variance mean, rounded (one measurement: as
    # released); this table's one-way marginals were measured twice
    want = []
    for j in range(4):
        mine = [r for r in fields["rounds"] if r["clique"] == [j]]
        w = np.array([1.0 / r["sigma"] ** 2 for r in mine])
        mean = w @ np.array([r["noisy"] for r in mine], dtype=float) / w.sum()
        want.append([int(v) for v in np.rint(mean)] if len(mine) > 1 else mine[0]["noisy"])
    assert len([r for r in fields["rounds"] if r["select_epsilon"] == 0]) == 8
    assert [list(m.released) for m in shown.marginals] == want
    assert all(sum(m.synthetic) == fields["rows"] for m in shown.marginals)
    # the report: every measured marginal beside the table's own, the unmeasured pairs as estimates, the warning
    from tests.services.test_report_claims import pdf_text

    text = " ".join(pdf_text(out / "report.pdf").split())
    assert "Each measured marginal: the released noisy counts beside the synthetic table's own" in text
    assert "Caution: the synthetic rows are made up" in text and "cannot show small groups" in text
    assert ("These figures are estimates, not measurements" in text) == bool(unmeasured_pairs(fields))
    assert "The one-way marginals were measured twice" in text  # as the rounds above record
    path = out / fields["file"]
    path.write_bytes(path.read_bytes().replace(b"female", b"male", 1))
    assert cli_main(["review", str(out)]) != 0


# ----------------------------------------------------------------------------- re-costing


def _ledger(
    rounds_edit: Any = None,
    new_unit: dict[str, Any] | None = None,
    rows: int = 1000,
    unit: dict[str, Any] | None = None,
) -> list[Any]:
    """A release of the plan (under ``unit``, default add/remove, k = 1) as the ledger holds it, its rounds drawn by
    the real rounds with stand-in noise (the cost does not depend on the values), optionally edited; then a
    settings entry (with ``new_unit``)."""
    p = plan_dict(unit=unit)
    parsed = parse_plan(p)
    (design,) = design_plan(parsed)
    sizes = (4, 4, 4, 2)
    u = parsed.privacy_unit
    budget = stat.aim_budget(1.0, 1e-7, 4, u.neighbouring == "replace", u.max_rows_per_person)
    rng = np.random.default_rng(3)
    released, _model = aim.adaptive_measure(
        _codes(rows, sizes, 2),
        sizes,
        budget,
        noise=lambda v, _l2, s: [int(x + round(rng.normal(0, s))) for x in v],
        pick=lambda scores, _s, _e: int(np.argmax(scores)),
        iterations=10,
    )
    rec = aim.released_to_dict(released)
    if rounds_edit is not None:
        rounds_edit(rec["rounds"])
    spend = {
        "seq": 2,
        "type": "spend",
        "release_id": "r1",
        "plan": parsed.to_dict(),
        "plan_hash": parsed.plan_hash(),
        "costs": [acc.QueryCost(design.spec.name, design.epsilon, design.delta, design.rho).to_dict()],
        "trace": [design_to_dict(design)],
        "delta_prime": None,
        "synthetic": {"people table": {**rec, "file": "people_table.csv", "rows": 10, "seed": "1"}},
        "prev": GENESIS,
    }
    s1 = {"seq": 1, "type": "settings", "settings": parsed.settings()}
    out = [s1, spend]
    if new_unit is not None:
        changed = copy.deepcopy(p)
        changed["privacy_unit"] = new_unit
        out.append({"seq": 3, "type": "settings", "settings": parse_plan(changed).settings()})
    return [salvaged(e) for e in out]


def test_an_honest_release_needs_no_correction() -> None:
    entries = _ledger()
    assert pending_corrections(entries) == []
    (eff,) = effective(entries)
    assert eff.costs == eff.recorded


def _one_more(rounds: list[dict[str, Any]]) -> None:
    rounds.append(dict(rounds[-1]))


def _sharper(rounds: list[dict[str, Any]]) -> None:
    rounds[-1]["sigma"] = rounds[-1]["sigma"] / 2.0


@pytest.mark.parametrize("edit", [_one_more, _sharper])
def test_recorded_rounds_that_cost_more_than_booked_are_flagged(edit: Any) -> None:
    """Every recorded round counts: one round more, or one with less noise, than the booking paid for is a
    mis-costed release, and the pending correction charges what the rounds cost."""
    entries = _ledger(edit)
    (pending,) = pending_corrections(entries)
    assert pending["release_id"] == "r1"
    assert any("recorded rounds cost" in w for w in pending["why"])
    (cost,) = pending["costs"]
    (rec,) = entries[1].fields["synthetic"].values()
    rho = aim.rounds_rho(rec, 1.0, 1.0)
    assert rho > acc.rho_budget(1.0, 1e-7)
    assert cost["rho"] == pytest.approx(rho, rel=1e-12) and cost["epsilon"] > 1.0


@pytest.mark.parametrize("rows", [20_000, 1000])
def test_under_a_new_unit_the_rounds_and_the_design_agree(rows: int) -> None:
    """add/remove -> replace: the parts' rho x c^2 (Gaussian c^2 = 2, selection c^2 = 4) is what the recorded
    rounds cost under replace, so the rounds raise nothing beyond the re-costing. When the one-way marginals were
    measured twice (1000 rows), the selections got less than the design planned, so the rounds cost less than the
    re-costing, which stays the design's (an upper bound, by at most 0.1 x the second measurement's rho x 2)."""
    new = {"neighbouring": "replace", "max_rows_per_person": 1}
    entries = _ledger(new_unit=new, rows=rows)
    (eff,) = effective(entries)
    (cost,) = eff.costs
    (rec,) = entries[1].fields["synthetic"].values()
    twice = len([r for r in rec["rounds"] if r["select_epsilon"] == 0]) == 8
    assert twice is (rows == 1000)
    rounds = aim.rounds_rho(rec, 2.0, math.sqrt(2.0))
    if twice:
        one_way = sum(1.0 / (2.0 * r["sigma"] ** 2) for r in rec["rounds"] if r["select_epsilon"] == 0)
        (design,) = design_plan(parse_plan(plan_dict()))
        extra = one_way - design.components[0].rho
        assert rounds < cost.rho <= rounds + 0.2 * extra * (1 + 1e-9)
    else:
        assert cost.rho == pytest.approx(rounds, rel=1e-9)
    assert not any("recorded rounds" in w for w in eff.why)
    assert cost.rho > eff.recorded[0].rho


@pytest.mark.parametrize("rows", [1000, 20_000])
def test_a_carried_release_without_its_rounds_is_costed_for_a_second_one_way_measurement(rows: int) -> None:
    """A release carried into another ledger (a merge; an import or an acknowledgement carries the same) keeps its
    plan and trace, not its rounds. Made under replace (k = 1) and re-costed under add/remove with k = 2, a
    measurement's rho grows by (2 / sqrt 2)^2 = 2 and a selection's by (2 / 2)^2 = 1, so the budget a second one-way
    measurement moved from the selections to the measurements costs more than the design's split says: the
    re-costing bounds the split (one-way marginals at most aim.ONE_WAY_MAX_SHARE of rho) and is at least what the
    rounds cost, measured twice (1000 rows) or once (20,000). Under the release's own unit it costs what it booked."""
    old = {"neighbouring": "replace", "max_rows_per_person": 1}
    new = {"neighbouring": "add_remove", "max_rows_per_person": 2}
    settings, spend, changed = _ledger(unit=old, new_unit=new, rows=rows)
    (rec,) = spend.fields["synthetic"].values()
    twice = len([r for r in rec["rounds"] if r["select_epsilon"] == 0]) == 8
    assert twice is (rows == 1000)
    carried = {
        "release_id": "r1",
        "seq": 2,
        "from": "d2",
        "costs": spend.fields["costs"],
        "delta_prime": None,
        "plan": spend.fields["plan"],
        "trace": spend.fields["trace"],
        "unit": old,
    }
    merge = salvaged(
        {
            "seq": 2,
            "type": "merge",
            "merged": "d2",
            "carried": [carried],
            "settings": settings.fields["settings"],
        }
    )
    (eff,) = effective([settings, merge, changed])
    (cost,) = eff.costs
    rounds = aim.rounds_rho(rec, 2.0, 2.0)
    assert cost.rho >= rounds * (1 - 1e-12)
    assert cost.epsilon >= mech.rho_to_epsilon(rounds, cost.delta) * (1 - 1e-12)
    (held,) = effective([settings, spend, changed])  # the rounds held: they are counted as they are
    assert held.costs[0].rho == pytest.approx(max(rounds, held.costs[0].rho), rel=1e-12)
    (same,) = effective([settings, merge])
    assert same.costs == same.recorded


# ----------------------------------------------------------------------------- brute force, through the statistic


class _Stop(Exception):
    """Raised once the first adaptive round's selection has been handed its scores."""


def _first_scores(plan: Any, rows: list[tuple[float, int]], transcript: list[list[int]] | None) -> Any:
    """The scores and the selection's component the statistic's own release code (its encoding of the table: bins,
    missing values, rows left out) hands its pick function in the first adaptive round, with the one-way
    measurements returning ``transcript`` (None: their exact counts), so that the model is the same on every
    table. Returns (one-way values, scores, component)."""
    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.loading import Column, Table

    design = design_query(plan.queries[0], plan)
    x = np.asarray([r[0] for r in rows], dtype=np.float64)
    g = np.asarray([r[1] for r in rows], dtype=np.int16)
    table = Table("t", "", len(rows), {"x": Column(plan.columns["x"], x), "g": Column(plan.columns["g"], g)})
    exact = exact_statistic(design, table, np.ones(len(rows), dtype=bool), plan.columns)
    one: list[list[int]] = []
    got: dict[str, Any] = {}

    def noise(values: list[int], comp: Any) -> list[int]:
        out = list(values) if transcript is None else transcript[len(one)]
        one.append(out)
        return out

    def pick(scores: list[float], comp: Any) -> int:
        got["scores"], got["comp"] = list(scores), comp
        raise _Stop

    with pytest.raises(_Stop):
        stat.STATISTIC.release_rows(design, exact, plan, noise, pick)
    return one, got["scores"], got["comp"]


def _small_plan(rel: str, k: int) -> Any:
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-3},
            "privacy_unit": {"neighbouring": rel, "max_rows_per_person": k},
            "columns": {
                "x": {"type": "float", "bounds": [0, 10]},
                "g": {"type": "category", "categories": ["a", "b"], "missing": {"impute": "a"}},
            },
            "queries": [
                {
                    "name": "q",
                    "statistic": "synthetic",
                    "mechanism": "aim",
                    "columns": ["x", "g"],
                    "bins": {"x": [0, 5, 10]},
                    "epsilon": 5.0,
                    "delta": 1e-3,
                }
            ],
        }
    )


#: The values a row may take: x in either bin, past the bounds (clamped), or missing (its row is left out: the
#: rule is "drop"); g either category or missing (imputed as "a").
VALUES = [(x, g) for x in (1.0, 7.0, 12.0, math.nan) for g in (0, 1, -1)]


@pytest.mark.parametrize(("rel", "k"), [("add_remove", 1), ("replace", 1), ("add_remove", 2), ("replace", 2)])
def test_the_selection_score_moves_by_at_most_its_stated_sensitivity_through_the_encoding(
    rel: str, k: int
) -> None:
    """Every neighbour of small tables, one person's k rows added or removed (add/remove) or replaced by any
    others (replace), with values in and out of the bounds and missing: every score the statistic hands its pick
    function moves by at most the sensitivity it hands with them (max weight x L1; L1 = k or 2k), and the largest
    move over the neighbours reaches at least half of it (the bound is not loose by much)."""
    plan = _small_plan(rel, k)
    rng = np.random.default_rng(5)
    worst = 0.0
    du = 0.0
    for n in (2, 3):
        base = [VALUES[int(i)] for i in rng.integers(0, len(VALUES), n)]
        base[0] = (1.0, 0)  # one row is kept whatever the neighbour does
        transcript, s0, comp = _first_scores(plan, base, None)
        du = comp.l1
        assert du == max(c.weight for c in aim.workload((2, 2))) * (2 * k if rel == "replace" else k)
        neighbours: list[list[tuple[float, int]]] = []
        people = list(itertools.combinations_with_replacement(VALUES, k))
        if rel == "add_remove":
            neighbours += [base + list(p) for p in people]
            neighbours += [[r for j, r in enumerate(base) if j not in gone] for gone in _subsets(n, k)]
        else:
            for gone in _subsets(n, k):
                for p in itertools.combinations_with_replacement(VALUES, len(gone)):
                    rest = [r for j, r in enumerate(base) if j not in gone]
                    neighbours.append(rest + list(p))
        for nb in neighbours:
            if not any(r == (1.0, 0) for r in nb):
                continue  # the one-way transcript needs a kept row to fit a model to; the base keeps one
            _one, s1, _comp = _first_scores(plan, nb, transcript)
            assert len(s1) == len(s0)
            for a, b in zip(s0, s1, strict=True):
                assert abs(a - b) <= du + 1e-9
                worst = max(worst, abs(a - b))
    assert worst >= 0.5 * du


def _subsets(n: int, k: int) -> list[tuple[int, ...]]:
    """The sets of 1 to k of n rows (one person's rows)."""
    return [c for r in range(1, k + 1) for c in itertools.combinations(range(n), r)]


def test_the_fidelity_estimate_simulates_the_adaptive_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's uncharged estimate on a public file runs the query's own method (the adaptive rounds), not MST."""
    from dpdesk.core.loading import load_table
    from dpdesk.core.preview.simulate import synthetic_fidelity

    calls: list[int] = []
    real = aim.adaptive_measure

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(aim, "adaptive_measure", counted)
    plan = parse_plan(plan_dict())
    table = load_table(DATA, plan.columns)
    got = synthetic_fidelity(plan, "people table", table=table, runs=1, rng=np.random.default_rng(1))
    assert calls == [1]
    assert 0.0 <= got.two_way <= 1.0 and 0.0 <= got.one_way <= 1.0


def test_the_report_s_summary_per_marginal_and_estimate_per_unmeasured_pair() -> None:
    """Computed from released values only: a marginal measured twice is their inverse-variance mean; a table whose
    counts equal it is at distance 0; the noise floor is sqrt(2/pi) sigma cells / (2 N); a pair is unmeasured when
    no measured marginal holds both its columns, and its estimate is the floor at the last round's sigma."""
    fields = {
        "sizes": [2, 2, 3],
        "rows": 100,
        "rounds": [
            {"clique": [0], "noisy": [40, 60], "sigma": 2.0, "select_epsilon": 0.0},
            {"clique": [1], "noisy": [50, 50], "sigma": 2.0, "select_epsilon": 0.0},
            {"clique": [2], "noisy": [30, 30, 40], "sigma": 2.0, "select_epsilon": 0.0},
            {"clique": [0, 1], "noisy": [20, 20, 30, 30], "sigma": 2.0, "select_epsilon": 0.1},
            {"clique": [0, 1], "noisy": [20, 20, 30, 30], "sigma": 1.0, "select_epsilon": 0.2},
        ],
    }
    own = [[40, 60], [50, 50], [30, 30, 40], [20, 20, 30, 30]]
    rows = marginal_rows(fields, own)
    assert [r[0] for r in rows] == [(0,), (1,), (2,), (0, 1)]
    _c, cells, sigma, tvd, floor = rows[3]
    assert cells == 4 and sigma == pytest.approx(1.0 / math.sqrt(1 / 4 + 1)) and tvd == pytest.approx(0.0)
    assert floor == pytest.approx(math.sqrt(2 / math.pi) * sigma * 4 / 200)
    moved = marginal_rows(fields, [[40, 60], [50, 50], [30, 30, 40], [30, 10, 30, 30]])
    assert moved[3][3] == pytest.approx(0.1)  # 10 of 100 rows moved
    assert unmeasured_pairs(fields) == [(0, 2), (1, 2)]
    assert pair_estimate(fields, (0, 2)) == pytest.approx(math.sqrt(2 / math.pi) * 1.0 * 6 / 200)


def test_a_columns_measurements_are_combined_whatever_their_scale() -> None:
    """The Results tab's released one-way counts of a column measured twice: the inverse-variance mean, rounded, for
    any recorded sigmas (relative weights: a forged record's tiny sigmas neither overflow nor turn it into nan); a
    round whose sigma is not a positive number counts for nothing."""
    rounds = [
        {"clique": [0], "noisy": [10, 30], "sigma": 2e-160, "select_epsilon": 0.0},
        {"clique": [0], "noisy": [20, 0], "sigma": 1e-160, "select_epsilon": 0.0},
        {"clique": [0], "noisy": [999, 999], "sigma": -1.0, "select_epsilon": 0.0},
        {"clique": [1], "noisy": [5, 6, 7], "sigma": 3.0, "select_epsilon": 0.0},
    ]
    got = stat.one_way_released({"method": "aim", "sizes": [2, 3], "rounds": rounds})
    # weights 1/4 and 1: (10/4 + 20) / 1.25 = 18, (30/4 + 0) / 1.25 = 6
    assert got == [(18, 6), (5, 6, 7)]
