"""Issue 28 item 1: a declaration's problem is marked on the cell it is about (a warning icon, a tint and the
problem in words as the cell's tooltip), written for the person filling the form, and the mark goes when the
problem is mended."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import Qt

from dpdesk.gui.models import SCHEMA_COLUMNS

pytestmark = pytest.mark.timeout(300)
TIP, ICON = Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.DecorationRole


def test_a_missing_bound_and_an_empty_category_list_are_marked_on_their_cells(
    desk: Callable[[], Any],
) -> None:
    d = desk()
    model = d.win.schema_view.schema_model
    rows = {name: r for r, name in enumerate(model.names)}

    def cell(name: str, col: str) -> Any:
        return model.index(rows[name], SCHEMA_COLUMNS.index(col))

    assert not any(model.data(cell("wage", c), TIP) for c in ("lower", "upper", "categories"))
    for col in ("lower", "upper"):
        assert model.setData(cell("wage", col), "", Qt.ItemDataRole.EditRole)
    assert model.setData(cell("region", "categories"), "", Qt.ItemDataRole.EditRole)
    for col in ("lower", "upper"):
        tip = model.data(cell("wage", col), TIP)
        assert tip and "bounds are missing" in tip and "codebook" in tip, tip
        assert "must be a list" not in tip  # written for a person, not for a developer
        assert model.data(cell("wage", col), ICON) is not None
    tip = model.data(cell("region", "categories"), TIP)
    assert tip and "no categories yet" in tip, tip
    # only the cells the problems are about
    for name, col in (
        ("wage", "categories"),
        ("wage", "column"),
        ("education", "lower"),
        ("region", "lower"),
    ):
        assert model.data(cell(name, col), TIP) is None and model.data(cell(name, col), ICON) is None, (
            name,
            col,
        )
    # mended: the marks go
    assert model.setData(cell("wage", "lower"), "0", Qt.ItemDataRole.EditRole)
    assert model.setData(cell("wage", "upper"), "5000", Qt.ItemDataRole.EditRole)
    assert model.data(cell("wage", "lower"), TIP) is None and model.data(cell("wage", "upper"), ICON) is None
