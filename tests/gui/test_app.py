"""The desktop app driven headless (pytest-qt): open, declare, plan, watch the meter, release, review."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt, QThreadPool
from PySide6.QtWidgets import QLineEdit, QMessageBox

from dpdesk.core.ledger.book import Ledger
from dpdesk.gui.app import build
from dpdesk.gui.models import QUERY_COLUMNS
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
PLAN = SAMPLES / "cps_wages_plan.json"


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path, tmp_path: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_confirm = lambda *_a: True
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)
    window.state.undo_stack.setClean()
    window.state.clean_index = window.state.undo_stack.index()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "census.csv"
    shutil.copy(SAMPLES / "census_sample.csv", p)
    return p


def open_table(qtbot: Any, win: Any, path: Path) -> None:
    win.open_data(str(path))
    qtbot.waitUntil(lambda: win.state.sha256 is not None and win.job is None, timeout=60_000)


def type_into(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def edit_cell(qtbot: Any, view: Any, row: int, col: int, text: str) -> None:
    qtbot.wait(20)  # let the previous editor close
    idx = view.model().index(row, col)
    view.setCurrentIndex(idx)
    view.edit(idx)
    qtbot.waitUntil(lambda: isinstance(view.focusWidget(), QLineEdit) and view.focusWidget().isVisible())
    editor = view.focusWidget()
    assert isinstance(editor, QLineEdit), editor
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.wait(20)  # Qt commits an item editor on Return through a queued call


def review(qtbot: Any, win: Any, path: Path) -> Any:
    """Review ``path`` from the app (a worker job) and return the review window it opens."""
    win.review_window = None
    assert win.review(str(path)) is not None
    qtbot.waitUntil(lambda: win.job is None and win.review_window is not None, timeout=60_000)
    return win.review_window


def row_of(model: Any, name: str) -> int:
    return model.names.index(name)


@pytest.mark.slow
def test_open_declare_plan_release_and_review(qtbot: Any, win: Any, data: Path, dpdesk_home: Path) -> None:
    open_table(qtbot, win, data)
    state = win.state
    assert state.peek is not None and state.peek.header[0] == "age"
    assert state.suggested["wage"] == "float" and state.suggested["region"] == "category"
    assert not win.release_action.isEnabled()

    schema = win.schema_view.schema
    model = win.schema_view.schema_model
    # tick wage and region, then type their public bounds and categories
    for name in ("wage", "region"):
        model.setData(
            model.index(row_of(model, name), 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole
        )
    assert set(state.plan_data["columns"]) == {"wage", "region"}
    assert "bounds" in (state.plan_error or "")  # bounds are asked for, never filled from the data
    edit_cell(qtbot, schema, row_of(model, "wage"), 3, "0")
    edit_cell(qtbot, schema, row_of(model, "wage"), 4, "5000")
    edit_cell(qtbot, schema, row_of(model, "region"), 5, "northeast, midwest, south, west")
    assert state.plan_data["columns"]["wage"]["bounds"] == [0, 5000]
    assert state.plan_data["columns"]["region"]["categories"] == ["northeast", "midwest", "south", "west"]

    # add a query with the form; the meter follows every keystroke
    form = win.query_form
    qtbot.mouseClick(form.add_button, Qt.MouseButton.LeftButton)
    assert state.plan is not None, state.plan_error
    form.statistic.setCurrentIndex(form.statistic.findData("histogram"))
    form.statistic.activated.emit(form.statistic.currentIndex())
    assert state.plan_data["queries"][0]["statistic"] == "histogram"
    assert form.mechanism.count() == 2  # laplace or gaussian only: invalid combinations cannot be entered
    type_into(qtbot, form.epsilon, "0.25")
    assert state.plan_data["queries"][0]["epsilon"] == 0.25
    assert "this plan 0.25" in win.meter.headline.text()
    qtbot.keyClick(form.epsilon, Qt.Key.Key_Return)  # editing finished: the next typing is a new undo step
    type_into(qtbot, form.epsilon, "5")
    assert "Over budget" in win.meter.headline.text()
    assert not win.release_action.isEnabled()
    win.undo_action.trigger()  # one undo step takes back the whole typed number
    assert state.plan_data["queries"][0]["epsilon"] == 0.25
    win.redo_action.trigger()
    assert state.plan_data["queries"][0]["epsilon"] == 5
    win.undo_action.trigger()
    assert win.release_action.isEnabled()

    win.release()
    qtbot.waitUntil(lambda: bool(state.results) and win.job is None, timeout=60_000)
    assert [r[1] for r in state.results] == ["northeast", "midwest", "south", "west"]
    assert win.results_view.model.rowCount() == 4
    entries = Ledger.for_dataset(dpdesk_home, state.sha256).verify()
    spend = [e for e in entries if e.type == "spend"]
    assert len(spend) == 1 and spend[0].charged.epsilon == 0.25
    assert win.ledger_view.model.rowCount() == 2 and "Chain verified" in win.ledger_view.status.text()

    # reopening a past release costs nothing and shows the same values
    released = [list(r) for r in state.results]
    state.show_results([], "")
    win.ledger_view.table.selectRow(1)
    win.ledger_view.show_selected()
    assert state.results == released
    assert len([e for e in Ledger.for_dataset(dpdesk_home, state.sha256).verify() if e.type == "spend"]) == 1
    assert win.errors == []


@pytest.mark.slow
def test_gui_and_cli_release_of_the_same_plan_charge_the_same(
    qtbot: Any, win: Any, data: Path, dpdesk_home: Path, tmp_path: Path
) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    win.release()
    qtbot.waitUntil(lambda: bool(win.state.results) and win.job is None, timeout=60_000)
    gui = [e for e in Ledger.for_dataset(dpdesk_home, win.state.sha256).verify() if e.type == "spend"][0]
    cli_home = tmp_path / "cli-home"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(PLAN),
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
        ],
        env={**__import__("os").environ, "DPDESK_HOME": str(cli_home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    cli = [e for e in Ledger.for_dataset(cli_home, win.state.sha256).verify() if e.type == "spend"][0]
    for key in ("plan_hash", "costs", "charged", "totals", "trace"):
        assert gui.fields[key] == cli.fields[key], key
    assert len(gui.values) == len(cli.values) == 12


@pytest.mark.slow
def test_save_and_reopen_plan_and_unsaved_prompt(qtbot: Any, win: Any, data: Path, tmp_path: Path) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    win.query_form.select_row(0)
    type_into(qtbot, win.query_form.epsilon, "0.05")
    assert win.state.dirty and win.windowTitle().endswith("*")
    target = tmp_path / "mine.json"
    win.ask_save_path = lambda *_a: str(target)
    assert win.save_plan(ask=True)
    assert not win.state.dirty
    saved = json.loads(target.read_text(encoding="utf-8"))
    assert saved["queries"][0]["epsilon"] == 0.05
    type_into(qtbot, win.query_form.epsilon, "0.06")
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Cancel
    assert not win.close()  # the unsaved change keeps the window open
    assert win.isVisible()
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard


def test_bad_file_gives_a_clear_message_and_keeps_the_state(
    qtbot: Any, win: Any, data: Path, tmp_path: Path
) -> None:
    open_table(qtbot, win, data)
    before = win.state.sha256
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a zip")
    win.open_data(str(bad))
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=30_000)
    assert str(bad) in win.errors[0] and "Traceback" not in win.errors[0]
    assert win.state.sha256 == before
    win.errors.clear()
    assert not win.open_plan(str(tmp_path / "missing.json"))
    assert "Cannot open the plan" in win.errors[0]


def test_a_long_job_can_be_cancelled(qtbot: Any, win: Any) -> None:
    import time

    def job(progress: Any) -> str:
        for i in range(10_000):
            progress.update(i, 10_000, "working")
            time.sleep(0.005)
        return "finished"

    results: list[Any] = []
    win.run_job(job, results.append, "test")
    qtbot.waitUntil(lambda: win.progress.isVisible() and win.progress.value() > 0, timeout=10_000)
    assert not win.open_action.isEnabled()
    qtbot.mouseClick(win.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.job is None, timeout=10_000)
    assert results == [] and "Cancelled" in win.status_label.text()
    assert win.open_action.isEnabled()


@pytest.mark.slow
def test_split_budget_never_exceeds_what_is_left(qtbot: Any, win: Any, data: Path) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    win.query_form.select_row(0)
    win.query_form.exec_dialog = lambda dialog: dialog.apply_button.isEnabled()  # equal weights: Apply
    qtbot.mouseClick(win.query_form.fit_button, Qt.MouseButton.LeftButton)
    eps = [q["epsilon"] for q in win.state.plan_data["queries"]]
    assert eps == [0.166666] * 6
    assert [q.epsilon for q in win.state.plan.queries] == eps  # validated, not changed in place
    assert win.state.report.fits
    win.undo_action.trigger()
    assert win.state.plan_data["queries"][0]["epsilon"] == 0.1


@pytest.mark.slow
def test_switching_to_advanced_fills_in_the_meters_delta_prime(qtbot: Any, win: Any, data: Path) -> None:
    """The delta' the meter showed advanced composition with is the one the plan gets: the same total."""
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    view = win.schema_view
    type_into(qtbot, view.budget_delta, "2e-7")
    assert win.state.plan is not None and win.state.plan.budget.delta == 2e-7, win.state.plan_error
    shown = win.state.report.methods["advanced"]
    view.method.setCurrentIndex(view.method.findData("advanced"))
    assert win.state.plan is not None, win.state.plan_error
    assert win.state.plan.accounting.delta_prime == shown.delta_prime == 2e-8  # min(delta_B / 10, 1e-7)
    now = win.state.report.methods["advanced"]
    assert win.state.report.method == "advanced" and now.plan == shown.plan


