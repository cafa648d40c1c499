"""Released values as text: one :class:`Row` per value, numbers in plain notation, rounded once, and release.csv.

Everything here is post-processing of values that were already noised and charged: rounding to three
significant digits of the 95% interval's half-width, plain notation, the CSV (formula-like text
neutralised) and the hash of the released values recorded in the ledger.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext

import numpy as np

from dpdesk.core.common.text import shown
from dpdesk.core.model.spec import canonical_json

#: Enough digits for any finite float written out in full (10**308 has 309), so rounding never runs out of precision.
_WIDE = Context(prec=400, Emax=1000, Emin=-1000)

CSV_COLUMNS = ("query", "group", "value", "ci_low", "ci_high", "mechanism", "epsilon", "delta")


@dataclass(frozen=True)
class Row:
    """One released value (one line of release.csv); numbers already in plain notation."""

    query: str
    group: str
    value: str
    ci_low: str
    ci_high: str
    mechanism: str
    epsilon: str
    delta: str

    def as_list(self) -> list[str]:
        """The row's cells in CSV column order."""
        return [
            self.query,
            self.group,
            self.value,
            self.ci_low,
            self.ci_high,
            self.mechanism,
            self.epsilon,
            self.delta,
        ]


def fmt_number(x: float | int) -> str:
    """A number in plain notation (no exponent), as short as round-trips.

    >>> fmt_number(1e-07), fmt_number(12.0), fmt_number(-3), fmt_number(2.5e20)
    ('0.0000001', '12', '-3', '250000000000000000000')
    """
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not math.isfinite(x):
        raise ValueError("a released value must be finite")
    d = Decimal(repr(float(x)))
    with localcontext(_WIDE):
        if d == d.to_integral_value():
            return str(d.quantize(Decimal(1)))
        return format(d, "f")


def rounding_step(halfwidth: float) -> Decimal:
    """The power of ten that keeps three significant digits of a 95% interval's half-width.

    >>> rounding_step(29.96), rounding_step(209997.0), rounding_step(0.0123)
    (Decimal('0.1'), Decimal('1E+3'), Decimal('0.0001'))
    """
    if not math.isfinite(halfwidth) or halfwidth <= 0:
        return Decimal(1)
    return Decimal(1).scaleb(math.floor(math.log10(halfwidth)) - 2)


def _rounded(x: float | int, step: Decimal) -> str:
    with localcontext(_WIDE):
        if isinstance(x, int):
            return (
                str(x) if step < 1 else fmt_number(int(Decimal(x).quantize(step, rounding="ROUND_HALF_EVEN")))
            )
        d = Decimal(repr(float(x))).quantize(step, rounding="ROUND_HALF_EVEN")
        return fmt_number(float(d)) if step >= 1 else format(d, "f")


def rounded_row(
    query: str,
    cell: str,
    value: float | int,
    low: float | int,
    high: float | int,
    mechanism: str,
    eps: str,
    delta: str,
    spread: float | None = None,
) -> Row:
    """One row with its numbers rounded once (post-processing): to 3 significant digits of ``spread``, the
    half-width of the value's own noise (by default its interval's half-width), never finer than needed;
    whole numbers (counts) stay whole.

    A statistic whose 95% interval can be a single point (the noise is 0 with probability 95% or more)
    passes a spread of at least one step of its noise grid instead
    (:func:`dpdesk.core.dp.queries_base.value_spread`, :func:`dpdesk.core.dp.queries_base.ratio_halfwidths`), so that the rounding step
    follows the noise down and a share or a mean is never published as a whole number at a high epsilon.
    """
    if spread is None:
        spread = max(float(value) - float(low), float(high) - float(value))
    step = rounding_step(spread)
    if isinstance(value, int):
        step = max(step, Decimal(1))
        return Row(query, cell, str(value), _rounded(low, step), _rounded(high, step), mechanism, eps, delta)
    return Row(
        query, cell, _rounded(value, step), _rounded(low, step), _rounded(high, step), mechanism, eps, delta
    )


def rows_to_csv(rows: Sequence[Row], *, bom: bool = False) -> bytes:
    """release.csv bytes: the header and one line per value, UTF-8 (optionally with a BOM)."""
    return csv_bytes(CSV_COLUMNS, [r.as_list() for r in rows], bom=bom)


def csv_bytes(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    comments: Sequence[str] = (),
    bom: bool = False,
) -> bytes:
    """The one CSV writer of dpdesk (release.csv, simulate's CSV): UTF-8 (optionally with a BOM), lines ending
    in "\n", every cell that a spreadsheet would run as a formula neutralised, ``comments`` as leading
    ``# `` lines (control characters made visible)."""
    import csv

    # csv quotes a field holding any character of its line terminator: "\r\n" makes it quote fields with
    # either (a lone "\r" in a category label would otherwise break the row); lines still end in "\n"
    lines = [f"# {shown(c)}\n" for c in comments]
    table = [list(header)] + [[neutralise(str(c)) for c in r] for r in rows]
    body = io.StringIO()
    csv.writer(body, lineterminator="\r\n").writerows(table)
    text = body.getvalue()
    if text.count("\r\n") == len(table):  # every "\r\n" ends a row (no cell holds one): one pass
        lines.append(text.replace("\r\n", "\n"))
    else:  # a cell holds "\r\n": row by row, so that only the rows' own ends change
        for cells in table:
            one = io.StringIO()
            csv.writer(one, lineterminator="\r\n").writerow(cells)
            lines.append(one.getvalue()[:-2] + "\n")
    data = "".join(lines).encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if bom else data


def neutralise(cell: str) -> str:
    """Prefix text a spreadsheet would run as a formula with ' (numbers are left alone)."""
    if cell and cell[0] in "=+-@\t\r":
        try:
            float(cell)
        except ValueError:
            return "'" + cell
    return cell


def rows_hash(rows: Sequence[Row]) -> str:
    """SHA-256 of the released values (canonical JSON of the rows)."""
    return hashlib.sha256(canonical_json([r.as_list() for r in rows]).encode("utf-8")).hexdigest()
