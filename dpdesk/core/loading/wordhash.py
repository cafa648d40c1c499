"""The keyed word hash of byte strings, in numpy: the building block of the content identities
(:mod:`dpdesk.core.loading.identity`, :mod:`dpdesk.core.loading.typed_identity`) and of the person ids' hashes
(:func:`dpdesk.core.loading.columns.id_hashes`), kept apart from the readers so that every reader can use it.

A string is cut into little-endian 64-bit words (zero-padded, at least one word); per lane
h = fmix(sum_j fmix(w_j xor (j * m + a)) xor fmix(len xor b)) with (a, m, b) the lane's keys, ``fmix`` being
MurmurHash3's 64-bit finaliser (a bijection). Two strings differing in one word never collide.
"""

from __future__ import annotations

import numpy as np

#: Rows whose words are hashed at a time (their temporaries stay in the CPU cache).
HASH_CHUNK_ROWS = 8192

_U64 = np.uint64
_FMIX1 = _U64(0xFF51AFD7ED558CCD)
_FMIX2 = _U64(0xC4CEB9FE1A85EC53)


def fmix(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, in place (a bijection of uint64)."""
    x ^= x >> _U64(33)
    x *= _FMIX1
    x ^= x >> _U64(33)
    x *= _FMIX2
    x ^= x >> _U64(33)
    return x


def fmix_into(x: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`fmix` with ``tmp`` (as long as ``x``) for the shifted copies: no temporaries."""
    for mult in (_FMIX1, _FMIX2, None):
        np.right_shift(x, _U64(33), out=tmp)
        x ^= tmp
        if mult is not None:
            x *= mult
    return x


def hash_padded(data: bytes, lengths: np.ndarray, keys: np.ndarray, lanes: int = 2) -> tuple[np.ndarray, ...]:
    """:func:`hash_rows` of rows already zero-padded in ``data``: row i takes ``lengths[i] // 8 + 1`` words.

    The same function, computed without scattering bytes into a padded copy, a chunk of rows at a time (only
    the first lane when ``lanes`` is 1).
    """
    n = len(lengths)
    lens = lengths.astype(np.int64)
    words_per_row = lens // 8 + 1
    word_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(words_per_row, out=word_start[1:])
    if len(data) != 8 * int(word_start[-1]):
        raise ValueError("the rows are not padded to their words")
    words = np.frombuffer(data, dtype="<u8")
    positions = np.arange(int(words_per_row.max()) if n else 0, dtype=_U64)
    out = []
    for a, m, b in ((keys[0], keys[2], keys[1]), (keys[4], keys[6], keys[5]))[:lanes]:
        lane_keys = positions * m
        lane_keys += a
        acc = np.empty(n, dtype=_U64)
        for r0 in range(0, n, HASH_CHUNK_ROWS):
            r1 = min(n, r0 + HASH_CHUNK_ROWS)
            w0, w1 = int(word_start[r0]), int(word_start[r1])
            starts = word_start[r0:r1] - w0
            pos = np.arange(w1 - w0, dtype=np.int64)
            pos -= np.repeat(starts, words_per_row[r0:r1])
            v = lane_keys[pos]
            v ^= words[w0:w1]
            acc[r0:r1] = np.add.reduceat(fmix_into(v, pos.view(_U64)), starts)
        acc ^= fmix(lens.astype(_U64) ^ b)
        out.append(fmix(acc))
    return tuple(out)
