"""Contribution bounding by a keyed hash: which k rows of a person a release keeps, the same in every engine.

With a person id column, a release keeps at most k rows of each person (the unit of privacy's
``max_rows_per_person``). The rows kept are the k with the smallest *bounding hashes*, a keyed 64-bit hash of the
person's id and of the row's own values, so that every aggregation engine (in memory, streamed through partition
files, or any later one) keeps the same rows of the same table and their exact aggregates agree bit for bit.

**The key.** :func:`derive_key` makes the :class:`BoundKey` from a secret with BLAKE2b (``person`` =
``dpdesk-bound-v1``, keyed by the secret, 64 bytes: eight little-endian 64-bit words ``k0 .. k7``). A release passes
its home's identity secret (:func:`dpdesk.core.ledger.contents.home_secret`, readable by its owner only, never
written anywhere else; see docs/bounding.md for why not a team's secret); previews on stand-in tables pass a random
one (:meth:`BoundKey.fresh`). Nothing derived from the key is written or shown.

**The hash of a row** (uint64 arithmetic modulo 2^64; ``fmix`` is MurmurHash3's 64-bit finaliser:
``x ^= x >> 33; x *= 0xff51afd7ed558ccd; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33``)::

    h = k0
    for each word u_i of the id (its 128-bit hash as two words):   h = fmix(h ^ fmix(u_i ^ k1 ^ i))
    for each declared column c, in the order of its name's UTF-8 bytes:
        w = the value's word (below), or k2 when the value is missing
        h = fmix(h ^ fmix(w ^ col(c)))
    hash = fmix(h ^ k3)

where ``col(c)`` is the first 8 bytes (little-endian) of BLAKE2b(UTF-8 name, key = the 64-byte key, person =
``dpdesk-bcol-v1``). A value's word is a fixed-width integer, never a text form of a number:

* an int column: the value as loaded (clamped to its bounds) as a 64-bit two's complement integer;
* a float column: the value's IEEE 754 binary64 bit pattern (−0 as +0; NaN is missing);
* a category column: the first 8 bytes (little-endian) of BLAKE2b(the category's UTF-8 bytes, key = the key,
  person = ``dpdesk-bcat-v1``), so that the word is the category's, not its position in the plan's list; a
  value outside the declared categories counts as missing, as in every statistic.

A person's rows are ranked by (hash, position in the table): the k first are kept; rows without an id are never
kept. Two rows of one person with equal hashes are the same values (but with probability about 2^-64 a pair), so
which of them is kept changes no aggregate.

**Sensitivity.** Which of a person's rows are kept is a function of that person's rows alone (the key is fixed
before the table is read and the rank compares only rows with the same id), so adding or removing one person
leaves every other person's kept rows as they were and changes at most k kept rows: the bound every statistic's
sensitivity is built on (tests/core/test_bounding.py checks it by brute force).

**The id's words.** Today the id's words are its 128-bit keyed hash from the loader
(:func:`dpdesk.core.loading.columns.id_exprs`, whose seeds are made per process): two different ids are never
merged in practice (about 2^-67 over the largest table), and every engine of one process keeps the same rows.
An engine in another process (a cluster's) reproduces the selection once the id's words are a stable keyed hash
of its UTF-8 bytes; the rank above takes them as given.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from dpdesk.core.loading import Table

_U64 = np.uint64
_FMIX1 = _U64(0xFF51AFD7ED558CCD)
_FMIX2 = _U64(0xC4CEB9FE1A85EC53)
_S33 = _U64(33)

#: BLAKE2b's ``person`` for the key, the column words and the category words (version 1 of the definition).
KEY_PERSON = b"dpdesk-bound-v1"
COLUMN_PERSON = b"dpdesk-bcol-v1"
CATEGORY_PERSON = b"dpdesk-bcat-v1"


@dataclass(frozen=True)
class BoundKey:
    """The key of the bounding hash (64 bytes, derived by :func:`derive_key`); secret, never written or shown."""

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != 64:
            raise ValueError(f"a bounding key has 64 bytes, not {len(self.raw)}")

    def __repr__(self) -> str:  # never shown, not even in a traceback
        return "BoundKey(...)"

    def word(self, i: int) -> np.uint64:
        """The key's i-th little-endian 64-bit word (k0 .. k7)."""
        return _U64(int.from_bytes(self.raw[8 * i : 8 * i + 8], "little"))

    def tagged(self, data: bytes, person: bytes) -> np.uint64:
        """The first 8 bytes (little-endian) of BLAKE2b(``data``, key = this key, ``person``)."""
        digest = hashlib.blake2b(data, key=self.raw, person=person, digest_size=8).digest()
        return _U64(int.from_bytes(digest, "little"))

    @staticmethod
    def fresh() -> BoundKey:
        """A random key (for previews on stand-in tables: nothing there needs to be reproduced)."""
        return derive_key(secrets.token_bytes(32))


