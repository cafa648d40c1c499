"""Issue 28 item 4: every word of the engine a reader meets (statistic, mechanism, calibration, relation,
accounting method, ledger entry type, column type, a reason dpdesk records) has a name in Chinese; the files keep
the word itself."""

from __future__ import annotations

import re

import pytest

from dpdesk.core.dp import statistics
from dpdesk.core.ledger import entries
from dpdesk.core.model.mechanism_kinds import Calibration, Mechanism
from dpdesk.core.model.spec import AccountingMethod, ColumnType, Neighbouring
from dpdesk.core.publish import words

ENGLISH = re.compile(r"[A-Za-z]{3,}")


def every_word() -> list[tuple[object, str]]:
    out: list[tuple[object, str]] = [(words.statistic, w) for w in statistics.REGISTRY]
    out += [(words.mechanism, m.value) for m in Mechanism]
    out += [(words.calibration_name, c.value) for c in Calibration]
    out += [(words.relation, n.value) for n in Neighbouring]
    out += [
        (words.accounting, m.value) for m in AccountingMethod if m != AccountingMethod.ZCDP
    ]  # zCDP is its name in every language
    out += [(words.entry_type, t) for t in entries.ENTRY_TYPES]
    out += [(words.column_type, t.value) for t in ColumnType]
    out += [(words.recorded_reason, r) for r in (entries.FIRST_RELEASE_REASON, entries.RECOST_REASON)]
    return out


@pytest.mark.parametrize(("name", "word"), every_word())
def test_each_word_has_a_chinese_name(name: object, word: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert callable(name)
    monkeypatch.setenv("DPDESK_LANG", "en")
    english = name(word)
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    chinese = name(word)
    # MST and AIM are the methods' names (McKenna et al.), kept in every language
    assert chinese != english and not ENGLISH.search(chinese.replace("MST", "").replace("AIM", "")), (
        word,
        chinese,
    )
    assert english and "_" not in english  # never the file's word with its underscore


def test_a_word_dpdesk_does_not_know_is_shown_as_it_is() -> None:
    """A newer file read by an older dpdesk: the word itself, never an error."""
    assert words.entry_type("teleport") == "teleport" and words.any_word("teleport") == "teleport"
    assert words.mechanism("gaussian", "analytic") == "Gaussian (analytic)"
