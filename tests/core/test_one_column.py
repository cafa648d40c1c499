"""Issue 13, item 3 (audit gap 1): a table that differs from a known dataset's table in exactly ONE column (dropped,
added, renamed, or its values edited) is recognised as a near-copy of it by its column sketches; two columns
changed is not (the documented limit); unrelated tables of the same schema are not flagged; the public-file check
uses the same recognition, judging resemblance by sketches only where the file's rows nearly identify it.

Deterministic unless marked: the sample (2,000 rows) has every projection distinct, so a one-column change leaves
the projections' multisets equal (exact keys) or within one row (shares near 100%, far above 50% whatever the
secret); unrelated tables share no row with a continuous column (shares 0), and their coarse projections are never
compared by sketch (not identifying: 24 distinct values in 2,000 rows).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dpdesk.core.common.errors import UsageError
from dpdesk.core.identity.recognition import resolve
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.loading.identity import (
    COLUMN_SKETCH_K,
    Sketch,
    content_identity,
    distinct_estimate,
    identifying,
)
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "census_sample.csv"


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


def changed(rows: list[list[str]], how: str) -> list[list[str]]:
    """The sample's rows with one column (``weight``, which the sample plan never reads) changed, or more."""
    head, body = rows[0], rows[1:]
    w = head.index("weight")
    if how == "dropped":
        return [r[:w] + r[w + 1 :] for r in rows]
    if how == "renamed":
        return [[*head[:w], "a_weight", *head[w + 1 :]], *body]  # another place in the name order
    if how == "edited":
        return [head, *([*r[:w], f"{float(r[w]) * 1.1:.4f}", *r[w + 1 :]] for r in body)]
    if how == "added":
        return [[*head, "row_id"], *([*r, str(i)] for i, r in enumerate(body))]
    if how == "dropped, a row removed":
        return [r[:w] + r[w + 1 :] for r in rows[:-1]]
    if how == "edited, a row added":
        return [
            *changed(rows, "edited"),
            ["33", "female", "12", "arts", "40", "2000.5", "west", "state_01", "1.5"],
        ]
    if how == "two columns dropped":
        v = head.index("wage")
        return [[c for i, c in enumerate(r) if i not in (w, v)] for r in rows]
    if how == "two edited":
        v = head.index("wage")
        return [head] + [
            [f"{float(c) + 0.01:.2f}" if i in (v, w) else c for i, c in enumerate(r)] for r in body
        ]
    if how == "one dropped, one edited":
        v = head.index("wage")
        return [r[:w] for r in rows[:1]] + [
            [f"{float(c) + 0.01:.2f}" if i == v else c for i, c in enumerate(r[:w])] for r in body
        ]
    raise AssertionError(how)


@pytest.fixture
def known(tmp_path: Path, dpdesk_home: Path) -> str:
    """The sample, known to dpdesk (given its public id as a first release does)."""
    first = resolve(dpdesk_home, SAMPLE)
    ledger = Ledger.for_dataset(dpdesk_home, first.sha256)
    ledger.ensure_id()
    assert ledger.dataset is not None
    return ledger.dataset


ONE_COLUMN = [
    ("dropped", ("weight",)),
    ("renamed", ("weight", "a_weight")),
    ("edited", ("weight",)),
    ("added", ("row_id",)),
    ("dropped, a row removed", ("weight",)),
    ("edited, a row added", ("weight",)),
]


@pytest.mark.parametrize(("how", "left_out"), ONE_COLUMN, ids=[h for h, _c in ONE_COLUMN])
def test_one_column_changed_is_a_near_copy(
    tmp_path: Path, dpdesk_home: Path, known: str, how: str, left_out: tuple[str, ...]
) -> None:
    """On main each of these was a new table resembling nothing: a fresh budget."""
    copy = _write(tmp_path / "copy.csv", changed(_rows(SAMPLE), how))
    r = resolve(dpdesk_home, copy)
    assert r.how == "new" and r.dataset is None
    assert [n.dataset for n in r.resembles] == [known], how
    near = r.resembles[0]
    assert near.changed == left_out
    assert min(near.contained, near.found) > 0.99  # one row in 2,000 at most, sampled or not


