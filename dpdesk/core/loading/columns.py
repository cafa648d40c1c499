"""Column building shared by every reader: parsed pieces into compact numpy columns, the id column's keyed
hashes, the header match, and the bookkeeping each reader repeats (:class:`TableBuilder`).

Category columns become ``int16`` codes into the declared list (``-1`` for missing, unparsable or undeclared),
int columns are clamped to their declared bounds in the smallest integer type with a missing mask, float
columns are ``float64`` with ``NaN`` for missing. Bounds and categories come from the plan, never the data.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import Progress
from dpdesk.core.loading.guards import check_rows
from dpdesk.core.loading.panics import reader_errors, reader_message
from dpdesk.core.loading.table import BatchSink, Column, ColumnIssues, LoadReport, Table, file_sha256
from dpdesk.core.loading.wordhash import hash_padded
from dpdesk.core.model.spec import ColumnSpec, did_you_mean
from dpdesk.i18n import _

if TYPE_CHECKING:
    import polars as pl


def match_columns(
    header: list[str], columns: dict[str, ColumnSpec], id_column: str | None, path: Path
) -> list[tuple[int, str]]:
    """Where each declared column (then the id column) is in the header, as (index, name); a name the header
    lacks or repeats is refused."""
    names = list(columns) + ([id_column] if id_column else [])
    out: list[tuple[int, str]] = []
    missing = []
    for name in names:
        idx = [i for i, h in enumerate(header) if h == name]
        if not idx:
            missing.append(name)
        elif len(idx) > 1:
            raise InputError(str(path), f"the header names column {name!r} {len(idx)} times", line=1)
        else:
            out.append((idx[0], name))
    if missing:
        shown = ", ".join(repr(h) for h in header[:30]) + (" …" if len(header) > 30 else "")
        message = _("declared column(s) {missing} not found in the header; the file has: {header}").format(
            missing=", ".join(repr(m) for m in missing), header=shown
        )
        # the likely fix from the header's names (public, like the plan), never from the data's values
        hints = [h for h in (did_you_mean(m, header) for m in missing) if h]
        raise InputError(str(path), "; ".join([message, *hints]), line=1)
    return out


#: The key of the person ids' hashes for the loads of this context (:func:`id_key_scope`); None: a key made once
#: per process from the operating system's generator (previews, simulations: nothing to reproduce).
ID_KEY: ContextVar[bytes | None] = ContextVar("dpdesk_id_key", default=None)
_PROCESS_ID_KEY = secrets.token_bytes(32)


@contextlib.contextmanager
def id_key_scope(key: bytes | None) -> Iterator[None]:
    """The loads inside hash person ids under ``key`` (a release passes one derived from the home's secret, so
    that every engine and every process of that home gives a person the same id hash; None: the process key)."""
    token = ID_KEY.set(key)
    try:
        yield
    finally:
        ID_KEY.reset(token)


def id_word_keys(key: bytes | None) -> np.ndarray:
    """The eight uint64 keys of the person ids' word hash under the id key ``key`` (None: the process key), the
    one definition every engine uses (:func:`id_hashes` through :data:`ID_KEY`; the Spark engine directly)."""
    raw = hashlib.blake2b(
        b"person id keys", key=key or _PROCESS_ID_KEY, person=b"dpdesk-ids-v2", digest_size=64
    ).digest()
    keys = np.frombuffer(raw, dtype="<u8").astype(np.uint64)
    keys[2] |= np.uint64(1)  # the position multipliers are odd
    keys[6] |= np.uint64(1)
    return keys


def _id_word_keys() -> np.ndarray:
    key = ID_KEY.get() or _PROCESS_ID_KEY
    return id_word_keys(key)


def id_hashes(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Hash id strings to 128 bits (an (n, 2) uint64 array) and mark the empty ones; one definition for every
    reader and engine.

    An id is its text, trimmed; its hash is the keyed word hash of its UTF-8 bytes
    (:func:`~dpdesk.core.loading.wordhash.hash_padded`, two lanes) under keys derived from :data:`ID_KEY`: the
    same in every process and engine of a home (a release's key comes from the home's secret), and unknown to
    anyone without it. Two people whose ids collide would be merged into one, whose rows are bounded together: a
    neighbour that adds one of them could then change up to 2k kept rows, twice the sensitivity. Two ids that
    differ in one 8-byte word never collide (each step is a bijection); for others, a collision anywhere among
    the 2^31 rows dpdesk accepts has probability about 2^61 / 2^128 = 2^-67, and colliding ids cannot be crafted
    without the key."""
    import polars as pl

    text = s.cast(pl.String).str.strip_chars()
    empty = (text.is_null() | (text.str.len_bytes() == 0)).to_numpy()
    t = text.fill_null("")
    n = t.str.len_bytes()
    pad = pl.Series([bytes(k).decode() for k in range(9)]).gather((8 - n % 8).cast(pl.UInt32))
    data = pl.select(pl.concat_str([pl.lit(t), pl.lit(pad)]).str.join("").cast(pl.Binary)).item()
    lo, hi = hash_padded(data, n.to_numpy(), _id_word_keys())
    return np.column_stack([lo, hi]), empty


