"""The one reader of untrusted JSON: everything dpdesk parses that came from outside the process.

Plans, stated costs, officer keys, approval and policy files, a package's ``ledger.json`` and ``plan.json`` under
review, the home's register and identity files, ledger lines and exported ledgers are all read by :func:`read_json`,
under one set of limits (docs/files.md, "Reading JSON"):

- at most the kind's bytes (:class:`JsonKind`: :data:`PLAN`, :data:`OFFICER`, :data:`PACKAGE`, :data:`EXPORT`, :data:`LEDGER_LINE`,
  :data:`HOME_FILE`, :data:`REGISTER`), checked before a byte is parsed;
- UTF-8; a byte order mark only where a person's editor may add one (:attr:`JsonKind.bom`: plans, stated costs, the
  officer's files), never in what dpdesk wrote itself (a ledger line, the home's files, a package);
- nested at most :data:`MAX_DEPTH` levels (checked before parsing, so the decoder never recurses deeply);
- no NaN, Infinity or -Infinity, no number that overflows to infinity (dpdesk never writes them);
- integers of at most :data:`MAX_INT_DIGITS` digits (below Python's own limit on converting text to an int, 4,300
  digits, whose bare ValueError would otherwise be the message; the work a number takes to read stays small);
- no key twice in one object. JSON leaves duplicate keys undefined: Python keeps the last, other readers the first,
  so a plan, a signed approval or a hashed ledger line holding one would mean one thing to dpdesk and another to a
  person checking it with another tool (and a ledger line's hash, taken over the parsed object, would not cover the
  hidden value). dpdesk never writes one; a person who typed a key twice is told which.

A refusal is a :class:`JsonInputError` (a ``ValueError``) with a ``reason`` (one of :data:`REASONS`) and a
``message`` in the user's language; each caller turns it into its own message and exit code.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final

from dpdesk.i18n import _

#: Arrays and objects nested deeper than this are refused (dpdesk's own files nest at most about a dozen levels).
MAX_DEPTH: Final = 32
#: Integers of more digits than this are refused: beyond any number a plan, a ledger or an officer's file holds (a
#: float ends near 309 digits), and below Python's own limit (4,300 digits), whose bare ValueError names nothing.
MAX_INT_DIGITS: Final = 1000

#: What a refusal says went wrong (:attr:`JsonInputError.reason`).
REASONS: Final = ("size", "utf8", "bom", "depth", "syntax", "constant", "overflow", "int", "duplicate")


@dataclass(frozen=True)
class JsonKind:
    """A kind of JSON file: how many bytes of it are read, and whether a byte order mark may open it."""

    name: str
    max_bytes: int
    bom: bool


#: A plan (or a plan file under review), a file of stated costs: 16 MiB, as :data:`smallfile.MAX_PLAN_BYTES`.
PLAN: Final = JsonKind("plan", 16 * 1024 * 1024, bom=True)
#: An officer's key, approval or policy file: 64 KiB.
OFFICER: Final = JsonKind("officer", 64 * 1024, bom=True)
#: A package's ledger.json, an exported ledger read whole: 512 MiB.
PACKAGE: Final = JsonKind("package", 512 * 1024 * 1024, bom=False)
#: An exported ledger read back whole (``dpdesk ledger export``'s file, perhaps saved again by an editor): 512 MiB.
EXPORT: Final = JsonKind("export", 512 * 1024 * 1024, bom=True)
#: One line of a ledger: 256 MiB (a release's entry holds its plan and released values).
LEDGER_LINE: Final = JsonKind("ledger line", 256 * 1024 * 1024, bom=False)
#: A file dpdesk keeps in its home besides the ledgers (content identities, governance records): 16 MiB.
HOME_FILE: Final = JsonKind("home file", 16 * 1024 * 1024, bom=False)
#: A register file of the home (a dataset's recorded head): 1 MiB.
REGISTER: Final = JsonKind("register", 1024 * 1024, bom=False)

_BOM: Final = "\ufeff"


class JsonInputError(ValueError):
    """Untrusted JSON refused by :func:`read_json`: ``reason`` (one of :data:`REASONS`) and ``message``.

    ``key`` names the value refused for ``constant``, ``overflow`` and ``int`` (as a plan's messages name keys,
    ``queries[2].epsilon``); ``line`` and ``column`` say where the text stops being JSON (``syntax``), ``detail``
    holds the decoder's own words for it, the byte for ``utf8``, the token for ``constant`` and ``overflow``."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        key: str = "",
        detail: str = "",
        line: int = 0,
        column: int = 0,
    ) -> None:
        super().__init__(message)
        self.reason, self.message, self.key, self.detail = reason, message, key, detail
        self.line, self.column = line, column


