"""Step-time tables for the event simulation: the compiled step equations evaluated ONCE on a grid, then
interpolated inside the event loop (which never calls sympy or the compiled code per step).

Tables (seconds), each filled by one vectorized call of ``engine.compiled`` at the deployment's point
(gpus, tp, ep, pp, drafts, acceptance) with ``Setup.symbol_values``:
    decode[b, l]      one decode step of b sequences (each advancing acc tokens on average) at mean context
                      L = l tokens (the equations' L = isl + osl / 2), no prefill mixed in
    mixed[b, l, k]    the same step carrying k prefill tokens in the same pass (mixed-prefill engines:
                      n_pf = k tokens of requests of ``request_tokens`` each (S_pf), attending over ~L tokens). At b = 1 the equations mix
                      nothing ((B - 1) factor), so mixed[1, l, k] = mixed[2, l, k] - (decode[2, l] - decode[1, l])
    prefill[k, c]     one prefill pass of k tokens (requests of ``request_tokens`` each) after a cached prefix of
                      c tokens (prefill-first engines, and an idle engine's prefill)
Axes: b and l log-spaced, k and c linear. Lookups are multilinear, O(1) arithmetic on Python floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...engine.compiled import compiled
from ...engine.evaluate import Setup, point_arrays, prefill_inputs, symbol_inputs

N_B, N_L, N_K, N_C = 28, 14, 9, 9      # grid sizes: batch, context, chunk tokens, cached prefix


@dataclass
class Axis:
    """A uniform axis in x (linear) or ln x (log): index = (f(x) - f0) / df, clamped to the grid."""

    lo: float
    hi: float
    n: int
    log: bool

    def __post_init__(self):
        # constants of ``locate``, computed once (the same floats it would compute per call)
        self._flat = self.hi <= self.lo or self.n < 2
        if self.log and not self._flat:
            self._f0, self._span = math.log(self.lo), math.log(self.hi) - math.log(self.lo)
        else:
            self._f0, self._span = self.lo, self.hi - self.lo

    def points(self) -> np.ndarray:
        if self.hi <= self.lo:
            return np.full(self.n, self.lo)
        return np.geomspace(self.lo, self.hi, self.n) if self.log else np.linspace(self.lo, self.hi, self.n)

    def locate(self, x: float) -> tuple[int, float]:
        """(i, t): x lies at i + t on the grid, 0 <= t <= 1, i in [0, n - 2]."""
        if self._flat:
            return 0, 0.0
        f = (math.log(max(x, self.lo)) - self._f0) / self._span if self.log else (x - self.lo) / self._span
        f = min(max(f, 0.0), 1.0) * (self.n - 1)
        i = min(int(f), self.n - 2)
        return i, f - i


class StepTables:
    """The three tables of the module docstring for one deployment, and their lookups."""

    def __init__(self, setup: Setup, point: dict, vals: dict, max_batch: float, max_context: float,
                 budget: float, request_tokens: float | None = None, min_context: float = 256.0):
        cm = compiled(setup.model)
        self.budget = float(budget)
        self.b_ax = Axis(1.0, max(float(max_batch), 2.0), N_B, True)
        self.l_ax = Axis(min(min_context, max_context), max(float(max_context), min_context), N_L, True)
        self.k_ax = Axis(0.0, self.budget, N_K, False)
        self.c_ax = Axis(0.0, max(float(max_context), 1.0), N_C, False)
        osl = float(point["osl"])
        b, l_ = np.meshgrid(self.b_ax.points(), self.l_ax.points(), indexing="ij")
        base = {**point, "mix": 0.0, "concurrency": np.nan, "arrival_rate": np.nan}
        # decode: L = isl + osl / 2 -> isl = L - osl / 2
        dec = point_arrays({**base, "batch": b.ravel(), "isl": np.maximum(l_.ravel() - osl / 2, 1.0), "new": 1.0})
        self.decode = np.asarray(cm.decode(symbol_inputs(dec, vals))["step_s"], float).reshape(b.shape)
        # mixed: n_pf = mix (B - 1) acc new / osl = k with new = k (one request's chunk), B >= 2
        k = self.k_ax.points()
        bb, ll, kk = np.meshgrid(np.maximum(self.b_ax.points(), 2.0), self.l_ax.points(), k, indexing="ij")
        req = float(request_tokens) if request_tokens else self.budget    # one request's tokens (S_pf)
        newk = np.minimum(np.maximum(kk, 1.0), max(req, 1.0))
        mix = kk / ((bb - 1) * float(point["acc"]) * newk / osl)
        mx = point_arrays({**base, "batch": bb.ravel(), "isl": np.maximum(ll.ravel() - osl / 2, 1.0) + newk.ravel() / 2,
                      "new": newk.ravel(), "mix": mix.ravel()})
        mixed = np.asarray(cm.decode(symbol_inputs(mx, vals))["step_s"], float).reshape(bb.shape)
        d2 = self.decode[np.searchsorted(self.b_ax.points(), 2.0 - 1e-9).clip(0, N_B - 1)]
        at1 = self.b_ax.points() < 2.0
        mixed[at1] = mixed[at1] - (d2 - self.decode[at1])[:, :, None]
        self.mixed = mixed
        # prefill passes: k tokens after a cached prefix of c tokens
        kk2, cc = np.meshgrid(np.maximum(k, 1.0), self.c_ax.points(), indexing="ij")
        new2 = np.minimum(kk2, max(req, 1.0)).ravel()
        pf = point_arrays({**base, "batch": 1.0, "new": new2, "isl": cc.ravel() + new2})
        self.prefill = np.asarray(cm.prefill(prefill_inputs(pf, vals, tokens=kk2.ravel()))["prefill_s"],
                                  float).reshape(kk2.shape)
        for name in ("decode", "mixed", "prefill"):
            t = getattr(self, name)
            if not np.all(np.isfinite(t)) or np.any(t <= 0):
                raise ValueError(f"step table {name}: non-finite or non-positive step times")
        self._dec, self._mix, self._pf = self.decode.tolist(), self.mixed.tolist(), self.prefill.tolist()

    def decode_s(self, b: float, ctx: float) -> float:
        """One decode step of b sequences at mean context ctx, s."""
        i, u = self.b_ax.locate(b)
        j, v = self.l_ax.locate(ctx)
        t = self._dec
        return ((1 - u) * ((1 - v) * t[i][j] + v * t[i][j + 1]) + u * ((1 - v) * t[i + 1][j] + v * t[i + 1][j + 1]))

    def mixed_s(self, b: float, ctx: float, k: float) -> float:
        """One step of b decoding sequences carrying k prefill tokens in the same pass, s."""
        if k <= 0:
            return self.decode_s(b, ctx)
        i, u = self.b_ax.locate(b)
        j, v = self.l_ax.locate(ctx)
        m, w = self.k_ax.locate(k)
        t = self._mix

        def at(ii, jj):
            return (1 - w) * t[ii][jj][m] + w * t[ii][jj][m + 1]
        return (1 - u) * ((1 - v) * at(i, j) + v * at(i, j + 1)) + u * ((1 - v) * at(i + 1, j) + v * at(i + 1, j + 1))

    def prefill_s(self, k: float, cached: float) -> float:
        """One prefill pass of k tokens after ``cached`` prefix tokens, s (k above the budget: linear in k)."""
        scale = 1.0
        if k > self.budget:
            scale, k = k / self.budget, self.budget
        m, w = self.k_ax.locate(k)
        j, v = self.c_ax.locate(cached)
        t = self._pf
        return scale * ((1 - w) * ((1 - v) * t[m][j] + v * t[m][j + 1]) + w * ((1 - v) * t[m + 1][j] + v * t[m + 1][j + 1]))
