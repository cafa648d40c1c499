"""The content identity, scheme 2: computed from typed values, in the same read as the load.

Scheme 1 (:mod:`dpdesk.core.loading.identity`) reads every column of the file again as text, builds each row's
canonical encoding and hashes it: most of a first release's time. Scheme 2 names the same rows with the same
canonical values, but hashes each CELL from its typed value (an integer, a binary64 number, UTF-8 text or
missing), so that a reader that already holds the typed columns (the CSV loader's streaming batches, a Parquet
file's columns, a database's rows) computes it in the same pass, and so that partial results merge by addition
(another engine computes them part by part). Both schemes are recognised (:mod:`dpdesk.core.identity.recognition`):
a dataset known by its scheme-1 key keeps its ledger, and gets its scheme-2 key at its next release.

**Canonical values** (the same table as scheme 1, with one difference: ``inf`` and ``nan`` are numbers here):

* a column is named by its header name, NFC-normalised and trimmed; columns are matched by name, order-free;
* a text cell is NFC-normalised and trimmed; an empty cell is missing;
* an integer literal (``[+-]digits`` with an optional ``.000``) within the 64-bit range is that integer; any
  other cell that parses as a number is its binary64 value, and a finite integral value below 2^63 in
  magnitude is that integer (``12`` = ``12.0`` = ``1.2e1``; ``007`` = ``7``); other numbers are their binary64
  bits (one NaN); everything else is text, compared exactly;
* a typed column gives the same values: an integer column its integers, a float column its numbers as above, a
  category its label's canonical value, a boolean, a date or a decimal its text as the reader prints it;
* the table is the multiset of its rows.

**The hash** (two 64-bit lanes, keys from the home's secret by BLAKE2b, ``fmix`` = MurmurHash3's 64-bit
finaliser, a bijection): a cell's hash per lane is ``fmix(v xor K_int)`` for an integer v (two's complement),
``fmix(bits xor K_float)`` for another number, the word hash of its UTF-8 bytes
(:func:`~dpdesk.core.loading.identity.hash_padded`, text keys) for text, and ``K_missing`` for a missing cell.
A row's lane is ``fmix((sum_c fmix(cell_c xor K_column(c))) xor K_finish)`` (sums mod 2^64); the rows' two
lanes are summed mod 2^128 (order-free, duplicates counted), and the content key is BLAKE2b under the secret over
the scheme, the canonical header, the row count and that sum. Two rows that differ in one cell never collide
(each step is a bijection of that cell); otherwise a collision is a 2^-128 event for ordinary data. The sketch
is the bottom-k of the rows' first lane; the column sketches (:class:`~dpdesk.core.loading.identity.ColumnSketches`)
are the projections of the same cell hashes (lane 0) with each column left out. All of it is LOCAL, as in
scheme 1: keyed by the home's (or its team's) secret, never leaving it.

Why not a database's or Spark's own hash functions: none is keyed by a secret, and their definitions differ
between engines and versions; the cell hash above is a few integer operations on typed values, which another
engine runs on its own batches (Arrow columns) and returns as sums and bottom-k sets that merge exactly.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.loading.identity import (
    SKETCH_K,
    ColumnSketches,
    ContentIdentity,
    Projections,
    Sketch,
    bottom_k,
    canonical_header,
    content_identity,
    sum128,
)
from dpdesk.core.loading.wordhash import fmix, hash_padded

if TYPE_CHECKING:
    import polars as pl

#: The scheme of the content identities this module computes (:data:`~dpdesk.core.loading.identity.IDENTITY_VERSION`
#: is scheme 1's).
SCHEME = 2
#: A text column's cells are canonicalised once per distinct value when a batch has at most this share of them.
DISTINCT_SHARE = 0.5
#: Rows hashed at a time: a reader's smaller batches are gathered up to this many rows, or this many bytes (long
#: text: a batch's temporaries stay bounded, as the readers' batches are)
CHUNK_ROWS = 262_144
CHUNK_BYTES = 16 * 1024 * 1024
#: An integer column whose batch spans fewer values than this (and has more cells) is hashed once per value.
SMALL_RANGE = 4096

_U64 = np.uint64
_INT_LITERAL = r"^[+-]?[0-9]+(\.0*)?$"
_NAN_BITS = _U64(0x7FF8000000000000)


class Keys:
    """The scheme's keys, derived from a secret (the home's, or its team's)."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        raw = hashlib.blake2b(b"cell keys", key=secret, person=b"dpdesk-cells-v2", digest_size=64).digest()
        k = np.frombuffer(raw, dtype="<u8").astype(_U64)
        #: per lane: (integer, number, missing, finish)
        self.lanes = ((k[0], k[1], k[2], k[3]), (k[4], k[5], k[6], k[7]))
        raw = hashlib.blake2b(b"text keys", key=secret, person=b"dpdesk-texts-v2", digest_size=64).digest()
        text = np.frombuffer(raw, dtype="<u8").astype(_U64)
        text[2] |= _U64(1)  # the position multipliers are odd
        text[6] |= _U64(1)
        self.text = text

    def column(self, name: str) -> tuple[np.uint64, np.uint64]:
        """A column's two keys (its canonical name under the secret)."""
        raw = hashlib.blake2b(
            name.encode("utf-8"), key=self.secret, person=b"dpdesk-colkey-v2", digest_size=16
        )
        words = np.frombuffer(raw.digest(), dtype="<u8").astype(_U64)
        return words[0], words[1]


