"""A ledger forged with its hashes recomputed (and the register's head with them) so that its chain verifies, but
whose lines lack what every dpdesk version wrote (a spend's costs or charge, a settings entry's budget, a time as
text): each command names the damaged line and ends in exit 3, never a traceback (the attacker's pass over the typed
entries found `ledger`, `budget` and `ledger statement` crashing on them, as the code before them did)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger import anchor
from dpdesk.core.ledger.entries import GENESIS, entry_hash
from dpdesk.core.plan.reader import load_plan
from dpdesk.core.release.steps import release
from tests.core.test_recost import cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "resources" / "samples" / "census_sample.csv"
PLAN = ROOT / "resources" / "samples" / "cps_wages_plan.json"


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda e: e.pop(key)


FORGERIES: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "a spend without its costs": ("spend", _drop("costs")),
    "a spend without its charge": ("spend", _drop("charged")),
    "a spend whose charge is text": ("spend", lambda e: e.update(charged="0.1")),
    "a settings entry whose budget is text": ("settings", lambda e: e["settings"].update(budget="big")),
    "a settings entry without its method": ("settings", lambda e: e["settings"].pop("accounting")),
    "a time that is a number": ("spend", lambda e: e.update(time=12)),
}


def _forge(home: Path, kind: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit the first entry of ``kind``, re-hash and re-link the chain, and move the register's head to its end."""
    (path,) = (home / "ledgers").glob("ds-*.jsonl")
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    edit(next(e for e in lines if e["type"] == kind))
    prev = GENESIS
    for e in lines:
        e["prev"] = prev
        e.pop("hash")
        e["hash"] = prev = entry_hash(e)
    path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in lines), encoding="utf-8")
    record = anchor.register_folder(home) / f"{path.stem}.json"
    rec = json.loads(record.read_text(encoding="utf-8"))
    rec["head"] = {"seq": lines[-1]["seq"], "hash": lines[-1]["hash"]}
    record.write_text(json.dumps(rec), encoding="utf-8")


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("released") / "home"
    release(load_plan(PLAN), DATA, home)
    return home


@pytest.mark.slow
@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_line_without_what_its_type_holds_is_named_never_a_traceback(
    forgery: str, released: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(released, home)
    _forge(home, *FORGERIES[forgery])
    runs = [
        cli("ledger", "--data", str(DATA), home=home),
        cli("budget", str(PLAN), "--data", str(DATA), home=home),
        cli("ledger", "statement", "--data", str(DATA), "--out", str(tmp_path / "s.pdf"), home=home),
    ]
    for r in runs:
        assert "Traceback" not in r.stderr, (forgery, r.stderr[-600:])
        assert r.returncode == 3, (forgery, r.returncode, r.stderr[-600:])
    for r in runs[:2]:  # the statement is written, saying the chain is broken (its exit code says it too)
        assert "does not hold what a" in r.stderr + r.stdout and "damaged or edited" in r.stderr + r.stdout, (
            forgery,
            r.stderr,
        )
