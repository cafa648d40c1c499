"""Contribution bounding by a keyed hash (dpdesk/core/dp/bounding.py): the hash as specified, a person's kept rows
a function of that person's rows alone (by brute force over small tables), the key derived from the home's secret,
and a choice as fair as a random one."""

from __future__ import annotations

import hashlib
import itertools
import struct
from pathlib import Path

import numpy as np
import pytest

from dpdesk.core.dp.aggregates import bound_rows_per_person
from dpdesk.core.dp.bounding import BoundKey, derive_key, row_hashes
from dpdesk.core.ledger.contents import home_secret
from dpdesk.core.loading import Column, Table
from dpdesk.core.model.spec import ColumnSpec
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release.steps import bound_key

M64 = (1 << 64) - 1
X = ColumnSpec("x", "float", (-7.0, 3.0))
N = ColumnSpec("n", "int", (0, 9))
G = ColumnSpec("g", "category", categories=("a", "b", "c"))


def ref_fmix(x: int) -> int:
    """MurmurHash3's fmix64, in Python integers (the specification's words, independent of the numpy code)."""
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    return x ^ (x >> 33)


def ref_hash(secret: bytes, id_words: list[int], cells: dict[str, tuple[str, object]]) -> int:
    """The bounding hash of one row, written from the module's docstring alone: ``cells`` maps a column name to
    (type, value), None for missing."""
    raw = hashlib.blake2b(b"bounding", key=secret, person=b"dpdesk-bound-v1", digest_size=64).digest()
    k = [int.from_bytes(raw[8 * i : 8 * i + 8], "little") for i in range(8)]

    def tagged(data: bytes, person: bytes) -> int:
        return int.from_bytes(hashlib.blake2b(data, key=raw, person=person, digest_size=8).digest(), "little")

    h = k[0]
    for i, u in enumerate(id_words):
        h = ref_fmix(h ^ ref_fmix(u ^ k[1] ^ i))
    for name in sorted(cells, key=lambda c: c.encode("utf-8")):
        kind, value = cells[name]
        if value is None:
            w = k[2]
        elif kind == "int":
            w = int(value) & M64  # type: ignore[call-overload]
        elif kind == "float":
            w = struct.unpack("<Q", struct.pack("<d", float(value) + 0.0))[0]  # type: ignore[arg-type]
        else:
            w = tagged(str(value).encode("utf-8"), b"dpdesk-bcat-v1")
        h = ref_fmix(h ^ ref_fmix(w ^ tagged(name.encode("utf-8"), b"dpdesk-bcol-v1")))
    return ref_fmix(h ^ k[3])


def table_of(rows: list[tuple[float, int | None, int, int]]) -> Table:
    """Rows of (x, n, g code, person): x NaN when missing, n None when missing, g -1 when missing."""
    xs = np.asarray([r[0] for r in rows], dtype=np.float64)
    ns = np.asarray([0 if r[1] is None else r[1] for r in rows], dtype=np.int8)
    miss = np.asarray([r[1] is None for r in rows], dtype=bool)
    gs = np.asarray([r[2] for r in rows], dtype=np.int16)
    ids = np.asarray([[r[3], 1000 + r[3]] for r in rows], dtype=np.uint64).reshape(len(rows), 2)
    cols = {"x": Column(X, xs), "n": Column(N, ns, miss if miss.any() else None), "g": Column(G, gs)}
    return Table("t", "", len(rows), cols, ids, np.asarray([r[3] == 0 for r in rows], dtype=bool))


def test_the_bounding_hash_is_the_specified_function() -> None:
    """numpy's hash of every row equals the specification's, computed in Python integers: ints as two's
    complement, floats as their binary64 bits (-0 as +0), categories as their UTF-8 bytes, missing values as
    k2, columns in the order of their names."""
    secret = b"a home's secret"
    rows = [
        (1.5, 3, 0, 7),
        (-0.0, None, 2, 7),
        (float("nan"), 9, -1, 8),
        (float("inf"), 0, 1, 9),
        (-7.25, 4, 1, 2**40),
    ]
    got = row_hashes(table_of(rows), derive_key(secret))
    for i, (x, n, g, p) in enumerate(rows):
        cells: dict[str, tuple[str, object]] = {
            "x": ("float", None if np.isnan(x) else x),
            "n": ("int", n),
            "g": ("category", None if g < 0 else G.categories[g]),  # type: ignore[index]
        }
        assert int(got[i]) == ref_hash(secret, [p, 1000 + p], cells), f"row {i}"


def test_a_category_hashes_as_its_text_not_its_place_in_the_list() -> None:
    """The same value under a plan that lists the categories in another order keeps the same hash."""
    key = derive_key(b"s")
    other = ColumnSpec("g", "category", categories=("c", "a", "b"))
    one = table_of([(1.0, 1, 0, 5)])  # "a"
    two = table_of([(1.0, 1, 1, 5)])
    two.columns["g"] = Column(other, np.asarray([1], dtype=np.int16))  # "a" again
    assert row_hashes(one, key)[0] == row_hashes(two, key)[0]


# ----------------------------------------------------------------------------- brute force: the sensitivity

#: the tokens a row is made of: x, n, g
TOKENS = [(1.0, 2, 0), (1.0, 2, 1), (-7.0, None, 2), (float("nan"), 9, -1), (3.0, 2, 0)]


