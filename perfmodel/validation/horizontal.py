"""Frontier reads scored two ways: vertical (throughput at the measured speed) and horizontal (speed at the measured
throughput).

A frontier row publishes a throughput V at a per-user speed s0. The model's frontier F(s) (the highest throughput
among modeled points at least s tok/s/user fast) is non-increasing in s. The two reads of the same curve:

    vertical error    e_v = F(s0) / V - 1                    (what a claim at that speed reads)
    horizontal error  e_h = s* / s0 - 1,  s* = sup {s : F(s) >= V}   (the modeled speed at the measured throughput)

Per-user speed is accepted tokens / step time, so e_h is the step-time error at the cliff: t_model / t_measured =
1 / (1 + e_h). Near a cliff (a steep F) a 5% step-time error is a 100%+ vertical error, so the horizontal read is
the one well posed there. s* is found by bracketing in factors of 2 and bisecting in log s to a ratio of
``REL_TOL``; F is evaluated at the central profile (one frontier search per probe, about 12 probes).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

REL_TOL = 1.005        # bisection stops when hi / lo is below this (0.5% in speed)
MAX_DOUBLINGS = 8      # bracket at most 2^8 = 256x away from the published speed


def speed_at_value(value_at: Callable[[float], float], s0: float, v: float) -> float:
    """sup {s : value_at(s) >= v} in tok/s/user (NaN where even s0 / 256 does not reach v; s0 x 256 where that
    still does). ``value_at`` returns the frontier's throughput at speed s, NaN or -inf where the frontier does not
    reach s."""
    def reaches(s: float) -> bool:
        f = value_at(s)
        return bool(np.isfinite(f) and f >= v)

    if reaches(s0):
        lo, hi = s0, 2.0 * s0
        for _ in range(MAX_DOUBLINGS):
            if not reaches(hi):
                break
            lo, hi = hi, 2.0 * hi
        else:
            return lo
    else:
        lo, hi = s0 / 2.0, s0
        for _ in range(MAX_DOUBLINGS):
            if reaches(lo):
                break
            lo, hi = lo / 2.0, lo
        else:
            return float("nan")
    while hi / lo > REL_TOL:
        mid = math.sqrt(lo * hi)
        if reaches(mid):
            lo = mid
        else:
            hi = mid
    return lo


def horizontal_error_pct(value_at: Callable[[float], float], s0: float, v: float) -> float:
    """100 (s* / s0 - 1): the modeled speed at the measured throughput against the published speed, %."""
    s = speed_at_value(value_at, s0, v)
    return 100.0 * (s / s0 - 1.0) if np.isfinite(s) else float("nan")


def step_time_error_pct(horizontal_pct: float) -> float:
    """The step-time error the horizontal error is: 100 (1 / (1 + e_h) - 1), % (model slower: positive)."""
    return 100.0 * (1.0 / (1.0 + horizontal_pct / 100.0) - 1.0)
