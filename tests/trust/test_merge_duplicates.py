"""Issue 24, item 1 (second half): a home that already holds two datasets of one table says so and merges them.

An older version let two saves of one table first released at the same moment each make a dataset: two ledgers, two
budgets, both holding the table's content. The home is made here as that race left it: both saves resolved before
any dataset existed, each released in a copy of the home (so neither saw the other's dataset), then the second
dataset's files (its ledger, key, register file, content record, governance copy) put into the first home, where
the race wrote them. Then:

- every command that resolves a file of the table refuses (exit 3) naming both datasets and ``dpdesk ledger merge``,
  never picking one (on the code before, ``release`` charged the second save to the second budget);
- ``dpdesk ledger merge`` makes one dataset whose spent total counts every release of both, under the smaller
  budget, with a ``merge`` entry naming both datasets, both heads and both totals that survives ``ledger verify``,
  export and review; the other dataset is closed (``merged_into``) and nothing is charged to it again, not even by a
  key moved back by hand; overspent after the merge, it says so and every release is refused (exit 1);
- governed: the merged dataset keeps the governance, its budget is never raised, and the merge needs the officer's
  approval (a missing or wrong one refused, nothing written);
- SIGKILL at every durable step of the merge (``DPDESK_FAULT=kill:N``): no dataset of the table reads as less spent
  than before, the table is refused or charged to the merged total, and the merge run again completes it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpdesk.core.common import faults
from dpdesk.core.common.errors import LedgerError
from dpdesk.core.identity import recognition
from dpdesk.core.identity.recognition import ledger_for, resolve
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.budget import spent_of
from dpdesk.core.loading import file_sha256
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.release.steps import release
from tests.trust.test_concurrent_first_use import write_saves

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals"),
]


def cli(home: Path, *args: object, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    env.pop(faults.ENV, None)
    if fault:
        env[faults.ENV] = fault
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stderr
    return r.stdout


def plan_file(folder: Path, name: str, budget: float, epsilon: float) -> Path:
    plan = {
        "version": 1,
        "title": name,
        "budget": {"epsilon": budget, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": {"region": {"type": "category", "categories": ["northeast", "midwest", "south", "west"]}},
        "queries": [{"name": "people", "statistic": "count", "mechanism": "laplace", "epsilon": epsilon}],
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


@dataclass
class Twins:
    home: Path
    lf: Path  # the first save, charged to dataset ``a``
    crlf: Path  # the same table with CRLF line ends, charged to dataset ``b``
    a: str
    b: str
    root: Path


def only_dataset(home: Path) -> str:
    (path,) = sorted((home / "ledgers").glob("ds-*.jsonl"))
    return path.stem


def make_twins(
    root: Path,
    *,
    a: tuple[float, float],
    b: tuple[float, float],
    before_b: object = None,
) -> Twins:
    """Two datasets of one table as the race of an older version left them: (budget, epsilon released) of each;
    ``before_b(home, crlf)`` runs in the second dataset's home after its release (to govern it, say)."""
    root.mkdir(parents=True, exist_ok=True)
    saves = write_saves(root / "saves")
    lf, crlf = saves["lf.csv"], saves["crlf.csv"]
    home, other = root / "home", root / "other"
    for path in (lf, crlf):  # what each process saw: a new table, no dataset yet
        assert resolve(home, path).how == "new"
    shutil.copytree(home, other)
    ok(cli(home, "release", plan_file(root, "a", *a), "--data", lf, "--out", root / "out-a"))
    ok(cli(other, "release", plan_file(root, "b", *b), "--data", crlf, "--out", root / "out-b"))
    if callable(before_b):
        before_b(other, crlf)
    ds_a, ds_b = only_dataset(home), only_dataset(other)
    # the second process wrote its dataset's files into the same home
    for src in [*other.rglob(f"*{ds_b}*"), other / "ledgers" / "keys" / file_sha256(crlf)]:
        if src.is_file():
            dst = home / src.relative_to(other)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return Twins(home, lf, crlf, ds_a, ds_b, root)


def ledger(home: Path, dataset: str) -> Ledger:
    return Ledger(dataset, home / "ledgers" / f"{dataset}.jsonl", home=home)


