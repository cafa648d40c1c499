"""Review misses nothing: extra or missing files, a removed or duplicated entry, a changed top-level field, an empty
exported ledger; and a package reviewed against a later export of its ledger shows a rollback behind its head."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.carryover import CostsNeeded, StatedCost, parse_stated_cost
from dpdesk.core.ledger.entries import GENESIS, entry_hash
from dpdesk.core.publish.review import review
from dpdesk.core.release.steps import release
from tests.core.test_package import plan, planted


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One release (its package) and its ledger with one more entry after the package's."""
    root = tmp_path_factory.mktemp("made")
    home = root / "home"
    data = planted(root)
    pkg = root / "pkg"
    result = release(plan(), data, home, pkg)
    assert result.ledger is not None
    with result.ledger.transaction() as tx:
        settings = tx.settings()
        tx.append("settings", {"settings": settings, "reason": "unchanged, to move the head on"})
    assert result.ledger.path is not None
    return {"home": home, "data": data, "pkg": pkg, "ledger": result.ledger.path, "sha": result.ledger.key}


def fresh(made: dict[str, Any], tmp_path: Path) -> Path:
    out = tmp_path / "pkg"
    shutil.copytree(made["pkg"], out)
    return out


def edit_ledger_json(pkg: Path, change: Callable[[dict[str, Any]], None]) -> None:
    lj = pkg / "ledger.json"
    d = json.loads(lj.read_text(encoding="utf-8"))
    change(d)
    lj.write_text(json.dumps(d, indent=2), encoding="utf-8")


def problems(path: Path, against: Path | None = None) -> list[str]:
    r = review(path) if against is None else review(path, against)
    assert r.intact == (not r.problems)
    return r.problems


def test_an_untouched_package_is_intact_and_carries_its_head(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    r = review(pkg)
    assert r.intact, r.problems
    entries = json.loads((pkg / "ledger.json").read_text(encoding="utf-8"))
    package = entries["entries"][-1]
    assert entries["head"] == {"seq": package["seq"], "hash": package["hash"]} == r.head
    assert package["settings_hash"] == entries["entries"][0]["hash"]


def test_an_added_file_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    shutil.copy(made["data"], pkg / "raw.csv")
    assert any("raw.csv is not part of the release package" in p for p in problems(pkg))
    (pkg / "raw.csv").unlink()
    (pkg / "extra").mkdir()
    assert any("extra is not part of the release package" in p for p in problems(pkg))


def test_a_missing_file_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    (pkg / "report.pdf").unlink()
    assert "report.pdf is missing" in problems(pkg)


def test_a_removed_settings_entry_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    edit_ledger_json(pkg, lambda d: d["entries"].pop(0))
    assert any("settings entry the package entry names is missing" in p for p in problems(pkg))


def test_a_duplicated_entry_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    edit_ledger_json(pkg, lambda d: d["entries"].insert(1, d["entries"][0]))
    assert any("entry 1 appears more than once" in p for p in problems(pkg))
    pkg2 = tmp_path / "second"
    shutil.copytree(made["pkg"], pkg2)
    edit_ledger_json(pkg2, lambda d: d["entries"].append(d["entries"][1]))
    assert any("appears more than once" in p for p in problems(pkg2))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d.update(dataset="ds-" + "0" * 32), "its dataset field"),
        (lambda d: d.update(note="trust me"), "unexpected field 'note'"),
        (lambda d: d["head"].update(seq=99), "its head field is not the package entry's"),
        (lambda d: d.pop("head"), "its head field is missing"),
    ],
)
def test_a_changed_top_level_field_is_named(
    made: dict[str, Any], tmp_path: Path, change: Callable[[dict[str, Any]], None], named: str
) -> None:
    pkg = fresh(made, tmp_path)
    edit_ledger_json(pkg, change)
    assert any(named in p for p in problems(pkg)), problems(pkg)


def test_an_empty_exported_ledger_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert any("the exported ledger is empty" in p for p in problems(empty))


def test_review_exits_1_naming_an_added_file(made: dict[str, Any], tmp_path: Path) -> None:
    pkg = fresh(made, tmp_path)
    (pkg / "people.csv").write_text("name\nAnn\n", encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "review", str(pkg)],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(tmp_path / "h")},
        check=False,
    )
    assert r.returncode == 1 and "people.csv is not part of the release package" in r.stdout


# ----------------------------------------------------------------------------- against a later export


def export(made: dict[str, Any], tmp_path: Path, keep: int | None = None) -> Path:
    raw = made["ledger"].read_bytes().split(b"\n")[:-1]
    out = tmp_path / f"export-{keep}.jsonl"
    out.write_bytes(b"".join(line + b"\n" for line in raw[:keep]))
    return out


