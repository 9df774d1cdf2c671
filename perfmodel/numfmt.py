"""One number format for every text output (CSV and JSON keep full precision).

    fmt_number(v): integers and integer-valued floats with thousands separators (1,880); other numbers of
    at least 10^(digits-1) rounded to whole units with separators (844,400); smaller ones to ``digits``
    significant digits (14.8, 0.0523); below TINY in magnitude (1e-6 of the field's unit, which the names
    choose so that values read in ordinary ranges) as "~0"; -0.0 prints as 0; NaN/None as ``na``; inf as
    "unbounded".
No scientific notation: 8.444e+05 next to 1,077 reads as two different kinds of number.
"""

from __future__ import annotations

import math

import numpy as np

TINY = 1e-6

def fmt_number(v, digits: int = 4, na: str = "n/a") -> str:
    if v is None:
        return na
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if not isinstance(v, (int, float, np.integer, np.floating)):
        return str(v)
    x = float(v)
    if math.isnan(x):
        return na
    if math.isinf(x):
        return "unbounded" if x > 0 else "-unbounded"
    if x == 0:
        return "0"
    if abs(x) < TINY:                  # 7.4e-11 ms of queueing is no queue: not 0.00000000007449
        return "~0"
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(float(f"{x:.{digits}g}")) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    s = f"{x:.{digits}g}"
    if "e" in s:                       # tiny values: fixed point with the significant digits
        s = f"{x:.{digits - 1 - math.floor(math.log10(abs(x)))}f}".rstrip("0")
    return s