def derive_key(secret: bytes) -> BoundKey:
    """The bounding key derived from a secret (the home's identity secret): BLAKE2b, ``person`` = :data:`KEY_PERSON`."""
    return BoundKey(hashlib.blake2b(b"bounding", key=secret, person=KEY_PERSON, digest_size=64).digest())


def fmix(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser (a bijection of uint64), in place on ``x`` and returned."""
    x ^= x >> _S33
    x *= _FMIX1
    x ^= x >> _S33
    x *= _FMIX2
    x ^= x >> _S33
    return x


def value_words(table: Table, name: str, key: BoundKey) -> np.ndarray:
    """The words of one declared column's values (see the module), a new uint64 array."""
    col = table.columns[name]
    spec, values = col.spec, col.values
    missing_word = key.word(2)
    if spec.type == "category":
        assert spec.categories is not None
        table_words = np.asarray(
            [key.tagged(c.encode("utf-8"), CATEGORY_PERSON) for c in spec.categories] + [missing_word],
            dtype=_U64,
        )
        codes = values.astype(np.int64)
        codes[(codes < 0) | (codes >= len(spec.categories))] = len(spec.categories)
        return table_words[codes]
    if spec.type == "float":
        v = values.astype(np.float64, copy=True)
        v += 0.0  # -0 becomes +0
        words = v.view(_U64)
        words[np.isnan(v)] = missing_word
        return words
    words = values.astype(np.int64).view(_U64)  # a new array: the two's complement of the value
    words[col.missing()] = missing_word
    return words


def row_hashes(table: Table, key: BoundKey) -> np.ndarray:
    """Every row's bounding hash (see the module), from its id's words and its declared columns' values."""
    assert table.ids is not None
    n = table.n_rows
    ids = table.ids.reshape(n, -1)
    h = np.full(n, key.word(0), dtype=_U64)
    for i in range(ids.shape[1]):
        u = ids[:, i].astype(_U64)  # a copy: fmix works in place
        u ^= key.word(1) ^ _U64(i)
        h ^= fmix(u)
        fmix(h)
    for name in sorted(table.columns, key=lambda c: c.encode("utf-8")):
        w = value_words(table, name, key)
        w ^= key.tagged(name.encode("utf-8"), COLUMN_PERSON)
        h ^= fmix(w)
        fmix(h)
    h ^= key.word(3)
    return fmix(h)


def keep_smallest(table: Table, k: int, key: BoundKey) -> np.ndarray:
    """The rows kept: of each id, the ``k`` with the smallest bounding hashes (ties: the earlier row); no row
    without an id. A boolean mask over the table's rows."""
    assert table.ids is not None and table.ids_missing is not None
    n = table.n_rows
    if n == 0:
        return np.zeros(0, dtype=bool)
    hashes = row_hashes(table, key)
    ids = table.ids.reshape(n, -1)
    # lexsort is stable: equal (id, hash) pairs stay in the table's order
    order = np.lexsort((hashes, *(ids[:, j] for j in reversed(range(ids.shape[1])))))
    del hashes
    sorted_ids = ids[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (sorted_ids[1:] != sorted_ids[:-1]).any(axis=1)
    del sorted_ids
    start_idx = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.arange(n) - start_idx
    keep = np.empty(n, dtype=bool)
    keep[order] = rank < k
    return cast(np.ndarray, keep & ~table.ids_missing)
