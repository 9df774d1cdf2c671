"""Aggregated serving with chunked prefill: the step equations under load -> the result columns.

Evaluate the compiled equations over arrays of operating points -> a tidy DataFrame.

The step equations under load (``decode_under_load``: the chunk mixture, the closed loop of serving/queueing.py) on
arrays of points, or on one point's Python floats (serving/ops.py: serving/point.py); the result columns are
written by serving/finish.py (TPOT, TTFT terms, throughput per GPU, per MW and per dollar, E2E interactivity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.compiled import compiled
from ..engine.evaluate import Setup, point_arrays, prefill_inputs, symbol_inputs
from . import prefill_first
from .finish import RESOURCES, finish, fit_reasons, rate_name  # noqa: F401 - names other modules import from here
from .ops import ARRAYS
from .queueing import serving_load

if TYPE_CHECKING:
    import pandas as pd

OPEN_LOOP_SUBSTITUTIONS = 5   # evaluations of the open-loop batch root B = lambda S(B) (secant passes)


def evaluate(setup: Setup, points: dict, which: str = "value", symbol_values: dict | None = None) -> pd.DataFrame:
    """Evaluate every operating point in ``points``: ``evaluate_columns`` as one DataFrame, one row a point."""
    import pandas as pd
    return pd.DataFrame(evaluate_columns(setup, points, which, symbol_values))


def evaluate_columns(setup: Setup, points: dict, which: str = "value",
                     symbol_values: dict | None = None) -> dict[str, np.ndarray]:
    """Evaluate every operating point in ``points`` (a mapping of POINT_COLUMNS to scalars or arrays) into
    output columns (name -> array, one entry a point; units in the names), built without a DataFrame.

    ``batch`` (the running batch: requests holding a KV slot) may hold NaN for "the largest batch that
    fits", or, with a ``concurrency`` (clients in a closed loop), for the batch those clients keep running:
    B = min(cap, C B / C_B) with C_B the clients a batch B needs (queueing.py; those waiting for prefill
    or a slot hold none), one proportional correction from B = min(C, cap). Past the cap the clients
    beyond C_B wait for a slot.
    """
    cm = compiled(setup.model)
    vals = symbol_values if symbol_values is not None else setup.symbol_values(which)
    p = point_arrays(points)
    pf = cm.prefill(prefill_inputs(p, vals))
    t_pf = np.asarray(pf["prefill_s"], float) * np.ones_like(p["batch"])
    solve = np.isnan(p["batch"])
    if solve.any():
        probe = cm.decode(symbol_inputs({**p, "batch": np.ones_like(p["batch"])}, vals))["max_batch"]
        cap = np.maximum(np.floor(probe), 1.0)
        want = np.where(np.isnan(p["concurrency"]), np.inf, p["concurrency"])
        p["batch"] = np.where(solve, np.maximum(np.minimum(cap, want), 1.0), p["batch"])
        by_clients = solve & np.isfinite(want)
        if by_clients.any():
            _d, load = decode_under_load(cm, p, vals, t_pf, outputs=False)
            sustained = np.where(load["prefill_saturated"], load["x_per_s"] * load["slot_s"],
                                 p["batch"] * np.minimum(1.0, want / load["clients_needed"]))
            p["batch"] = np.where(by_clients, np.clip(sustained, 1.0, cap), p["batch"])
        by_rate = solve & np.isfinite(p["arrival_rate"])
        if by_rate.any():
            p["batch"] = np.where(by_rate, open_loop_batch(cm, p, vals, t_pf, cap), p["batch"])
    d, load = decode_under_load(cm, p, vals, t_pf)
    return finish(setup, p, d, pf["prefill_s"], vals, load)


def open_loop_batch(cm, p: dict, vals: dict, t_pf, cap) -> np.ndarray:
    """The running batch of an open loop at lambda requests/s (Little on the slots): the root of
    B = lambda S(B), S = T_own + osl TPOT the time a request holds a KV slot. S is nearly linear in B, so
    secant passes on the line through the last two evaluations, B' = lambda a / (1 - lambda c) with
    S ~ a + c B, converge in a few vectorized evaluations (OPEN_LOOP_SUBSTITUTIONS), from B = 1 and
    B = lambda S(1); clipped to [1, cap]. Where lambda c >= 1 or the root lies past the running capacity the
    batch is the capacity (``serving_load`` then reports the queue as unstable)."""
    lam = p["arrival_rate"]
    slot = lambda b: decode_under_load(cm, {**p, "batch": b}, vals, t_pf, outputs=False)[1]["slot_s"]  # noqa: E731
    b0 = np.ones_like(p["batch"])
    s0 = slot(b0)
    b1 = np.clip(lam * s0, 1.0, cap)
    for _ in range(OPEN_LOOP_SUBSTITUTIONS - 1):
        s1 = slot(b1)
        moved = np.abs(b1 - b0) > 1e-9 * b1
        c = np.where(moved, (s1 - s0) / np.where(moved, b1 - b0, 1.0), 0.0)
        a = s1 - c * b1
        denom = 1 - lam * c
        b2 = np.where(denom > 0, lam * a / np.where(denom > 0, denom, 1.0), cap)
        b0, s0, b1 = b1, s1, np.clip(np.where(np.isfinite(b2), b2, cap), 1.0, cap)
    n = len(b1)

    def slot_at(x, sel):     # slot times of the points ``sel`` at batches x (only those points evaluated)
        sub = lambda d: {k: (np.asarray(v)[sel] if np.ndim(v) and np.size(v) == n else v) for k, v in d.items()}  # noqa: E731
        tp = np.asarray(t_pf)[sel] if np.ndim(t_pf) and np.size(t_pf) == n else t_pf
        return decode_under_load(cm, {**sub(p), "batch": x}, sub(vals), tp, outputs=False)[1]["slot_s"]

    b1 = bisect_unconverged(slot_at, lam, b1, np.broadcast_to(cap, (n,)))
    return np.where(np.isfinite(lam), b1, p["batch"])


OPEN_LOOP_BISECTIONS = 14   # halvings of [1, cap] where the secant passes did not converge (S(B) has a jump)
OPEN_LOOP_TOL = 0.01        # |lambda S(B) - B| <= 1% of B counts as converged


def bisect_unconverged(slot_at, lam: np.ndarray, b: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Where the secant passes left |lambda S(B) - B| above OPEN_LOOP_TOL B (S(B) jumps where the batch crosses a
    GEMM row tile, so lambda S(B) - B can change sign with no root), bisect g(B) = lambda S(B) - B on [1, cap]
    (g(cap) > 0 means no stable batch: the capacity). The result is the sign change of g, the batch the queue
    settles at, taken on its upper side (lambda S(B) <= B: the slots keep up, so the queue is stable). ``slot_at(x, sel)``: slot seconds of the points ``sel`` at batches ``x``; only
    the unconverged points are evaluated."""
    every = np.arange(len(b))
    g = lam * slot_at(b, every) - b
    sel = np.flatnonzero(np.isfinite(lam) & (np.abs(g) > OPEN_LOOP_TOL * b) & (b < cap) & (b > 1.0))
    if sel.size == 0:
        return b
    gs = lambda x: lam[sel] * slot_at(x, sel) - x  # noqa: E731
    lo, hi = np.ones(sel.size), np.asarray(cap, float)[sel].copy()
    for _ in range(OPEN_LOOP_BISECTIONS):
        mid = 0.5 * (lo + hi)
        up = gs(mid) > 0
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    out = np.array(b, float)
    out[sel] = np.where(gs(hi) > 0, np.asarray(cap, float)[sel], hi)   # hi: the side where the slots keep up
    return out




