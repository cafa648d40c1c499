"""An officer who holds the key (issue 13, item 4), wired in: ``dpdesk officer``, ``dpdesk ledger head|govern``,
approvals required by ``change-settings``, ``acknowledge`` and (signed plans) ``release``, and ``review``
re-verifying every recorded approval.

Run in-process (``dpdesk.cli.main``). Deterministic: keys and nonces are random, but every check holds for any key.
A refused approval exits 2 (a usage problem: the command lacks a valid approval; nothing was written).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dpdesk.cli import main
from dpdesk.core.ledger.entries import entry_hash
from dpdesk.core.model.spec import canonical_json
from tests.conftest import SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


class Keys:
    def __init__(self, folder: Path, capsys: pytest.CaptureFixture[str], name: str = "Ann") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.pf, self.rpf = folder / "pass.txt", folder / "rpass.txt"
        self.pf.write_text(f"{name} officer passphrase\n", encoding="utf-8")
        self.rpf.write_text(f"{name} recovery passphrase\n", encoding="utf-8")
        code, out, err = run(
            capsys,
            "officer",
            "create",
            "--name",
            name,
            "--out",
            folder / "keys",
            "--passphrase-file",
            self.pf,
            "--recovery-passphrase-file",
            self.rpf,
        )
        assert code == 0, err
        self.public = next((folder / "keys").glob("*-public.json"))
        self.private = next((folder / "keys").glob("*-private.pem"))
        self.recovery = next((folder / "keys").glob("*-recovery.pem"))
        self.fingerprint = out.split("fingerprint ")[1].split("\n")[0]


def head(capsys: pytest.CaptureFixture[str], data: Path = DATA) -> tuple[str, str]:
    _code, out, _err = run(capsys, "ledger", "head", "--data", data, "--json")
    d = json.loads(out)
    return d["dataset"], f"{d['head']['seq']}:{d['head']['hash']}"


def approve(
    capsys: pytest.CaptureFixture[str],
    keys: Keys,
    verb: str,
    out: Path,
    *args: Any,
    at: tuple[str, str] | None = None,
) -> Path:
    dataset, h = at or head(capsys)
    code, _o, err = run(
        capsys,
        "officer",
        verb,
        *args,
        "--dataset",
        dataset,
        "--head",
        h,
        "--key",
        keys.private,
        "--passphrase-file",
        keys.pf,
        "--out",
        out,
    )
    assert code == 0, err
    return out


def plan_with_budget(folder: Path, epsilon: float) -> Path:
    d = json.loads(PLAN.read_text(encoding="utf-8"))
    d["budget"]["epsilon"] = epsilon
    p = folder / f"plan-{epsilon}.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


def entries(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA, "--json")
    assert code == 0, err
    return list(json.loads(out)["entries"])


@pytest.fixture
def ann(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Keys:
    return Keys(tmp_path / "ann", capsys)


@pytest.fixture
def released(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "first")
    assert code == 0, err
    return tmp_path / "first"


@pytest.fixture
def governed(capsys: pytest.CaptureFixture[str], released: Path, ann: Keys) -> Keys:
    code, out, err = run(capsys, "ledger", "govern", "--data", DATA, "--officer", ann.public)
    assert code == 0, err
    assert ann.fingerprint in out
    return ann


# ----------------------------------------------------------------------------- ungoverned: as before


def test_an_ungoverned_settings_raise_still_works_and_says_ungoverned(
    capsys: pytest.CaptureFixture[str], released: Path, tmp_path: Path
) -> None:
    raised = plan_with_budget(tmp_path, 5.0)
    code, _out, err = run(capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "more")
    assert code == 0, err
    assert entries(capsys)[-1]["type"] == "settings" and "approval" not in entries(capsys)[-1]
    for args in (
        ("ledger", "verify", "--data", DATA),
        ("budget", raised, "--data", DATA),
        ("ledger", "head", "--data", DATA),
    ):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        assert "This dataset is ungoverned" in out, args


def test_an_approval_for_an_ungoverned_dataset_is_refused_not_ignored(
    capsys: pytest.CaptureFixture[str], released: Path, ann: Keys, tmp_path: Path
) -> None:
    raised = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, ann, "approve-settings", tmp_path / "a.json", raised)
    code, _out, err = run(
        capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "x", "--approval", ap
    )
    assert code == 2 and "ungoverned" in err


# ----------------------------------------------------------------------------- governed settings changes


def test_a_governed_settings_change_without_approval_is_refused(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path
) -> None:
    before = entries(capsys)
    code, _out, err = run(
        capsys,
        "ledger",
        "change-settings",
        plan_with_budget(tmp_path, 5.0),
        "--data",
        DATA,
        "--reason",
        "more",
    )
    assert code == 2
    assert "needs their signed approval" in err and governed.fingerprint in err
    assert entries(capsys) == before


def test_a_governed_settings_change_with_a_good_approval_is_accepted_and_recorded(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path
) -> None:
    raised = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, governed, "approve-settings", tmp_path / "a.json", raised)
    code, out, err = run(
        capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "more", "--approval", ap
    )
    assert code == 0, err
    last = entries(capsys)[-1]
    assert last["type"] == "settings" and last["settings"]["budget"]["epsilon"] == 5.0
    assert last["approval"]["payload"] == json.loads(ap.read_text())["payload"]
    # exported and reviewed on another machine: intact
    code, _out, err = run(capsys, "ledger", "export", "--data", DATA, "--out", tmp_path / "l.jsonl")
    assert code == 0, err
    code, out, _err = run(capsys, "review", tmp_path / "l.jsonl")
    assert code == 0 and "Intact." in out and governed.fingerprint in out


@pytest.mark.parametrize(
    "case", ["other-officer", "other-dataset", "stale-head", "edited", "other-settings", "replayed"]
)
def test_a_wrong_approval_is_refused_with_its_named_reason(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path, case: str
) -> None:
    raised = plan_with_budget(tmp_path, 5.0)
    dataset, h = head(capsys)
    expected = {
        "other-officer": "is signed by key",
        "other-dataset": "is for dataset",
        "stale-head": "was signed for ledger entry",
        "edited": "the signature does not verify",
        "other-settings": "with other parameters",
        "replayed": "was signed for ledger entry",  # a used approval's head is gone; its nonce is recorded too
    }[case]
    ap = tmp_path / "a.json"
    if case == "other-officer":
        bob = Keys(tmp_path / "bob", capsys, "Bob")
        approve(capsys, bob, "approve-settings", ap, raised)
    elif case == "other-dataset":
        approve(capsys, governed, "approve-settings", ap, raised, at=("ds-" + "2" * 32, h))
    elif case == "stale-head":
        seq, digest = h.split(":")
        approve(capsys, governed, "approve-settings", ap, raised, at=(dataset, f"{int(seq) - 1}:{digest}"))
    elif case == "edited":
        approve(capsys, governed, "approve-settings", ap, plan_with_budget(tmp_path, 2.0))
        doc = json.loads(ap.read_text())
        doc["payload"]["params"]["settings"]["budget"]["epsilon"] = 5.0  # raised after signing
        ap.write_text(json.dumps(doc))
    elif case == "other-settings":
        approve(capsys, governed, "approve-settings", ap, plan_with_budget(tmp_path, 2.0))
    else:
        approve(capsys, governed, "approve-settings", ap, raised)
        code, _out, err = run(
            capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "once", "--approval", ap
        )
        assert code == 0, err
    before = entries(capsys)
    code, _out, err = run(
        capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "more", "--approval", ap
    )
    assert code == 2, err
    assert expected in err, err
    assert entries(capsys) == before


def test_a_policy_change_needs_the_officers_approval(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path
) -> None:
    args = ("ledger", "govern", "--data", DATA, "--officer", governed.public, "--require-signed-plans")
    code, _out, err = run(capsys, *args)
    assert code == 2 and "needs their signed approval" in err
    ap = approve(capsys, governed, "approve-policy", tmp_path / "p.json", "--require-signed-plans")
    code, out, err = run(capsys, *args, "--approval", ap)
    assert code == 0, err
    assert "Only plans the officer has signed may be released." in out


# ----------------------------------------------------------------------------- signed plans


def test_signed_plans_policy_refuses_an_unsigned_release_and_accepts_a_signed_one_once(
    capsys: pytest.CaptureFixture[str], released: Path, ann: Keys, tmp_path: Path
) -> None:
    code, _out, err = run(
        capsys, "ledger", "govern", "--data", DATA, "--officer", ann.public, "--require-signed-plans"
    )
    assert code == 0, err
    big = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, ann, "approve-settings", tmp_path / "s.json", big)
    code, _out, err = run(
        capsys, "ledger", "change-settings", big, "--data", DATA, "--reason", "r", "--approval", ap
    )
    assert code == 0, err
    before = entries(capsys)
    code, _out, err = run(capsys, "release", big, "--data", DATA, "--out", tmp_path / "unsigned")
    assert code == 2 and "only plans they signed" in err
    assert entries(capsys) == before and not (tmp_path / "unsigned").exists()
    plan_ok = approve(capsys, ann, "approve-plan", tmp_path / "plan.json", big)
    other = approve(capsys, ann, "approve-plan", tmp_path / "other.json", plan_with_budget(tmp_path, 4.0))
    code, _out, err = run(
        capsys, "release", big, "--data", DATA, "--out", tmp_path / "o", "--approval", other
    )
    assert code == 2 and "with other parameters" in err
    code, _out, err = run(
        capsys, "release", big, "--data", DATA, "--out", tmp_path / "signed", "--approval", plan_ok
    )
    assert code == 0, err
    spend = [e for e in entries(capsys) if e["type"] == "spend"][-1]
    assert spend["approval"]["payload"]["params"]["plan_sha256"] == spend["plan_hash"]
    code, _out, err = run(
        capsys, "release", big, "--data", DATA, "--out", tmp_path / "again", "--approval", plan_ok
    )
    assert code == 2 and "was already used" in err
    code, out, _err = run(capsys, "review", tmp_path / "signed")
    assert code == 0 and "Intact." in out and ann.fingerprint in out


# ----------------------------------------------------------------------------- review


def _rehash(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    prev = "0" * 64
    for i, e in enumerate(chain, start=1):
        e["seq"], e["prev"] = i, prev
        e["hash"] = entry_hash(e)
        prev = e["hash"]
    return chain


def _write(path: Path, chain: list[dict[str, Any]]) -> Path:
    path.write_text("".join(canonical_json(e) + "\n" for e in chain), encoding="utf-8")
    return path


@pytest.fixture
def approved_export(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path
) -> list[dict[str, Any]]:
    raised = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, governed, "approve-settings", tmp_path / "a.json", raised)
    code, _o, err = run(
        capsys, "ledger", "change-settings", raised, "--data", DATA, "--reason", "r", "--approval", ap
    )
    assert code == 0, err
    return entries(capsys)


@pytest.mark.parametrize("forgery", ["edited-budget", "unapproved", "replayed", "other-head"])
def test_review_catches_a_forged_or_edited_approval_in_an_export(
    capsys: pytest.CaptureFixture[str], approved_export: list[dict[str, Any]], tmp_path: Path, forgery: str
) -> None:
    chain = [dict(e) for e in approved_export]
    last = chain[-1]
    expected = {
        "edited-budget": "the signature does not verify",
        "unapproved": "without the officer's approval",
        "replayed": "replayed",
        "other-head": "was signed for ledger entry",
    }[forgery]
    if forgery == "edited-budget":  # the settings raised further, in the entry and the approval alike
        last["settings"] = json.loads(json.dumps(last["settings"]))
        last["settings"]["budget"]["epsilon"] = 50.0
        last["approval"] = json.loads(json.dumps(last["approval"]))
        last["approval"]["payload"]["params"]["settings"]["budget"]["epsilon"] = 50.0
    elif forgery == "unapproved":
        del last["approval"]
    elif forgery == "replayed":  # the same approval recorded again for a second settings entry
        chain.append({k: v for k, v in last.items() if k not in ("seq", "prev", "hash")})
    else:  # moved to a later place of the chain (after a package entry copied in)
        chain.insert(len(chain) - 1, dict(chain[len(chain) - 2]))
    code, out, _err = run(capsys, "review", _write(tmp_path / "forged.jsonl", _rehash(chain)))
    assert code == 1, out
    assert expected in out and "NOT INTACT" in out


def test_review_catches_an_edited_plan_approval_in_a_package(
    capsys: pytest.CaptureFixture[str], released: Path, ann: Keys, tmp_path: Path
) -> None:
    code, _o, err = run(
        capsys, "ledger", "govern", "--data", DATA, "--officer", ann.public, "--require-signed-plans"
    )
    assert code == 0, err
    big = plan_with_budget(tmp_path, 5.0)
    ap = approve(capsys, ann, "approve-settings", tmp_path / "s.json", big)
    assert (
        run(capsys, "ledger", "change-settings", big, "--data", DATA, "--reason", "r", "--approval", ap)[0]
        == 0
    )
    ap = approve(capsys, ann, "approve-plan", tmp_path / "p.json", big)
    pkg = tmp_path / "pkg"
    assert run(capsys, "release", big, "--data", DATA, "--out", pkg, "--approval", ap)[0] == 0
    assert run(capsys, "review", pkg)[0] == 0
    data = json.loads((pkg / "ledger.json").read_text())
    assert {e["type"] for e in data["entries"]} == {"govern", "settings", "spend", "package"}
    spend = next(e for e in data["entries"] if e["type"] == "spend")
    spend["approval"]["payload"]["params"]["budget"]["epsilon"] = 50.0
    spend["hash"] = entry_hash(spend)
    (pkg / "ledger.json").write_text(json.dumps(data))
    code, out, _err = run(capsys, "review", pkg)
    assert code == 1 and "the signature does not verify" in out
    # the governance entry removed: named
    data["entries"] = [e for e in data["entries"] if e["type"] != "govern"]
    (pkg / "ledger.json").write_text(json.dumps(data))
    code, out, _err = run(capsys, "review", pkg)
    assert code == 1 and "the governance entry the package entry names is missing" in out


# ----------------------------------------------------------------------------- acknowledgement


def test_a_governed_broken_ledger_is_acknowledged_only_with_an_approval_and_stays_governed(
    capsys: pytest.CaptureFixture[str], governed: Keys, tmp_path: Path, dpdesk_home: Path
) -> None:
    dataset, h = head(capsys)
    ledger = dpdesk_home / "ledgers" / f"{dataset}.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(lines[:-1]))  # the govern entry cut off: behind its recorded head
    code, out, _err = run(capsys, "ledger", "head", "--data", DATA)
    assert code == 3 and h in out and governed.fingerprint in out  # still known as governed
    args = ("ledger", "acknowledge", "--data", DATA, "--reason", "restored from a backup")
    code, _out, err = run(capsys, *args, "--cost", f"{len(lines)}=0")
    assert code == 2 and "needs their signed approval" in err
    wrong = approve(
        capsys,
        governed,
        "approve-acknowledge",
        tmp_path / "w.json",
        "--reason",
        "other words",
        "--cost",
        f"{len(lines)}=0",
    )
    code, _out, err = run(capsys, *args, "--cost", f"{len(lines)}=0", "--approval", wrong)
    assert code == 2 and "with other parameters" in err
    ap = approve(
        capsys,
        governed,
        "approve-acknowledge",
        tmp_path / "a.json",
        "--reason",
        "restored from a backup",
        "--cost",
        f"{len(lines)}=0",
    )
    code, _out, err = run(capsys, *args, "--cost", f"{len(lines)}=0", "--approval", ap)
    assert code == 0, err
    code, out, err = run(capsys, "ledger", "verify", "--data", DATA)
    assert code == 0 and "Governed by Ann" in out
    code, _out, err = run(
        capsys,
        "ledger",
        "change-settings",
        plan_with_budget(tmp_path, 5.0),
        "--data",
        DATA,
        "--reason",
        "more",
    )
    assert code == 2 and "needs their signed approval" in err
    assert run(capsys, "ledger", "export", "--data", DATA, "--out", tmp_path / "l.jsonl")[0] == 0
    code, out, _err = run(capsys, "review", tmp_path / "l.jsonl")
    assert code == 0 and "carried over by an acknowledgement" in out


OFFICER_HELP = [
    "officer",
    "officer show",
    "officer approve-plan",
    "officer approve-settings",
    "officer approve-rotate",
    "ledger govern",
]


def test_officer_help_names_the_key_files_create_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25 item 7: every key file the help's examples name under officer/ is one `dpdesk officer create
    --out officer` writes (XXXX standing for the key's fingerprint). Before: officer/PUBLIC.json,
    officer/PRIVATE.pem and officer/RECOVERY.pem, which create never writes."""
    Keys(tmp_path, capsys)
    written = {p.name for p in (tmp_path / "keys").iterdir()}
    stem = next(n for n in written if n.endswith("-public.json")).removesuffix("-public.json")
    named: set[str] = set()
    for command in OFFICER_HELP:
        code, out, _err = run(capsys, *command.split(), "--help")
        assert code == 0
        for folder, name in re.findall(r"\b(officer|new)/([\w.-]+\.(?:json|pem))", out):
            named.add(name)
            fake = name.replace("XXXX" if folder == "officer" else "YYYY", stem.removeprefix("officer-"))
            assert fake in written, (
                f"`dpdesk {command} --help` names {folder}/{name}; create wrote {sorted(written)}"
            )
    assert {n.rsplit("-", 1)[-1] for n in named} == {"public.json", "private.pem", "recovery.pem"}, named
