"""The fast content identity gives exactly the keys and sketches of the reference encoding and hash.

The reference is the code the content identity ran before it was made fast, kept in
``dpdesk/core/loading/identity.py``: :func:`canonical_rows` (the documented canonical form, one polars pass per
branch) and :func:`hash_rows` (the documented word hash, pinned by ``test_identity.py``). Each test computes an
identity both ways on the same file, through the same readers and batches, and compares key and sketch.
"""

from __future__ import annotations

import codecs
import csv
import io
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import xlsxwriter  # type: ignore[import-untyped]  # no stubs; a test-only dependency
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading import csvfile, wordhash
from dpdesk.core.loading import identity as ident
from dpdesk.core.loading.identity import ContentIdentity, content_identity, hash_rows, row_keys
from dpdesk.core.loading.wordhash import hash_padded

SECRET = bytes(range(32))
QUIET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


def _reference_add(self: Any, frame: pl.DataFrame, order: list[int]) -> None:
    """The accumulation as it was: canonical_rows, joined into one bytes object, hash_rows."""
    rows = ident.canonical_rows(frame, order)
    n = rows.len()
    if n == 0:
        return
    data = rows.str.join("").item().encode("utf-8")
    lo, hi = hash_rows(data, rows.str.len_bytes().to_numpy(), self.keys)
    self.rows += n
    self.total = (self.total + ident.sum128(lo, hi)) % 2**128
    if len(self.smallest) == self.k:
        lo = lo[lo < self.smallest[-1]]
    self.smallest = np.unique(np.concatenate([self.smallest, lo]))[: self.k]


def reference_identity(path: Path, k: int = ident.SKETCH_K) -> ContentIdentity:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ident._Accumulator, "add_frame", _reference_add)
        return content_identity(path, SECRET, k=k)


def assert_same(path: Path, k: int = ident.SKETCH_K) -> ContentIdentity:
    fast = content_identity(path, SECRET, k=k)
    ref = reference_identity(path, k)
    assert fast == ref, path.name
    return fast


# cells chosen at the canonical form's edges: integer literals, 2^53 and 2^63, floats with many digits,
# inf/nan as text, whitespace, NFC, quotes, delimiters and line ends inside fields
EDGE_CELLS = [
    "0",
    "-0",
    "+0",
    "-000",
    "007",
    "+12",
    "12.000",
    "12.0",
    "1.2e1",
    "12.",
    ".5",
    "-.5",
    "1_000",
    "0x10",
    str(2**53 - 1),
    str(2**53),
    str(2**53 + 1),
    f"-{2**53 + 1}",
    f"+0{2**53 + 1}.00",
    str(2**63 - 1),
    str(2**63),
    str(2**63 + 1),
    f"-{2**63}",
    f"-{2**63 + 1}",
    "9223372036854775807.000",
    "123456789012345678901234567890",
    "-000123456789012345678901234567890.0",
    "0.1",
    "0.10",
    "1e-1",
    "0.1000000000000000055511151231257827",
    "3.141592653589793238462643",
    "1e-320",
    "4.9e-324",
    "1e308",
    "1.7976931348623157e308",
    "1e309",
    "-1e309",
    "9007199254740993.5",
    "1e16",
    "1e22",
    "1.5e300",
    "-2.5e-7",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "nan",
    "NaN",
    "-nan",
    "",
    " ",
    "   ",
    "\t",
    " 12 ",
    " 0.1\t",
    "\u00a012\u00a0",
    "\u3000x\u3000",
    "text",
    "Text",
    "a, comma",
    'a "quote"',
    "line\nbreak",
    "crlf\r\ninside",
    "\n",
    "x\r",
    "Zu\u0308rich",
    "Zürich",
    "北京",
    "é",
    "e\u0301",
    "Å",
    "\u212b",
    "ﬁ",
    "😀",
    "\u0000",
]


