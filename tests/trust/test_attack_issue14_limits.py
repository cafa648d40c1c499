"""Issue 14 item 3: small files that need gigabytes, and data "files" that never end.

Each hostile input runs through the command line in a child whose address space is capped
(RLIMIT_AS), so a regression fails the test (a MemoryError, a SIGABRT or a hang) instead of
the machine; the refusal must be clean: exit 2, a one-line message naming the limit, nothing
charged. On the code before this fix the far-off .xlsx cell needed about 1.4 GB, the cell at
XFD1048576 aborted the process (SIGABRT), the Parquet file decoded 80 million rows, the plan of
10,000 x 10,000 grouped histogram cells was built in `dpdesk budget`, and /dev/zero and a FIFO
hung.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from dpdesk.core.errors import PlanError
from dpdesk.core.loading import guards
from dpdesk.core.plan import MAX_PLAN_CELLS, parse_plan

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(sys.platform == "win32", reason="caps the child with POSIX rlimits"),
]

#: The child's address space: ample for dpdesk on a small file, below what the hostile inputs need.
CAP = 1024**3

CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from dpdesk.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_capped(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(CAP), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def workbook(path: Path, far: tuple[str, int] | None = None, dimension: str | None = None) -> Path:
    """A one-sheet workbook with a header x and two values; ``far`` adds one cell far away."""
    ns = "http://schemas.openxmlformats.org/"
    rel = f"{ns}officeDocument/2006/relationships"
    extra = f'<row r="{far[1]}"><c r="{far[0]}{far[1]}"><v>1</v></c></row>' if far else ""
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    parts = {
        "[Content_Types].xml": f'<Types xmlns="{ns}package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{ns}package/2006/relationships"><Relationship Id="rId1" '
        f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook xmlns="{ns}spreadsheetml/2006/main" xmlns:r="{rel}"><sheets>'
        '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{ns}package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{ns}spreadsheetml/2006/main">{dim}<sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>'
        f'<row r="2"><c r="A2"><v>3</v></c></row>{extra}</sheetData></worksheet>',
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return path


def plan_file(path: Path, columns: dict[str, object], queries: list[dict[str, object]]) -> Path:
    plan = {
        "version": 1,
        "title": "t",
        "budget": {"epsilon": 1.0, "delta": 0},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": columns,
        "queries": queries,
    }
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def assert_refused(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr[-2000:]
    for w in words:
        assert w in r.stderr, r.stderr


def test_small_workbook_still_loads(tmp_path: Path, dpdesk_home: Path) -> None:
    """The cap leaves room for a sound workbook (so the refusals below are the guard's, not the cap's)."""
    r = run_capped(dpdesk_home, "suggest", str(workbook(tmp_path / "ok.xlsx")))
    assert r.returncode == 0, r.stderr
    assert "x: int" in r.stdout


@pytest.mark.parametrize(
    ("far", "dimension"),
    [(("Z", 1_000_000), None), (("XFD", 1_048_576), None), (None, "A1:XFD1048576"), (("XFE", 1), None)],
    ids=["far-off-cell", "XFD1048576", "dimension", "past-XFD"],
)
def test_far_off_xlsx_cell_refused_before_calamine(
    tmp_path: Path, dpdesk_home: Path, far: tuple[str, int] | None, dimension: str | None
) -> None:
    book = workbook(tmp_path / "far.xlsx", far, dimension)
    assert book.stat().st_size < 10_000
    r = run_capped(dpdesk_home, "suggest", str(book))
    assert_refused(r, "far.xlsx")


def test_cell_scan_sees_references_split_across_chunks() -> None:
    scan = guards._CellRefScan(Path("w.xlsx"), "sheet")
    text = b'<row r="1"><c r="A1"/></row><row r="1048576"><c r="XFD1048576"/></row>'

    def feed_bytewise() -> None:
        for i in range(len(text)):
            scan.feed(text[i : i + 1])

    with pytest.raises(guards.InputError, match="spans 1048576 rows by 16384 columns"):
        feed_bytewise()


def test_cell_scan_counts_cells_without_references() -> None:
    """A cell without a reference follows the previous one: a run of them is bounded too."""
    scan = guards._CellRefScan(Path("w.xlsx"), "sheet")
    with pytest.raises(guards.InputError, match="beyond Excel's last row"):
        scan.feed(b"<row><c r='XFC1'/>" + b"<c/>" * 2 + b"</row>")


@pytest.fixture(scope="module")
def parquet_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 100 KB on disk, 80 million rows: two constant columns, run-length encoded."""
    import polars as pl

    path = tmp_path_factory.mktemp("pq") / "bomb.parquet"
    n = 80_000_000
    pl.select(x=pl.repeat(7, n, dtype=pl.Int8), y=pl.repeat("a", n)).write_parquet(path, row_group_size=n)
    assert path.stat().st_size < 1_000_000
    return path


