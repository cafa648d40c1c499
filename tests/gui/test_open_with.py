"""Opening files with dpdesk (``dpdesk PATH``, ``dpdesk open PATH``, the file manager, a drop): a release package
(its folder or its ledger.json) in the review window, a plan as a plan, anything else named; the window's icon;
the About box's version, licence and notices."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QMessageBox

import dpdesk
from dpdesk.cli import main as cli_main
from dpdesk.gui.app import build
from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.timeout(300)
PLAN = SAMPLES / "cps_wages_plan.json"


@pytest.fixture
def win(qtbot: Any, dpdesk_home: Path) -> Any:
    _app, window = build(dpdesk_home)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda message, details="": window.errors.append(message)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.show()
    yield window
    QThreadPool.globalInstance().waitForDone(30_000)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real release package of the planted table (made once: a release and its PDF take seconds)."""
    from dpdesk.core.release.steps import release
    from tests.core.test_package import plan, planted

    where = tmp_path_factory.mktemp("package")
    out = where / "my release"
    release(plan(), planted(where), where / "home", out)
    return out


def opened_review(qtbot: Any, win: Any, path: Path) -> Any:
    win.review_window = None
    assert win.open_path(str(path)) is not None, win.errors
    qtbot.waitUntil(lambda: win.job is None and win.review_window is not None, timeout=60_000)
    return win.review_window


@pytest.mark.slow
def test_a_package_folder_opens_in_the_review_window(qtbot: Any, win: Any, package: Path) -> None:
    w = opened_review(qtbot, win, package)
    assert "Intact" in w.status.text() and not win.errors
    assert win.state.plan_path is None  # not loaded as a plan


@pytest.mark.slow
def test_a_packages_ledger_json_opens_its_package_not_a_plan(qtbot: Any, win: Any, package: Path) -> None:
    w = opened_review(qtbot, win, package / "ledger.json")
    assert "Intact" in w.status.text() and not win.errors
    assert win.state.plan_path is None
    # the package is reviewed whole: a changed file beside the ledger.json is named
    tampered = package.parent / "tampered"
    shutil.copytree(package, tampered)
    (tampered / "release.csv").write_bytes((tampered / "release.csv").read_bytes() + b"\n")
    w = opened_review(qtbot, win, tampered / "ledger.json")
    assert "NOT INTACT" in w.status.text() and "release.csv" in w.status.text()


@pytest.mark.slow
def test_a_plan_opens_as_a_plan_whatever_its_name(qtbot: Any, win: Any, tmp_path: Path) -> None:
    named = tmp_path / "wages plan.txt"  # told by its content, not by its name
    shutil.copy(PLAN, named)
    assert win.open_path(str(named)) is True
    assert win.state.plan is not None and not win.state.plan_error and not win.errors
    assert win.state.plan_path == named


@pytest.mark.slow
def test_what_dpdesk_does_not_open_is_named(qtbot: Any, win: Any, tmp_path: Path) -> None:
    other = tmp_path / "settings.json"
    other.write_text('{"theme": "dark"}', encoding="utf-8")
    folder = tmp_path / "photos"
    folder.mkdir()
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    for path in (other, folder, notes):
        win.errors.clear()
        assert win.open_path(str(path)) is None
        (message,) = win.errors
        assert str(path) in message and "a release package (its folder or its ledger.json)" in message
    assert win.state.plan_path is None and win.state.data_path is None


def test_the_window_has_dpdesks_icon(win: Any) -> None:
    icon = win.windowIcon()
    assert not icon.isNull() and icon.availableSizes(), "no window icon"


def test_about_shows_the_version_and_the_licence(qtbot: Any, win: Any) -> None:
    win.about()
    dialog = win.about_dialog
    assert dpdesk.__version__ in dialog.header.text()
    assert ("development build" in dialog.header.text()) is dpdesk.is_development_version(dpdesk.__version__)
    assert "MIT" in dialog.header.text() and "Copyright (c) 2026 the dpdesk authors" in dialog.header.text()
    assert dialog.licence.toPlainText() == (ROOT / "LICENSE").read_text(encoding="utf-8")
    dialog.close()


def test_about_shows_the_bundled_notices_or_says_they_are_absent(
    qtbot: Any, win: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PyInstaller bundle's resources (sys._MEIPASS/resources): the notices the build wrote, shown whole; a copy
    without them says so."""
    bundle = tmp_path / "bundle"
    licenses = bundle / "resources" / "licenses"
    licenses.mkdir(parents=True)
    (licenses / "THIRD_PARTY_NOTICES.txt").write_text("numpy 2.3\nBSD-3-Clause\n许可\n", encoding="utf-8")
    (licenses / "LICENSE").write_text("MIT License (bundled)\n", encoding="utf-8")
    monkeypatch.setattr("sys._MEIPASS", str(bundle), raising=False)
    win.about()
    dialog = win.about_dialog
    assert dialog.third_party.toPlainText() == "numpy 2.3\nBSD-3-Clause\n许可\n"
    assert dialog.licence.toPlainText() == "MIT License (bundled)\n"
    assert dialog.qt_notice.toPlainText() == "Not bundled with this copy."
    dialog.close()


def test_dpdesk_path_names_what_it_cannot_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``dpdesk PATH`` (the file manager's command) and ``dpdesk open PATH``: a path that is none of what dpdesk
    opens is named with what it opens, exit 2, before any window (never argparse's "invalid choice")."""
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    folder = tmp_path / "photos"
    folder.mkdir()
    for argv in ([str(notes)], ["open", str(notes)], [str(folder)], [str(tmp_path / "gone.csv")]):
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("dpdesk: " + argv[-1]) and "Traceback" not in err, err
        assert "invalid choice" not in err


def test_exported_ledgers_and_tables_are_told_by_content(tmp_path: Path) -> None:
    from dpdesk.services.opening import identify

    export = tmp_path / "export.txt"
    entry = {"seq": 1, "type": "settings", "time": "t", "dataset": "ds-1", "prev": "0" * 64, "hash": "h"}
    export.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    assert identify(export).kind == "ledger"
    parquet = tmp_path / "table.bin"
    parquet.write_bytes(b"PAR1" + b"\0" * 16)
    assert identify(parquet).kind == "table"
    assert identify(SAMPLES / "census_sample.csv").kind == "table"
    assert identify(PLAN).kind == "plan"


def test_a_table_whose_first_header_starts_with_a_brace_is_a_table(tmp_path: Path) -> None:
    """A CSV whose first column is named "{id}" is a table, not a JSON file that is neither plan nor ledger."""
    from dpdesk.services.opening import identify

    braces = tmp_path / "braces.csv"
    braces.write_text("{id},wage\n1,10\n", encoding="utf-8")
    assert identify(braces).kind == "table"
    plan_named_csv = tmp_path / "plan.csv"  # a plan is still told by its content whatever its name
    plan_named_csv.write_bytes(PLAN.read_bytes())
    assert identify(plan_named_csv).kind == "plan"


def test_a_misspelt_command_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["relase"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_a_deeply_nested_json_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.services.opening import identify

    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")
    with pytest.raises(DpdeskError, match="neither a plan"):
        identify(deep)
