"""What every command shares in printing: the numbers, progress and notes on stderr, standard output that
cannot be written, and the documented exit code of each error (see :mod:`dpdesk.core.common.errors`)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable
from typing import Any

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.errors import DpdeskError
from dpdesk.core.common.progress import Progress, stage_label
from dpdesk.core.common.text import shown
from dpdesk.i18n import _

#: What the running command has done that cannot be undone (a release charged and written), said on stderr if its
#: report then cannot be printed: a caller must not take the failure for "nothing happened" and run it again.
_DONE: list[str] = []


class _StdoutFailed(Exception):
    """Standard output could not be written (not a closed pipe: a full disk, an I/O error)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _Stdout:
    """Standard output, whose write errors (but a closed pipe's) are told apart from every other OSError."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StdoutFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush cannot fail on a closed pipe."""

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stream)
        pass


def record_done(note: str) -> None:
    """Remember that the running command did something that cannot be undone (said if its report then fails)."""
    _DONE.append(note)


def run_command(
    handler: Callable[[argparse.Namespace], int], args: argparse.Namespace, as_program: bool
) -> int:
    """Run one command with standard output guarded; every exit is a documented code."""
    _DONE.clear()
    real_stdout = sys.stdout
    sys.stdout = _Stdout(real_stdout)  # all that print and json.dump use of a text stream
    try:
        return _run(handler, args, as_program)
    finally:
        if sys.stdout is not None and isinstance(sys.stdout, _Stdout):
            sys.stdout = real_stdout


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace, as_program: bool) -> int:
    """Run one command; every exit is a documented code (see :mod:`dpdesk.core.common.errors`)."""
    code: int | None = None
    try:
        code = int(handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not after main returned
        if as_program:
            # Everything is written, fsynced and closed; the process is about to end. Leave the objects for the
            # operating system instead of a last collection of every cycle in numpy and OpenDP (30-40 ms, a
            # sixth of ``dpdesk budget``; benchmarks/cli_startup.py).
            gc.freeze()
        return code
    except BrokenPipeError:  # the reader went away (dpdesk ledger | head -1): end quietly
        _silence_stdout()
        return 0 if code is None else code
    except (
        _StdoutFailed
    ) as exc:  # standard output cannot be written (dpdesk ledger > /dev/full): one line, exit 2
        _silence_stdout()
        print(
            "dpdesk: "
            + _("cannot write to standard output: {err}").format(err=exc.error.strerror or exc.error),
            file=sys.stderr,
        )
        if _DONE:  # what was done stays done (a release charged and written): say so, and do not say "failed"
            for note in _DONE:
                print("dpdesk: " + note, file=sys.stderr)
            return 0
        return 2
    except DpdeskError as exc:
        print("dpdesk: " + shown(exc, keep_newlines=True), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("dpdesk: " + _("interrupted"), file=sys.stderr)
        return 130


def progress() -> Progress:
    """The progress shown on stderr when it is a terminal (a percentage per stage), else none."""
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, stage: str) -> None:
        pct = 100 * done // total if total else 100
        print(f"\r{stage_label(stage)} {pct:3d}%", end="", file=sys.stderr, flush=True)

    return Progress(show)


def tell_migration(text: str | None) -> None:
    """Tell the user, on stderr, that a ledger was migrated from the old format (a service's notice)."""
    if text is not None:
        for line in text.split("\n"):
            print("dpdesk: " + _("note: {line}").format(line=shown(line)), file=sys.stderr)


def num(x: float | None) -> str:
    """A figure as the command line prints it: six significant digits, "-" for none."""
    return "-" if x is None else numfmt.plain(x, 6)
