"""The Spark engine's contribution bounding (dpdesk/core/release/engines/spark/bounding.py) against the local
definition (dpdesk/core/dp/bounding.py, dpdesk/core/loading/columns.py): per row, the id's words and the row's
bounding hash bit for bit, and the rows kept per person for k = 1, 2, 3, on a seeded table with repeated,
padded, blank and non-ASCII ids, missing ints, NaN, -0.0, infinities, subnormals and undeclared categories."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspark")

from dpdesk.core.dp.bounding import BoundKey, derive_key, keep_smallest, row_hashes, value_words
from dpdesk.core.loading import Column, Table
from dpdesk.core.loading.columns import id_hashes, id_key_scope
from dpdesk.core.model.spec import ColumnSpec
from dpdesk.core.release.engines.spark import bounding as sb
from dpdesk.core.release.engines.spark.hashing import signed

pytestmark = pytest.mark.spark

M64 = (1 << 64) - 1
ROWS = 3000
#: Declared in this order (the loaded frame's c0, c1, ...), hashed in the order of the names' UTF-8 bytes:
#: "Alpha" < "b" < "mid" < "zeta" < "é".
SPECS = {
    "zeta": ColumnSpec("zeta", "float", (-1.0, 1.0)),
    "é": ColumnSpec("é", "category", categories=("x", "ÿ", "中文", "a b")),
    "Alpha": ColumnSpec("Alpha", "int", (-1000, 1000)),
    "b": ColumnSpec("b", "int", (-(10**15), 10**15)),
    "mid": ColumnSpec("mid", "float", (0.0, 10.0)),
}
#: Every Unicode White_Space character (polars' strip_chars and Java's (?U)\s strip these: checked by hand over
#: every code point), and four that are not (U+001C among them, which Python's str.strip strips).
SPACES = [
    *"\t\n\x0b\x0c\r \x85\xa0\u1680",
    *(chr(c) for c in range(0x2000, 0x200B)),
    *"\u2028\u2029\u202f\u205f\u3000",
]
NOT_SPACES = ["\u200b", "\ufeff", "\u180e", "\x1c"]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local Spark session for the module (ANSI off: bigint products wrap, as the hashes need)."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def _ids(rng: np.random.Generator) -> list[str | None]:
    """Ids with repeats: a pool of people (ASCII, non-ASCII, long), each written bare or padded with white space;
    blanks and nulls (no id); and texts edged with characters that are not white space (other people)."""
    people = (
        [f"p{j}" for j in range(300)]
        + [f"人{j}é" for j in range(100)]
        + [f"person-{j:030d}" for j in range(40)]
    )
    people += [f"{c}p{j}" for j, c in enumerate(NOT_SPACES)]
    out: list[str | None] = []
    for _ in range(ROWS):
        r = rng.random()
        if r < 0.04:
            out.append(None)
        elif r < 0.08:
            out.append("".join(rng.choice(SPACES, size=int(rng.integers(0, 4)))))
        else:
            p = people[int(rng.integers(len(people)))]
            if rng.random() < 0.3:
                p = "".join(rng.choice(SPACES, size=int(rng.integers(1, 3)))) + p
                p += "".join(rng.choice(SPACES, size=int(rng.integers(0, 3))))
            out.append(p)
    return out


def _floats(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(0, 3, ROWS)
    special = np.asarray([np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, -5e-324, 2.2e-308, 1.7e308, -1.7e308])
    at = rng.random(ROWS) < 0.25
    x[at] = rng.choice(special, size=int(at.sum()))
    return x


def make_table(seed: int, id_key: bytes) -> tuple[Table, list[tuple[Any, ...]]]:
    """A dpdesk table as the loaders make it and the same rows as the Spark loaded frame's tuples
    (row number, id, then c{i} (and m{i}) per declared column); some rows repeat another of the same person."""
    rng = np.random.default_rng(seed)
    ids = _ids(rng)
    zeta, mid = _floats(rng), _floats(rng)
    cat = rng.integers(-1, 5, ROWS).astype(np.int16)  # 4: undeclared too, as missing
    alpha = rng.integers(-1000, 1001, ROWS).astype(np.int16)
    alpha_miss = rng.random(ROWS) < 0.1
    alpha[alpha_miss] = -1000  # the lower bound where missing, as loaded
    b = rng.integers(-(10**15), 10**15 + 1, ROWS, dtype=np.int64)
    b_miss = rng.random(ROWS) < 0.1
    b[b_miss] = -(10**15)
    for r in rng.choice(ROWS, size=ROWS // 10, replace=False):  # duplicates of an earlier row: ties
        s = int(rng.integers(ROWS))
        for a in (zeta, mid, cat, alpha, alpha_miss, b, b_miss):
            a[r] = a[s]
        ids[r] = ids[s]
    import polars as pl

    with id_key_scope(id_key):
        words, empty = id_hashes(pl.Series(ids, dtype=pl.String))
    cols = {
        "zeta": Column(SPECS["zeta"], zeta),
        "é": Column(SPECS["é"], cat),
        "Alpha": Column(SPECS["Alpha"], alpha, alpha_miss),
        "b": Column(SPECS["b"], b, b_miss),
        "mid": Column(SPECS["mid"], mid),
    }
    table = Table("t", "", ROWS, cols, words, empty)
    rows = [
        (
            r,
            ids[r],
            float(zeta[r]),
            int(cat[r]),
            int(alpha[r]),
            bool(alpha_miss[r]),
            int(b[r]),
            bool(b_miss[r]),
            float(mid[r]),
        )
        for r in range(ROWS)
    ]
    return table, rows


SCHEMA = "row bigint, id string, c0 double, c1 int, c2 bigint, m2 boolean, c3 bigint, m3 boolean, c4 double"


@pytest.fixture(scope="module")
def case(spark: Any) -> tuple[Table, Any, BoundKey, bytes]:
    key = derive_key(b"a home's secret, for this test")
    id_key = hashlib.blake2b(b"person ids", key=b"another secret").digest()
    table, rows = make_table(20261129, id_key)
    return table, spark.createDataFrame(rows, SCHEMA), key, id_key


def test_the_table_has_what_it_should_test() -> None:
    """The generated table has the cases the other tests rely on (so they cannot pass vacuously)."""
    table, rows = make_table(20261129, bytes(32))
    assert table.ids is not None and table.ids_missing is not None
    ids = [r[1] for r in rows]
    assert any(i is not None and i != i.strip() and i.strip() for i in ids)  # padded ids
    assert len(SPACES) == 25 and any(i is not None and i[0] in SPACES[6:] for i in ids)  # non-ASCII padding
    assert any(i is None for i in ids) and any(i is not None and not i.strip() for i in ids)
    assert any(i is not None and i[0] in NOT_SPACES for i in ids)
    zeta = table.columns["zeta"].values
    assert np.isnan(zeta).any() and (np.signbit(zeta) & (zeta == 0)).any() and np.isinf(zeta).any()
    assert (np.abs(zeta[np.isfinite(zeta)]) < 2.3e-308).sum() > 2  # subnormals and zeros
    assert (table.columns["é"].values < 0).any() and (table.columns["é"].values >= 4).any()
    assert table.columns["Alpha"].missing().any() and table.columns["b"].missing().any()
    h = row_hashes(table, derive_key(b"k"))
    assert (h >= np.uint64(1 << 63)).any() and (h < np.uint64(1 << 63)).any()
    people = Counter(map(tuple, table.ids[~table.ids_missing]))
    assert sum(c > 3 for c in people.values()) > 100  # more rows than k for many


def test_id_lanes_are_the_loader_s_id_hashes(case: tuple[Table, Any, BoundKey, bytes]) -> None:
    """Per row, the id's two words and its emptiness equal id_hashes' under the same id key: trimmed of Unicode
    White_Space (not of U+200B or U+FEFF), null and blank ids empty."""
    from pyspark.sql import functions as sf

    table, frame, _key, id_key = case
    assert table.ids is not None and table.ids_missing is not None
    lo, hi, empty = sb.id_lanes(sf.col("id"), id_key)
    got = frame.select("row", lo.alias("lo"), hi.alias("hi"), empty.alias("e")).orderBy("row").collect()
    assert [r["row"] for r in got] == list(range(ROWS))
    assert [r["lo"] & M64 for r in got] == [int(v) for v in table.ids[:, 0]]
    assert [r["hi"] & M64 for r in got] == [int(v) for v in table.ids[:, 1]]
    assert [r["e"] for r in got] == [bool(v) for v in table.ids_missing]


def test_the_id_words_keys_need_no_context(case: tuple[Table, Any, BoundKey, bytes]) -> None:
    """id_word_keys(key) is what a load under id_key_scope(key) hashes with (one definition)."""
    import polars as pl

    from dpdesk.core.loading.columns import _id_word_keys, id_word_keys

    _table, _frame, _key, id_key = case
    with id_key_scope(id_key):
        assert np.array_equal(_id_word_keys(), id_word_keys(id_key))
        inside = id_hashes(pl.Series(["a", " b"]))[0]
    assert not np.array_equal(id_word_keys(id_key), id_word_keys(bytes(32)))
    assert np.array_equal(id_word_keys(None), _id_word_keys())  # no scope: the process key
    assert not np.array_equal(id_hashes(pl.Series(["a", " b"]))[0], inside)


def test_row_hashes_are_the_local_engines(case: tuple[Table, Any, BoundKey, bytes]) -> None:
    """Per row (with an id or not), the bounding hash equals row_hashes' as a uint64."""
    from pyspark.sql import functions as sf

    table, frame, key, id_key = case
    lo, hi, _empty = sb.id_lanes(sf.col("id"), id_key)
    h = sb.row_hash(SPECS, key, [lo, hi])
    got = frame.select("row", h.alias("h")).orderBy("row").collect()
    assert [r["h"] & M64 for r in got] == [int(v) for v in row_hashes(table, key)]


