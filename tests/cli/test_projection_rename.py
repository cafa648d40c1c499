"""Issue 24, item 7 ("copies that matter in practice"): a projection of a known table onto some of its columns
(the plan's columns only, an everyday step) and the table with its headers and category labels translated
(Chinese, saved as GBK) are near-copies of the known dataset: exit 3 until linked or declared new, never a fresh
budget, and never a "public" file for ``simulate --public``. On the code before (2b66e65) the projection and the
translated table each got a fresh budget (exit 0, epsilon 1 left), and ``simulate --public`` ran on the projection
(exit 0), which the attacker averaged back to the true count.

False positives: unrelated tables of one schema, drawn independently from one distribution (the same size, the
same categories), with columns dropped or labels renamed alike, and disjoint samples of a real public table
(``diamonds.csv``, ``acs12.csv`` when the shared data is there) are not near-copies.

Deterministic: a projection or a renaming leaves each column's values (or their counts) exactly the same, a
keyed 64-bit sum that differs for any other multiset but for a 2^-64 collision; independent samples share no
multiset of a continuous column (2,000 draws of a float with 6 decimals).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.identity.recognition import resolve
from dpdesk.core.ledger.book import Ledger
from tests.cli.test_govern import DATA, PLAN, head, run

pytestmark = pytest.mark.slow

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"

ZH_HEADERS = {
    "age": "年龄",
    "sex": "性别",
    "education": "教育年限",
    "occupation": "职业",
    "hours": "工时",
    "wage": "工资",
    "region": "地区",
    "state": "州",
    "weight": "权重",
}
ZH_LABELS = {
    "male": "男",
    "female": "女",
    "northeast": "东北",
    "midwest": "中西部",
    "south": "南部",
    "west": "西部",
}


def _rows(path: Path, encoding: str = "utf-8") -> list[list[str]]:
    with path.open(newline="", encoding=encoding) as f:
        return list(csv.reader(f))


def _write(path: Path, rows: list[list[str]], encoding: str = "utf-8") -> Path:
    with path.open("w", newline="", encoding=encoding) as f:
        csv.writer(f).writerows(rows)
    return path


def projected(path: Path, out: Path, columns: list[str]) -> Path:
    """The table's rows, in order, with only ``columns``."""
    rows = _rows(path)
    keep = [rows[0].index(c) for c in columns]
    return _write(out, [[r[i] for i in keep] for r in rows])


def _label(value: str) -> str:
    """A category label translated, consistently (occupations and states get a prefix of their own)."""
    if value in ZH_LABELS:
        return ZH_LABELS[value]
    if value.startswith("state_"):
        return "州" + value.removeprefix("state_")
    return value


def translated(path: Path, out: Path, encoding: str = "gbk") -> Path:
    """The sample with its headers and its text categories translated, saved as GBK (or ``encoding``)."""
    rows = _rows(path)
    head_row, body = rows[0], rows[1:]
    occupation = head_row.index("occupation")
    zh = [[ZH_HEADERS[h] for h in head_row]]
    for r in body:
        zh.append([("职业-" + c if i == occupation else _label(c)) for i, c in enumerate(r)])
    return _write(out, zh, encoding=encoding)


def translated_plan(out: Path) -> Path:
    """The sample plan with its column names and region categories translated."""
    d: dict[str, Any] = json.loads(PLAN.read_text(encoding="utf-8"))
    d["columns"] = {ZH_HEADERS[c]: spec for c, spec in d["columns"].items()}
    d["columns"]["地区"]["categories"] = [ZH_LABELS[c] for c in d["columns"]["地区"]["categories"]]
    for q in d["queries"]:
        for key in ("column", "group_by"):
            if key in q:
                q[key] = ZH_HEADERS[q[key]]
    out.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    return out


