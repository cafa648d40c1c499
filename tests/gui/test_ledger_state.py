"""The app verifies a ledger as `dpdesk ledger verify` does (issue 12 item 4: one flow, not two): a checkpoint whose
totals differ from the entries before it is named, and nothing can be released, where the app used to say
"Chain verified"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpdesk.core.ledger import checkpoint as ck
from dpdesk.gui.state import AppState
from dpdesk.services.ledger import ledger_status
from tests.core.test_checkpoint import _lines, _rehash_from, _set_head, build, no_fsync  # noqa: F401


def test_a_forged_checkpoint_is_named_in_the_app_as_on_the_command_line(
    qtbot: object,
    dpdesk_home: Path,
    tmp_path: Path,
    no_fsync: None,  # noqa: F811
) -> None:
    lg, _plan = build(dpdesk_home, tmp_path, ck.CHECKPOINT_EVERY + 3)
    state = AppState(dpdesk_home)
    state.sha256 = lg.key
    state.data_path = tmp_path / "d.csv"  # the table build() released from
    state.read_ledger()
    assert state.ledger_error is None and len(state.ledger_entries) > ck.CHECKPOINT_EVERY
    # the checkpoint's totals lowered, the chain re-hashed from it and the register's head moved with it
    lines = _lines(lg)
    last_cp = max(i for i, x in enumerate(lines) if json.loads(x)["type"] == "checkpoint")
    e = json.loads(lines[last_cp])
    e["state"]["spent"]["sequential"]["epsilon"] = "0.01"
    forged = _rehash_from([*lines[:last_cp], json.dumps(e).encode(), *lines[last_cp + 1 :]], last_cp)
    assert lg.path is not None
    lg.path.write_bytes(b"".join(x + b"\n" for x in forged))
    _set_head(dpdesk_home, lg, forged)
    cli = ledger_status(type(lg).for_dataset(dpdesk_home, lg.key or ""))
    assert cli.exit_code == 3 and cli.error is not None
    state.read_ledger()
    assert state.ledger_error == cli.error and "checkpoint" in state.ledger_error
    assert state.ledger_entries == []
    assert state.can_release() == (
        False,
        "The ledger of this dataset is broken; a privacy officer must look at it.",
    )


pytestmark = pytest.mark.timeout(120)