def spent(home: Path, dataset: str) -> float:
    h = spent_of(ledger(home, dataset).read())
    assert h is not None
    return h.spent_epsilon


def test_two_datasets_of_one_table_are_named_never_one_picked(tmp_path: Path) -> None:
    """Every command that resolves a save of the table refuses (exit 3) naming both datasets and the merge; nothing
    is charged to either. (On the code before: the second save's release was charged to the second budget.)"""
    t = make_twins(tmp_path, a=(1.0, 0.3), b=(0.8, 0.3))
    small = {t.lf: plan_file(tmp_path, "small-a", 1.0, 0.1), t.crlf: plan_file(tmp_path, "small-b", 0.8, 0.1)}
    before = (ledger(t.home, t.a).path.read_bytes(), ledger(t.home, t.b).path.read_bytes())  # type: ignore[union-attr]
    for data in (t.crlf, t.lf):
        for args in (
            ("release", small[data], "--data", data, "--out", tmp_path / f"out-{data.name}"),
            ("budget", small[data], "--data", data),
            ("ledger", "verify", "--data", data),
        ):
            r = cli(t.home, *args)
            assert r.returncode == 3, (args, r.returncode, r.stdout, r.stderr)
            assert "Traceback" not in r.stderr
            assert t.a in r.stderr and t.b in r.stderr and "dpdesk ledger merge --data" in r.stderr, r.stderr
    # a third save of the same content, never seen: refused too, and linked to neither; the release path that
    # decides a new file's dataset under the home-wide key lock refuses it too (the engine, without the services)
    bom = tmp_path / "saves" / "bom.csv"
    with pytest.raises(recognition.DuplicateDatasets):
        resolve(t.home, bom)
    with pytest.raises(recognition.DuplicateDatasets):
        release(load_plan(small[t.lf]), bom, t.home, tmp_path / "out-bom")
    assert not (t.home / "ledgers" / "keys" / file_sha256(bom)).exists()
    assert (ledger(t.home, t.a).path.read_bytes(), ledger(t.home, t.b).path.read_bytes()) == before  # type: ignore[union-attr]
    assert not (tmp_path / "out-crlf.csv").exists() and not (tmp_path / "out-lf.csv").exists()
    assert not (tmp_path / "out-bom").exists()