def test_a_later_export_that_reaches_the_head_is_intact(made: dict[str, Any], tmp_path: Path) -> None:
    later = export(made, tmp_path)
    r = review(made["pkg"], later)
    assert r.intact, r.problems
    assert any("reaches this head (entry 3 of its 4)" in n for n in r.notes)
    earlier = export(made, tmp_path, 3)
    assert review(earlier, later).intact  # an earlier export against a later one


def test_a_later_export_rolled_back_behind_the_package_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    later = export(made, tmp_path, 2)  # cut before the package entry: a valid chain on its own
    assert review(later).intact
    found = problems(made["pkg"], later)
    assert any("ends at entry 2, but entry 3" in p and "rolled back behind it" in p for p in found), found
    assert any("rolled back" in p for p in problems(export(made, tmp_path, 3), later))
    r = subprocess.run(
        [sys.executable, "-m", "dpdesk", "review", str(made["pkg"]), "--against", str(later)],
        capture_output=True,
        text=True,
        env={**os.environ, "DPDESK_HOME": str(tmp_path / "h")},
        check=False,
    )
    assert r.returncode == 1 and "rolled back behind it" in r.stdout


def test_a_later_export_of_a_replaced_ledger_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    forged, prev = [], GENESIS
    for line in made["ledger"].read_bytes().split(b"\n")[:-1]:
        n = {k: v for k, v in json.loads(line).items() if k != "hash"}
        n["prev"], n["time"] = prev, "2000-01-01T00:00:00+00:00"
        n["hash"] = prev = entry_hash(n)
        forged.append(n)
    later = tmp_path / "forged.jsonl"
    later.write_text("".join(json.dumps(e) + "\n" for e in forged), encoding="utf-8")
    assert review(later).intact
    assert any("does not hold entry 3" in p for p in problems(made["pkg"], later))


def test_a_later_export_restarted_by_an_acknowledgement_that_carries_the_release(
    made: dict[str, Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(made["home"], home)
    lg = Ledger.for_dataset(home, made["sha"])
    assert lg.path is not None
    raw = lg.path.read_bytes()
    lines = raw.split(b"\n")[:-1]
    first = json.loads(lines[0])
    first["reason"] = "edited"  # entry 1 (the settings) edited: 2-4 still verify from the recorded head down
    lg.path.write_bytes(b"\n".join([json.dumps(first).encode(), *lines[1:]]) + b"\n")
    with pytest.raises(CostsNeeded) as caught:
        lg.acknowledge("an edited entry")  # the edited entry's cost must be stated, even a settings entry's
    (u,) = caught.value.missing
    offered = u.offered()
    assert u.label == "1" and not caught.value.settings_needed and offered is not None
    lg.acknowledge("an edited entry", costs=[StatedCost("1", offered)])
    later = tmp_path / "after-ack.jsonl"
    shutil.copy(lg.path, later)
    r = review(made["pkg"], later)
    assert r.intact, r.problems
    assert any("restarted by an acknowledgement" in n for n in r.notes)
    # a chain restarted without this release (cut before its spend, then acknowledged) is named
    home2 = tmp_path / "home2"
    shutil.copytree(made["home"], home2)
    lg2 = Ledger.for_dataset(home2, made["sha"])
    assert lg2.path is not None
    lg2.path.write_bytes(raw.split(b"\n")[0] + b"\n")
    with pytest.raises(CostsNeeded) as caught:
        lg2.acknowledge(
            "restored from a backup by mistake"
        )  # entries 2-4 are missing up to the recorded head
    assert [u.label for u in caught.value.missing] == ["2-4"]
    spend = json.loads(raw.split(b"\n")[1])
    eps = math.fsum(c["epsilon"] for c in spend["costs"])
    entry = lg2.acknowledge("restored from a backup by mistake", costs=[parse_stated_cost(f"2-4={eps!r}")])
    assert math.fsum(c["epsilon"] for r in entry.carried for c in r["costs"]) >= eps  # not less spent
    # the release is carried over as a stated cost, not as itself: review cannot tell, and names the rollback
    assert any("rolled back behind it" in p for p in problems(made["pkg"], lg2.path))


def test_a_later_export_of_another_dataset_is_named(made: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    e = {"seq": 1, "type": "settings", "time": "t", "dataset": "ds-" + "1" * 32, "prev": GENESIS}
    e["settings"], e["reason"] = plan().settings(), "x"  # a whole settings entry of another dataset
    e["hash"] = entry_hash(e)
    other.write_text(json.dumps(e) + "\n", encoding="utf-8")
    assert any("the ledger of another dataset" in p for p in problems(made["pkg"], other))
