"""A table only a cluster reads, released from a home that uses a team ledger (issue 32): named by its scheme-2
content key under the team's identity secret, so the same rows are the team's dataset whoever released them and
whichever engine read them (one budget, refused once spent); a dataset the team still knows by a scheme-1 key only
is never missed (the cluster table is refused until that dataset's file is released again); a near-copy of a team's
dataset is refused as at home (a real PostgreSQL and a local Spark)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import BudgetExceeded, LedgerError, UsageError
from dpdesk.core.identity.recognition import NearCopy
from dpdesk.core.release.engines.spark.session import SparkSource, read
from dpdesk.services.release import ReleaseRequest, release_plan
from tests.core.test_engines import write_table
from tests.spark.test_spark_cluster_tables import as_catalog_table, on_spark, small_plan
from tests.team.conftest import Team, make_team
from tests.team.test_team_scheme2 import claim_as_before_scheme2

pytest.importorskip("pyspark")
__all__ = ["on_spark"]  # the fixture, used by name


@pytest.fixture
def team(pg_server: Any) -> Team:
    return make_team(pg_server)


def _as(monkeypatch: Any, team: Team, who: str) -> None:
    """The curator ``who`` releases from here on (the home's team ledger, as DPDESK_LEDGER names it)."""
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users[who]))


def _parquet(spark: Any, csv: Path, folder: Path) -> Path:
    read(spark, SparkSource("csv", "file:" + str(csv)), None, None).repartition(2).write.parquet(str(folder))
    return folder


