"""Zip bombs in .xlsx whose sizes are forged: the check must count the bytes a part really unpacks to.

calamine's zip reader inflates a part until its deflate stream ends, whatever size the archive
declares: before the check inflated the parts itself, a 3 GiB sheet declared as a few hundred bytes
passed it and made calamine abort the whole process on a failed multi-GiB allocation. The bombs are
opened in a child with a capped address space, so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import pytest
import xlsxwriter  # type: ignore[import-untyped]

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading import Peek, guards, load_table, peek, suggest_types
from dpdesk.core.model.spec import ColumnSpec
from tests.capped import capped_env

SHEET = "xl/worksheets/sheet1.xml"
AGE = ColumnSpec("age", "int", bounds=(0, 120))
WAGE = ColumnSpec("wage", "float", bounds=(0, 1000))
ROWS: list[list[object]] = [["age", "wage"], [34, 12.5], [61, 7.0], [5, 999.25]]
#: The child's address space: ample for loading a small workbook, far below what the bombs need.
CAP = 3 * 2**30
BOMB = 3 * 2**30

CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from dpdesk.core.loading import load_table, suggest_types
from dpdesk.core.common.errors import InputError
from dpdesk.core.plan.reader import ColumnSpec
messages = []
t = time.perf_counter()
calls = (lambda: load_table(sys.argv[1], {"age": ColumnSpec("age", "int", bounds=(0, 120))}),
         lambda: suggest_types(sys.argv[1]))
for call in calls[: int(sys.argv[3])]:
    try:
        call()
        messages.append(None)
    except InputError as exc:
        messages.append(exc.message)
seconds = time.perf_counter() - t
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent (a big pytest process) across exec
rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"messages": messages, "seconds": seconds, "maxrss_kib": rss}))
"""

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(sys.platform == "win32", reason="caps the child with POSIX rlimits"),
]


# ----------------------------------------------------------------------------- building archives


def workbook_parts(path: Path) -> list[tuple[str, bytes]]:
    """The parts of a real small workbook written by xlsxwriter, in archive order."""
    return book_parts(path, ROWS)


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def flushed(data: bytes) -> bytes:
    """``data`` as deflate blocks ending on a full flush: copies of it concatenate into one stream."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


def sheet_bomb(sheet: bytes, unit: bytes, size: int) -> bytes:
    """A deflate stream of ``sheet`` with about ``size`` bytes of ``unit`` repeated inside sheetData."""
    end = sheet.index(b"</sheetData>")
    return flushed(sheet[:end]) + flushed(unit) * (size // len(unit)) + raw_deflate(sheet[end:])


def write_zip(
    path: Path,
    parts: list[tuple[str, bytes]],
    *,
    streams: dict[str, bytes] | None = None,
    declared: dict[str, int] | None = None,
    method: dict[str, int] | None = None,
    flags: int = 0,
) -> None:
    """A zip of ``parts``, deflated; ``streams`` replaces a part's compressed data, ``declared`` its
    declared size (in the local and the central header), ``method`` its compression method. With
    flag 0x8 the local headers carry no sizes and a data descriptor follows each part's data."""
    streams, declared, method = streams or {}, declared or {}, method or {}
    out, central = io.BytesIO(), []
    for name, data in parts:
        comp = streams.get(name, raw_deflate(data))
        crc, size, how = zlib.crc32(data), declared.get(name, len(data)), method.get(name, 8)
        sizes = (0, 0, 0) if flags & 0x8 else (crc, len(comp), size)
        offset, raw_name = out.tell(), name.encode()
        out.write(b"PK\x03\x04" + le(20, 2) + le(flags, 2) + le(how, 2) + le(0, 4))
        out.write(b"".join(le(v, 4) for v in sizes) + le(len(raw_name), 2) + le(0, 2) + raw_name + comp)
        if flags & 0x8:
            out.write(b"PK\x07\x08" + le(crc, 4) + le(len(comp), 4) + le(size, 4))
        central.append(
            b"PK\x01\x02"
            + le(20, 2)
            + le(20, 2)
            + le(flags, 2)
            + le(how, 2)
            + le(0, 4)
            + le(crc, 4)
            + le(len(comp), 4)
            + le(size, 4)
            + le(len(raw_name), 2)
            + le(0, 6)
            + le(0, 2)
            + le(0, 4)
            + le(offset, 4)
            + raw_name
        )
    start = out.tell()
    out.write(b"".join(central))
    n, cd_size = len(parts), out.tell() - start
    out.write(b"PK\x05\x06" + le(0, 4) + le(n, 2) + le(n, 2) + le(cd_size, 4) + le(start, 4) + le(0, 2))
    path.write_bytes(out.getvalue())


