"""Issue 24, items 2 and 3: nothing appended to a ledger can lower what is spent.

An attacker who can only append to a ledger file (``chattr +a`` holds against anything else) adds one line, chained
as dpdesk chains them (``prev`` the last entry's hash, its own hash computed by the test): a checkpoint whose state
says nothing was spent, a settings entry raising the budget or changing the unit of privacy, an acknowledgement, a
link, declare-new, declared-new, forget-identity or govern entry, a correction or spend with a negative cost, a spend
that costs nothing, a simulation with negative runs. Then every command is run in turn, twice (the first one used to
move the recorded head up to the forged line, which the next one then trusted): ``ledger``, ``budget``,
``release``, ``ledger verify``, ``ledger export``.

The property: either every command exits 3 (the line is named broken), or at every point the spent total is no
lower than before, a governed dataset's budget no higher, the unit of privacy the same and the data file still
names the same dataset. Before the fix, the forged checkpoint read as "0 release(s)" and a settings line raised a
governed dataset's budget to 100 while ``ledger verify`` said "chain verified".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dpdesk.cli import main
from dpdesk.core.ledger.checkpoint import Spent, state_of
from dpdesk.core.ledger.entries import entry_hash, new_dataset_id, parse_entries
from dpdesk.core.model.spec import canonical_json
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow
DATA = SAMPLES / "census_sample.csv"
Entries = list[dict[str, Any]]


def _cli(home: Path, *args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _plan(folder: Path, settings: dict[str, Any] | None = None) -> Path:
    """One count of epsilon 0.4 of a budget of 1.0 (two releases fit, a third does not); with ``settings``, the
    plan of whoever wants them (its budget and unit of privacy theirs), named after them."""
    d = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    d["queries"] = [q for q in d["queries"] if q["name"] == "people"]
    d["queries"][0]["epsilon"] = 0.4
    if settings is not None:
        d["budget"], d["privacy_unit"] = settings["budget"], settings["privacy_unit"]
    p = folder / ("plan.json" if settings is None else "wanted.json")
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two starting homes, each with one release of 0.4 of a budget of 1.0: one ungoverned, one governed by Ann
    (whose policy does not require signed plans)."""
    root = tmp_path_factory.mktemp("append-only")
    plan = _plan(root)
    out: dict[str, Path] = {}
    for name in ("ungoverned", "governed"):
        home = root / name
        r = _cli(home, "release", plan, "--data", DATA, "--out", root / f"{name}-first")
        assert r.returncode == 0, r.stderr
        out[name] = home
    keys = root / "ann"
    keys.mkdir()
    (keys / "p").write_text("Ann officer passphrase\n", encoding="utf-8")
    (keys / "r").write_text("Ann recovery passphrase\n", encoding="utf-8")
    r = _cli(
        root / "keyhome",
        *("officer", "create", "--name", "Ann", "--out", keys / "k"),
        *("--passphrase-file", keys / "p", "--recovery-passphrase-file", keys / "r"),
    )
    assert r.returncode == 0, r.stderr
    public = next((keys / "k").glob("*-public.json"))
    r = _cli(out["governed"], "ledger", "govern", "--data", DATA, "--officer", public)
    assert r.returncode == 0, r.stderr
    return out


def _ledger(home: Path) -> Path:
    (path,) = (home / "ledgers").glob("ds-*.jsonl")
    return path


def _entries(home: Path) -> Entries:
    return [json.loads(x) for x in _ledger(home).read_text(encoding="utf-8").splitlines()]


def _settings(es: Entries) -> dict[str, Any]:
    return next(e["settings"] for e in reversed(es) if isinstance(e.get("settings"), dict))


def _spend(es: Entries) -> dict[str, Any]:
    return next(e for e in reversed(es) if e["type"] == "spend")


def _cost(epsilon: float) -> list[dict[str, Any]]:
    return [{"name": "people", "epsilon": epsilon, "delta": 0.0, "rho": 0.0}]


def _checkpoint(es: Entries) -> tuple[str, dict[str, Any]]:
    st = state_of(parse_entries(es)).to_dict()
    st["state"]["spent"] = Spent(budget_delta=st["state"]["spent"]["budget_delta"]).to_dict()
    return "checkpoint", st


def _raised(es: Entries) -> tuple[str, dict[str, Any]]:
    s = json.loads(json.dumps(_settings(es)))
    s["budget"]["epsilon"] = 100.0
    return "settings", {"settings": s, "reason": "more"}


def _unit(es: Entries) -> tuple[str, dict[str, Any]]:
    s = json.loads(json.dumps(_settings(es)))
    s["privacy_unit"] = {"neighbouring": "replace", "max_rows_per_person": 1}
    return "settings", {"settings": s, "reason": "another unit"}


