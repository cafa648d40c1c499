"""Issue 28 item 7, seeing before spending: the Queries tab's preview draws the selected query's release as it would
look, simulated on a stand-in table generated from the schema (never the table opened for release): bars with
their 95% intervals for a table of values, the spread of a single value's simulated releases (the query's own
noise, first: a mean's, not its count's); it follows the query's epsilon, in a worker, once the typing stops."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QLineEdit, QMessageBox

from dpdesk.gui.app import build
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)

PEOPLE, MEAN, REGIONS = 0, 1, 2  # rows of the sample plan


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, w = build(dpdesk_home)
    qtbot.addWidget(w)
    w.errors = []
    w.show_error = lambda message, details="": w.errors.append(message)
    w.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    w.resize(1320, 820)
    w.show()
    assert w.open_plan(str(SAMPLES / "cps_wages_plan.json"))
    yield w
    QThreadPool.globalInstance().waitForDone(60_000)
    w.state.undo_stack.setClean()
    w.state.clean_index = w.state.undo_stack.index()


def look_of(qtbot: Any, win: Any, row: int, epsilon: float | None = None) -> Any:
    """Select ``row`` and wait for its simulated look (at ``epsilon`` when given) to be drawn."""
    name = win.state.plan_data["queries"][row]["name"]
    view = win.query_form.look_view
    if view.row != row:
        win.query_form.select_row(row)

    def drawn() -> bool:
        look = view.look
        return (
            look is not None
            and look.query == name
            and (epsilon is None or look.epsilon == epsilon)
            and view.canvas is not None
            and view.drawn is look
            and view.worker is None
        )

    qtbot.waitUntil(drawn, timeout=60_000)
    return view.look


def type_epsilon(qtbot: Any, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    edit.clearFocus()


def test_a_histogram_is_drawn_as_bars_with_the_stated_accuracy_and_follows_epsilon(
    qtbot: Any, win: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    look = look_of(qtbot, win, REGIONS)
    categories = ["northeast", "midwest", "south", "west"]
    assert list(look.groups) == categories
    (ax,) = win.query_form.look_view.canvas.figure.axes
    assert len(ax.patches) == len(categories)  # one bar per category
    assert [t.get_text() for t in ax.get_xticklabels()] == categories
    # the intervals' half-width is the accuracy the query states (each cell within ±15 at 95%)
    sentence, numbers = win.state.query_accuracy(REGIONS)
    assert numbers["error"] == 15.0 and "±15 " in sentence
    assert look.half_widths() == [15.0] * 4
    (whiskers,) = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    _line, _caps, (bars,) = whiskers
    assert [round(s[1][1] - s[0][1], 6) for s in bars.get_segments()] == [30.0] * 4  # each drawn ±15
    caption = win.query_form.look_view.caption.text()
    assert (
        "±15)" in caption and "stand-in table of 2,000 rows" in caption and "Not for publication" in caption
    )
    canvas = win.query_form.look_view.canvas

    # more than four times the epsilon: a quarter of the half-width or less; typed key by key ("0", "0.", "0.8",
    # "0.85": two of them valid plans), drawn once, after the typing stops
    from dpdesk.gui import workers
    from dpdesk.services import simulate

    calls: list[str] = []
    started: list[Any] = []
    real, real_start = simulate.query_look, workers.start
    monkeypatch.setattr(simulate, "query_look", lambda r, *a: calls.append(r.query) or real(r, *a))
    monkeypatch.setattr(workers, "start", lambda w, pool=None: started.append(w) or real_start(w, pool))
    type_epsilon(qtbot, win.query_form.epsilon, "0.85")
    look = look_of(qtbot, win, REGIONS, epsilon=0.85)
    assert len(started) == 1 and calls == ["regions"], (started, calls)
    assert win.query_form.look_view.canvas is not canvas
    _sentence, numbers = win.state.query_accuracy(REGIONS)
    assert numbers["error"] <= 15 * 0.2 / 0.85 + 1  # counts are whole: rounded up
    assert look.half_widths() == [numbers["error"]] * 4, (look.half_widths(), numbers["error"])


def test_a_mean_shows_its_own_noise_first_then_its_parts(qtbot: Any, win: Any) -> None:
    """The spread of the simulated means: of 400 simulated releases, the share within the stated half-width of
    the stand-in's value is 95% or a little more (rounding the bound up); the test accepts 88% to 99.5%: for any
    seed, a false failure has a probability below 1e-5 (binomial tails, n = 400, p from 0.95 to 0.97)."""
    look = look_of(qtbot, win, MEAN)
    preview = win.preview
    qtbot.waitUntil(lambda: preview.own_canvas is not None and preview.look is look, timeout=10_000)
    body = preview.body_layout
    order = [body.itemAt(i).widget() for i in range(body.count()) if body.itemAt(i).widget() is not None]
    charts = [w for w in order if w is preview.own_holder or w in preview.canvases]
    assert charts[0] is preview.own_holder, "the mean's own chart comes before its count's and sum's"
    assert len(preview.canvases) == 2  # then the noisy count and the noisy sum, as before
    for canvas in (
        win.query_form.look_view.canvas,
        preview.own_canvas,
    ):  # the Queries tab's and the preview's
        (ax,) = canvas.figure.axes
        assert ax.get_title() == "mean wage"
        assert len(ax.patches) == 30  # the 400 simulated means in 30 bins: the mean's noise, not a count's
    assert look.single and len(look.draws) == 400
    draws = [float(v) for v in look.draws]
    assert all(0 <= v <= 5000 for v in draws)  # a mean of wages within their bounds, not a count of rows
    _sentence, numbers = win.state.query_accuracy(MEAN)
    truth, error = float(look.truths[0]), numbers["error"]
    within = sum(abs(v - truth) <= error for v in draws) / len(draws)
    assert 0.88 <= within <= 0.995, within
    caption = win.query_form.look_view.caption
    assert "95% interval" in caption.text() and "this query's own noise" in caption.toolTip()


def test_the_table_opened_for_release_is_never_read(
    qtbot: Any, win: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of 37 rows whose every wage is 4321.5 is opened, then taken away: the looks are drawn on the
    2,000-row stand-in (the plan's expected rows), never on it. The stand-in's mean wage of uniform values in
    [0, 5000] is 2500 with a standard error of about 32: a mean above 4000 has a probability below 1e-100."""
    data = tmp_path / "census.csv"
    lines = (SAMPLES / "census_sample.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    wage = header.index("wage")
    rows = [line.split(",") for line in lines[1:38]]
    for r in rows:
        r[wage] = "4321.5"
    data.write_text("\n".join([lines[0], *(",".join(r) for r in rows)]) + "\n", encoding="utf-8")
    win.open_data(str(data))
    qtbot.waitUntil(lambda: win.job is None, timeout=120_000)
    assert win.state.sha256 is not None and not win.errors, win.errors
    shutil.move(str(data), str(tmp_path / "gone.csv"))  # nothing can read it now

    def refuse(*_a: Any, **_k: Any) -> None:
        raise AssertionError("a preview read a table")

    from dpdesk.core import loading
    from dpdesk.core.preview import simulate

    monkeypatch.setattr(loading, "load_table", refuse)
    monkeypatch.setattr(simulate, "load_table", refuse)
    people = look_of(qtbot, win, PEOPLE)
    assert people.truths == ("2000",) and people.rows == 2000 and not people.public
    mean = look_of(qtbot, win, MEAN)
    assert float(mean.truths[0]) < 4000
    assert all("4321.5" not in v for v in (*mean.values, *mean.truths, *mean.draws))
    assert not win.errors and not win.query_form.look_view.error
