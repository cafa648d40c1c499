"""Numbers as a person reads them (issue 28 item 5): plain notation, never an exponent (``1e-07`` is
``0.0000001``), a few significant digits, rounded in the direction that keeps a statement true.

A budget figure shown rounded must not promise more than there is: what is *left* is rounded down, what was
*spent* or is *needed* is rounded up; a figure that is only described (a plan's ε, a budget as set) is rounded to
nearest. The ledger and every file keep the exact value.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext
from typing import Literal

Rounding = Literal["nearest", "up", "down"]
#: Significant digits kept before rounding up or down: beyond them a float's difference is representation noise
NOISE_DIGITS = 12
_MODES = {"nearest": ROUND_HALF_UP, "up": ROUND_CEILING, "down": ROUND_FLOOR}


def plain(x: float | int | Decimal, digits: int = 4, rounding: Rounding = "nearest") -> str:
    """``x`` with at most ``digits`` significant digits, in plain notation, trailing zeros dropped.

    >>> plain(1e-07), plain(0.12345), plain(0.12345, rounding="up"), plain(0.12345, rounding="down")
    ('0.0000001', '0.1235', '0.1235', '0.1234')
    >>> plain(2.363), plain(12345.678), plain(0), plain(-0.000123456, 3)
    ('2.363', '12350', '0', '-0.000123')
    >>> plain(1 - 0.9, rounding="down"), plain(0.1 + 0.2, rounding="up")  # float noise is not a shortfall
    ('0.1', '0.3')
    """
    if isinstance(x, float) and not math.isfinite(x):
        return "∞" if x > 0 else ("-∞" if x < 0 else "NaN")
    d = x if isinstance(x, Decimal) else Decimal(repr(float(x))) if isinstance(x, float) else Decimal(int(x))
    if d == 0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = 60
        if (
            rounding != "nearest"
        ):  # a float's last-bit noise (1 - 0.9 = 0.09999999999999998) is not a shortfall
            d = d.quantize(Decimal(1).scaleb(d.adjusted() - NOISE_DIGITS + 1), rounding=ROUND_HALF_UP)
        step = Decimal(1).scaleb(d.adjusted() - digits + 1)
        q = d.quantize(step, rounding=_MODES[rounding])
        text = format(q, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def epsilon(x: float | int | Decimal, rounding: Rounding = "nearest") -> str:
    """An ε for the screen or a report: at most four significant digits, plain."""
    return plain(x, 4, rounding)


def delta(x: float | int | Decimal, rounding: Rounding = "nearest") -> str:
    """A δ for the screen or a report: at most three significant digits, plain (``0.0000001``, not ``1e-07``)."""
    return plain(x, 3, rounding)
