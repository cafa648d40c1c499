"""Issue 14 item 7: start-up failures are a one-line cause and fix, exit 2, a dialog where Qt can start and a
line in the dpdesk home's startup.log (without exception text or local variables).

On the code before this fix: without a display Qt aborted the process (exit 134) with its "xcb-cursor0 is
needed" message; a missing libGL ended in a traceback (exit 1); an unwritable home and an unexpected
failure while building the window showed no dialog and left no log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpdesk import cli
from dpdesk.gui import startup

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux display rules")


def run_app(home: Path, env: dict[str, str], code: str = "") -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    child = code + "\nimport sys\nfrom dpdesk.cli import main\nsys.exit(main([]))\n"
    return subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        env={**base, "DPDESK_HOME": str(home), **env},
        timeout=120,
        check=False,
    )


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("dpdesk: ")
    return lines[0]


def test_no_display_is_one_line_and_exit_2(dpdesk_home: Path) -> None:
    line = one_line(run_app(dpdesk_home, {}))
    assert "DISPLAY" in line and "dpdesk --help" in line and "xcb-cursor0" not in line
    log = (dpdesk_home / "startup.log").read_text(encoding="utf-8")
    assert "DISPLAY and WAYLAND_DISPLAY are not set" in log and str(dpdesk_home / "startup.log") in line


def test_display_nobody_answers_is_one_line(dpdesk_home: Path) -> None:
    number = next(n for n in range(973, 999) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    line = one_line(run_app(dpdesk_home, {"DISPLAY": f":{number}"}))
    assert f"cannot connect to the display :{number}" in line


def test_display_checks() -> None:
    assert startup.display_problem({}, "win32") is None
    assert startup.display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert "not set" in (startup.display_problem({}, "linux") or "")


LIBGL_MISSING = r"""
import importlib.abc, sys
class NoGL(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "PySide6.QtGui":
            raise ImportError("libGL.so.1: cannot open shared object file: No such file or directory")
sys.meta_path.insert(0, NoGL())
"""


def test_libgl_missing_names_the_library_and_packages(dpdesk_home: Path) -> None:
    line = one_line(run_app(dpdesk_home, {"QT_QPA_PLATFORM": "offscreen"}, LIBGL_MISSING))
    assert "libGL.so.1" in line and "libgl1" in line and "not installed" not in line
    assert "libGL.so.1" in (dpdesk_home / "startup.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_libgl_missing_in_the_bundle_names_only_what_the_bundle_lacks(dpdesk_home: Path) -> None:
    """Issue 25 item 7: the frozen bundle carries its X11/xcb/xkbcommon and fontconfig libraries, so the message
    names only the OpenGL/EGL packages (before: the source run's list, libxcb-cursor0 and the rest included)."""
    frozen = "import sys\nsys.frozen = True\n" + LIBGL_MISSING
    line = one_line(run_app(dpdesk_home, {"QT_QPA_PLATFORM": "offscreen"}, frozen))
    assert "libGL.so.1" in line and "libgl1 libegl1" in line
    assert not any(p in line for p in ("libxcb", "libxkbcommon", "libfontconfig")), line


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch, qapp: object) -> list[str]:
    """Pretend Qt can show a window (a real platform) and record the dialogs instead of showing them."""
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    return shown


def test_unwritable_home_message_and_dialog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dialogs: list[str]
) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("DPDESK_HOME", str(not_a_folder / "home"))
    assert cli.main([]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "DPDESK_HOME" in err
    assert len(dialogs) == 1 and "DPDESK_HOME" in dialogs[0]


def test_failure_while_starting_is_logged_without_values(
    dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dialogs: list[str]
) -> None:
    import dpdesk.gui.app

    def broken(path: str | None = None) -> int:
        secret_local = "wage=123456"  # noqa: F841 - a frame's local must not reach the log
        raise RuntimeError("row 7 has value 98765")

    monkeypatch.setattr(dpdesk.gui.app, "main", broken)
    assert cli.main([]) == 2
    err = capsys.readouterr().err.strip()
    assert "RuntimeError" in err and len(err.splitlines()) == 1
    assert dialogs and "RuntimeError" in dialogs[0]
    log = (dpdesk_home / "startup.log").read_text(encoding="utf-8")
    assert "RuntimeError" in log and "test_startup.py" in log and "in broken" in log
    assert "98765" not in log and "123456" not in log


class FakeX11:
    """A socket at an X display's place (Linux's abstract socket namespace, where libxcb and the reachability
    check look first) that accepts connections and then closes them at once (``silent``: keeps them open and
    says nothing) - as an X server refusing this program does (sudo with DISPLAY set, an expired ssh -X
    cookie), seen from the socket."""

    def __init__(self, silent: bool) -> None:
        import socket
        import threading

        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for n in range(900, 973):
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                continue
            try:
                self.sock.bind(f"\0/tmp/.X11-unix/X{n}")
            except OSError:  # a display (or another test's server) is there
                continue
            self.number = n
            break
        self.sock.listen(8)
        self.silent = silent
        self.held: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.silent:
                self.held.append(conn)
            else:
                conn.close()

    def close(self) -> None:
        import contextlib
        import socket

        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize("silent", [False, True], ids=["refuses", "says-nothing"])
def test_a_display_that_refuses_x_is_one_line_not_qts_abort(dpdesk_home: Path, silent: bool) -> None:
    """The socket accepts, the X handshake fails: the old check (the socket connects) let Qt abort the process
    (exit 134, "xcb-cursor0 is needed"); now exit 2 and one line naming the cause and the fix."""
    server = FakeX11(silent)
    try:
        line = one_line(run_app(dpdesk_home, {"DISPLAY": f":{server.number}"}))
    finally:
        server.close()
    assert f"the display :{server.number} did not accept this program" in line
    assert "sudo" in line and "xhost +SI:localuser:" in line and "ssh -X" in line and "libxcb-cursor0" in line
    assert "xcb-cursor0 is needed" not in line and server.accepted >= 1
    log = (dpdesk_home / "startup.log").read_text(encoding="utf-8")
    assert "did not accept this program" in log