@pytest.mark.slow
def test_models_pass_the_qt_model_tester(qtmodeltester: Any, qtbot: Any, win: Any, data: Path) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    for model in (
        win.schema_view.preview_model,
        win.schema_view.schema_model,
        win.query_form.model,
        win.ledger_view.model,
        win.results_view.model,
    ):
        qtmodeltester.check(model, force_py=True)
    assert win.schema_view.preview_model.rowCount(QModelIndex()) > 0


@pytest.mark.slow
def test_query_list_shows_words_in_the_users_language(
    qtbot: Any, win: Any, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert win.open_plan(str(PLAN))
    model = win.query_form.model
    stat, mech = QUERY_COLUMNS.index("statistic"), QUERY_COLUMNS.index("mechanism")
    plan_words = [(q["statistic"], q["mechanism"]) for q in win.state.plan_data["queries"]]
    assert ("count", "laplace") in plan_words
    row = plan_words.index(("count", "laplace"))
    assert model.data(model.index(row, stat)) == "count" and model.data(model.index(row, mech)) == "Laplace"
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    assert model.data(model.index(row, stat)) == "计数" and model.data(model.index(row, mech)) == "拉普拉斯"
    assert win.state.plan_data["queries"][row]["statistic"] == "count"  # the plan keeps its own words


@pytest.mark.slow
def test_no_noise_preview_reads_data(qtbot: Any, win: Any) -> None:
    """Without any table open, a plan's noise preview and budget are complete."""
    assert win.open_plan(str(PLAN))
    assert win.state.report is not None and win.state.report.fits
    win.preview.show_query(1)
    assert len(win.preview.canvases) == 2  # mean: noisy count and noisy sum
    assert not win.release_action.isEnabled()  # but nothing can be released without a table


@pytest.mark.slow
def test_review_window_names_a_tampered_file(qtbot: Any, win: Any, data: Path, tmp_path: Path) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    win.release()
    qtbot.waitUntil(lambda: bool(win.state.results) and win.job is None, timeout=60_000)
    out = tmp_path / "pkg"
    win.ask_folder = lambda *_a: str(out)
    win.export_release()
    qtbot.waitUntil(lambda: win.job is None and (out / "ledger.json").exists(), timeout=60_000)
    assert sorted(p.name for p in out.iterdir()) == ["ledger.json", "plan.json", "release.csv", "report.pdf"]
    w = review(qtbot, win, out)
    assert "Intact" in w.status.text()
    (out / "report.pdf").write_bytes((out / "report.pdf").read_bytes() + b"%")
    w = review(qtbot, win, out)
    assert "NOT INTACT" in w.status.text() and "report.pdf" in w.status.text()
    w.grab().save(str(tmp_path / "review.png"))
    assert (tmp_path / "review.png").stat().st_size > 0


@pytest.mark.slow
def test_scale_to_budget_and_statement(qtbot: Any, win: Any, data: Path, tmp_path: Path) -> None:
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    before = [q["epsilon"] for q in win.state.plan_data["queries"]]  # 0.1 0.2 0.2 0.2 0.1 0.1, sum 0.9

    def scale(dialog: Any) -> bool:
        qtbot.mouseClick(dialog.as_weights, Qt.MouseButton.LeftButton)
        return bool(dialog.apply_button.isEnabled())

    win.query_form.exec_dialog = scale
    qtbot.mouseClick(win.query_form.fit_button, Qt.MouseButton.LeftButton)
    after = [q["epsilon"] for q in win.state.plan_data["queries"]]
    assert after == [pytest.approx(b / 0.9, abs=2e-6) for b in before]
    assert sum(after) <= 1.0 and win.state.report.fits
    win.release()
    qtbot.waitUntil(lambda: bool(win.state.results) and win.job is None, timeout=60_000)
    target = tmp_path / "statement.pdf"
    win.export_statement(str(target))
    qtbot.waitUntil(lambda: win.job is None and target.exists(), timeout=60_000)
    from pypdf import PdfReader

    text = " ".join((p.extract_text() or "").replace("\n", " ") for p in PdfReader(str(target)).pages)
    assert "Budget statement" in text and "median education" in text
    assert re.search(r"ε (1|0\.99999\d*), δ 0\.0000001", text), (
        text
    )  # the scaled plan spent (almost) all of it


def _misspelled_plan(tmp_path: Path) -> tuple[Path, int, int]:
    """The sample plan with "west" typed "wets"; the sample's rows in the west and its wages above 5000."""
    import csv

    plan = json.loads(PLAN.read_text(encoding="utf-8"))
    cats = plan["columns"]["region"]["categories"]
    cats[cats.index("west")] = "wets"
    p = tmp_path / "wets.json"
    p.write_text(json.dumps(plan), encoding="utf-8")
    with (SAMPLES / "census_sample.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return p, sum(r["region"] == "west" for r in rows), sum(float(r["wage"]) > 5000 for r in rows)


@pytest.mark.slow
def test_release_confirmation_shows_the_data_check_before_anything_is_charged(
    qtbot: Any, win: Any, data: Path, tmp_path: Path, dpdesk_home: Path
) -> None:
    plan, west, high = _misspelled_plan(tmp_path)
    open_table(qtbot, win, data)
    asked: list[tuple[str, str]] = []
    ledger = Ledger.for_dataset(dpdesk_home, win.state.sha256)
    # a clean plan: the counts (clamping included) are shown under the plain title
    win.ask_confirm = lambda title, text: asked.append((title, text)) and False
    assert win.open_plan(str(PLAN))
    win.release()
    qtbot.waitUntil(lambda: len(asked) == 1 and win.job is None, timeout=60_000)
    assert asked[0][0] == "Release" and f"{high} clamped" in asked[0][1] and "Warning" not in asked[0][1]
    assert not ledger.exists()
    asked.clear()
    # the misspelled category
    assert win.open_plan(str(plan))

    def answer(title: str, text: str) -> bool:
        asked.append((title, text))
        assert not ledger.exists()  # asked before anything is charged
        return len(asked) > 1  # no the first time, yes the second

    win.ask_confirm = answer
    win.release()
    qtbot.waitUntil(lambda: len(asked) == 1 and win.job is None, timeout=60_000)
    title, text = asked[0]
    assert title == "Release despite data problems?"
    assert "spend ε 0.9" in text
    assert f"• column 'region': 0 missing, {west} outside the declared categories" in text
    assert f"• column 'wage': 0 missing, 0 unparsable, {high} clamped to the bounds [0, 5000]" in text
    assert "• column 'education': 0 missing, 0 unparsable, 0 clamped to the bounds [0, 18]" in text
    assert "unparsable values, in 'region'" in text and text.endswith("Release now?")
    assert not ledger.exists() and not win.state.results  # "no": nothing charged, nothing shown
    win.release()
    qtbot.waitUntil(lambda: bool(win.state.results) and win.job is None, timeout=60_000)
    assert len(asked) == 2 and asked[1] == asked[0]
    assert [e.type for e in ledger.verify()] == ["settings", "spend"]
    assert win.errors == []


def _fill_simulation(
    dialog: Any, qtbot: Any, *, runs: int, out: Path, public: Path | None = None, declare: bool = True
) -> None:
    dialog.show()
    qtbot.waitExposed(dialog)
    if public is not None:
        dialog.ask_open_path = lambda *_a: str(public)
        qtbot.mouseClick(dialog.browse_public, Qt.MouseButton.LeftButton)
        assert dialog.public.isChecked() and not dialog.ok_button.isEnabled()
        if declare:
            dialog.declare.setChecked(True)
    dialog.runs.setValue(runs)
    dialog.ask_save_path = lambda *_a: str(out.with_suffix(""))
    qtbot.mouseClick(dialog.browse_out, Qt.MouseButton.LeftButton)
    assert dialog.out_path.text() == str(out)


@pytest.mark.slow
def test_simulate_releases_on_a_stand_in_or_a_public_file_never_the_private_table(
    qtbot: Any, win: Any, data: Path, tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.gui.views.simulate_dialog import SimulateDialog

    fill: dict[str, Any] = {}
    dialogs: list[Any] = []

    def run_dialog(self: Any) -> int:
        dialogs.append(self)
        _fill_simulation(self, qtbot, **fill)
        why = self.why_not()
        cancel = self.buttons.button(self.buttons.StandardButton.Cancel)
        qtbot.mouseClick(self.ok_button if not why else cancel, Qt.MouseButton.LeftButton)
        return self.result()

    monkeypatch.setattr(SimulateDialog, "exec", run_dialog)
    infos: list[str] = []
    win.show_info = lambda _title, text: infos.append(text)
    assert not win.simulate_action.isEnabled()  # no plan yet
    assert win.open_plan(str(PLAN))
    assert win.simulate_action.isEnabled()

    # the stand-in table (the default), no table open at all
    out = tmp_path / "stand_in.csv"
    fill.update(runs=4, out=out)
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(infos), timeout=60_000)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# NOT FOR PUBLICATION")
    assert lines[1] == (
        "# source: a stand-in table of 1000 rows generated from the plan's schema (no data was read)"
    )
    assert len(lines) == 3 + 4 * 12
    assert str(out) in infos[-1] and "NOT FOR PUBLICATION" in infos[-1]
    assert str(out) in win.status_label.text()

    # the table opened for release is refused as "public", even before it has a ledger
    open_table(qtbot, win, data)
    assert win.open_plan(str(PLAN))
    fill.update(runs=2, out=tmp_path / "refused.csv", public=data)
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "is not a public file" in win.errors[-1] and not (tmp_path / "refused.csv").exists()
    # so is a file with a ledger
    released = tmp_path / "released_before.csv"
    released.write_bytes(data.read_bytes() + b"30,male,12,arts,40,1000,south,state_01,1\n")
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.release.steps import release

    release(load_plan(PLAN), released, dpdesk_home, None)
    fill.update(public=released)
    win.errors.clear()
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "has a ledger" in win.errors[-1] and not (tmp_path / "refused.csv").exists()
    # without the declaration the dialog does not run at all
    fill.update(public=tmp_path / "x.csv", declare=False)
    infos.clear()
    win.simulate_action.trigger()
    assert "declare that the file is public" in dialogs[-1].hint.text() and win.job is None and not infos
    # nor an edited copy of the opened table ("south" made "west": most of its rows are the table's own)
    edited = tmp_path / "edited_copy.csv"
    edited.write_bytes((SAMPLES / "census_sample.csv").read_bytes().replace(b"south", b"west"))
    fill.update(public=edited, declare=True, out=tmp_path / "edited.csv")
    win.errors.clear()
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(win.errors), timeout=60_000)
    assert "it holds the rows of the table opened for release" in win.errors[-1], win.errors
    assert not (tmp_path / "edited.csv").exists()
    # a file that is public indeed (another table of the same columns)
    from dpdesk.core.preview.sample import write_census_csv

    public = tmp_path / "published_sample.csv"
    write_census_csv(public, 2000, seed=11)  # (the bundled sample is seed 7)
    fill.update(public=public, declare=True, out=tmp_path / "public.csv")
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.job is None and bool(infos), timeout=60_000)
    lines = (tmp_path / "public.csv").read_text(encoding="utf-8").splitlines()
    assert lines[1] == f"# source: {public}, a file declared public by the user" and len(lines) == 3 + 2 * 12
    assert len(win.errors) == 1
    for p in (dpdesk_home / "ledgers").glob("*.jsonl"):  # only the release made above wrote a ledger
        assert all(e.type != "simulate" for e in Ledger(p.stem, p).verify())


