"""What a malformed file can make a reader raise: any exception, and polars' panics.

A corrupted Parquet file can make polars (Rust) panic; the panic reaches Python as
``pyo3_runtime.PanicException``, a :class:`BaseException` that ``except Exception`` lets through (a traceback
and exit 1, the over-budget code). Readers catch :data:`reader_errors` instead: exactly those two, never
``KeyboardInterrupt`` or ``SystemExit``. Before the exception, polars' threads print the panic's report (and, with
``RUST_BACKTRACE`` set, a backtrace) on stderr: readers run under :func:`quiet_panics`, which keeps it off the
screen.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

#: The first line of a Rust panic report.
_PANIC_LINE = re.compile(rb"^thread '[^']*'( \(\d+\))? panicked at ")


def reader_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a reader of a malformed file may raise (evaluated only when one was raised)."""
    from polars.exceptions import PanicException

    return (Exception, PanicException)


_QUIET = threading.Lock()


def _without_panic_reports(data: bytes) -> bytes:
    """``data`` (what native code printed on stderr) without Rust's panic reports: a "thread '…' panicked at"
    line, its message, an optional "stack backtrace:" with its numbered frames, and the "note: …" that ends it."""
    out: list[bytes] = []
    lines = data.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if not _PANIC_LINE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        i += 1
        while i < len(lines) and not _PANIC_LINE.match(lines[i]):
            line = lines[i]
            i += 1
            if line.startswith(b"note: "):
                if i < len(lines) and not lines[i].strip():
                    i += 1  # the blank line after the note
                break
    return b"".join(out)


@contextlib.contextmanager
def quiet_panics() -> Iterator[None]:
    """While a polars reader runs, what native code prints on file descriptor 2 goes to a temporary file; after,
    everything but Rust's panic reports (a malformed file makes polars' threads panic, with backtraces, before the
    panic reaches Python as an exception dpdesk turns into a clear message) is passed on to the real stderr.

    One thread at a time redirects (another thread's reader, meanwhile, runs unredirected)."""
    if not _QUIET.acquire(blocking=False):
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield
            finally:
                with contextlib.suppress(Exception):
                    sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                tmp.seek(0)
                kept = _without_panic_reports(tmp.read())
                if kept:
                    with contextlib.suppress(OSError):
                        os.write(2, kept)
    finally:
        _QUIET.release()


def quietly(batches: Iterable[T]) -> Iterator[T]:
    """``batches`` (a reader's lazy batches), each drawn under :func:`quiet_panics`."""
    it = iter(batches)
    while True:
        with quiet_panics():
            try:
                item = next(it)
            except StopIteration:
                return
        yield item


def reader_message(exc: BaseException) -> str:
    """What a reader's exception says, for a message: a panic's internals are not shown (it means the file is
    damaged, or not of its kind)."""
    from polars.exceptions import PanicException

    if isinstance(exc, PanicException):
        return "the file is damaged, or not of its kind: the reader stopped on it"
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
