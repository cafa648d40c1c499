"""Where dpdesk writes: every output is checked, and a release folder claimed, before anything is charged or drawn.

- An output file (a simulation, an exported ledger, a budget statement) never replaces a file dpdesk reads (the
  data file, the plan) nor anything under the dpdesk home, even when asked to; an existing file only when asked to
  (``--force``): :func:`check_out_file`.
- A release package is built in a temporary folder beside its final place and renamed into place whole
  (:func:`claim_out_dir`, :class:`ClaimedFolder`): an interruption or a full disk leaves no partial package and no
  temporary file; the temporary folder is made exclusively (and, on POSIX, locked), so that of several releases to
  one folder one goes on and the others are refused before anything is charged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from dpdesk.core.common import faults
from dpdesk.core.common.errors import UsageError
from dpdesk.i18n import _


def _err(exc: OSError) -> str:
    return str(exc.strerror or exc)


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file (by inode when both exist, else by their resolved paths)."""
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return True
    with contextlib.suppress(OSError, RuntimeError):
        return a.resolve() == b.resolve()
    return False


def _under(path: Path, folder: Path) -> bool:
    for p in {Path(os.path.abspath(path)), _resolved(path)}:
        for f in {Path(os.path.abspath(folder)), _resolved(folder)}:
            if p == f or f in p.parents:
                return True
    return False


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def check_out_file(out: Path, *, force: bool, home: Path | None, reads: Sequence[str | Path] = ()) -> None:
    """Refuse (:class:`UsageError`, before any work) to write the file ``out`` over a file being read
    (``reads``: the data file, the plan) or anything under the dpdesk ``home``, even with ``force``; over a folder;
    or over an existing file unless ``force``."""
    for r in reads:
        if _same(out, Path(r)):
            raise UsageError(
                _(
                    "{path} is a file dpdesk is reading; it is never overwritten: choose another output file"
                ).format(path=out)
            )
    if home is not None and _under(out, home):
        raise UsageError(
            _(
                "{path} is inside the dpdesk home {home}, which holds the ledgers; choose another output file"
            ).format(path=out, home=home)
        )
    if out.is_dir():
        raise UsageError(_("{path} is a folder; give the name of a file to write").format(path=out))
    _check_parent(out)
    if os.path.lexists(out) and not force:
        raise UsageError(
            _("{path} already exists; choose another name, or replace it with --force").format(path=out)
        )
    _check_regular(out)
    try:
        st = os.stat(out)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        # another name of the same file (a hard link): it may be a ledger, the data, or another file dpdesk must
        # never replace, and whichever it is cannot be told from here
        raise UsageError(
            _(
                "{path} has {n} names (hard links to one file), one of which may be a file dpdesk must never "
                "replace, such as a ledger; it is not replaced even with --force: choose another output file"
            ).format(path=out, n=st.st_nlink)
        )


def _check_regular(out: Path) -> None:
    """``out`` is missing or a regular file: --force never replaces a device node (as root, ``--out /dev/null
    --force`` would have replaced the system's /dev/null), a FIFO, a socket or a symbolic link (whose target
    the user may have meant)."""
    try:
        mode = os.lstat(out).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        kind = _("a symbolic link")
    elif stat.S_ISFIFO(mode):
        kind = _("a named pipe (FIFO)")
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = _("a device")
    elif stat.S_ISSOCK(mode):
        kind = _("a socket")
    else:
        kind = _("not a file")
    raise UsageError(
        _(
            "{path} is {kind}, not a regular file; --force replaces only regular files: choose another "
            "output file"
        ).format(path=out, kind=kind)
    )


def _check_parent(out: Path, *, release: bool = False) -> None:
    """The folder ``out`` goes in is a folder (a regular file in the path is named as such)."""
    parent = Path(os.path.abspath(out)).parent
    for p in (parent, *parent.parents):
        if os.path.lexists(p):
            if not os.path.isdir(p):
                what = _("{parent} is a file, not a folder: {path} cannot be written under it").format(
                    parent=p, path=out
                )
                if release:
                    what = _("{problem}; nothing was charged").format(problem=what)
                raise UsageError(what)
            return


