"""The header reader of ``dpdesk plan new`` (:mod:`dpdesk.core.loading.header`): any bytes either give names or
an :class:`InputError`, and what it reads is the first record only."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from dpdesk.core.common.errors import InputError
from dpdesk.core.loading.header import csv_header, header_encoding, header_line


@given(st.binary(max_size=300))
def test_any_bytes_give_names_or_an_input_error(raw: bytes) -> None:
    f = io.BytesIO(raw)
    try:
        line = header_line(f, "t.csv")
        header = csv_header(line, "t.csv")
    except InputError as exc:
        assert exc.path == "t.csv"
        return
    assert raw.startswith(line) and f.tell() == len(line)
    assert all(isinstance(n, str) and n == n.strip() for n in header.names)


@given(st.lists(st.text(alphabet="abcxyz ,;", min_size=1, max_size=12), min_size=1, max_size=5))
def test_the_line_ends_at_the_first_newline_outside_quotes(names: list[str]) -> None:
    head = ",".join(f'"{n}\n"' for n in names).encode() + b"\n"
    f = io.BytesIO(head + b"1,2,3\n" * 3)
    assert header_line(f, "t.csv") == head and f.tell() == len(head)
    assert csv_header(head, "t.csv", delimiter=",").names == tuple(f"{n}\n".strip() for n in names)


def test_the_encoding_is_judged_from_the_header_alone() -> None:
    assert header_encoding(b"age,wage\n") == "utf-8"
    assert header_encoding("Größe,Straße\n".encode()) == "utf-8"
    assert header_encoding("Größe,Straße\n".encode("cp1252")) == "cp1252"
    assert header_encoding("Größe,Alter\n".encode("cp1252")) == "cp1252"  # "öß" alone is a GB2312 character
    assert header_encoding("Gebühr,Bank\n".encode("cp1252")) == "cp1252"
    assert header_encoding("年龄,地区\n".encode("gbk")) == "gb18030"
    assert header_encoding("收入(元),ID号\n".encode("gbk")) == "gb18030"
    assert header_encoding("年龄,地区\n".encode("utf-16")) == "utf-16"
    assert header_encoding("\ufeffage\n".encode()) == "utf-8-sig"