class ColumnBuilder:
    """Converts parsed pieces of one column into its compact numpy form."""

    def __init__(self, spec: ColumnSpec, report: LoadReport) -> None:
        self.spec = spec
        self.parts: list[np.ndarray] = []
        self.miss_parts: list[np.ndarray] = []
        self.issues = report.issues.setdefault(spec.name, ColumnIssues())
        if spec.type == "int":
            assert spec.bounds is not None
            self.dtype = int_dtype(spec.bounds)
        self.buf: np.ndarray | None = None  # preallocated values (see reserve), filled up to self.n
        self.miss_buf: np.ndarray | None = None
        self.n = 0
        self.base = 0  # records handed on before this batch (streaming: see TableBuilder's sink)
        self.first_record: int | None = None  # 0-based index of the first data record with a problem

    def reserve(self, rows: int) -> None:
        """Preallocate room for about ``rows`` values (grown by half again when exceeded)."""
        self.buf = _prefaulted(rows, self._empty_dtype())
        if self.spec.type == "int":
            self.miss_buf = np.zeros(rows, dtype=bool)  # untouched (zero) pages until a value is missing

    def _put(self, values: np.ndarray, miss: np.ndarray | None, clip: tuple[int, int] | None = None) -> None:
        """Append ``values`` (clamped to ``clip`` first, in the same pass as the copy, when given)."""
        if self.buf is None:
            if clip is not None:
                self._count_clamped(values)
                values = np.clip(values, *clip).astype(self._empty_dtype())
            self.parts.append(values)
            if self.spec.type == "int":
                self.miss_parts.append(miss if miss is not None else np.zeros(len(values), dtype=bool))
            self.n += len(values)
            return
        m = len(values)
        if self.n + m > len(self.buf):
            size = max(self.n + m, len(self.buf) * 3 // 2)
            bigger = np.empty(size, dtype=self.buf.dtype)
            bigger[: self.n] = self.buf[: self.n]
            self.buf = bigger
            if self.miss_buf is not None:
                more = np.zeros(size, dtype=bool)
                more[: self.n] = self.miss_buf[: self.n]
                self.miss_buf = more
        if clip is not None:
            self._count_clamped(values)
            np.clip(values, *clip, out=self.buf[self.n : self.n + m], casting="unsafe")
        else:
            self.buf[self.n : self.n + m] = values
        if self.miss_buf is not None and miss is not None:
            self.miss_buf[self.n : self.n + m] = miss
        self.n += m

    def add_typed(self, s: pl.Series) -> None:
        """A piece parsed straight into the declared type: only empty fields can be missing."""
        import polars as pl

        nulls = s.null_count()
        null = s.is_null().to_numpy() if nulls else None
        if nulls:
            self._note("missing", null, nulls)  # type: ignore[arg-type]
        if self.spec.type == "category":
            self._put(s.to_physical().cast(pl.Int16).fill_null(-1).to_numpy(), None)
        elif self.spec.type == "float":
            x = s.to_numpy() if not nulls else s.fill_null(float("nan")).to_numpy()
            nan = np.isnan(x)
            if null is not None:
                nan &= ~null
            n_nan = int(nan.sum())
            if n_nan:  # a literal NaN is no number: counted like the text path counts it
                self._note("unparsable", nan, n_nan)
            self._put(x, None)
        else:
            lo, hi = self.spec.bounds  # type: ignore[misc]
            x = s.fill_null(int(lo)).to_numpy() if nulls else s.to_numpy()
            miss = null if null is not None else np.zeros(len(x), dtype=bool)
            self._count_clamped(x)
            self._put(np.clip(x, int(lo), int(hi)).astype(self.dtype), miss)

    @property
    def fill(self) -> float | int:
        """What an empty field becomes before it is masked: -1 (no category), the lower bound, or NaN."""
        if self.spec.type == "category":
            return -1
        if self.spec.type == "int":
            assert self.spec.bounds is not None
            return int(self.spec.bounds[0])
        return float("nan")

    def add_clean(self, values: np.ndarray) -> None:
        """Values in the column's compact form, none of them empty (see _stream_exprs)."""
        if self.spec.type == "float" and not np.isfinite(np.add.reduce(values)):
            nan = np.isnan(values)  # a literal NaN is no number: counted like the text path counts it
            n_nan = int(np.count_nonzero(nan))
            if n_nan:
                self._note("unparsable", nan, n_nan)
        self._put(values, None, self._clip())

    def add_converted(self, values: np.ndarray, null: np.ndarray | None) -> None:
        """Values already in the column's compact form (see _stream_exprs), with the mask of empty fields
        (for categories, the empty fields are the -1 codes)."""
        assert null is not None
        nulls = int(np.count_nonzero(null))
        if nulls:
            self._note("missing", null, nulls)
        if self.spec.type == "float":
            nan = np.isnan(values)
            if nulls:
                nan &= ~null
            n_nan = int(np.count_nonzero(nan))
            if n_nan:  # a literal NaN is no number: counted like the text path counts it
                self._note("unparsable", nan, n_nan)
            self._put(values, None)
        elif self.spec.type == "int":
            self._put(values, null, self._clip())
        else:
            self._put(values, None)

    def _clip(self) -> tuple[int, int] | None:
        """The bounds an int column's values are clamped to as they are stored."""
        if self.spec.type != "int":
            return None
        assert self.spec.bounds is not None
        return int(self.spec.bounds[0]), int(self.spec.bounds[1])

    def _count_clamped(self, values: np.ndarray) -> None:
        """Count the int column's values outside its bounds, about to be clamped (no NaN here: missing
        values are filled with the lower bound first). Two fast reductions per batch; the count only when
        one is out."""
        lo, hi = self._clip()  # type: ignore[misc]
        if len(values) and (values.min() < lo or values.max() > hi):
            self.issues.clamped += int(np.count_nonzero(values < lo) + np.count_nonzero(values > hi))

    def _note(self, kind: str, mask: np.ndarray, count: int) -> None:
        setattr(self.issues, kind, getattr(self.issues, kind) + count)
        if self.first_record is None and count:
            self.first_record = self.base + self.n + int(np.argmax(mask))  # values are put after their notes

    def add(self, s: pl.Series) -> None:
        import polars as pl

        if s.dtype == pl.String:  # a blank or whitespace-only cell is empty, not unparsable
            s = s.str.strip_chars().replace("", None)
        null = s.is_null().to_numpy()
        n_null = int(null.sum())
        if n_null:
            self._note("missing", null, n_null)
        if self.spec.type == "category":
            assert self.spec.categories is not None
            text = s if s.dtype == pl.String else s.cast(pl.String)
            codes_s = text.str.strip_chars().cast(pl.Enum(list(self.spec.categories)), strict=False)
            codes = codes_s.to_physical().fill_null(-1).to_numpy().astype(np.int16)
            bad = (codes < 0) & ~null
            n_bad = int(bad.sum())
            if n_bad:
                self._note("undeclared", bad, n_bad)
            self._put(codes, None)
            return
        if s.dtype == pl.String:
            x = s.str.strip_chars().cast(pl.Float64, strict=False).to_numpy()
        elif s.dtype.is_numeric() or s.dtype == pl.Boolean:
            x = s.cast(pl.Float64, strict=False).to_numpy()
        else:
            x = s.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False).to_numpy()
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        if self.spec.type == "int":
            with np.errstate(invalid="ignore"):
                frac = np.isfinite(x) & (x != np.floor(x))
            bad = (nan & ~null) | frac
        else:
            bad = nan & ~null
        n_bad = int(bad.sum())
        if n_bad:
            self._note("unparsable", bad, n_bad)
        if self.spec.type == "float":  # already NaN where bad; x may be a read-only view of polars memory
            self._put(x, None)
            return
        miss = nan | frac
        lo, hi = self.spec.bounds  # type: ignore[misc]
        filled = np.where(miss, lo, x)
        self._count_clamped(filled)
        self._put(np.clip(filled, lo, hi).astype(self.dtype), miss)

    def finish(self) -> Column:
        if self.buf is not None:
            if len(self.buf) > self.n:  # give the slack back, in place when nothing else holds the array
                try:
                    self.buf.resize(self.n, refcheck=False)
                except ValueError:  # a view (of a prefaulted map): keep it unless the slack is large
                    if len(self.buf) > self.n * 1.25 + 4096:
                        self.buf = self.buf[: self.n].copy()
            values = self.buf[: self.n]
            m = None if self.miss_buf is None else self.miss_buf[: self.n]
        else:
            values = _concat(self.parts, self._empty_dtype())
            m = _concat(self.miss_parts, np.dtype(bool)) if self.spec.type == "int" else None
        self.parts, self.miss_parts, self.buf, self.miss_buf = [], [], None, None
        mask = None
        if self.spec.type == "int" and m is not None and m.any():
            mask = m.copy() if m.base is not None else m
        return Column(self.spec, values, mask)

    def take(self) -> Column:
        """The values added since the last take, as a column of their own (streaming: the builder then starts
        again empty, keeping its counts and the place of the first problem)."""
        n = self.n
        col = self.finish()
        self.base += n
        self.n = 0
        return col

    def empty(self) -> Column:
        """A column with no values (a streamed table's placeholder: its values went to the sink)."""
        return Column(self.spec, np.empty(0, dtype=self._empty_dtype()))

    def _empty_dtype(self) -> np.dtype[Any]:
        if self.spec.type == "category":
            return np.dtype(np.int16)
        if self.spec.type == "int":
            return np.dtype(self.dtype)
        return np.dtype(np.float64)