@pytest.mark.parametrize("how", ["two edited"])
def test_two_columns_changed_is_a_new_table(tmp_path: Path, dpdesk_home: Path, known: str, how: str) -> None:
    """The documented limit: two columns edited is not recognised (two dropped, or one dropped and one edited, is
    recognised by its columns' values since issue 24: ``tests/cli/test_projection_rename.py``)."""
    copy = _write(tmp_path / "copy.csv", changed(_rows(SAMPLE), how))
    r = resolve(dpdesk_home, copy)
    assert (r.how, r.resembles) == ("new", ())


def _same_schema(path: Path, seed: int, n: int = 2000) -> Path:
    """Three categorical columns (24 combinations) and one continuous column, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    rows = [["a", "b", "c", "x"]]
    for _ in range(n):
        rows.append(
            [
                str(rng.choice(["p", "q", "r"])),
                str(rng.choice(["no", "yes"])),
                str(rng.choice(["c0", "c1", "c2", "c3"])),
                f"{rng.normal(40, 10):.6f}",
            ]
        )
    return _write(path, rows)


def test_unrelated_tables_of_the_same_schema_are_not_flagged(tmp_path: Path, dpdesk_home: Path) -> None:
    """Left out of both, the continuous column leaves 24 distinct rows in 2,000: each table holds all of them, so
    their sketches would overlap 100%; they are not identifying and only their exact keys are compared. Every other
    projection keeps the continuous column and shares no row (a 64-bit collision aside)."""
    first = resolve(dpdesk_home, _same_schema(tmp_path / "k.csv", 1))
    Ledger.for_dataset(dpdesk_home, first.sha256).ensure_id()
    other = resolve(dpdesk_home, _same_schema(tmp_path / "t.csv", 2))
    assert (other.how, other.resembles) == ("new", ())
    # but the same table with its continuous column edited is a near-copy (the exact key of the other columns)
    rows = _rows(tmp_path / "k.csv")
    edited = [rows[0], *([*r[:3], f"{float(r[3]) + 1:.6f}"] for r in rows[1:])]
    near = resolve(dpdesk_home, _write(tmp_path / "edited.csv", edited))
    assert [n.changed for n in near.resembles] == [("x",)]


def test_identifying_is_judged_by_the_distinct_count(tmp_path: Path) -> None:
    """A projection sketch is kept only where its distinct values nearly number the rows."""
    secret = bytes(range(32))
    ident = content_identity(_same_schema(tmp_path / "t.csv", 3), secret)
    assert ident.columns is not None
    assert ident.columns.left_out["x"].sketch is None  # 24 distinct rows in 2,000
    assert all(ident.columns.left_out[c].sketch is not None for c in ("a", "b", "c"))
    assert ident.columns.whole.sketch is not None
    complete = Sketch(10, tuple(range(1, 9)), 256)
    assert distinct_estimate(complete) == 8 and identifying(complete)  # 8 of 10 rows
    assert not identifying(Sketch(10, tuple(range(1, 8)), 256)) and not identifying(Sketch(0, (), 256))
    # an incomplete sketch: (k - 1) / u_k; its largest hash at a share 256 / 2,000 of 2^64 -> about 2,000 distinct
    full = Sketch(2000, tuple(int(i * 2**64 * 0.128 / 256) for i in range(1, 257)), 256)
    assert abs(distinct_estimate(full) - 1992) < 1 and identifying(full)
    assert not identifying(Sketch(2600, full.hashes, 256))
    assert len(ident.columns.whole.sketch.hashes) == COLUMN_SKETCH_K


def test_column_sketches_do_not_depend_on_how_a_column_is_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cell hashes come the same whether a column's cells are encoded one by one or once per distinct cell
    (and mapped back), and whatever the batches."""
    from dpdesk.core.loading import csvfile
    from dpdesk.core.loading import identity as ident

    secret = bytes(range(32))
    path = _write(
        tmp_path / "t.csv", [["k", "v", "w"], *([str(i % 7), f"{i / 3:.5f}", ""] for i in range(3000))]
    )
    out = []
    for share, block in ((0.0, 8 << 20), (1.0, 8 << 20), (0.5, 2048)):
        monkeypatch.setattr(ident, "DISTINCT_SHARE", share)
        monkeypatch.setattr(csvfile, "BLOCK_BYTES", block)
        columns = content_identity(path, secret).columns
        assert columns is not None
        out.append(json.dumps(columns.to_json(), sort_keys=True))
    assert out[0] == out[1] == out[2]