def _acknowledge(es: Entries) -> tuple[str, dict[str, Any]]:
    s = json.loads(json.dumps(_settings(es)))
    s["budget"]["epsilon"] = 100.0
    return "acknowledge", {
        "reason": "forged",
        "problem": "none",
        "broken_file": "x.jsonl",
        "broken_sha256": None,
        "carried": [],
        "settings": s,
        "settings_from": "stated",
        "stated": [],
    }


def _correction(es: Entries) -> tuple[str, dict[str, Any]]:
    sp = _spend(es)
    rel = {
        "release_id": sp["release_id"],
        "seq": sp["seq"],
        "recorded": sp["costs"],
        "costs": _cost(-0.4),
        "added_epsilon": -0.8,
        "why": [],
    }
    return "correction", {"reason": "forged", "releases": [rel], "added_epsilon": -0.8}


def _spend_costing(epsilon: float) -> Callable[[Entries], tuple[str, dict[str, Any]]]:
    def make(es: Entries) -> tuple[str, dict[str, Any]]:
        sp = {
            k: v for k, v in _spend(es).items() if k not in ("seq", "type", "time", "dataset", "prev", "hash")
        }
        sp["release_id"] = "f" * 32
        sp["costs"] = _cost(epsilon)
        sp["charged"] = {**sp["charged"], "epsilon": epsilon, "epsilon_exact": str(epsilon)}
        return "spend", sp

    return make


def _govern(es: Entries) -> tuple[str, dict[str, Any]]:
    gov = next((e["governance"] for e in reversed(es) if e["type"] == "govern"), None)
    if gov is None:  # the ungoverned dataset: a forged first governance (a key the attacker holds, say)
        return "govern", {"governance": {"dataset": es[0]["dataset"], "forged": True}}
    gov = json.loads(json.dumps(gov))
    gov["policy"] = {"require_signed_plans": not gov["policy"]["require_signed_plans"]}
    return "govern", {"governance": gov}


FORGERIES: dict[str, Callable[[Entries], tuple[str, dict[str, Any]]]] = {
    "a checkpoint with nothing spent": _checkpoint,
    "a settings entry raising the budget": _raised,
    "a settings entry changing the unit of privacy": _unit,
    "an acknowledgement raising the budget": _acknowledge,
    "a link entry": lambda es: ("link", {"decided_by": "curator"}),
    "a declare_new entry": lambda es: ("declare_new", {"new_dataset": new_dataset_id(), "reason": "x"}),
    "a declared_new entry": lambda es: ("declared_new", {"resembles": new_dataset_id(), "reason": "x"}),
    "a forget_identity entry": lambda es: ("forget_identity", {"reason": "x"}),
    "a govern entry": _govern,
    "a correction with a negative cost": _correction,
    "a spend with a negative charge": _spend_costing(-0.4),
    "a spend that costs nothing": _spend_costing(0.0),
    "a simulation with negative runs": lambda es: (
        "simulate",
        {"runs": -50, "plan_hash": _spend(es)["plan_hash"], "charged": None},
    ),
}


def append_forged(home: Path, kind: str, payload: dict[str, Any]) -> None:
    """Append one line, chained as dpdesk chains its entries (the attacker computes the hashes)."""
    es = _entries(home)
    last = es[-1]
    entry = {
        "seq": last["seq"] + 1,
        "type": kind,
        "time": last["time"],
        "dataset": last["dataset"],
        "prev": last["hash"],
        **payload,
    }
    entry["hash"] = entry_hash(entry)
    with _ledger(home).open("ab") as f:  # appended, nothing else edited
        f.write((canonical_json(entry) + "\n").encode("utf-8"))


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def reading(capsys: pytest.CaptureFixture[str], plan: Path) -> tuple[int, Any]:
    """``budget --json``: (exit code, what it says) — the spent total, the budget and the unit in force."""
    code, out, _err = run(capsys, "budget", plan, "--data", DATA, "--json")
    return code, (json.loads(out) if code in (0, 1) else None)


@pytest.mark.parametrize("governed", [False, True], ids=["ungoverned", "governed"])
@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_an_appended_line_never_lowers_what_is_spent_or_every_command_exits_3(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    forgery: str,
    governed: bool,
) -> None:
    holds(homes, tmp_path, monkeypatch, capsys, forgery, governed=governed)