def test_merge_charges_every_release_of_both_under_the_smaller_budget(tmp_path: Path) -> None:
    """Budgets 1.0 and 0.8, 0.3 spent from each: merged, 0.6 spent of 0.8; a release of 0.3 (which either budget
    alone would allow) is refused, one of 0.15 is charged to the merged ledger. The merge entry names both
    datasets, heads and totals, and survives verify, export and review; the retired dataset takes nothing more."""
    t = make_twins(tmp_path, a=(1.0, 0.3), b=(0.8, 0.3))
    heads = {d: ledger(t.home, d).verify()[-1] for d in (t.a, t.b)}
    r = cli(t.home, "ledger", "merge", "--data", t.lf)
    assert r.returncode == 0, r.stderr
    assert f"Merged into dataset {t.b}: {t.a}" in r.stdout and "overspent" not in r.stderr
    entries = ledger(t.home, t.b).verify()
    merge = entries[-1]
    assert merge.type == "merge" and merge.get("merged") == t.a
    assert merge.get("this")["head"] == {"seq": heads[t.b].seq, "hash": heads[t.b].hash}
    assert merge.get("other")["head"] == {"seq": heads[t.a].seq, "hash": heads[t.a].hash}
    assert merge.get("this")["spent"]["epsilon"] == pytest.approx(0.3)
    assert merge.get("other")["spent"]["epsilon"] == pytest.approx(0.3)
    assert spent(t.home, t.b) == pytest.approx(0.6)
    closed = ledger(t.home, t.a).verify()[-1]
    assert closed.type == "merged_into" and closed.get("into") == t.b
    big, small = plan_file(tmp_path, "big", 0.8, 0.3), plan_file(tmp_path, "small", 0.8, 0.15)
    for data in (t.lf, t.crlf, tmp_path / "saves" / "bom.csv"):
        r = cli(t.home, "release", big, "--data", data, "--out", tmp_path / "refused")
        assert r.returncode == 1 and "over budget" in r.stderr, (data, r.stderr)
        assert "epsilon 0.2 " in r.stderr and "(epsilon 0.8," in r.stderr, r.stderr  # the smaller budget
    ok(cli(t.home, "release", small, "--data", t.lf, "--out", tmp_path / "small-out"))
    assert spent(t.home, t.b) == pytest.approx(0.75)
    assert ledger_for(t.home, file_sha256(t.lf)).dataset == t.b
    # verify, export and review of the merged ledger
    ok(cli(t.home, "ledger", "verify", "--data", t.crlf))
    ok(cli(t.home, "ledger", "export", "--data", t.crlf, "--out", tmp_path / "export.json"))
    ok(cli(t.home, "review", tmp_path / "export.json"))
    ok(cli(t.home, "review", tmp_path / "small-out"))
    # listed as closed, with no budget "left" of its own (it was listed as a live dataset with 0.7 left)
    listed = ok(cli(t.home, "ledger", "list"))
    block = listed.split(f"Dataset {t.a}:")[1].split("Dataset ")[0]
    assert f"merged into dataset {t.b}: closed" in block and "left:" not in block, listed
    as_json = [json.loads(x) for x in ok(cli(t.home, "ledger", "list", "--json")).splitlines()]
    assert {d["dataset"]: d.get("merged_into") for d in as_json} == {t.a: t.b, t.b: None}
    # the retired dataset: nothing charged to it, even with a key moved back to it by hand
    with pytest.raises(LedgerError, match="was merged into"), ledger(t.home, t.a).transaction():
        pass
    (t.home / "ledgers" / "keys" / file_sha256(t.lf)).write_text(t.a, encoding="ascii")
    r = cli(t.home, "release", small, "--data", t.lf, "--out", tmp_path / "back")
    assert r.returncode == 1 and "over budget" in r.stderr, (
        r.stderr
    )  # followed to the merged dataset: 0.05 left
    assert ledger(t.home, t.a).verify()[-1].type == "merged_into"
    # un-merging by cutting the closing entry or the merge entry: broken (exit 3), never a budget back
    for dataset in (t.a, t.b):
        path = ledger(t.home, dataset).path
        assert path is not None
        raw = path.read_bytes()
        lines = raw.splitlines(keepends=True)
        cut = [ln for ln in lines if b'"type":"merge' not in ln]
        path.write_bytes(b"".join(cut))
        r = cli(t.home, "budget", small, "--data", t.crlf)
        assert r.returncode == 3, (dataset, r.stdout, r.stderr)
        path.write_bytes(raw)


def test_overspent_after_the_merge_says_so_and_refuses(tmp_path: Path) -> None:
    """0.6 spent from each of budgets 1.0 and 0.8: merged, 1.2 of 0.8. The merge says it is overspent; every
    release is refused over budget (exit 1), the smallest plan included; the ledger still verifies."""
    t = make_twins(tmp_path, a=(1.0, 0.6), b=(0.8, 0.6))
    r = cli(t.home, "ledger", "merge", "--data", t.crlf)
    assert r.returncode == 0, r.stderr
    assert f"dataset {t.b} is overspent" in r.stderr and "refused" in r.stderr, r.stderr
    assert "epsilon 1.2 of a budget of 0.8" in r.stdout, r.stdout
    tiny = plan_file(tmp_path, "tiny", 0.8, 0.01)
    for data in (t.lf, t.crlf):
        r = cli(t.home, "release", tiny, "--data", data, "--out", tmp_path / "no")
        assert r.returncode == 1 and "over budget" in r.stderr, r.stderr
    ok(cli(t.home, "ledger", "verify", "--data", t.lf))
    assert spent(t.home, t.b) == pytest.approx(1.2)
    # the home's other verbs still work with a closed dataset in it (forget-identity reads every dataset)
    ok(cli(t.home, "ledger", "forget-identity", "--reason", "the secret was lost"))
    assert ledger(t.home, t.a).verify()[-1].type == "merged_into"


