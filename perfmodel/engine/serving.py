"""Serving modes on top of the step equations: disaggregated pools and agentic sessions (vectorized).

Disaggregated (prefill pool of ``pf_instances`` x ``pf_gpus``, decode pool of ``instances`` x ``gpus``):
    decode demand   R_d = instances B acc / (TPOT osl)                       requests/s
    prefill supply  R_p = pf_instances (T_pf / new) / prefill_s(T_pf)        requests/s, T_pf = 8192 pf_gpus
    system          R   = min(R_d, R_p);  per-GPU figures divide by all GPUs of both pools
    TTFT            = W_q + prefill(one request) + KV transfer + TPOT
    W_q             = rho / (2 (1 - rho)) prefill(one request)   (M/D/1 wait, rho = R_d / R_p capped at 0.95)
    KV transfer     = KV bytes of the request / (pf_gpus BW e_ln), BW = scale-up inside one domain, NIC beyond
Agentic sessions (decode batch B = sessions currently generating):
    t_busy = TTFT + osl TPOT / acc;  live sessions C = B (t_busy + pause) / t_busy
    paused sessions keep their KV in spare HBM, then in the host tier (if on), else are evicted and
    re-prefill their whole prefix; host-resident ones reload it over the host link (f_rl).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..arch.kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from .compiled import compiled
from .evaluate import Setup, _arrays, evaluate, prefill_inputs

PREFILL_TOKENS_PER_GPU = 8192  # prefill chunk per GPU per step (engine default order of magnitude)


def request_kv_bytes(setup: Setup, tokens) -> np.ndarray:
    """KV bytes of one request's context (whole model, before sharding)."""
    m = setup.model
    return kv_bytes_per_token(m, setup.kv_cache) * np.asarray(tokens) + kv_fixed_bytes_per_sequence(m, setup.kv_cache)


def disaggregated(setup: Setup, points: dict, pf: dict, instances, pf_instances) -> pd.DataFrame:
    """Evaluate a disaggregated deployment. ``pf`` holds the prefill pool's gpus/tp/ep (per instance)."""
    dec = evaluate(setup, {**points, "mix": 0.0})
    vals = setup.symbol_values()
    p = _arrays({**points, "mix": 0.0})
    n = len(dec)
    pfp = {**p, **{k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in pf.items()}, "pp": np.ones(n)}
    cm = compiled(setup.model)
    tok = PREFILL_TOKENS_PER_GPU * pfp["gpus"]
    one = np.asarray(cm.prefill(prefill_inputs(pfp, vals))["prefill_s"]) * np.ones(n)
    step = np.asarray(cm.prefill(prefill_inputs(pfp, vals, tokens=np.maximum(tok, pfp["new"])))["prefill_s"]) * np.ones(n)
    inst, pinst = np.broadcast_to(instances, (n,)), np.broadcast_to(pf_instances, (n,))
    new = np.maximum(pfp["new"], 1.0)
    r_p = pinst * np.maximum(tok, new) / new / step
    tpot = dec["tpot_ms"].to_numpy() / 1e3
    r_d = inst * p["batch"] * p["acc"] / (tpot * p["osl"])
    r = np.minimum(r_d, r_p)
    rho = np.minimum(r_d / r_p, 0.95)
    total_gpus = inst * p["gpus"] + pinst * pfp["gpus"]
    in_domain = total_gpus <= vals["D_dom"]
    bw = np.where(in_domain, vals["BW_link"], vals["BW_nic"]) * vals["e_ln"] * pfp["gpus"]
    transfer = request_kv_bytes(setup, p["isl"]) / bw
    ttft = rho / (2 * (1 - rho)) * one + one + transfer + tpot
    out = dec.copy()
    out["serving"] = "disaggregated"
    out["prefill_gpus"], out["decode_gpus"] = pinst * pfp["gpus"], inst * p["gpus"]
    out["ttft_ms"], out["kv_transfer_ms"], out["prefill_queue_ms"] = ttft * 1e3, transfer * 1e3, rho / (2 * (1 - rho)) * one * 1e3
    out["output_tps_per_gpu"] = r * p["osl"] / total_gpus
    out["total_tps_per_gpu"] = r * (p["isl"] + p["osl"]) / total_gpus
    power, _ = setup.power_w()
    out["total_tps_per_mw"] = out["total_tps_per_gpu"] / power * 1e6
    out["output_tps_per_mw"] = out["output_tps_per_gpu"] / power * 1e6
    price = setup.price()
    out["total_tokens_per_usd"] = out["total_tps_per_gpu"] * 3600 / price if price else np.nan
    out["tps_per_user_e2e"] = p["osl"] / (ttft + p["osl"] * tpot / p["acc"])
    out["bound"] = np.where(r_p < r_d, "prefill_pool", out["bound"])
    out["tput_per_gpu"], out["output_tput_per_gpu"] = out["total_tps_per_gpu"], out["output_tps_per_gpu"]
    return out


def agentic(setup: Setup, points: dict, pause_s: float, host_tier: bool, iterations: int = 3) -> pd.DataFrame:
    """Evaluate agentic sessions at decode batch B (sessions generating). Adds live sessions and KV residency.

    Fixed point (vectorized, a few iterations): eviction raises the uncached input, which lengthens TTFT,
    which changes how many sessions are live.
    """
    p = _arrays(points)
    base_new = p["new"].copy()
    evicted = np.zeros_like(base_new)
    reload = np.zeros_like(base_new)
    hw = setup.symbol_values()
    host_bytes = setup.hardware.value("host_memory_gb") * 1e9 * hw["f_mem"]
    for _ in range(iterations):
        pts = {**points, "new": base_new + evicted * (p["isl"] - base_new), "reload": reload}
        df = evaluate(setup, pts)
        tpot = df["tpot_ms"].to_numpy() / 1e3
        t_busy = df["ttft_ms"].to_numpy() / 1e3 + p["osl"] * tpot / p["acc"]
        sessions = p["batch"] * (t_busy + pause_s) / t_busy
        paused = sessions - p["batch"]
        spare_hbm = np.maximum(df["max_batch"].to_numpy() - p["batch"], 0)   # sessions' worth of spare HBM
        per_session = np.maximum(df["kv_gb_per_seq_per_gpu"].to_numpy() * 1e9, 1.0)
        dp = p["gpus"] / (p["tp"] * p["pp"])
        host_sessions = host_bytes / per_session * dp if host_tier else 0.0
        in_hbm = np.minimum(paused, spare_hbm)
        in_host = np.minimum(paused - in_hbm, host_sessions)
        evicted = np.where(paused > 0, (paused - in_hbm - in_host) / np.maximum(paused, 1e-9), 0.0)
        reload = np.where(paused > 0, in_host / np.maximum(paused, 1e-9), 0.0)
    df = df.copy()
    df["sessions"] = sessions
    df["sessions_per_gpu"] = sessions / p["gpus"]
    df["kv_in_hbm_share"] = np.where(sessions > 0, (p["batch"] + in_hbm) / sessions, 1.0)
    df["kv_in_host_share"] = np.where(sessions > 0, in_host / sessions, 0.0)
    df["evicted_share"] = np.where(sessions > 0, (paused - in_hbm - in_host) / sessions, 0.0)
    df["prefix_hit"] = 1 - df["uncached_input"] / p["isl"]
    return df
