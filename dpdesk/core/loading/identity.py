"""A table's content identity: a key that follows the rows, not the bytes, and a sketch to recognise near-copies.

The same rows re-saved with other line ends, a byte-order mark, other quoting, another encoding, in another row
or column order, or as .xlsx or Parquet give the same :attr:`ContentIdentity.key`; one changed cell, one row
added or removed, or a renamed header give another. Both the key and the sketch are LOCAL: they are functions of
the private rows (a deterministic hash of a table is a confirmation oracle for its last unknown row), so they are
keyed by a secret kept in the dpdesk home and never leave it (see :mod:`dpdesk.core.identity.recognition`);
a home that uses a team ledger keys them with the team's secret instead and stores them in the team's database,
readable by the team's curators and officers, without the row count and the columns' counts
(:meth:`Sketch.to_team_json`, :meth:`ColumnSketches.to_team_json`; docs/team-ledger.md, SECURITY.md).

**What counts as the same table** (the canonical form):

* every column of the file is read (not only a plan's), with the loader's readers (CSV in any encoding it
  reads, .xlsx through the bomb guard, Parquet), batch by batch;
* columns are matched by header name, order-free; a name is NFC-normalised and trimmed (columns with the same
  name keep their order in the file);
* a cell is NFC-normalised and trimmed; an empty cell is missing;
* a cell that is an integer literal (``[+-]digits`` with an optional ``.000``) is that integer, exactly (leading
  zeros and a ``+`` dropped: ``007`` is ``7``, as a spreadsheet re-saves it); any other cell that parses as a
  finite number is its binary64 value: an integer value below 2^63 is that integer (``12`` = ``12.0`` =
  ``1.2e1``), any other is its shortest round-trip decimal (``0.1`` = ``0.10`` = ``1e-1``); ``inf`` and ``nan``
  are text;
* everything else is text, compared exactly (case matters);
* the table is the multiset of its rows: row order does not matter, duplicates count.

**The hash.** Each row's canonical encoding (a tag and length per cell, columns in name order) is hashed to 128
bits by a keyed word hash computed in numpy: the row's bytes as little-endian 64-bit words, each whitened with a
key that depends on its position and mixed by MurmurHash3's 64-bit finaliser (a bijection), summed per row, then
the sum mixed with the row's length; two lanes with independent keys give 128 bits. A row differing from another
in a single word can never collide (each step is a bijection); otherwise a collision is a 2^-128 event for
ordinary data. The row hashes are added mod 2^128 (order-free, duplicates counted), and the key is BLAKE2b under
the home's secret over the canonical header, the row count and that sum. All keys come from the home's secret
through BLAKE2b. Why not BLAKE2b per row: called from Python it costs 1.4-2.3 us a row (15-23 s for 10M rows,
measured); polars' own ``hash`` is fast but neither a secret-keyed function nor stable across polars versions,
and the key must stay the same for the life of a dataset. The word hash is not a cryptographic PRF: it keeps the
hashes unpredictable without the secret and collision-free in practice, which is what recognition needs; it
never leaves the home. Pinned by test vectors (``tests/core/test_identity.py``).

**How it is computed fast** (the same bytes and hashes; ``tests/core/test_identity_fast.py`` checks them against
:func:`canonical_rows` and :func:`hash_rows`, kept as the reference): a column whose batch repeats its cells is
encoded once per distinct cell and mapped back (a cell's encoding depends on that cell only); the other columns
take only the branches some cell of the batch takes, each choice made once (:func:`_fast_tokens`); the rows come
out of polars already zero-padded to their words, and :func:`hash_padded` hashes them a few thousand rows at a
time (the temporaries stay in the CPU cache). A batch is encoded and hashed in a thread while the reader parses
the next, two columns at a time; at most one batch is in flight, so the memory stays bounded by the batches.

**The sketch** (bottom-k): the :data:`SKETCH_K` smallest distinct values of the rows' first 64-bit lane. For
two tables, the rows whose hash lies below the smaller of the two sketches' largest values are *all* in both
sketches, and they are a uniform random sample of each table's distinct rows (the hash being random to anyone
without the secret); the share of one table's sampled rows found in the other estimates the share of its rows
the other contains (:func:`overlap`). With m sampled rows (m = k when the tables have similar sizes) the estimate
is a sample proportion drawn without replacement: standard error at most sqrt(p(1 - p)/m), 0.016 at worst for
k = 1024 (p = 0.5), 0.009 for a 90% share.

**One column changed** (:class:`ColumnSketches`, computed in the same pass; the key and sketch above do not
depend on it): each cell's canonical encoding is hashed on its own (the word hash, one lane, keys of its own)
and mixed with a key of its column's name; a row's *projection* without column c is the sum of its other cells'
hashes, finalised. For the whole row and for each column left out, the pass keeps a keyed multiset key of the
projections (their sum, with the row count and the names left) and a bottom-k sketch of them
(:data:`COLUMN_SKETCH_K`). Two tables that differ in exactly one column (dropped, added, renamed, or its values
edited) have equal projections without it: :mod:`dpdesk.core.identity.recognition` compares them. A projection sketch is
kept only where the projection still nearly identifies the table's rows (:func:`identifying`): a projection with
few distinct values (the categorical columns left after leaving out the one continuous column) matches any
table of the same schema, so only its exact multiset key is compared. Not computed for a header that repeats a
name.
"""

from __future__ import annotations

import codecs
import hashlib
import unicodedata
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.loading.csvfile import (
    _drop_blank_lines,
    _first_record_end,
    _parse_header,
    _parse_piece,
    _Source,
    _split_records,
    detect_encoding,
    sniff_delimiter,
)
from dpdesk.core.loading.excel import XLSX_SUFFIXES, read_checked_xlsx
from dpdesk.core.loading.guards import MAX_RECORD_BYTES, bounded_batches, check_parquet, check_rows
from dpdesk.core.loading.panics import quiet_panics, quietly, reader_errors, reader_message
from dpdesk.core.loading.parquet import PARQUET_SUFFIXES
from dpdesk.core.loading.table import file_sha256
from dpdesk.core.loading.wordhash import fmix, fmix_into, hash_padded

