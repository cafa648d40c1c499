"""The one type suggestion, used by the command line (``dpdesk suggest``) and the app (the schema view).

Both read the same sample, :func:`~dpdesk.core.loading.peek.peek` of the first
:data:`~dpdesk.core.loading.peek.SAMPLE_ROWS` data rows, and apply one rule per column to its non-empty values
(a value is empty when it is blank after trimming spaces):

* ``int`` when every value is a whole number written with digits only (an optional sign, no decimal point, no
  exponent: ``42``, ``-7``, ``+3``);
* ``float`` when every value is a number and at least one is not written as a whole number: a decimal point or
  an exponent (``1.5``, ``2.``, ``.5``, ``1e3``), or the words ``inf``, ``infinity`` and ``nan`` in any case,
  which the loader reads as numbers too (an infinity is clamped to the bounds, ``nan`` counts as missing);
* ``category`` otherwise: some value is not a number as the loader reads one (words, ``1,5`` with a comma
  decimal, ``1_000``, digits other than ASCII ``0``-``9``), or the column has no value in the sample.

Numbers are read as the loader's parser (polars) reads them, so a column suggested as ``int`` or ``float``
loads without unparsable values in the sample. A column of digit codes (``1``, ``2``, ``3``) is suggested as
``int``: the user makes it a category. Only types are suggested, never bounds or categories (public facts that
must come from the user, not from the data), and the sample never leaves the curator's machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from dpdesk.core.loading.peek import SAMPLE_ROWS, Peek, peek

_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE
)


def is_number(text: str) -> bool:
    """Whether ``text`` (already trimmed) is a number as the loader reads one."""
    return _NUMBER.fullmatch(text) is not None


def suggest_type(values: Iterable[str]) -> str:
    """The type the rule suggests for a column's sampled values (see the module's docstring)."""
    kind = "category"
    for raw in values:
        v = raw.strip()
        if not v:
            continue
        if _INTEGER.fullmatch(v):
            if kind == "category":
                kind = "int"
        elif is_number(v):
            kind = "float"
        else:
            return "category"
    return kind


def suggest_from_peek(p: Peek) -> dict[str, str]:
    """Propose a type per column of a peek: int, float or category. Types only, never bounds."""
    return {name: suggest_type(r[i] for r in p.rows if i < len(r)) for i, name in enumerate(p.header)}


def suggest_types(path: str | Path, sample_rows: int = SAMPLE_ROWS) -> dict[str, str]:
    """Propose a type (int, float, category) for each column from the file's first ``sample_rows`` rows.

    Only types are proposed: bounds and categories are public facts the user must supply
    (reading them off the data would leak it).
    """
    return suggest_from_peek(peek(path, sample_rows))