def _prefaulted(n: int, dtype: np.dtype[Any]) -> np.ndarray:
    """An uninitialised array whose pages the kernel maps in one call (``MAP_POPULATE``), not one fault each.

    The columns are filled batch by batch while polars keeps both cores busy; faulting 257 MiB in page by
    page measured 0.2-0.5 CPU-s for 10M rows (with numpy's huge-page advice, the kernel also compacts memory
    at each fault). Where the flag is missing (not Linux), a plain ``np.empty`` with small pages.
    """
    flag = getattr(mmap, "MAP_POPULATE", 0)
    private, anonymous = getattr(mmap, "MAP_PRIVATE", 0), getattr(mmap, "MAP_ANONYMOUS", 0)
    if flag and private and anonymous and n > 0:
        try:
            m = mmap.mmap(-1, n * dtype.itemsize, flags=private | anonymous | flag)
            return np.frombuffer(m, dtype=dtype, count=n)
        except (OSError, ValueError):
            pass
    with _small_pages():
        return np.empty(n, dtype=dtype)


@contextlib.contextmanager
def _small_pages() -> Iterator[None]:
    """Allocate without numpy's transparent-huge-page advice.

    The columns are filled batch by batch, so every page is faulted in once; with the advice the kernel
    compacts memory to find huge pages at each fault, which measured about 0.5 CPU-s more for a
    10M-row table on the benchmark machine (benchmarks/RESULTS.md). A private numpy switch: without it
    nothing changes.
    """
    mod = getattr(getattr(np, "_core", None), "multiarray", None)
    get, set_ = getattr(mod, "_get_madvise_hugepage", None), getattr(mod, "_set_madvise_hugepage", None)
    if get is None or set_ is None:
        yield
        return
    before = set_(False)
    try:
        yield
    finally:
        set_(before)


