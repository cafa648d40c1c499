"""Releases end to end in the engine: spend before reveal, budgets, settings, output format."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.errors import BudgetExceeded, InputError, LedgerError, UsageError
from dpdesk.core.dp import values as vals
from dpdesk.core.ledger import budget as bud
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.entries import rows_from_entry
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import load_plan, parse_plan
from dpdesk.core.preview import simulate as sim
from dpdesk.core.release import datacheck as dchk
from dpdesk.core.release import steps as rel
from dpdesk.core.release.steps import SettingsMismatch, release
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def small_plan(**over: Any) -> Plan:
    data: dict[str, Any] = {
        "version": 1,
        "title": "t",
        "budget": {"epsilon": 1.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {
            "x": {"type": "float", "bounds": [0, 100]},
            "g": {"type": "category", "categories": ["a", "b", "z"]},
        },
        "queries": [
            {"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.3},
            {"name": "by g", "statistic": "histogram", "column": "g", "mechanism": "laplace", "epsilon": 0.3},
        ],
    }
    data.update(over)
    return parse_plan(data)


def write_csv(path: Path, rows: list[tuple[Any, ...]], header: str = "x,g") -> Path:
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")
    return path


def read_release(folder: Path) -> list[dict[str, str]]:
    with (folder / "release.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_release_writes_csv_in_plan_order_with_declared_categories(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a"), (2, "a"), (3, "b")])  # no row in category z
    res = release(small_plan(), data, dpdesk_home, tmp_path / "out")
    rows = read_release(tmp_path / "out")
    assert list(rows[0]) == list(vals.CSV_COLUMNS)
    assert [(r["query"], r["group"]) for r in rows] == [
        ("n", ""),
        ("by g", "a"),
        ("by g", "b"),
        ("by g", "z"),
    ]
    assert all(r["mechanism"] == "laplace" and r["epsilon"] == "0.3" and r["delta"] == "0" for r in rows)
    for r in rows:  # integers for counts, interval = value -+ exact discrete 95% half-width
        v, lo, hi = int(r["value"]), float(r["ci_low"]), float(r["ci_high"])
        assert hi - v == v - lo == 10  # b = 1/0.3: smallest t with P(|X| > t) <= 5% is 10
    assert json.loads((tmp_path / "out" / "plan.json").read_text(encoding="utf-8")) == small_plan().to_dict()
    assert [r.as_list() for r in res.rows] == [list(r.values()) for r in rows]


def test_spend_is_recorded_before_values_are_written(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])

    def crash(*_a: Any, **_k: Any) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(rel, "write_release_dir", crash)
    with pytest.raises(rel.ReleaseNotWritten, match="export-release 2"):
        release(small_plan(), data, dpdesk_home, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    entries = Ledger.for_dataset(dpdesk_home, _sha(data)).verify()
    assert [e.type for e in entries] == ["settings", "spend"]
    # the charged values survive and can be shown again at no cost
    assert len(rows_from_entry(entries[1])) == 4


def test_a_failed_ledger_write_reveals_nothing(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    real_append = rel.Ledger.transaction

    class Failing:
        def __init__(self, tx: Any) -> None:
            self.tx = tx
            self.entries = tx.entries

        def settings(self) -> Any:
            return self.tx.settings()

        @property
        def state(self) -> Any:
            return self.tx.state

        def pending_corrections(self) -> Any:
            return self.tx.pending_corrections()

        def append(self, *_a: Any, **_k: Any) -> None:
            raise LedgerError("could not record the release (disk full); nothing was revealed")

    from contextlib import contextmanager

    @contextmanager
    def failing_tx(self: Ledger) -> Any:
        with real_append(self) as tx:
            yield Failing(tx)

    monkeypatch.setattr(rel.Ledger, "transaction", failing_tx)
    with pytest.raises(LedgerError, match="nothing was revealed"):
        release(small_plan(), data, dpdesk_home, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rerunning_costs_again_and_is_refused_when_exhausted(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    release(small_plan(), data, dpdesk_home, tmp_path / "o1")  # 0.6 of 1.0
    with pytest.raises(BudgetExceeded, match=r"has epsilon 0\.4 and delta 0\.000001 left") as err:
        release(small_plan(), data, dpdesk_home, tmp_path / "o2")
    assert err.value.exit_code == 1
    assert not (tmp_path / "o2").exists()
    spends = [e for e in Ledger.for_dataset(dpdesk_home, _sha(data)).verify() if e.type == "spend"]
    assert len(spends) == 1


def test_budget_shares_that_add_up_exactly_are_accepted(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    q = [{"name": f"n{i}", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1} for i in range(10)]
    release(small_plan(queries=q), data, dpdesk_home, tmp_path / "o1")  # 10 x 0.1 = 1.0 exactly
    with pytest.raises(BudgetExceeded):
        release(small_plan(queries=q[:1]), data, dpdesk_home, tmp_path / "o2")


def test_a_resaved_copy_is_a_new_dataset(dpdesk_home: Path, tmp_path: Path) -> None:
    a = write_csv(tmp_path / "a.csv", [(1, "a")])
    b = tmp_path / "b.csv"
    b.write_bytes(a.read_bytes() + b"\n")
    release(small_plan(), a, dpdesk_home, tmp_path / "o1")
    release(small_plan(), b, dpdesk_home, tmp_path / "o2")
    release(small_plan(queries=small_plan().to_dict()["queries"][:1]), a, dpdesk_home, tmp_path / "o3")


def test_changed_budget_or_unit_or_method_is_refused(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    release(small_plan(), data, dpdesk_home, tmp_path / "o1")
    with pytest.raises(SettingsMismatch, match="total budget was fixed") as err:
        release(small_plan(budget={"epsilon": 5.0, "delta": 1e-6}), data, dpdesk_home, tmp_path / "o2")
    assert err.value.exit_code == 2
    with pytest.raises(SettingsMismatch, match="unit of privacy"):
        release(small_plan(privacy_unit={"neighbouring": "replace"}), data, dpdesk_home, tmp_path / "o2")
    with pytest.raises(SettingsMismatch, match="sequential accounting"):
        release(small_plan(accounting={"method": "zcdp"}), data, dpdesk_home, tmp_path / "o2")


def test_output_folder_must_be_new_or_empty(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        release(small_plan(), data, dpdesk_home, out)
    assert not Ledger.for_dataset(dpdesk_home, _sha(data)).exists()


def test_bad_data_charges_nothing(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")], header="y,g")
    with pytest.raises(InputError, match=r"'x' not found"):
        release(small_plan(), data, dpdesk_home, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not Ledger.for_dataset(dpdesk_home, _sha(data)).exists()


def test_a_broken_ledger_stops_releases(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    release(small_plan(queries=small_plan().to_dict()["queries"][:1]), data, dpdesk_home, tmp_path / "o1")
    lg = Ledger.for_dataset(dpdesk_home, _sha(data))
    lg.path.write_bytes(lg.path.read_bytes().replace(b'"epsilon":0.3', b'"epsilon":0.0', 1))
    with pytest.raises(LedgerError) as err:
        release(small_plan(), data, dpdesk_home, tmp_path / "o2")
    assert err.value.exit_code == 3
    assert not (tmp_path / "o2").exists()


def _zero_noise(values: list[int], comp: Any) -> list[int]:
    return list(values)


def test_mean_uses_noisy_count_and_clamps(tmp_path: Path) -> None:
    plan = small_plan(
        queries=[
            {
                "name": "m",
                "statistic": "mean",
                "column": "x",
                "group_by": "g",
                "mechanism": "laplace",
                "epsilon": 0.5,
            }
        ]
    )
    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table

    data = write_csv(tmp_path / "d.csv", [(10, "a"), (30, "a"), (250, "b"), (-5, "b"), ("", "a")])
    table = load_table(data, plan.columns)
    (d,) = design_plan(plan)
    ex = exact_statistic(d, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    rows = rel.noisy_rows(d, ex, plan, noise=_zero_noise)
    # a: (10 + 30)/2 = 20; b: clamped (100 + 0)/2 = 50; z: no rows -> mid + 0/max(1, 0) = 50
    assert [float(r.value) for r in rows] == [20.0, 50.0, 50.0]

    seen: list[list[int]] = []

    def fake(values: list[int], comp: Any) -> list[int]:
        seen.append(list(values))
        return [v + 1 for v in values] if comp.kind == "count" else list(values)

    rows = rel.noisy_rows(d, ex, plan, noise=fake)
    assert seen[0] == [2, 2, 0]  # true counts go in, never out
    assert float(rows[0].value) == pytest.approx(50 + (20 - 50) * 2 / 3)  # S / noisy n


def test_missing_policy_drop_and_impute(tmp_path: Path) -> None:
    from dpdesk.core.dp.aggregates import exact_statistic
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table

    data = write_csv(tmp_path / "d.csv", [(10, "a"), ("", "a"), ("oops", "b"), (20, "mars")])
    for missing, total in (("drop", 30.0), ({"impute": 5}, 40.0)):
        plan = small_plan(
            columns={
                "x": {"type": "float", "bounds": [0, 100], "missing": missing},
                "g": {"type": "category", "categories": ["a", "b"]},
            },
            queries=[
                {"name": "s", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.5}
            ],
        )
        table = load_table(data, plan.columns)
        (d,) = design_plan(plan)
        ex = exact_statistic(d, table, np.ones(table.n_rows, dtype=bool), plan.columns)
        assert ex.vectors[0][0] * d.components[0].unit == total
    # grouped: the row whose group is undeclared ("mars") is missing for the group and dropped
    plan = small_plan(
        queries=[
            {
                "name": "s",
                "statistic": "sum",
                "column": "x",
                "group_by": "g",
                "mechanism": "laplace",
                "epsilon": 0.5,
            }
        ]
    )
    table = load_table(data, plan.columns)
    (d,) = design_plan(plan)
    ex = exact_statistic(d, table, np.ones(table.n_rows, dtype=bool), plan.columns)
    assert [v * d.components[0].unit for v in ex.vectors[0]] == [10.0, 0.0, 0.0]


def test_id_column_keeps_at_most_k_rows_per_person(dpdesk_home: Path, tmp_path: Path) -> None:
    """At most k rows of each id, none without one; under one key always the same rows, under other keys others
    (a keyed hash of each row, not the first rows: 60 random keys all choosing among at most 3 of the 10 pairs of
    p1's rows has probability below 1e-40)."""
    rows = [(x, "a", "p1") for x in range(1, 6)] + [(2, "a", "p2")] * 2 + [(3, "b", "")] * 4
    data = write_csv(tmp_path / "d.csv", rows, header="x,g,pid")
    plan = small_plan(
        privacy_unit={"neighbouring": "add_remove", "max_rows_per_person": 2, "id_column": "pid"}
    )
    from dpdesk.core.dp.aggregates import bound_rows_per_person
    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.loading import load_table

    table = load_table(data, plan.columns, id_column="pid")
    key = BoundKey.fresh()
    first = bound_rows_per_person(table, 2, key)
    for _ in range(20):
        keep = bound_rows_per_person(table, 2, key)
        assert keep[:5].sum() == 2 and keep[5:7].sum() == 2 and keep[7:].sum() == 0
        assert (keep == first).all()
    chosen = {tuple(np.flatnonzero(bound_rows_per_person(table, 2, BoundKey.fresh())[:5])) for _ in range(60)}
    assert len(chosen) > 3  # a keyed choice, not always the first rows
    res = release(plan, data, dpdesk_home, tmp_path / "out")
    assert res.entry.plan["privacy_unit"]["id_column"] == "pid"


def test_budget_report_reads_no_data_and_shows_all_methods() -> None:
    plan = load_plan(PLAN)
    rep = budget_report(plan)
    seq, zcdp, adv = rep.methods["sequential"], rep.methods["zcdp"], rep.methods["advanced"]
    assert seq is not None and zcdp is not None and adv is not None
    assert rep.method == "sequential" and rep.fits and rep.in_force is seq
    assert seq.plan.epsilon == pytest.approx(0.9)
    assert zcdp.plan.rho is not None and zcdp.plan.rho > 0
    assert adv.plan.epsilon > 0
    assert rep.remaining_after.epsilon == pytest.approx(0.1)
    q = rep.queries[0].components[0]
    assert q.scale == 10.0 and q.error95 == pytest.approx(10 * np.log(20))
    assert q.formula == "b = sensitivity / epsilon = 1 / 0.1 = 10"


def test_one_default_delta_prime_for_the_advanced_total(dpdesk_home: Path, tmp_path: Path) -> None:
    """A sequential plan shows advanced composition beside it: one delta', one total per release.

    The meter and the release entry's totals (report.pdf) once used min(delta_B / 10, 1e-7), the statement
    and ledger 1e-9: an officer saw two advanced totals for one release.
    """
    from dpdesk.core.dp import accounting as acc
    from dpdesk.core.dp.queries import design_plan

    for b_delta, expected in ((1e-6, 1e-7), (1e-9, 1e-10)):
        plan = small_plan(budget={"epsilon": 1.0, "delta": b_delta})
        assert plan.accounting.delta_prime is None
        costs = tuple(bud.plan_costs(design_plan(plan)))
        rep = budget_report(plan)
        adv = rep.methods["advanced"]
        assert adv is not None
        assert adv.delta_prime == acc.default_delta_prime(b_delta) == expected
        by_hand = acc.advanced(costs, expected)
        assert adv.plan.epsilon == pytest.approx(by_hand.epsilon, rel=1e-15)
        assert adv.plan.delta == pytest.approx(by_hand.delta, rel=1e-15)
        assert adv.plan == acc.dataset_total("advanced", [acc.Release(costs)], b_delta)
        one = acc.plan_total("advanced", costs, None, b_delta)
        assert one.epsilon == pytest.approx(by_hand.epsilon, rel=1e-15)

    # after a release, the statement and the ledger listing (budget_report over the ledger's entries) show the
    # total the release entry recorded (report.pdf's "This release")
    data = write_csv(tmp_path / "d.csv", [(1, "a"), (2, "b")])
    plan = small_plan(queries=[{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.2}])
    first = release(plan, data, dpdesk_home, tmp_path / "out1").entry
    second = release(plan, data, dpdesk_home, tmp_path / "out2").entry
    assert first.fields["totals"]["advanced"] == budget_report(plan).to_dict()["methods"]["advanced"]["plan"]
    later = budget_report(plan, [first, second]).methods["advanced"]
    assert later is not None
    assert later.spent.epsilon == pytest.approx(2 * first.fields["totals"]["advanced"]["epsilon"], rel=1e-15)
    assert later.spent.delta == pytest.approx(first.fields["totals"]["advanced"]["delta"] * 2, rel=1e-15)
    assert second.fields["spent_after"] == budget_report(plan, [first, second]).in_force.spent.to_dict()
    # a budget without delta has no delta' to spend: advanced is not offered (nor is zCDP)
    assert acc.default_delta_prime(0.0) is None
    assert budget_report(small_plan(budget={"epsilon": 1.0})).methods["advanced"] is None
    with pytest.raises(ValueError):
        acc.dataset_total("advanced", [acc.Release(costs)], 0.0)


def test_full_sample_release_every_statistic_and_mechanism(dpdesk_home: Path, tmp_path: Path) -> None:
    plan = load_plan(PLAN)
    res = release(plan, DATA, dpdesk_home, tmp_path / "out")
    rows = read_release(tmp_path / "out")
    assert len(rows) == 1 + 1 + 4 + 4 + 1 + 1
    assert rows[-1]["value"] in ("northeast", "midwest", "south", "west")
    assert rows[-1]["ci_low"] == rows[-1]["ci_high"] == ""
    assert 0 <= float(rows[-2]["value"]) <= 18
    lo, v, hi = float(rows[1]["ci_low"]), float(rows[1]["value"]), float(rows[1]["ci_high"])
    assert 0 <= lo <= v <= hi <= 5000
    entry = res.entry
    assert entry.fields["values_hash"] == vals.rows_hash(res.rows)
    assert entry.charged.epsilon == pytest.approx(0.9)
    assert [t["name"] for t in entry.fields["trace"]] == [q.name for q in plan.queries]


def _release_in_process(home: str, plan_path: str, data: str, out: str, q: Any) -> None:
    import os

    os.environ["DPDESK_HOME"] = home
    try:
        release(load_plan(plan_path), data, Path(home), Path(out))
        q.put("ok")
    except BudgetExceeded:
        q.put("refused")


@pytest.mark.slow
def test_two_processes_never_overspend(dpdesk_home: Path, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")] * 50)
    plan_path = tmp_path / "p.json"
    from dpdesk.core.plan.reader import save_plan

    save_plan(small_plan(), plan_path)  # 0.6 each, budget 1.0: only one may run
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [
        ctx.Process(
            target=_release_in_process,
            args=(str(dpdesk_home), str(plan_path), str(data), str(tmp_path / f"o{i}"), q),
        )
        for i in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results = sorted(q.get(timeout=10) for _ in procs)
    assert results == ["ok", "refused"]
    spends = [e for e in Ledger.for_dataset(dpdesk_home, _sha(data)).verify() if e.type == "spend"]
    assert len(spends) == 1


def test_simulate_on_a_stand_in_table_is_uncharged() -> None:
    plan = load_plan(PLAN)
    rng = np.random.default_rng(1)
    table = sim.stand_in_table(plan, 500, rng)
    out = sim.simulate(plan, 3, table=table, rng=rng)
    assert {r[0] for r in out} == {1, 2, 3}
    assert len(out) == 3 * 12


def test_simulations_run_on_a_stand_in_or_a_public_file_and_touch_no_ledger(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    plan = load_plan(PLAN)
    out = tmp_path / "sim.csv"
    res = sim.run_simulation(plan, dpdesk_home, out, runs=2, rows=300, seed=4)
    text = out.read_text(encoding="utf-8").splitlines()
    assert text[0] == "# " + sim.simulation_notice() and text[1] == "# " + res.source
    assert "stand-in table of 300 rows" in res.source and len(text) == 3 + 2 * 12
    public = tmp_path / "last_year_published.csv"
    public.write_bytes(DATA.read_bytes())
    res = sim.run_simulation(plan, dpdesk_home, out, runs=2, public=public)
    assert str(public) in res.source and "declared public" in res.source
    assert not (dpdesk_home / "ledgers").exists() or not list((dpdesk_home / "ledgers").iterdir())
    # the table being released is private even before its first ledger entry
    with pytest.raises(sim.NotPublic, match="not a public file"):
        sim.run_simulation(plan, dpdesk_home, out, runs=2, public=public, private_sha=_sha(public))
    release(plan, public, dpdesk_home, tmp_path / "o")  # now the file has a ledger
    ledger = Ledger.for_dataset(dpdesk_home, _sha(public)).path
    before = ledger.read_bytes()
    out.unlink()
    with pytest.raises(sim.NotPublic, match="has a ledger") as err:
        sim.run_simulation(plan, dpdesk_home, out, runs=2, public=public)
    assert err.value.exit_code == 2
    assert not out.exists() and ledger.read_bytes() == before


def test_is_known_dataset_by_path_or_sha(dpdesk_home: Path, tmp_path: Path) -> None:
    from dpdesk.core.ledger.book import is_known_dataset

    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    other = write_csv(tmp_path / "e.csv", [(2, "a")])
    assert not is_known_dataset(dpdesk_home, data) and not is_known_dataset(dpdesk_home, _sha(data))
    release(small_plan(), data, dpdesk_home, tmp_path / "o")
    assert is_known_dataset(dpdesk_home, data) and is_known_dataset(dpdesk_home, _sha(data))
    assert is_known_dataset(dpdesk_home, str(data))  # a path given as text
    assert not is_known_dataset(dpdesk_home, other) and not is_known_dataset(dpdesk_home, _sha(other))


@pytest.mark.slow
def test_the_data_check_is_shown_before_the_charge_and_stops_on_problems(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    plan = small_plan(
        columns={
            "x": {"type": "float", "bounds": [0, 100]},
            "g": {"type": "category", "categories": ["a", "b", "z"]},
            "k": {"type": "int", "bounds": [1, 5]},
        }
    )
    rows = [
        (10, "a", 3),
        ("", "a", 9),
        ("oops", "b", 0),
        (250, "wets", 2),
        ("inf", "wets", ""),
        (-1, "", 5),
        ("-inf", "b", 4),
        (100, "a", "n/a"),
    ]
    data = write_csv(tmp_path / "d.csv", rows, header="x,g,k")
    ledger = Ledger.for_dataset(dpdesk_home, _sha(data))
    seen: list[tuple[dchk.DataCheck, bool]] = []

    def shown(check: dchk.DataCheck) -> None:
        seen.append((check, ledger.exists()))

    with pytest.raises(dchk.DataProblems) as err:
        release(plan, data, dpdesk_home, tmp_path / "out", on_data_check=shown)
    assert err.value.exit_code == 2
    assert not ledger.exists() and not (tmp_path / "out").exists()
    ((check, charged_before),) = seen
    assert not charged_before
    counts = {c.name: (c.missing, c.undeclared, c.unparsable, c.clamped) for c in check.columns}
    # x: "" missing, "oops" unparsable, 250, inf, -1, -inf clamped (100 is at the bound)
    # g: "" missing, two "wets"; k: "" missing, "n/a" unparsable, 9 and 0 clamped
    assert counts == {"x": (1, 0, 1, 4), "g": (1, 2, 0, 0), "k": (1, 0, 1, 2)}
    assert [c.name for c in check.problems] == ["x", "g", "k"]
    assert "column 'g': 1 missing, 2 outside the declared categories" in str(err.value)
    assert check.rows == 8
    res = release(plan, data, dpdesk_home, tmp_path / "out", on_data_check=shown, accept_data_problems=True)
    assert res.data_check is not None and res.data_check.columns == check.columns
    assert [e.type for e in Ledger.for_dataset(dpdesk_home, _sha(data)).verify()] == [
        "settings",
        "spend",
        "package",
    ]
    assert seen[1][1] is False  # shown before the first ledger entry was written
    # clamping alone never stops a release; it is shown
    clean = write_csv(tmp_path / "c.csv", [(10, "a", 3), (500, "b", 7)], header="x,g,k")
    res = release(plan, clean, dpdesk_home, tmp_path / "out2")
    assert res.data_check is not None and not res.data_check.problems
    assert [c.clamped for c in res.data_check.columns] == [1, 0, 1]
    first = res.data_check.lines()[0]
    assert first == "column 'x': 0 missing, 0 unparsable, 1 clamped to the bounds [0, 100]"


def test_csv_neutralises_formulas_but_not_numbers() -> None:
    rows = [vals.Row("=cmd", "+x", "-3.5", "-1", "2", "laplace", "0.1", "0")]
    text = vals.rows_to_csv(rows).decode()
    assert "'=cmd,'+x,-3.5,-1,2" in text
    assert vals.rows_to_csv(rows, bom=True).startswith(b"\xef\xbb\xbf")
    assert list(csv.reader(io.StringIO(text)))[0] == list(vals.CSV_COLUMNS)


def test_csv_round_trips_labels_with_line_breaks_and_quotes() -> None:
    labels = ["a\rb", "c\nd", "e\r\nf", 'g"h', "i,j", "北京"]
    rows = [vals.Row("q", lab, "1", "0", "2", "laplace", "0.1", "0") for lab in labels]
    data = vals.rows_to_csv(rows)
    assert data.startswith((",".join(vals.CSV_COLUMNS) + "\n").encode())
    back = list(csv.reader(io.StringIO(data.decode(), newline="")))
    assert [r[1] for r in back[1:]] == labels
    assert all(len(r) == len(vals.CSV_COLUMNS) for r in back)


def test_numbers_are_written_in_plain_notation() -> None:
    assert vals.fmt_number(1e-7) == "0.0000001"
    assert vals.fmt_number(1.5e16) == "15000000000000000"
    assert vals.fmt_number(-0.25) == "-0.25"


@pytest.mark.slow
def test_every_statistic_with_every_mechanism_it_allows(dpdesk_home: Path, tmp_path: Path) -> None:
    """Real sampler, checked against truths computed here with the csv module and math.fsum.

    Each noisy value must lie within 20 noise scales of the truth: false failure below
    e^-20 = 2e-9 per Laplace value (Gaussian: far less), about 1e-7 for the whole test.
    """
    import math
    import random

    rnd = random.Random(5)  # test data only
    regions = ["n", "s", "e", "w"]
    rows = [
        (round(rnd.uniform(-50, 950), 3), rnd.choice(regions[:3]), rnd.randint(0, 20)) for _ in range(3000)
    ]
    data = tmp_path / "d.csv"
    data.write_text("x,r,i\n" + "".join(f"{x},{r},{i}\n" for x, r, i in rows), encoding="utf-8")
    queries: list[dict[str, Any]] = []
    for mech_name in ("laplace", "gaussian"):
        extra = {"delta": 1e-7, "calibration": "analytic"} if mech_name == "gaussian" else {}
        for stat, col in (
            ("count", None),
            ("sum", "x"),
            ("mean", "x"),
            ("histogram", "r"),
            ("histogram", "i"),
        ):
            for grouped in (False, True):
                if grouped and col == "r":
                    continue
                q: dict[str, Any] = {
                    "name": f"{stat} {col} {mech_name} {grouped}",
                    "statistic": stat,
                    "mechanism": mech_name,
                    "epsilon": 2.0,
                    **extra,
                }
                if col:
                    q["column"] = col
                if col == "i" and stat == "histogram":
                    q["bins"] = [0, 5, 10, 15]
                if grouped:
                    q["group_by"] = "r"
                queries.append(q)
    queries += [
        {
            "name": "median",
            "statistic": "quantile",
            "column": "i",
            "mechanism": "exponential",
            "epsilon": 2.0,
        },
        {"name": "mode", "statistic": "mode", "column": "r", "mechanism": "exponential", "epsilon": 2.0},
        {
            "name": "price",
            "statistic": "select",
            "column": "x",
            "candidates": [100, 400, 900],
            "utility": "revenue",
            "mechanism": "exponential",
            "epsilon": 2.0,
        },
    ]
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 200.0, "delta": 1e-4},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "columns": {
                "x": {"type": "float", "bounds": [-100, 1000]},
                "r": {"type": "category", "categories": regions},
                "i": {"type": "int", "bounds": [0, 20]},
            },
            "queries": queries,
        }
    )
    res = release(plan, data, dpdesk_home, tmp_path / "out")
    got: dict[tuple[str, str], str] = {(r.query, r.group): r.value for r in res.rows}
    report = {q.name: q for q in budget_report(plan).queries}

    def truth(stat: str, col: str | None, sub: list[tuple[float, str, int]]) -> float:
        if stat == "count":
            return len(sub)
        vals = [r[0] for r in sub]
        if stat == "sum":
            return math.fsum(vals)
        return min(1000.0, max(-100.0, math.fsum(vals) / max(1, len(vals)))) if sub else 450.0

    for q in queries[:-3]:
        name, stat, col = q["name"], q["statistic"], q.get("column")
        scale = max(c.scale for c in report[name].components)
        groups = regions if q.get("group_by") else [None]
        for g in groups:
            sub = [r for r in rows if g is None or r[1] == g]
            if stat == "histogram":
                if col == "r":
                    cells = {c: sum(1 for r in sub if r[1] == c) for c in regions}
                else:
                    edges = [0, 5, 10, 15]
                    cells = {}
                    for lab, lo, hi in zip(
                        ("(-inf, 5)", "[5, 10)", "[10, +inf)"), edges, edges[1:], strict=False
                    ):
                        cells[lab] = sum(
                            1 for r in sub if (lo == 0 or r[2] >= lo) and (hi == 15 or r[2] < hi)
                        )
                for lab, n in cells.items():
                    key = (name, f"{g} / {lab}" if g else lab)
                    assert abs(float(got[key]) - n) <= 20 * scale, key
            else:
                t = truth(stat, col, sub)
                tol = (
                    20 * scale
                    if stat != "mean"
                    else 1100.0 * 0.02 + 20 * scale / max(1, len(sub) - 20 * scale)
                )
                assert abs(float(got[(name, g or "")]) - t) <= tol, (name, g)
    assert got[("mode", "")] in regions[:3]
    assert 0 <= float(got[("median", "")]) <= 20
    assert got[("price", "")] in ("100", "400", "900")
    assert len(res.rows) == len({(r.query, r.group) for r in res.rows})


def test_a_full_release_never_touches_numpy_random_or_random(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    def forbidden(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("non-cryptographic randomness reached a release")

    for name in (
        "default_rng",
        "Generator",
        "RandomState",
        "random",
        "rand",
        "randn",
        "randint",
        "laplace",
        "normal",
        "gumbel",
        "choice",
        "uniform",
        "shuffle",
        "permutation",
        "integers",
        "seed",
    ):
        if hasattr(np.random, name):
            monkeypatch.setattr(np.random, name, forbidden)
    for name in (
        "random",
        "randint",
        "choice",
        "choices",
        "shuffle",
        "uniform",
        "gauss",
        "Random",
        "sample",
        "seed",
    ):
        monkeypatch.setattr(random, name, forbidden)
    plan = load_plan(PLAN)
    with_ids = parse_plan(
        {
            **plan.to_dict(),
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 2, "id_column": "state"},
        }
    )
    res = release(with_ids, DATA, dpdesk_home, tmp_path / "out")
    assert len(res.rows) == 12


def test_a_read_only_ledger_folder_fails_cleanly(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_csv(tmp_path / "d.csv", [(1, "a")])
    real_mkdir = Path.mkdir

    def readonly(self: Path, *a: Any, **k: Any) -> None:
        if self.name == "ledgers":
            raise PermissionError(13, "Permission denied")
        real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", readonly)
    with pytest.raises(LedgerError, match="nothing was charged or revealed") as err:
        release(small_plan(), data, dpdesk_home, tmp_path / "out")
    assert err.value.exit_code == 3
    assert not (tmp_path / "out").exists()


def test_disk_full_while_charging_reveals_nothing_and_keeps_earlier_entries(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    data = write_csv(tmp_path / "d.csv", [(1, "a")] * 5)
    first = small_plan(queries=small_plan().to_dict()["queries"][:1])
    release(first, data, dpdesk_home, tmp_path / "o1")
    ledger = Ledger.for_dataset(dpdesk_home, _sha(data))
    before = ledger.path.read_bytes()
    real_write = os.write

    def full(fd: int, b: Any) -> int:
        if os.fstat(fd).st_ino == ledger.path.stat().st_ino:
            real_write(fd, bytes(b)[:10])  # a torn, partial line
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, b)

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(LedgerError, match="nothing was revealed"):
        release(small_plan(queries=small_plan().to_dict()["queries"][1:]), data, dpdesk_home, tmp_path / "o2")
    monkeypatch.undo()
    assert not (tmp_path / "o2").exists()
    assert ledger.path.read_bytes() == before  # the partial line was removed; nothing recorded was lost
    assert len([e for e in ledger.verify() if e.type == "spend"]) == 1


def test_quantile_states_its_rank_interval_in_the_design_budget_and_report(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """R = 2 Du (ln m + ln 20) / eps from the plan alone: in the trace, the formula and the PDF report.

    The sample plan's median of education (int, bounds [0, 18]: 19 candidates, every whole number, so
    some candidate is always an exact median) at eps 0.1 with Du = 1/2: R = (ln 19 + ln 20) / 0.1.
    """
    import math

    from pypdf import PdfReader

    plan = load_plan(PLAN)
    r = 2 * 0.5 * (math.log(19) + math.log(20)) / 0.1
    queries = {q.name: q for q in budget_report(plan).queries}
    med = queries.pop("median education")
    assert med.rank_error95 == pytest.approx(r) and med.rank_error95_exact_candidate is True
    assert f"R = {r:.6g}: the released value's rank is within ±R of q·n" in med.components[0].formula
    assert not med.notes
    for q in queries.values():
        assert q.rank_error95 is None and q.rank_error95_exact_candidate is None
    release(plan, DATA, dpdesk_home, tmp_path / "out")
    text = " ".join(p.extract_text() or "" for p in PdfReader(str(tmp_path / "out" / "report.pdf")).pages)
    flat = " ".join(text.split())
    assert f"Accuracy: with 95% probability the released value's rank is within ±{r:.4g} of q·n" in flat
    assert "no interval of values is given" in flat
    # a float column's grid does not guarantee an exact quantile among the candidates: the design says so
    floaty = small_plan(
        queries=[
            {
                "name": "m",
                "statistic": "quantile",
                "column": "x",
                "q": 0.9,
                "mechanism": "exponential",
                "epsilon": 0.5,
            }
        ]
    )
    f = budget_report(floaty).queries[0]
    assert f.rank_error95 == pytest.approx(2 * 0.9 * (math.log(1001) + math.log(20)) / 0.5)
    assert f.rank_error95_exact_candidate is False
    assert any("do not guarantee" in n for n in f.notes)
