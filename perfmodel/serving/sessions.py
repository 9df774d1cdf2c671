"""Agentic sessions on top of the step equations: tool pauses, KV residency, prefix-cache hits (vectorized).

Agentic sessions (decode batch B = sessions currently generating):
    t_busy = TTFT + osl TPOT;  live sessions C = B (t_busy + pause) / t_busy, B the sessions in a request (live_count)
    paused sessions keep their KV in spare HBM, then in the host tier (if on), else are evicted and
    re-prefill their whole prefix; host-resident ones reload it over the host link (f_rl).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arch.kv import kv_bytes_per_token
from ..engine.compiled import compiled
from ..engine.evaluate import Setup, point_arrays, prefill_inputs
from .aggregated import evaluate
from .disaggregated import disaggregated, request_kv_bytes
from .prefill_spread import prefill_cv2
from .prefix_cache import (
    ReuseGaps,
    competing,
    fixed_states,
    snapshot_factor,
    snapshot_lost_tokens,
    tier_shares,
    uncached_input,
)
from .queueing import queue_tail

if TYPE_CHECKING:
    import pandas as pd


def _take(d: dict, idx, n: int) -> dict:
    """The entries of a points / symbol mapping at ``idx``: per-point arrays (length n) are indexed."""
    return {k: (np.asarray(v)[idx] if np.ndim(v) == 1 and np.size(v) == n else v) for k, v in d.items()}


def _merge(frame: pd.DataFrame, sub: pd.DataFrame, idx) -> pd.DataFrame:
    """``frame`` with its rows ``idx`` replaced by ``sub`` (same columns)."""
    import pandas as pd
    cols = {c: frame[c].to_numpy().copy() for c in frame.columns}
    for c in frame.columns:
        v = sub[c].to_numpy()
        if cols[c].dtype != v.dtype and cols[c].dtype != object:
            cols[c] = cols[c].astype(np.result_type(cols[c].dtype, v.dtype))
        cols[c][idx] = v
    return pd.DataFrame(cols)


def _evaluate_unique(setup: Setup, pts: dict, vals: dict, keys) -> pd.DataFrame:
    """``evaluate`` once per distinct combination of ``keys`` (every other point column equal across points,
    scalar symbols), mapped back to every point; per-point symbol arrays evaluate every point."""
    n = len(pts["gpus"])
    if any(np.ndim(v) == 1 and np.size(v) == n and n > 1 for v in vals.values()):
        return evaluate(setup, pts, symbol_values=vals)
    key = np.stack([np.broadcast_to(np.asarray(pts[k], float), (n,)) for k in keys], axis=1)
    uniq, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    if len(uniq) == n:
        return evaluate(setup, pts, symbol_values=vals)
    sub = evaluate(setup, _take(pts, first, n), symbol_values=vals)
    return sub.iloc[np.ravel(inverse)].reset_index(drop=True)


def _moved(a, b, scale=1.0) -> np.ndarray:
    """Where a fixed-point iterate still moves: |a - b| > 1e-6 x scale (1e-6 absolute for shares)."""
    return np.abs(np.asarray(a, float) - np.asarray(b, float)) > 1e-6 * np.asarray(scale, float)


def snapshot_policy(setup: Setup, isl, osl):
    """(snapshot bytes factor, tokens lost per hit) of the model's fixed state under the profile's policy."""
    m, fmt, pc = setup.model, setup.kv_cache, setup.profile.prefix_cache
    states = fixed_states(m, fmt, pc.window_snapshot_interval_tokens, pc.linear_snapshot_interval_tokens)
    return snapshot_factor(kv_bytes_per_token(m, fmt), states, isl), snapshot_lost_tokens(states, osl)


def miss_share(evicted, isl, hit_uncached, prefix_hit=None) -> np.ndarray:
    """Share of requests that re-prefill their whole context: ``evicted`` (the cache model's), or, where a hit h
    is forced, the miss share e of the hit/miss mixture whose mean uncached input is isl (1 - h):
        (1 - e) u_hit + e isl = isl (1 - h)  ->  e = (isl (1 - h) - u_hit) / (isl - u_hit), clipped to [0, 1]
    (u_hit: the uncached input of a request that finds its prefix)."""
    ev = np.asarray(evicted, float)
    if prefix_hit is None:
        return ev
    isl, u = np.asarray(isl, float), np.asarray(hit_uncached, float)
    hit = np.broadcast_to(np.asarray(prefix_hit, float), np.shape(isl))
    e = np.clip((isl * (1.0 - np.nan_to_num(hit)) - u) / np.maximum(isl - u, 1e-9), 0.0, 1.0)
    return np.where(np.isfinite(hit), e, ev)


def frame_miss_share(setup: Setup, evicted, isl, uncached, hit_uncached) -> np.ndarray:
    """The miss share the request statistics read (mechanism ``agentic_miss_from_frame``; off: ``evicted``):
    the share e of requests re-prefilling their whole context that the evaluated frame's own mean uncached input
    u holds, (1 - e) u_hit + e isl = u, so e = (u - u_hit) / (isl - u_hit), clipped to [0, 1] (``miss_share``
    with the frame's hit 1 - u / isl). Where the agentic fixed point converged, u = isl - (1 - evicted) (isl -
    u_hit) and e = ``evicted`` exactly; where it stopped first (two stable states past the KV cliff), ``evicted``
    is the next iterate's, not the one the frame's TTFT, batch and throughput were evaluated with."""
    if not setup.profile.uses("agentic_miss_from_frame"):
        return np.asarray(evicted, float)
    isl, u = np.asarray(isl, float), np.asarray(uncached, float)
    return miss_share(evicted, isl, hit_uncached, 1.0 - u / np.maximum(isl, 1e-9))


def forced_uncached(uncached, isl, prefix_hit=None) -> np.ndarray:
    """Uncached input per request with a measured hit forced: isl (1 - hit) where ``prefix_hit`` is finite, the
    cache model's ``uncached`` elsewhere (NaN or None: not forced)."""
    if prefix_hit is None:
        return np.asarray(uncached, float)
    hit = np.broadcast_to(np.asarray(prefix_hit, float), np.shape(uncached))
    return np.where(np.isfinite(hit), np.asarray(isl, float) * (1.0 - np.nan_to_num(hit)), uncached)


def ceiling_scale(dists) -> float:
    """The factor k on every later turn's new tokens that keeps the trace-wide hit at or below its published
    ceiling h_max, as the mean request counts it (serving/lengths.py: mean uncached = E[new] + w_1 E[first],
    raised to E[ctx] (1 - h_max)):
        k = max(1, (E[ctx] (1 - h_max) - w_1 E[first]) / E[new])
    (w_1 = ``first_turn_share``, E[first] = ``first_turn_tokens`` at the mean context). The ceiling bounds the
    trace's token-weighted hit, not each request's, so the draws are scaled (their shape kept), not floored.
    1 without a ceiling or a spec."""
    ceiling = getattr(dists, "max_hit_rate", None)
    if ceiling is None:
        return 1.0
    ctx, new = dists.context_tokens.mean_value, dists.new_tokens_per_turn.mean_value
    first = first_turn_share(dists) * float(first_turn_tokens(dists, ctx, new))
    return max(1.0, (ctx * (1.0 - ceiling) - first) / new)


def ceiling_scaled(setup: Setup, dists, new, context) -> np.ndarray:
    """A later turn's uncached input with the hit ceiling applied: min(k new, context), k = ``ceiling_scale``
    where the profile switches on ``hit_ceiling_per_trace`` (specs/mechanisms.py), else 1 (tokens; no ceiling:
    min(new, context))."""
    k = ceiling_scale(dists) if dists is not None and setup.profile.uses("hit_ceiling_per_trace") else 1.0
    return np.minimum(np.asarray(new, float) * k, np.asarray(context, float))


def first_turn_share(dists) -> float:
    """Share of requests that open a (replayed) session: 1 / replayed turns (a mid-trajectory replay start),
    1 / turns, 0 without a turn count (serving/lengths.py, serving/prefill_spread.py count them the same way)."""
    if dists.replayed_turns is not None:
        return 1.0 / dists.replayed_turns
    return 1.0 / max(dists.turns.mean_value, 1.0) if dists.turns is not None else 0.0


def first_turn_tokens(dists, context, new) -> np.ndarray:
    """Tokens a session's first request prefills: the whole context reached at a replay start, else the initial
    context c0 = max(context - (T - 1) / 2 (E[new] + E[osl]), new) (serving/lengths.py), at most the context."""
    ctx = np.asarray(context, float)
    if dists.replayed_turns is not None or dists.turns is None:
        return ctx if dists.replayed_turns is not None else np.asarray(new, float)
    grow = (dists.turns.mean_value - 1) / 2 * (dists.new_tokens_per_turn.mean_value + dists.output_tokens.mean_value)
    return np.minimum(np.maximum(ctx - grow, new), ctx)


def median_request_ttft_ms(setup: Setup, layout: dict, ttft_ms, mean_new, dists, evicted, workers, routing,
                           symbol_values: dict, prefix_hit=None) -> np.ndarray:
    """P50 TTFT of the median request, ms. The closed loop's P50 TTFT is built around the MEAN request's own
    prefill (throughput needs means); a median is read at the median request: context L50 = the context
    median, new50 = the new-token median scaled to the hit ceiling (``ceiling_scaled``). A request either finds its prefix (uncached: uncached_input(L50, new50, osl50, 0), prefix_cache.py,
    same routing and snapshot losses) or re-prefills its whole context (share ``evicted``, a mixture, not a
    blend), so the median request misses only when more than half do: u50 = L50 if evicted > 1/2.
    P50 = TTFT_p50 - prefill(mean request) + prefill(median request), on ``layout`` (the instance that
    prefills: the aggregated instance, or one prefill instance). ``prefix_hit`` is unused (a forced hit enters
    as its miss share, ``miss_share``)."""
    n = len(np.asarray(ttft_ms))
    L50 = dists.context_tokens.median
    new50 = float(ceiling_scaled(setup, dists, dists.new_tokens_per_turn.median, L50))
    osl50 = dists.output_tokens.median
    f = lambda v: np.broadcast_to(np.asarray(v, float), (n,))  # noqa: E731
    _, lost = snapshot_policy(setup, f(L50), f(osl50))
    hit50 = uncached_input(f(L50), f(new50), f(osl50), np.zeros(n), workers, routing, lost)
    u50 = np.where(f(evicted) > 0.5, f(L50), hit50)
    mean_isl = f(layout["isl"])
    base = {k: f(layout[k]) for k in ("gpus", "tp", "ep")}
    base["pp"] = f(layout.get("pp", 1.0))
    cm = compiled(setup.model)
    t = lambda isl, new: np.broadcast_to(np.asarray(cm.prefill(prefill_inputs(  # noqa: E731
        {**base, "isl": isl, "new": new}, symbol_values))["prefill_s"], float), (n,))
    return np.asarray(ttft_ms, float) + (t(f(L50), u50) - t(mean_isl, f(mean_new))) * 1e3


def idle_gaps(setup: Setup, dists, pause_s: float, sessions, batch, t_busy, routing: str) -> ReuseGaps | None:
    """The idle gap of a session's prefix between its requests (prefix_cache.ReuseGaps): the workload's tool
    pause (its log-normal spread, scaled to mean ``pause_s``) plus the mean wait for admission,
        w = E[idle] - pause,   E[idle] = (S - B) t_busy / B     (Little's law: S - B idle sessions, B / t_busy
                                                                requests a second; B: the sessions in a request,
                                                                ``sessions_in_requests``)
    None (the exponential working-set law) without a pause distribution, under random routing (a worker's
    copy is W visits old, a sum of gaps), or where the profile does not switch on ``prefix_cache_renewal``
    (specs/mechanisms.py)."""
    pause = getattr(dists, "tool_pause_s", None)
    if pause is None or routing == "random" or pause_s <= 0 or not setup.profile.uses("prefix_cache_renewal"):
        return None
    scale = pause_s / pause.mean_value
    idle = (np.asarray(sessions, float) - batch) * t_busy / np.maximum(batch, 1e-9)
    return ReuseGaps(pause.median * scale, pause.sigma, wait=np.maximum(idle - pause_s, 0.0))


def admitted_prefilling(df: pd.DataFrame, osl) -> np.ndarray:
    """Requests admitted but not yet decoding (waiting for or running their prefill), per instance:
        n_pf = X (W_q + T_pf),  X = B / (osl TPOT)          (Little's law; W_q the prefill queue, T_pf the own
                                                            prefill, s; X requests a second)
    They hold their KV from admission, so they take HBM the idle sessions' prefixes could keep."""
    x = df["batch"].to_numpy(float) / np.maximum(np.asarray(osl, float) * df["tpot_ms"].to_numpy(float) / 1e3, 1e-12)
    wait = np.nan_to_num(df["prefill_queue_ms"].to_numpy(float)) + np.nan_to_num(df["prefill_ms"].to_numpy(float))
    return x * wait / 1e3


LANE_ITERATIONS = 8      # fixed-point passes when benchmark lanes pause between requests (converges in ~5)


@dataclass
class _SessionLoop:
    """What the aggregated agentic fixed point holds fixed, per point (arrays) or per call."""

    setup: Setup             # its profile says which mechanisms are on (specs/mechanisms.py)
    p: dict                  # the points (point_arrays)
    osl: np.ndarray          # output tokens per request
    pause_s: float           # mean tool pause between a session's requests, s
    clients: np.ndarray      # the closed loop's concurrency (0 where the batch sets the sessions)
    lanes: np.ndarray        # the benchmark's lanes (NaN: the batch sets the sessions)
    f_snap: np.ndarray       # bytes of a cached prefix over its KV bytes (state snapshots)
    host_tier: bool
    host_bytes: Any          # host-tier bytes per GPU, C_host f_mem (a float or per point)
    pool_gb_per_gpu: float   # spare HBM elsewhere in the domain, pooled, GB per GPU
    workers: Any             # instances the routing spreads a session over
    routing: str
    dists: Any               # the workload's length distributions, or None


@dataclass
class _Residency:
    """Where one fixed-point pass puts the sessions and their prefixes, per instance (arrays)."""

    batch: np.ndarray        # sessions generating (the decode batch B)
    sessions: np.ndarray     # live sessions S
    in_loop: np.ndarray      # lanes not in a tool pause, the next iterate
    paused: np.ndarray       # S - B, the non-running prefixes
    per_session: np.ndarray  # bytes per GPU of one cached prefix (snapshots included)
    dp: np.ndarray           # attention-DP ranks, G / (tp pp)
    active_host: np.ndarray  # host-tier bytes per GPU of the generating sessions' cold KV
    spare_hbm: np.ndarray    # prefixes' worth of spare HBM
    pool_sessions: np.ndarray
    host_sessions: np.ndarray
    s_hbm: np.ndarray        # shares of the paused prefixes in each tier (tier_shares)
    s_pool: np.ndarray
    s_host: np.ndarray
    evicted: np.ndarray      # share of paused prefixes evicted (re-prefilled whole)


def sessions_in_requests(df: pd.DataFrame, batch, t_busy, littles: bool):
    """Sessions in a request (not pausing), per instance: X t_busy with X the frame's request rate per instance
    (Little's law, mechanism ``sessions_littles_law``), else the running batch B (B / t_busy requests a second, an
    undercount by the share of t_busy spent queueing)."""
    return df["request_rate_per_s"].to_numpy(float) * t_busy if littles else batch


def live_count(busy, t_busy, pause_s: float, clients):
    """Live sessions S = max(busy (t_busy + pause) / t_busy, clients): each session in a request (``busy``,
    ``sessions_in_requests``) stands for (t_busy + pause) / t_busy live ones; clients waiting hold a prefix too."""
    return np.maximum(busy * (t_busy + pause_s) / t_busy, clients)


def live_sessions(df: pd.DataFrame, osl, pause_s: float, clients, lanes, littles: bool = False):
    """(B, t_busy s, live sessions S, lanes in the loop, sessions in a request) of an evaluated frame:
        t_busy = TTFT + osl TPOT,   S = ``live_count`` of ``sessions_in_requests``
    and the interactive response-time law: a lane cycles request (t_cyc = mean TTFT + osl TPOT) then pause Z, so
    max(1, lanes t_cyc / (t_cyc + Z)) of them are in the serving loop at a time (NaN lanes stay NaN).
    ``littles`` (mechanism ``sessions_littles_law``): t_busy on the mean TTFT (Little's law holds for means), else
    on the P50."""
    batch = df["batch"].to_numpy(float)
    tpot = df["tpot_ms"].to_numpy() / 1e3
    t_cyc = df["ttft_mean_ms"].to_numpy() / 1e3 + osl * tpot
    t_busy = t_cyc if littles else df["ttft_ms"].to_numpy() / 1e3 + osl * tpot
    busy = sessions_in_requests(df, batch, t_busy, littles)
    sessions = live_count(busy, t_busy, pause_s, clients)
    in_loop_next = np.where(np.isfinite(lanes), np.maximum(lanes * t_cyc / (t_cyc + pause_s), 1.0), lanes)
    return batch, t_busy, sessions, in_loop_next, busy


def spare_hbm_prefixes(df: pd.DataFrame, batch, osl, in_loop, fixed_batch, f_snap, admit_on: bool) -> np.ndarray:
    """Cached prefixes' worth of HBM the admitted requests leave free, per instance:
        max(kv_max_batch - admitted, 0) / f_snap
    admitted = B, plus (second pass, ``admit_on``) the requests waiting for or in their prefill, which hold their
    KV from admission: n_pf = X (prefill queue + own prefill), X = B / (osl TPOT) requests a second (Little), at
    most the clients in the loop not decoding (none where no lanes are given: the batch is the load). More
    requests in the loop than the engine admits (a solved batch, NaN ``fixed_batch``: its running cap max_batch,
    the KV or the running-request limit): the admitted ones fill that cap."""
    prefilling = np.minimum(admitted_prefilling(df, osl), np.maximum(np.nan_to_num(in_loop) - batch, 0.0))
    full = (np.nan_to_num(in_loop) > df["max_batch"].to_numpy(float)) & np.isnan(fixed_batch) & admit_on
    admitted = np.where(full, df["max_batch"].to_numpy(float),
                        np.minimum(batch + (prefilling if admit_on else 0.0), df["kv_max_batch"].to_numpy()))
    return np.maximum(df["kv_max_batch"].to_numpy() - admitted, 0) / f_snap


def residency(loop: _SessionLoop, df: pd.DataFrame, in_loop, admit_on: bool) -> _Residency:
    """One pass of the agentic fixed point: the live sessions of the evaluated frame ``df`` (``live_sessions``)
    and the shares of their S - B paused prefixes in each cache tier, in order spare HBM
    (``spare_hbm_prefixes``), the domain's pooled HBM (pool_gb_per_gpu / per_session dp prefixes), the host tier
    ((C_host f_mem - active host KV) / per_session dp prefixes, with ``host_tier``), else evicted
    (prefix_cache.tier_shares: the LRU working-set law under the routing, with the idle gaps of ``idle_gaps``)."""
    p, zeros = loop.p, np.zeros_like(loop.p["new"])
    batch, t_busy, sessions, in_loop_next, busy = live_sessions(
        df, loop.osl, loop.pause_s, loop.clients, loop.lanes, loop.setup.profile.uses("sessions_littles_law"))
    paused = sessions - batch
    per_session = np.maximum(df["kv_gb_per_seq_per_gpu"].to_numpy() * 1e9, 1.0) * loop.f_snap
    spare_hbm = spare_hbm_prefixes(df, batch, loop.osl, in_loop, p["batch"], loop.f_snap, admit_on)
    dp = p["gpus"] / (p["tp"] * p["pp"])
    active_host = df["host_kv_gb_per_gpu"].to_numpy() * 1e9       # cold KV of generating sessions
    host_sessions = (np.maximum(loop.host_bytes - active_host, 0) / per_session * dp if loop.host_tier
                     else zeros)
    pool_sessions = loop.pool_gb_per_gpu * 1e9 / per_session * dp
    (s_hbm, s_pool, s_host), evicted = tier_shares(
        competing(paused, loop.workers, loop.routing), [spare_hbm, pool_sessions, host_sessions],
        idle_gaps(loop.setup, loop.dists, loop.pause_s, sessions, busy, t_busy, loop.routing))
    return _Residency(batch, sessions, in_loop_next, paused, per_session, dp, active_host, spare_hbm,
                      pool_sessions, host_sessions, s_hbm, s_pool, s_host, evicted)


def residency_columns(df: pd.DataFrame, loop: _SessionLoop, r: _Residency, isl) -> None:
    """Adds the sessions and their KV residency to ``df`` (in place): host KV and capacity per GPU, GB; live
    sessions (per instance, per GPU); the share of the sessions' KV in HBM (the batch plus the paused ones kept
    there), the pool and the host tier, and evicted; the prefix hit 1 - uncached / isl; the cache's working set
    and capacity per GPU, GB."""
    p, sessions = loop.p, r.sessions
    in_host = r.s_host * r.paused
    df["host_kv_gb_per_gpu"] = (r.active_host + in_host * r.per_session / r.dp) / 1e9
    df["host_capacity_gb_per_gpu"] = loop.host_bytes / 1e9 if loop.host_tier else 0.0
    safe = np.where(sessions > 0, sessions, 1.0)
    df["sessions"] = sessions
    df["sessions_per_gpu"] = sessions / p["gpus"]
    df["kv_in_hbm_share"] = np.where(sessions > 0, (r.batch + r.s_hbm * r.paused) / safe, 1.0)
    df["kv_in_pool_share"] = np.where(sessions > 0, r.s_pool * r.paused / safe, 0.0)
    df["kv_in_host_share"] = np.where(sessions > 0, in_host / safe, 0.0)
    df["evicted_share"] = np.where(sessions > 0, r.evicted * r.paused / safe, 0.0)
    df["prefix_hit"] = 1 - df["uncached_input"] / isl
    df["cache_working_set_gb_per_gpu"] = competing(r.paused, loop.workers, loop.routing) * r.per_session / r.dp / 1e9
    df["cache_capacity_gb_per_gpu"] = (r.spare_hbm + r.pool_sessions + r.host_sessions) * r.per_session / r.dp / 1e9
    df["routing"] = loop.routing


def agentic(setup: Setup, points: dict, pause_s: float, host_tier: bool, iterations: int = 3,
            dists=None, percentile: float | None = None, symbol_values: dict | None = None,
            pool_gb_per_gpu: float = 0.0, workers=1.0, routing: str | None = None,
            prefix_hit=None, ttft_percentiles=()) -> pd.DataFrame:
    """Evaluate agentic sessions at decode batch B (sessions generating). Adds live sessions and KV residency.

    Live sessions per instance S = ``live_count`` (max(B (t_busy + pause) / t_busy, clients), B the sessions in a
    request, ``sessions_in_requests``), clients = the closed loop's
    ``concurrency`` (clients waiting for a slot hold a prefix too). A benchmark's ``concurrency`` counts lanes
    that pause ``pause_s`` between a response and their next request (AgentX replays the trace's think times):
    only lanes t_cyc / (t_cyc + pause) of them are in the serving loop at once (the interactive response-time
    law, t_cyc = mean TTFT + osl TPOT), solved in the same fixed point. The S - B non-running prefixes compete for
    the cache tiers, in order: spare HBM of the instance; ``pool_gb_per_gpu`` of spare HBM elsewhere in the
    scale-up domain pooled Mooncake-style (reloaded over the scale-up link); the host tier (reloaded over the
    host link); else eviction (re-prefill of the whole context). Shares follow the LRU working-set law of
    serving/prefix_cache.py (survive = min(1, capacity / working set)), with the profile's routing over
    ``workers`` instances and the model's state snapshots (bytes per cached prefix, tokens lost per hit).
    In a uniform deployment every GPU's spare HBM already serves its own sessions, so the pool is only what
    other GPUs (e.g. a prefill pool) leave free.
    Fixed point (vectorized, a few iterations): eviction raises the uncached input, which lengthens TTFT,
    which changes how many sessions are live. With ``dists`` (the workload's length distributions)
    ``ttft_ms`` is the median request's P50 (``median_request_ttft_ms``; the mean request's is
    ``ttft_mean_request_ms``).
    ``ttft_percentiles`` (e.g. (90,)): adds ``ttft_p90_request_ms``, the P90 over requests
    (``request_ttft_percentile``, needs ``dists``).
    ``prefix_hit`` (a share per point, NaN where not forced, or None): the measured hit forced (a run the
    source says lost prefix reuse, or a published hit rate): every request prefills isl (1 - prefix_hit) tokens whatever the cache model gives; the
    residency shares (and the host-tier reload of the hit part) are still computed.
    """
    p = point_arrays(points)
    routing = routing or setup.profile.prefix_cache.routing
    base_new, isl, osl = p["new"].copy(), p["isl"], p["osl"]
    f_snap, lost = snapshot_policy(setup, isl, osl)
    zeros = np.zeros_like(base_new)
    reload, pool_reload = zeros, zeros
    new = forced_uncached(uncached_input(isl, base_new, osl, zeros, workers, routing, lost), isl, prefix_hit)
    hw = symbol_values if symbol_values is not None else setup.symbol_values()
    n = len(base_new)
    loop = _SessionLoop(setup, p, osl, pause_s, np.where(np.isnan(p["concurrency"]), 0.0, p["concurrency"]),
                        p["concurrency"], f_snap, host_tier, hw["C_host"] * hw["f_mem"], pool_gb_per_gpu, workers,
                        routing, dists)
    in_loop = loop.lanes.copy()                    # lanes not in a tool pause: the closed loop's clients
    if pause_s > 0 and np.isfinite(loop.lanes).any():
        iterations = max(iterations, LANE_ITERATIONS)
    spread = (lambda ev: prefill_cv2(dists, ev)) if dists is not None else (lambda ev: zeros)  # noqa: E731
    pts = {**p, "new": new, "reload": reload, "pool_reload": pool_reload, "concurrency": in_loop,
           "prefill_cv2": spread(zeros)}
    df = evaluate(setup, pts, symbol_values=hw)
    # two passes (the profile's mechanism kv_admitted_prefill; else the first only): the fixed point first with
    # only the decoding batch holding KV, then continued with the requests admitted to prefill holding theirs too
    # (``admitted_prefilling``): past the KV cliff the loop has two stable states (warm cache, short queue; cold
    # cache, long queue), and a warm engine sits in the first while it exists
    admit_on, two_pass = False, setup.profile.uses("kv_admitted_prefill")
    passes = 2 * iterations if two_pass else iterations
    for it in range(passes):
        r = residency(loop, df, in_loop, admit_on)
        new_next = forced_uncached(uncached_input(isl, base_new, osl, r.evicted, workers, routing, lost), isl,
                                   prefix_hit)
        if it == passes - 1:
            break
        changed = (_moved(new_next, new, isl) | _moved(r.s_host, reload) | _moved(r.s_pool, pool_reload)
                   | _moved(np.nan_to_num(r.in_loop), np.nan_to_num(in_loop), np.nan_to_num(loop.lanes) * 1e3))
        new, reload, pool_reload, in_loop = new_next, r.s_host, r.s_pool, r.in_loop
        if not changed.any() or (it == iterations - 1 and not admit_on):
            if admit_on or not two_pass:
                break
            admit_on = True                   # the second pass, from the first pass's state
            continue
        idx = np.nonzero(changed)[0]          # only the points whose residency moved are evaluated again
        sub = {**p, "new": new, "reload": reload, "pool_reload": pool_reload, "concurrency": in_loop,
               "prefill_cv2": spread(r.evicted)}
        df = _merge(df, evaluate(setup, _take(sub, idx, n), symbol_values=_take(hw, idx, n)), idx)
    df = df.copy()
    u_hit = uncached_input(isl, base_new, osl, zeros, workers, routing, lost)     # a request finding its prefix
    r.evicted = frame_miss_share(setup, r.evicted, isl, df["uncached_input"].to_numpy(float), u_hit)
    residency_columns(df, loop, r, isl)
    evicted = r.evicted
    if prefix_hit is not None:           # a forced hit: its miss share of the hit/miss mixture
        evicted = miss_share(evicted, isl, u_hit, prefix_hit)
        held = np.isfinite(np.broadcast_to(np.asarray(prefix_hit, float), isl.shape))
        df["evicted_share"] = np.where(held, evicted * r.paused / np.where(r.sessions > 0, r.sessions, 1.0),
                                       df["evicted_share"].to_numpy())
    if dists is not None:
        request_columns(setup, p, df, dists, percentile, ttft_percentiles, evicted, workers, routing, hw)
    return df


def request_columns(setup: Setup, p: dict, df: pd.DataFrame, dists, percentile: float | None, ttft_percentiles,
                    evicted, workers, routing: str, hw: dict) -> None:
    """Adds the statistics over requests that the workload's length distributions ``dists`` give (in place):
    with ``percentile``, the end-to-end interactivity at that percentile (tok/s/user,
    ``e2e_interactivity_percentile``); ``ttft_ms`` becomes the median request's P50 (``median_request_ttft_ms``,
    the mean request's kept as ``ttft_mean_request_ms``); ``ttft_p{q}_request_ms`` per ``ttft_percentiles`` (ms,
    ``request_ttft_percentile``)."""
    if percentile is not None:
        q = e2e_interactivity_percentile(setup, p, df, dists, percentile, evicted, hw)
        df[f"tps_per_user_e2e_p{percentile:g}"] = q
        df[f"e2e_norm_intvty_p{percentile:g}"] = q
    df["ttft_mean_request_ms"] = df["ttft_ms"]
    df["ttft_ms"] = median_request_ttft_ms(setup, p, df["ttft_ms"].to_numpy(), df["uncached_input"].to_numpy(),
                                           dists, evicted, workers, routing, hw)
    for q in ttft_percentiles:
        df[f"ttft_p{q:g}_request_ms"] = request_ttft_percentile(setup, p, df, dists, q, evicted, hw)


def prefill_pool_cache(setup: Setup, p: dict, pf: dict, vals: dict, f_snap, host_tier: bool):
    """The prefix cache of one prefill instance (``agentic_disaggregated``), per point:
    (prefill points, bytes per GPU of one cached prefix, attention-DP ranks G_pf / tp_pf, prefixes' worth of
    spare HBM, prefixes' worth of host tier). The prefill layout ``pf`` is evaluated at batch 1 (one request in
    flight): spare HBM = max(kv_max_batch - 1, 0) / f_snap prefixes; host tier (with ``host_tier``)
    C_host f_mem / per_session x dp prefixes; per_session = max(KV bytes per sequence per GPU, 1) f_snap."""
    n = len(p["new"])
    pfp = {**{k: p[k] for k in p}, **{k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in pf.items()},
           "batch": np.ones(n), "mix": np.zeros(n), "pp": np.ones(n), "concurrency": np.full(n, np.nan)}
    cap = _evaluate_unique(setup, pfp, vals, ("gpus", "tp", "ep", "isl", "osl", "spec_tokens", "acc"))
    per_session = np.maximum(cap["kv_gb_per_seq_per_gpu"].to_numpy() * 1e9, 1.0) * f_snap
    pf_dp = pfp["gpus"] / pfp["tp"]
    hbm_prefixes = np.maximum(cap["kv_max_batch"].to_numpy() - 1.0, 0.0) / f_snap
    host_prefixes = vals["C_host"] * vals["f_mem"] / per_session * pf_dp if host_tier else np.zeros(n)
    return pfp, per_session, pf_dp, hbm_prefixes, host_prefixes


def agentic_disaggregated(setup: Setup, points: dict, pf: dict, instances, pf_instances, pause_s: float,
                          host_tier: bool, iterations: int = 3, symbol_values: dict | None = None,
                          routing: str | None = None, dists=None, prefix_hit=None) -> pd.DataFrame:
    """Agentic sessions on disaggregated pools: a turn's uncached suffix is prefilled on the prefill pool, its
    KV moves to the decode pool, decode runs there (``disaggregated``).

    The reusable prefixes live in the prefill pool's cache (KV-aware routing picks the prefill worker holding a
    session's prefix): per prefill instance, the spare HBM of its KV budget (max_batch at its layout less the
    one request in flight) plus, with ``host_tier``, its GPUs' host memory. Live sessions per decode instance
    S = ``live_count`` as in ``agentic``; the instances (S - B) non-running prefixes spread over the
    pf_instances prefill workers and follow the working-set law of serving/prefix_cache.py. A host-tier hit
    reloads its prefix over the prefill GPUs' host links before the prefill (added to TTFT; overlapped with
    other requests' prefill, so not to the prefill pool's rate). The KV transfer moves the whole context.
    With ``dists`` (the workload's length distributions) ``ttft_ms`` is the median request's P50
    (``median_request_ttft_ms``, on one prefill instance; the mean request's is ``ttft_mean_request_ms``).
    ``prefix_hit``: a measured hit forced, as in ``agentic``; lanes pausing between requests as in ``agentic``.
    """
    p = point_arrays(points)
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    routing = routing or setup.profile.prefix_cache.routing
    base_new, isl, osl = p["new"].copy(), p["isl"], p["osl"]
    n = len(base_new)
    f_snap, lost = snapshot_policy(setup, isl, osl)
    clients = np.where(np.isnan(p["concurrency"]), 0.0, p["concurrency"])
    inst = np.broadcast_to(np.asarray(instances, float), (n,))
    pinst = np.broadcast_to(np.asarray(pf_instances, float), (n,))
    pfp, per_session, pf_dp, hbm_prefixes, host_prefixes = prefill_pool_cache(setup, p, pf, vals, f_snap, host_tier)
    bw_host = np.minimum(vals["BW_host"], vals["BW_hmem"]) * vals["e_ln"]
    evicted, s_host = np.zeros(n), np.zeros(n)
    new = forced_uncached(uncached_input(isl, base_new, osl, evicted, pinst, routing, lost), isl, prefix_hit)
    reload_s = np.zeros(n)
    pf_arr = {k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in pf.items()}
    lanes = p["concurrency"]                      # lanes per decode instance; those not pausing are in the loop
    in_loop = lanes.copy()
    if pause_s > 0 and np.isfinite(lanes).any():
        iterations = max(iterations, LANE_ITERATIONS)

    def run(idx=None):
        sel = (lambda d: d) if idx is None else (lambda d: _take(d, idx, n))  # noqa: E731
        return disaggregated(setup, sel({**p, "new": new, "concurrency": in_loop}), sel(pf_arr),
                             sel({"i": inst})["i"], sel({"i": pinst})["i"], symbol_values=sel(vals),
                             extra_prefill_s=sel({"r": reload_s})["r"])

    out = run()
    for it in range(iterations):
        batch = out["batch"].to_numpy(float)
        t_busy = out["ttft_mean_ms"].to_numpy() / 1e3 + osl * out["tpot_ms"].to_numpy() / 1e3
        in_loop_next = np.where(np.isfinite(lanes), np.maximum(lanes * t_busy / (t_busy + pause_s), 1.0), lanes)
        busy = sessions_in_requests(out, batch, t_busy, setup.profile.uses("sessions_littles_law"))
        sessions = live_count(busy, t_busy, pause_s, clients)                       # per decode instance
        paused = inst * (sessions - batch) / np.maximum(pinst, 1e-9)                # per prefill instance
        (s_hbm, s_host), evicted = tier_shares(competing(paused, pinst, routing), [hbm_prefixes, host_prefixes],
                                               idle_gaps(setup, dists, pause_s, sessions, busy, t_busy, routing))
        new_next = forced_uncached(uncached_input(isl, base_new, osl, evicted, pinst, routing, lost), isl,
                                   prefix_hit)
        reload_next = s_host * request_kv_bytes(setup, isl - new_next) / (pfp["gpus"] * bw_host)
        if it == iterations - 1:
            break
        changed = (_moved(new_next, new, isl) | _moved(reload_next, reload_s)
                   | _moved(np.nan_to_num(in_loop_next), np.nan_to_num(in_loop), np.nan_to_num(lanes) * 1e3))
        new, reload_s, in_loop = new_next, reload_next, in_loop_next
        if not changed.any():
            break
        idx = np.nonzero(changed)[0]          # only the points whose residency moved are evaluated again
        out = _merge(out, run(idx), idx)
    out = out.copy()
    u_hit = uncached_input(isl, base_new, osl, np.zeros(n), pinst, routing, lost)   # a request finding its prefix
    evicted = frame_miss_share(setup, evicted, isl, out["uncached_input"].to_numpy(float), u_hit)
    total = inst * p["gpus"] + pinst * pfp["gpus"]
    out["sessions"] = sessions
    out["sessions_per_gpu"] = inst * sessions / total
    out["evicted_share"] = evicted
    out["kv_in_host_share"] = s_host
    out["prefix_hit"] = 1 - out["uncached_input"] / isl
    out["cache_working_set_gb_per_gpu"] = competing(paused, pinst, routing) * per_session / pf_dp / 1e9
    out["cache_capacity_gb_per_gpu"] = (hbm_prefixes + host_prefixes) * per_session / pf_dp / 1e9
    out["host_reload_ms"] = reload_s * 1e3
    out["routing"] = routing
    if dists is not None:
        miss = miss_share(evicted, isl, u_hit, prefix_hit)
        out["ttft_mean_request_ms"] = out["ttft_ms"]
        out["ttft_ms"] = median_request_ttft_ms(setup, {**pfp, "isl": isl}, out["ttft_ms"].to_numpy(),
                                                out["uncached_input"].to_numpy(), dists, miss, pinst, routing,
                                                vals)
    return out


N_SAMPLES = 256


def _lognormal_samples(dist, z: np.ndarray) -> np.ndarray:
    return dist.median * np.exp(dist.sigma * z)


def e2e_interactivity_percentile(setup: Setup, p: dict, df: pd.DataFrame, dists, percentile: float,
                                 evicted=0.0, symbol_values: dict | None = None, prefix_hit=None) -> np.ndarray:
    """AgentX e2e_norm_intvty_q = 1 / percentile_q(E2E_i / OSL_i), per operating point.

    Requests i are drawn (fixed seed, N_SAMPLES) from the workload's log-normal distributions of context,
    new tokens and output length, and a uniform u_i for its place in the prefill queue (all independent).
    Per request: E2E_i = TTFT_i + OSL_i TPOT, with
        TTFT_i = base + W_i + prefill(new_i after its cached prefix) + one decode step,
        W_i = (E[W] / rho) max(0, ln(rho / (1 - u_i)))       (the queue's exponential tail, P(W > 0) = rho,
                                                               mean E[W]: equations/queueing.py)
    where base = E[TTFT] - E[W] - the point's own prefill - a step (request overhead, capacity wait, the step in
    progress, the decode batch riding along its chunks). So the percentile sees the queue's spread, not only
    its mean. Evaluated as one (points x samples) array through the compiled prefill equations.
    """
    ttft, osl, tpot = _request_samples(setup, p, df, dists, evicted, symbol_values, prefix_hit)
    ratio = (ttft + osl[None, :] * tpot) / osl[None, :]
    return 1.0 / np.percentile(ratio, percentile, axis=1)


def request_ttft_percentile(setup: Setup, p: dict, df: pd.DataFrame, dists, percentile: float, evicted=0.0,
                            symbol_values: dict | None = None, prefix_hit=None) -> np.ndarray:
    """P``percentile`` of TTFT over requests, ms, from the same request samples as
    ``e2e_interactivity_percentile`` (length spread x the queue's exponential tail)."""
    ttft, _osl, _tpot = _request_samples(setup, p, df, dists, evicted, symbol_values, prefix_hit)
    return np.percentile(ttft, percentile, axis=1) * 1e3


def _request_samples(setup: Setup, p: dict, df: pd.DataFrame, dists, evicted=0.0,
                     symbol_values: dict | None = None, prefix_hit=None):
    """(TTFT_i s (points x N_SAMPLES), OSL_i (N_SAMPLES,), TPOT s (points x 1)): the request draws of
    ``e2e_interactivity_percentile``. With the profile's mechanism ``first_turn_requests``, a share
    ``first_turn_share`` of the requests open a session (they prefill ``first_turn_tokens``, as the mean and the
    simulation count them). Request i misses its prefix (prefills its whole context) with
    probability ``evicted`` (a forced hit enters as its miss share, ``miss_share``); ``prefix_hit`` is unused."""
    rng = np.random.default_rng(12345)
    z = rng.standard_normal((3, N_SAMPLES))
    u = np.random.default_rng(54321).uniform(size=N_SAMPLES)
    ctx = _lognormal_samples(dists.context_tokens, z[0])
    new = ceiling_scaled(setup, dists, _lognormal_samples(dists.new_tokens_per_turn, z[1]), ctx)
    osl = _lognormal_samples(dists.output_tokens, z[2])
    if dists.max_output_tokens:
        osl = np.minimum(osl, dists.max_output_tokens)
    if setup.profile.uses("first_turn_requests"):       # specs/mechanisms.py
        new = np.where(np.random.default_rng(13579).uniform(size=N_SAMPLES) < first_turn_share(dists),
                       first_turn_tokens(dists, ctx, new), new)
    n = len(df)
    ev = np.broadcast_to(np.asarray(evicted, float), (n,))[:, None]
    miss = np.random.default_rng(24680).uniform(size=N_SAMPLES)[None, :] < ev    # re-prefills its whole context
    new2 = np.where(miss, ctx[None, :], new[None, :])
    flat = {k: np.repeat(np.asarray(p[k], float), N_SAMPLES) for k in ("gpus", "tp", "ep", "pp")}
    flat.update(new=new2.ravel(), isl=np.broadcast_to(ctx[None, :], (n, N_SAMPLES)).ravel())
    cm = compiled(setup.model)
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    vals = {k: (np.repeat(v, N_SAMPLES) if np.ndim(v) == 1 and np.size(v) == n else v) for k, v in vals.items()}
    pre = np.asarray(cm.prefill(prefill_inputs(flat, vals))["prefill_s"]).reshape(n, N_SAMPLES)
    tpot = df["tpot_ms"].to_numpy()[:, None] / 1e3
    step = df["step_ms"].to_numpy()[:, None] / 1e3
    own = df["prefill_ms"].to_numpy()[:, None] / 1e3
    w_mean = np.nan_to_num(df["prefill_queue_ms"].to_numpy()[:, None] / 1e3)
    rho = np.clip(np.nan_to_num(df["prefill_utilization"].to_numpy()[:, None]), 1e-12, 1 - 1e-9)
    base = np.maximum(df["ttft_mean_ms"].to_numpy()[:, None] / 1e3 - w_mean - own - step, 0.0)
    wait = queue_tail(w_mean, rho, u[None, :])
    ttft = base + wait + pre + step
    return ttft, osl, tpot


def sessions_to_batch(setup: Setup, points: dict, pause_s: float, sessions, host_tier: bool,
                      iterations: int = 40) -> np.ndarray:
    """Decode batch B at which the live sessions C(B) = B (t_busy + pause) / t_busy equal ``sessions``.

    C(B) rises with B, so a vectorized bisection over all points at once (no loop per point) finds B.
    """
    p = point_arrays({**points, "batch": np.ones_like(np.asarray(sessions, float))})
    target = np.broadcast_to(np.asarray(sessions, float), p["batch"].shape)
    points = {**points, **{k: p[k] for k in ("gpus", "tp", "ep", "pp", "spec_tokens", "acc", "isl", "osl", "new", "mix")}}
    lo, hi = np.ones_like(target), np.maximum(target, 1.0)
    for _ in range(iterations):
        mid = np.sqrt(lo * hi)
        c = agentic(setup, {**points, "batch": mid}, pause_s, host_tier, iterations=2)["sessions"].to_numpy()
        lo, hi = np.where(c < target, mid, lo), np.where(c < target, hi, mid)
    return np.sqrt(lo * hi)