@pytest.fixture
def known(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    code, _out, err = run(capsys, "release", PLAN, "--data", DATA, "--out", tmp_path / "first")
    assert code == 0, err
    return head(capsys)[0]


def _ledgers(home: Path) -> list[str]:
    return sorted(p.stem for p in (home / "ledgers").glob("ds-*.jsonl"))


def test_the_plans_columns_only_are_a_near_copy_until_linked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, known: str, dpdesk_home: Path
) -> None:
    """Item 7: on the code before, exit 0 and "epsilon 1" left: a fresh budget for the same rows."""
    copy = projected(DATA, tmp_path / "plan_columns.csv", ["wage", "education", "region"])
    code, out, err = run(capsys, "budget", PLAN, "--data", copy, "--json")
    assert code == 3 and f"resembles dataset {known}" in err, (code, out, err)
    assert "holds exactly the values of one of the other's columns" in err and '"weight"' in err, err
    code, _out, err = run(capsys, "release", PLAN, "--data", copy, "--out", tmp_path / "r2")
    assert code == 3 and f"resembles dataset {known}" in err and not (tmp_path / "r2").exists(), err
    assert _ledgers(dpdesk_home) == [known]  # no fresh ledger
    code, out, err = run(capsys, "ledger", "link", "--data", copy, "--to", known)
    assert code == 0, err
    # charged to the known ledger: the plan (0.9 of 1.0) no longer fits what the first release spent
    code, _out, err = run(capsys, "release", PLAN, "--data", copy, "--out", tmp_path / "r3")
    assert code == 1 and "over budget" in err and not (tmp_path / "r3").exists(), err
    assert head(capsys, copy)[0] == known


def test_the_plans_columns_with_a_column_of_its_own_are_a_near_copy(
    tmp_path: Path, known: str, dpdesk_home: Path
) -> None:
    """Trying to break the fix: the plan's columns plus a row-number column (or one dropped column edited in) are a
    near-copy, the others identifying its rows; the same with columns that do not identify them is not compared."""
    rows = _rows(DATA)
    with_rid = [[*r, "rid" if i == 0 else str(i)] for i, r in enumerate(rows)]
    _write(tmp_path / "rid.csv", with_rid)
    copy = projected(tmp_path / "rid.csv", tmp_path / "copy.csv", ["wage", "education", "region", "rid"])
    near = resolve(dpdesk_home, copy).resembles
    assert [(n.dataset, n.marginal, n.changed[0]) for n in near] == [(known, True, "age")], near
    coarse = projected(tmp_path / "rid.csv", tmp_path / "coarse.csv", ["sex", "region", "rid"])
    assert resolve(dpdesk_home, coarse).resembles == ()


def test_a_translated_gbk_copy_is_a_near_copy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, known: str, dpdesk_home: Path
) -> None:
    """Headers and category labels renamed consistently (Chinese, GBK): on the code before, a fresh budget."""
    copy = translated(DATA, tmp_path / "调查.csv")
    assert copy.read_bytes() != DATA.read_bytes() and "工资".encode("gbk") in copy.read_bytes()
    plan = translated_plan(tmp_path / "plan_zh.json")
    code, out, err = run(capsys, "budget", plan, "--data", copy, "--json")
    assert code == 3 and f"resembles dataset {known}" in err, (code, out, err)
    code, _out, err = run(capsys, "release", plan, "--data", copy, "--out", tmp_path / "r2")
    assert code == 3 and not (tmp_path / "r2").exists(), err
    assert _ledgers(dpdesk_home) == [known]
    # and so is the translated table with only the plan's columns kept
    small = projected(
        translated(DATA, tmp_path / "zh_utf8.csv", "utf-8"),
        tmp_path / "zh_small.csv",
        ["工资", "教育年限", "地区"],
    )
    code, _out, err = run(capsys, "budget", plan, "--data", small)
    assert code == 3 and f"resembles dataset {known}" in err, err


@pytest.mark.parametrize("how", ["the plan's columns", "translated"])
def test_simulate_public_refuses_a_projection_or_a_translation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, known: str, how: str
) -> None:
    """Item 7: on the code before, ``simulate --public`` ran on the plan's columns (exit 0): uncharged draws of the
    private rows, averaged back to the true count."""
    if how == "translated":
        copy, plan = translated(DATA, tmp_path / "copy.csv"), translated_plan(tmp_path / "plan_zh.json")
    else:
        copy, plan = projected(DATA, tmp_path / "copy.csv", ["wage", "education", "region"]), PLAN
    out = tmp_path / "sim.csv"
    code, _out, err = run(capsys, "simulate", plan, "--public", copy, "--runs", "5", "--out", out)
    assert code == 2 and f"{copy} is not a public file" in err and f"dataset {known}" in err, err
    assert "headers and category labels" in err and not out.exists(), err


