"""Serving modes on top of the step equations: disaggregated pools and agentic sessions (vectorized).

Disaggregated (prefill pool of ``pf_instances`` x ``pf_gpus``, decode pool of ``instances`` x ``gpus``):
    prefill supply  R_p = pf_instances (T_pf / new) / prefill_s(T_pf)        requests/s, T_pf = 8192 pf_gpus
                    (c = pf_instances servers, t_s = c / R_p per request)
    closed loop     engine/queueing.closed_loop with instances x B running: R = instances B / (T_own + osl TPOT),
                    TPOT = step / acc, the M/D/c prefill queue at rho = R / R_p; past the prefill pool's rate
                    R = R_p (bound "prefill_pool"); clients beyond those the batch needs wait for a slot
    TTFT_q          = t_req + W_sat + q step + W_pf,q + T_own,  T_own = prefill(one request) + KV transfer
                    (the prefill pool samples the first token; it joins the decode batch at a step boundary)
    KV transfer     = KV bytes of the request / (pf_gpus BW e_ln), BW = scale-up inside one domain, NIC beyond
    per-GPU figures divide by all GPUs of both pools
Agentic sessions (decode batch B = sessions currently generating):
    t_busy = TTFT + osl TPOT;  live sessions C = B (t_busy + pause) / t_busy
    paused sessions keep their KV in spare HBM, then in the host tier (if on), else are evicted and
    re-prefill their whole prefix; host-resident ones reload it over the host link (f_rl).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..arch.kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from ..spec_decoding import acceptance_length
from .compiled import compiled
from .queueing import closed_loop
from .evaluate import PREFILL_TOKENS_PER_GPU, Setup, _arrays, evaluate, prefill_inputs, prefill_step
from .reevaluate import reevaluate

__all__ = ["PREFILL_TOKENS_PER_GPU", "agentic", "best_spec_tokens", "disaggregated", "sessions_to_batch"]



def request_kv_bytes(setup: Setup, tokens) -> np.ndarray:
    """KV bytes of one request's context (whole model, before sharding)."""
    m = setup.model
    return kv_bytes_per_token(m, setup.kv_cache) * np.asarray(tokens) + kv_fixed_bytes_per_sequence(m, setup.kv_cache)


def disaggregated(setup: Setup, points: dict, pf: dict, instances, pf_instances,
                  symbol_values: dict | None = None) -> pd.DataFrame:
    """Evaluate a disaggregated deployment. ``pf`` holds the prefill pool's gpus/tp/ep (per instance)."""
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    p = _arrays({**points, "mix": 0.0})
    dec = evaluate(setup, p, symbol_values=vals)      # a NaN batch is solved there (capacity, concurrency)
    p["batch"] = dec["batch"].to_numpy(float)
    n = len(dec)
    pfp = {**p, **{k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in pf.items()}, "pp": np.ones(n)}
    cm = compiled(setup.model)
    one = np.broadcast_to(np.asarray(cm.prefill(prefill_inputs(pfp, vals))["prefill_s"], float), (n,))
    tok, step_pf = prefill_step(setup, pfp, vals)
    inst, pinst = np.broadcast_to(instances, (n,)), np.broadcast_to(pf_instances, (n,))
    new = np.maximum(pfp["new"], 1.0)
    r_p = pinst * tok / new / step_pf
    step = dec["step_ms"].to_numpy() / 1e3
    total_gpus = inst * p["gpus"] + pinst * pfp["gpus"]
    in_domain = total_gpus <= vals["D_dom"]
    bw = np.where(in_domain, vals["BW_link"], vals["BW_nic"]) * vals["e_ln"] * pfp["gpus"]
    transfer = request_kv_bytes(setup, p["isl"]) / bw
    load = closed_loop(inst * p["concurrency"], inst * p["batch"], vals["t_req"], step, step, np.zeros(n),
                       p["acc"], p["osl"], one + transfer, pinst / r_p, pinst, vals["phi"])
    r = load["x_per_s"]
    tpot = step / p["acc"]
    out = dec.copy()
    out["serving"] = "disaggregated"
    out["concurrency"] = load["concurrency"] / inst
    out["prefill_gpus"], out["decode_gpus"] = pinst * pfp["gpus"], inst * p["gpus"]
    out["ttft_ms"], out["ttft_p90_ms"], out["ttft_mean_ms"] = (load[k] * 1e3 for k in
                                                               ("ttft_p50_s", "ttft_p90_s", "ttft_mean_s"))
    out["kv_transfer_ms"], out["prefill_queue_ms"] = transfer * 1e3, load["prefill_queue_s"] * 1e3
    out["capacity_wait_ms"], out["prefill_utilization"] = load["capacity_wait_s"] * 1e3, load["rho"]
    out["request_rate_per_s"] = r / inst
    ttft = load["ttft_mean_s"]
    out["output_tps_per_gpu"] = r * p["osl"] / total_gpus
    out["total_tps_per_gpu"] = r * (p["isl"] + p["osl"]) / total_gpus
    power, _ = setup.power_w()
    out["total_tps_per_mw"] = out["total_tps_per_gpu"] / power * 1e6
    out["output_tps_per_mw"] = out["output_tps_per_gpu"] / power * 1e6
    price = setup.price()
    out["total_tokens_per_usd"] = out["total_tps_per_gpu"] * 3600 / price if price else np.nan
    out["tps_per_user_e2e"] = p["osl"] / (ttft + p["osl"] * tpot)
    out["bound"] = np.where(load["prefill_saturated"], "prefill_pool", out["bound"])
    out["tput_per_gpu"], out["output_tput_per_gpu"] = out["total_tps_per_gpu"], out["output_tps_per_gpu"]
    return out


