"""The decode batch of the event simulation: the requests past their prefill, each advancing ``acc`` accepted
tokens per decode step (the mean acceptance), until its output is complete.

State (tokens): per slot the output tokens left and the request's full context isl + osl; ``ctx_sum`` the sum of
the decoders' current contexts (isl + output so far), so the batch's mean context is ``ctx_sum / n``. Slots are
kept dense: a finished request's slot takes the last one's.
"""

from __future__ import annotations

import math

import numpy as np


class DecodeBatch:
    """Slot arrays for at most ``cap`` decoding requests; ``n`` of them in use."""

    __slots__ = ("ctx_sum", "full", "n", "rem", "rid")

    def __init__(self, cap: int):
        self.rem = np.zeros(cap + 1)                  # output tokens left
        self.rid = np.zeros(cap + 1, dtype=np.int64)  # request id
        self.full: list[float] = [0.0] * (cap + 1)     # isl + osl of the slot's request
        self.n = 0
        self.ctx_sum = 0.0

    def add(self, i: int, isl: float, osl: float) -> None:
        """Request ``i`` (context ``isl``, ``osl`` output tokens) starts decoding."""
        n = self.n
        self.rem[n] = osl
        self.rid[n] = i
        self.full[n] = isl + osl
        self.ctx_sum += isl
        self.n = n + 1

    def steps_to_finish(self, acc: float) -> int:
        """Decode steps until the first decoder completes (at least 1)."""
        return max(math.ceil(float(self.rem[:self.n].min()) / acc - 1e-9), 1)

    def advance(self, acc: float, nsteps: int) -> list[int]:
        """Run ``nsteps`` decode steps; returns the requests that completed (last slot first), removed."""
        n = self.n
        rem, rid, full = self.rem, self.rid, self.full
        live = rem[:n]
        live -= acc * nsteps
        ctx_sum = self.ctx_sum + acc * nsteps * n
        done: list[int] = []
        for s in (live <= 1e-9).nonzero()[0][::-1]:
            done.append(int(rid[s]))
            ctx_sum -= full[s] - rem[s]
            n -= 1
            rem[s], rid[s], full[s] = rem[n], rid[n], full[n]
        self.n, self.ctx_sum = n, ctx_sum
        return done