def _signatures(table: Table, key: BoundKey) -> list[tuple[int, ...]]:
    """Per row, its (id words, declared values' words): what the statistics read of a kept row."""
    assert table.ids is not None
    words = [value_words(table, name, key) for name in SPECS]
    return [(int(table.ids[r, 0]), int(table.ids[r, 1]), *(int(w[r]) for w in words)) for r in range(ROWS)]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_rows_kept_are_the_local_engines(case: tuple[Table, Any, BoundKey, bytes], k: int) -> None:
    """keep_smallest keeps, per person, the rows dp.bounding.keep_smallest keeps (the k smallest hashes compared
    unsigned; no row without an id), up to rows of one person with equal values (ties, which the local engine
    breaks by position and Spark cannot); the frame's columns come back unchanged."""
    table, frame, key, id_key = case
    kept = sb.keep_smallest(frame, SPECS, k, key, id_key)
    assert kept.columns == frame.columns
    got = np.asarray(sorted(r["row"] for r in kept.select("row").collect()), dtype=np.int64)
    want = np.flatnonzero(keep_smallest(table, k, key))
    signature = _signatures(table, key)
    assert Counter(signature[r] for r in got) == Counter(signature[r] for r in want)
    assert len(set(got.tolist())) == len(got)
    twins = Counter(signature)
    unique = {r for r in want.tolist() if twins[signature[r]] == 1}
    assert (
        unique <= set(got.tolist()) and len(unique) > len(want) // 2
    )  # rows with no twin: the very same rows


