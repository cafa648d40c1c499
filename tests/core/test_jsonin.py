"""The one reader of untrusted JSON (``dpdesk/core/common/jsonin.py``, issue 26, item 5): each of its limits hit
once, with the reason and the message a caller turns into its own; each limit's edge still read.

Deterministic: fixed inputs, no randomness, no timing.
"""

from __future__ import annotations

from typing import Any

import pytest

from dpdesk.core.common import jsonin
from dpdesk.core.common.jsonin import JsonInputError, JsonKind, read_json

DEEP = jsonin.MAX_DEPTH
DIGITS = jsonin.MAX_INT_DIGITS

#: reason -> (text, kind, what the message says, the key named)
REFUSED: dict[str, tuple[bytes | str, JsonKind, str, str]] = {
    "size": (
        b'{"a": "' + b"x" * jsonin.OFFICER.max_bytes + b'"}',
        jsonin.OFFICER,
        "larger than 65536 bytes",
        "",
    ),
    "utf8": (b'{"a": "\xff"}', jsonin.PLAN, "not UTF-8 text (byte 7)", ""),
    "bom": (b'\xef\xbb\xbf{"a": 1}', jsonin.LEDGER_LINE, "byte order mark", ""),
    "depth": ("[" * (DEEP + 1) + "]" * (DEEP + 1), jsonin.PLAN, f"nested more than {DEEP} levels deep", ""),
    "syntax": ('{"a": 1,}', jsonin.PLAN, "not JSON (", ""),
    "constant": ('{"q": [1, {"e": NaN}]}', jsonin.PLAN, "NaN is not a number dpdesk writes", "q[1].e"),
    "overflow": ('{"q": [{"e": -1e999}]}', jsonin.PLAN, "the number -1e999 is too large", "q[0].e"),
    "int": (
        '{"a": ' + "9" * (DIGITS + 1) + "}",
        jsonin.PLAN,
        f"an integer of more than {DIGITS} digits",
        "a",
    ),
    "duplicate": ('{"a": {"b": 1, "b": 2}}', jsonin.PLAN, 'the key "b" appears twice', ""),
}


def test_every_reason_has_a_case() -> None:
    assert sorted(REFUSED) == sorted(jsonin.REASONS)


@pytest.mark.parametrize("reason", list(REFUSED))
def test_each_limit_is_refused_with_its_message(reason: str) -> None:
    raw, kind, message, key = REFUSED[reason]
    with pytest.raises(JsonInputError) as err:
        read_json(raw, kind)
    assert err.value.reason == reason and message in err.value.message, err.value.message
    assert err.value.key == key
    assert isinstance(err.value, ValueError)  # callers that caught the decoder's ValueError still catch it


def _nested(n: int) -> Any:
    """``n`` lists, one inside the other."""
    value: list[Any] = []
    for _ in range(n - 1):
        value = [value]
    return value


#: each limit's edge: read, and read as JSON reads it
ACCEPTED: dict[str, tuple[bytes | str, JsonKind, Any]] = {
    "at the size": (b'"' + b"x" * (jsonin.OFFICER.max_bytes - 2) + b'"', jsonin.OFFICER, "x" * 65534),
    "a BOM where a person edits": (b'\xef\xbb\xbf{"a": 1}', jsonin.PLAN, {"a": 1}),
    "at the depth": ("[" * DEEP + "]" * DEEP, jsonin.PLAN, _nested(DEEP)),
    "brackets in strings": ('[["' + "[" * 100 + '\\"", "\\\\"]]', jsonin.PLAN, [["[" * 100 + '"', "\\"]]),
    "closing brackets in a string": (
        '["' + "]" * 100 + '", ' + "[" * (DEEP - 1) + "]" * (DEEP - 1) + "]",
        jsonin.PLAN,
        ["]" * 100, _nested(DEEP - 1)],
    ),
    "at the digits": ("[-" + "9" * DIGITS + "]", jsonin.PLAN, [-int("9" * DIGITS)]),
    "long digits in a string": ('["' + "9" * 5000 + '"]', jsonin.PLAN, ["9" * 5000]),
    "the same key in two objects": ('[{"a": 1}, {"a": 2}]', jsonin.PLAN, [{"a": 1}, {"a": 2}]),
    "large finite numbers": ("[1.7e308, -1e-320]", jsonin.PLAN, [1.7e308, -1e-320]),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_each_limit_s_edge_is_read(case: str) -> None:
    raw, kind, value = ACCEPTED[case]
    assert read_json(raw, kind) == value


def test_brackets_in_a_string_cannot_hide_nesting() -> None:
    """Closing brackets inside strings (and escaped quotes before them) do not lower the depth counted."""
    hidden = '["\\\\", "\\"' + "]" * 50 + '", ' + "[" * DEEP + "]" * DEEP + "]"
    with pytest.raises(JsonInputError) as err:
        read_json(hidden, jsonin.PLAN)
    assert err.value.reason == "depth"


def test_a_bom_is_refused_only_where_dpdesk_wrote_the_file() -> None:
    doc = '\ufeff{"a": 1}'
    assert read_json(doc, jsonin.OFFICER) == {"a": 1}
    for kind in (jsonin.LEDGER_LINE, jsonin.PACKAGE, jsonin.HOME_FILE, jsonin.REGISTER):
        with pytest.raises(JsonInputError, match="byte order mark"):
            read_json(doc, kind)


def test_the_deepest_nesting_the_decoder_could_not_reach_is_a_message() -> None:
    with pytest.raises(JsonInputError) as err:
        read_json("[" * 100_000 + "]" * 100_000, jsonin.PLAN)
    assert err.value.reason == "depth"