def le(value: int, width: int) -> bytes:
    return value.to_bytes(width, "little")


def forged_bomb(tmp_path: Path, unit: bytes, flags: int) -> Path:
    """A workbook whose sheet declares its true small size but inflates to about 3 GiB."""
    parts = workbook_parts(tmp_path / "base.xlsx")
    sheet = dict(parts)[SHEET]
    p = tmp_path / "bomb.xlsx"
    write_zip(p, parts, streams={SHEET: sheet_bomb(sheet, unit, BOMB)}, flags=flags)
    return p


def load_in_capped_child(path: Path, calls: int = 2) -> dict[str, object]:
    """Run load_table and suggest_types (or only the first ``calls`` of them) on ``path`` in a child
    that caps its own address space."""
    env = capped_env()  # keep the child's address space independent of cores
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(CAP), str(calls)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the child was still loading the bomb after 240 s")
    assert proc.returncode == 0, f"the child died ({proc.returncode}): {err.decode(errors='replace')[:400]}"
    return json.loads(out.decode().splitlines()[-1])


# ----------------------------------------------------------------------------- tests


ROW_UNIT = b"<row><c><v>7</v></c><c><v>8</v></c></row>" * 4096  # 2 cells a row: calamine keeps them all
SPACE_UNIT = b" " * 2**20  # one 3 GiB text node: the XML reader buffers it whole


@pytest.mark.parametrize(
    ("unit", "flags"),
    [(ROW_UNIT, 0), (SPACE_UNIT, 0x8)],
    ids=["rows-sizes-in-headers", "whitespace-data-descriptor"],
)
@pytest.mark.slow
def test_forged_small_size_bomb_is_refused_quickly_in_little_memory(
    tmp_path: Path, unit: bytes, flags: int
) -> None:
    p = forged_bomb(tmp_path, unit, flags)
    assert sum(i.file_size for i in zipfile.ZipFile(p).infolist()) < 20_000  # the sizes lie
    got = load_in_capped_child(p)
    messages = got["messages"]
    assert isinstance(messages, list) and len(messages) == 2
    for m in messages:  # both load_table and suggest_types refuse it, naming the part
        assert m is not None and "zip bomb" in m and SHEET in m and "declares" in m, m
    assert float(got["seconds"]) < 30  # type: ignore[arg-type]
    assert int(got["maxrss_kib"]) < 512 * 1024  # type: ignore[call-overload]


def test_forged_bomb_refused_in_process_without_inflating_it_whole(tmp_path: Path) -> None:
    """The check stops at the declared size: refusing the 3 GiB sheet takes a moment, not a minute."""
    p = forged_bomb(tmp_path, SPACE_UNIT, 0)
    t = time.perf_counter()
    with pytest.raises(InputError, match="zip bomb") as info:
        guards.check_xlsx(p)
    assert time.perf_counter() - t < 5
    assert SHEET in info.value.message


def test_honest_huge_ratio_bomb_still_refused(tmp_path: Path) -> None:
    """Declared truthfully: 400 MiB from well under 1 MiB, refused on the declared sizes alone."""
    parts = workbook_parts(tmp_path / "base.xlsx")
    sheet = dict(parts)[SHEET]
    size = 400 * 2**20  # a whole number of SPACE_UNITs
    p = tmp_path / "bomb.xlsx"
    write_zip(
        p, parts, streams={SHEET: sheet_bomb(sheet, SPACE_UNIT, size)}, declared={SHEET: len(sheet) + size}
    )
    assert p.stat().st_size < 2**20
    t = time.perf_counter()
    for call in (lambda: load_table(p, {"age": AGE}), lambda: suggest_types(p)):
        with pytest.raises(InputError, match="would unpack to 400 MiB") as info:
            call()
        assert "zip bomb" in info.value.message
    assert time.perf_counter() - t < 5  # refused before anything is inflated


@pytest.mark.parametrize("flags", [0, 0x8], ids=["sizes-in-headers", "data-descriptor"])
def test_normal_workbook_still_loads(tmp_path: Path, flags: int) -> None:
    p = tmp_path / "t.xlsx"
    write_zip(p, workbook_parts(tmp_path / "base.xlsx"), flags=flags)
    t = load_table(p, {"age": AGE, "wage": WAGE})
    assert t.n_rows == 3
    assert t.columns["age"].values.tolist() == [34, 61, 5]
    assert t.columns["age"].missing().tolist() == [False, False, False]
    assert t.columns["wage"].values.tolist() == [12.5, 7.0, 999.25]
    direct = tmp_path / "direct.xlsx"
    workbook_parts(direct)  # the file as xlsxwriter wrote it
    assert load_table(direct, {"age": AGE}).columns["age"].values.tolist() == [34, 61, 5]