def test_only_derived_keys_are_literals_in_the_plan(spark: Any, dpdesk_home: Path) -> None:
    """The query plan (what the Spark UI and event logs show) holds the keys derived for bounding and for the id
    hashes, never the home's secret, the id key or the bounding key's bytes beyond k0..k3."""
    from dpdesk.core.ledger.contents import home_secret
    from dpdesk.core.loading.columns import id_word_keys
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.steps import bound_key, id_key

    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1.0},
            "privacy_unit": {"neighbouring": "add_remove", "id_column": "pid", "max_rows_per_person": 2},
            "columns": {
                "zeta": {"type": "float", "bounds": [-1, 1]},
                "é": {"type": "category", "categories": ["x", "ÿ", "中文", "a b"]},
                "Alpha": {"type": "int", "bounds": [-1000, 1000]},
                "b": {"type": "int", "bounds": [-(10**15), 10**15]},
                "mid": {"type": "float", "bounds": [0, 10]},
            },
            "queries": [{"name": "c", "statistic": "count", "mechanism": "laplace", "epsilon": 1.0}],
        }
    )
    key, ids_key = bound_key(plan, dpdesk_home), id_key(plan, dpdesk_home)
    assert key is not None and ids_key is not None and plan.columns == SPECS
    _table, rows = make_table(7, ids_key)
    kept = sb.keep_smallest(spark.createDataFrame(rows[:50], SCHEMA), plan.columns, 2, key, ids_key)
    text = kept._jdf.queryExecution().toString()
    assert len(kept.collect()) > 0
    assert str(signed(int(key.word(0)))) in text and str(signed(int(id_word_keys(ids_key)[0]))) in text

    def forms(secret: bytes) -> set[str]:
        """The secret's hex, and every 8-byte piece of it as a decimal (signed, unsigned, either byte order)."""
        out = {secret.hex(), secret.hex().upper()}
        for i in range(len(secret) - 7):
            for order in ("little", "big"):
                v = int.from_bytes(secret[i : i + 8], order)  # type: ignore[arg-type]
                out |= {str(v), str(signed(v))}
        return out

    secret = home_secret(dpdesk_home)
    hidden = forms(secret) | forms(ids_key) | forms(key.raw[32:])
    if secret.isascii():
        hidden.add(secret.decode("ascii"))
    assert [f for f in hidden if f in text] == []