def int_dtype(bounds: tuple[float, float]) -> type[np.signedinteger[Any]]:
    for dt in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        if info.min <= bounds[0] and bounds[1] <= info.max:
            return dt
    return np.int64


def _concat(parts: list[np.ndarray], dtype: np.dtype[Any]) -> np.ndarray:
    if not parts:
        return np.empty(0, dtype=dtype)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts)


class TableBuilder:
    """The bookkeeping every reader repeats: one :class:`ColumnBuilder` per declared column, the id column's
    hashes, the row count (refused past :data:`~dpdesk.core.loading.guards.MAX_ROWS`), and the finished table.

    With a ``sink`` (a factory called once per builder, so that a reader's new attempt starts a fresh one), the
    table is streamed: each batch is handed to the sink as a table of its own once the next batch starts (and at
    the end), and the finished table holds no values, only its counts, its report and the sink."""

    def __init__(
        self,
        path: Path,
        columns: dict[str, ColumnSpec],
        wanted: list[tuple[int, str]],
        report: LoadReport,
        sink: Callable[[], BatchSink] | None = None,
    ) -> None:
        self.path = path
        self.report = report
        self.builders = {name: ColumnBuilder(columns[name], report) for _, name in wanted if name in columns}
        self.id_parts: list[np.ndarray] = []
        self.id_missing_parts: list[np.ndarray] = []
        self.n_rows = 0
        self.sink = sink() if sink is not None else None
        self.pending = 0  # rows of the batch not yet handed to the sink
        self.has_ids = any(name not in columns for _, name in wanted)

    def batch(self, rows: int, expected_rows: int | None = None) -> None:
        """Count a batch of ``rows`` records before its columns are added: at the first, preallocate the
        columns for ``expected_rows`` in all (when given); refuse the table past the row cap. Streaming, the
        previous batch goes to the sink first (nothing is preallocated)."""
        if self.sink is not None:
            self._flush()
        elif self.n_rows == 0 and rows and expected_rows is not None:
            for b in self.builders.values():
                b.reserve(expected_rows)
        check_rows(self.path, self.n_rows + rows)
        self.n_rows += rows
        self.pending += rows

    def _flush(self) -> None:
        """Hand the pending batch to the sink as a table of its own."""
        assert self.sink is not None
        if not self.pending:
            return
        cols = {name: b.take() for name, b in self.builders.items()}
        ids = ids_missing = None
        if self.has_ids:
            ids = _concat(self.id_parts, np.dtype(np.uint64)).reshape(-1, 2)
            ids_missing = _concat(self.id_missing_parts, np.dtype(bool))
            self.id_parts, self.id_missing_parts = [], []
        self.sink.add(Table(str(self.path), "", self.pending, cols, ids, ids_missing, self.report))
        self.pending = 0

    def add_ids(self, ids: np.ndarray, missing: np.ndarray) -> None:
        """A batch of the id column: its 128-bit hashes and which ids are empty."""
        self.id_parts.append(ids)
        self.id_missing_parts.append(missing)

    def add_frame(self, frame: pl.DataFrame, wanted: list[tuple[int, str]], typed: bool = False) -> None:
        """A parsed frame with one column per wanted name: as text, or ``typed`` (already the declared types)."""
        for _index, name in wanted:
            s = frame.get_column(name)
            b = self.builders.get(name)
            if b is None:
                self.add_ids(*id_hashes(s))
            elif typed:
                b.add_typed(s)
            else:
                b.add(s)

    def finish(self, sha: str, id_column: str | None, where: Callable[[int], str]) -> Table:
        """The table, with each column's first problem named by ``where`` (0-based record to a place)."""
        if self.sink is not None:
            self._flush()
        for b in self.builders.values():
            if b.first_record is not None:
                b.issues.first_problem = where(b.first_record)
        if self.sink is not None:
            cols = {name: b.empty() for name, b in self.builders.items()}
            return Table(str(self.path), sha, self.n_rows, cols, report=self.report, streamed=self.sink)
        cols = {name: b.finish() for name, b in self.builders.items()}
        ids = ids_missing = None
        if id_column is not None:
            ids = _concat(self.id_parts, np.dtype(np.uint64)).reshape(-1, 2)
            ids_missing = _concat(self.id_missing_parts, np.dtype(bool))
        return Table(str(self.path), sha, self.n_rows, cols, ids, ids_missing, self.report)