@pytest.mark.slow
def test_parquet_bomb_refused_from_its_metadata(
    tmp_path: Path, dpdesk_home: Path, parquet_bomb: Path
) -> None:
    plan = plan_file(
        tmp_path / "plan.json",
        {"x": {"type": "int", "bounds": [0, 10]}},
        [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.5}],
    )
    r = run_capped(
        dpdesk_home, "release", str(plan), "--data", str(parquet_bomb), "--out", str(tmp_path / "o")
    )
    assert_refused(r, "bomb.parquet", "decompression bomb")
    assert not (tmp_path / "o").exists()
    assert not list((dpdesk_home / "ledgers").glob("*.jsonl")) if (dpdesk_home / "ledgers").exists() else True


def test_parquet_decodes_only_declared_columns(tmp_path: Path) -> None:
    import polars as pl

    from dpdesk.core.loading import load_table
    from dpdesk.core.loading.parquet import read_declared
    from dpdesk.core.plan import ColumnSpec

    path = tmp_path / "t.parquet"
    pl.DataFrame({"x": [1, 2, 3], "secret": ["a", "b", "c"], " y ": [4, 5, 6]}).write_parquet(path)
    cols = {"x": ColumnSpec("x", "int", bounds=(0, 10)), "y": ColumnSpec("y", "int", bounds=(0, 10))}
    assert sorted(read_declared(path, cols, None).columns) == [" y ", "x"]
    table = load_table(path, cols)
    assert table.n_rows == 3 and list(table.columns) == ["x", "y"]
    with pytest.raises(guards.InputError, match="'z' not found in the header; the file has: 'x', 'secret'"):
        load_table(path, {"z": ColumnSpec("z", "int", bounds=(0, 10))})


def test_parquet_footer_damaged(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1" + b"\xff" * 40 + (40).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(guards.InputError, match="metadata is damaged"):
        guards.check_parquet(path)


def test_plan_of_too_many_cells_refused_at_validation(tmp_path: Path, dpdesk_home: Path) -> None:
    cats = [f"c{i}" for i in range(10_000)]
    columns = {"a": {"type": "category", "categories": cats}, "g": {"type": "category", "categories": cats}}
    query = {
        "name": "h",
        "statistic": "histogram",
        "column": "a",
        "group_by": "g",
        "mechanism": "laplace",
        "epsilon": 0.5,
    }
    plan = plan_file(tmp_path / "big.json", columns, [query])
    r = run_capped(dpdesk_home, "budget", str(plan), timeout=60)
    assert_refused(r, "1,000,000 cells")
    # the limit is the plan's total, counted from the plan alone: 100 x 100 x 100 (numeric bins) is refused too
    small = {"a": {"type": "float", "bounds": [0, 1]}, "g": {"type": "category", "categories": cats[:1000]}}
    edges = [i / 1001 for i in range(1002)]
    q = {
        "name": "h",
        "statistic": "histogram",
        "column": "a",
        "group_by": "g",
        "bins": edges,
        "mechanism": "laplace",
        "epsilon": 0.5,
    }
    with pytest.raises(PlanError, match="cells"):
        parse_plan({**json.loads(plan.read_text()), "columns": small, "queries": [q]})
    q["bins"] = edges[:1000]  # 999 bins x 1000 groups: just under the limit
    assert MAX_PLAN_CELLS >= 999 * 1000
    parse_plan({**json.loads(plan.read_text()), "columns": small, "queries": [q]})


@pytest.mark.slow
def test_device_and_fifo_refused_at_once(tmp_path: Path, dpdesk_home: Path) -> None:
    plan = Path(__file__).resolve().parents[2] / "resources" / "samples" / "cps_wages_plan.json"
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    try:
        for data in ("/dev/zero", str(fifo)):
            r = run_capped(dpdesk_home, "budget", str(plan), "--data", data, timeout=30)
            assert_refused(r, "not a regular file")
            r = run_capped(
                dpdesk_home, "release", str(plan), "--data", data, "--out", str(tmp_path / "o"), timeout=30
            )
            assert_refused(r, "not a regular file")
    finally:
        # unblock a reader the old code left waiting on the FIFO
        threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True).start()