# ----------------------------------------------------------------------------- governed
@pytest.fixture(scope="module")
def officer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("ann")
    pf, rpf = folder / "pass.txt", folder / "rpass.txt"
    pf.write_text("Ann officer passphrase\n", encoding="utf-8")
    rpf.write_text("Ann recovery passphrase\n", encoding="utf-8")
    ok(
        cli(
            folder / "home",
            "officer",
            "create",
            "--name",
            "Ann",
            "--out",
            folder / "keys",
            "--passphrase-file",
            pf,
            "--recovery-passphrase-file",
            rpf,
        )
    )
    return next((folder / "keys").glob("*-public.json")), next((folder / "keys").glob("*-private.pem")), pf


def test_governed_merge_keeps_the_governance_never_raises_the_budget_and_needs_the_approval(
    tmp_path: Path, officer: tuple[Path, Path, Path]
) -> None:
    """The second dataset governed by Ann with a budget of 1.0, the first ungoverned with 0.8: the merged dataset
    is the governed one (its governance kept), its budget 0.8 (never the larger). Without Ann's approval, or with
    one for another merge, the merge is refused and nothing is written; with it, done, and the chain verifies
    with the approval in the merge entry."""
    public, private, pf = officer

    def govern(home: Path, data: Path) -> None:
        ok(cli(home, "ledger", "govern", "--data", data, "--officer", public))

    t = make_twins(tmp_path, a=(0.8, 0.3), b=(1.0, 0.3), before_b=govern)
    before = {d: ledger(t.home, d).path.read_bytes() for d in (t.a, t.b)}  # type: ignore[union-attr]
    r = cli(t.home, "ledger", "merge", "--data", t.lf)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert (
        f"approve-merge --dataset {t.b} --head " in r.stderr and f"--retired {t.a} --into {t.b}" in r.stderr
    )
    head = r.stderr.split("--head ")[1].split()[0]

    def approval(out: Path, retired: str, into: str) -> Path:
        ok(
            cli(
                t.home,
                "officer",
                "approve-merge",
                "--retired",
                retired,
                "--into",
                into,
                "--dataset",
                t.b,
                "--head",
                head,
                "--key",
                private,
                "--passphrase-file",
                pf,
                "--out",
                out,
            )
        )
        return out

    wrong = approval(tmp_path / "wrong.json", t.b, t.a)  # the other way round: would drop Ann's governance
    r = cli(t.home, "ledger", "merge", "--data", t.lf, "--approval", wrong)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert {d: ledger(t.home, d).path.read_bytes() for d in (t.a, t.b)} == before  # type: ignore[union-attr]
    good = approval(tmp_path / "good.json", t.a, t.b)
    ok(cli(t.home, "ledger", "merge", "--data", t.lf, "--approval", good))
    merged = ledger(t.home, t.b).verify()
    assert merged[-1].type == "merge" and merged[-1].get("decided_by") == "officer"
    assert merged[-1].get("settings")["budget"]["epsilon"] == 0.8
    assert "Governed by Ann" in ok(cli(t.home, "ledger", "head", "--data", t.lf))
    assert spent(t.home, t.b) == pytest.approx(0.6)
    big = plan_file(tmp_path, "big", 0.8, 0.3)
    r = cli(t.home, "release", big, "--data", t.lf, "--out", tmp_path / "no")
    assert r.returncode == 1 and "(epsilon 0.8," in r.stderr, r.stderr
    small = plan_file(tmp_path, "small", 0.8, 0.1)
    ok(cli(t.home, "release", small, "--data", t.crlf, "--out", tmp_path / "after"))
    ok(cli(t.home, "review", tmp_path / "after"))
    ok(cli(t.home, "ledger", "verify", "--data", t.crlf))
    ok(cli(t.home, "ledger", "export", "--data", t.crlf, "--out", tmp_path / "export.json"))
    ok(cli(t.home, "review", tmp_path / "export.json"))