if TYPE_CHECKING:
    import polars as pl

#: Changes of the canonical form or the hash get a new version (it enters every key).
IDENTITY_VERSION = 1
#: How many row hashes a sketch keeps.
SKETCH_K = 1024
#: Rows hashed at a time for the whole-frame readers (.xlsx, Parquet): bounds the hashing's temporaries.
FRAME_BATCH_ROWS = 200_000
#: A column's cells are canonicalised once per distinct value when a batch has at most this share of distinct
#: cells (the usual codes, categories and small counts); the encoding of a cell depends on that cell only.
DISTINCT_SHARE = 0.5
#: Columns encoded at a time (polars releases the GIL; the machines dpdesk runs on have two cores or more).
COLUMN_THREADS = 2
#: How many projection hashes a column sketch keeps (standard error of a share at most 0.031; a distinct count
#: estimated within about 6%).
COLUMN_SKETCH_K = 256
#: A column with at most this many distinct values has a count profile (:class:`Marginal`), which a consistent
#: renaming of its labels keeps.
MARGINAL_CATEGORIES = 1000
#: A projection sketch is kept when its distinct values are estimated at this share of the table's rows or more.
IDENTIFYING_SHARE = 0.8

_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)
_INT_LITERAL = r"^[+-]?[0-9]+(\.0*)?$"


@dataclass(frozen=True)
class Sketch:
    """A bottom-k sketch of a table's rows: the ``k`` smallest distinct 64-bit row hashes, ascending.

    ``rows`` counts the table's rows (duplicates included); None in a team's copy (:meth:`to_team_json`), which
    keeps only ``identifies`` (whether the sketch is :func:`identifying`, the one use of the count across a team).
    With fewer than ``k`` hashes the sketch holds every distinct row; hashes are under one dpdesk home's secret (or
    its team's) and comparable only within that home (or team).
    """

    rows: int | None
    hashes: tuple[int, ...]
    k: int = SKETCH_K
    identifies: bool = False
    #: the identity scheme whose row hashes these are (1: :mod:`dpdesk.core.loading.identity`; 2:
    #: :mod:`dpdesk.core.loading.typed_identity`); sketches of two schemes are never compared
    scheme: int = 1

    @property
    def complete(self) -> bool:
        """Whether the sketch holds every distinct row of its table."""
        return len(self.hashes) < self.k

    def to_json(self) -> dict[str, Any]:
        """The sketch as JSON (for the dpdesk home only)."""
        if self.rows is None:
            raise ValueError("a team's copy of a sketch has no row count")
        raw: dict[str, Any] = {"rows": self.rows, "k": self.k, "hashes": [f"{h:016x}" for h in self.hashes]}
        if self.scheme != 1:
            raw["scheme"] = self.scheme
        return raw

    def to_team_json(self) -> dict[str, Any]:
        """The sketch as a team's database keeps it: the hashes, without the table's row count (a count of the
        private table, which the hashes do not give), with whether they nearly identify its rows."""
        raw: dict[str, Any] = {
            "k": self.k,
            "hashes": [f"{h:016x}" for h in self.hashes],
            "identifying": identifying(self),
        }
        if self.scheme != 1:
            raw["scheme"] = self.scheme
        return raw

    @staticmethod
    def from_json(raw: Any) -> Sketch:
        """A sketch written by :meth:`to_json` or :meth:`to_team_json` (ValueError, TypeError or KeyError if it is
        not one)."""
        hashes = tuple(int(h, 16) for h in raw["hashes"])
        if list(hashes) != sorted(set(hashes)):
            raise ValueError("not a sketch")
        scheme = raw.get("scheme", 1)
        if scheme not in (1, 2):
            raise ValueError("not a sketch")
        if "rows" not in raw and isinstance(raw["identifying"], bool):
            return Sketch(None, hashes, int(raw["k"]), raw["identifying"], scheme=scheme)
        if not isinstance(raw["rows"], int):
            raise ValueError("not a sketch")
        return Sketch(raw["rows"], hashes, int(raw["k"]), scheme=scheme)


def distinct_estimate(sketch: Sketch) -> float:
    """The number of distinct values of a sketch's table: exact when the sketch is complete, else (k - 1) / u_k
    with u_k its largest hash as a share of 2^64 (relative standard error about 1 / sqrt(k))."""
    if sketch.complete:
        return float(len(sketch.hashes))
    return (sketch.k - 1) * 2.0**64 / (sketch.hashes[-1] + 1)


def identifying(sketch: Sketch) -> bool:
    """Whether a sketch's values nearly identify its table's rows: their distinct count, estimated, is at least
    :data:`IDENTIFYING_SHARE` of the rows. Only then does a large overlap mean shared rows rather than a shared,
    coarse schema (a few categorical columns have few distinct rows, which any table of that schema holds)."""
    if sketch.rows is None:  # a team's copy: decided where the count was known
        return sketch.identifies
    return sketch.rows > 0 and distinct_estimate(sketch) >= IDENTIFYING_SHARE * sketch.rows


@dataclass(frozen=True)
class Projection:
    """A table's rows with some columns left out: ``key`` (hex) names their multiset exactly (keyed); ``sketch``
    is their bottom-k sketch, kept only when it is :func:`identifying` (None otherwise)."""

    key: str
    sketch: Sketch | None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "sketch": None if self.sketch is None else self.sketch.to_json()}

    def to_team_json(self) -> dict[str, Any]:
        """As a team keeps it (:meth:`Sketch.to_team_json`)."""
        return {"key": self.key, "sketch": None if self.sketch is None else self.sketch.to_team_json()}

    @staticmethod
    def from_json(raw: Any) -> Projection:
        """A projection written by :meth:`to_json` (ValueError, TypeError or KeyError if it is not one)."""
        if not isinstance(raw["key"], str):
            raise ValueError("not a projection")
        return Projection(raw["key"], None if raw["sketch"] is None else Sketch.from_json(raw["sketch"]))