def write_out_file(out: Path, data: bytes) -> None:
    """Write an output file (checked by :func:`check_out_file`) whole or not at all: into a new temporary file
    beside it (made exclusively, never through a link), fsynced, then renamed over ``out``. A full disk or any
    other failure leaves ``out`` as it was (an old file replaced with --force is kept) and no temporary file;
    it is a :class:`UsageError` naming the file (exit 2)."""
    import tempfile

    out = Path(out)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".dpdesk-writing", dir=out.parent)
        with os.fdopen(fd, "wb") as f:
            faults.step(f"write {out.name}")
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = stat.S_IMODE(os.stat(out).st_mode)  # a replaced file keeps its permissions
        except OSError:
            mode = 0o644
        os.chmod(tmp, mode)
        _check_regular(out)  # again at the rename: one put in its place meanwhile is not replaced either
        faults.step(f"rename {out.name}")
        os.replace(tmp, out)
        tmp = None
    except OSError as exc:
        raise UsageError(
            _("cannot write {path}: {err}; nothing was written there").format(path=out, err=_err(exc))
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    with contextlib.suppress(OSError):
        _fsync(out.parent)


class ClaimedFolder:
    """A release folder claimed before the charge: the package is written into ``work`` (a new temporary folder
    beside ``final``) and :meth:`finish` renames it into place whole; :meth:`abandon` removes it."""

    def __init__(self, final: Path, work: Path, lock: int | None) -> None:
        self.final = final
        self.work = work
        self._lock = lock

    def finish(self) -> None:
        """Make the written package durable and rename it into place (the final folder is new or empty)."""
        _fsync(self.work)
        faults.step(f"rename {self.final.name}")
        if (
            sys.platform == "win32" and self.final.is_dir()
        ):  # pragma: no cover - POSIX renames over an empty folder
            self.final.rmdir()
        os.replace(self.work, self.final)
        self._unlock()
        with contextlib.suppress(OSError):
            faults.step(f"fsync the folder after {self.final.name}")
            _fsync(self.final.parent)

    def abandon(self) -> None:
        """Remove the temporary folder and everything written into it (best effort; nothing was moved into place)."""
        shutil.rmtree(self.work, ignore_errors=True)
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock)
            self._lock = None


def _fsync(folder: Path) -> None:
    if sys.platform == "win32":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _try_lock(work: Path) -> int | None:
    """Open ``work`` and take its exclusive lock without waiting: the descriptor, or None when another process
    holds it (on Windows the folder's exclusive creation is the only claim: -1)."""
    if sys.platform == "win32":  # pragma: no cover - POSIX locks the folder
        return -1
    import fcntl

    fd = os.open(work, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


def claim_out_dir(out: Path) -> ClaimedFolder:
    """Check and claim a release folder before anything is charged (raises :class:`UsageError`, exit 2).

    ``out`` must be new or an empty folder, not a symbolic link, in a folder dpdesk can write; its temporary
    sibling ``.NAME.dpdesk-writing`` is made exclusively and locked. One left behind by an interrupted release
    (no longer locked) is cleared and reused; one another release holds refuses this one."""
    out = Path(os.path.abspath(out))
    if not out.name:
        raise UsageError(_("{path} cannot hold a release; choose a new folder").format(path=out))
    if os.path.islink(out):
        raise UsageError(
            _("{path} is a symbolic link; give the path of a new or empty folder itself").format(path=out)
        )
    work = out.parent / f".{out.name}.dpdesk-writing"
    _check_parent(out, release=True)
    try:
        fd = _claim_work(out, work)
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    claim = ClaimedFolder(out, work, fd if fd >= 0 else None)
    try:
        _check_final(out)
    except BaseException:
        claim.abandon()
        raise
    return claim


def _claim_work(out: Path, work: Path) -> int:
    """Make ``work`` exclusively and lock it (the lock's descriptor; -1 on Windows); clear and take over one left
    by an interrupted release (no longer locked); refuse one that another release holds."""
    for _attempt in range(3):
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(work, 0o755)
        except FileExistsError:
            pass
        else:
            try:
                fd = _try_lock(work)
            except OSError:
                shutil.rmtree(work, ignore_errors=True)
                raise
            return -1 if fd is None else fd
        if os.path.islink(work) or not work.is_dir():
            raise UsageError(_("{path} is in the way of the release; remove it first").format(path=work))
        try:
            fd = _try_lock(work)
        except FileNotFoundError:
            continue  # finished (renamed into place) meanwhile: try again
        if fd is None or fd == -1:
            raise UsageError(
                _(
                    "another release is being written to {path}; wait for it (if no dpdesk is running, an "
                    "interrupted release left {work}: remove it)"
                ).format(path=out, work=work)
            )
        for child in work.iterdir():  # left by an interrupted release: never moved into place
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        return fd
    raise UsageError(_("another release is being written to {path}; wait for it").format(path=out))


def _check_final(out: Path) -> None:
    """The final folder (checked after the claim, so that a release finishing meanwhile is seen) is new or empty."""
    if os.path.lexists(out):
        if os.path.islink(out) or not out.is_dir():
            raise UsageError(_("{path} exists and is not a folder").format(path=out))
        try:
            empty = not any(out.iterdir())
        except OSError as exc:
            raise _cannot_write(out, exc) from None
        if not empty:
            raise UsageError(_("{path} is not empty; choose a new folder for the release").format(path=out))


def _cannot_write(out: Path, exc: OSError) -> UsageError:
    return UsageError(
        _("cannot write the release to {path}: {err}; nothing was charged").format(path=out, err=_err(exc))
    )