def test_a_files_rows_read_by_spark_on_another_curators_home_share_the_teams_budget(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    plan = small_plan(7.0)  # three queries at epsilon 1: two releases fit, not three
    data = tmp_path / "t.csv"
    write_table(data, 1000, seed=11, with_id=False)
    folder = _parquet(spark, data, tmp_path / "parts")
    _as(monkeypatch, team, "alice")
    first = release_plan(
        ReleaseRequest(plan, data, tmp_path / "home-a", tmp_path / "o1", accept_data_problems=True)
    )
    _as(monkeypatch, team, "bob")
    second = release_plan(
        ReleaseRequest(
            plan, folder, tmp_path / "home-b", tmp_path / "o2", accept_data_problems=True, spark=on_spark
        )
    )
    assert second.entry.dataset == first.entry.dataset  # the team's dataset of these rows, and its ledger
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert team.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'spend'") == [(2,)]
    with pytest.raises(
        BudgetExceeded
    ):  # the same rows as a catalog table: the budget the file's release spent
        release_plan(
            ReleaseRequest(
                plan,
                as_catalog_table(spark, data, "team_people"),
                tmp_path / "home-b",
                tmp_path / "o3",
                accept_data_problems=True,
                spark=on_spark,
            )
        )
    assert team.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'spend'") == [(2,)]
    assert not (tmp_path / "o3").exists()


def test_a_cluster_table_is_refused_while_the_team_knows_a_dataset_by_scheme1_only(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """A dataset an older dpdesk claimed (scheme-1 key only) would not be found by the rows Spark reads: the cluster
    table is refused, naming it, nothing charged or claimed; once its file is released again, the cluster table is
    that dataset."""
    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 800, seed=12, with_id=False)
    folder = _parquet(spark, data, tmp_path / "parts")
    old = claim_as_before_scheme2(team, "alice", data)
    _as(monkeypatch, team, "bob")
    request = ReleaseRequest(
        plan, folder, tmp_path / "home-b", tmp_path / "o1", accept_data_problems=True, spark=on_spark
    )
    with pytest.raises(UsageError, match=old):
        release_plan(request)
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert team.sql("SELECT count(*) FROM dpdesk.keys") == [(2,)]  # the old file's key and its scheme-1 key
    _as(monkeypatch, team, "alice")
    release_plan(ReleaseRequest(plan, data, tmp_path / "home-a", tmp_path / "o2", accept_data_problems=True))
    _as(monkeypatch, team, "bob")
    assert release_plan(request).entry.dataset == old


def _released_and_near_copy(
    tmp_path: Path, team: Team, monkeypatch: Any, *, seed: int
) -> tuple[Any, Any, Path]:
    """A table released from its file by alice in the team, and a near-copy of it (a tenth of its rows left out):
    the plan, the release and the near-copy's file."""
    plan = small_plan(100.0)
    data = tmp_path / "t.csv"
    write_table(data, 1500, seed=seed, with_id=False)
    _as(monkeypatch, team, "alice")
    first = release_plan(
        ReleaseRequest(plan, data, tmp_path / "home-a", tmp_path / "o1", accept_data_problems=True)
    )
    lines = data.read_text(encoding="utf-8").splitlines()
    near = tmp_path / "near" / "t.csv"
    near.parent.mkdir()
    near.write_text("\n".join(lines[: len(lines) * 9 // 10]) + "\n", encoding="utf-8")  # a tenth left out
    return plan, first, near


def test_a_near_copy_of_a_teams_dataset_read_by_spark_is_refused(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    plan, first, near = _released_and_near_copy(tmp_path, team, monkeypatch, seed=13)
    _as(monkeypatch, team, "bob")
    with pytest.raises(NearCopy) as refused:
        release_plan(
            ReleaseRequest(
                plan,
                as_catalog_table(spark, near, "team_near"),
                tmp_path / "home-b",
                tmp_path / "o2",
                accept_data_problems=True,
                spark=on_spark,
            )
        )
    assert refused.value.exit_code == 3 and first.entry.dataset in str(refused.value)
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]
    assert team.sql("SELECT count(*) FROM dpdesk.entries WHERE type = 'spend'") == [(1,)]
    assert not (tmp_path / "o2").exists()


def test_a_cluster_tables_budget_is_found_in_a_team_home_after_its_release(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """``dpdesk budget PLAN --data table:NAME`` (and the app's meter, and ``dpdesk ledger``) in a team home finds the
    dataset a cluster table was released under, without Spark: the release leaves the hint it leaves at home (the
    table's local key, never a key of the team's), so the spent budget is shown, not a fresh one."""
    from dpdesk.services.budget import BudgetRequest, plan_budget
    from dpdesk.services.common import Dataset

    plan = small_plan(7.0)  # three queries at epsilon 1: two releases fit, not three
    data = tmp_path / "t.csv"
    write_table(data, 700, seed=14, with_id=False)
    source = as_catalog_table(spark, data, "team_budgeted")
    _as(monkeypatch, team, "alice")
    home = tmp_path / "home-a"
    done = release_plan(
        ReleaseRequest(plan, source, home, tmp_path / "o1", accept_data_problems=True, spark=on_spark)
    )
    found = plan_budget(BudgetRequest(plan, Dataset(home, data=source)))
    assert found.dataset == done.entry.dataset
    assert found.report.releases_so_far == 1 and found.report.in_force.spent.epsilon == pytest.approx(3.0)
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(1,)]  # nothing claimed by the look


def test_a_team_officer_declares_a_cluster_near_copy_new_with_its_table_name(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """A near-copy read by Spark, refused in an officer's home, is declared new there with the same ``--data
    table:NAME`` (no Spark: the identity its refused release computed with the team's secret), after which it
    releases under its own dataset; a look at its budget before that is refused as the release was (exit 3)."""
    from dpdesk.services.budget import BudgetRequest, plan_budget
    from dpdesk.services.common import Dataset
    from dpdesk.services.ledger import DeclareNewRequest, declare_new

    plan, first, near = _released_and_near_copy(tmp_path, team, monkeypatch, seed=15)
    source = as_catalog_table(spark, near, "team_declared")
    _as(monkeypatch, team, "olga")
    home = tmp_path / "home-o"
    request = ReleaseRequest(plan, source, home, tmp_path / "o2", accept_data_problems=True, spark=on_spark)
    with pytest.raises(NearCopy):
        release_plan(request)
    with pytest.raises(NearCopy):
        plan_budget(BudgetRequest(plan, Dataset(home, data=source)))
    declared = declare_new(
        DeclareNewRequest(Dataset(home, data=source), first.entry.dataset, "a new survey wave")
    )
    assert declared.dataset != first.entry.dataset
    assert (
        release_plan(request).entry.dataset == declared.dataset
    )  # read again by Spark: the declared dataset
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(2,)]


def test_a_home_back_on_its_own_ledger_still_finds_its_cluster_tables_budget(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """A home that released a cluster table on its own ledger, then released it in a team and went back to its own
    ledger, still finds the table's own dataset and what it spent: the team's release keeps its hint (keyed with
    the team's secret) apart from the home's own. Before, it overwrote the home's hint, so ``dpdesk budget --data
    table:NAME`` read the team's key as a new table of the home: a fresh budget shown (0 releases) for a table
    whose own ledger had spent (on the code before the team's hints, 4c885d0, the look found the own dataset)."""
    from dpdesk.services.budget import BudgetRequest, plan_budget
    from dpdesk.services.common import Dataset

    plan = small_plan(7.0)
    data = tmp_path / "t.csv"
    write_table(data, 700, seed=16, with_id=False)
    source = as_catalog_table(spark, data, "team_left")
    home = tmp_path / "home"
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    own = release_plan(
        ReleaseRequest(plan, source, home, tmp_path / "o1", accept_data_problems=True, spark=on_spark)
    )
    _as(monkeypatch, team, "alice")
    with contextlib.suppress(
        LedgerError
    ):  # released in the team or refused there, its attempt leaves its hint
        release_plan(
            ReleaseRequest(plan, source, home, tmp_path / "o2", accept_data_problems=True, spark=on_spark)
        )
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    found = plan_budget(BudgetRequest(plan, Dataset(home, data=source)))
    assert found.dataset == own.entry.dataset
    assert found.report.releases_so_far == 1 and found.report.in_force.spent.epsilon == pytest.approx(3.0)


def test_a_cluster_table_whose_history_is_still_in_the_homes_own_ledger_is_refused_in_the_team(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """A table released by Spark on a home's own ledger, then released from that home in a team before its history
    was imported (dpdesk team import), must be refused as a file is: released, it starts a second budget for the
    same rows in the team (3 of 7 spent at home, a fresh 7 in the team)."""
    plan = small_plan(7.0)
    data = tmp_path / "t.csv"
    write_table(data, 700, seed=17, with_id=False)
    source = as_catalog_table(spark, data, "team_unimported")
    home = tmp_path / "home"
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    release_plan(
        ReleaseRequest(plan, source, home, tmp_path / "o1", accept_data_problems=True, spark=on_spark)
    )
    _as(monkeypatch, team, "alice")
    again = ReleaseRequest(plan, source, home, tmp_path / "o2", accept_data_problems=True, spark=on_spark)
    with pytest.raises(LedgerError, match="own ledger"):
        release_plan(again)
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(0,)]
    assert not (tmp_path / "o2").exists()
    # as the refusal says: the file of its rows imported, the table read by Spark is that team dataset, its
    # budget what the home's own release left (3 of 7 spent: one more release fits, not two)
    from dpdesk.services.team_import import import_dataset

    import_dataset(home, data)
    (dataset,) = [str(r[0]) for r in team.sql("SELECT dataset FROM dpdesk.datasets")]
    assert release_plan(again).entry.dataset == dataset
    with pytest.raises(BudgetExceeded):
        release_plan(replace(again, out=tmp_path / "o3"))


def test_a_look_without_the_teams_identity_names_a_check_that_computes_it(
    tmp_path: Path, spark: Any, on_spark: Any, team: Team, monkeypatch: Any
) -> None:
    """A home whose only hint of a cluster table is its own ledger's (a check made before it joined the team):
    ``dpdesk budget --data table:NAME`` in the team cannot name the team's dataset without Spark, so it is refused
    (nothing claimed), and the message names the fix, a checked release with Spark, which charges nothing; after
    it the look works (a fresh budget: the team never released the table). Before, the message named no fix."""
    from dpdesk.services.budget import BudgetRequest, plan_budget
    from dpdesk.services.common import Dataset
    from dpdesk.services.release import check_release

    plan = small_plan(7.0)
    data = tmp_path / "t.csv"
    write_table(data, 700, seed=18, with_id=False)
    source = as_catalog_table(spark, data, "team_unkeyed")
    home = tmp_path / "home"
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    check_release(ReleaseRequest(plan, source, home, None, accept_data_problems=True, spark=on_spark))
    _as(monkeypatch, team, "alice")
    with pytest.raises(LedgerError) as refused:
        plan_budget(BudgetRequest(plan, Dataset(home, data=source)))
    assert "--engine spark --check" in str(refused.value) and "nothing is charged" in str(refused.value)
    checked = check_release(
        ReleaseRequest(plan, source, home, None, accept_data_problems=True, spark=on_spark)
    )
    assert checked.dataset is None and checked.report.fits
    found = plan_budget(BudgetRequest(plan, Dataset(home, data=source)))
    assert found.report.releases_so_far == 0
    assert team.sql("SELECT count(*) FROM dpdesk.datasets") == [(0,)]  # nothing claimed by the looks