def _write(path: Path, header: list[str], rows: list[list[str]], **kw: Any) -> Path:
    enc = kw.pop("encoding", "utf-8")
    buf = io.StringIO()
    csv.writer(buf, lineterminator=kw.pop("newline", "\n"), **kw).writerows([header, *rows])
    path.write_bytes(buf.getvalue().encode(enc))
    return path


@pytest.fixture(params=[0.0, 1.0], ids=["direct", "distinct"])
def share(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> float:
    """Each column encoded cell by cell (share 0), or once per distinct cell and mapped back (share 1)."""
    monkeypatch.setattr(ident, "DISTINCT_SHARE", request.param)
    return float(request.param)


def test_edge_cells_in_every_mix_give_the_reference_identity(tmp_path: Path, share: float) -> None:
    cells = EDGE_CELLS
    n = len(cells)
    rows = [
        [cells[i], cells[(3 * i + 1) % n], cells[(7 * i + 2) % n], "x" if i % 3 else ""] for i in range(n)
    ]
    header = ["a", " a", "Zu\u0308rich", "a"]  # duplicate names after trimming, a name needing NFC
    assert_same(_write(tmp_path / "mix.csv", header, rows))
    # one kind per column: each column alone takes one branch, or none (only empty cells)
    for j, group in enumerate(
        [["12", "007", "-3"], ["0.1", "2.5"], [str(2**63), "12"], ["inf", "x"], ["", " "], ["1e309", "1"]]
    ):
        assert_same(_write(tmp_path / f"kind{j}.csv", ["c", "d"], [[c, str(i)] for i, c in enumerate(group)]))
    # every cell alone in a column, and repeated (so the distinct cells are fewer than the rows)
    for i, c in enumerate(cells):
        assert_same(_write(tmp_path / f"one{i}.csv", ["c", "d"], [[c, "1"], [c, "2"], [c, "1"]]))


def test_encodings_line_ends_quoting_and_blank_lines_give_the_reference_identity(
    tmp_path: Path, share: float
) -> None:
    rows = [[c, f"{i:03d}", str(i / 7)] for i, c in enumerate(EDGE_CELLS) if c.isprintable()]
    base = _write(tmp_path / "base.csv", ["name", "code", "x"], rows)
    key = assert_same(base).key
    text = base.read_bytes().decode("utf-8")
    latin = [[c, code, x] for c, code, x in rows if c.encode("cp1252", "ignore").decode("cp1252") == c]
    variants = {
        "crlf.csv": text.replace("\n", "\r\n").encode("utf-8"),
        "bom.csv": codecs.BOM_UTF8 + text.encode("utf-8"),
        "utf16.csv": text.encode("utf-16"),
        "utf16be.csv": codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
        "gb18030.csv": text.encode("gb18030"),
        "blank-lines.csv": text.replace("\n", "\n\n", 3).encode("utf-8") + b"\r\n\n",
        "no-final-newline.csv": text.rstrip("\n").encode("utf-8"),
    }
    for name, raw in variants.items():
        (tmp_path / name).write_bytes(raw)
        assert assert_same(tmp_path / name).key == key, name
    assert_same(_write(tmp_path / "quoted.csv", ["name", "code", "x"], rows, quoting=csv.QUOTE_ALL))
    assert_same(_write(tmp_path / "latin1.csv", ["näme", "code", "x"], latin, encoding="cp1252"))
    assert_same(_write(tmp_path / "semicolon.csv", ["name", "code", "x"], rows, delimiter=";"))
    (tmp_path / "header-only.csv").write_bytes(b"a,b\n")
    assert assert_same(tmp_path / "header-only.csv").sketch.rows == 0
    (tmp_path / "one-column.csv").write_bytes(b"a\n1\n\n007\n \nx\n")  # blank lines are records here
    assert assert_same(tmp_path / "one-column.csv").sketch.rows == 5


def test_many_batches_merge_into_the_reference_sum_and_sketch(
    tmp_path: Path, share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small blocks: many pieces (each hashed while the next is read), the bottom-k merged across them."""
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(wordhash, "HASH_CHUNK_ROWS", 7)
    rng = np.random.default_rng(5)
    rows = [
        [
            str(rng.integers(0, 20)),
            f"{rng.normal():.6f}",
            ["a", "b", "é", ""][i % 4],
            str(rng.integers(-(2**60), 2**60)),
        ]
        for i in range(5000)
    ]
    fast = assert_same(_write(tmp_path / "big.csv", ["k", "x", "t", "id"], rows), k=64)
    assert fast.sketch.rows == 5000 and len(fast.sketch.hashes) == 64


def test_xlsx_and_parquet_give_the_reference_identity(tmp_path: Path, share: float) -> None:
    frame = pl.DataFrame(
        {
            "i": [1, None, 2**62, -(2**63), 7, 7],
            "f": [0.1, 1e300, float("inf"), None, 12.0, 12.0],
            "s": ["a", " b ", "", None, "e\u0301", "e\u0301"],
            "b": [True, False, None, True, True, True],
        }
    )
    frame.write_parquet(tmp_path / "t.parquet")
    assert_same(tmp_path / "t.parquet")
    wb = xlsxwriter.Workbook(str(tmp_path / "t.xlsx"))
    ws = wb.add_worksheet()
    for r, row in enumerate([["n", "x", "t"], [1, 0.5, "a"], [2**53 + 1, 1e20, " b"], [3, -0.0, "1"]]):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    wb.close()
    assert_same(tmp_path / "t.xlsx")
    # a column the canonical form cannot encode: refused as the reference refuses it (not a polars error)
    pl.DataFrame({"a": [[1, 2], [3]], "b": [1, 2]}).write_parquet(tmp_path / "list.parquet")
    for identify in (reference_identity, lambda p: content_identity(p, SECRET)):
        with pytest.raises(InputError, match="cannot read this parquet file"):
            identify(tmp_path / "list.parquet")


CELL = st.one_of(
    st.sampled_from(EDGE_CELLS),
    st.integers(-(2**70), 2**70).map(str),
    st.integers(-(2**70), 2**70).map(lambda i: f"{'+' if i >= 0 else '-'}00{abs(i)}.000"),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17g}"),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6),
    st.text(" \t\u00a0ae\u0301.-+0123456789", max_size=6),
)


@settings(max_examples=300, deadline=None, suppress_health_check=QUIET)
@given(st.lists(CELL, max_size=30), st.booleans())
def test_any_column_is_encoded_as_the_reference_does(cells: list[str], nulls: bool) -> None:
    """Each branch of the fast encoding against the reference one, cell by cell (300 random columns)."""
    s = pl.Series("c", [None if nulls and i % 5 == 0 else c for i, c in enumerate(cells)], dtype=pl.String)
    assert ident._fast_tokens(pl, s).to_list() == ident._cell_tokens(pl, s).to_list()


@settings(max_examples=40, deadline=None, suppress_health_check=QUIET)
@given(
    st.integers(1, 4).flatmap(
        lambda w: st.tuples(
            st.lists(
                st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4),
                min_size=w,
                max_size=w,
            ),
            st.lists(st.lists(CELL, min_size=w, max_size=w), max_size=25),
        )
    ),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030"]),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
    st.floats(0.0, 1.0),
)
def test_random_tables_give_the_reference_identity(
    tmp_path_factory: pytest.TempPathFactory,
    table: tuple[list[str], list[list[str]]],
    encoding: str,
    newline: str,
    quoting: int,
    distinct: float,
) -> None:
    """Random tables written as CSV in random encodings, line ends and quoting (40 examples)."""
    header, rows = table
    header = [h.replace("\x00", "") for h in header]
    rows = [[c.replace("\x00", "") for c in r] for r in rows]
    if (
        encoding == "gb18030"
    ):  # gb18030 cannot write every code point the same way back: keep what round-trips
        rows = [r for r in rows if all(c.encode(encoding, "replace").decode(encoding) == c for c in r)]
        header = [h.encode(encoding, "replace").decode(encoding) for h in header]
    path = tmp_path_factory.mktemp("random") / "t.csv"
    _write(path, header, rows, encoding=encoding, newline=newline, quoting=quoting)
    try:
        ref = reference_identity(path)
    except Exception as exc:  # a file the readers refuse is refused by both the same way
        with pytest.raises(type(exc)):
            content_identity(path, SECRET)
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ident, "DISTINCT_SHARE", distinct)
        assert content_identity(path, SECRET) == ref


@settings(max_examples=100, deadline=None, suppress_health_check=QUIET)
@given(st.lists(st.binary(max_size=40), max_size=40), st.integers(1, 9))
def test_the_padded_word_hash_is_the_documented_hash(rows: list[bytes], chunk: int) -> None:
    """hash_padded (rows already padded, hashed a chunk of rows at a time) equals hash_rows (100 examples)."""
    keys = row_keys(SECRET)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    padded = b"".join(r + bytes(8 - len(r) % 8) for r in rows)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wordhash, "HASH_CHUNK_ROWS", chunk)
        lo, hi = hash_padded(padded, lengths, keys)
    ref_lo, ref_hi = hash_rows(b"".join(rows), lengths, keys)
    assert lo.tolist() == ref_lo.tolist() and hi.tolist() == ref_hi.tolist()
    if rows:
        with pytest.raises(ValueError, match="padded"):
            hash_padded(padded + bytes(8), lengths, keys)  # a word too many


def test_nfc_names_and_cells_are_one_table(tmp_path: Path, share: float) -> None:
    """A decomposed copy is the same table (the fast path normalises like the reference)."""
    rows = [["Zürich", "é"], ["Zürich", "x"], ["北京", "é"]]
    a = assert_same(_write(tmp_path / "nfc.csv", ["Stadt", "ü"], rows)).key
    nfd = [[unicodedata.normalize("NFD", c) for c in r] for r in rows]
    assert (
        assert_same(_write(tmp_path / "nfd.csv", ["Stadt", unicodedata.normalize("NFD", "ü")], nfd)).key == a
    )


def test_at_most_one_batch_is_encoded_while_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory bound: a slow encoder never lets batches pile up (the reader waits for it)."""
    monkeypatch.setattr(csvfile, "BLOCK_BYTES", 2048)
    rows = [[str(i), f"{i / 3:.4f}"] for i in range(3000)]
    path = _write(tmp_path / "t.csv", ["a", "b"], rows)
    held = [0]
    most = [0]
    batches = [0]
    lock = threading.Lock()
    real_add_frame, real_add = ident._Accumulator.add_frame, ident._Accumulator._add

    def add_frame(self: Any, frame: pl.DataFrame, order: list[int]) -> None:
        with lock:
            held[0] += 1  # this batch, read, and the one in flight, if any
            most[0] = max(most[0], held[0])
            batches[0] += 1
        real_add_frame(self, frame, order)

    def slow_add(self: Any, frame: pl.DataFrame, order: list[int]) -> None:
        time.sleep(0.02)
        real_add(self, frame, order)
        with lock:
            held[0] -= 1

    monkeypatch.setattr(ident._Accumulator, "add_frame", add_frame)
    monkeypatch.setattr(ident._Accumulator, "_add", slow_add)
    ident_fast = content_identity(path, SECRET)
    assert ident_fast.sketch.rows == 3000 and held[0] == 0
    assert batches[0] > 10 and most[0] <= 2  # pieces of 2 KiB: many batches, never more than two held at once
    monkeypatch.undo()
    assert ident_fast == reference_identity(path)