@dataclass(frozen=True)
class Marginal:
    """One column's values, whatever the column is called (local, like the sketch): ``values`` (hex) names the
    multiset of its canonical values and the table's row count, exactly (keyed); ``profile`` (hex) names the
    sorted counts of its distinct values, the same whatever they are called (None when the column has more
    than :data:`MARGINAL_CATEGORIES` distinct values or more than half as many as rows)."""

    values: str
    profile: str | None

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "profile": self.profile}

    @staticmethod
    def from_json(raw: Any) -> Marginal:
        """A marginal written by :meth:`to_json` (ValueError, TypeError or KeyError if it is not one)."""
        values, profile = raw["values"], raw["profile"]
        if not isinstance(values, str) or not (profile is None or isinstance(profile, str)):
            raise ValueError("not a marginal")
        return Marginal(values, profile)


@dataclass(frozen=True)
class ColumnSketches:
    """What recognises a table that differs from another in one column, or that keeps some of its columns or
    renames them (local, like the sketch).

    ``columns``: the canonical header, sorted; ``whole``: the rows as projections of every column (comparable
    with another table's rows with one column left out); ``left_out``: for each column, the rows without it;
    ``marginals``: each column's :class:`Marginal` (empty in records made before they existed).
    """

    columns: tuple[str, ...]
    whole: Projection
    left_out: dict[str, Projection]
    marginals: dict[str, Marginal] = field(default_factory=dict)
    #: the identity scheme of the cell hashes (:attr:`Sketch.scheme`)
    scheme: int = 1

    def to_json(self) -> dict[str, Any]:
        """As JSON (for the dpdesk home only)."""
        raw: dict[str, Any] = {
            "columns": list(self.columns),
            "whole": self.whole.to_json(),
            "left_out": {c: p.to_json() for c, p in self.left_out.items()},
            "marginals": {c: m.to_json() for c, m in self.marginals.items()},
        }
        if self.scheme != 1:
            raw["scheme"] = self.scheme
        return raw

    def to_team_json(self) -> dict[str, Any]:
        """As a team's database keeps them: no row count (:meth:`Sketch.to_team_json`) and no marginals (each
        column's counts under a keyed hash, which anyone holding the team's secret could find by trying the
        counts of a column of few values)."""
        raw: dict[str, Any] = {
            "columns": list(self.columns),
            "whole": self.whole.to_team_json(),
            "left_out": {c: p.to_team_json() for c, p in self.left_out.items()},
            "marginals": {},
        }
        if self.scheme != 1:
            raw["scheme"] = self.scheme
        return raw

    @staticmethod
    def from_json(raw: Any) -> ColumnSketches:
        """Column sketches written by :meth:`to_json` (ValueError, TypeError or KeyError if they are not)."""
        columns = tuple(raw["columns"])
        left = raw["left_out"]
        marginals = raw.get("marginals", {})
        if (
            not all(isinstance(c, str) for c in columns)
            or len(set(columns)) != len(columns)
            or not isinstance(left, dict)
            or set(left) != set(columns)
            or not isinstance(marginals, dict)
            or not (not marginals or set(marginals) == set(columns))
            or raw.get("scheme", 1) not in (1, 2)
        ):
            raise ValueError("not column sketches")
        return ColumnSketches(
            columns,
            Projection.from_json(raw["whole"]),
            {c: Projection.from_json(left[c]) for c in columns},
            {c: Marginal.from_json(marginals[c]) for c in columns} if marginals else {},
            scheme=raw.get("scheme", 1),
        )


@dataclass(frozen=True)
class ContentIdentity:
    """A file's content key (hex), the SHA-256 of its bytes (read in the same pass) and its rows' sketch.

    ``columns`` (not part of the identity: two identities are equal by their bytes' hash, key and sketch) are
    the :class:`ColumnSketches` that recognise a one-column change; None for a header that repeats a name."""

    sha256: str
    key: str
    sketch: Sketch
    columns: ColumnSketches | None = field(default=None, compare=False)


def overlap(known: Sketch, new: Sketch) -> tuple[float, float]:
    """Estimated (share of ``known``'s distinct rows found in ``new``, share of ``new``'s found in ``known``).

    Threshold sampling on the two bottom-k sketches: below t = the smaller of their largest hashes, each
    sketch holds all of its table's rows, so the two samples are comparable row for row. Exact when both
    sketches are complete. An empty table shares nothing (0.0).
    """
    if not known.hashes or not new.hashes:
        return 0.0, 0.0
    t = min(
        known.hashes[-1] if not known.complete else 2**64,
        new.hashes[-1] if not new.complete else 2**64,
    )
    a = {h for h in known.hashes if h <= t}
    b = {h for h in new.hashes if h <= t}
    both = len(a & b)
    return (both / len(a) if a else 0.0), (both / len(b) if b else 0.0)


def row_keys(secret: bytes) -> np.ndarray:
    """The word hash's keys, derived from the home's secret: 8 uint64 (two lanes of 4)."""
    raw = hashlib.blake2b(b"row keys", key=secret, person=b"dpdesk-rows-v1", digest_size=64).digest()
    keys = np.frombuffer(raw, dtype="<u8").astype(_U64)
    keys[2] |= _U64(1)  # the position multipliers are odd
    keys[6] |= _U64(1)
    return keys


def cell_keys(secret: bytes) -> np.ndarray:
    """The keys of the cell hashes (:class:`ColumnSketches`), derived from the home's secret: 8 uint64 (lane 0's
    three, then the projections' finalising key)."""
    raw = hashlib.blake2b(b"cell keys", key=secret, person=b"dpdesk-cells-v1", digest_size=64).digest()
    keys = np.frombuffer(raw, dtype="<u8").astype(_U64)
    keys[2] |= _U64(1)
    return keys


