"""Attacker's pass over the synthetic fidelity estimate and ``dpdesk simulate --public`` (recognition.private_match):
a file offered as PUBLIC must not be the private table's rows under another shape, and an honest public file
must not be refused as one.

These tests FAIL on main (bb8a956); they are findings, not fixes.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dpdesk.core.common.errors import UsageError
from dpdesk.core.loading import file_sha256
from dpdesk.core.preview.simulate import NotPublic, public_table
from tests.core.test_synthetic import small_table
from tests.core.test_synthetic_fidelity import plan, public_file


def _released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int = 600) -> tuple[Path, Path, Path]:
    """A private table (``small_table``'s columns) released from once: (home, private file, plan file)."""
    from dpdesk.cli import main

    home = tmp_path / "home"
    monkeypatch.setenv("DPDESK_HOME", str(home))
    private = public_file(tmp_path, rows)
    d = plan().to_dict()  # type: ignore[attr-defined]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(d))
    count = {**d, "queries": [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}]}
    count_file = tmp_path / "count.json"
    count_file.write_text(json.dumps(count))
    assert main(["release", str(count_file), "--data", str(private), "--out", str(tmp_path / "pkg")]) == 0
    return home, private, plan_file


def _reshaped(private: Path, out: Path, how: str) -> Path:
    lines = private.read_text().splitlines()
    if how == "plus an empty column":
        body = [lines[0] + ",note", *(line + "," for line in lines[1:])]
    elif how == "plus a row-number column":
        body = [lines[0] + ",rid", *(f"{line},{i}" for i, line in enumerate(lines[1:]))]
    elif (
        how == "x nudged inside its bin"
    ):  # 3.75 -> 3.7500001: the same bin, the same synthetic table's input
        head, *rest = lines
        j = head.split(",").index("x")
        body = [head]
        for line in rest:
            cells = line.split(",")
            cells[j] = f"{float(cells[j]) + 1e-7!r}"
            body.append(",".join(cells))
    else:  # pragma: no cover
        raise AssertionError(how)
    out.write_text("\n".join(body) + "\n")
    return out


@pytest.mark.parametrize(
    "how", ["plus an empty column", "plus a row-number column", "x nudged inside its bin"]
)
def test_ax_the_private_table_plus_a_column_is_not_a_public_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The released table with one extra column (empty, or a row number), or with a plan column's values moved
    by 1e-7 inside their bins, loads to the very same table for the plan's queries (the loader reads only the
    plan's columns; the synthetic query bins x), so every simulation on it is an uncharged draw of the private
    rows. private_match compares whole rows of every column, exactly, so it finds no overlap and the file is
    accepted as public (on main). The same goes for the table minus a column the plan does not read."""
    home, private, _plan_file = _released(tmp_path, monkeypatch)
    copy = _reshaped(private, tmp_path / "copy.csv", how)
    p = plan()
    real = public_table(p, private, tmp_path / "elsewhere")  # type: ignore[arg-type]  # the private rows, loaded
    try:
        got = public_table(p, copy, home)  # type: ignore[arg-type]
    except NotPublic:
        return
    # (reached on main) the "public" table the simulations would draw on: the private rows, re-shaped
    assert got.n_rows == real.n_rows
    pytest.fail(f"{how}: the released table was accepted as a public file")


def test_ax_a_public_file_of_other_people_is_not_refused_as_the_private_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """False positive: last year's published table of the same categorical schema (other people: another
    seed, 600 rows drawn independently) shares most DISTINCT rows with the private table, because coarse
    columns have few distinct rows (121 here). private_match compares distinct-row sketches, finds ~75% both
    ways and refuses the honest file with "it holds the rows of dataset ..., or most of them", which is false.
    (The repo's own test dodges this by giving its fresh table a continuous column.)"""
    home, _private, _plan_file = _released(tmp_path, monkeypatch)
    attrs, codes = small_table(600, np.random.Generator(np.random.PCG64(7)))
    other = tmp_path / "last_year.csv"
    with other.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([a.name for a in attrs])
        for row in codes:
            w.writerow(
                [
                    a.categories[c] if a.kind == "category" else str(a.edges[c])
                    for a, c in zip(attrs, row, strict=True)
                ]
            )
    table = public_table(plan(), other, home)  # type: ignore[arg-type]  # NotPublic on main
    assert table.n_rows == 600


def test_ax_the_content_check_reads_the_same_bytes_as_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Check-then-read: public_table hashes the file (SHA-256 #1), private_match computes its content identity
    from a SECOND read (no SHA-256 comparison: identify() keeps only the key and sketch), and load_table reads it
    a THIRD time, compared with #1 only. A file swapped to a harmless one during the second read and back before
    the third (two renames; a loop retrying until it lands) is checked as the harmless file and loaded as the
    private copy. The swap is simulated here at the content reader's call."""
    import dpdesk.core.identity.recognition as recognition

    home, private, _plan_file = _released(tmp_path, monkeypatch)
    target = tmp_path / "offered.csv"
    target.write_text(private.read_text().replace("\n", "\r\n"))  # a re-saved copy: refused by content alone
    harmless = tmp_path / "harmless.csv"
    harmless.write_text("a,b,x,y,c\nzz,no,1.0,1,c0\n")
    with pytest.raises(NotPublic):  # the content check works when nothing moves
        public_table(plan(), target, home)  # type: ignore[arg-type]

    saved = target.read_bytes()
    swaps: list[str] = []

    def swapping(name: str) -> object:
        real = getattr(recognition, name)

        def swapped(path: object, *args: object, **kwargs: object) -> object:
            swaps.append(name)
            target.write_bytes(harmless.read_bytes())
            try:
                return real(path, *args, **kwargs)
            finally:
                target.write_bytes(saved)

        return swapped

    for name in ("content_identity", "content_identity2"):  # scheme 1's and scheme 2's passes of their own
        monkeypatch.setattr(recognition, name, swapping(name))
    # the cached identity of the copy (remembered by its SHA-256 above) would answer without a read: a fresh copy
    target.write_bytes(saved + b"\r\n")
    saved = target.read_bytes()
    cached = {p.name.split(".")[0] for p in (home / "identity" / "files").glob("*.json")}
    assert file_sha256(target) not in cached
    with pytest.raises(UsageError):  # NotPublic, or "changed while it was read"; on main: loaded
        public_table(plan(), target, home)  # type: ignore[arg-type]
    assert swaps  # the content was read while the file was swapped


def test_ax_a_public_file_without_rows_gets_no_fidelity_figure(tmp_path: Path) -> None:
    """A header-only "public" file: the estimate compares the synthetic tables with an empty table, whose shares
    are all 0, so every distance is 0.5 by construction and dpdesk prints "pairs of columns differ from the
    file's by 50.0% on average ... each column sampled on its own: 50.0%": a figure about nothing (and 0.0%, "an
    exact copy", when the fitted total rounds to 0). It should say the file has no rows to compare with."""
    from dpdesk.services.simulate import FidelityRequest, synthetic_fidelity

    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "published.csv"
    empty.write_text("a,b,x,y,c\n")
    with pytest.raises(UsageError):  # on main: Fidelity(rows=0, one_way=0.5, two_way=0.5, ...)
        synthetic_fidelity(FidelityRequest(plan(), home, "table", empty, runs=1, seed=1))  # type: ignore[arg-type]