def _draw(seed: int, n: int = 2000) -> list[list[str]]:
    """A table of the sample's kind (three categorical columns and a continuous one), drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    rows = [["region", "sex", "grade", "wage"]]
    for _ in range(n):
        rows.append(
            [
                str(rng.choice(["north", "south", "east", "west"])),
                str(rng.choice(["female", "male"])),
                str(rng.choice(["g0", "g1", "g2"])),
                f"{rng.gamma(2.0, 500.0):.6f}",
            ]
        )
    return rows


def test_independent_tables_of_one_schema_are_not_near_copies(tmp_path: Path, dpdesk_home: Path) -> None:
    """The false positives that matter: independent draws of one distribution, of the same size and schema, whole,
    with columns dropped, or with their labels renamed alike, are new tables; the known table's own projection
    and renaming are recognised (the check is not blind)."""
    first = resolve(dpdesk_home, _write(tmp_path / "k.csv", _draw(1)))
    Ledger.for_dataset(dpdesk_home, first.sha256).ensure_id()
    rename = {"north": "北", "south": "南", "east": "东", "west": "西", "female": "女", "male": "男"}

    def variants(rows: list[list[str]], name: str) -> list[Path]:
        zh = [["地区", "性别", "等级", "工资"], *([rename.get(c, c) for c in r] for r in rows[1:])]
        return [
            _write(tmp_path / f"{name}_whole.csv", rows),
            projected(_write(tmp_path / f"{name}_t.csv", rows), tmp_path / f"{name}_p.csv", ["sex", "wage"]),
            _write(tmp_path / f"{name}_zh.csv", zh, encoding="gbk"),
        ]

    for seed in (2, 3, 4):
        for path in variants(_draw(seed), f"other{seed}"):
            r = resolve(dpdesk_home, path)
            assert (r.how, r.resembles) == ("new", ()), (seed, path.name, r.resembles)
    for path in variants(_draw(1), "same")[1:]:
        r = resolve(dpdesk_home, path)
        assert [(n.marginal, n.contained) for n in r.resembles] == [(True, 1.0)], path.name
    # a small table (600 rows): its continuous column has fewer distinct values than the count profiles' limit,
    # yet all distinct, so a profile (all ones) would match any other draw's; compared by its values only
    small = Ledger.for_dataset(
        dpdesk_home, resolve(dpdesk_home, _write(tmp_path / "k600.csv", _draw(11, 600))).sha256
    )
    small.ensure_id()
    for seed in (12, 13):
        t = projected(_write(tmp_path / "t600.csv", _draw(seed, 600)), tmp_path / "w600.csv", ["wage"])
        assert resolve(dpdesk_home, t).resembles == (), seed
    own = projected(tmp_path / "k600.csv", tmp_path / "own600.csv", ["sex", "wage"])
    assert [n.dataset for n in resolve(dpdesk_home, own).resembles] == [small.dataset]
    # a coarse projection (two categorical columns: 8 distinct rows) does not identify the rows: not compared
    coarse = projected(tmp_path / "k.csv", tmp_path / "coarse.csv", ["region", "sex"])
    assert resolve(dpdesk_home, coarse).resembles == ()


@pytest.mark.skipif(not (SHARED / "diamonds.csv").is_file(), reason="the shared public tables are not here")
def test_disjoint_samples_of_a_real_table_are_not_near_copies(tmp_path: Path, dpdesk_home: Path) -> None:
    """Two disjoint halves of diamonds.csv (the same schema and size) and their projections are new tables; a
    projection of the known half is recognised."""
    rows = _rows(SHARED / "diamonds.csv")
    order = np.random.default_rng(7).permutation(len(rows) - 1) + 1
    half = [rows[0], *(rows[i] for i in order[:3000])]
    other = [rows[0], *(rows[i] for i in order[3000:6000])]
    first = resolve(dpdesk_home, _write(tmp_path / "half.csv", half))
    Ledger.for_dataset(dpdesk_home, first.sha256).ensure_id()
    for cols in (rows[0], ["price", "cut"], ["carat", "cut", "color", "clarity"]):
        p = projected(_write(tmp_path / "o.csv", other), tmp_path / "op.csv", cols)
        assert resolve(dpdesk_home, p).resembles == (), cols
    p = projected(tmp_path / "half.csv", tmp_path / "hp.csv", ["price", "cut"])
    assert [n.marginal for n in resolve(dpdesk_home, p).resembles] == [True]
    if (SHARED / "acs12.csv").is_file():  # another real table of another schema and size: nothing in common
        assert resolve(dpdesk_home, SHARED / "acs12.csv").resembles == ()


def test_the_column_values_stay_in_the_home(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, known: str, dpdesk_home: Path
) -> None:
    """The DP rule: the columns' value keys and count profiles (functions of the private rows) are kept in the
    home's identity folder and appear in none of the package's files."""
    (record,) = (dpdesk_home / "identity" / "files").glob("*.json")
    marginals = json.loads(record.read_text(encoding="utf-8"))["columns"]["marginals"]
    secrets = {m["values"] for m in marginals.values()} | {
        m["profile"] for m in marginals.values() if m["profile"]
    }
    assert len(secrets) > len(marginals)  # values and profiles were recorded
    code, _out, err = run(capsys, "ledger", "export", "--data", DATA, "--out", tmp_path / "export")
    assert code == 0, err
    published = [p for p in (tmp_path / "first").rglob("*") if p.is_file()]
    published += (
        [p for p in (tmp_path / "export").rglob("*") if p.is_file()] if (tmp_path / "export").is_dir() else []
    )
    published += [tmp_path / "export"] if (tmp_path / "export").is_file() else []
    assert published
    for p in published:
        data = p.read_bytes()
        assert not any(s.encode("ascii") in data for s in secrets), p


def test_a_dataset_recorded_before_column_values_gets_them_when_its_file_is_opened(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    """A home from before issue 24 (column sketches without their marginals) keeps working; a projection of its
    dataset is recognised once the known file is opened again (its column values computed once)."""
    first = Ledger.for_dataset(dpdesk_home, resolve(dpdesk_home, DATA).sha256)
    first.ensure_id()
    folder = dpdesk_home / "identity"
    for p in [*(folder / "files").glob("*.json"), folder / "datasets" / f"{first.dataset}.json"]:
        raw = json.loads(p.read_text(encoding="utf-8"))
        for columns in [raw["columns"]] if "content" in raw else raw["columns"].values():
            columns.pop("marginals")
        p.write_text(json.dumps(raw), encoding="utf-8")
    copy = projected(DATA, tmp_path / "copy.csv", ["wage", "education", "region"])
    assert resolve(dpdesk_home, copy).resembles == ()  # nothing to compare with yet (an older home)
    assert resolve(dpdesk_home, DATA).how == "file"  # the known file, opened: its column values computed
    record = json.loads((folder / "datasets" / f"{first.dataset}.json").read_text(encoding="utf-8"))
    assert all("marginals" in c for c in record["columns"].values())
    again = projected(DATA, tmp_path / "again.csv", ["wage", "region"])  # another file, not cached
    assert [n.dataset for n in resolve(dpdesk_home, again).resembles] == [first.dataset]


def test_tables_that_share_only_a_key_column_are_not_near_copies(tmp_path: Path, dpdesk_home: Path) -> None:
    """An attacker's pass found unrelated tables sharing a key column refused as near-copies ((day, temp) and
    (day, sales, store); countries: (country, gdp, region) and (country, population)): one matched column and one
    of the table's own was taken for "the others identify its rows". A column of its own needs at
    least two matched columns beside it; the known table's own columns plus a row number stay recognised (the
    test above)."""
    rng = np.random.default_rng(5)
    days = [f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}" for i in range(336)]
    known = _write(
        tmp_path / "temp.csv",
        [["day", "temp"], *([d, f"{t:.2f}"] for d, t in zip(days, rng.normal(12, 8, 336), strict=True))],
    )
    Ledger.for_dataset(dpdesk_home, resolve(dpdesk_home, known).sha256).ensure_id()
    sales = _write(
        tmp_path / "sales.csv",
        [["day", "sales"], *([d, str(s)] for d, s in zip(days, rng.integers(0, 900, 336), strict=True))],
    )
    # (day, sales) is (day, temp) with one column edited: the older one-column rule (issue 13) still calls it a
    # near-copy; docs/near-copies.md states this limit of two-column tables
    assert [n.marginal for n in resolve(dpdesk_home, sales).resembles] == [False]
    with_store = _write(
        tmp_path / "sales2.csv",
        [
            ["day", "sales", "store"],
            *(
                [d, str(s), f"s{i % 7}"]
                for i, (d, s) in enumerate(zip(days, rng.integers(0, 900, 336), strict=True))
            ),
        ],
    )
    assert resolve(dpdesk_home, with_store).resembles == ()
    # still a near-copy: the known table's own columns (two here) with one of its own
    own = _write(
        tmp_path / "own.csv",
        [["n", *r] for r in _rows(known)[:1]] + [[str(i), *r] for i, r in enumerate(_rows(known)[1:])],
    )
    assert len(resolve(dpdesk_home, own).resembles) == 1