class NotExact(Exception):
    """A typed column whose values may not be the canonical values of the text they were parsed from: an
    integral number of 2^53 or more in a column parsed as floating point (the text ``9007199254740993`` is that
    integer; parsed as binary64 it is ``9007199254740992``). The identity is then computed from the file's
    text, in a pass of its own (rare: such numbers are ids or counts, seldom declared as floats)."""


class Typed(NamedTuple):
    """A typed column's batch as numpy arrays: ``kind`` is "int", "number" or "codes" (with ``labels``);
    ``missing`` marks missing cells (None: none)."""

    kind: str
    values: np.ndarray
    missing: np.ndarray | None
    labels: tuple[str, ...] = ()


def typed_batch(s: pl.Series, kind: str, labels: tuple[str, ...] = ()) -> Typed:
    """A polars column of a reader's batch as :class:`Typed` (its values copied only when some are missing)."""
    if s.null_count():
        fill = 0.0 if kind == "number" else 0
        return Typed(kind, s.fill_null(fill).to_numpy(), s.is_null().to_numpy(), labels)
    return Typed(kind, s.to_numpy(), None, labels)


@dataclass(frozen=True)
class Cells:
    """One batch of one column's cells as the hash takes them: ``u`` holds two lanes of cell values (the keyed
    pre-hash: ``v xor K_int`` for an integer, ``bits xor K_float`` for another number, the word hash of a text,
    ``K_missing``); with ``index``, ``u`` holds the column's distinct cells and ``index`` says which each cell is
    (a category's codes, a small integer range, repeated text): hashed once per distinct cell."""

    u: tuple[np.ndarray, np.ndarray]
    index: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.index) if self.index is not None else len(self.u[0])