# the issue's cases by name (for the mutants' table, which names tests, not parameters)
def test_a_forged_checkpoint_with_nothing_spent_is_named_broken_by_every_command(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert holds(homes, tmp_path, monkeypatch, capsys, "a checkpoint with nothing spent", governed=False)


def test_an_appended_settings_line_changing_the_unit_is_named_broken_by_every_command(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert holds(
        homes, tmp_path, monkeypatch, capsys, "a settings entry changing the unit of privacy", governed=False
    )


def test_an_appended_simulation_with_negative_runs_is_named_broken_by_every_command(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert holds(homes, tmp_path, monkeypatch, capsys, "a simulation with negative runs", governed=False)


def holds(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    forgery: str,
    *,
    governed: bool,
) -> bool:
    """The property, for one forgery; True when every command named it broken (exit 3), False when the commands
    went on and nothing was lowered, raised or changed (an assertion error otherwise)."""
    home = tmp_path / "home"
    shutil.copytree(homes["governed" if governed else "ungoverned"], home)
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("LANGUAGE", "en")
    plan = _plan(tmp_path)
    code, before = reading(capsys, plan)
    assert code == 0
    _c, out, _e = run(capsys, "ledger", "head", "--data", DATA, "--json")
    dataset = json.loads(out)["dataset"]
    unit = _settings(_entries(home))["privacy_unit"]
    spent_before = Decimal(before["methods"]["sequential"]["spent"]["epsilon_exact"])

    append_forged(home, *FORGERIES[forgery](_entries(home)))
    plan = _plan(tmp_path, _settings(_entries(home)))  # the attacker's plan fits the settings they wrote

    codes: list[tuple[str, int]] = []
    readings: list[Any] = []
    for n in range(2):
        for name, args in (
            ("ledger", ("ledger",)),
            ("budget", ("budget", plan, "--data", DATA, "--json")),
            ("release", ("release", plan, "--data", DATA, "--out", tmp_path / f"out{n}")),
            ("ledger verify", ("ledger", "verify", "--data", DATA)),
            ("ledger export", ("ledger", "export", "--data", DATA, "--out", tmp_path / f"l{n}.jsonl")),
        ):
            c, out, _err = run(capsys, *args)
            codes.append((name, c))
            if name == "budget" and c in (0, 1):
                readings.append(json.loads(out))
            elif name == "release" and c == 0:
                c2, after = reading(capsys, plan)
                codes.append(("budget", c2))
                readings.append(after)
    if any(c == 3 for _n, c in codes):
        assert all(c == 3 for _n, c in codes), (forgery, codes)  # named broken by every command
        return True
    for r in readings:
        spent = Decimal(r["methods"]["sequential"]["spent"]["epsilon_exact"])
        assert spent >= spent_before, (forgery, spent, spent_before)
        assert spent <= Decimal(str(before["budget"]["epsilon"])), (forgery, spent, codes)  # never overspent
        if governed:
            assert r["budget"]["epsilon"] <= before["budget"]["epsilon"], (forgery, r["budget"])
    assert _settings(_entries(home))["privacy_unit"] == unit, forgery
    _c, out, _e = run(capsys, "ledger", "head", "--data", DATA, "--json")
    assert json.loads(out)["dataset"] == dataset, forgery
    return False


def test_a_governed_settings_line_without_approval_is_broken_even_with_the_head_moved_to_it(
    homes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 3: a governed dataset whose policy does not require signed plans; a settings line raising the budget to
    100 appended and the register's head moved to it (as the code before this fix did by itself, or a forger who
    edits the register): ``ledger verify`` said "chain verified" and releases went on against 100. Every command
    now names the entry without the officer's approval (exit 3)."""
    from dpdesk.core.ledger import anchor

    home = tmp_path / "home"
    shutil.copytree(homes["governed"], home)
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("LANGUAGE", "en")
    append_forged(home, *_raised(_entries(home)))
    last = _entries(home)[-1]
    record = anchor.register_folder(home) / f"{last['dataset']}.json"
    rec = json.loads(record.read_text(encoding="utf-8"))
    rec["head"] = {"seq": last["seq"], "hash": last["hash"]}
    rec["ever"] = last["seq"]
    record.write_text(json.dumps(rec), encoding="utf-8")
    plan = _plan(tmp_path, _settings(_entries(home)))
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    said = " ".join((out + err).split())  # the officer named by key first, then by name (issue 24, item 8)
    assert (
        code == 3 and f"entry {last['seq']} changes a dataset governed by key " in said and "(Ann)" in said
    ), (
        code,
        out,
        err,
    )
    for args in (
        ("budget", plan, "--data", DATA),
        ("release", plan, "--data", DATA, "--out", tmp_path / "out"),
        ("ledger", "export", "--data", DATA, "--out", tmp_path / "l.jsonl"),
    ):
        code, out, err = run(capsys, *args)
        assert code == 3 and "without their valid approval" in out + err, (args, code, out, err)