def read_json(raw: bytes | str, kind: JsonKind) -> Any:
    """The value of untrusted JSON text (UTF-8 bytes or text) of ``kind``, within the limits of this module;
    :class:`JsonInputError` otherwise."""
    size = len(raw)
    if size > kind.max_bytes:
        raise JsonInputError("size", _("larger than {n} bytes").format(n=kind.max_bytes), detail=str(size))
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(
                "utf8", _("not UTF-8 text (byte {n})").format(n=exc.start), detail=str(exc.start)
            ) from None
    else:
        text = raw
    if text.startswith(_BOM):
        if not kind.bom:
            raise JsonInputError(
                "bom", _("it starts with a byte order mark (BOM), which dpdesk never writes here")
            )
        text = text[1:]
    if _deepest(text) > MAX_DEPTH:
        raise _too_deep()
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int if _LONG_DIGITS.search(text) else None,
        )
    except json.JSONDecodeError as exc:
        raise JsonInputError(
            "syntax",
            _("not JSON ({err})").format(err=exc.msg),
            detail=exc.msg,
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except JsonInputError as exc:
        if exc.reason in ("constant", "overflow", "int"):
            exc.key = _where_refused(text)
        raise
    except RecursionError:  # a backstop: the depth was checked above
        raise _too_deep() from None


def _too_deep() -> JsonInputError:
    return JsonInputError("depth", _("nested more than {n} levels deep").format(n=MAX_DEPTH))


#: Every byte but the brackets, deleted by ``bytes.translate`` when the depth is measured.
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
#: A run of digits longer than an integer may be: only then is each integer's length checked (a call per integer)
_LONG_DIGITS = re.compile(f"[0-9]{{{MAX_INT_DIGITS + 1}}}")


def _deepest(text: str) -> int:
    """How deep arrays and objects nest in JSON text (brackets inside strings skipped), in passes at C speed:
    escaped backslashes and quotes removed (pairs from the left, as JSON reads them), then every other quote opens
    a string, then only the brackets outside strings are kept and counted."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(data.split(b'"')[0::2]).translate(None, _NOT_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _refuse_constant(name: str) -> Any:
    raise JsonInputError("constant", _("{name} is not a number dpdesk writes").format(name=name), detail=name)


def _finite_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise JsonInputError(
            "overflow", _("the number {x} is too large").format(x=text[:40]), detail=text[:40]
        )
    return x


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + text.startswith("-"):
        raise JsonInputError("int", _("an integer of more than {n} digits").format(n=MAX_INT_DIGITS))
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _v in pairs:
            if k in seen:
                raise JsonInputError(
                    "duplicate", _("the key {key} appears twice").format(key=json.dumps(k)[:80]), detail=k
                )
            seen.add(k)
    return out


# ----------------------------------------------------------------------------- where a refused number is


class _Marked(str):
    """A NaN, Infinity, overflowing number or integer of too many digits, kept in a second reading to name its
    key."""


def _where_refused(text: str) -> str:
    """The key of the first refused number (non-finite, or an integer of too many digits) of JSON text read once
    (``queries[2].epsilon``, ``[0]``), "" for the whole value: read again with those numbers marked."""

    def mark_float(token: str) -> Any:
        x = float(token)
        return x if math.isfinite(x) else _Marked(token)

    def mark_int(token: str) -> Any:
        return _Marked(token) if len(token) > MAX_INT_DIGITS + token.startswith("-") else int(token)

    try:
        value = json.loads(text, parse_constant=_Marked, parse_float=mark_float, parse_int=mark_int)
    except ValueError:  # text that is not JSON after the number: the number is named without its key
        return ""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, k = stack.pop()
        if isinstance(v, _Marked):
            return k
        if isinstance(v, dict):
            stack.extend(
                (item, f"{k}.{name}" if k else str(name)) for name, item in reversed(list(v.items()))
            )
        elif isinstance(v, list):
            stack.extend((item, f"{k}[{i}]") for i, item in reversed(list(enumerate(v))))
    return ""  # pragma: no cover - the first reading found one
