"""Tables larger than memory: a release's exact aggregates in one streaming pass, under a memory limit.

Before a release loads its table, :func:`memory_estimate` estimates from the file's size and the declared
columns how much memory the in-memory path would take (the whole process: interpreter and libraries, the
columns, the statistics' working copies). When that fits under the memory limit (by default a fraction of
the machine's memory, :func:`default_memory_limit`; ``dpdesk release --memory-limit``), the table is loaded
whole as before. When it does not, :func:`load_for_release` streams the file through the same readers batch
by batch (:class:`~dpdesk.core.loading.columns.TableBuilder` with a sink) into a :class:`StreamedAggregates`:

* every statistic's exact aggregate is mergeable (``Statistic.partial``: counts, fixed-point sums, histogram
  bins and the candidate counts of quantiles and selections, all integers), so each batch's state is added
  to the running one exactly (Python integers: no float drift, no overflow) and the merged state gives the
  same :class:`~dpdesk.core.dp.aggregates.Exact` as the in-memory path, bit for bit;
* the file's SHA-256 and the loader's counts (missing, undeclared, unparsable, clamped values, for the data
  check) come from the same pass; floats outside their bounds are counted batch by batch;
* with a person id column, the rows that have an id (the declared columns only, in their compact form, and the
  id's keyed 128-bit hash) are first written to partition files in a private temporary folder, chosen by the id's hash
  mixed with a key from :mod:`secrets`, so that all rows of one person land in one partition; then each
  partition is read back, bounded with :func:`~dpdesk.core.dp.aggregates.bound_rows_per_person` (the same rule:
  at most k rows per id, those with the smallest keyed bounding hashes, :mod:`dpdesk.core.dp.bounding`, so the
  same rows as in memory) and aggregated. The folder is removed
  afterwards, also on an error or a cancel.

**No raw value outlives the process** (issue 24, item 4), whatever ends it: the partition files have no name
(:func:`tempfile.TemporaryFile`: ``O_TMPFILE`` on Linux, else created and unlinked before a byte is written; on
Windows deleted on close), so the operating system frees them when the process ends, by SIGKILL, the OOM
killer or a closed terminal too, and nothing else can open them meanwhile. Their folder (private, 0700, named
with the process id) is removed at the end, on an error, and on SIGTERM or SIGHUP (a handler removes it, then
the signal ends the process as it would have); a folder left by a process that is gone, or by an older version
(which wrote named ``N.rows`` files), is removed at the next release (:func:`sweep_stale_partitions`).

Everything here is secret (exact values of the private table): it stays in memory or in the private temporary
folder, and only the release's noise reveals anything.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from dpdesk.core.common import faults
from dpdesk.core.common.errors import InputError, UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.dp.aggregates import bound_rows_per_person, merge_states, partial_statistic
from dpdesk.core.dp.aggregates_base import Exact
from dpdesk.core.dp.bounding import BoundKey
from dpdesk.core.loading import Table, load_table
from dpdesk.core.loading.columns import id_key_scope, int_dtype
from dpdesk.core.loading.csvfile import BLOCK_CAP
from dpdesk.core.loading.guards import check_regular_file, parquet_rows
from dpdesk.core.loading.table import Column
from dpdesk.core.model.spec import ColumnSpec, Plan
from dpdesk.i18n import _

if TYPE_CHECKING:
    from collections.abc import Iterator

    from dpdesk.core.dp.queries_base import QueryDesign

#: The default memory limit, as a fraction of the machine's physical memory.
DEFAULT_MEMORY_FRACTION = 0.5
#: What a release takes beside its table: the interpreter, numpy, polars, OpenDP, the identity pass and the
#: report's libraries (a whole streamed release peaked at 433 MiB on 10M and on 76M rows; see benchmarks/stream.py).
BASE_BYTES = 448 * 2**20
#: Working memory per row of the in-memory path beyond the loaded columns: the keep mask and the statistics'
#: chunked temporaries (a float column's clipped copy), and the reader's batches in flight.
WORK_BYTES_PER_ROW = 12
#: Working memory per row when bounding rows per person in memory (the bounding hashes, the sort order, the
#: sorted ids, the ranks: see :func:`~dpdesk.core.dp.aggregates.bound_rows_per_person`).
BOUND_BYTES_PER_ROW = 64
#: At most this many partition files are open at once (a larger table makes larger partitions).
MAX_PARTITIONS = 1024
#: The smallest memory limit accepted (the process itself needs about this much).
MIN_MEMORY_LIMIT = 256 * 2**20
#: The block reader's block under a memory limit: what is left above this, divided by :data:`BLOCK_DIVISOR`, at
#: least :data:`MIN_BLOCK_BYTES` (the identity pass, which parses every column of a block, peaked at 389 MiB with
#: 8 MiB blocks, 250 with 4, 194 with 2 and 136 with 1, on a CSV of 1.5M rows; issue 24, item 4).
BLOCK_FLOOR_BYTES = 192 * 2**20
BLOCK_DIVISOR = 48
MIN_BLOCK_BYTES = 2**20

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_memory(text: str) -> int:
    """Bytes from a size such as ``512MiB``, ``2G``, ``1.5GB`` or ``800000000`` (binary units: 1K = 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise UsageError(
            _("cannot read {value} as a memory size; write e.g. 512MiB or 2GiB").format(value=repr(text))
        )
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n < MIN_MEMORY_LIMIT:
        raise UsageError(
            _("a memory limit of {value} is too small: dpdesk needs at least {least} MiB").format(
                value=text.strip(), least=MIN_MEMORY_LIMIT // 2**20
            )
        )
    return n


def default_memory_limit() -> int:
    """A fraction (:data:`DEFAULT_MEMORY_FRACTION`) of the machine's physical memory (4 GiB if unknown)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = 8 * 2**30
    return max(MIN_MEMORY_LIMIT, int(total * DEFAULT_MEMORY_FRACTION))


def row_bytes(columns: dict[str, ColumnSpec], id_column: str | None) -> int:
    """Bytes per row of the loaded declared columns (as :mod:`dpdesk.core.loading.columns` stores them)."""
    total = 0
    for spec in columns.values():
        if spec.type == "category":
            total += 2
        elif spec.type == "int":
            assert spec.bounds is not None
            total += np.dtype(int_dtype(spec.bounds)).itemsize + 1  # and the missing mask
        else:
            total += 8
    return total + (17 if id_column else 0)


def estimate_rows(path: Path) -> int:
    """The number of rows a file holds: a Parquet file's metadata says; a text file's is estimated from the
    size of its first lines (a workbook's from its size, generously)."""
    suffix = path.suffix.lower()
    size = path.stat().st_size
    if suffix in (".parquet", ".pq"):
        try:
            return parquet_rows(path)  # from the footer, as the loader's guard reads it: nothing decoded
        except InputError:
            return 0  # a damaged file: the loader names the problem
    if suffix in (".xlsx", ".xlsm", ".xls"):
        return size // 4  # compressed XML: a few bytes a row at the very least
    with path.open("rb") as f:
        head = f.read(1 << 20)
    lines = head.count(b"\n")
    if lines <= 1:
        return 1
    first = head.find(b"\n") + 1
    per_row = (len(head) - first) / max(1, lines - 1)
    return int((size - first) / max(per_row, 1.0) * 1.05) + 1


def memory_estimate(path: Path, columns: dict[str, ColumnSpec], id_column: str | None) -> int:
    """The peak memory (bytes, whole process) a release of this file would take in memory, estimated before
    loading from the file's size and the declared columns."""
    per_row = row_bytes(columns, id_column) + WORK_BYTES_PER_ROW + (BOUND_BYTES_PER_ROW if id_column else 0)
    return BASE_BYTES + estimate_rows(path) * per_row


@dataclass
class _Partitions:
    """Rows spread over partition files by their id's keyed hash, in a private temporary folder (removed by
    :meth:`close`, or at the latest when the object is collected or the interpreter exits)."""

    folder: Path
    dtype: np.dtype[Any]
    files: list[BinaryIO]
    key: int = field(default_factory=lambda: secrets.randbits(64))

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(self, _remove, self.files, self.folder)
        _watch(self.folder)

    def write(self, rec: np.ndarray, ids: np.ndarray) -> None:
        n = len(self.files)
        part = ((ids[:, 0] ^ np.uint64(self.key)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
        which = (part % np.uint64(n)).astype(np.intp)
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(n + 1))
        for i in range(n):
            if bounds[i + 1] > bounds[i]:
                self.files[i].write(rec[order[bounds[i] : bounds[i + 1]]].tobytes())
        faults.step("write partitions")  # a crash test stops or kills the process here, mid-partitioning

    def read(self, i: int) -> np.ndarray:
        f = self.files[i]
        f.flush()
        f.seek(0)
        data = np.frombuffer(f.read(), dtype=self.dtype)
        f.truncate(0)  # read once: its disk space is given back at once
        return data

    def close(self) -> None:
        self._finalizer()


def _remove(files: list[BinaryIO], folder: Path) -> None:
    for f in files:
        f.close()
    shutil.rmtree(folder, ignore_errors=True)
    _unwatch(folder)


#: The prefix of a partition folder's name (then the process id, then a random part).
PARTITIONS_PREFIX = "dpdesk-partitions-"
#: The partition folders of this process, removed by the SIGTERM/SIGHUP handler.
_LIVE: set[Path] = set()
_LIVE_LOCK = threading.Lock()
#: The handlers replaced while partition folders exist (restored when the last is removed).
_PREVIOUS: dict[int, Any] = {}
_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _watch(folder: Path) -> None:
    """Remove ``folder`` if SIGTERM or SIGHUP ends the process (the handler is installed only from the main
    thread and only over the default disposition: an application's own handler is left alone)."""
    with _LIVE_LOCK:
        _LIVE.add(folder)
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in _SIGNALS:
            if sig not in _PREVIOUS and signal.getsignal(sig) is signal.SIG_DFL:
                _PREVIOUS[sig] = signal.signal(sig, _on_signal)


def _unwatch(folder: Path) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(folder)
        if _LIVE or threading.current_thread() is not threading.main_thread():
            return
        for sig, previous in list(_PREVIOUS.items()):
            if signal.getsignal(sig) is _on_signal:
                signal.signal(sig, previous)
            del _PREVIOUS[sig]


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP while partition folders exist: remove them, then end the process as the signal's
    default would (its files, without names, go with it)."""
    for folder in list(_LIVE):
        shutil.rmtree(folder, ignore_errors=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _alive(pid: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - os.kill would end the process; its open files stay
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def temp_base(parent: str | None = None) -> Path:
    """The folder partition folders go in: ``parent``, else the one :func:`tempfile.gettempdir` would choose,
    found without it (its first call makes a probe file named by :mod:`random`'s generator, and no such
    generator runs while a release does)."""
    if parent is not None:
        return Path(parent)
    if tempfile.tempdir is not None:
        return Path(tempfile.tempdir)
    # the candidates gettempdir tries, in its order: the environment's TMPDIR, TEMP, TMP, then the platform's
    candidates = [os.environ.get(v, "") for v in ("TMPDIR", "TEMP", "TMP")]
    if os.name == "nt":  # pragma: no cover - Windows
        local = os.path.expandvars(r"%LOCALAPPDATA%\Temp")
        candidates += [local, r"C:\TEMP", r"C:\TMP", r"\TEMP", r"\TMP"]
    else:
        candidates += ["/tmp", "/var/tmp", "/usr/tmp"]  # noqa: S108 - the platform's temporary folders
    for c in candidates:
        if c and os.path.isdir(c) and os.access(c, os.W_OK | os.X_OK):
            return Path(c)
    return Path.cwd()


def _new_partition_folder(parent: str | None) -> Path:
    """A new folder (mode 0700) named by the process id and a name from :mod:`secrets`, as mkdtemp would
    make it, but without :mod:`random`'s generator."""
    base = temp_base(parent)
    for _attempt in range(100):
        folder = base / f"{PARTITIONS_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"no new folder could be made in {base}")


@contextlib.contextmanager
def private_folder(parent: str | None = None) -> Iterator[Path]:
    """A new folder (mode 0700) under the temporary folder for files holding raw rows (a database table read as
    CSV): removed when the block ends, by the SIGTERM/SIGHUP handler, or, if the process was killed, by the next
    :func:`sweep_stale_partitions`."""
    folder = _new_partition_folder(parent)
    _watch(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _unwatch(folder)


def sweep_stale_partitions(parent: str | None = None) -> list[Path]:
    """Remove the partition folders under the temporary folder (``parent``: another one) that no running
    dpdesk is using: those of a process that is gone (killed, say), and those of older versions, whose named
    ``N.rows`` files held raw rows; only this user's folders, never through a link. Returns what was removed."""
    base = temp_base(parent)
    removed: list[Path] = []
    try:
        found = list(base.glob(PARTITIONS_PREFIX + "*"))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for folder in found:
        with contextlib.suppress(OSError):
            st = folder.lstat()
            if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid) or folder in _LIVE:
                continue
            m = re.fullmatch(re.escape(PARTITIONS_PREFIX) + r"(\d+)-[^/]*", folder.name)
            if m is not None and _alive(int(m.group(1))):
                continue  # a release running now (or a process that took a dead one's id: swept later)
            shutil.rmtree(folder)
            removed.append(folder)
    return removed


class StreamedAggregates:
    """The sink of a streamed release: each batch's exact state merged into the running one (see the module)."""

    def __init__(
        self,
        plan: Plan,
        designs: list[QueryDesign],
        n_partitions: int = 1,
        temp_parent: str | None = None,
    ) -> None:
        self.plan = plan
        self.designs = designs
        self.columns = plan.columns
        self.id_column = plan.privacy_unit.id_column
        self.n_partitions = max(1, n_partitions)
        self.temp_parent = temp_parent
        self.states: list[list[list[int]] | None] = []
        self.outside: dict[str, int] = {}
        self.rows = 0
        self._parts: _Partitions | None = None
        self._pending = False
        self.restart()

    # -------------------------------------------------------------- the sink
    def restart(self) -> StreamedAggregates:
        """Start again empty (a reader's new attempt reads the file from its start)."""
        self.close()
        self.states = [None] * len(self.designs)
        self.outside = dict.fromkeys(
            (n for n, s in self.columns.items() if s.type == "float" and s.bounds is not None), 0
        )
        self.rows = 0
        self._pending = False  # rows written to partitions and not yet aggregated
        return self

    def add(self, batch: Table) -> None:
        """Take one batch: count the floats outside their bounds, then aggregate it (no id column) or write
        its rows to their partitions (with one)."""
        self.rows += batch.n_rows
        for name in self.outside:
            spec = self.columns[name]
            assert spec.bounds is not None
            self.outside[name] += _outside(batch.columns[name].values, *spec.bounds)
        if self.id_column is None:
            self._aggregate(batch, np.ones(batch.n_rows, dtype=bool))
        else:
            self._partition(batch)

    def _aggregate(self, batch: Table, keep: np.ndarray) -> None:
        for i, d in enumerate(self.designs):
            part = partial_statistic(d, batch, keep, self.columns)
            self.states[i] = merge_states(self.states[i], part)

    # -------------------------------------------------------------- bounding by person id
    def _record_dtype(self) -> np.dtype[Any]:
        fields: list[tuple[str, Any, Any]] = [("id", np.uint64, (2,)), ("id_missing", np.bool_, ())]
        for j, spec in enumerate(self.columns.values()):
            if spec.type == "category":
                fields.append((f"v{j}", np.int16, ()))
            elif spec.type == "int":
                assert spec.bounds is not None
                fields += [(f"v{j}", int_dtype(spec.bounds), ()), (f"m{j}", np.bool_, ())]
            else:
                fields.append((f"v{j}", np.float64, ()))
        return np.dtype(fields)

    def _partition(self, batch: Table) -> None:
        assert batch.ids is not None and batch.ids_missing is not None
        if self._parts is None:
            folder = _new_partition_folder(self.temp_parent)  # mode 0700
            files: list[BinaryIO] = []
            try:
                for _i in range(self.n_partitions):
                    # no name: O_TMPFILE, or unlinked before a byte is written (see the module)
                    files.append(tempfile.TemporaryFile(dir=folder))  # noqa: SIM115 - closed by _remove
            except BaseException:
                for f in files:
                    f.close()
                shutil.rmtree(folder, ignore_errors=True)
                raise
            self._parts = _Partitions(folder, self._record_dtype(), files)
            self._pending = True
        rec = np.empty(batch.n_rows, dtype=self._parts.dtype)
        rec["id"] = batch.ids
        rec["id_missing"] = batch.ids_missing
        for j, (name, spec) in enumerate(self.columns.items()):
            col = batch.columns[name]
            rec[f"v{j}"] = col.values
            if spec.type == "int":
                rec[f"m{j}"] = col.missing()
        has_id = ~batch.ids_missing  # a row without an id is never kept (as bound_rows_per_person drops it)
        self._parts.write(rec[has_id], batch.ids[has_id])

    def _partition_table(self, rec: np.ndarray) -> Table:
        cols: dict[str, Column] = {}
        for j, (name, spec) in enumerate(self.columns.items()):
            values = np.ascontiguousarray(rec[f"v{j}"])
            mask = None
            if spec.type == "int":
                m = np.ascontiguousarray(rec[f"m{j}"])
                mask = m if m.any() else None
            cols[name] = Column(spec, values, mask)
        ids = np.ascontiguousarray(rec["id"])
        return Table("", "", len(rec), cols, ids, np.ascontiguousarray(rec["id_missing"]))

    # -------------------------------------------------------------- the result
    def exacts(self, progress: Progress = NULL_PROGRESS, key: BoundKey | None = None) -> list[Exact]:
        """Every query's exact statistic (with an id column, the second pass over the partitions first)."""
        from dpdesk.core.dp import statistics

        return [
            statistics.get(d.spec.statistic).from_partial(d, state)
            for d, state in zip(self.designs, self.finish(progress, key), strict=True)
        ]

    def finish(
        self, progress: Progress = NULL_PROGRESS, key: BoundKey | None = None
    ) -> list[list[list[int]]]:
        """Every query's merged exact state (with an id column, the second pass over the partitions first: each
        person's rows bounded under ``key``, :func:`~dpdesk.core.dp.aggregates.bound_rows_per_person`)."""
        if self._pending and self._parts is None:  # removed before the second pass: the rows are gone
            raise UsageError(
                _("the table's temporary files were removed before its statistics; load it again")
            )
        if self.id_column is not None and self._parts is not None:
            if key is None:
                raise ValueError("bounding rows per person needs the release's bounding key")
            k = self.plan.privacy_unit.max_rows_per_person
            for i in range(self.n_partitions):
                progress.update(i, self.n_partitions, "computing")
                part = self._partition_table(self._parts.read(i))
                if part.n_rows:
                    self._aggregate(part, bound_rows_per_person(part, k, key))
            self._pending = False
            self.close()
        empty = self._partition_table(np.empty(0, dtype=self._record_dtype()))
        out = []
        for i, d in enumerate(self.designs):
            state = self.states[i]
            if state is None:  # no rows at all: the state of an empty table
                state = partial_statistic(d, empty, np.zeros(0, dtype=bool), self.columns)
            out.append(state)
        return out

    def close(self) -> None:
        """Remove the partition files (idempotent)."""
        if self._parts is not None:
            self._parts.close()
            self._parts = None


def _outside(values: np.ndarray, lo: float, hi: float) -> int:
    from dpdesk.core.release.datacheck import _outside as outside

    return outside(values, lo, hi)


def block_bytes(limit: int) -> int:
    """The block size the block reader uses under a memory limit of ``limit`` bytes."""
    return max(MIN_BLOCK_BYTES, (limit - BLOCK_FLOOR_BYTES) // BLOCK_DIVISOR)


def n_partitions(path: Path, columns: dict[str, ColumnSpec], id_column: str | None, limit: int) -> int:
    """How many partitions make each one fit under the limit when it is bounded and aggregated in memory."""
    if id_column is None:
        return 1
    per_row = row_bytes(columns, id_column) + 1 + WORK_BYTES_PER_ROW + BOUND_BYTES_PER_ROW
    room = max(limit - BASE_BYTES, 64 * 2**20) // 2  # half of what is left: a partition larger than average
    return min(MAX_PARTITIONS, max(1, math.ceil(estimate_rows(path) * per_row / room)))


def load_for_release(
    plan: Plan,
    path: str | Path,
    *,
    memory_limit: int | None = None,
    designs: list[QueryDesign] | None = None,
    progress: Progress = NULL_PROGRESS,
    encoding: str | None = None,
    delimiter: str | None = None,
    force_stream: bool = False,
    identity_secret: bytes | None = None,
    id_key: bytes | None = None,
) -> Table:
    """Load the table a release needs: whole when it fits under the memory limit (None: the default), else
    streamed (the returned table's ``streamed`` is then a :class:`StreamedAggregates` holding the exact
    aggregates; its columns hold no values, its report the loader's counts and the floats clamped). With an
    ``identity_secret``, the table's content identity is computed in the same read where the reader can
    (:attr:`~dpdesk.core.loading.table.Table.identity`). With an ``id_key``, person ids are hashed under it
    (:func:`~dpdesk.core.loading.columns.id_key_scope`: the same id hash in every process of the home)."""
    with id_key_scope(id_key):
        return _load_for_release(
            plan,
            path,
            memory_limit=memory_limit,
            designs=designs,
            progress=progress,
            encoding=encoding,
            delimiter=delimiter,
            force_stream=force_stream,
            identity_secret=identity_secret,
        )


def _load_for_release(
    plan: Plan,
    path: str | Path,
    *,
    memory_limit: int | None,
    designs: list[QueryDesign] | None,
    progress: Progress,
    encoding: str | None,
    delimiter: str | None,
    force_stream: bool,
    identity_secret: bytes | None,
) -> Table:
    from dpdesk.core.dp.queries import design_plan

    p = Path(path)
    check_regular_file(p)  # a FIFO would block the estimate's read, a device never end
    sweep_stale_partitions()  # what a killed release (or an older version) left behind
    limit = memory_limit if memory_limit is not None else default_memory_limit()
    # the reads of this release (the identity pass after it too) in blocks that fit under the limit
    BLOCK_CAP.set(block_bytes(limit))
    id_column = plan.privacy_unit.id_column
    if not force_stream:
        try:
            estimate = memory_estimate(p, plan.columns, id_column)
        except OSError:
            estimate = 0  # the loader names the problem
        if estimate <= limit:
            return load_table(
                p,
                plan.columns,
                id_column=id_column,
                progress=progress,
                encoding=encoding,
                delimiter=delimiter,
                identity_secret=identity_secret,
            )
    from dpdesk.core.dp import statistics

    designs = designs if designs is not None else design_plan(plan)
    whole = [d.spec.name for d in designs if statistics.get(d.spec.statistic).composite]
    if whole:  # the synthesiser reads its columns together, row by row: it needs the table in memory
        raise UsageError(
            _(
                "the table is too large to keep in memory under the memory limit, and {names} (a synthetic table) "
                "needs it whole; raise the limit (--memory-limit), or release the synthetic table from a smaller "
                "table"
            ).format(names=", ".join(repr(n) for n in whole))
        )
    agg = StreamedAggregates(
        plan,
        designs,
        n_partitions(p, plan.columns, id_column, limit),
    )
    try:
        table = load_table(
            p,
            plan.columns,
            id_column=id_column,
            progress=progress,
            encoding=encoding,
            delimiter=delimiter,
            sink=agg.restart,
            identity_secret=identity_secret,
        )
        for name, n in agg.outside.items():
            table.report.issues.setdefault(name, _issues()).clamped += n
        return table
    except BaseException:
        agg.close()
        raise


def _issues() -> Any:
    from dpdesk.core.loading.table import ColumnIssues

    return ColumnIssues()


def streamed_exacts(
    table: Table, progress: Progress = NULL_PROGRESS, key: BoundKey | None = None
) -> list[Exact] | None:
    """A streamed table's exact statistics (None: the table was loaded whole); ``key`` bounds rows per person."""
    if not isinstance(table.streamed, StreamedAggregates):
        return None
    try:
        return table.streamed.exacts(progress, key)
    finally:
        table.streamed.close()


def check_streamed(table: Table, designs: list[QueryDesign]) -> None:
    """A streamed table holds the aggregates of the plan it was streamed for: refuse it for another plan."""
    agg = table.streamed
    if isinstance(agg, StreamedAggregates) and [d.spec for d in agg.designs] != [d.spec for d in designs]:
        raise UsageError(
            _(
                "the table was read for another plan's statistics (it was too large to keep in memory); load it again"
            )
        )


def close_streamed(table: Table) -> None:
    """Remove a streamed table's partition files, if it has any (a release that stops before its statistics)."""
    if isinstance(table.streamed, StreamedAggregates):
        table.streamed.close()
