"""A table's sketches as a team's database keeps them (issue 27): no row count and no column counts (the database
is read by the team's curators, officers and administrators; a count of a private table is not differentially
private), and still enough to recognise a near-copy, also with one column changed, as a home does."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from dpdesk.core.identity.recognition import _team_sketch, resembles_among
from dpdesk.core.loading.identity import Sketch, content_identity, identifying

SECRET = bytes(range(32))


def _table(path: Path, rows: list[tuple[int, str, float]], *, header: str = "id,region,income") -> Path:
    path.write_text(header + "\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows), encoding="utf-8")
    return path


def _rows(n: int, seed: int) -> list[tuple[int, str, float]]:
    rng = random.Random(seed)
    return [(i, rng.choice("NESW"), round(rng.uniform(0, 9000), 2)) for i in range(n)]


def _numbers(raw: Any) -> list[int]:
    """Every integer anywhere in a JSON value (keys and values)."""
    if isinstance(raw, bool):
        return []
    if isinstance(raw, int):
        return [raw]
    if isinstance(raw, dict):
        return [n for k, v in raw.items() for n in (*_numbers(k), *_numbers(v))]
    if isinstance(raw, list):
        return [n for v in raw for n in _numbers(v)]
    return []


def _team_record(path: Path) -> dict[str, Any]:
    ident = content_identity(path, SECRET)
    # stored as text by the database, read back as JSON: what any reader of dpdesk.sketches sees
    return dict(json.loads(json.dumps(_team_sketch(ident.key, ident.sketch, ident.columns))))


def test_the_team_copy_holds_no_count_of_the_table(tmp_path: Path) -> None:
    """2,999 rows (not a size a sketch keeps): the number appears nowhere in what the team keeps, nor do the
    counts of the 4 regions, and no column's counts are kept under a key (marginals)."""
    rows = _rows(2999, 1)
    record = _team_record(_table(tmp_path / "t.csv", rows))
    regions = [x[1] for x in rows]
    counts = {regions.count(r) for r in "NESW"}
    numbers = set(_numbers(record))
    assert 2999 not in numbers and not (counts & numbers), (numbers, counts)
    assert "rows" not in json.dumps(record)
    (columns,) = record["columns"].values()
    assert columns["marginals"] == {}


def test_a_near_copy_is_recognised_from_the_team_copy_as_from_the_homes(tmp_path: Path) -> None:
    """The same shares as from the home's own record, for a tenth of the rows left out and for a column dropped
    too; an unrelated table of the same schema is not flagged."""
    rows = _rows(3000, 2)
    known = content_identity(_table(tmp_path / "known.csv", rows), SECRET)
    home = {
        "contents": {known.key: known.sketch.to_json()},
        "columns": {known.key: known.columns.to_json() if known.columns else {}},
    }
    team = _team_record(tmp_path / "known.csv")
    near = content_identity(_table(tmp_path / "near.csv", rows[:2700]), SECRET)
    dropped_path = tmp_path / "dropped.csv"
    dropped_path.write_text(
        "id,region\n" + "".join(f"{a},{b}\n" for a, b, _ in rows[:2900]), encoding="utf-8"
    )
    dropped = content_identity(dropped_path, SECRET)
    for new in (near, dropped):
        from_home = resembles_among([("d1", home)], new.sketch, columns=new.columns)
        from_team = resembles_among([("d1", team)], new.sketch, columns=new.columns)
        assert from_home and from_team == from_home, (from_home, from_team)
    other = content_identity(_table(tmp_path / "other.csv", _rows(3000, 3)), SECRET)
    assert resembles_among([("d1", team)], other.sketch, columns=other.columns) == []


def test_the_team_copy_keeps_whether_a_sketch_identifies_its_rows(tmp_path: Path) -> None:
    """A coarse table (four regions, many rows) does not identify its rows, an id column does: the team's copy
    says which, without the count it was decided from."""
    coarse = tmp_path / "coarse.csv"
    coarse.write_text("region\n" + "N\nE\nS\nW\n" * 500, encoding="utf-8")
    for path, expected in ((coarse, False), (_table(tmp_path / "t.csv", _rows(2000, 4)), True)):
        ident = content_identity(path, SECRET)
        copy = Sketch.from_json(json.loads(json.dumps(ident.sketch.to_team_json())))
        assert copy.rows is None and copy.hashes == ident.sketch.hashes
        assert identifying(copy) is identifying(ident.sketch) is expected