def decode_under_load(cm, p: dict, vals: dict, t_pf, ops=ARRAYS, outputs: bool = True) -> tuple[dict, dict]:
    """Decode steps and queueing together. The prefill a request's decode steps carry is the other running
    requests' prefill *while it decodes*, a share f = osl TPOT / S of each slot's time (the others'
    prefills during its own prefill are not in its steps):
        n_pf = f mix (B - 1) acc new / osl, at most the instance's token budget per step.
    Decode outputs are evaluated without prefill and at a chunk step (``chunk_mixture``); the steps at
    the capped demand are the mixture m = (1 - w) bare + w chunk, and at the load's share s = min(f n_pf /
    n_cap, 1) of it (``serving_load`` solves f with the queue) every output is (1 - s) bare + s m.
    Returns (decode outputs, serving_load outputs with ``chunk_step_share`` = s w). ``ops``: arrays, or one point on
    floats (serving/ops.py; engines that mix prefill into the decode steps). ``outputs`` False: the decode
    outputs are not mixed ({} in their place), for the callers that read the load alone (a batch solved from
    clients or an arrival rate)."""
    ones = ops.ones_like(p["batch"])
    d0 = ops.decode(cm, p, vals, 0.0 * ones)
    demand, w, chunk = chunk_mixture(p, vals, ops)
    mixed = prefill_first.mixed(vals, ops) * ones
    dk = ops.decode(cm, p, vals, chunk["mix"]) if ops.any((w > 0) & (mixed > 0)) else d0
    step0 = ops.floats(d0["step_s"]) * ones
    step_mix = (1 - w) * step0 + w * ops.floats(dk["step_s"])
    budget = vals["N_ch"] * p["gpus"] / (p["tp"] * p["pp"])
    t_budget = ops.floats(ops.prefill(cm, p, vals, budget)["prefill_s"]) * ones
    if ops.any(mixed < 1):     # prefill-first engines: prefill passes stall the decode steps (prefill_first.py)
        t_s = prefill_first.server_time(t_pf, t_budget, p["new"], vals["N_ch"])
        pf_chunks, pf_step = prefill_first.stall_step(p, step0, t_s)
        demand, step_mix = np.where(mixed > 0, demand, pf_chunks), np.where(mixed > 0, step_mix, pf_step)
        w = np.where(mixed > 0, w, pf_chunks)
    load = serving_load(p, step0, step_mix, demand, t_pf, t_budget, vals, ops)
    share = load["chunk_share"] * w
    load["chunk_step_share"] = share
    load["step0_s"], load["step_chunk_s"] = step0, ops.floats(dk["step_s"]) * ones   # for the TPOT tail
    if not outputs:
        return {}, load
    d = _mix(d0, dk, share)
    d["step_s"] = ops.where(mixed > 0, d["step_s"], load["step_s"])   # decode step incl. the prefill stalls
    return d, load