def agentic(setup: Setup, points: dict, pause_s: float, host_tier: bool, iterations: int = 3,
            dists=None, percentile: float | None = None, symbol_values: dict | None = None,
            pool_gb_per_gpu: float = 0.0) -> pd.DataFrame:
    """Evaluate agentic sessions at decode batch B (sessions generating). Adds live sessions and KV residency.

    Tiers for paused sessions' KV, in order: spare HBM of the instance; ``pool_gb_per_gpu`` of spare HBM
    elsewhere in the scale-up domain pooled Mooncake-style (reloaded over the scale-up link); the host tier
    (reloaded over the host link); else eviction (re-prefill). In a uniform deployment every GPU's spare HBM
    already serves its own sessions, so the pool is only what other GPUs (e.g. a prefill pool) leave free.
    Fixed point (vectorized, a few iterations): eviction raises the uncached input, which lengthens TTFT,
    which changes how many sessions are live.
    """
    p = _arrays(points)
    base_new = p["new"].copy()
    evicted = np.zeros_like(base_new)
    reload = np.zeros_like(base_new)
    pool_reload = np.zeros_like(base_new)
    hw = symbol_values if symbol_values is not None else setup.symbol_values()
    host_bytes = hw["C_host"] * hw["f_mem"]
    cols, last = None, None
    for _ in range(iterations):
        pts = {**points, "new": base_new + evicted * (p["isl"] - base_new), "reload": reload,
               "pool_reload": pool_reload}
        cols, last = reevaluate(setup, pts, hw, cols, last, CHANGING), pts
        tpot = cols["tpot_ms"] / 1e3
        t_busy = cols["ttft_ms"] / 1e3 + p["osl"] * tpot
        sessions = p["batch"] * (t_busy + pause_s) / t_busy
        paused = sessions - p["batch"]
        spare_hbm = np.maximum(cols["max_batch"] - p["batch"], 0)   # sessions' worth of spare HBM
        per_session = np.maximum(cols["kv_gb_per_seq_per_gpu"] * 1e9, 1.0)
        dp = p["gpus"] / (p["tp"] * p["pp"])
        active_host = cols["host_kv_gb_per_gpu"] * 1e9       # cold KV of generating sessions
        host_sessions = np.maximum(host_bytes - active_host, 0) / per_session * dp if host_tier else 0.0
        in_hbm = np.minimum(paused, spare_hbm)
        in_pool = np.minimum(paused - in_hbm, pool_gb_per_gpu * 1e9 / per_session * dp)
        in_host = np.minimum(paused - in_hbm - in_pool, host_sessions)
        share = lambda x: np.where(paused > 0, x / np.maximum(paused, 1e-9), 0.0)  # noqa: E731
        evicted, reload, pool_reload = share(paused - in_hbm - in_pool - in_host), share(in_host), share(in_pool)
    df = pd.DataFrame(cols)
    df["host_kv_gb_per_gpu"] = (active_host + in_host * per_session / dp) / 1e9
    df["host_capacity_gb_per_gpu"] = host_bytes / 1e9 if host_tier else 0.0
    safe = np.where(sessions > 0, sessions, 1.0)
    df["sessions"] = sessions
    df["sessions_per_gpu"] = sessions / p["gpus"]
    df["kv_in_hbm_share"] = np.where(sessions > 0, (p["batch"] + in_hbm) / safe, 1.0)
    df["kv_in_pool_share"] = np.where(sessions > 0, in_pool / safe, 0.0)
    df["kv_in_host_share"] = np.where(sessions > 0, in_host / safe, 0.0)
    df["evicted_share"] = np.where(sessions > 0, (paused - in_hbm - in_pool - in_host) / safe, 0.0)
    df["prefix_hit"] = 1 - df["uncached_input"] / p["isl"]
    if dists is not None and percentile is not None:
        q = e2e_interactivity_percentile(setup, p, df, dists, percentile, evicted, hw)
        df[f"tps_per_user_e2e_p{percentile:g}"] = q
        df[f"e2e_norm_intvty_p{percentile:g}"] = q
    return df


CHANGING = ("new", "reload", "pool_reload")   # the inputs the agentic fixed point updates between passes

N_SAMPLES = 256


