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

from dpdesk.core.common.errors import PlanError
from dpdesk.core.loading import guards
from dpdesk.core.model.spec import MAX_PLAN_CELLS
from dpdesk.core.plan.reader import parse_plan
from tests.capped import capped_env

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(sys.platform == "win32", reason="caps the child with POSIX rlimits"),
]

#: The child's address space: ample for dpdesk on a small file, below what the hostile inputs need.
CAP = 1024**3
#: The same for a child that decodes Parquet columns (the content identity): polars' reader threads reserve
#: address space of their own (under 1 GiB a thread could not start); the hostile files below need more.
PARQUET_CAP = 2 * 1024**3

CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from dpdesk.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_capped(
    home: Path, *args: str, timeout: float = 120, cap: int = CAP
) -> subprocess.CompletedProcess[str]:
    env = capped_env(DPDESK_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(cap), *args],
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
    assert "(as its metadata says)" in r.stderr, r.stderr  # refused from the footer, before any scan
    assert not (tmp_path / "o").exists()
    assert not list((dpdesk_home / "ledgers").glob("*.jsonl")) if (dpdesk_home / "ledgers").exists() else True


def test_parquet_decodes_only_declared_columns(tmp_path: Path) -> None:
    import polars as pl

    from dpdesk.core.loading import load_table
    from dpdesk.core.loading.parquet import read_declared
    from dpdesk.core.model.spec import ColumnSpec

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
    assert_refused(r, "100,000 cells")
    # the limit is the plan's total, counted from the plan alone: 1001 bins x 100 groups is refused too
    small = {"a": {"type": "float", "bounds": [0, 1]}, "g": {"type": "category", "categories": cats[:100]}}
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
    q["bins"] = edges[:1001]  # 1000 bins x 100 groups: the limit (issue 24: it was 10^6, which hung)
    assert MAX_PLAN_CELLS == 1000 * 100
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


def _budget_plan(path: Path, column: dict[str, object], name: str) -> Path:
    return plan_file(
        path,
        {name: column},
        [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.5}],
    )