def int_cells(
    values: np.ndarray, keys: Keys, missing: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Two lanes of the cell values of 64-bit integers (``missing`` marks missing cells)."""
    v = np.ascontiguousarray(values, dtype=np.int64).view(_U64)
    out = []
    for k_int, _k_num, k_miss, _f in keys.lanes:
        h = v ^ k_int
        if missing is not None:
            h[missing] = k_miss
        out.append(h)
    return out[0], out[1]


def number_cells(
    values: np.ndarray, keys: Keys, missing: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Two lanes of the cell values of binary64 numbers: an integral value below 2^63 in magnitude as that
    integer, any other as its bits (one NaN)."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        integral = x == np.floor(x)  # False for NaN; True for an infinity, which the bound below leaves out
        integral &= np.abs(x) < 2.0**63
    if integral.all():
        return int_cells(x.astype(np.int64), keys, missing)
    bits = x.view(_U64)
    nan = np.isnan(x)
    if nan.any():
        bits = bits.copy()
        bits[nan] = _NAN_BITS
    some = integral.any()
    ints = x[integral].astype(np.int64).view(_U64) if some else None
    out = []
    for k_int, k_num, k_miss, _f in keys.lanes:
        h = bits ^ k_num
        if ints is not None:
            h[integral] = ints ^ k_int
        if missing is not None:
            h[missing] = k_miss
        out.append(h)
    return out[0], out[1]


def _word_hashes(pl: Any, t: pl.Series, keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """Two lanes of the word hash of each text's UTF-8 bytes."""
    n = t.str.len_bytes()
    pad = pl.Series([bytes(k).decode() for k in range(9)]).gather((8 - n % 8).cast(pl.UInt32))
    data = pl.select(pl.concat_str([pl.lit(t), pl.lit(pad)]).str.join("").cast(pl.Binary)).item()
    lo, hi = hash_padded(data, n.to_numpy(), keys.text)
    return lo, hi


def text_cells(s: pl.Series, keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """Two lanes of the cell values of text cells, canonicalised (trimmed, NFC, numbers read as numbers)."""
    import polars as pl

    s = s.cast(pl.String).str.strip_chars()
    if (s.str.len_bytes() != s.str.len_chars()).any():
        s = s.str.normalize("NFC")
    t = pl.col("t")
    s = s.to_frame("t").select(pl.when(t.str.len_bytes() > 0).then(t).alias("t")).to_series()
    n = len(s)
    missing = s.is_null().to_numpy()
    lanes = [np.empty(n, dtype=_U64), np.empty(n, dtype=_U64)]
    for lane, (_ki, _kn, k_miss, _f) in zip(lanes, keys.lanes, strict=True):
        lane[missing] = k_miss
    if missing.all():
        return lanes[0], lanes[1]
    literal = s.str.contains(_INT_LITERAL).fill_null(False)
    as_int = s.str.replace(r"\.0*$", "").str.replace(r"^\+", "").cast(pl.Int64, strict=False)
    is_int = (literal & as_int.is_not_null()).to_numpy()
    number = s.cast(pl.Float64, strict=False)
    is_number = number.is_not_null().to_numpy() & ~is_int
    is_text = ~(missing | is_int | is_number)
    if is_int.any():
        a, b = int_cells(as_int.filter(pl.Series(is_int)).to_numpy(), keys)  # exact: no nulls, no float64
        lanes[0][is_int], lanes[1][is_int] = a, b
    if is_number.any():
        a, b = number_cells(number.to_numpy()[is_number], keys)
        lanes[0][is_number], lanes[1][is_number] = a, b
    if is_text.any():
        a, b = _word_hashes(pl, s.filter(pl.Series(is_text)), keys)
        lanes[0][is_text], lanes[1][is_text] = a, b
    return lanes[0], lanes[1]


def _with_missing(u: tuple[np.ndarray, np.ndarray], keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """Distinct cells' values with one more: the missing cell's, last."""
    return (
        np.append(u[0], keys.lanes[0][2]).astype(_U64),
        np.append(u[1], keys.lanes[1][2]).astype(_U64),
    )


class CellHasher:
    """A column's cells by their type (:class:`Cells`); a category's labels are canonicalised once."""

    def __init__(self, keys: Keys, *, parsed_floats: bool = False) -> None:
        self.keys = keys
        #: floating-point columns were parsed from text (a CSV): see :class:`NotExact`
        self.parsed_floats = parsed_floats
        self._labels: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}

    def codes(self, codes: np.ndarray, labels: tuple[str, ...], missing: np.ndarray | None) -> Cells:
        """Category codes (indices into ``labels``; ``missing`` marks missing cells)."""
        import polars as pl

        table = self._labels.get(labels)
        if table is None:
            table = _with_missing(text_cells(pl.Series(list(labels), dtype=pl.String), self.keys), self.keys)
            self._labels[labels] = table
        idx = np.asarray(codes).astype(np.intp)
        if missing is not None:
            idx[missing] = len(labels)
        return Cells(table, idx)

    def ints(self, values: np.ndarray, missing: np.ndarray | None) -> Cells:
        """Integers (any width; ``missing`` marks missing cells, whose values are ignored)."""
        keys = self.keys
        if len(values) > SMALL_RANGE:
            lo, hi = int(values.min()), int(values.max())
            if hi - lo < SMALL_RANGE:
                table = _with_missing(int_cells(np.arange(lo, hi + 1, dtype=np.int64), keys), keys)
                idx = values.astype(np.intp)
                idx -= lo
                if missing is not None:
                    idx[missing] = hi - lo + 1
                return Cells(table, idx)
        return Cells(int_cells(values.astype(np.int64, copy=False), keys, missing))

    def numbers(self, values: np.ndarray, missing: np.ndarray | None) -> Cells:
        """binary64 numbers (``missing`` marks missing cells, whose values are ignored)."""
        if self.parsed_floats:
            with np.errstate(invalid="ignore"):
                big = np.abs(values)
                if ((big >= 2.0**53) & (big <= 2.0**63) & (values == np.floor(values))).any():
                    raise NotExact  # its text may have been an integer literal with more digits than binary64
        return Cells(number_cells(values, self.keys, missing))

    def series(self, s: pl.Series) -> Cells:
        """Any column of a polars frame, by its type."""
        import polars as pl

        dtype = s.dtype
        keys = self.keys
        missing = s.is_null().to_numpy() if s.null_count() else None
        if isinstance(dtype, pl.Enum):
            return self.codes(
                s.to_physical().fill_null(0).to_numpy(), tuple(dtype.categories.to_list()), missing
            )
        if dtype.is_integer() and dtype != pl.UInt64:
            return self.ints(s.fill_null(0).to_numpy(), missing)
        if dtype == pl.Float64 or dtype == pl.Float32:
            return self.numbers(s.cast(pl.Float64).fill_null(0.0).to_numpy(), missing)
        if dtype == pl.Null:
            return Cells(int_cells(np.zeros(len(s), dtype=np.int64), keys, np.ones(len(s), dtype=bool)))
        text = s.cast(pl.String)
        if len(text) > SMALL_RANGE:
            distinct = text.unique()
            if distinct.len() <= len(text) * DISTINCT_SHARE:
                index = text.replace_strict(
                    distinct, pl.Series(np.arange(distinct.len(), dtype=np.uint32)), return_dtype=pl.UInt32
                ).to_numpy()
                return Cells(text_cells(distinct, keys), index.astype(np.intp))
        return Cells(text_cells(text, keys))


class TypedIdentity:
    """Scheme 2's accumulator: batches of typed columns in, the content identity out.

    :meth:`add` takes one batch's :class:`Cells`, in the file's column order; :meth:`submit` computes them from
    polars Series in a thread of its own while the reader reads the next batch (at most one batch in flight)."""

    def __init__(
        self, secret: bytes, header: list[str], k: int = SKETCH_K, *, parsed_floats: bool = False
    ) -> None:
        self.keys = Keys(secret)
        self.hasher = CellHasher(self.keys, parsed_floats=parsed_floats)
        self.header, self.order = canonical_header(header)
        self.k = k
        self.rows = 0
        self.total = 0
        self.smallest = np.zeros(0, dtype=_U64)
        names = [self.header[i] for i in self.order]
        self.col_keys = [self.keys.column(n) for n in names]
        self.projections = (
            Projections(secret, names, [a for a, _b in self.col_keys], scheme=SCHEME)
            if len(set(self.header)) == len(self.header)
            else None
        )
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpdesk-identity")
        self._pending: Future[None] | None = None
        self._buffer: list[list[Any]] = []
        self._buffered = 0
        self._buffered_bytes = 0
        #: a batch could not be hashed from its typed values (:class:`NotExact`): no identity from this read
        self.inexact = False
        #: rows submitted (hashed or not yet)
        self.seen = 0

    def add(self, batch: list[Cells]) -> None:
        """One batch: each column's cells, in the file's column order."""
        n = len(batch[0]) if batch else 0
        if n == 0:
            return
        ordered = [batch[i] for i in self.order]
        rows = []
        for lane in (0, 1):
            total = np.zeros(n, dtype=_U64)
            mixed: list[np.ndarray] = []
            values: list[np.ndarray | tuple[np.ndarray, np.ndarray]] = []
            for cells, keys in zip(ordered, self.col_keys, strict=True):
                m = fmix(cells.u[lane] ^ keys[lane])
                if cells.index is not None:
                    m = m[cells.index]
                total += m
                if lane == 0 and self.projections is not None:
                    mixed.append(m)
                    value = fmix(cells.u[0] ^ self.projections.value_key)
                    if cells.index is not None:
                        values.append((value, np.bincount(cells.index, minlength=len(value))))
                    else:
                        values.append(value)
            if lane == 0 and self.projections is not None:
                self.projections.add_mixed(mixed, values, total)
            total ^= self.keys.lanes[lane][3]
            rows.append(fmix(total))
        self.rows += n
        self.total = (self.total + sum128(rows[0], rows[1])) % 2**128
        self.smallest = bottom_k(self.smallest, rows[0], self.k)

    def add_parts(self, rows: int, total: int, smallest: np.ndarray) -> None:
        """Rows hashed elsewhere (another engine's part of the table): their count, the sum mod 2^128 of their
        two lanes (lane 0 + 2^64 lane 1) and the :attr:`k` smallest distinct of their first lane (uint64)."""
        self.rows += rows
        self.seen += rows
        self.total = (self.total + total) % 2**128
        self.smallest = bottom_k(self.smallest, np.asarray(smallest, dtype=_U64), self.k)

    @staticmethod
    def coded(codes: pl.Series, labels: tuple[str, ...]) -> Typed:
        """A category column's batch as read (its codes; for :meth:`submit`)."""
        return typed_batch(codes, "codes", labels)

    @staticmethod
    def typed(s: pl.Series, kind: str) -> Typed:
        """A typed column's batch as read ("int" or "number"; for :meth:`submit`)."""
        return typed_batch(s, kind)

    def submit(self, columns: list[Any]) -> None:
        """Hash a batch in the background: per column of the file, a polars Series, its category codes
        (:class:`Typed`, from :meth:`coded` and :meth:`typed`). Small batches are gathered first (up to :data:`CHUNK_ROWS` rows:
        the per-call costs of numpy dominate a few thousand rows)."""
        n = len(columns[0]) if columns else 0
        if n == 0:
            return
        self._buffer.append(columns)
        self._buffered += n
        self.seen += n
        self._buffered_bytes += sum(
            c.values.nbytes if isinstance(c, Typed) else c.estimated_size()
            for c in columns
            if isinstance(c, Typed) or hasattr(c, "estimated_size")
        )
        if self._buffered >= CHUNK_ROWS or self._buffered_bytes >= CHUNK_BYTES:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        parts, self._buffer, self._buffered, self._buffered_bytes = self._buffer, [], 0, 0
        self.wait()  # the buffer is empty now: only the batch in flight is waited for
        self._pending = self._pool.submit(self._hash, parts)

    def _hash(self, parts: list[list[Any]]) -> None:
        if self.inexact:
            return
        try:
            self._hash_parts(parts)
        except NotExact:
            self.inexact = True

    def _hash_parts(self, parts: list[list[Any]]) -> None:
        import polars as pl

        batch: list[Cells] = []
        for j in range(len(parts[0])):
            pieces = [p[j] for p in parts]
            first = pieces[0]
            if isinstance(first, Typed):
                values = np.concatenate([t.values for t in pieces]) if len(pieces) > 1 else first.values
                missing = None
                if any(t.missing is not None for t in pieces):
                    missing = np.concatenate(
                        [
                            t.missing if t.missing is not None else np.zeros(len(t.values), bool)
                            for t in pieces
                        ]
                    )
                if first.kind == "codes":
                    batch.append(self.hasher.codes(values, first.labels, missing))
                elif first.kind == "int":
                    batch.append(self.hasher.ints(values, missing))
                else:
                    batch.append(self.hasher.numbers(values.astype(np.float64, copy=False), missing))
            else:
                batch.append(self.hasher.series(pl.concat(pieces) if len(pieces) > 1 else first))
        self.add(batch)

    def wait(self) -> None:
        """Until the batch in flight is hashed (its exception raised here)."""
        if self._buffer:
            self._flush()  # (after the batch in flight)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def close(self) -> None:
        """Stop the thread (after the batch in flight; what is still gathered is dropped)."""
        self._buffer, self._buffered, self._buffered_bytes = [], 0, 0
        try:
            if self._pending is not None:
                pending, self._pending = self._pending, None
                pending.result()
        finally:
            self._pool.shutdown()

    def key(self) -> str:
        """The content key of the rows added."""
        h = hashlib.blake2b(key=self.keys.secret, person=b"dpdesk-content2", digest_size=32)
        h.update(SCHEME.to_bytes(4, "little"))
        h.update(len(self.header).to_bytes(8, "little"))
        for name in sorted(self.header):
            raw = name.encode("utf-8")
            h.update(len(raw).to_bytes(8, "little") + raw)
        h.update(self.rows.to_bytes(8, "little"))
        h.update(self.total.to_bytes(16, "little"))
        return h.hexdigest()

    def result(self, sha256: str) -> ContentIdentity | None:
        """The identity of the rows added (``sha256``: the bytes' SHA-256, read by the same reader); None when a
        typed column could not give its canonical values (:class:`NotExact`)."""
        self.wait()  # the last gathered rows too
        self.close()
        if self.inexact:
            return None
        sketch = Sketch(self.rows, tuple(int(h) for h in self.smallest), self.k, scheme=SCHEME)
        columns: ColumnSketches | None = None if self.projections is None else self.projections.result()
        return ContentIdentity(sha256, self.key(), sketch, columns)


class TypedAccumulator:
    """:class:`TypedIdentity` behind the interface of scheme 1's accumulator, for
    :func:`~dpdesk.core.loading.identity.content_identity`'s readers (a pass of its own over the file)."""

    def __init__(self, secret: bytes, k: int) -> None:
        self._secret = secret
        self._k = k
        self._ident: TypedIdentity | None = None

    @property
    def rows(self) -> int:
        return 0 if self._ident is None else self._ident.seen

    def _started(self) -> TypedIdentity:
        if self._ident is None:
            self._ident = TypedIdentity(self._secret, [], self._k)
        return self._ident

    def start(self, header: list[str], order: list[int]) -> None:
        """The header is known (canonical already; the order is recomputed from it)."""
        self._ident = TypedIdentity(self._secret, header, self._k)

    def add_frame(self, frame: pl.DataFrame, order: list[int]) -> None:
        if frame.height:
            self._started().submit([frame.to_series(i) for i in range(frame.width)])

    def wait(self) -> None:
        if self._ident is not None:
            self._ident.wait()

    def close(self) -> None:
        if self._ident is not None:
            self._ident.close()

    def sketch(self) -> Sketch:
        ident = self._started()
        ident.wait()
        return Sketch(ident.rows, tuple(int(h) for h in ident.smallest), ident.k, scheme=SCHEME)

    def column_sketches(self) -> ColumnSketches | None:
        ident = self._started()
        ident.wait()
        return None if ident.projections is None else ident.projections.result()

    def content_key(self, header: list[str]) -> str:
        return self._started().key()


def content_identity2(
    path: str | Path,
    secret: bytes,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    k: int = SKETCH_K,
) -> ContentIdentity:
    """A file's scheme-2 identity in a pass of its own (every column read as
    :func:`~dpdesk.core.loading.identity.content_identity` reads it: CSV in any encoding, .xlsx, Parquet)."""
    return content_identity(
        path,
        secret,
        encoding=encoding,
        delimiter=delimiter,
        progress=progress,
        k=k,
        accumulator=TypedAccumulator(secret, k),
    )
