"""Issue 12, "JSON only at the edges": an attacker's pass over the typed ledger entries.

Ledger entries became typed, immutable :class:`dpdesk.core.ledger.entries.Entry` objects through the engine, the
services, the app and the command line; the promise was no change in behaviour: the same problems named, the
same output, no traceback on hostile input. Each test here failed on the typed code before its fix:

- a package's ``ledger.json`` entry of an unknown type dropped out of ``dpdesk review --against`` (the entry a
  later export does not hold, or the other dataset it claims, was no longer named), out of the ``--json``
  summary's count and out of the app's review window;
- a package entry's stored ``time`` of null was printed as an empty text (``Entry.get`` answered the typed
  field, not what the package holds);
- a package whose spend records ``charged`` (or ``plan``) as null ended ``dpdesk review`` and the app's review
  window in a traceback (already so before the typed entries);
- a spend whose recorded plan is text or a list: ``SpendEntry.plan`` made it an object (a traceback for text,
  another plan's problems named for a list) where ``ledger export-release`` and ``ledger statement`` named it;
- a package written again (``ledger export-release``) named its release as text in its package entry, not as
  the spend entry holds it.

(Whether a checkpoint is trusted no longer depends on which source files were hashed: the costing rules the code
declares decide it, pinned by ``tests/core/test_golden_costs.py``; see ``tests/core/test_checkpoint.py``.)

Run in-process (``dpdesk.cli.main``); deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.ledger.entries import entry_hash, salvaged
from tests.cli.test_govern import DATA, PLAN, run


def _rehash(e: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in e.items() if k != "hash"}
    return {**body, "hash": entry_hash(body)}


@pytest.fixture
def package(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, Path]:
    """A release package and a later export of its ledger (which reaches the package's head)."""
    out = tmp_path / "pkg"
    code, _o, err = run(capsys, "release", PLAN, "--data", DATA, "--out", out)
    assert code == 0, err
    export = tmp_path / "later.jsonl"
    code, _o, err = run(capsys, "ledger", "export", "--data", DATA, "--out", export)
    assert code == 0, err
    return out, export


def _forge(folder: Path, change: Any) -> None:
    path = folder / "ledger.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _spend(data: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in data["entries"] if e["type"] == "spend")


def _add_unknown(dataset: str | None = None) -> Any:
    def change(data: dict[str, Any]) -> None:
        spend = _spend(data)
        forged = {**spend, "type": "bogus", "seq": 30, "dataset": dataset or spend["dataset"]}
        data["entries"].append(_rehash(forged))

    return change


def test_an_entry_of_an_unknown_type_is_still_compared_with_a_later_export(
    capsys: pytest.CaptureFixture[str], package: tuple[Path, Path]
) -> None:
    folder, later = package
    _forge(folder, _add_unknown())
    code, out, err = run(capsys, "review", folder, "--against", later)
    assert code == 1 and "Traceback" not in err
    assert "ledger.json: entry 30 is a bogus entry, which a package does not carry" in out
    assert f"entry 30 is not the one the later ledger {later} holds at that place" in out
    assert "reaches this head" not in out  # never said of a package holding an entry the later ledger lacks
    code, out, _err = run(capsys, "review", folder, "--against", later, "--json")
    summary = json.loads(out)
    assert code == 1 and summary["entries"] == 4 and summary["notes"] == []


def test_an_entry_of_an_unknown_type_of_another_dataset_is_named(
    capsys: pytest.CaptureFixture[str], package: tuple[Path, Path]
) -> None:
    folder, later = package
    _forge(folder, _add_unknown("ds-" + "0" * 32))
    code, out, _err = run(capsys, "review", folder, "--against", later)
    assert code == 1
    assert f"{later} is the ledger of another dataset" in out
    assert "reaches this head" not in out


def test_the_review_window_lists_an_entry_of_an_unknown_type(
    qtbot: Any, capsys: pytest.CaptureFixture[str], package: tuple[Path, Path]
) -> None:
    from PySide6.QtWidgets import QTableWidget

    from dpdesk.core.publish.review import review
    from dpdesk.gui.views.review_window import ReviewWindow

    folder, _later = package
    _forge(folder, _add_unknown())
    result = review(folder)
    w = ReviewWindow(result, str(folder))
    qtbot.addWidget(w)
    table = w.findChildren(QTableWidget)[-1]  # the ledger entries, last
    rows = [[table.item(r, c).text() for c in range(4)] for r in range(table.rowCount())]
    assert [r[:2] for r in rows] == [["1", "settings"], ["2", "release"], ["3", "package"], ["30", "bogus"]]


def test_a_package_entry_reads_its_chain_fields_as_stored(
    capsys: pytest.CaptureFixture[str], package: tuple[Path, Path]
) -> None:
    stored = {
        "seq": 2,
        "type": "spend",
        "time": None,
        "dataset": "ds-x",
        "prev": None,
        "hash": "h",
        "values": [],
    }
    e = salvaged(stored)
    assert e.to_dict() == stored and e.get("time") is None and e.get("prev") is None
    assert salvaged({"seq": 2, "type": "spend"}).get("time", "?") == "?"  # a missing one stays missing
    folder, _later = package

    def null_time(data: dict[str, Any]) -> None:
        i = data["entries"].index(_spend(data))
        data["entries"][i] = _rehash({**_spend(data), "time": None})

    _forge(folder, null_time)
    code, out, _err = run(capsys, "review", folder)
    assert code == 1 and "the package entry does not belong to this release" in out  # it names the old hash
    release = next(line for line in out.splitlines() if line.strip().startswith("release "))
    assert " of None, dataset " in release  # what the package holds, as before the typed entries


@pytest.mark.parametrize("field", ["charged", "plan"])
def test_a_spend_recording_null_is_reviewed_without_a_traceback(
    qtbot: Any, capsys: pytest.CaptureFixture[str], package: tuple[Path, Path], field: str
) -> None:
    from dpdesk.core.publish.review import review
    from dpdesk.gui.views.review_window import ReviewWindow

    folder, later = package

    def null(data: dict[str, Any]) -> None:
        i = data["entries"].index(_spend(data))
        data["entries"][i] = _rehash({**_spend(data), field: None})

    _forge(folder, null)
    if field == "plan":  # the window falls back on the spend's plan when plan.json cannot be read
        (folder / "plan.json").unlink()
    for against in ((), ("--against", later)):
        code, out, err = run(capsys, "review", folder, *against)
        assert code == 1 and "Traceback" not in err, err
        assert "the package entry does not belong to this release" in out
        assert out.splitlines()[-1].startswith("NOT INTACT")
    w = ReviewWindow(review(folder), str(folder))  # the app's window: built, no exception
    qtbot.addWidget(w)
    assert "NOT INTACT" in w.status.text()


# a hand-edited ledger whose chain and register were rewritten to fit (an unkeyed hash proves only the chain) ------


def _forge_ledger(home: Path, seq: int, change: Any) -> list[dict[str, Any]]:
    """Change entry ``seq`` of the home's one ledger, re-link the chain after it and move the register's head."""
    from dpdesk.core.model.spec import canonical_json

    path = next(p for p in (home / "ledgers").glob("ds-*.jsonl"))
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    change(entries[seq - 1])
    for i in range(seq - 1, len(entries)):
        if i > 0:
            entries[i]["prev"] = entries[i - 1]["hash"]
        entries[i] = _rehash(entries[i])
    path.write_text("".join(canonical_json(e) + "\n" for e in entries), encoding="utf-8")
    register = home / "ledgers" / "heads" / f"{path.stem}.json"
    rec = json.loads(register.read_text(encoding="utf-8"))
    rec["head"] = {"seq": len(entries), "hash": entries[-1]["hash"]}
    register.write_text(json.dumps(rec), encoding="utf-8")
    return entries


@pytest.mark.parametrize(
    ("plan", "said"),
    [("p", "the plan must be an object, not text"), ([], "the plan must be an object, not a list")],
)
def test_a_recorded_plan_that_is_not_an_object_is_named(
    capsys: pytest.CaptureFixture[str], package: tuple[Path, Path], dpdesk_home: Path, plan: Any, said: str
) -> None:
    _forge_ledger(dpdesk_home, 2, lambda e: e.__setitem__("plan", plan))
    out = package[0].parent
    for args in (
        ("ledger", "export-release", "2", "--data", DATA, "--out", out / "again"),
        ("ledger", "statement", "--data", DATA, "--out", out / "statement.pdf"),
    ):
        code, _o, err = run(capsys, *args)
        assert code == 2 and said in err and "Traceback" not in err, (args, err)


def test_a_package_written_again_names_the_release_as_its_spend_entry_does(
    capsys: pytest.CaptureFixture[str], package: tuple[Path, Path], dpdesk_home: Path, tmp_path: Path
) -> None:
    _forge_ledger(dpdesk_home, 2, lambda e: e.__setitem__("release_id", 5))
    code, _o, err = run(capsys, "ledger", "export-release", "2", "--data", DATA, "--out", tmp_path / "again")
    assert code == 0, err
    copies = json.loads((tmp_path / "again" / "ledger.json").read_text(encoding="utf-8"))["entries"]
    spend, pkg = (next(e for e in copies if e["type"] == t) for t in ("spend", "package"))
    assert spend["release_id"] == 5 and pkg["release_id"] == 5  # as stored, the JSON the old code wrote