@pytest.mark.slow
def test_a_simulation_can_be_cancelled(
    qtbot: Any, win: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpdesk.gui.views.simulate_dialog import SimulationChoice

    assert win.open_plan(str(PLAN))
    out = tmp_path / "sim.csv"
    win.ask_simulation = lambda: SimulationChoice(runs=1_000_000, out=out, rows=100_000)
    win.simulate_action.trigger()
    qtbot.waitUntil(lambda: win.progress.isVisible() and win.progress.value() > 0, timeout=60_000)
    assert not win.simulate_action.isEnabled()
    qtbot.mouseClick(win.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.job is None, timeout=60_000)
    assert "Cancelled" in win.status_label.text() and not out.exists()
    assert win.simulate_action.isEnabled()


def _tricky_files(folder: Path) -> dict[str, tuple[Path, dict[str, str]]]:
    """Files on which the app and the command line once suggested different types, with the one rule's answer."""
    import polars as pl
    import xlsxwriter  # type: ignore[import-untyped]

    def csv(name: str, text: str | bytes) -> Path:
        p = folder / name
        if isinstance(text, str):
            p.write_text(text, encoding="utf-8")
        else:
            p.write_bytes(text)
        return p

    late = "\n".join(
        "n/a" if r == 300 else str(r) for r in range(1, 400)
    )  # text after the app's old 200 rows
    book = folder / "book.xlsx"
    with xlsxwriter.Workbook(book) as wb:
        ws = wb.add_worksheet()
        for r, row in enumerate([("n", "x", "c"), (1, 1.5, "a"), (2, 2, "b"), (None, 3.25, "1")]):
            for c, v in enumerate(row):
                if v is not None:
                    ws.write(r, c, v)
    pq = folder / "t.parquet"
    pl.DataFrame({"n": [1, None, 3], "x": [1.5, 2.0, None], "c": ["a", "b", "1"]}).write_parquet(pq)
    return {
        "ints with a blank": (csv("blank.csv", "a,b\n1,x\n,y\n3,z\n"), {"a": "int", "b": "category"}),
        "comma decimals": (csv("comma.csv", "a;b\n1,5;2\n2,25;3\n"), {"a": "category", "b": "int"}),
        "numbers in quotes": (csv("quoted.csv", 'a,b\n"1","2.5"\n"3","4"\n'), {"a": "int", "b": "float"}),
        "digit categories": (csv("digits.csv", "region,w\n1,2\n2,3\n3,4\n"), {"region": "int", "w": "int"}),
        "an empty column": (csv("empty.csv", "a,b\n1,\n2,\n"), {"a": "int", "b": "category"}),
        "a BOM": (csv("bom.csv", "\ufeffage,w\n1,2.5\n"), {"age": "int", "w": "float"}),
        "GB18030": (
            csv("gb.csv", "城市,年龄\n北京,30\n上海,41\n".encode("gb18030")),
            {"城市": "category", "年龄": "int"},
        ),
        "text after row 200": (csv("late.csv", "x\n" + late + "\n"), {"x": "category"}),
        "digit separators": (csv("underscore.csv", "a\n1_000\n2\n"), {"a": "category"}),
        "nan and inf": (csv("nan.csv", "a,b\n1,2\nnan,inf\n"), {"a": "float", "b": "float"}),
        "full-width digits": (csv("wide.csv", "a\n１２\n3\n"), {"a": "category"}),
        "spaces around a name": (csv("spaces.csv", " age ,w\n1,2\n"), {"age": "int", "w": "int"}),
        "a workbook": (book, {"n": "int", "x": "float", "c": "category"}),
        "a Parquet file": (pq, {"n": "int", "x": "float", "c": "category"}),
    }


@pytest.mark.slow
def test_the_app_and_the_command_line_suggest_the_same_types(
    qtbot: Any, win: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 12 (one type suggestion): the app's schema view and ``dpdesk suggest`` read the same sample with one
    rule. They used to differ (200 rows parsed by float() against 1,000 rows cast by polars)."""
    from dpdesk.cli import main

    differ = []
    for case, (path, expected) in _tricky_files(tmp_path).items():
        win.open_data(str(path))
        qtbot.waitUntil(
            lambda p=path: win.job is None and win.state.peek is not None and win.state.peek.path == str(p),
            timeout=60_000,
        )
        app = dict(win.state.suggested)
        capsys.readouterr()
        assert main(["suggest", str(path)]) == 0, case
        lines = [ln[2:] for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
        cli = dict(ln.rsplit(": ", 1) for ln in lines)
        if app != cli or app != expected:
            differ.append(f"{case}: app {app}, command line {cli}, rule {expected}")
    assert not differ, "\n".join(differ)
