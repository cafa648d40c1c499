"""Issue 28 item 5: one number style. After a release of the sample plan (δ 1e-6 budget, 1e-7 spent), nothing the
window shows (labels, buttons, table cells of the meter, results and ledger) is in e-notation; ε has at most four
significant digits; a rounded figure never promises more budget than is left."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from dpdesk.core.common.shown import delta, epsilon, plain
from tests.gui.test_chinese_window import visible_texts

pytestmark = pytest.mark.timeout(300)
E_NOTATION = re.compile(r"(?<![\w.])\d+(\.\d+)?[eE][+-]?\d+(?!\w)")  # a number token, not a hex id


def test_plain_rounds_in_the_direction_that_keeps_a_statement_true() -> None:
    assert (plain(0.12341, rounding="up"), plain(0.12349, rounding="down")) == ("0.1235", "0.1234")
    assert (epsilon(2.3634), delta(1e-07), delta(2.5e-12)) == ("2.363", "0.0000001", "0.0000000000025")
    # a float's last-bit noise is not a shortfall: 1 - 0.9 left is 0.1, not 0.09999
    assert (plain(1 - 0.9, rounding="down"), plain(0.1 + 0.2, rounding="up")) == ("0.1", "0.3")
    for x in (1e-9, 3.3e-7, 0.1, 0.99999, 1.0, 12.5, 1234.5678, 1e6 + 0.5):
        down, up = float(plain(x, 3, "down")), float(plain(x, 3, "up"))
        assert down <= x <= up and not E_NOTATION.search(plain(x, 3)), (x, down, up)


def test_nothing_the_window_shows_after_a_release_is_in_e_notation(desk: Callable[[], Any]) -> None:
    d = desk()
    win = d.win
    d.release()
    win.query_form.select_row(3)  # "wage by region": its δ 1e-07 in the form's field
    seen = []
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        seen += visible_texts(win)
    bad = sorted({t for t in seen if E_NOTATION.search(t)})
    assert not bad, bad
    assert any("0.0000001" in t for t in seen)  # the δ spent, in plain notation