def test_part_declared_larger_than_it_is_refused(tmp_path: Path) -> None:
    parts = workbook_parts(tmp_path / "base.xlsx")
    real = len(dict(parts)[SHEET])
    p = tmp_path / "t.xlsx"
    write_zip(p, parts, declared={SHEET: real + 1000})
    with pytest.raises(InputError) as info:
        load_table(p, {"age": AGE})
    m = info.value.message
    assert SHEET in m and f"unpacks to {real} bytes, not the {real + 1000} bytes" in m, m


@pytest.mark.parametrize(
    ("change", "expected"),
    [("bzip2", "compression method 12"), ("encrypted", "is encrypted"), ("truncated", "is damaged")],
)
def test_odd_parts_are_refused_by_name(tmp_path: Path, change: str, expected: str) -> None:
    import bz2

    parts = workbook_parts(tmp_path / "base.xlsx")
    sheet = dict(parts)[SHEET]
    p = tmp_path / "t.xlsx"
    if change == "bzip2":  # a method calamine's zip reader lacks, and one whose size this check can't see
        write_zip(p, parts, streams={SHEET: bz2.compress(sheet)}, method={SHEET: 12})
    elif change == "encrypted":
        write_zip(p, parts, flags=0x1)
    else:
        write_zip(p, parts, streams={SHEET: raw_deflate(sheet)[:-40]})
    with pytest.raises(InputError) as info:
        load_table(p, {"age": AGE})
    m = info.value.message
    assert expected in m and repr(SHEET if change != "encrypted" else "[Content_Types].xml") in m, m


# ----------------------------------------------------------------------------- the readers disagree
# calamine must read a copy of the parts the check inflated, never the file itself: Python's zipfile
# and calamine's zip reader can see different parts in one crafted archive.

HIDDEN_ROWS: list[list[object]] = [["age", "wage"], [111, 1.0], [112, 2.0], [113, 3.0]]


def book_parts(path: Path, rows: list[list[object]]) -> list[tuple[str, bytes]]:
    """The parts of a workbook of ``rows`` written by xlsxwriter, in archive order."""
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    for r, row in enumerate(rows):
        ws.write_row(r, 0, row)
    wb.close()
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def zip_records(
    parts: list[tuple[str, bytes]], shown_at: int, streams: dict[str, bytes] | None = None
) -> tuple[bytes, bytes]:
    """Deflated local records of ``parts`` and central records giving their offsets as if the local
    records started at ``shown_at``; ``streams`` replaces a part's compressed data."""
    local, central = io.BytesIO(), []
    for name, data in parts:
        comp, crc, raw_name = (streams or {}).get(name, raw_deflate(data)), zlib.crc32(data), name.encode()
        offset = shown_at + local.tell()
        local.write(b"PK\x03\x04" + le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(crc, 4))
        local.write(le(len(comp), 4) + le(len(data), 4) + le(len(raw_name), 2) + le(0, 2) + raw_name + comp)
        central.append(
            b"PK\x01\x02"
            + le(20, 2)
            + le(20, 2)
            + le(0, 2)
            + le(8, 2)
            + le(0, 4)
            + le(crc, 4)
            + le(len(comp), 4)
            + le(len(data), 4)
            + le(len(raw_name), 2)
            + le(0, 6)
            + le(0, 2)
            + le(0, 4)
            + le(offset, 4)
            + raw_name
        )
    return local.getvalue(), b"".join(central)


def two_faced(
    tmp_path: Path, hidden: list[tuple[str, bytes]], streams: dict[str, bytes] | None = None
) -> tuple[Path, list[tuple[str, bytes]]]:
    """An archive whose end record points at the central directory of ``hidden``, which calamine's
    zip reader takes (it finds a directory where the record says), while Python's zipfile reads the
    directory just before the end record (counting the difference as prepended bytes) and sees the
    small harmless workbook ROWS; returns the path and the parts Python sees."""
    shown = workbook_parts(tmp_path / "shown.xlsx")
    assert len(shown) == len(hidden)
    hidden_local, hidden_central = zip_records(hidden, 0, streams)
    shown_local, _ = zip_records(shown, 0)
    hidden_local += bytes(max(0, len(shown_local) - len(hidden_local)))  # keeps Python's offsets >= 0
    at = len(hidden_local) + len(hidden_central)  # the harmless parts follow the hidden directory
    shift = at + len(shown_local) - len(hidden_local)  # what Python adds to every offset
    _, shown_central = zip_records(shown, at - shift)
    end = b"PK\x05\x06" + le(0, 4) + le(len(shown), 2) * 2 + le(len(shown_central), 4)
    end += le(len(hidden_local), 4) + le(0, 2)
    p = tmp_path / "two-faced.xlsx"
    p.write_bytes(hidden_local + hidden_central + shown_local + shown_central + end)
    with zipfile.ZipFile(p) as z:  # what the check sees
        assert [(i.filename, z.read(i)) for i in z.infolist()] == shown
    return p, shown