def _mix(d0: dict, dk: dict, share) -> dict:
    """Every decode output at the load's chunk-step share s: (1 - s) bare + s chunk step (elementwise). Outputs
    on Python floats (one point, serving/ops.FLOATS) are mixed as floats; one point whose outputs are floats
    in an array call (``Compiled`` on one point) as one stacked array: one numpy pass over every output instead
    of four per output (the same arithmetic)."""
    if type(share) is float:
        return {k: (1 - share) * v + share * dk[k] for k, v in d0.items()}
    keys = list(d0)
    if np.size(share) == 1 and all(type(d0[k]) is float and type(dk[k]) is float for k in keys):
        a0 = np.array([d0[k] for k in keys])[:, None]
        ak = np.array([dk[k] for k in keys])[:, None]
        return dict(zip(keys, (1 - share) * a0 + share * ak))
    return {k: (1 - share) * np.asarray(d0[k], float) + share * np.asarray(dk[k], float) for k in keys}


def chunk_mixture(p: dict, vals: dict, ops=ARRAYS) -> tuple:
    """The chunk steps of a chunked-prefill engine. With every other running request's prefill mixed in,
    the steps carry on average n_pf = mix (B - 1) acc new / osl prefill tokens per instance, at most the
    c = dp ranks' token budgets: n_cap = min(n_pf, c N_ch). They arrive as whole chunks of
    k_r = min(new, N_ch) tokens on one rank, not spread thinly over every step. Each rank carries a chunk
    in a share w_r = min(1, n_cap / (c k_r)) of the steps, independently, so a share w = 1 - (1 - w_r)^c
    of the steps carries one or more (their ranks prefill in parallel), each with k = n_cap / w tokens
    (split over ranks by the step equations, dp_pf). Step costs are concave in tokens (a MoE step's
    distinct experts saturate; ranks overlap), so spreading n_pf over every step would overstate them.
    Returns (n_pf / n_cap: the demand over the capped demand, w, the chunk-step points).
    """
    unit = (p["batch"] - 1) * p["acc"] * p["new"] / p["osl"]      # n_pf at mix = 1
    n_pf = p["mix"] * unit
    ranks = p["gpus"] / (p["tp"] * p["pp"])
    n_cap = ops.minimum(n_pf, vals["N_ch"] * ranks)
    k_rank = ops.minimum(ops.maximum(p["new"], 1.0), vals["N_ch"])
    w = ops.where(n_cap > 0, 1 - (1 - ops.minimum(1.0, n_cap / (ranks * k_rank))) ** ranks, 0.0)
    k = ops.where(w > 0, n_cap / ops.where(w > 0, w, 1.0), 0.0)
    demand = ops.where(n_cap > 0, n_pf / ops.where(n_cap > 0, n_cap, 1.0), 0.0)
    return demand, w, {**p, "mix": ops.where(unit > 0, k / ops.where(unit > 0, unit, 1.0), 0.0)}
