"""Fault injection at the durable steps of a write, for the crash tests (inert unless asked for).

Each write, fsync and rename that makes a ledger change durable calls :func:`step` with a name first. The
environment variable ``DPDESK_FAULT`` turns the calls into faults, counted from 1 in each process:

- ``kill:N``: the N-th step kills the process with SIGKILL (on Windows: exits at once, no clean-up);
- ``enospc:N``: the N-th step raises ``OSError(ENOSPC)``, as a full disk does;
- ``stop:N``: the N-th step stops the process with SIGSTOP (a test then kills it from outside, mid-step: a
  streamed release's partitions, say; POSIX only);
- ``trace:FILE``: every step appends its number and name to FILE (how a test learns how many steps there are).

Unset (always, outside tests) every call is a no-op. Nothing here can make a write succeed that would fail, or
reveal anything: a fault only stops the work earlier than the disk or the operating system could.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

#: The environment variable read by :func:`step`.
ENV = "DPDESK_FAULT"

_count = 0


def step(name: str) -> None:
    """One durable step (``name``: what it does, e.g. ``write ledger``) is about to run."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    global _count  # noqa: PLW0603 - one counter per process, by design
    _count += 1
    kind, _sep, arg = spec.partition(":")
    if kind == "trace":
        with open(arg, "a", encoding="utf-8") as f:
            f.write(f"{_count} {name}\n")
        return
    if not arg.isdigit() or int(arg) != _count:
        return
    if kind == "kill":
        if sys.platform == "win32":  # pragma: no cover - the crash tests run on POSIX
            os._exit(137)
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "stop" and hasattr(signal, "SIGSTOP"):
        os.kill(os.getpid(), signal.SIGSTOP)
    elif kind == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def reset() -> None:
    """Start counting from 1 again (for tests that inject in-process)."""
    global _count  # noqa: PLW0603 - one counter per process, by design
    _count = 0
