"""The one bracketed root finder of the serving layer: every load inversion (an arrival rate, a live-session count,
a per-user speed -> the running batch) is a sign change of a monotone-ish g(x) on a bracket, solved here.

Vectorized Illinois (regula falsi with the stale end's value halved), one g evaluation per iteration over the points
still open, with the bracket kept: each point ends with ``lo`` on the side where g >= 0 and ``hi`` where g < 0,
so a caller that needs the feasible side (a speed still met, a queue still stable) reads ``lo`` (or ``hi``).
A g with a jump (a GEMM row tile crossed) and no root still ends on its sign change, to the bracket's tolerance.

    x_{k+1} = lo + g_lo (hi - lo) / (g_lo - g_hi)        (Illinois: the end kept twice in a row has g halved)

Units are the caller's: x is whatever is searched (a batch, ln batch), g is dimensionless or in x's unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Bracket:
    """The end state per point: ``lo`` (the g >= 0 side), ``hi`` (the g < 0 side) and ``converged`` (|g| <= tol
    at the last iterate, or the bracket narrower than xtol)."""

    lo: np.ndarray
    hi: np.ndarray
    converged: np.ndarray


def illinois(g: Callable[[np.ndarray, np.ndarray], np.ndarray], lo, hi, g_lo, g_hi, *, iterations: int = 30,
             tol: float = 1e-10, xtol: float = 0.0) -> Bracket:
    """Refine the brackets [lo, hi] with g(lo) >= 0 > g(hi) (arrays, one per point).

    ``g(x, idx)`` evaluates g at ``x`` for the points ``idx`` (an index array into the brackets): only points still
    open are evaluated. Points whose bracket does not straddle a sign change (g_lo < 0 or g_hi >= 0) are returned
    as given, not converged. At most ``iterations`` evaluations of g."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    g_lo, g_hi = np.array(g_lo, float), np.array(g_hi, float)
    n = lo.size
    kept = np.zeros(n)                  # +1: lo kept last time, -1: hi kept last time
    open_ = (g_lo >= 0) & (g_hi < 0) & (np.abs(g_lo) > tol)
    converged = (g_lo >= 0) & (g_hi < 0) & ~open_
    for _ in range(iterations):
        idx = np.flatnonzero(open_)
        if idx.size == 0:
            break
        a, b, ga, gb = lo[idx], hi[idx], g_lo[idx], g_hi[idx]
        x = a + ga * (b - a) / (ga - gb)
        x = np.where((x > a) & (x < b), x, 0.5 * (a + b))       # a degenerate secant: bisect
        gx = np.asarray(g(x, idx), float)
        up = gx >= 0
        lo[idx], g_lo[idx] = np.where(up, x, a), np.where(up, gx, ga)
        hi[idx], g_hi[idx] = np.where(up, b, x), np.where(up, gb, gx)
        k = kept[idx]
        g_hi[idx] = np.where(up & (k == 1), g_hi[idx] / 2, g_hi[idx])     # hi kept twice: Illinois
        g_lo[idx] = np.where(~up & (k == -1), g_lo[idx] / 2, g_lo[idx])   # lo kept twice
        kept[idx] = np.where(up, 1, -1)
        done = (np.abs(gx) <= tol) | (hi[idx] - lo[idx] <= xtol * np.maximum(np.abs(lo[idx]), 1.0))
        converged[idx] |= done
        open_[idx] &= ~done
    return Bracket(lo, hi, converged)