def test_undeclared_long_text_refused_before_the_identity_decodes_it(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    """A 2.5 KB Parquet file whose undeclared column repeats one 5,000-character value 250,000 times (1.2 GB
    of text): the content-identity pass decoded every column unguarded (3.5 GB, SIGABRT under a cap); now every
    column is held to the limits before it decodes anything, and the refusal is remembered by the file's
    SHA-256 (it took 5-13 s at every call)."""
    import polars as pl

    data = tmp_path / "undeclared.parquet"
    n = 250_000  # on the old code: SIGABRT under the cap
    pl.DataFrame(
        {"x": pl.repeat(1, n, dtype=pl.Int8, eager=True), "note": pl.repeat("z" * 5000, n, eager=True)}
    ).write_parquet(data)
    assert data.stat().st_size < 10_000
    plan = _budget_plan(tmp_path / "plan.json", {"type": "int", "bounds": [0, 10]}, "x")
    for _ in range(2):
        r = run_capped(dpdesk_home, "budget", str(plan), "--data", str(data), cap=PARQUET_CAP)
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
        assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr[-2000:]
    (refused,) = (dpdesk_home / "identity" / "files").glob("*.refused.json")
    assert "decompression bomb" in json.loads(refused.read_text())["refused"]


def test_long_text_identity_is_hashed_in_bounded_slices(tmp_path: Path, dpdesk_home: Path) -> None:
    """100 MB of text in 20,000 rows, under the limits: the identity pass hashed it as one batch (gigabytes of
    temporaries); now in slices of at most MAX_BATCH_BYTES decoded bytes, within the capped child."""
    import polars as pl

    data = tmp_path / "text.parquet"
    n = 20_000  # on the old code: MemoryError (a traceback, exit 1) under the cap
    pl.DataFrame(
        {"x": pl.repeat(1, n, dtype=pl.Int8, eager=True), "note": pl.repeat("z" * 5000, n, eager=True)}
    ).write_parquet(data)
    plan = _budget_plan(tmp_path / "plan.json", {"type": "int", "bounds": [0, 10]}, "x")
    r = run_capped(dpdesk_home, "budget", str(plan), "--data", str(data), cap=PARQUET_CAP)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert list((dpdesk_home / "identity" / "files").glob("*.json")), "the identity was computed and cached"
    assert not list((dpdesk_home / "identity" / "files").glob("*.refused.json"))


def test_bounded_batches_slice_by_decoded_bytes(tmp_path: Path) -> None:
    import polars as pl

    path = tmp_path / "t.parquet"
    frame = pl.DataFrame({"t": ["a" * 1000, "b", "c" * 3000, "d" * 10, "e" * 2000], "x": [1, 2, 3, 4, 5]})
    frame.write_parquet(path)
    pieces = list(guards.bounded_batches(path, [frame], max_rows=4, max_bytes=3100))
    assert [p.height for p in pieces] == [2, 2, 1]  # 1016+17 | 3016+26 | 2016: each under 3,100 bytes
    assert pl.concat(pieces).equals(frame)
    assert [p.height for p in guards.bounded_batches(path, [frame], max_rows=1, max_bytes=10**9)] == [1] * 5


def test_dictionary_encoded_text_refused_before_it_is_copied(tmp_path: Path, dpdesk_home: Path) -> None:
    """A 12 KB Parquet file whose declared category column repeats one 5,000-character value 2 million times
    (dictionary-encoded: its metadata says a few MB) aborted the loader at about 4 GB; now refused at once,
    nothing charged."""
    import polars as pl

    data = tmp_path / "dictionary.parquet"
    pl.DataFrame({"c": pl.repeat("q" * 5000, 2_000_000, eager=True)}).write_parquet(data)
    assert data.stat().st_size < 20_000
    plan = _budget_plan(tmp_path / "plan.json", {"type": "category", "categories": ["a", "b"]}, "c")
    out = tmp_path / "o"
    r = run_capped(dpdesk_home, "release", str(plan), "--data", str(data), "--out", str(out), cap=PARQUET_CAP)
    assert_refused(r, "dictionary.parquet", "decompression bomb")
    assert not out.exists()
    ledgers = dpdesk_home / "ledgers"
    assert not any(p.read_text().strip() for p in ledgers.rglob("*.jsonl")) if ledgers.exists() else True
    guards.check_parquet(data, {"c"}, scan=False)  # the metadata alone passes: its dictionary page is 5 KB
    with pytest.raises(guards.LimitError, match="decompression bomb"):
        guards.check_parquet(data, {"c"})


@pytest.fixture(scope="module")
def long_text_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2.5 KB on disk, 1.2 GB of text: one 5,000-character value 250,000 times (dictionary-encoded)."""
    import polars as pl

    path = tmp_path_factory.mktemp("pq") / "text.parquet"
    n = 250_000
    pl.DataFrame(
        {"x": pl.repeat(1, n, dtype=pl.Int8, eager=True), "note": pl.repeat("z" * 5000, n, eager=True)}
    ).write_parquet(path)
    return path


def test_identity_refuses_before_decoding_anything(
    long_text_parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The content identity holds every column to the limits before it decodes a batch."""
    import polars as pl

    from dpdesk.core.loading.identity import content_identity

    def decoded(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a batch was decoded before the limits were checked")

    monkeypatch.setattr(pl.LazyFrame, "collect_batches", decoded)
    with pytest.raises(guards.InputError, match="decompression bomb"):
        content_identity(long_text_parquet, b"k" * 32)


def test_a_refused_identity_is_remembered(
    long_text_parquet: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit's refusal is remembered by the file's SHA-256 (with its message): the same bytes are refused at
    once, never decoded again; another file is not."""
    from dpdesk.core.identity import recognition
    from dpdesk.core.loading import file_sha256

    sha = file_sha256(long_text_parquet)
    with pytest.raises(guards.InputError, match="decompression bomb") as first:
        recognition.identify(dpdesk_home, long_text_parquet, sha256=sha)

    def recomputed(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the refused file was decoded again")

    monkeypatch.setattr(recognition, "content_identity", recomputed)
    monkeypatch.setattr(recognition, "content_identity2", recomputed)  # scheme 2's, which a new home computes
    with pytest.raises(guards.InputError) as again:
        recognition.identify(dpdesk_home, long_text_parquet, sha256=sha)
    assert again.value.message == first.value.message
    with pytest.raises(AssertionError, match="decoded again"):  # another file's bytes are not refused
        recognition.identify(dpdesk_home, long_text_parquet, sha256="0" * 64)


LOAD_CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from dpdesk.core.loading import load_table
from dpdesk.core.plan.reader import ColumnSpec
table = load_table(sys.argv[2], {"note": ColumnSpec("note", "category", categories=("a", "b"))})
print(table.n_rows, table.report.issues["note"].undeclared)
"""


def test_declared_long_text_is_loaded_in_bounded_slices(tmp_path: Path) -> None:
    """954 MiB of text in a 2.5 KB file, under the limits, declared as a category: the loader copied the whole
    column at once (SIGABRT under the cap); now in slices of at most MAX_BATCH_BYTES decoded bytes."""
    import polars as pl

    data = tmp_path / "declared.parquet"
    n = 200_000
    pl.DataFrame({"note": pl.repeat("z" * 5000, n, eager=True)}).write_parquet(data)
    r = subprocess.run(
        [sys.executable, "-c", LOAD_CHILD, str(PARQUET_CAP), str(data)],
        capture_output=True,
        text=True,
        env=capped_env(),
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split() == [str(n), str(n)]  # every row read, none of them a declared category


def shared_string_workbook(path: Path, cells: int, length: int, *, extra_strings: int = 0) -> Path:
    """A workbook whose column "region" holds one stored (shared) string of ``length`` characters in ``cells``
    cells: a small file that expands to cells x length bytes once read."""
    ns = "http://schemas.openxmlformats.org/"
    rel = f"{ns}officeDocument/2006/relationships"
    main_ns = f"{ns}spreadsheetml/2006/main"
    fillers = "".join(f"<si><t>s{i}</t></si>" for i in range(extra_strings))
    rows = "".join(
        f'<row r="{i}"><c r="A{i}" t="s"><v>{1 + extra_strings}</v></c></row>' for i in range(2, cells + 2)
    )
    parts = {
        "[Content_Types].xml": f'<Types xmlns="{ns}package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName='
        '"/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
        'sharedStrings+xml"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{ns}package/2006/relationships"><Relationship Id="rId1" '
        f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook xmlns="{main_ns}" xmlns:r="{rel}"><sheets>'
        '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{ns}package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        "xl/sharedStrings.xml": f'<sst xmlns="{main_ns}"><si><t>region</t></si>{fillers}'
        f"<si><t>{'x' * length}</t></si></sst>",
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{main_ns}"><sheetData>'
        f'<row r="1"><c r="A1" t="s"><v>0</v></c></row>{rows}</sheetData></worksheet>',
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return path


def test_a_stored_string_repeated_by_many_cells_is_refused_before_it_is_read(
    tmp_path: Path, dpdesk_home: Path
) -> None:
    """A 0.3 MB workbook whose 40,000 cells all refer to one 32,000-character stored string expands to 1.3 GB once
    read: refused from the pre-scan, in a child capped at 1 GiB (on the old code the reader ran out of memory:
    SIGABRT, "memory allocation … failed"). A workbook of the same shape with a short string still loads."""
    book = shared_string_workbook(tmp_path / "repeat.xlsx", 40_000, 32_000)
    assert book.stat().st_size < 400_000
    plan = plan_file(
        tmp_path / "plan.json",
        {"region": {"type": "category", "categories": ["a", "b"]}},
        [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}],
    )
    r = run_capped(dpdesk_home, "release", str(plan), "--data", str(book), "--out", str(tmp_path / "out"))
    assert_refused(r, "repeat.xlsx", "repeat stored text", "export the sheet as CSV")
    assert not (tmp_path / "out").exists()
    small = shared_string_workbook(tmp_path / "small.xlsx", 40_000, 10)
    r = run_capped(dpdesk_home, "suggest", str(small))
    assert r.returncode == 0 and "region: category" in r.stdout, r.stderr[-2000:]


def test_the_stored_text_scan_sees_items_and_references_split_across_chunks() -> None:
    """Fed one byte at a time or whole, the scan finds the same string lengths and references (an empty <si/>
    item keeps the numbering)."""
    strings = b"<sst><si><t>ab</t></si><si/><x:si><x:t>" + b"y" * 50 + b"</x:t></x:si></sst>"
    sheet = (
        b'<row r="1"><c r="A1" t="s"><v>2</v></c><c r="B1" t=\'s\'><v> 2 </v></c><c r="C1"><v>2</v></c></row>'
    )
    found = []
    for step in (1, 3, 7, len(strings) + len(sheet)):
        shared = guards._SharedText(Path("w.xlsx"))
        scan = shared.strings_scan()
        for i in range(0, len(strings), step):
            scan.feed(strings[i : i + step])
        refs = guards._CellRefScan(Path("w.xlsx"), "sheet", shared)
        for i in range(0, len(sheet), step):
            refs.feed(sheet[i : i + step])
        found.append((len(shared.lengths), shared.lengths[1], shared.counts))
    assert all(f == found[0] for f in found), found
    assert (
        found[0][0] == 3 and found[0][1] == 0 and found[0][2] == {2: 2}
    )  # the number cell C1 is not counted