def test_a_known_dataset_recorded_before_column_sketches_gets_them_when_its_file_is_opened(
    tmp_path: Path, dpdesk_home: Path, known: str
) -> None:
    """Records without column sketches keep working; opening the known file computes them once, after which a
    copy with a column dropped is recognised."""
    folder = dpdesk_home / "identity"
    for p in [*(folder / "files").glob("*.json"), folder / "datasets" / f"{known}.json"]:
        raw = json.loads(p.read_text(encoding="utf-8"))
        raw.pop("columns")
        p.write_text(json.dumps(raw), encoding="utf-8")
    copy = _write(tmp_path / "copy.csv", changed(_rows(SAMPLE), "dropped"))
    assert resolve(dpdesk_home, copy).resembles == ()  # nothing to compare with yet (an older home)
    assert resolve(dpdesk_home, SAMPLE).how == "file"  # the known file, opened: its column sketches computed
    from dpdesk.core.loading import file_sha256

    cached = json.loads((folder / "files" / f"{file_sha256(SAMPLE)}.v2.json").read_text(encoding="utf-8"))
    assert cached["columns"] is not None and cached["columns"]["scheme"] == 2
    again = _write(tmp_path / "again.csv", changed(_rows(SAMPLE), "dropped")[:-1])  # another file, not cached
    assert [n.dataset for n in resolve(dpdesk_home, again).resembles] == [known]


def test_the_content_is_refused_when_the_bytes_change_while_read(tmp_path: Path, dpdesk_home: Path) -> None:
    """identity_of compares the SHA-256 of the bytes it read with the one the caller hashed."""
    from dpdesk.core.identity.recognition import identity_of
    from dpdesk.core.loading import file_sha256

    a = _write(tmp_path / "a.csv", [["x"], ["1"]])
    sha = file_sha256(a)
    _write(a, [["x"], ["2"]])
    with pytest.raises(UsageError, match="changed while it was read"):
        identity_of(dpdesk_home, a, sha256=sha)
    assert identity_of(dpdesk_home, a, sha256=file_sha256(a)).sketch.rows == 1


def test_most_of_an_identifying_private_table_is_not_a_public_file(
    tmp_path: Path, dpdesk_home: Path, known: str
) -> None:
    """95% of the sample's rows (each row its own) is refused, in words that are true: most of its rows occur
    in the dataset. A re-saved copy with a column dropped is refused as holding its rows."""
    from dpdesk.core.plan.reader import load_plan
    from dpdesk.core.preview.simulate import NotPublic, public_table

    plan = load_plan(SAMPLES / "cps_wages_plan.json")
    rows = _rows(SAMPLE)
    most = _write(tmp_path / "most.csv", rows[: int(len(rows) * 0.95)])
    with pytest.raises(NotPublic, match=f"most of its rows also occur in dataset {known}"):
        public_table(plan, most, dpdesk_home)
    dropped = _write(tmp_path / "dropped.csv", changed(rows, "dropped"))
    with pytest.raises(NotPublic, match=f"it holds the rows of dataset {known}"):
        public_table(plan, dropped, dpdesk_home)
