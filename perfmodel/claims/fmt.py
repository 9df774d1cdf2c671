"""Number formatting of the claim checks' text (one place, so that check, needs and the report agree)."""

from __future__ import annotations

import math


def fmt(x: float | None, unit: str = "") -> str:
    """3 significant digits below 1,000, thousands separators up to a million, then 'M' (1.57M); 'n/a' for
    None/NaN, 'unbounded' for inf."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "unbounded"
    a = abs(x)
    s = f"{x / 1e6:.3g}M" if a >= 1e6 else f"{x:,.0f}" if a >= 1e3 else f"{x:.3g}"
    return s + unit


def number(x) -> float | None:
    """``x`` as a float for a JSON number field: None for None or NaN."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def pct(x: float) -> str:
    """A share as a percentage: whole percent from 1% up, one significant digit below (0.4%)."""
    return f"{x * 100:.0f}%" if x >= 0.01 else f"{x * 100:.1g}%"


def faster_slower(f: float) -> str:
    """A speed-up factor f (new speed / old) in words a planner reads one way: '1.57x faster' for f >= 1,
    '1.43x slower' (1 / f) below it, never '0.70x faster'."""
    return f"{f:.2f}x faster" if f >= 1 else f"{1 / f:.2f}x slower"