def column_key(secret: bytes, name: str) -> np.uint64:
    """A column's key (its canonical name under the home's secret), mixed into each of its cells' hashes."""
    raw = hashlib.blake2b(
        name.encode("utf-8"), key=secret, person=b"dpdesk-colkey-v1", digest_size=8
    ).digest()
    return _U64(int.from_bytes(raw, "little"))


def hash_rows(data: bytes, lengths: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two 64-bit lanes of each row's keyed hash; ``data`` is the rows' bytes back to back.

    Each row is cut into little-endian 64-bit words (zero-padded, at least one word); per lane
    h = fmix(sum_j fmix(w_j xor (j * m + a)) xor fmix(len xor b)) with (a, m, b) the lane's keys.
    """
    n = len(lengths)
    lens = lengths.astype(np.int64)
    words_per_row = lens // 8 + 1
    word_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(words_per_row, out=word_start[1:])
    byte_start = np.zeros(n, dtype=np.int64)
    np.cumsum(lens[:-1], out=byte_start[1:])
    padded = np.zeros(int(word_start[-1]) * 8, dtype=np.uint8)
    total = len(data)
    if total:
        dest = np.repeat(word_start[:-1] * 8 - byte_start, lens)
        dest += np.arange(total, dtype=np.int64)
        padded[dest] = np.frombuffer(data, dtype=np.uint8)
        del dest
    words = padded.view("<u8")
    pos = (np.arange(len(words), dtype=np.int64) - np.repeat(word_start[:-1], words_per_row)).astype(_U64)
    ulens = lens.astype(_U64)
    lanes = []
    for a, m, b in ((keys[0], keys[2], keys[1]), (keys[4], keys[6], keys[5])):
        v = pos * m
        v += a
        v ^= words
        acc = np.add.reduceat(fmix(v), word_start[:-1]) if n else np.zeros(0, dtype=_U64)
        acc ^= fmix(ulens ^ b)
        lanes.append(fmix(acc))
    return lanes[0], lanes[1]


#: scheme 2's projection finaliser's multiplier (odd): one xorshift-multiply-xorshift round, a bijection of uint64
_MIX = _U64(0xBF58476D1CE4E5B9)


def _mix_into(x: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """A lighter bijective finaliser than :func:`fmix` (scheme 2's projections: their inputs are keyed sums of
    cell hashes already mixed), in place, with ``tmp`` for the shifted copies."""
    np.right_shift(x, _U64(31), out=tmp)
    x ^= tmp
    x *= _MIX
    np.right_shift(x, _U64(29), out=tmp)
    x ^= tmp
    return x


def sum128(lo: np.ndarray, hi: np.ndarray) -> int:
    """The sum mod 2^128 of the 128-bit values lo + 2^64 hi (exact: 32-bit limbs summed in uint64)."""
    total = 0
    for shift, lane in ((0, lo), (64, hi)):
        total += int((lane & _MASK32).sum(dtype=_U64)) << shift
        total += int((lane >> _U64(32)).sum(dtype=_U64)) << (shift + 32)
    return total % 2**128


def _cleaned(pl: Any, s: pl.Series) -> pl.Series:
    """A column's cells as text, trimmed, NFC-normalised (only a column with non-ASCII text needs it)."""
    s = s.cast(pl.String).str.strip_chars()
    if (s.str.len_bytes() != s.str.len_chars()).any():
        s = s.str.normalize("NFC")
    return s


def _int_digits(t: Any) -> Any:
    """An integer literal's exact digits (``+`` and leading zeros dropped, ``.000`` cut, ``-0`` is ``0``), as a
    polars expression over the cleaned text ``t``."""
    return (
        t.str.replace(r"^\+", "")
        .str.replace(r"\.0*$", "")
        .str.replace(r"^(-?)0+([0-9])", "${1}${2}")
        .str.replace(r"^-0$", "0")
    )


def _cell_tokens(pl: Any, s: pl.Series) -> pl.Series:
    """A column's canonical cells as one field each: ``-`` when missing, else ``<bytes>:<tag><value>`` (tags:
    ``i`` integer, ``f`` other finite number, ``t`` text), so that a row's fields decode unambiguously.

    Work a batch does not need is skipped: NFC only for a column with non-ASCII text, the exact digits of
    integer literals only when a number reaches 2^53, each branch only when some cell takes it."""
    s = _cleaned(pl, s)
    frame = s.to_frame("t").select(pl.when(pl.col("t").str.len_bytes() > 0).then(pl.col("t")).alias("t"))
    frame = frame.with_columns(pl.col("t").cast(pl.Float64, strict=False).alias("x"))
    t, x = pl.col("t"), pl.col("x")
    finite = x.is_finite()
    flags = frame.select(
        (finite & (x.abs() >= 2.0**53)).any().alias("big"),
        (finite & (x != x.floor())).any().alias("frac"),
        (t.is_not_null() & ~finite.fill_null(False)).any().alias("text"),
    ).row(0, named=True)
    token = pl.when(t.is_null()).then(pl.lit(None, dtype=pl.String))
    if flags["big"]:
        digits = _int_digits(t)
        token = token.when(t.str.contains(_INT_LITERAL)).then(pl.concat_str([pl.lit("i"), digits]))
    token = token.when(finite & (x == x.floor()) & (x.abs() < 2.0**63)).then(
        pl.concat_str([pl.lit("i"), x.cast(pl.Int64, strict=False).cast(pl.String)])
    )
    if flags["frac"] or flags["big"]:
        token = token.when(finite).then(pl.concat_str([pl.lit("f"), x.cast(pl.String)]))
    if flags["text"]:
        token = token.when(t.is_not_null()).then(pl.concat_str([pl.lit("t"), t]))
    tok = pl.col("tok")
    return (
        frame.select(token.alias("tok"))
        .select(
            pl.when(tok.is_null())
            .then(pl.lit("-"))
            .otherwise(pl.concat_str([tok.str.len_bytes().cast(pl.String), pl.lit(":"), tok]))
        )
        .to_series()
    )


def canonical_rows(frame: pl.DataFrame, order: list[int]) -> pl.Series:
    """Each row of ``frame`` in its canonical encoding (its columns taken in ``order``)."""
    import polars as pl

    fields = pl.DataFrame([_cell_tokens(pl, frame.to_series(i)).alias(f"f{j}") for j, i in enumerate(order)])
    if not order:
        return pl.Series("row", [""] * frame.height, dtype=pl.String)
    return fields.select(pl.concat_str(pl.all()).alias("row")).to_series()


def _fast_tokens(pl: Any, s: pl.Series) -> pl.Series:
    """:func:`_cell_tokens` with fewer passes: the value and its tag chosen once, the length prefix, tag and
    value joined in one step, and a branch no cell of the batch takes left out (a column of one kind of cell,
    the usual case, chooses nothing at all)."""
    s = _cleaned(pl, s)
    t, x = pl.col("t"), pl.col("x")
    frame = s.to_frame("t").select(pl.when(t.str.len_bytes() > 0).then(t).alias("t"))
    frame = frame.with_columns(t.cast(pl.Float64, strict=False).alias("x"))
    finite = x.is_finite()
    flags = frame.select(
        (finite & (x.abs() >= 2.0**53)).any().alias("big"),
        (finite & (x != x.floor())).any().alias("frac"),
        (t.is_not_null() & ~finite.fill_null(False)).any().alias("text"),
        finite.any().alias("number"),
    ).row(0, named=True)
    # (condition, tag, value) in _cell_tokens' order: the first that holds decides a cell
    branches: list[tuple[Any, str, Any]] = []
    if flags["big"]:
        digits = _int_digits(t)
        branches.append((t.str.contains(_INT_LITERAL), ":i", digits))
    if flags["number"]:
        small = finite & (x == x.floor()) & (x.abs() < 2.0**63)
        branches.append((small, ":i", x.cast(pl.Int64, strict=False).cast(pl.String)))
    if flags["frac"] or flags["big"]:
        branches.append((finite, ":f", x.cast(pl.String)))
    if flags["text"]:
        branches.append((t.is_not_null(), ":t", t))
    if not branches:  # every cell is missing (a cell is a number or text)
        return frame.get_column("t").fill_null("-")
    cond, tag, value = branches[0]
    tags: Any = pl.lit(tag)
    if len(branches) > 1:  # with one branch every non-missing cell takes it
        value, tags = pl.when(cond).then(value), pl.when(cond).then(tags)
        for cond, tag, v in branches[1:]:
            value, tags = value.when(cond).then(v), tags.when(cond).then(pl.lit(tag))
    v = pl.col("v")
    return (
        frame.select(value.alias("v"), tags.alias("g"))
        .select(pl.concat_str([(v.str.len_bytes() + 1).cast(pl.String), pl.col("g"), v]).fill_null("-"))
        .to_series()
    )


class _Canonical:
    """The canonical rows of a table's batches, as :func:`canonical_rows` encodes them, zero-padded to whole
    64-bit words for :func:`hash_padded`.

    A column whose batch repeats its cells (at most :data:`DISTINCT_SHARE` distinct) is encoded once per
    distinct cell and mapped back; a column found mostly distinct is not tried again for 16 batches.
    """

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.skip: dict[int, int] = {}
        self._pool = pool
        #: the cell hashes' keys, when cells are hashed
        self.cell_keys: np.ndarray | None = None

    def tokens(self, pl: Any, s: pl.Series, column: int) -> tuple[pl.Series, np.ndarray | None]:
        """A column's canonical cells and, when cells are hashed, each cell's hash."""
        skip = self.skip.get(column, 0)
        if skip:
            self.skip[column] = skip - 1
        else:
            s = s.cast(pl.String)
            distinct = s.unique()
            if distinct.len() <= s.len() * DISTINCT_SHARE:
                index = s.replace_strict(
                    distinct, pl.Series(np.arange(distinct.len(), dtype=np.uint32)), return_dtype=pl.UInt32
                )
                encoded = _fast_tokens(pl, distinct)
                hashed = self.cell_hashes(pl, encoded, column)
                cells = None if hashed is None else hashed[index.to_numpy()]
                return encoded.gather(index), cells
            self.skip[column] = 16
        encoded = _fast_tokens(pl, s)
        return encoded, self.cell_hashes(pl, encoded, column)

    def cell_hashes(self, pl: Any, tokens: pl.Series, column: int) -> np.ndarray | None:
        """Each canonical cell's hash before its column's key is mixed in: the word hash of its encoding (lane 0
        of :func:`cell_keys`; None when cells are not hashed). :class:`Projections` mixes in the column's key
        (the cell as a cell of its column) or the marginals' key (its value whatever the column is called)."""
        if self.cell_keys is None:
            return None
        n = tokens.str.len_bytes()
        pad = pl.Series([bytes(k).decode() for k in range(9)]).gather((8 - n % 8).cast(pl.UInt32))
        data = pl.select(pl.concat_str([pl.lit(tokens), pl.lit(pad)]).str.join("").cast(pl.Binary)).item()
        (lane,) = hash_padded(data, n.to_numpy(), self.cell_keys, lanes=1)
        return lane

    def padded_rows(
        self, frame: pl.DataFrame, order: list[int]
    ) -> tuple[bytes, np.ndarray, list[np.ndarray] | None]:
        """The rows' canonical encodings back to back, each padded with zero bytes to its words, and their
        lengths (before padding); with the cells' hashes, column by column in ``order``, when cells are hashed."""
        import polars as pl

        if not order:
            return bytes(8 * frame.height), np.zeros(frame.height, dtype=np.int64), None
        columns = [(frame.to_series(i), i) for i in order]
        encoded = list(self._pool.map(lambda c: self.tokens(pl, *c), columns))
        tokens = [t for t, _h in encoded]
        hashes = [h for _t, h in encoded if h is not None]
        fields = pl.DataFrame([s.alias(f"f{j}") for j, s in enumerate(tokens)])
        n = fields.select(pl.sum_horizontal(pl.all().str.len_bytes()).alias("n")).to_series()
        pad = pl.Series([bytes(k).decode() for k in range(9)]).gather((8 - n % 8).cast(pl.UInt32))
        data = fields.select(
            pl.concat_str([*fields.columns, pl.lit(pad)]).str.join("").cast(pl.Binary)
        ).item()
        return data, n.to_numpy(), hashes if len(hashes) == len(order) else None


def canonical_header(names: list[str]) -> tuple[list[str], list[int]]:
    """The header's names NFC-normalised and trimmed, and the column order by name (stable for repeats)."""
    canon = [unicodedata.normalize("NFC", str(h)).strip() for h in names]
    return canon, sorted(range(len(canon)), key=lambda i: canon[i])


def bottom_k(low: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest distinct of ``low`` (ascending, distinct) and ``values``: sorted and deduplicated by hand
    (``np.unique`` of a large uint64 array is many times slower than its sort)."""
    if len(low) == k:
        values = values[values < low[-1]]
    elif len(values) > 8 * k:
        # the first batches: only values up to the (4k)-th smallest can be among the k smallest distinct, unless
        # fewer than k of those are distinct (many repeats), when every value is sorted as before
        cut = np.partition(values, 4 * k)[4 * k]
        few = values[values <= cut]
        if len(few) < len(values):  # (all equal up to the cut: sorted below, as before)
            picked = bottom_k(low, few, k)
            if len(picked) == k and picked[-1] <= cut:
                return picked
    both = np.sort(np.concatenate([low, values]))
    keep = np.ones(len(both), dtype=bool)
    np.not_equal(both[1:], both[:-1], out=keep[1:])
    return both[keep][:k]


class Projections:
    """The rows' projections (every column, and each column left out), batch by batch: the sum mod 2^64 of
    their finalised hashes and their bottom-k (see :class:`ColumnSketches`); and each column's marginal
    (:class:`Marginal`): the sum of its values' name-free hashes, and while it has few distinct values, the count
    of each."""

    def __init__(
        self, secret: bytes, names: list[str], column_keys: list[np.uint64], *, scheme: int = 1
    ) -> None:
        self.secret = secret
        self.scheme = scheme
        self.names = names  # in the order the cells' hashes come (the canonical order)
        self.column_keys = column_keys
        keys = cell_keys(secret)
        self.finish = keys[3]
        self.value_key = keys[4]
        self.rows = 0
        self.sums = [0] * (len(names) + 1)  # whole, then each column left out
        self.smallest = [np.zeros(0, dtype=_U64) for _ in range(len(names) + 1)]
        self.value_sums = [0] * len(names)
        #: per column, its distinct values' hashes (sorted) and their counts, until it has too many
        self.counts: list[tuple[np.ndarray, np.ndarray] | None] = [
            (np.zeros(0, dtype=_U64), np.zeros(0, dtype=np.int64)) for _ in names
        ]

    def add(self, lanes: list[np.ndarray]) -> None:
        """One batch: its cells' hashes (:meth:`_Canonical.cell_hashes`), column by column in the canonical order."""
        n = len(lanes[0]) if lanes else 0
        cells = [fmix(lane ^ key) for lane, key in zip(lanes, self.column_keys, strict=True)]
        total = np.zeros(n, dtype=_U64)
        for h in cells:
            total += h
        self.add_mixed(cells, [fmix(lane ^ self.value_key) for lane in lanes], total)

    def add_mixed(
        self,
        cells: list[np.ndarray],
        values: list[np.ndarray | tuple[np.ndarray, np.ndarray]],
        total: np.ndarray,
    ) -> None:
        """:meth:`add` with each cell's hash already mixed with its column's key (``cells``), their sum per row
        (``total``, not changed), and each column's value hashes (``fmix(cell xor value key)``): one per cell, or
        (its distinct values' hashes, how many cells have each) for a column whose batch repeats a few values."""
        n = len(total)
        for j, v in enumerate(values):
            if isinstance(v, tuple):
                distinct, counts = v
                s = int((distinct * counts.astype(_U64)).sum(dtype=_U64))
                self._count_known(j, distinct[counts > 0], counts[counts > 0].astype(np.int64))
            else:
                s = int(v.sum(dtype=_U64))
                self._count(j, v)
            self.value_sums[j] = (self.value_sums[j] + s) % 2**64
        self.rows += n
        tmp = np.empty(n, dtype=_U64)
        v = np.empty(n, dtype=_U64)
        final = fmix_into if self.scheme == 1 else _mix_into
        for j, left in enumerate([None, *cells]):
            if left is None:
                v[:] = total
            else:
                np.subtract(total, left, out=v)
            v ^= self.finish
            final(v, tmp)
            self.sums[j] = (self.sums[j] + int(v.sum(dtype=_U64))) % 2**64
            self.smallest[j] = bottom_k(self.smallest[j], v, COLUMN_SKETCH_K)

    def add_parts(
        self,
        rows: int,
        sums: list[int],
        smallest: list[np.ndarray],
        value_sums: list[int],
        counts: list[tuple[np.ndarray, np.ndarray] | None],
    ) -> None:
        """Rows hashed elsewhere (another engine's part of the table), as :meth:`add_mixed` keeps them: their
        count; per projection (whole, then each column left out) the sum mod 2^64 of its finalised hashes and
        their :data:`COLUMN_SKETCH_K` smallest distinct (uint64); per column the sum mod 2^64 of its value hashes
        and (its distinct value hashes, how many cells have each), or None when it has more than
        :data:`MARGINAL_CATEGORIES`."""
        self.rows += rows
        for j, (s, low) in enumerate(zip(sums, smallest, strict=True)):
            self.sums[j] = (self.sums[j] + s) % 2**64
            self.smallest[j] = bottom_k(self.smallest[j], np.asarray(low, dtype=_U64), COLUMN_SKETCH_K)
        for j, (s, known) in enumerate(zip(value_sums, counts, strict=True)):
            self.value_sums[j] = (self.value_sums[j] + s) % 2**64
            if known is None:
                self.counts[j] = None
            else:
                self._count_known(j, np.asarray(known[0], dtype=_U64), np.asarray(known[1], dtype=np.int64))

    def _count(self, j: int, values: np.ndarray) -> None:
        if self.counts[j] is None:
            return
        if len(values) > 4 * MARGINAL_CATEGORIES and len(np.unique(values[: 4 * MARGINAL_CATEGORIES])) > (
            MARGINAL_CATEGORIES
        ):
            self.counts[j] = None  # too many values already in the batch's first cells (no sort of it all)
            return
        seen, counts = np.unique(values, return_counts=True)
        if len(seen) > MARGINAL_CATEGORIES:
            self.counts[j] = None
            return
        self._count_known(j, seen, counts.astype(np.int64))

    def _count_known(self, j: int, seen: np.ndarray, counts: np.ndarray) -> None:
        known = self.counts[j]
        if known is None:
            return
        if len(seen) > MARGINAL_CATEGORIES:
            self.counts[j] = None
            return
        both, where = np.unique(np.concatenate([known[0], seen]), return_inverse=True)
        total = np.zeros(len(both), dtype=np.int64)
        np.add.at(total, where, np.concatenate([known[1], counts]))
        self.counts[j] = None if len(both) > MARGINAL_CATEGORIES else (both, total)

    def _marginal(self, j: int) -> Marginal:
        h = hashlib.blake2b(key=self.secret, person=b"dpdesk-marg-v1", digest_size=16)
        h.update(self.rows.to_bytes(8, "little") + self.value_sums[j].to_bytes(8, "little"))
        known = self.counts[j]
        profile = None
        if known is not None and 2 * len(known[0]) <= self.rows:  # its values repeat: their labels can change
            p = hashlib.blake2b(key=self.secret, person=b"dpdesk-prof-v1", digest_size=16)
            p.update(self.rows.to_bytes(8, "little") + np.sort(known[1]).astype("<i8").tobytes())
            profile = p.hexdigest()
        return Marginal(h.hexdigest(), profile)

    def result(self) -> ColumnSketches:
        def projection(j: int, names: list[str]) -> Projection:
            h = hashlib.blake2b(key=self.secret, person=b"dpdesk-proj-v1", digest_size=32)
            h.update(self.scheme.to_bytes(4, "little") + len(names).to_bytes(8, "little"))
            for name in names:
                raw = name.encode("utf-8")
                h.update(len(raw).to_bytes(8, "little") + raw)
            h.update(self.rows.to_bytes(8, "little") + self.sums[j].to_bytes(8, "little"))
            sketch = Sketch(
                self.rows, tuple(int(x) for x in self.smallest[j]), COLUMN_SKETCH_K, scheme=self.scheme
            )
            return Projection(h.hexdigest(), sketch if identifying(sketch) else None)

        names = self.names
        return ColumnSketches(
            tuple(names),
            projection(0, names),
            {c: projection(j + 1, names[:j] + names[j + 1 :]) for j, c in enumerate(names)},
            {c: self._marginal(j) for j, c in enumerate(names)},
            scheme=self.scheme,
        )


class _Accumulator:
    """Row hashes summed mod 2^128 and the bottom-k of their first lane, batch by batch (and, once the header is
    known, the rows' projections: :class:`Projections`).

    A batch is encoded and hashed in a thread of its own (polars and numpy release the GIL) while the next batch
    is read; at most one batch is in flight.
    """

    def __init__(self, secret: bytes, k: int) -> None:
        self.keys = row_keys(secret)
        self.k = k
        self.rows = 0
        self.total = 0
        self.smallest = np.zeros(0, dtype=_U64)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpdesk-identity")
        self._columns = ThreadPoolExecutor(max_workers=COLUMN_THREADS, thread_name_prefix="dpdesk-columns")
        self.canonical = _Canonical(self._columns)
        self._pending: Future[None] | None = None
        self._secret = secret
        self.projections: Projections | None = None

    def start(self, header: list[str], order: list[int]) -> None:
        """The canonical header is known: hash each cell too, for the column sketches (not when a name repeats)."""
        if len(set(header)) != len(header):
            return
        self.canonical.cell_keys = cell_keys(self._secret)
        self.projections = Projections(
            self._secret, [header[i] for i in order], [column_key(self._secret, header[i]) for i in order]
        )

    def add_frame(self, frame: pl.DataFrame, order: list[int]) -> None:
        """Hash ``frame``'s rows (its columns taken in ``order``)."""
        if frame.height == 0:
            return
        self.wait()
        self.rows += frame.height
        self._pending = self._pool.submit(self._add, frame, order)

    def _add(self, frame: pl.DataFrame, order: list[int]) -> None:
        data, lengths, cells = self.canonical.padded_rows(frame, order)
        lo, hi = hash_padded(data, lengths, self.keys)
        if cells is not None and self.projections is not None:
            self.projections.add(cells)
        self.total = (self.total + sum128(lo, hi)) % 2**128
        if len(self.smallest) == self.k:
            lo = lo[lo < self.smallest[-1]]
        self.smallest = np.unique(np.concatenate([self.smallest, lo]))[: self.k]

    def wait(self) -> None:
        """Until the batch in flight is hashed (its exception raised here)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def close(self) -> None:
        self.wait()
        self._pool.shutdown()
        self._columns.shutdown()

    def sketch(self) -> Sketch:
        self.wait()
        return Sketch(self.rows, tuple(int(h) for h in self.smallest), self.k)

    def column_sketches(self) -> ColumnSketches | None:
        self.wait()
        return None if self.projections is None else self.projections.result()


def _content_key(secret: bytes, header: list[str], rows: int, total: int) -> str:
    h = hashlib.blake2b(key=secret, person=b"dpdesk-content1", digest_size=32)
    h.update(IDENTITY_VERSION.to_bytes(4, "little"))
    h.update(len(header).to_bytes(8, "little"))
    for name in sorted(header):
        raw = name.encode("utf-8")
        h.update(len(raw).to_bytes(8, "little") + raw)
    h.update(rows.to_bytes(8, "little"))
    h.update(total.to_bytes(16, "little"))
    return h.hexdigest()


def content_identity(
    path: str | Path,
    secret: bytes,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    k: int = SKETCH_K,
    accumulator: Any = None,
) -> ContentIdentity:
    """Read every column of a CSV, .xlsx or Parquet file and return its content key and sketch.

    ``secret`` is the dpdesk home's secret (:func:`dpdesk.core.ledger.contents.home_secret`); an ``accumulator``
    with :class:`_Accumulator`'s interface and a ``content_key(header)`` method computes another scheme's
    identity from the same readers (:func:`dpdesk.core.loading.typed_identity.content_identity2`). Raises
    :class:`~dpdesk.core.common.errors.InputError` for a file the readers refuse.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "no such file")
    acc: _Accumulator = accumulator if accumulator is not None else _Accumulator(secret, k)
    suffix = p.suffix.lower()
    try:
        if suffix in XLSX_SUFFIXES or suffix in PARQUET_SUFFIXES:
            sha = file_sha256(p, progress)
            header = _frame_batches(p, suffix in XLSX_SUFFIXES, acc, progress)
        else:
            sha, header = _csv_batches(p, encoding, delimiter, acc, progress)
        sketch = acc.sketch()
        columns = acc.column_sketches()
        key = (
            accumulator.content_key(header)
            if accumulator is not None
            else _content_key(secret, header, acc.rows, acc.total)
        )
    finally:
        acc.close()
    return ContentIdentity(sha, key, sketch, columns)


def _frame_batches(path: Path, xlsx: bool, acc: _Accumulator, progress: Progress) -> list[str]:
    import polars as pl

    try:
        if xlsx:
            frames: Iterator[pl.DataFrame] = iter([read_checked_xlsx(path)])
            names = None
        else:
            check_parquet(path)  # every column is decoded here: the metadata's limits, then bounded batches
            lf = pl.scan_parquet(path)
            with quiet_panics():
                names = list(lf.collect_schema().names())
            frames = bounded_batches(
                path, quietly(lf.collect_batches(chunk_size=FRAME_BATCH_ROWS)), FRAME_BATCH_ROWS
            )
        header: list[str] = []
        order: list[int] = []
        for frame in frames:
            if not header:
                header, order = canonical_header(names if names is not None else frame.columns)
                acc.start(header, order)
            for start in range(0, frame.height, FRAME_BATCH_ROWS):
                acc.add_frame(frame.slice(start, FRAME_BATCH_ROWS), order)
                check_rows(path, acc.rows)
                progress.check_cancelled()
        if not header and names is not None:
            header, order = canonical_header(names)
            acc.start(header, order)
        acc.wait()  # the last batch's errors are the reader's too
    except InputError:
        raise
    except (
        reader_errors()
    ) as exc:  # readers raise many exception types (and polars panics) for malformed files
        kind = "xlsx" if xlsx else "parquet"
        raise InputError(str(path), f"cannot read this {kind} file ({reader_message(exc)})") from None
    return header


def _csv_batches(
    path: Path, encoding: str | None, delimiter: str | None, acc: _Accumulator, progress: Progress
) -> tuple[str, list[str]]:
    """Every column of a delimited text file, through the loader's block reader (any encoding it reads)."""
    import polars as pl

    try:
        with path.open("rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
    if not head.strip():
        raise InputError(str(path), "the file is empty")
    enc = encoding or detect_encoding(head)
    try:
        codecs.lookup(enc)
    except LookupError:
        raise InputError(str(path), f"unknown encoding {enc!r}") from None
    enc = "utf-8" if enc in ("utf-8", "utf8", "utf-8-sig") else enc
    try:
        head_text = codecs.getincrementaldecoder(enc)("replace").decode(head, final=False).lstrip("\ufeff")
    except UnicodeError as exc:
        raise InputError(str(path), f"cannot be read as {enc} text ({exc})") from None
    delim = delimiter or sniff_delimiter(head_text)
    src = _Source(path, enc)
    try:
        header = _csv_pieces(pl, src, path, delim, acc, progress)
        return src.hexdigest(), header
    finally:
        src.close()


def _csv_pieces(
    pl: Any, src: _Source, path: Path, delim: str, acc: _Accumulator, progress: Progress
) -> list[str]:
    buf = b""
    raw_header: list[str] | None = None
    head_bytes = b""
    wanted: list[tuple[int, str]] = []
    order: list[int] = []
    header: list[str] = []
    line = 1
    eof = False
    while not eof:
        block = src.read()
        eof = not block
        buf += block
        progress.update(src.read_bytes, src.size, "identifying")
        if raw_header is None:
            cut = _first_record_end(buf)
            if cut < 0 and not eof:
                if len(buf) > MAX_RECORD_BYTES:
                    raise InputError(
                        str(path), "the header line is too long or has an unclosed quote", line=1
                    )
                continue
            head_bytes, buf = (buf[:cut], buf[cut:]) if cut >= 0 else (buf, b"")
            raw_header = _parse_header(head_bytes, path, delim)
            header, order = canonical_header(raw_header)
            acc.start(header, order)
            wanted = [(i, f"c{i}") for i in range(len(raw_header))]
            line = 2
        if eof:
            piece, buf = buf, b""
            if piece.count(b'"') % 2:
                raise InputError(str(path), "a quoted field is never closed", line=line)
        else:
            cut = _split_records(buf)
            if cut < 0:
                if len(buf) > MAX_RECORD_BYTES:
                    raise InputError(str(path), "a record is too long, or a quote is never closed", line=line)
                continue
            piece, buf = buf[:cut], buf[cut:]
        records = _drop_blank_lines(piece) if len(raw_header) > 1 else piece
        if records:
            frame = _parse_piece(pl, records, path, head_bytes, raw_header, wanted, delim, line)
            acc.add_frame(frame, order)
            check_rows(path, acc.rows)
        line += piece.count(b"\n")
    acc.wait()
    return header
