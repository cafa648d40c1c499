"""The content identity (issue 13, item 3): the budget follows the table, not its bytes.

Re-saved copies of the same rows keep the key; any change of content changes it; the bottom-k sketch recognises
near-copies with stated error; files seen before are not read again; an unknown copy of a known table resolves
to that table's dataset.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import xlsxwriter  # type: ignore[import-untyped]  # no stubs; a test-only dependency

from dpdesk.core.identity.recognition import identify, resembles, resolve
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.loading import identity as ident_mod
from dpdesk.core.loading.identity import Sketch, content_identity, hash_rows, overlap, row_keys
from tests.conftest import SAMPLES

SECRET = bytes(range(32))
HEADER = ["city", "age", "wage", "note"]
ROWS: list[list[Any]] = [
    ["北京", 12, 1500.5, "a, quoted"],
    ["Zürich", 40, 0.1, ""],
    ["Lyon", 12, 1500.5, "a, quoted"],  # a duplicate value pattern, other city
    ["Lyon", 12, 1500.5, "a, quoted"],  # a duplicate row: counts
    ["São Paulo", 7, 2.25, "line"],
]


def write_csv(path: Path, header: list[str], rows: list[list[Any]], **kw: Any) -> Path:
    enc = kw.pop("encoding", "utf-8")
    buf = io.StringIO()
    csv.writer(buf, lineterminator=kw.pop("newline", "\n"), **kw).writerows([header, *rows])
    path.write_bytes(buf.getvalue().encode(enc))
    return path


def key(path: Path, secret: bytes = SECRET) -> str:
    return content_identity(path, secret).key


def test_resaved_copies_of_the_same_rows_have_the_same_key(tmp_path: Path) -> None:
    base = key(write_csv(tmp_path / "base.csv", HEADER, ROWS))
    text = (tmp_path / "base.csv").read_text(encoding="utf-8")
    copies = {
        "crlf.csv": text.replace("\n", "\r\n").encode("utf-8"),
        "bom.csv": codecs.BOM_UTF8 + text.encode("utf-8"),
        "trailing-blank-line.csv": (text + "\n").encode("utf-8"),
        "gb18030.csv": text.encode("gb18030"),
        "utf16.csv": text.encode("utf-16"),
        "semicolon.csv": text.replace(",", ";").replace('"a; quoted"', '"a, quoted"').encode("utf-8"),
    }
    for name, raw in copies.items():
        (tmp_path / name).write_bytes(raw)
        assert key(tmp_path / name) == base, name
    write_csv(tmp_path / "quoted.csv", HEADER, ROWS, quoting=csv.QUOTE_ALL)
    assert key(tmp_path / "quoted.csv") == base
    shuffled = ROWS[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != ROWS
    write_csv(tmp_path / "rows.csv", HEADER, shuffled)
    assert key(tmp_path / "rows.csv") == base
    order = [2, 0, 3, 1]
    write_csv(tmp_path / "cols.csv", [HEADER[i] for i in order], [[r[i] for i in order] for r in ROWS])
    assert key(tmp_path / "cols.csv") == base
    # numbers as numbers: 12 = 12.0 = +012 = 1.2e1, 0.1 = 0.10; padded cells and headers trimmed
    as_float = [
        [c, f"{a}.0" if i % 2 else f"+0{a}", f"{w:.2f}" if i else f"{w}0", f" {n} "]
        for i, (c, a, w, n) in enumerate(ROWS)
    ]
    as_float[1][1] = "4e1"
    write_csv(tmp_path / "floats.csv", [f" {h}" for h in HEADER], as_float)
    assert key(tmp_path / "floats.csv") == base
    # text compared after NFC: a decomposed ü is the same city
    nfd = [[str(r[0]).replace("ü", "u\u0308"), *r[1:]] for r in ROWS]
    write_csv(tmp_path / "nfd.csv", HEADER, nfd)
    assert key(tmp_path / "nfd.csv") == base
    # .xlsx (numbers as spreadsheet numbers) and Parquet (typed columns)
    wb = xlsxwriter.Workbook(str(tmp_path / "t.xlsx"))
    ws = wb.add_worksheet()
    for r, row in enumerate([HEADER, *shuffled]):
        for c, v in enumerate(row):
            if v != "":
                ws.write(r, c, v)
    wb.close()
    assert key(tmp_path / "t.xlsx") == base
    pl.DataFrame([dict(zip(HEADER, r, strict=True)) for r in ROWS]).write_parquet(tmp_path / "t.parquet")
    assert key(tmp_path / "t.parquet") == base


def test_any_change_of_content_changes_the_key(tmp_path: Path) -> None:
    base = key(write_csv(tmp_path / "base.csv", HEADER, ROWS))
    changed_cell = [r[:] for r in ROWS]
    changed_cell[2][3] = "a, quoted!"
    variants: dict[str, tuple[list[str], list[list[Any]]]] = {
        "cell": (HEADER, changed_cell),
        "number": (HEADER, [ROWS[0], [*ROWS[1][:2], 0.1000001, ""], *ROWS[2:]]),
        "added": (HEADER, [*ROWS, ["Oslo", 1, 2, "x"]]),
        "duplicate added": (HEADER, [*ROWS, ROWS[0]]),
        "removed": (HEADER, ROWS[:-1]),
        "renamed header": (["City", *HEADER[1:]], ROWS),
        "case": (HEADER, [["LYON" if r[0] == "Lyon" else r[0], *r[1:]] for r in ROWS]),
        "empty to zero": (HEADER, [[*r[:3], r[3] or "0"] for r in ROWS]),
        "cells swapped between columns": (HEADER, [[r[0], r[2], r[1], r[3]] for r in ROWS]),
    }
    keys = {base}
    for name, (header, rows) in variants.items():
        k = key(write_csv(tmp_path / f"{name}.csv", header, rows))
        assert k not in keys, name
        keys.add(k)
    # the key is under the home's secret: another secret, another key
    assert key(tmp_path / "base.csv", bytes(32)) != base


def test_big_integers_are_compared_exactly_and_fractions_by_value(tmp_path: Path) -> None:
    a = key(write_csv(tmp_path / "a.csv", ["id"], [["123456789012345678901"], ["0.5"]]))
    assert key(write_csv(tmp_path / "b.csv", ["id"], [["123456789012345678902"], ["0.50"]])) != a
    assert key(write_csv(tmp_path / "c.csv", ["id"], [["+0123456789012345678901"], ["5e-1"]])) == a
    # what decides a cell: finite numbers are numbers; inf and nan are text, "" is missing
    t = pl.DataFrame({"c": ["12", "12.0", "1.2e1", "-0", "0", " 0.1 ", "1e-1", "inf", "", None, "x"]})
    rows = ident_mod.canonical_rows(t, [0]).to_list()
    assert rows[:3] == ["3:i12"] * 3 and rows[3] == rows[4] == "2:i0"
    assert rows[5] == rows[6] == "4:f0.1"
    assert rows[7] == "4:tinf" and rows[8] == rows[9] == "-" and rows[10] == "2:tx"


def _reference_row_hash(row: bytes, keys: np.ndarray) -> tuple[int, int]:
    """The documented word hash in plain Python integers (an independent check of the numpy code)."""
    m64 = 2**64 - 1

    def fmix(x: int) -> int:
        x ^= x >> 33
        x = (x * 0xFF51AFD7ED558CCD) & m64
        x ^= x >> 33
        x = (x * 0xC4CEB9FE1A85EC53) & m64
        return x ^ (x >> 33)

    k = [int(v) for v in keys]
    padded = row + b"\0" * (8 - len(row) % 8)
    words = [int.from_bytes(padded[i : i + 8], "little") for i in range(0, len(padded), 8)]
    out = []
    for a, m, b in ((k[0], k[2], k[1]), (k[4], k[6], k[5])):
        acc = sum(fmix(w ^ ((j * m + a) & m64)) for j, w in enumerate(words)) & m64
        out.append(fmix(acc ^ fmix(len(row) ^ b)))
    return out[0], out[1]


def test_the_row_hash_is_the_documented_function() -> None:
    keys = row_keys(SECRET)
    rows = [b"", b"a", b"12345678", b"123456789", "北京,12".encode(), bytes(range(40))]
    lo, hi = hash_rows(b"".join(rows), np.array([len(r) for r in rows]), keys)
    for i, r in enumerate(rows):
        assert (int(lo[i]), int(hi[i])) == _reference_row_hash(r, keys)
    # a row differing in one word never collides: the steps are bijections
    one = [b"x" * 16, b"x" * 8 + b"y" + b"x" * 7]
    lo, _ = hash_rows(b"".join(one), np.array([16, 16]), keys)
    assert lo[0] != lo[1]


def _table(tmp_path: Path, name: str, rows: list[list[Any]]) -> Path:
    return write_csv(tmp_path / name, ["id", "x", "y"], rows)


def _rows(n: int, seed: int) -> list[list[Any]]:
    rng = random.Random(seed)
    return [[seed * 10**7 + i, rng.randint(0, 99), round(rng.random(), 6)] for i in range(n)]


@pytest.mark.statistical
def test_the_sketch_recognises_near_copies_and_not_others(tmp_path: Path) -> None:
    """One row added or removed; a filtered 90% subset; an unrelated table (k = 1024 over 20,000 rows).

    The 90% subset's share is a proportion over m = 1024 sampled rows drawn without replacement from a table
    with p = 0.9: Bernstein's inequality bounds P(|estimate - 0.9| >= 0.05) by 2 exp(-m 0.05^2 / (2 (p(1-p) +
    0.05/3))) < 2e-5 (each fresh home has a fresh secret, so the sample is random): the false-failure rate of
    this test. The other shares are exact here (an added row is never sampled as missing, a subset's rows are
    all in the whole) up to a 64-bit hash collision among the sampled rows (< 2^-40).
    """
    secret = os.urandom(32)
    rows = _rows(20_000, 1)
    known = content_identity(_table(tmp_path, "known.csv", rows), secret).sketch
    assert len(known.hashes) == 1024 and known.rows == 20_000

    def est(rs: list[list[Any]], name: str) -> tuple[float, float]:
        return overlap(known, content_identity(_table(tmp_path, name, rs), secret).sketch)

    contained, found = est([*rows, [-1, 0, 0.5]], "added.csv")
    assert contained == 1.0 and found >= 1 - 1 / 1000
    contained, found = est(rows[:-1], "removed.csv")
    assert found == 1.0 and contained >= 1 - 1 / 1000
    subset = [r for r in rows if r[1] < 90]  # a filter on a column: about 90% of the rows
    share = len(subset) / len(rows)
    contained, found = est(subset, "subset.csv")
    assert found == 1.0 and abs(contained - share) < 0.05
    contained, found = est(_rows(20_000, 2), "unrelated.csv")
    assert contained == 0.0 and found == 0.0
    small = Sketch(3, (1, 5, 9))  # complete sketches give exact shares
    assert overlap(small, Sketch(2, (5, 9))) == (2 / 3, 1.0)


def test_resolve_by_bytes_then_content_then_new_with_resemblance(tmp_path: Path, dpdesk_home: Path) -> None:
    data = _table(tmp_path, "data.csv", _rows(3000, 5))
    first = resolve(dpdesk_home, data)
    assert first.how == "new" and first.dataset is None and first.resembles == ()
    ledger = Ledger.for_dataset(dpdesk_home, first.sha256)
    ledger.ensure_id()  # the first release gives the dataset its public id
    assert ledger.dataset is not None
    # a CRLF copy: unknown bytes, known content -> the same dataset, its SHA-256 linked
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(data.read_bytes().replace(b"\n", b"\r\n"))
    again = resolve(dpdesk_home, crlf)
    assert (again.how, again.dataset) == ("content", ledger.dataset)
    assert Ledger.for_dataset(dpdesk_home, again.sha256).dataset == ledger.dataset
    assert resolve(dpdesk_home, crlf).how == "file"
    # one row more: a new table that resembles the dataset
    plus = _table(tmp_path, "plus.csv", [*_rows(3000, 5), [0, 0, 0.0]])
    near = resolve(dpdesk_home, plus)
    assert near.how == "new" and near.dataset is None
    assert [r.dataset for r in near.resembles] == [ledger.dataset]
    assert near.resembles[0].contained == 1.0 and near.resembles[0].found > 0.99
    assert resolve(dpdesk_home, _table(tmp_path, "other.csv", _rows(3000, 6))).resembles == ()
    assert resembles(dpdesk_home, content_identity(plus, os.urandom(32)).sketch) == []  # another secret


def test_a_dataset_keyed_by_its_bytes_gets_its_content_recorded(tmp_path: Path, dpdesk_home: Path) -> None:
    """A ledger made before content identities (keyed by the file's SHA-256 only) keeps its budget for copies."""
    data = _table(tmp_path, "old.csv", _rows(500, 7))
    from dpdesk.core.loading import file_sha256

    old = Ledger.for_dataset(dpdesk_home, file_sha256(data))
    old.ensure_id()
    shutil.rmtree(dpdesk_home / "identity", ignore_errors=True)  # as if made before content identities
    copy = tmp_path / "copy.csv"
    copy.write_bytes(codecs.BOM_UTF8 + data.read_bytes())
    assert resolve(dpdesk_home, data).how == "file"  # opening the known file records its content
    assert resolve(dpdesk_home, copy).dataset == old.dataset


def test_a_file_seen_before_is_not_read_again(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _table(tmp_path, "data.csv", _rows(200, 8))
    first = resolve(dpdesk_home, data)
    calls: list[Path] = []
    from dpdesk.core.loading import typed_identity

    real = typed_identity.content_identity2  # scheme 2's, the one a home with no older datasets computes

    def counting(path: Any, *a: Any, **kw: Any) -> Any:
        calls.append(Path(path))
        return real(path, *a, **kw)

    monkeypatch.setattr("dpdesk.core.identity.recognition.content_identity2", counting)
    monkeypatch.setattr("dpdesk.core.identity.recognition.content_identity", None)  # scheme 1's: never called
    again = identify(dpdesk_home, data, sha256=first.sha256)
    assert calls == [] and again == identify(dpdesk_home, data)  # the second computes: no SHA-256 given
    assert calls == [data]
    resolve(dpdesk_home, data)
    assert calls == [data]


def test_nothing_in_the_home_is_published_and_the_sample_is_identified(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    sample = SAMPLES / "census_sample.csv"
    r = resolve(dpdesk_home, sample)
    content, sketch = identify(dpdesk_home, sample, sha256=r.sha256)
    assert sketch.rows == 2000 and len(content) == 64
    secret = (dpdesk_home / "identity" / "secret").stat()
    assert secret.st_mode & 0o077 == 0  # the owner's only


def test_a_cluster_tables_kept_identity_is_used_only_under_the_secret_it_was_keyed_with(
    tmp_path: Path,
) -> None:
    """The hint a release of a table only a cluster reads leaves in a team home names the secret its identity was
    keyed with (a tag, not the secret): looked up under another team's secret (the home moved to another team
    ledger) or without a tag (a home's own hint), it is not that team's identity, never recorded there."""
    from dpdesk.core.ledger.contents import (
        cluster_table_identity,
        cluster_table_key,
        remember_cluster_table,
        remember_file,
        secret_tag,
    )
    from dpdesk.core.loading.typed_identity import content_identity2

    data = tmp_path / "t.csv"
    data.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(200)), encoding="utf-8")
    ident = content_identity2(data, SECRET)
    other = bytes(range(1, 33))
    assert secret_tag(SECRET) != secret_tag(other) and SECRET.hex()[:16] not in secret_tag(SECRET)
    home = tmp_path / "home"
    remember_file(home, ident)
    remember_cluster_table(home, "table:people", ident.sha256, SECRET)
    assert cluster_table_key(home, "table:people", team=True) == ident.sha256
    assert cluster_table_key(home, "table:people") is None  # a team's hint is never the home's own
    kept = cluster_table_identity(home, "table:people", SECRET)
    assert kept is not None and kept.key == ident.key
    assert cluster_table_identity(home, "table:people", other) is None
    assert cluster_table_identity(home, "table:others", SECRET) is None
    own = "0" * 64
    remember_cluster_table(home, "table:people", own)  # a home's own hint: no team's secret named, kept apart
    assert cluster_table_key(home, "table:people") == own
    assert cluster_table_key(home, "table:people", team=True) == ident.sha256
    remember_cluster_table(home, "table:others", ident.sha256)
    assert cluster_table_identity(home, "table:others", SECRET) is None


@pytest.mark.parametrize(
    ("columns", "kept"),
    [
        (150, 256),
        (300, 128),
        (600, 64),
        pytest.param(1200, 32, marks=pytest.mark.slow),
        pytest.param(3000, 0, marks=pytest.mark.slow),
        pytest.param(12_000, None, marks=pytest.mark.slow),
    ],
)
def test_a_tables_team_sketches_always_fit_the_teams_limit_and_keep_what_fits(
    columns: int, kept: int | None
) -> None:
    """The team keeps at most 1 MiB of a table's sketches (a larger text is dropped whole by the client): the
    column sketches are kept whole while they fit, else thinned to each projection's smallest 128, 64 or 32 hashes
    (valid bottom-k sketches, compared with a full one by ``overlap``), else their keys alone, else the content
    sketch alone; never nothing. Tables of made-up hashes, 150 to 12,000 columns."""
    import json

    from dpdesk.core.identity.recognition import team_sketch_text
    from dpdesk.core.ledger.pgschema import MAX_SKETCH_BYTES
    from dpdesk.core.loading.identity import ColumnSketches, ContentIdentity, Projection, overlap

    rng = random.Random(columns)

    def sketch(k: int) -> Sketch:
        return Sketch(5000, tuple(sorted(rng.sample(range(1, 2**63), k))), k, True, 2)

    names = tuple(sorted(f"c{j:05d}" for j in range(columns)))
    cols = ColumnSketches(
        names,
        Projection("a" * 64, sketch(256)),
        {c: Projection(f"{j:064x}", sketch(256)) for j, c in enumerate(names)},
        scheme=2,
    )
    ident = ContentIdentity("0" * 64, "b" * 64, sketch(1024), cols)
    text = team_sketch_text(ident)
    assert len(text.encode("utf-8")) <= MAX_SKETCH_BYTES
    raw = json.loads(text)
    assert (
        Sketch.from_json(raw["contents"]["b" * 64]).hashes == ident.sketch.hashes
    )  # the content sketch, whole
    if kept is None:
        assert raw["columns"] == {}
        return
    team = ColumnSketches.from_json(raw["columns"]["b" * 64])
    assert set(team.left_out) == set(names) and all(
        p.key == cols.left_out[c].key for c, p in team.left_out.items()
    )
    for c, p in team.left_out.items():
        if kept == 0:
            assert p.sketch is None
            continue
        assert p.sketch is not None and p.sketch.k == kept and not p.sketch.complete
        full = cols.left_out[c].sketch
        assert full is not None and p.sketch.hashes == full.hashes[:kept]  # its smallest hashes
        assert overlap(p.sketch, full) == (1.0, 1.0)  # the same rows, as a fuller sketch of them finds
