"""Issue 13 (attack pass): the identity store and the register cannot be reset by deleting or editing a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dpdesk.cli import main
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def _crlf(tmp_path: Path) -> Path:
    out = tmp_path / "crlf.csv"
    out.write_bytes(DATA.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return out


def _released(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "r1")]) == 0
    capsys.readouterr()


def _budget(data: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["budget", str(PLAN), "--data", str(data)])
    return code, capsys.readouterr().err


def _dataset(home: Path) -> str:
    return next((home / "ledgers").glob("ds-*.jsonl")).stem


@pytest.mark.parametrize("remove", ["identity", "identity/secret"])
def test_a_deleted_identity_secret_is_refused_not_a_fresh_budget(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str], remove: str
) -> None:
    _released(tmp_path, capsys)
    copy = _crlf(tmp_path)
    target = dpdesk_home / remove
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    code, err = _budget(copy, capsys)
    assert code == 3 and "was deleted" in err and "forget-identity" in err, err
    code = main(["release", str(PLAN), "--data", str(copy), "--out", str(tmp_path / "r2")])
    assert code == 3 and not (tmp_path / "r2").exists()


def test_a_replaced_secret_and_deleted_contents_are_refused(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _released(tmp_path, capsys)
    copy = _crlf(tmp_path)
    secret = dpdesk_home / "identity" / "secret"
    original = secret.read_text()
    secret.write_text("ab" * 32)
    code, err = _budget(copy, capsys)
    assert code == 3 and "replaced" in err, err
    secret.write_text(original)
    (dpdesk_home / "identity" / "datasets" / f"{_dataset(dpdesk_home)}.json").unlink()
    code, err = _budget(copy, capsys)
    assert code == 3 and "missing or were cut" in err, err


@pytest.mark.parametrize("text", ["zz\n", "", "abcd"])
def test_a_damaged_secret_is_a_named_error(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    _released(tmp_path, capsys)
    (dpdesk_home / "identity" / "secret").write_text(text)
    code, err = _budget(_crlf(tmp_path), capsys)
    assert code == 3 and "damaged" in err and "Traceback" not in err, err


def test_the_officer_can_start_the_identities_over(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _released(tmp_path, capsys)
    shutil.rmtree(dpdesk_home / "identity")
    assert main(["ledger", "forget-identity", "--reason", "lost the laptop's backup"]) == 0
    capsys.readouterr()
    code, err = _budget(
        DATA, capsys
    )  # the table's own file: its ledger by its bytes, its content recorded anew
    assert code in (0, 1), err  # 1: the plan no longer fits the spent budget
    dataset = _dataset(dpdesk_home)
    record = json.loads((dpdesk_home / "ledgers" / "heads" / f"{dataset}.json").read_text())
    assert record["contents"] == 1 and len(record["identity"]) == 64
    assert main(["budget", str(PLAN), "--data", str(_crlf(tmp_path)), "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["dataset"] == dataset  # the re-saved copy is recognised again


def test_a_head_set_back_to_zero_is_refused(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _released(tmp_path, capsys)
    dataset = _dataset(dpdesk_home)
    (dpdesk_home / "ledgers" / f"{dataset}.jsonl").write_bytes(b"")
    path = dpdesk_home / "ledgers" / "heads" / f"{dataset}.json"
    record = json.loads(path.read_text())
    record["head"] = {"seq": 0, "hash": "0" * 64}
    path.write_text(json.dumps(record))
    assert main(["ledger", "verify", "--data", str(DATA)]) == 3
    assert "was edited" in capsys.readouterr().out
    assert main(["release", str(PLAN), "--data", str(DATA), "--out", str(tmp_path / "r2")]) == 3
    assert not (tmp_path / "r2").exists()


def test_a_near_copy_is_named_with_its_estimates_on_screen_only(
    tmp_path: Path, dpdesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _released(tmp_path, capsys)
    lines = DATA.read_text(encoding="utf-8").splitlines(keepends=True)
    near = tmp_path / "near.csv"
    near.write_text("".join(lines[:-3]), encoding="utf-8")  # three rows fewer
    dataset = _dataset(dpdesk_home)
    code, err = _budget(near, capsys)
    # refused, not a fresh budget (tests/cli/test_near_copy.py: linked or declared new first)
    assert code == 3 and f"resembles dataset {dataset}" in err and "%" in err, err
    out = tmp_path / "r2"
    assert main(["release", str(PLAN), "--data", str(near), "--out", str(out)]) == 3
    assert f"resembles dataset {dataset}" in capsys.readouterr().err
    assert not out.exists()
    assert main(["ledger", "link", "--data", str(near), "--to", dataset]) == 0
    ledger = (dpdesk_home / "ledgers" / f"{dataset}.jsonl").read_text(encoding="utf-8")
    assert "resembl" not in ledger  # the estimates stay on screen
    link = json.loads(ledger.splitlines()[-1])
    assert link["type"] == "link" and set(link) - {
        "seq",
        "type",
        "time",
        "dataset",
        "prev",
        "hash",
        "dpdesk_version",
    } == {"decided_by"}
