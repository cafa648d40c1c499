"""The service layer called directly (no subprocess, no Qt): typed requests in, typed results out, the engine's
typed errors raised, and the same ledger rules as the command line and the app (which both call these)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from dpdesk.core.common.errors import BudgetExceeded, Cancelled, LedgerError, UsageError
from dpdesk.core.common.progress import Progress
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.carryover import CostsNeeded, StatedCost
from dpdesk.core.ledger.entries import SpendEntry
from dpdesk.core.plan.reader import load_plan, parse_plan
from dpdesk.core.release.steps import SettingsMismatch
from dpdesk.services import Dataset
from dpdesk.services.budget import BudgetRequest, plan_budget
from dpdesk.services.export import ExportRequest, export_release
from dpdesk.services.ledger import (
    AcknowledgeRequest,
    ChangeSettingsRequest,
    ExportLedgerRequest,
    ListRequest,
    ReexportRequest,
    StatementRequest,
    VerifyRequest,
    acknowledge,
    assess_acknowledgement,
    change_settings,
    export_ledger,
    list_ledgers,
    reexport_release,
    verify_ledger,
    write_statement,
)
from dpdesk.services.release import CheckRequest, ReleaseRequest, check_table, release_plan
from dpdesk.services.review import ReviewRequest, review_path
from dpdesk.services.simulate import SimulateRequest, simulate_releases
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def _released(home: Path, out: Path | None = None) -> tuple[Dataset, SpendEntry]:
    done = release_plan(ReleaseRequest(load_plan(PLAN), DATA, home, out))
    return Dataset(home, DATA), done.entry


def test_requests_and_results_are_frozen(dpdesk_home: Path) -> None:
    request = BudgetRequest(load_plan(PLAN))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.dataset = Dataset(dpdesk_home, DATA)  # type: ignore[misc]  # the point of the test
    result = plan_budget(request)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.report = budget_report(load_plan(PLAN))  # type: ignore[misc]  # the point of the test
    with pytest.raises(ValueError, match="its data file, the file's SHA-256 or its public id"):
        Dataset(dpdesk_home)


def test_the_budget_alone_and_less_what_the_ledger_holds(dpdesk_home: Path) -> None:
    plan = load_plan(PLAN)
    alone = plan_budget(BudgetRequest(plan))
    assert alone.fits and alone.report == budget_report(plan)
    assert not (dpdesk_home / "ledgers").exists()  # no dataset: nothing opened, nothing created
    dataset, entry = _released(dpdesk_home)
    after = plan_budget(BudgetRequest(plan, dataset))
    assert not after.fits  # 0.9 of 1.0 spent: the same plan no longer fits
    assert after.report.remaining_before.epsilon == pytest.approx(0.1)
    assert after.dataset == entry.dataset == after.to_dict()["dataset"]
    bigger = parse_plan({**plan.to_dict(), "budget": {"epsilon": 3.0, "delta": 1e-6}})
    with pytest.raises(SettingsMismatch, match="fixed at its first release"):
        plan_budget(BudgetRequest(bigger, dataset))


def test_check_then_release_spends_before_it_reveals(dpdesk_home: Path, tmp_path: Path) -> None:
    plan = load_plan(PLAN)
    checked = check_table(CheckRequest(plan, DATA))
    assert not checked.check.problems and checked.table.n_rows == 2000
    assert not (dpdesk_home / "ledgers").exists()  # checking charges nothing
    seen = []
    out = tmp_path / "pkg"
    done = release_plan(
        ReleaseRequest(plan, DATA, dpdesk_home, out, table=checked.table), on_data_check=seen.append
    )
    assert len(seen) == 1 and done.out == out and done.migration is None
    (recorded,) = [
        e for e in Ledger.for_dataset(dpdesk_home, checked.table.sha256).verify() if e.type == "spend"
    ]
    assert recorded == done.entry and recorded.values == [r.as_list() for r in done.rows]
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    with pytest.raises(BudgetExceeded):
        release_plan(ReleaseRequest(plan, DATA, dpdesk_home, tmp_path / "again"))
    assert not (tmp_path / "again").exists()


def test_a_table_over_the_memory_limit_is_checked_and_released_streamed(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """The service layer takes the memory limit (the app uses the default): a table that does not fit is
    streamed by the check, released from its merged aggregates, and charged once like any other."""
    from dpdesk.core.release.streaming import MIN_MEMORY_LIMIT

    plan = load_plan(PLAN)
    checked = check_table(CheckRequest(plan, DATA, memory_limit=MIN_MEMORY_LIMIT))
    assert checked.table.streamed is not None and checked.table.n_rows == 2000
    assert checked.check == check_table(CheckRequest(plan, DATA)).check  # the same counts as loaded whole
    done = release_plan(ReleaseRequest(plan, DATA, dpdesk_home, tmp_path / "pkg", table=checked.table))
    assert done.streamed and len(done.rows) == 12
    (recorded,) = [
        e for e in Ledger.for_dataset(dpdesk_home, checked.table.sha256).verify() if e.type == "spend"
    ]
    assert recorded == done.entry


def test_a_cancelled_release_charges_nothing(dpdesk_home: Path) -> None:
    progress = Progress()
    progress.cancel()
    with pytest.raises(Cancelled):
        release_plan(ReleaseRequest(load_plan(PLAN), DATA, dpdesk_home), progress)
    assert not list((dpdesk_home / "ledgers").glob("*.jsonl"))


def test_export_review_and_reexport_write_the_recorded_values(dpdesk_home: Path, tmp_path: Path) -> None:
    dataset, entry = _released(dpdesk_home, tmp_path / "first")
    shown = Dataset(dpdesk_home, sha256=Ledger.for_dataset(dpdesk_home, _sha()).key, name=DATA.name)
    exported = export_release(ExportRequest(shown, entry, tmp_path / "shown"))
    again = reexport_release(ReexportRequest(dataset, entry.seq, tmp_path / "again"))
    first = (tmp_path / "first" / "release.csv").read_bytes()
    assert (exported.out / "release.csv").read_bytes() == first == (again.out / "release.csv").read_bytes()
    for folder in (exported.out, again.out):
        assert review_path(ReviewRequest(folder)).intact
    (again.out / "release.csv").write_bytes(first.replace(b"people", b"persons", 1))
    tampered = review_path(ReviewRequest(again.out))
    assert not tampered.intact and tampered.summary()["problems"]
    with pytest.raises(UsageError, match="not empty"):
        export_release(ExportRequest(shown, entry, tmp_path / "first"))
    with pytest.raises(UsageError, match="ledger entry 1 is not a release"):
        reexport_release(ReexportRequest(dataset, 1, tmp_path / "settings"))  # entry 1 holds the settings
    assert not (tmp_path / "settings").exists()


def _sha() -> str:
    from dpdesk.core.loading import file_sha256

    return file_sha256(DATA)


def test_verify_list_export_and_statement(dpdesk_home: Path, tmp_path: Path) -> None:
    dataset = Dataset(dpdesk_home, DATA)
    assert list_ledgers(ListRequest(dpdesk_home)).ledgers == ()
    with pytest.raises(UsageError, match="nothing has been recorded"):
        export_ledger(ExportLedgerRequest(dataset, tmp_path / "none.jsonl"))
    _released(dpdesk_home)
    status = verify_ledger(VerifyRequest(dataset))
    assert status.verified and status.exit_code == 0 and status.releases == 1 and status.pending == 0
    assert [e.type for e in status.entries] == ["settings", "spend"]
    assert status.left is not None and status.left.epsilon == pytest.approx(0.1)
    listed = list_ledgers(ListRequest(dpdesk_home))
    assert listed.ledgers == (status,) and listed.exit_code == 0
    copy = export_ledger(ExportLedgerRequest(dataset, tmp_path / "ledger.jsonl"))
    assert copy.entries == 2 and review_path(ReviewRequest(copy.out)).intact
    statement = write_statement(StatementRequest(dataset, tmp_path / "s.pdf"))
    assert statement.entries == 2 and statement.chain_status == "chain verified"
    assert (tmp_path / "s.pdf").read_bytes().startswith(b"%PDF")


def test_a_broken_ledger_is_reported_then_acknowledged_without_resetting_the_spend(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    dataset, _entry = _released(dpdesk_home)
    (path,) = (dpdesk_home / "ledgers").glob("*.jsonl")
    path.write_bytes(path.read_bytes().replace(b'"title":"CPS wages"', b'"title":"CPS wagez"', 1))
    status = verify_ledger(VerifyRequest(dataset))
    assert not status.verified and status.exit_code == 3 and status.entries == ()
    assert list_ledgers(ListRequest(dpdesk_home)).exit_code == 3
    statement = write_statement(StatementRequest(dataset, tmp_path / "broken.pdf"))
    assert statement.entries == 0 and statement.chain_status.startswith("BROKEN: ")
    with pytest.raises(LedgerError, match="needs a reason"):
        acknowledge(AcknowledgeRequest(dataset, "  "))
    with pytest.raises(CostsNeeded) as caught:  # issue 13: what does not verify needs the officer's cost
        acknowledge(AcknowledgeRequest(dataset, "edited by mistake"))
    found = assess_acknowledgement(AcknowledgeRequest(dataset, "edited by mistake"))
    assert [u.label for u in found.unconfirmed] == [u.label for u in caught.value.missing]
    stated = tuple(StatedCost(u.label, o) for u in caught.value.missing if (o := u.offered()) is not None)
    done = acknowledge(AcknowledgeRequest(dataset, "edited by mistake", stated, settings_plan=PLAN))
    assert len(done.entry.carried) == 1
    assert verify_ledger(VerifyRequest(dataset)).releases == 1  # the carried spend still counts
    report = plan_budget(BudgetRequest(load_plan(PLAN), dataset)).report
    assert report.remaining_before.epsilon == pytest.approx(0.1)  # not reset


def test_change_settings_needs_a_reason_and_records_it(dpdesk_home: Path, tmp_path: Path) -> None:
    dataset, _entry = _released(dpdesk_home)
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    data["budget"]["epsilon"] = 3.0
    bigger = tmp_path / "bigger.json"
    bigger.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UsageError, match="--reason"):
        change_settings(ChangeSettingsRequest(dataset, bigger, " "))
    assert verify_ledger(VerifyRequest(dataset)).settings["budget"]["epsilon"] == 1.0  # nothing recorded
    done = change_settings(ChangeSettingsRequest(dataset, bigger, " board approval 12 "))
    assert done.entry.reason == "board approval 12" and done.correction is None and done.rescaled == ()
    assert plan_budget(BudgetRequest(load_plan(bigger), dataset)).fits


def test_simulations_write_their_file_and_touch_no_ledger(dpdesk_home: Path, tmp_path: Path) -> None:
    done = simulate_releases(
        SimulateRequest(load_plan(PLAN), dpdesk_home, tmp_path / "sim.csv", runs=3, seed=1)
    )
    lines = done.out.read_text(encoding="utf-8").splitlines()
    assert done.runs == 3 and lines[0].startswith("# NOT FOR PUBLICATION") and lines[1] == "# " + done.source
    assert not (dpdesk_home / "ledgers").exists()
    with pytest.raises(UsageError, match="--runs"):
        simulate_releases(SimulateRequest(load_plan(PLAN), dpdesk_home, tmp_path / "no.csv", runs=0))


def test_a_ledger_that_changes_while_it_is_exported_is_not_written(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes an export writes are the chain it verified: a ledger moved away (or replaced) between the check
    and the copy writes nothing and says so (it wrote a one-byte file and reported the head)."""
    dataset, _entry = _released(dpdesk_home)
    real = Ledger.verify

    def verify_then_lose(self: Ledger) -> list[SpendEntry]:
        entries = real(self)
        assert self.path is not None
        self.path.rename(self.path.with_name("moved-away"))
        return entries

    monkeypatch.setattr(Ledger, "verify", verify_then_lose)
    out = tmp_path / "export.jsonl"
    with pytest.raises(LedgerError, match="changed while it was being exported"):
        export_ledger(ExportLedgerRequest(dataset, out))
    assert not out.exists()
