"""A synthetic table in the app (issue 17 item 3), driven through what a user sees: the query form (columns,
rows, bin edges; a single column is named as a problem), the preview in plain words, the release, the Results
tab's table and its marginals charted against the released noisy marginals (both from the ledger), and the
export of the same bytes as the release package's CSV."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QThreadPool, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QTableView,
    QWidget,
)

from dpdesk.core.ledger.book import Ledger
from dpdesk.gui.app import build
from tests.gui.test_guided_release import (
    button,
    click,
    field,
    open_tab,
    plain,
    settle,
    type_text,
)

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # every test here takes a second or more


def visible_texts(win: QWidget) -> list[str]:
    return [plain(lab.text()) for lab in win.findChildren(QLabel) if lab.isVisible()]


def choose(combo: QWidget, text: str) -> None:
    """Pick the item of a combo box whose visible text starts with ``text``, as a user would."""
    assert isinstance(combo, QComboBox)
    i = next(i for i in range(combo.count()) if combo.itemText(i).startswith(text))
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def tick(columns: QWidget, name: str, on: bool) -> None:
    """Tick or untick the column ``name`` in the form's list of columns (its visible text starts with it)."""
    assert isinstance(columns, QListWidget)
    item = next(
        columns.item(i) for i in range(columns.count()) if columns.item(i).text().startswith(name + " ")
    )
    item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)


def answer_release(qtbot: Any, seen: list[str]) -> None:
    """When the release's confirmation is open (the visible message box that says what it will spend): note its
    text and press Yes. Any other modal widget (one left over by an earlier test) is not answered."""

    def act() -> None:
        box = QApplication.activeModalWidget()
        if not (isinstance(box, QMessageBox) and box.isVisible() and "spend" in box.text()):
            QTimer.singleShot(50, act)
            return
        seen.append(box.text())
        yes = box.button(QMessageBox.StandardButton.Yes)  # its visible text is Qt's, in the app's language
        assert yes is not None and yes.isVisible()
        click(qtbot, yes)

    QTimer.singleShot(50, act)


def bars(canvas: Any) -> list[tuple[str, list[list[float]]]]:
    """Each panel's title and the heights of its two bar series (released noisy, synthetic table)."""
    out = []
    for ax in canvas.figure.axes:
        out.append((ax.get_title(), [[float(p.get_height()) for p in c] for c in ax.containers]))
    return out


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Iterator[Any]:
    _app, w = build(dpdesk_home)
    qtbot.addWidget(w)
    w.ask_save_changes = lambda: QMessageBox.StandardButton.Discard  # closing never asks (no one answers)
    w.resize(1024, 700)
    w.show()
    qtbot.waitExposed(w)
    click(qtbot, button(w, "Try the sample"))
    settle(qtbot, w)
    yield w
    # the table is regenerated in the worker: let it finish and deliver before the window goes, or its result
    # arrives during the next test and touches this window's deleted state
    QThreadPool.globalInstance().waitForDone(60_000)
    for _ in range(5):
        QApplication.processEvents()
    w.state.undo_stack.setClean()
    w.state.clean_index = w.state.undo_stack.index()