def people(
    n_people: int, sizes: tuple[int, ...], start: int
) -> list[list[tuple[float, int | None, int, int]]]:
    """``n_people`` people (ids from ``start``), person j with sizes[j] rows drawn in turn from the tokens."""
    out = []
    t = start
    for j in range(n_people):
        rows = []
        for _r in range(sizes[j]):
            x, n, g = TOKENS[t % len(TOKENS)]
            rows.append((x, n, g, start + j))
            t += 3
        out.append(rows)
    return out


@pytest.mark.parametrize(
    "k", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)]
)
def test_adding_or_removing_a_person_changes_at_most_k_kept_rows_and_no_one_elses(k: int) -> None:
    """Brute force over small tables: bases of two people with 0-5 rows each (and rows without an id), a person
    of 1-6 rows added at every interleaving position pattern; the others' kept rows are the same rows, the new
    person's kept rows number min(rows, k), and a shuffle of the table keeps the same rows (the choice does not
    depend on where a person's rows are, so engines that read rows in another order agree)."""
    key = derive_key(b"brute force")
    rng = np.random.default_rng(5)  # test only: interleavings and shuffles
    checked = 0
    for sizes in itertools.product(range(6), repeat=2):
        base = [r for p in people(2, sizes, 1) for r in p] + [(0.5, 1, 1, 0)]  # id 0: an empty id
        for added in range(1, 7):
            (person,) = people(1, (added,), 50 + added)
            for _trial in range(3):
                table_rows = list(base)
                for r in person:  # interleaved at random places
                    table_rows.insert(int(rng.integers(0, len(table_rows) + 1)), r)
                with_p = bound_rows_per_person(table_of(table_rows), k, key)
                without = bound_rows_per_person(table_of(base), k, key)
                kept_with = [r for r, m in zip(table_rows, with_p, strict=True) if m]
                kept_without = [r for r, m in zip(base, without, strict=True) if m]
                others = [r for r in kept_with if r[3] != person[0][3]]
                assert sorted(map(repr, others)) == sorted(map(repr, kept_without))
                assert len(kept_with) - len(kept_without) == min(added, k) <= k
                assert all(r[3] != 0 for r in kept_with)  # no row without an id
                order = rng.permutation(len(table_rows))
                shuffled = [table_rows[i] for i in order]
                kept_shuffled = [
                    r
                    for r, m in zip(shuffled, bound_rows_per_person(table_of(shuffled), k, key), strict=True)
                    if m
                ]
                assert sorted(map(repr, kept_shuffled)) == sorted(map(repr, kept_with))
                checked += 1
    assert checked == 36 * 6 * 3


# ----------------------------------------------------------------------------- the key


def test_the_release_key_is_derived_from_the_homes_identity_secret(tmp_path: Path) -> None:
    """A release's key is BLAKE2b of the home's identity secret: the same home, the same key (and the same rows);
    another home, another key and other rows kept (equal masks under two independent keys: probability below
    2^-100 on 400 people with 2 distinct rows each); no key without an id column."""
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1.0},
            "privacy_unit": {"neighbouring": "add_remove", "id_column": "pid", "max_rows_per_person": 1},
            "columns": {"x": {"type": "float", "bounds": [-7, 3]}},
            "queries": [{"name": "c", "statistic": "count", "mechanism": "laplace", "epsilon": 1.0}],
        }
    )
    one, two = tmp_path / "one", tmp_path / "two"
    key = bound_key(plan, one)
    assert key is not None and key == derive_key(home_secret(one)) == bound_key(plan, one)
    other = bound_key(plan, two)
    assert other is not None and other != key
    rows = [(float(i % 7) - 3.0, 1, 0, 1 + i // 2) for i in range(800)]
    table = table_of(rows)
    assert (bound_rows_per_person(table, 1, key) != bound_rows_per_person(table, 1, other)).any()
    assert derive_key(b"x") != derive_key(b"y")
    no_id = parse_plan({**plan.to_dict(), "privacy_unit": {"neighbouring": "add_remove"}})
    assert bound_key(no_id, one) is None
    assert repr(key) == "BoundKey(...)"  # never its bytes in a message or a traceback


def test_a_key_has_64_bytes() -> None:
    with pytest.raises(ValueError, match="64 bytes"):
        BoundKey(b"short")


# ----------------------------------------------------------------------------- as fair as a random choice


@pytest.mark.statistical
def test_each_of_a_persons_rows_is_kept_about_equally_often() -> None:
    """4,000 people, each with one row of category a and one of b (other values equal), k = 1: the hash includes
    the id, so each person's choice is its own coin and about half keep a. A hash of the values alone would keep
    the same category for everyone (4,000 or 0). The count is Binomial(4000, 1/2) under a fair choice: outside
    2000 ± 200 (6.3 standard deviations) with probability below 1e-9 (the false-failure rate)."""
    n = 4000
    rng = np.random.default_rng()  # test only: ids as the loader's hashes are, random
    ids = rng.integers(1, 2**63, size=n, dtype=np.uint64)
    rows = [(1.0, 1, g, p) for p in range(1, n + 1) for g in (0, 1)]
    table = table_of(rows)
    assert table.ids is not None
    table.ids[:, 0] = np.repeat(ids, 2)
    keep = bound_rows_per_person(table, 1, derive_key(rng.bytes(32)))
    kept_a = int(keep[0::2].sum())
    assert int(keep.sum()) == n
    assert abs(kept_a - n // 2) <= 200, kept_a