@pytest.fixture
def calamine_inputs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, list[tuple[str, bytes]], bool]]:
    """Record each file pl.read_excel is given: its path, its parts, and whether all are stored."""
    import polars as pl

    real, seen = pl.read_excel, []

    def read_excel(source: object, **kwargs: object) -> object:
        with zipfile.ZipFile(str(source)) as z:
            infos = z.infolist()
            parts = [(i.filename, z.read(i)) for i in infos]
        seen.append((Path(str(source)), parts, all(i.compress_type == zipfile.ZIP_STORED for i in infos)))
        return real(source, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(pl, "read_excel", read_excel)
    return seen


@pytest.fixture
def temp_files(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record each temporary file made while loading."""
    import tempfile

    real, made = tempfile.mkstemp, []

    def mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
        fd, name = real(*args, **kwargs)  # type: ignore[call-overload]
        if Path(name).name.startswith("dpdesk-"):  # not xlsxwriter's own
            made.append(Path(name))
        return fd, name

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    return made


def test_two_faced_archive_shows_calamine_only_the_checked_parts(
    tmp_path: Path, calamine_inputs: list, temp_files: list[Path]
) -> None:
    import polars as pl

    p, shown = two_faced(tmp_path, book_parts(tmp_path / "hidden.xlsx", HIDDEN_ROWS))
    # the file itself shows calamine the hidden workbook: read directly, it gets 111..113
    assert pl.read_excel(p, engine="calamine", infer_schema_length=0)["age"].to_list() == [
        "111",
        "112",
        "113",
    ]
    calamine_inputs.clear()
    t = load_table(p, {"age": AGE, "wage": WAGE})
    assert t.columns["age"].values.tolist() == [34, 61, 5]  # the checked sheet
    assert t.columns["wage"].values.tolist() == [12.5, 7.0, 999.25]
    [(given, parts, stored)] = calamine_inputs
    assert given != p and given in temp_files and stored
    assert parts == shown  # calamine got exactly the parts the check inflated
    assert not given.exists()


def test_the_preview_and_the_type_suggestion_see_only_the_checked_parts(
    tmp_path: Path, calamine_inputs: list, temp_files: list[Path]
) -> None:
    """The app's preview (peek) reads a workbook as the load does: it checked the parts, then let calamine read
    the file itself, which a two-faced archive shows another sheet (or a bomb)."""
    p, shown = two_faced(tmp_path, book_parts(tmp_path / "hidden.xlsx", HIDDEN_ROWS))
    for call in (peek, suggest_types):
        calamine_inputs.clear()
        got = call(p)
        if isinstance(got, Peek):
            assert [r[got.header.index("age")] for r in got.rows] == ["34", "61", "5"]  # the checked sheet
        [(given, parts, stored)] = calamine_inputs
        assert given != p and given in temp_files and stored, call
        assert parts == shown
        assert not given.exists()


@pytest.mark.slow
def test_two_faced_archive_hiding_a_bomb_loads_the_checked_sheet(tmp_path: Path) -> None:
    """The hidden sheet inflates to 3 GiB: read from the file itself, calamine aborts the process."""
    base = workbook_parts(tmp_path / "base.xlsx")
    bomb = sheet_bomb(dict(base)[SHEET], ROW_UNIT, BOMB)
    p, _ = two_faced(tmp_path, base, streams={SHEET: bomb})
    got = load_in_capped_child(p, calls=1)
    assert got["messages"] == [None]
    assert float(got["seconds"]) < 30  # type: ignore[arg-type]
    t = load_table(p, {"age": AGE})
    assert t.columns["age"].values.tolist() == [34, 61, 5]


@pytest.mark.slow
def test_two_faced_archive_hiding_a_bomb_is_sampled_safely(tmp_path: Path) -> None:
    base = workbook_parts(tmp_path / "base.xlsx")
    p, _ = two_faced(tmp_path, base, streams={SHEET: sheet_bomb(dict(base)[SHEET], ROW_UNIT, BOMB)})
    got = load_in_capped_child(p)  # load_table, then suggest_types
    assert got["messages"] == [None, None]


@pytest.mark.parametrize("twin", ["xl/worksheets/sheet1.xml", "XL/Worksheets/Sheet1.xml"])
def test_duplicate_part_names_are_refused(tmp_path: Path, calamine_inputs: list, twin: str) -> None:
    parts = workbook_parts(tmp_path / "base.xlsx")
    hidden = dict(book_parts(tmp_path / "hidden.xlsx", HIDDEN_ROWS))[SHEET]
    for order, second in (([*parts, (twin, hidden)], twin), ([(twin, hidden), *parts], SHEET)):
        p = tmp_path / "twins.xlsx"
        write_zip(p, order)
        for call in (lambda p=p: load_table(p, {"age": AGE}), lambda p=p: guards.check_xlsx(p)):
            with pytest.raises(InputError) as info:
                call()
            m = info.value.message
            assert f"the part {second!r} appears twice" in m and "forged" in m, m
    assert calamine_inputs == []


def test_normal_workbook_reaches_calamine_as_its_checked_parts_stored(
    tmp_path: Path, calamine_inputs: list, temp_files: list[Path]
) -> None:
    direct = tmp_path / "direct.xlsx"
    parts = workbook_parts(direct)  # as xlsxwriter wrote it
    t = load_table(direct, {"age": AGE, "wage": WAGE})
    assert t.columns["age"].values.tolist() == [34, 61, 5]
    assert t.columns["wage"].values.tolist() == [12.5, 7.0, 999.25]
    [(given, got, stored)] = calamine_inputs
    assert got == parts and stored and given in temp_files and given != direct
    assert temp_files and not any(f.exists() for f in temp_files)


def test_the_copy_is_removed_after_a_refusal_and_after_a_calamine_error(
    tmp_path: Path, calamine_inputs: list, temp_files: list[Path]
) -> None:
    parts = workbook_parts(tmp_path / "base.xlsx")
    bomb = forged_bomb(tmp_path, SPACE_UNIT, 0)
    with pytest.raises(InputError, match="zip bomb"):
        load_table(bomb, {"age": AGE})
    assert calamine_inputs == [] and len(temp_files) == 1
    no_book = tmp_path / "no-book.xlsx"  # sound parts, but no workbook for calamine to find
    write_zip(no_book, [(n, d) for n, d in parts if n != "xl/workbook.xml"])
    with pytest.raises(InputError, match="cannot read this xlsx file") as info:
        load_table(no_book, {"age": AGE})
    assert "dpdesk-" not in info.value.message  # the message does not name the copy
    assert len(calamine_inputs) == 1 and len(temp_files) == 2
    assert not any(f.exists() for f in temp_files)


def test_a_part_whose_checksum_is_wrong_is_refused(tmp_path: Path) -> None:
    """The copy gets a fresh checksum, so the check compares the part's own."""
    parts = workbook_parts(tmp_path / "base.xlsx")
    sheet = dict(parts)[SHEET]
    changed = sheet.replace(b"<v>34</v>", b"<v>99</v>")
    p = tmp_path / "t.xlsx"
    write_zip(p, parts, streams={SHEET: raw_deflate(changed)})
    with pytest.raises(InputError, match="is damaged") as info:
        load_table(p, {"age": AGE})
    assert repr(SHEET) in info.value.message


def test_a_full_disk_is_reported_and_leaves_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temp_files: list[Path]
) -> None:
    import errno
    import shutil
    import tempfile

    p = tmp_path / "t.xlsx"
    workbook_parts(p)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def full(self: object, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:  # writing the copy fails
        m.setattr(zipfile._ZipWriteFile, "write", full)  # type: ignore[attr-defined]
        with pytest.raises(InputError) as info:
            load_table(p, {"age": AGE})
        assert f"not enough free disk space in {tmp_path}" in info.value.message
    with monkeypatch.context() as m:  # too little room to begin with
        m.setattr(shutil, "disk_usage", lambda where: shutil._ntuple_diskusage(10**9, 10**9, 1000))  # type: ignore[attr-defined]
        with pytest.raises(InputError) as info:
            load_table(p, {"age": AGE})
        assert f"not enough free disk space in {tmp_path}" in info.value.message
    assert len(temp_files) == 2 and not any(f.exists() for f in temp_files)
    assert load_table(p, {"age": AGE}).columns["age"].values.tolist() == [34, 61, 5]