def _lognormal_samples(dist, z: np.ndarray) -> np.ndarray:
    return dist.median * np.exp(dist.sigma * z)


def e2e_interactivity_percentile(setup: Setup, p: dict, df: pd.DataFrame, dists, percentile: float,
                                 evicted=0.0, symbol_values: dict | None = None) -> np.ndarray:
    """AgentX e2e_norm_intvty_q = 1 / percentile_q(E2E_i / OSL_i), per operating point.

    Requests i are drawn (fixed seed, N_SAMPLES) from the workload's log-normal distributions of context,
    new tokens and output length (independent). Per request: E2E_i = TTFT_i + OSL_i TPOT, with
    TTFT_i = the prefill of its own new tokens after its cached prefix + one decode step (queueing as in the
    point's TTFT: the point's TTFT minus its own median-request prefill). Evaluated as one (points x samples)
    array through the compiled prefill equations.
    """
    rng = np.random.default_rng(12345)
    z = rng.standard_normal((3, N_SAMPLES))
    ctx = _lognormal_samples(dists.context_tokens, z[0])
    new = np.minimum(_lognormal_samples(dists.new_tokens_per_turn, z[1]), ctx)
    osl = _lognormal_samples(dists.output_tokens, z[2])
    if dists.max_output_tokens:
        osl = np.minimum(osl, dists.max_output_tokens)
    n = len(df)
    ev = np.broadcast_to(np.asarray(evicted, float), (n,))[:, None]
    new2 = new[None, :] + ev * (ctx[None, :] - new[None, :])
    flat = {k: np.repeat(np.asarray(p[k], float), N_SAMPLES) for k in ("gpus", "tp", "ep", "pp")}
    flat.update(new=new2.ravel(), isl=np.broadcast_to(ctx[None, :], (n, N_SAMPLES)).ravel())
    cm = compiled(setup.model)
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    vals = {k: (np.repeat(v, N_SAMPLES) if np.ndim(v) == 1 and np.size(v) == n else v) for k, v in vals.items()}
    pre = np.asarray(cm.prefill(prefill_inputs(flat, vals))["prefill_s"]).reshape(n, N_SAMPLES)
    tpot = df["tpot_ms"].to_numpy()[:, None] / 1e3
    step = df["step_ms"].to_numpy()[:, None] / 1e3
    own = df["prefill_ms"].to_numpy()[:, None] / 1e3
    extra = np.maximum(df["ttft_ms"].to_numpy()[:, None] / 1e3 - own - step, 0.0)   # queueing etc.
    ttft = extra + pre + step
    ratio = (ttft + osl[None, :] * tpot) / osl[None, :]
    return 1.0 / np.percentile(ratio, percentile, axis=1)


def sessions_to_batch(setup: Setup, points: dict, pause_s: float, sessions, host_tier: bool,
                      iterations: int = 40) -> np.ndarray:
    """Decode batch B at which the live sessions C(B) = B (t_busy + pause) / t_busy equal ``sessions``.

    C(B) rises with B, so a vectorized bisection over all points at once (no loop per point) finds B.
    """
    p = _arrays({**points, "batch": np.ones_like(np.asarray(sessions, float))})
    target = np.broadcast_to(np.asarray(sessions, float), p["batch"].shape)
    points = {**points, **{k: p[k] for k in ("gpus", "tp", "ep", "pp", "spec_tokens", "acc", "isl", "osl", "new", "mix")}}
    lo, hi = np.ones_like(target), np.maximum(target, 1.0)
    for _ in range(iterations):
        mid = np.sqrt(lo * hi)
        c = agentic(setup, {**points, "batch": mid}, pause_s, host_tier, iterations=2)["sessions"].to_numpy()
        lo, hi = np.where(c < target, mid, lo), np.where(c < target, hi, mid)
    return np.sqrt(lo * hi)


def best_spec_tokens(setup: Setup, points: dict, drafts=(0, 1, 2, 3, 4, 5, 6, 7), acceptance_rate: float = 0.7,
                     metric: str = "output_tps_per_gpu") -> pd.DataFrame:
    """Batch-aware speculative decoding: for each operating point, the draft count k that maximises ``metric``.

    Acceptance length per k from the per-draft rate p: a = (1 - p^(k+1)) / (1 - p). All (point, k) pairs are
    evaluated in one vectorized call. Returns the best row per point with its ``spec_tokens``.
    """
    p = _arrays(points)
    n, ks = len(p["batch"]), np.asarray(drafts, float)
    rep = {k: np.repeat(v, len(ks)) for k, v in p.items()}
    kk = np.tile(ks, n)
    rep["spec_tokens"] = kk
    rep["acc"] = acceptance_length(acceptance_rate, kk)
    df = evaluate(setup, rep)
    score = np.where(df["fits"], df[metric].to_numpy(), -np.inf).reshape(n, len(ks))
    best = np.argmax(score, axis=1)
    return df.iloc[np.arange(n) * len(ks) + best].reset_index(drop=True)