def test_a_synthetic_table_from_the_form_to_its_csv(
    qtbot: Any, win: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    open_tab(qtbot, win, "Queries")
    n = len(win.state.plan_data["queries"])
    click(qtbot, button(win, "Add"))
    choose(field(win, "Statistic"), "synthetic table")
    query = win.state.plan_data["queries"][n]
    assert query["statistic"] == "synthetic" and query["mechanism"] == "mst"
    # the form starts from two declared columns: a valid query
    assert query["columns"] == ["wage", "education"] and win.state.plan is not None, win.state.plan_error
    # a single column is named as a problem in the form, and the plan cannot be released
    columns = field(win, "Columns")
    tick(columns, "education", False)
    assert win.state.plan_data["queries"][n]["columns"] == ["wage"]
    assert win.state.plan is None and "at least 2 columns" in (win.state.plan_error or "")
    assert any(t.startswith("⚠ Columns") for t in visible_texts(win)), visible_texts(win)
    assert "at least 2 columns" in plain(win.query_form.error.text())
    assert not win.release_action.isEnabled()
    # three columns, 300 rows, public bins for wage (the default rule is the placeholder)
    tick(columns, "education", True)
    tick(columns, "region", True)
    assert not any(t.startswith("⚠") for t in visible_texts(win)), visible_texts(win)
    type_text(qtbot, field(win, "Rows to generate"), "300")
    wage = next(e for e in field(win, "Bin edges").findChildren(QLineEdit) if e.objectName() == "bins_wage")
    assert wage.placeholderText().startswith("default: 0, "), wage.placeholderText()
    type_text(qtbot, wage, "0, 500, 1000, 2000, 5000")
    type_text(qtbot, field(win, "ε"), "0.1")
    query = win.state.plan_data["queries"][n]
    assert query["columns"] == ["wage", "education", "region"] and query["rows"] == 300
    assert query["bins"] == {"wage": [0, 500, 1000, 2000, 5000]} and query["epsilon"] == 0.1
    assert win.state.plan is not None, win.state.plan_error
    # the preview says what it does in plain words, and where its utility can (not) be seen
    qtbot.waitUntil(lambda: any("What it does" in t for t in visible_texts(win)), timeout=10_000)
    words = " ".join(t for t in visible_texts(win) if "marginal" in t or "utility" in t)
    assert (
        "one-way marginal of each of the 3 columns" in words and "wage: 4 levels" in words
    )  # 4 bins (no missing level: its rule is "drop"), words
    assert "columns are independent" in words, words
    # release (the same flow as any plan)
    confirm: list[str] = []
    answer_release(qtbot, confirm)
    click(qtbot, button(win, "Release"))
    qtbot.waitUntil(lambda: bool(confirm), timeout=30_000)
    settle(qtbot, win)
    qtbot.waitUntil(lambda: win.results_view.shown_synthetic() is not None, timeout=60_000)
    settle(qtbot, win)
    open_tab(qtbot, win, "Results")
    spend = [e for e in Ledger.for_dataset(dpdesk_home, win.state.sha256).verify() if e.type == "spend"]
    fields = spend[-1].fields["synthetic"][query["name"]]
    # the table: its file name and row count, and its first rows in a table view
    info = next(t for t in visible_texts(win) if t.startswith(fields["file"]))
    assert re.search(r"\b300 made-up rows of 3 columns", info), info
    view = next(
        v for v in win.findChildren(QTableView) if v.isVisible() and v.objectName() == "synthetic_table"
    )
    model = view.model()
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(3)] == [
        "wage",
        "education",
        "region",
    ]
    assert model.rowCount() == 200  # the first 200 of 300
    assert all(
        model.data(model.index(r, 2)) in ("northeast", "midwest", "south", "west", "") for r in range(200)
    )
    # the chart: per column, the ledger's released noisy one-way marginal beside the table's own counts
    canvas = win.results_view.synth_canvas
    assert canvas is not None and canvas.isVisible()
    drawn = bars(canvas)
    assert [t for t, _b in drawn] == ["wage", "education", "region"]
    for j, (_t, (released, own)) in enumerate(drawn):
        assert released == [float(v) for v in fields["one_way"][j]]  # from the ledger, never the table
        assert sum(own) == 300
    # save: the same bytes as the release package's CSV
    out = tmp_path / "table.csv"
    win.ask_save_path = lambda *_a: str(out)
    click(qtbot, button(win, "Save table as CSV"))
    win.ask_folder = lambda *_a: str(tmp_path / "package")
    click(qtbot, button(win, "Export release"))
    settle(qtbot, win)
    package = tmp_path / "package" / fields["file"]
    assert package.is_file() and out.read_bytes() == package.read_bytes()
    assert out.read_bytes().startswith(b"wage,education,region\n") and out.read_bytes().count(b"\n") == 301


def answer_fidelity(qtbot: Any, path: Path, seen: list[str]) -> None:
    """When the fidelity dialog is open: type the public file, tick the declaration and press Estimate (noting
    whether Estimate was disabled before the box was ticked)."""
    from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox

    def act() -> None:
        box = QApplication.activeModalWidget()
        if not (isinstance(box, QDialog) and box.isVisible() and box.findChildren(QCheckBox)):
            QTimer.singleShot(50, act)
            return
        buttons = box.findChild(QDialogButtonBox)
        assert buttons is not None
        estimate = next(b for b in buttons.buttons() if plain(b.text()) == "Estimate")
        edit = next(e for e in box.findChildren(QLineEdit) if e.isVisible())
        edit.setText(str(path))
        seen.append(f"enabled before the declaration: {estimate.isEnabled()}")
        next(c for c in box.findChildren(QCheckBox) if c.isVisible()).setChecked(True)
        click(qtbot, estimate)

    QTimer.singleShot(50, act)


