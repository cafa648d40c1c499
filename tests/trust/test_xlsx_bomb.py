"""Zip bombs in .xlsx whose sizes are forged: the check must count the bytes a part really unpacks to.

calamine's zip reader inflates a part until its deflate stream ends, whatever size the archive
declares: before the check inflated the parts itself, a 3 GiB sheet declared as a few hundred bytes
passed it and made calamine abort the whole process on a failed multi-GiB allocation. The bombs are
opened in a child with a capped address space, so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import pytest
import xlsxwriter  # type: ignore[import-untyped]

from dpdesk.core import data as loader
from dpdesk.core.data import load_table, suggest_types
from dpdesk.core.errors import InputError
from dpdesk.core.plan import ColumnSpec

SHEET = "xl/worksheets/sheet1.xml"
AGE = ColumnSpec("age", "int", bounds=(0, 120))
WAGE = ColumnSpec("wage", "float", bounds=(0, 1000))
ROWS = [["age", "wage"], [34, 12.5], [61, 7.0], [5, 999.25]]
#: The child's address space: ample for loading a small workbook, far below what the bombs need.
CAP = 3 * 2**30
BOMB = 3 * 2**30

CHILD = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from dpdesk.core.data import load_table, suggest_types
from dpdesk.core.errors import InputError
from dpdesk.core.plan import ColumnSpec
messages = []
t = time.perf_counter()
for call in (lambda: load_table(sys.argv[1], {"age": ColumnSpec("age", "int", bounds=(0, 120))}),
             lambda: suggest_types(sys.argv[1])):
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
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    for r, row in enumerate(ROWS):
        ws.write_row(r, 0, row)
    wb.close()
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


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
            b"PK\x01\x02" + le(20, 2) + le(20, 2) + le(flags, 2) + le(how, 2) + le(0, 4)
            + le(crc, 4) + le(len(comp), 4) + le(size, 4) + le(len(raw_name), 2) + le(0, 6)
            + le(0, 2) + le(0, 4) + le(offset, 4) + raw_name
        )  # fmt: skip
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


def load_in_capped_child(path: Path) -> dict[str, object]:
    """Run load_table and suggest_types on ``path`` in a child that caps its own address space."""
    env = {**os.environ, "MALLOC_ARENA_MAX": "2"}  # keep the child's address space independent of cores
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(CAP)],
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
        loader._check_xlsx(p)
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