def load_frame(
    path: Path,
    columns: dict[str, ColumnSpec],
    id_column: str | None,
    progress: Progress,
    kind: str,
    read: Callable[[Path], pl.DataFrame],
    where: Callable[[int], str],
    pieces: Callable[[pl.DataFrame], Iterable[pl.DataFrame]] | None = None,
) -> Table:
    """Load a file that a reader returns whole as one polars frame (.xlsx, Parquet): hash it, read it, build
    (from the frame's ``pieces`` when given: bounded slices, so that no step copies the whole frame's text)."""
    sha = file_sha256(path, progress)
    progress.update(0, 1, "parsing")
    try:
        frame = read(path)
    except InputError:
        raise
    except (
        reader_errors()
    ) as exc:  # readers raise many exception types (and polars panics) for malformed files
        raise InputError(str(path), f"cannot read this {kind} file ({reader_message(exc)})") from None
    header = [str(c).strip() for c in frame.columns]
    frame.columns = header
    wanted = match_columns(header, columns, id_column, path)
    tb = TableBuilder(path, columns, wanted, LoadReport(encoding="", delimiter=""))
    for piece in pieces(frame) if pieces is not None else (frame,):
        tb.batch(piece.height, frame.height)
        tb.add_frame(piece, wanted)
    progress.update(1, 1, "parsing")
    return tb.finish(sha, id_column, where)