def test_the_expected_fidelity_on_a_file_declared_public(
    qtbot: Any, win: Any, dpdesk_home: Path, tmp_path: Path
) -> None:
    """Issue 17 item 3: the preview of a synthetic table offers an estimate on a public file; it runs uncharged
    (the ledger does not move), shows the synthetic and the independent figures in plain words, and the table
    opened for release is refused as a public file."""
    from dpdesk.core.preview.sample import write_census_csv

    open_tab(qtbot, win, "Queries")
    click(qtbot, button(win, "Add"))
    choose(field(win, "Statistic"), "synthetic table")
    tick(field(win, "Columns"), "region", True)
    assert win.state.plan is not None, win.state.plan_error
    # the query table names the table's columns in its Column cell
    cells = [
        v.model().data(v.model().index(r, c))
        for v in win.findChildren(QTableView)
        if v.isVisible()
        for r in range(v.model().rowCount())
        for c in range(v.model().columnCount())
    ]
    assert "wage, education, region" in cells, cells
    qtbot.waitUntil(lambda: any("What it does" in t for t in visible_texts(win)), timeout=10_000)

    def home_files() -> dict[str, bytes]:
        """Everything in the home but the log and the caches of files' content identities (the public file's is
        remembered there, and the file as seen: it was compared with the private tables by content)."""
        caches = (dpdesk_home / "identity" / "files", dpdesk_home / "identity" / "seen")
        return {
            str(p): p.read_bytes()
            for p in dpdesk_home.rglob("*")
            if p.is_file() and p.suffix != ".log" and not any(c in p.parents for c in caches)
        }

    before = home_files()
    public = tmp_path / "published_sample.csv"
    write_census_csv(
        public, 3000, seed=7
    )  # another table of the same columns: a stand-in for a published one
    seen: list[str] = []
    errors: list[str] = []
    win.show_error = lambda message, details="": errors.append(message)
    answer_fidelity(qtbot, public, seen)
    click(qtbot, button(win, "Estimate on a public file"))
    qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
    settle(qtbot, win)
    assert seen == ["enabled before the declaration: False"] and errors == [], errors
    text = next((t for t in visible_texts(win) if "On published_sample.csv" in t), None)
    assert text is not None, visible_texts(win)
    assert "declared public, 3,000 rows; 3 simulated releases" in text and "uncharged" in text, text
    figures = re.findall(r"(\d+\.\d)%", text)
    assert len(figures) == 4 and all(0.0 <= float(f) <= 100.0 for f in figures), text
    assert home_files() == before  # nothing charged: no ledger entry, nothing written to the home
    # the table opened for release is not a public file
    answer_fidelity(qtbot, Path(win.state.data_path), [])
    click(qtbot, button(win, "Estimate on a public file"))
    qtbot.waitUntil(lambda: bool(errors), timeout=30_000)
    settle(qtbot, win)
    assert "is not a public file" in errors[0], errors
    # nor a re-saved copy of it (its rows in another order, CRLF line ends): recognised by its content
    lines = Path(win.state.data_path).read_text(encoding="utf-8").splitlines()
    copy = tmp_path / "resaved.csv"
    copy.write_bytes(("\r\n".join([lines[0], *reversed(lines[1:])]) + "\r\n").encode())
    errors.clear()
    answer_fidelity(qtbot, copy, [])
    click(qtbot, button(win, "Estimate on a public file"))
    qtbot.waitUntil(lambda: bool(errors), timeout=30_000)
    settle(qtbot, win)
    assert "it holds the rows of the table opened for release" in errors[0], errors


def test_the_form_offers_mst_and_the_adaptive_method_with_a_line_on_each(qtbot: Any, win: Any) -> None:
    """The Mechanism field of a synthetic table offers MST (the default) and the adaptive synthesiser, with one
    line saying how they differ; choosing the adaptive one writes "aim" with a delta above 0 (required), and the
    preview says what it does round by round."""
    open_tab(qtbot, win, "Queries")
    n = len(win.state.plan_data["queries"])
    click(qtbot, button(win, "Add"))
    choose(field(win, "Statistic"), "synthetic table")
    combo = field(win, "Mechanism")
    assert isinstance(combo, QComboBox) and combo.isVisible()
    assert [combo.itemData(i) for i in range(combo.count())] == ["mst", "aim"]
    assert combo.itemText(1).startswith("adaptive synthesiser")
    note = win.query_form.method_note
    assert note.isVisible() and "Adaptive (AIM)" in note.text() and "delta above 0" in note.text()
    choose(combo, "adaptive synthesiser")
    query = win.state.plan_data["queries"][n]
    assert query["mechanism"] == "aim" and query["delta"] > 0
    assert win.state.plan is not None, win.state.plan_error
    qtbot.waitUntil(lambda: any("round by round" in t for t in visible_texts(win)), timeout=10_000)
    # another statistic has one mechanism: no line on methods
    choose(field(win, "Statistic"), "count")
    assert not note.isVisible()
