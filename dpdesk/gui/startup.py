"""Start-up checks for the desktop app, run before Qt is loaded: a failure is a one-line cause and fix.

Without them Qt aborts the process when it finds no display (exit 134, with a message about
"xcb-cursor0" that names neither the cause nor the fix), and a missing system library or an
unwritable dpdesk folder ends in a traceback on a terminal that a user who started the app
from a menu never sees. Each check returns the message (the command line prints it and exits 2);
:func:`report` also shows it in a dialog when Qt can still start, and writes it to
``startup.log`` in the dpdesk home when that folder is writable. The log holds the message, the
exception's type and where it was raised (file, line, function): never an exception's text or a
frame's local variables, which could hold values from the data.

This module imports no Qt at load time (the checks run before Qt can crash the process).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import time
import traceback
from pathlib import Path

from dpdesk.i18n import _

#: The system packages a Linux desktop needs for the app when running from source (README names them too).
LINUX_PACKAGES = (
    "libgl1 libegl1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libfontconfig1"
)
#: What the frozen bundle still takes from the system: the OpenGL/EGL stack, which must match the user's graphics
#: driver (build_scripts/check_bundle_libs.py); its X11/xcb/xkbcommon and fontconfig libraries are bundled.
BUNDLE_PACKAGES = "libgl1 libegl1"


def linux_packages() -> str:
    """The Debian/Ubuntu packages to name when a library is missing: fewer for the bundle, which carries most."""
    return BUNDLE_PACKAGES if getattr(sys, "frozen", False) else LINUX_PACKAGES


LOG_NAME = "startup.log"
#: Platforms on which nobody sees a window: no dialog is shown there.
_HEADLESS = ("offscreen", "minimal", "vnc")


def display_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why Qt would find no display here (None: it may start). On Linux without ``QT_QPA_PLATFORM``, Qt needs
    ``DISPLAY`` (X11) or ``WAYLAND_DISPLAY``, and X11 needs the xcb-cursor library."""
    env = dict(os.environ) if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return _(
            "no display: DISPLAY and WAYLAND_DISPLAY are not set, so the desktop app cannot open a window. "
            "Start it from a desktop session (or ssh -X), or use the command line: dpdesk --help"
        )
    wayland = bool(env.get("WAYLAND_DISPLAY")) and _wayland_reachable(env)
    if not wayland and not (env.get("DISPLAY") and _x11_reachable(env["DISPLAY"])):
        return _(
            "cannot connect to the display {display} (it is set, but no display server answers there), so the "
            "desktop app cannot open a window. Start it from a desktop session, or use the command line: "
            "dpdesk --help"
        ).format(display=env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
    if not wayland and _x11_handshake(env["DISPLAY"]) is False:
        # the socket accepts, but the X server refuses this program (or says nothing): Qt would abort (134)
        return _(
            "the display {display} did not accept this program (its X server refused the connection or did not "
            "answer: this happens under sudo, where the display belongs to another user, or with an expired "
            "ssh -X session), so the desktop app cannot open a window. Start dpdesk as the desktop's own user "
            "without sudo (or let this user in, from the desktop: xhost +SI:localuser:{user}), or reconnect "
            "with ssh -X; if other programs open windows there, install the desktop libraries (Debian/Ubuntu: "
            "sudo apt install {packages}); or use the command line: dpdesk --help"
        ).format(display=env["DISPLAY"], user=_user(), packages=linux_packages())
    if not wayland and not getattr(sys, "frozen", False) and not _has_xcb_cursor():
        return _(
            "the system library libxcb-cursor, which Qt needs to open a window on X11, is missing. "
            "Install it (Debian/Ubuntu: sudo apt install libxcb-cursor0; Fedora: sudo dnf install "
            "xcb-util-cursor), or use the command line: dpdesk --help"
        )
    return None


def _x11_reachable(display: str, timeout: float = 2.0) -> bool:
    """Whether an X server answers at ``display`` ("[host]:N[.screen]"): its socket accepts a connection."""
    import socket

    m = re.fullmatch(r"(?:(.*)/)?([^:/]*):(\d+)(?:\.\d+)?", display)
    if m is None:
        return True  # a form this check does not know: let Qt try
    host, number = m.group(2), int(m.group(3))
    try:
        if host in ("", "unix"):
            x11 = f"/tmp/.X11-unix/X{number}"  # noqa: S108 - the X server's socket, only connected to
            for addr in ("\0" + x11, x11):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(timeout)
                    try:
                        sock.connect(addr)
                    except OSError:
                        continue
                    return True
            return False
        with socket.create_connection((host, 6000 + number), timeout=timeout):
            return True
    except OSError:
        return False


#: How long the X handshake may take before the display counts as not answering (a real server: milliseconds).
X11_HANDSHAKE_TIMEOUT = 5.0


@functools.lru_cache(maxsize=8)  # asked again by the dialog: a display that did not answer waits once
def _x11_handshake(display: str, timeout: float = X11_HANDSHAKE_TIMEOUT) -> bool | None:
    """Whether the X server at ``display`` completes the X handshake with this program (authorisation
    included), as Qt's connection would: libxcb's ``xcb_connect`` then ``xcb_connection_has_error``, through
    ctypes, in a thread given ``timeout`` seconds (a server that accepts and says nothing blocks it). None:
    libxcb cannot be loaded here (then Qt's X11 platform cannot start either; the check is left to Qt)."""
    import ctypes
    import ctypes.util
    import threading

    name = ctypes.util.find_library("xcb")
    if name is None:
        return None
    try:
        xcb = ctypes.CDLL(name)
        connect, has_error, disconnect = xcb.xcb_connect, xcb.xcb_connection_has_error, xcb.xcb_disconnect
    except (OSError, AttributeError):
        return None
    connect.restype, connect.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    has_error.restype, has_error.argtypes = ctypes.c_int, [ctypes.c_void_p]
    disconnect.restype, disconnect.argtypes = None, [ctypes.c_void_p]
    errors: list[int] = []

    def attempt() -> None:  # xcb_connect never returns NULL: a failed connection is an error object
        screen = ctypes.c_int(0)
        conn = connect(display.encode("utf-8", "surrogateescape"), ctypes.byref(screen))
        errors.append(has_error(conn))
        disconnect(conn)

    thread = threading.Thread(target=attempt, name="dpdesk-x11-check", daemon=True)
    thread.start()
    thread.join(timeout)  # a thread still blocked in xcb_connect is left behind: the process exits with 2
    return bool(errors) and errors[0] == 0


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - a hint only: no user name in the environment or the password file
        return "$(whoami)"


def _wayland_reachable(env: dict[str, str]) -> bool:
    name = env.get("WAYLAND_DISPLAY", "")
    path = Path(name) if name.startswith("/") else Path(env.get("XDG_RUNTIME_DIR", "/nonexistent")) / name
    return path.exists()


def _has_xcb_cursor() -> bool:
    import ctypes.util

    return ctypes.util.find_library("xcb-cursor") is not None


def qt_problem() -> str | None:
    """Why Qt cannot be loaded (None: it can): not installed, or a system library it needs (libGL) is missing."""
    try:
        import PySide6.QtGui
        import PySide6.QtWidgets  # noqa: F401
    except ImportError as exc:
        text = str(exc)
        lib = re.search(r"([\w.+-]+\.so(?:\.\d+)*)", text)
        if getattr(exc, "name", None) == "PySide6" or lib is None:
            return _(
                "The dpdesk desktop app cannot start: Qt (PySide6) is not installed. Everything it does is "
                "available from the command line: dpdesk budget, release, simulate, ledger (see dpdesk --help)."
            )
        return _(
            "the system library {lib}, which Qt needs, is missing. Install the desktop libraries "
            "(Debian/Ubuntu: sudo apt install {packages}), or use the command line: dpdesk --help"
        ).format(lib=lib.group(1), packages=linux_packages())
    return None


def home_problem() -> tuple[Path | None, str | None]:
    """The dpdesk home, and why it cannot be used (None: it can): it cannot be made, or is not writable."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.common.home import dpdesk_home

    try:
        home = dpdesk_home()
    except UsageError as exc:
        return None, str(exc)
    try:
        with open(home / LOG_NAME, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return home, _(
            "cannot write to the dpdesk folder {home}: {err} (set DPDESK_HOME to a writable folder)"
        ).format(home=home, err=exc.strerror or exc)
    return home, None


def log_failure(message: str, exc: BaseException | None = None, home: Path | None = None) -> Path | None:
    """Append the failure to ``startup.log`` in the dpdesk home (None: it could not be written). For an exception,
    only its type and where it was raised are written: no exception text, no local variables."""
    try:
        if home is None:
            from dpdesk.core.common.home import dpdesk_home

            home = dpdesk_home()
        path = home / LOG_NAME
        lines = [f"{time.strftime('%Y-%m-%d %H:%M:%S')} dpdesk could not start: {message}"]
        if exc is not None:
            lines.append(f"  {type(exc).__module__}.{type(exc).__qualname__}, raised at:")
            lines += [
                f"    {Path(f.filename).name}:{f.lineno} in {f.name}"
                for f in traceback.extract_tb(exc.__traceback__)
            ]
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    except Exception:  # noqa: BLE001 - the log is a last resort: its own failure must not hide the message
        return None
    return path


def show_dialog(message: str) -> bool:
    """Show the message in a dialog when Qt can open a window (not on a headless platform); whether it did."""
    if display_problem() is not None or qt_problem() is not None:
        return False
    if os.environ.get("QT_QPA_PLATFORM", "").split(":")[0] in _HEADLESS:
        return False
    try:
        from PySide6.QtWidgets import QApplication, QMessageBox

        app = QApplication.instance() or QApplication(sys.argv[:1])  # noqa: F841 - a dialog needs the application
        QMessageBox.critical(None, "dpdesk", message)
    except Exception:  # noqa: BLE001 - the dialog is a courtesy: the terminal and the log have the message
        return False
    return True


def report(message: str, exc: BaseException | None = None, home: Path | None = None) -> str:
    """Log the failure, show it in a dialog where Qt can start, and return the line for the terminal."""
    log = log_failure(message, exc, home)
    show_dialog(message)
    return message if log is None else message + " " + _("(written to {log})").format(log=log)
