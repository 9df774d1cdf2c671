"""The load-to-batch solver and the capacity probe: what a deployment is given (a batch, clients, an arrival rate,
live sessions, or nothing) -> the running batch B it serves.

- ``capacity``: the largest running batch that fits (memory and the running-request cap), from one evaluation of
  the step equations at the given points (``max_batch``).
- ``running_batch``:
    batch given                      -> that batch
    blank, fixed workload            -> NaN: the step evaluation solves it (engine.evaluate.evaluate_columns:
                                        the capacity, B = min(cap, C B / C_B) for C clients, or the open-loop root
                                        B = lambda S(B) for an arrival rate lambda)
    blank, disaggregated             -> the capacity of the decode instance (at least 1)
    live sessions C, aggregated,     -> NaN: the C lanes are a closed loop whose lanes pause between requests;
      points' concurrency = C           serving.sessions.agentic solves B in the step evaluation, capped at the
                                        capacity, the excess lanes waiting for a slot (api.predict passes them so)
    live sessions C, aggregated,     -> the B with C(B) = B (t_busy + pause) / t_busy = C (bisection,
      no concurrency in the points      serving.sessions.sessions_to_batch; not capped: beyond the capacity it
                                        runs more requests than fit, so callers pass the lanes instead)
    live sessions C, disaggregated   -> C(B) over a log grid of B up to the capacity, interpolated (C rises with B)
    blank, agentic aggregated        -> the capacity (at least 1)
"""

from __future__ import annotations

import numpy as np

from ..engine.evaluate import Setup
from .aggregated import evaluate
from .dispatch import Pools, Sessions, serve
from .sessions import sessions_to_batch

RATE_COLUMNS = ("request_rate_per_s", "output_tps_per_gpu", "total_tps_per_gpu", "total_tps_per_mw",
                "output_tps_per_mw", "total_tokens_per_usd", "sessions_per_gpu")
"""Columns proportional to the requests per second (an idle share of the time scales them)."""


def fewer_sessions_than_one_batch(df, live_sessions: float):
    """Live sessions C below those one running request needs, C(1) = (t_busy + pause) / t_busy: the instance
    runs a single request a share C / C(1) of the time and idles the rest (the tool pauses), so the throughput
    columns scale by C / C(1) and ``sessions`` is C; TPOT and TTFT are those of the batch-1 steps.
    The running batch is never below 1 in the step equations (a step serves whole requests)."""
    c1 = df["sessions"].to_numpy(float)
    scale = np.where(c1 > live_sessions, live_sessions / np.where(c1 > 0, c1, 1.0), 1.0)
    if np.all(scale == 1.0):
        return df
    df = df.copy()
    for k in RATE_COLUMNS:
        if k in df:
            df[k] = df[k].to_numpy(float) * scale
    df["sessions"] = np.minimum(c1, live_sessions)
    return df


SESSION_GRID = 96
"""Log-grid points of the live-sessions curve C(B) of a disaggregated agentic deployment."""


def capacity(setup: Setup, points: dict, symbol_values: dict | None = None) -> np.ndarray:
    """The largest running batch per point that fits (``max_batch``: KV memory, running-request cap)."""
    return evaluate(setup, points, symbol_values=symbol_values)["max_batch"].to_numpy(float)


def running_batch(setup: Setup, points: dict, mode: str, *, pools: Pools | None = None,
                  sessions: Sessions | None = None, live_sessions: float | None = None) -> float:
    """The running batch of one deployment (``points`` scalars; a NaN batch is blank): see the module table."""
    batch = float(points["batch"])
    disagg = mode == "disaggregated"
    if sessions is not None and live_sessions is not None:
        if not disagg and np.isfinite(float(points.get("concurrency", np.nan))):
            return np.nan           # lanes in a closed loop: the step evaluation solves B (serving/sessions.agentic)
        if not disagg:
            return float(sessions_to_batch(setup, points, sessions.pause_s, live_sessions, sessions.host_tier)[0])
        cap = max(float(capacity(setup, {**points, "mix": 0.0})[0]), 1.0)
        grid = np.unique(np.round(np.geomspace(1.0, cap, SESSION_GRID)))
        means = Sessions(sessions.pause_s, sessions.host_tier)      # the curve on mean lengths
        g = serve(setup, {**points, "batch": grid}, mode, pools=pools, sessions=means)
        sess = np.maximum.accumulate(g["sessions"].to_numpy())
        return float(np.interp(live_sessions, sess, grid))
    if not np.isnan(batch):
        return batch
    if disagg:
        return max(float(capacity(setup, {**points, "mix": 0.0})[0]), 1.0)
    if sessions is not None:
        return max(float(capacity(setup, points)[0]), 1.0)
    return batch
