"""User-supplied text made safe to show: control characters become visible escapes.

Titles, names, labels, reasons and file names come from plans, packages, ledgers and the command line. Shown
raw, an escape sequence or a carriage return could rewrite what a terminal, the app or a PDF displays (a
forged "Intact.", a blanked line). :func:`shown` is the one place that makes them visible.
"""

from __future__ import annotations

#: Characters shown as escapes: C0 controls (newline and tab included), DEL, C1 controls, the line and paragraph
#: separators, and the bidirectional formatting characters that reorder what is displayed.
_INVISIBLE = (
    [*range(0x20), *range(0x7F, 0xA0)]
    + [0x2028, 0x2029, 0x200E, 0x200F, 0xFEFF]
    + [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
_TABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _INVISIBLE} | {
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
}
_TABLE_LINES = {c: v for c, v in _TABLE.items() if c != 0x0A}


def shown(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``, ``\\u202e``).

    ``keep_newlines`` keeps line breaks (for a multi-line message of dpdesk's own).

    >>> shown("ok\\x1b[2K\\rIntact.")
    'ok\\\\x1b[2K\\\\rIntact.'
    >>> shown("a\\nb"), shown("a\\nb", keep_newlines=True)
    ('a\\\\nb', 'a\\nb')
    """
    return str(text).translate(_TABLE_LINES if keep_newlines else _TABLE)
