"""Aggregated serving with chunked prefill: the step equations under load -> the result columns.

Evaluate the compiled equations over arrays of operating points -> a tidy DataFrame.

Derived metrics (InferenceX definitions, docs/reference/metrics-and-claims.md):
    step_ms            = one decode step (all B sequences advance by acc accepted tokens)
    tpot_ms            = step / acc                      (time per output token, as the record format defines it)
    tps_per_user       = 1000 / tpot_ms = acc / step     (ITL-based interactivity, 'intvty')
    TTFT               = request overhead + queueing + own prefill (serving/queueing.py; ttft_ms is the P50,
                         ttft_p90_ms / ttft_p99_ms the P90 / P99, ttft_mean_ms the mean)
    tpot_p99_ms        = P99 over requests of TPOT: the chunk steps a request meets (queueing.tpot_quantile)
    tps_per_user_e2e   = osl / (E[TTFT] + osl TPOT)      (E2E-normalized interactivity, mean TTFT)
    tps_per_user_e2e_p50, _p90 = osl / (TTFT_P50 or _P90 + osl TPOT)   (P50 / P90 over requests of the workload's lengths: the slow
                         tail AgentX quotes; the queue's P90 wait, equations/queueing.py)
    output_tps_per_gpu = X osl / G, X = requests/s of the closed loop (Little's law, queueing.py);
                         decode_only points: B acc / (step G)
    total_tps_per_gpu  = output_tps_per_gpu (isl + osl) / osl   (input counted incl. cached prefix)
    total_tps_per_mw   = total_tps_per_gpu / all-in W per GPU x 1e6
    total_tokens_per_usd = total_tps_per_gpu x 3600 / (USD per GPU-hour)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.bind import attention_format
from ..engine.compiled import compiled
from ..engine.evaluate import Setup, point_arrays, prefill_inputs, symbol_inputs
from ..formats import COMPUTE_RATE
from . import prefill_first
from .queueing import serving_load, tpot_quantile

if TYPE_CHECKING:
    import pandas as pd

OPEN_LOOP_SUBSTITUTIONS = 5   # evaluations of the open-loop batch root B = lambda S(B) (secant passes)
RESOURCES = {"r_compute_s": "compute", "r_memory_s": "hbm_bandwidth", "t_link_s": "link", "t_lat_total_s": "latency"}


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
            _d, load = decode_under_load(cm, p, vals, t_pf)
            sustained = np.where(load["prefill_saturated"], load["x_per_s"] * load["slot_s"],
                                 p["batch"] * np.minimum(1.0, want / load["clients_needed"]))
            p["batch"] = np.where(by_clients, np.clip(sustained, 1.0, cap), p["batch"])
        by_rate = solve & np.isfinite(p["arrival_rate"])
        if by_rate.any():
            p["batch"] = np.where(by_rate, open_loop_batch(cm, p, vals, t_pf, cap), p["batch"])
    d, load = decode_under_load(cm, p, vals, t_pf)
    return _columns(setup, p, d, pf, vals, load)


def open_loop_batch(cm, p: dict, vals: dict, t_pf, cap) -> np.ndarray:
    """The running batch of an open loop at lambda requests/s (Little on the slots): the root of
    B = lambda S(B), S = T_own + osl TPOT the time a request holds a KV slot. S is nearly linear in B, so
    secant passes on the line through the last two evaluations, B' = lambda a / (1 - lambda c) with
    S ~ a + c B, converge in a few vectorized evaluations (OPEN_LOOP_SUBSTITUTIONS), from B = 1 and
    B = lambda S(1); clipped to [1, cap]. Where lambda c >= 1 or the root lies past the running capacity the
    batch is the capacity (``serving_load`` then reports the queue as unstable)."""
    lam = p["arrival_rate"]
    slot = lambda b: decode_under_load(cm, {**p, "batch": b}, vals, t_pf)[1]["slot_s"]  # noqa: E731
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
        return decode_under_load(cm, {**sub(p), "batch": x}, sub(vals), tp)[1]["slot_s"]

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




def decode_under_load(cm, p: dict, vals: dict, t_pf) -> tuple[dict, dict]:
    """Decode steps and queueing together. The prefill a request's decode steps carry is the other running
    requests' prefill *while it decodes*, a share f = osl TPOT / S of each slot's time (the others'
    prefills during its own prefill are not in its steps):
        n_pf = f mix (B - 1) acc new / osl, at most the instance's token budget per step.
    Decode outputs are evaluated without prefill and at a chunk step (``chunk_mixture``); the steps at
    the capped demand are the mixture m = (1 - w) bare + w chunk, and at the load's share s = min(f n_pf /
    n_cap, 1) of it (``serving_load`` solves f with the queue) every output is (1 - s) bare + s m.
    Returns (decode outputs, serving_load outputs with ``chunk_step_share`` = s w)."""
    ones = np.ones_like(p["batch"])
    d0 = cm.decode(symbol_inputs({**p, "mix": np.zeros_like(p["batch"])}, vals))
    demand, w, chunk = chunk_mixture(p, vals)
    mixed = prefill_first.mixed(vals) * ones
    dk = cm.decode(symbol_inputs(chunk, vals)) if ((w > 0) & (mixed > 0)).any() else d0
    step0 = np.asarray(d0["step_s"], float) * ones
    step_mix = (1 - w) * step0 + w * np.asarray(dk["step_s"], float)
    budget = vals["N_ch"] * p["gpus"] / (p["tp"] * p["pp"])
    t_budget = np.asarray(cm.prefill(prefill_inputs(p, vals, tokens=budget))["prefill_s"], float) * ones
    if (mixed < 1).any():      # prefill-first engines: prefill passes stall the decode steps (prefill_first.py)
        t_s = prefill_first.server_time(t_pf, t_budget, p["new"], vals["N_ch"])
        pf_chunks, pf_step = prefill_first.stall_step(p, step0, t_s)
        demand, step_mix = np.where(mixed > 0, demand, pf_chunks), np.where(mixed > 0, step_mix, pf_step)
        w = np.where(mixed > 0, w, pf_chunks)
    load = serving_load(p, step0, step_mix, demand, t_pf, t_budget, vals)
    share = load["chunk_share"] * w
    load["chunk_step_share"] = share
    load["step0_s"], load["step_chunk_s"] = step0, np.asarray(dk["step_s"], float) * ones   # for the TPOT tail
    d = _mix(d0, dk, share)
    d["step_s"] = np.where(mixed > 0, d["step_s"], load["step_s"])    # decode step incl. the prefill stalls
    return d, load


def _mix(d0: dict, dk: dict, share: np.ndarray) -> dict:
    """Every decode output at the load's chunk-step share s: (1 - s) bare + s chunk step (elementwise). One point
    whose outputs are floats (``Compiled`` on one point) is mixed as one stacked array: one numpy pass over every
    output instead of four per output (the same arithmetic)."""
    keys = list(d0)
    if np.size(share) == 1 and all(type(d0[k]) is float and type(dk[k]) is float for k in keys):
        a0 = np.array([d0[k] for k in keys])[:, None]
        ak = np.array([dk[k] for k in keys])[:, None]
        return dict(zip(keys, (1 - share) * a0 + share * ak))
    return {k: (1 - share) * np.asarray(d0[k], float) + share * np.asarray(dk[k], float) for k in keys}


def chunk_mixture(p: dict, vals: dict) -> tuple[np.ndarray, np.ndarray, dict]:
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
    n_cap = np.minimum(n_pf, vals["N_ch"] * ranks)
    k_rank = np.minimum(np.maximum(p["new"], 1.0), vals["N_ch"])
    w = np.where(n_cap > 0, 1 - (1 - np.minimum(1.0, n_cap / (ranks * k_rank))) ** ranks, 0.0)
    k = np.where(w > 0, n_cap / np.where(w > 0, w, 1.0), 0.0)
    demand = np.where(n_cap > 0, n_pf / np.where(n_cap > 0, n_cap, 1.0), 0.0)
    return demand, w, {**p, "mix": np.where(unit > 0, k / np.where(unit > 0, unit, 1.0), 0.0)}


def _columns(setup: Setup, p, d, pf, vals, load) -> dict[str, np.ndarray]:
    """All output columns, as arrays (a DataFrame is built from them once, by the caller)."""
    n = len(p["batch"])

    def full(v) -> np.ndarray:     # v as a float array of the points' length (broadcast only where it is not)
        a = np.asarray(v, dtype=float)
        return a if a.shape == (n,) else np.broadcast_to(a, (n,))
    step = full(d["step_s"])
    acc = p["acc"]
    tpot = step / acc
    tps_user = 1.0 / tpot
    t_pf = full(pf["prefill_s"])
    ttft, ttft_mean = load["ttft_p50_s"], load["ttft_mean_s"]
    out_gpu = load["x_per_s"] * p["osl"] / p["gpus"]
    total_gpu = out_gpu * (p["isl"] + p["osl"]) / p["osl"]
    power, power_basis = setup.power_w()
    price = setup.price()
    cols = {
        "batch": p["batch"], "gpus": p["gpus"], "tp": p["tp"], "ep": p["ep"], "pp": p["pp"],
        "spec_tokens": p["spec_tokens"], "acceptance_length": acc, "isl": p["isl"], "osl": p["osl"],
        "uncached_input": p["new"], "aggregated": p["mix"] > 0,
        "concurrency": load["concurrency"], "step_ms": step * 1e3, "tpot_ms": tpot * 1e3,
        "ttft_ms": ttft * 1e3, "ttft_p90_ms": load["ttft_p90_s"] * 1e3, "ttft_p99_ms": load["ttft_p99_s"] * 1e3,
        "ttft_mean_ms": ttft_mean * 1e3,
        "tpot_p99_ms": tpot_quantile(tpot, load["step0_s"], load["step_chunk_s"], load["chunk_step_share"], p["osl"],
                                     acc, 0.99) * 1e3,
        "prefill_ms": t_pf * 1e3, "prefill_queue_ms": load["prefill_queue_s"] * 1e3,
        "capacity_wait_ms": load["capacity_wait_s"] * 1e3, "request_rate_per_s": load["x_per_s"],
        "prefill_utilization": load["rho"], "chunk_step_share": load["chunk_step_share"],
        "tps_per_user": tps_user, "tps_per_user_e2e": p["osl"] / (ttft_mean + p["osl"] * tpot),
        "tps_per_user_e2e_p50": p["osl"] / (ttft + p["osl"] * tpot),
        "tps_per_user_e2e_p90": p["osl"] / (load["ttft_p90_s"] + p["osl"] * tpot),
        "output_tps_per_gpu": out_gpu, "total_tps_per_gpu": total_gpu,
        "total_tps_per_mw": total_gpu / power * 1e6, "output_tps_per_mw": out_gpu / power * 1e6,
        "power_basis": np.full(n, power_basis, dtype=object),
        "total_tokens_per_usd": total_gpu * 3600 / price if price else np.full(n, np.nan),
    }
    lat_total = full(d["t_latency_s"]) + full(d["t_overhead_s"])
    res = np.stack([full(d["r_compute_s"]), full(d["r_memory_s"]), full(d["t_link_s"]), lat_total])
    names = np.array(list(RESOURCES.values()))
    bound = names[np.argmax(res, axis=0)]
    bound = np.where(load["prefill_saturated"], "prefill", bound)   # the prefill servers cannot feed the batch
    for key in sorted(d):
        if key.startswith("t_") and key.endswith("_s"):
            cols[key[:-2] + "_ms"] = full(d[key]) * 1e3
    # per-GPU work of one decode step: FLOPs by number format, bytes by kind, link traffic, collectives
    attn_fmt = attention_format(setup.model, setup.weights, setup.attention_weights)
    fmt_of = {"n_flops_gemm_attn": rate_name(attn_fmt), "n_flops_gemm_ffn": rate_name(setup.weights),
              "n_flops_attention_core": "bf16", "n_flops_indexer": "fp8"}
    for fmt in ("bf16", "fp8", "fp4"):
        cols[f"step_flops_{fmt}"] = sum((full(d[k]) for k, f in fmt_of.items() if f == fmt and k in d), np.zeros(n))
    for k in sorted(d):
        if k.startswith("n_bytes_"):
            cols["step_" + k[2:] + "_gb"] = full(d[k]) / 1e9
    cols["step_collectives"] = full(d["n_collectives"])
    # the latency floor split (main pass): collective latencies, kernel launches and fitted launch floors, and the
    # layer-floor excess; t_latency_ms = their sum + (pp - 1) link hops
    # (t_launch_ms = t_kernel_gap_ms, the gaps between kernels, + t_kernel_floor_ms, the kernels' fitted floors)
    for key, col in (("n_lat_collective", "t_collective_latency_ms"), ("n_lat_launch", "t_launch_ms"),
                     ("n_lat_kernel_gap", "t_kernel_gap_ms"), ("n_lat_kernel_floor", "t_kernel_floor_ms"),
                     ("n_lat_floor_excess", "t_layer_floor_ms")):
        if key in d:
            cols[col] = full(d[key]) * 1e3
    cols.update(res_compute_ms=res[0] * 1e3, res_hbm_bandwidth_ms=res[1] * 1e3, res_link_ms=res[2] * 1e3,
                res_latency_ms=res[3] * 1e3)
    w, kvs, maxb = full(d["weights_bytes_per_gpu"]), full(d["kv_bytes_per_seq_per_gpu"]), full(d["max_batch"])
    kv_maxb = full(d["kv_max_batch"])
    mem_gb = full(d["mem_bytes_per_gpu"]) / 1e9
    host_kv = full(d["host_kv_bytes_per_gpu"])
    host_cap = full(np.asarray(vals["C_host"]) * np.asarray(vals["f_mem"]))   # host-tier bytes per GPU
    stable = np.broadcast_to(load.get("queue_stable", True), (n,))
    fits = (p["batch"] <= maxb) & (host_kv <= host_cap) & stable
    if (host_kv > 0).any():
        maxb = np.minimum(maxb, np.where(host_kv > 0, p["batch"] * host_cap / np.maximum(host_kv, 1e-300), np.inf))
    cols.update(
        host_kv_gb_per_gpu=host_kv / 1e9,
        weights_gb_per_gpu=w / 1e9, kv_gb_per_seq_per_gpu=kvs / 1e9,
        kv_gb_per_gpu=p["batch"] * p["tp"] * p["pp"] / p["gpus"] * kvs / 1e9, mem_gb_per_gpu=mem_gb,
        max_batch=np.maximum(np.floor(maxb), 0), kv_max_batch=np.maximum(np.floor(kv_maxb), 0), fits=fits,
        bound=np.where(fits, np.where(p["batch"] >= np.floor(maxb) * 0.999, "capacity:" + bound, bound), "capacity"),
        fit_reason=fit_reasons(fits | ~stable, maxb, p["batch"], w, kvs, mem_gb, stable, p["arrival_rate"], kv_maxb),
        # InferenceX record names, so measured and modeled curves overlay
        intvty=tps_user, tput_per_gpu=total_gpu, output_tput_per_gpu=out_gpu,
    )
    return cols


def rate_name(fmt: str) -> str:
    return COMPUTE_RATE[fmt]


def fit_reasons(fits, maxb, batch, w, kvs, mem_gb, stable=None, rate=None, kv_maxb=None) -> np.ndarray:
    """Why each point does not fit: the weights leave no KV room, the batch is over the KV capacity, or over the
    engine's running-request cap (max_running_requests per scheduler x attention-DP ranks); 'fits' otherwise."""
    kv_maxb = maxb if kv_maxb is None else kv_maxb
    reasons = np.full(len(fits), "fits", dtype=object)
    if stable is not None and not np.all(stable):
        bad = ~np.asarray(stable)
        reasons[bad] = [f"arrival_rate {r:.3g} requests/s exceeds what the instance serves (the queue grows without "
                        f"bound)" for r in np.broadcast_to(rate, bad.shape)[bad]]
    bad = ~fits
    if bad.any():
        no_w = bad & (kv_maxb < 1)
        reasons[no_w] = [f"weights {wi / 1e9:.1f} GB/GPU leave no room for one sequence's KV "
                         f"({ki / 1e9:.2f} GB/GPU)" for wi, ki in zip(w[no_w], kvs[no_w])]
        capped = bad & ~no_w & (kv_maxb > maxb) & (batch <= kv_maxb)
        reasons[capped] = [f"batch {b:.0f} exceeds the engine's running-request cap of {mb:.0f} sequences "
                           f"(max_running_requests per scheduler x attention-DP ranks)"
                           for b, mb in zip(batch[capped], np.floor(maxb[capped]))]
        over = bad & ~no_w & ~capped
        reasons[over] = [f"batch {b:.0f} needs {m:.1f} GB/GPU; at most {mb:.0f} sequences fit"
                         for b, m, mb in zip(batch[over], mem_gb[over], np.floor(kv_maxb[over]))]
    return reasons
