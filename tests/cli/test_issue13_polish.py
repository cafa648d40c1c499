"""Issue 13, the audit's smaller gaps: what the command line says after an acknowledgement, in a review against a
later export, and in refusals (the verb spelling, the recovery key, the approval before the output folder)."""

from __future__ import annotations

from pathlib import Path

from dpdesk.core.ledger import Ledger
from tests.core.test_recost import _sha as sha
from tests.core.test_recost import cli
from tests.trust.test_acknowledge import (
    _acknowledge_as_offered,
    _edit,
    _first_spend,
    _released,
    plan_settings,
)


def test_after_an_acknowledgement_the_ledger_says_what_is_left(dpdesk_home: Path, tmp_path: Path) -> None:
    """Main printed "2 release(s)" without "left: ..." once the releases were carried over by an acknowledgement
    (no spend entry in the new chain); ``budget`` said 2.4 left."""
    d, lg, before = _released(dpdesk_home, tmp_path)
    _edit(lg, _first_spend(lg), lambda e: e.update(title="edited"))
    _acknowledge_as_offered(lg, settings=plan_settings())
    assert [e["type"] for e in Ledger.for_dataset(dpdesk_home, sha(d)).verify()] == ["acknowledge"]
    left = f"left: epsilon {3 - before:g}, delta 1e-06"
    for args in (("ledger", "--data", str(d)), ("ledger", "verify", "--data", str(d)), ("ledger",)):
        r = cli(*args, home=dpdesk_home)
        assert r.returncode == 0 and "2 release(s)" in r.stdout and left in r.stdout, (
            args,
            r.stdout,
            r.stderr,
        )
