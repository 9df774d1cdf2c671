"""Reading a claim's figure off the model's curves: one reader for ratios, single figures and changes.

A claim figure is a product of system figures, Q = prod_i f_i^(s_i) (``Term``: a side, a sign and the point it is
read at): a ratio A/B is [(A, +1), (B, -1)]; one system's figure [(S, +1)]; a change to/from - 1 is read as the
retained share to/from, [(S, +1 at ``to``), (S, -1 at ``from``)]. Each f_i is read on the envelope of the claim's
metric against its per-user axis (``curves.py``):

- ``peak``: the highest figure among the envelope's *usable* points: per-user speed >= the point's
  ``min_tps_per_user`` (the benchmark's slowest SLO tier) and TTFT <= its ``ttft_ms`` (the benchmark's TTFT limit),
  each where the claim states it;
- ``speed``: at the stated per-user speed x (log-log interpolation; beyond the curve's end the system cannot
  serve x: the term is *unreached*);
- ``max_speed`` (and any per-user-speed figure): the curve's end;
- ``fastest_common`` / ``matched`` (ratios with every term on one axis): Q(x) on a grid over the speeds every
  system reaches, bounded by the source's ``tested_range`` where the claim gives it (a tested speed beyond a
  system's curve end leaves that system unreached). The grid holds every envelope point in the range (ln Q is
  piecewise linear in ln x between them, so its extremes are grid points) and is refined until neighbouring
  points differ by less than ``GRID_STEP`` in ln Q (or ``GRID_MAX`` points: a cliff between two envelope points). ``up_to`` claims read the maximum over the grid, ``fastest_common`` the top of the
  range, ``matched`` the median over the grid (the range's min and max are reported beside it).

Speed error: ``shifts[hw] = k`` reads a system as if the model placed every per-user speed of it k times too high
(true speed = model speed / k): f_true(x) = f_model(x k), a curve end at end_model / k. With ``diagonal`` the
throughput moves with the speed (a step time k times too short makes both the per-user speed and the throughput
of a deployment k times too high): f_true(x) = f_model(x k) / k, the model's error moving each operating point
along the diagonal of the log-log plane.

An unreached term is a figure of 0 (a throughput the system cannot deliver there) or of infinity (a TTFT): Q is
0 or infinity, never dropped. ``unreached`` names the systems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..specs.claim import OperatingPoint
from .curves import AXES, CurveStore, Side, curve_end, first_at, read
from .fields import scenario_limits, speed
from .fields import slo as claim_slo
from .latency import at_load, is_latency
from .latency import values as latency_values
from .values import Reading

GRID_START = 64          # grid points to start with
GRID_MAX = 8192          # the finest grid tried
GRID_STEP = 0.05         # neighbouring grid points differ by less than this in ln Q (5%)


def env_metric(col: str) -> str:
    """The metric an envelope is taken on (TTFT and per-user speed are read off the throughput envelope)."""
    return "total_tps_per_gpu" if is_latency(col) or col in ("tps_per_user", "agents_per_gpu") else col


@dataclass(frozen=True)
class Term:
    side: Side
    sign: int
    point: OperatingPoint


class Figure:
    """Q = prod f_i^(s_i) of one claim for one model, workload, metric and axis (see the module docstring)."""

    def __init__(self, store: CurveStore, model: str, workload: str, col: str, axis: str, terms: list[Term],
                 qualifier: str = "about", tested_range: tuple[float, float] | None = None):
        self.store, self.model, self.wl, self.col, self.axis = store, model, workload, col, axis
        self.terms, self.qualifier, self.tested_range = list(terms), qualifier, tested_range
        self.scale = 1.0        # a constant factor on Q: GPUs per system, A over B, for a per-system figure
        self.percentile: float | None = None   # a latency figure's percentile (latency.py; None: P50)
        self.load: float | None = None         # a latency figure's stated requests in flight (> 1; latency.at_load)

    # ---------------------------------------------------------------- helpers
    def env(self, side: Side, axis: str | None = None):
        return self.store.envelope(side, self.model, self.wl, axis or self.axis, env_metric(self.col))

    @property
    def grid_point(self) -> bool:
        return all(t.point.point in ("fastest_common", "matched") for t in self.terms)

    def but(self, **kw) -> "Figure":
        f = Figure(self.store, self.model, self.wl, self.col, self.axis, self.terms, self.qualifier,
                   self.tested_range)
        f.scale, f.percentile, f.load = self.scale, self.percentile, self.load
        for k, v in kw.items():
            setattr(f, k, v)
        return f

    def with_sides(self, fn) -> "Figure":
        """The same figure with every term's side replaced by fn(side)."""
        return self.but(terms=[Term(fn(t.side), t.sign, t.point) for t in self.terms])

    def _term_at(self, t: Term, env, x: np.ndarray, k: float) -> np.ndarray:
        """f of one term at true speeds x (array), speed error k; NaN where unreached."""
        return self._raw_at(t, env, x, k) / (k if self._diag and not is_latency(self.col) else 1.0)

    def _raw_at(self, t: Term, env, x: np.ndarray, k: float) -> np.ndarray:
        if is_latency(self.col):
            col = AXES[self.axis]
            e = env.sort_values(col)
            sx = e[col].to_numpy(float)
            idx = np.searchsorted(sx, x * k * (1 - 1e-9))
            out = np.full(x.shape, np.nan)
            ok = idx < len(sx)
            out[ok] = latency_values(e, self.col, self.percentile, k)[idx[ok]]
            return out
        return read(env, x * k, self.axis, self.col)

    def _usable(self, t: Term, env, k: float):
        """The envelope rows usable at a peak (speed floor, TTFT limit; a benchmark scenario's at its P99,
        ``fields.scenario_limits``)."""
        lim = scenario_limits(t.point, self.wl)
        return env[claim_slo(t.point, AXES[self.axis], k, lim[1] if lim else None).meets(env)]

    # ---------------------------------------------------------------- the reading
    _diag = False

    def read(self, shifts: dict[str, float] | None = None, x_scale: float = 1.0, diagonal: bool = False) -> Reading:
        """Q and what it was read from. ``shifts``: speed-error factor k per hardware id (default 1), with
        ``diagonal`` the throughput moving with it; ``x_scale``: the claim's stated speeds times this (an
        approximate speed's range)."""
        shifts = shifts or {}
        self._diag = diagonal
        ks = [shifts.get(t.side.hardware, 1.0) for t in self.terms]
        envs = [self.env(t.side) for t in self.terms]
        ends = [curve_end(e, self.axis) / k if len(e) else float("nan") for e, k in zip(envs, ks)]
        out: Reading = {"ends": ends, "systems": [t.side.hardware for t in self.terms], "unreached": [],
                               "x": None, "rows": [None] * len(self.terms), "values": [float("nan")] * len(self.terms)}
        if self.grid_point:
            return self._read_grid(envs, ks, ends, out)
        vals = []
        for i, (t, e, k) in enumerate(zip(self.terms, envs, ks)):
            p = t.point
            if not len(e):
                vals.append(float("nan"))
                continue
            if is_latency(self.col) and self.load and self.load > 1:   # a latency at a stated load
                v, r = at_load(e, self.col, self.percentile, self.load, k)
                vals.append(v)
            elif p.point == "max_speed" or self.col == "tps_per_user":
                r = e.loc[e[AXES[self.axis]].idxmax()]
                # the curve end's own figure: its speed, its latency (a single request's), else its metric
                vals.append(ends[i] if self.col == "tps_per_user" else
                            float(latency_values(r, self.col, self.percentile, k)[0])
                            if is_latency(self.col) else float(r[self.col]) / (k if diagonal else 1.0))
            elif p.point == "peak":
                u = self._usable(t, e, k)
                if not len(u):
                    vals.append(float("nan"))
                    continue
                pick = "total_tps_per_gpu" if is_latency(self.col) else self.col
                r = u.loc[u[pick].idxmax()]
                vals.append(float(latency_values(r, self.col, self.percentile, k)[0]) if is_latency(self.col)
                            else float(r[self.col]) / (k if diagonal else 1.0))
            else:
                x = speed(p, "point") * x_scale
                out["x"] = x if out["x"] is None else out["x"]
                v = float(self._term_at(t, e, np.array([x]), k)[0])
                vals.append(v)
                r = first_at(e, x * k * (1 - 1e-9), self.axis)
            out["rows"][i] = r
        out["values"] = vals
        out["q"], out["unreached"] = self._combine(vals)
        out["q"] *= self.scale
        return out

    def _combine(self, vals) -> tuple[float, list[str]]:
        """Q from the term values; an unreached (NaN) term is a figure of 0 (a TTFT: infinity). NaN when one
        unreached term sends Q to 0 and another to infinity."""
        ln, up, down, unreached = 0.0, False, False, []
        for t, v in zip(self.terms, vals):
            if v is None or math.isnan(v):
                unreached.append(t.side.hardware)
                v = math.inf if is_latency(self.col) else 0.0
            c = t.sign * (math.log(v) if v > 0 else -math.inf)
            if math.isinf(c):
                up, down = up or c > 0, down or c < 0
            else:
                ln += c
        q = float("nan") if (up and down) else math.inf if up else 0.0 if down else math.exp(ln)
        return q, sorted(set(unreached))

    def _read_grid(self, envs, ks, ends, out: Reading) -> Reading:
        starts = [float(e[AXES[self.axis]].min()) / k for e, k in zip(envs, ks)]
        lo, hi = max(starts), min(ends)
        if self.tested_range:
            tlo, thi = self.tested_range
            lo, hi = max(lo, tlo), min(hi, thi)      # the tested speeds both systems reach (rule 2)
        if not (hi > 0) or hi < lo:
            out.update({"q": float("nan"), "qmin": float("nan"), "qmax": float("nan"), "range": [lo, hi],
                        "grid_points": 0, "grid_step": float("nan")})
            out["unreached"] = sorted({t.side.hardware for t in self.terms})
            return out

        def q_of(x):
            lq = np.zeros(x.shape)
            for t, e, k in zip(self.terms, envs, ks):
                lq += t.sign * np.log(self._term_at(t, e, x, k))
            return np.exp(lq) * self.scale

        # ln Q is piecewise linear in ln x between the union of the envelopes' points (log-log interpolation), so
        # its max and min over the range lie on those points or the range's ends: they are always in the grid
        brk = np.concatenate([e[AXES[self.axis]].to_numpy(float) / k for e, k in zip(envs, ks)])
        brk = brk[(brk > lo) & (brk < hi)]
        n = GRID_START
        while True:
            x = np.unique(np.concatenate([np.geomspace(lo, hi, n), brk])) if hi > lo else np.array([hi])
            q = q_of(x)
            step = float(np.nanmax(np.abs(np.diff(np.log(q))))) if len(q) > 1 else 0.0
            if step < GRID_STEP or n >= GRID_MAX:
                break
            n *= 2
        if self.qualifier == "up_to":
            j = int(np.nanargmax(q))
        elif all(t.point.point == "fastest_common" for t in self.terms):
            j = len(x) - 1
        else:
            j = int(np.argsort(q)[len(q) // 2])       # the median over the grid
        xj = float(x[j])
        for i, (t, e, k) in enumerate(zip(self.terms, envs, ks)):
            out["rows"][i] = first_at(e, xj * k * (1 - 1e-9), self.axis)
            out["values"][i] = float(self._term_at(t, e, np.array([xj]), k)[0])
        out.update({"xs": x, "qs": q})
        out.update({"q": float(q[j]), "x": xj, "qmin": float(np.nanmin(q)), "qmax": float(np.nanmax(q)),
                    "x_min": float(x[int(np.nanargmin(q))]), "x_max": float(x[int(np.nanargmax(q))]), "range": [lo, hi],
                    "grid_points": len(x), "grid_step": step})
        return out