# ----------------------------------------------------------------------------- crash safety
def test_sigkill_at_every_durable_step_of_a_merge_never_lowers_spent(tmp_path: Path) -> None:
    """The merge's durable steps learnt with ``DPDESK_FAULT=trace:FILE``; each killed (SIGKILL) in a child from
    the same starting home. Afterwards neither dataset reads as less spent than before, the table is refused
    (exit 3, named) or charged to the merged total, and the merge run again completes with the merged total and
    the smaller budget."""
    t = make_twins(tmp_path / "pristine", a=(1.0, 0.3), b=(0.8, 0.3))
    pristine = t.home
    trace = tmp_path / "trace.txt"
    probe = tmp_path / "probe"
    shutil.copytree(pristine, probe)
    ok(cli(probe, "ledger", "merge", "--data", t.lf, fault=f"trace:{trace}"))
    steps = trace.read_text(encoding="utf-8").splitlines()
    assert any("merge: append the merge entry" in s for s in steps)
    assert any("merge: append the merged_into entry" in s for s in steps)
    assert len(steps) >= 6, steps
    for n in range(1, len(steps) + 1):
        home = tmp_path / f"kill{n}"
        shutil.copytree(pristine, home)
        r = cli(home, "ledger", "merge", "--data", t.lf, fault=f"kill:{n}")
        assert r.returncode == -signal.SIGKILL, (n, steps[n - 1], r.returncode, r.stderr[-300:])
        for d in (t.a, t.b):
            assert spent(home, d) >= 0.3 - 1e-12, (n, steps[n - 1], d)
        for data in (t.lf, t.crlf):
            try:
                found = ledger_for(home, file_sha256(data))
            except recognition.DuplicateDatasets as exc:
                assert {t.a, t.b} <= set(exc.datasets), n
                continue
            assert found.dataset is not None
            h = spent_of(found.read())
            assert h is not None and h.spent_epsilon == pytest.approx(0.6), (n, steps[n - 1], data)
        again = cli(home, "ledger", "merge", "--data", t.lf)
        assert again.returncode == 0 and "Traceback" not in again.stderr, (n, steps[n - 1], again.stderr)
        assert spent(home, t.b) == pytest.approx(0.6), (n, steps[n - 1])
        for data in (t.lf, t.crlf):
            found = ledger_for(home, file_sha256(data))
            h = spent_of(found.read())
            assert found.dataset == t.b and h is not None, (n, data)
            assert (h.spent_epsilon, h.budget.epsilon) == (pytest.approx(0.6), 0.8), (n, steps[n - 1])
        entries = ledger(home, t.b).verify()
        assert [e.type for e in entries].count("merge") == 1, (n, steps[n - 1])
        shutil.rmtree(home)


def test_a_broken_ledger_of_two_datasets_is_acknowledged_then_merged(tmp_path: Path) -> None:
    """An attacker's pass: with a table held by two datasets, one of whose ledgers was cut (a backup restored),
    acknowledge said "merge them" and merge said "acknowledge it": the table was refused for good. The broken
    ledger is acknowledged as the file's own dataset (a repair: nothing charged, every spend carried over); then
    the merge goes through, and nothing was lowered."""
    t = make_twins(tmp_path, a=(1.0, 0.3), b=(0.8, 0.3))
    path = ledger(t.home, t.a).path
    assert path is not None
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # its last entry cut, as an older backup put back
    r = cli(t.home, "ledger", "merge", "--data", t.lf)
    assert r.returncode == 3 and "acknowledge" in r.stderr, r.stderr
    r = cli(t.home, "ledger", "acknowledge", "--data", t.lf, "--reason", "a backup was restored")
    assert r.returncode != 0 and "--cost 3=" in r.stderr, r.stderr[
        -1500:
    ]  # the acknowledgement's own questions
    r = cli(
        t.home, "ledger", "acknowledge", "--data", t.lf, "--reason", "a backup was restored", "--cost", "3=0"
    )
    assert r.returncode == 0, r.stderr[-1500:]  # entry 3 was the package entry, of no cost
    r = cli(
        t.home, "release", plan_file(tmp_path, "small", 0.8, 0.05), "--data", t.lf, "--out", tmp_path / "x"
    )
    assert r.returncode == 3 and "merge" in r.stderr, r.stderr  # still two datasets: never one picked
    ok(cli(t.home, "ledger", "merge", "--data", t.lf))
    assert spent(t.home, t.b) >= 0.6 - 1e-9  # both releases counted, under the smaller budget
