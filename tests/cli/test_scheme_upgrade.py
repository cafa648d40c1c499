"""Issue 30 item 2, attacked: an older home's dataset known by several scheme-1 contents (a table linked to it,
say) keeps every one of them when it gets its scheme-2 key from one.

A dataset recorded before scheme 2 gets its scheme-2 key at its next release, from the table released. When the
dataset owns other tables too (``ledger link``), their scheme-2 keys are not known yet: a re-saved copy of such a
table must still be found by its scheme-1 key, never a fresh dataset with a fresh budget. Run in-process, with
the real CLI; the older version is the release and link without scheme 2 (as in
``tests/core/test_typed_identity.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpdesk.core.identity import recognition
from dpdesk.core.release import steps
from tests.cli.test_govern import DATA, PLAN, head, run


def _halves(tmp_path: Path) -> tuple[Path, Path]:
    """Two tables of the sample's columns sharing no row: neither a near-copy of the other."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    rows = lines[1:]
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("\n".join([lines[0], *rows[: len(rows) // 2]]) + "\n", encoding="utf-8")
    second.write_text("\n".join([lines[0], *rows[len(rows) // 2 :]]) + "\n", encoding="utf-8")
    return first, second


def _scheme2_recorded(home: Path, dataset: str) -> bool:
    record = json.loads((home / "identity" / "datasets" / f"{dataset}.json").read_text("utf-8"))
    return any(s.get("scheme") == 2 for s in record["contents"].values())


def test_a_linked_table_of_an_older_dataset_is_still_found_after_the_upgrade(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _halves(tmp_path)
    with monkeypatch.context() as older:  # the version before scheme 2: scheme-1 identities only
        older.setattr(steps, "_load_secret", lambda *_a: None)
        older.setattr(recognition, "load_secret", lambda *_a: None)
        older.setattr(
            recognition, "identities_of", lambda home, path, **kw: [recognition.identity_of(home, path, **kw)]
        )
        code, _out, err = run(capsys, "release", PLAN, "--data", first, "--out", tmp_path / "r1")
        assert code == 0, err
        dataset = head(capsys, first)[0]
        code, _out, err = run(capsys, "ledger", "link", "--data", second, "--to", dataset)
        assert code == 0, err
    # this version: the first table opened again (`budget`), so the dataset gets its scheme-2 key (from that table)
    run(capsys, "budget", PLAN, "--data", first)  # (over budget: 0.9 of 1 spent)
    assert _scheme2_recorded(dpdesk_home, dataset)
    # the linked table re-saved (other line ends): its dataset's ledger, not a fresh one
    copy = tmp_path / "second-crlf.csv"
    copy.write_bytes(second.read_bytes().replace(b"\n", b"\r\n"))
    code, _out, err = run(capsys, "release", PLAN, "--data", copy, "--out", tmp_path / "r3")
    assert code == 1 and "over budget" in err and not (tmp_path / "r3").exists(), err  # 0.9 of 1 spent
    assert head(capsys, copy)[0] == dataset
    assert sorted(p.stem for p in (dpdesk_home / "ledgers").glob("ds-*.jsonl")) == [dataset]


def test_near_copies_of_an_older_dataset_are_refused_before_and_after_its_upgrade(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row added, or a column dropped, to a table known by its scheme-1 key only: a near-copy (exit 3) when
    only scheme 1 can see it, and again once the dataset has its scheme-2 key."""
    with monkeypatch.context() as older:
        older.setattr(steps, "_load_secret", lambda *_a: None)
        older.setattr(recognition, "load_secret", lambda *_a: None)
        older.setattr(
            recognition, "identities_of", lambda home, path, **kw: [recognition.identity_of(home, path, **kw)]
        )
        code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "r1")
        assert code == 0, err
        dataset = head(capsys, DATA)[0]
    text = DATA.read_text(encoding="utf-8")
    row = tmp_path / "row.csv"
    row.write_text(text + text.splitlines()[1] + "\n", encoding="utf-8")
    lines = [line.split(",") for line in text.splitlines()]
    drop = lines[0].index("weight")  # a column the plan never reads
    column = tmp_path / "column.csv"
    column.write_text("\n".join(",".join(f[:drop] + f[drop + 1 :]) for f in lines) + "\n", encoding="utf-8")
    for upgraded in (False, True):
        assert _scheme2_recorded(dpdesk_home, dataset) == upgraded
        for near in (row, column):
            code, _out, err = run(capsys, "budget", PLAN, "--data", near)
            assert code == 3 and f"resembles dataset {dataset}" in err, (upgraded, near.name, err)
        run(capsys, "budget", PLAN, "--data", DATA)  # the table itself opened: its scheme-2 key recorded
    assert sorted(p.stem for p in (dpdesk_home / "ledgers").glob("ds-*.jsonl")) == [dataset]
