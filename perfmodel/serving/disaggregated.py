"""Disaggregated serving: a prefill pool feeding a decode pool (vectorized).

Disaggregated (prefill pool of ``pf_instances`` x ``pf_gpus``, decode pool of ``instances`` x ``gpus``):
    prefill supply  R_p = pf_instances (T_pf / new) / prefill_s(T_pf)        requests/s, T_pf = 8192 pf_gpus
                    (c = pf_instances servers, t_s = c / R_p per request)
    closed loop     serving/queueing.closed_loop with instances x B running: R = instances B / (T_own + osl TPOT),
                    TPOT = step / acc, the M/D/c prefill queue at rho = R / R_p; past the prefill pool's rate
                    R = R_p (bound "prefill_pool"); clients beyond those the batch needs wait for a slot
    TTFT_q          = t_req + W_sat + q step + W_pf,q + T_own,  T_own = prefill(one request) + KV transfer
                    (the prefill pool samples the first token; it joins the decode batch at a step boundary)
    KV transfer     = KV bytes of the request / (pf_gpus BW e_ln), BW = scale-up inside one domain (or the NIC where
                      the engine's transfer backend uses RDMA there: profile features.kv_transfer), NIC beyond
    per-GPU figures divide by all GPUs of both pools
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..arch.kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from ..engine.compiled import compiled
from ..engine.evaluate import Setup, point_arrays, prefill_inputs, prefill_step
from .aggregated import evaluate
from .finish import rates, record_names
from .ops import ARRAYS
from .queueing import closed_loop

if TYPE_CHECKING:
    import pandas as pd


def request_kv_bytes(setup: Setup, tokens) -> np.ndarray:
    """KV bytes of one request's context (whole model, before sharding)."""
    m = setup.model
    return kv_bytes_per_token(m, setup.kv_cache) * np.asarray(tokens) + kv_fixed_bytes_per_sequence(m, setup.kv_cache)


def transfer_bandwidth(setup: Setup, vals: dict, in_domain) -> np.ndarray:
    """Per-GPU bandwidth (bytes/s, before the link efficiency) of the P/D KV transfer: the scale-up link while both
    pools sit in one domain, unless the engine's transfer backend goes through the NICs there too (profile
    ``features.kv_transfer.intra_domain == 'nic'``: SGLang's default Mooncake RDMA transport); the NIC beyond."""
    kt = setup.profile.features.kv_transfer
    inside = vals["BW_nic"] if kt is not None and kt.intra_domain == "nic" else vals["BW_link"]
    return np.where(in_domain, inside, vals["BW_nic"])


def _pool_transfer(setup: Setup, p: dict, vals: dict, pf_gpus, total_gpus) -> np.ndarray:
    """KV transfer of one request (s): its KV bytes over the prefill instance's pf_gpus links
    (``transfer_bandwidth``: inside one domain while total_gpus <= D_dom, the NIC beyond it)."""
    in_domain = np.asarray(total_gpus) <= vals["D_dom"]
    bw = transfer_bandwidth(setup, vals, in_domain) * vals["e_ln"] * np.asarray(pf_gpus, float)
    return request_kv_bytes(setup, p["isl"]) / bw


def _prefill_side(setup: Setup, p: dict, pf: dict, vals: dict, n: int):
    """Per point: (one-request prefill s, prefill requests/s of ONE prefill instance, the prefill inputs)."""
    pfp = {**p, **{k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in pf.items()}, "pp": np.ones(n)}
    cm = compiled(setup.model)
    one = np.broadcast_to(np.asarray(cm.prefill(prefill_inputs(pfp, vals))["prefill_s"], float), (n,))
    tok, step_pf = prefill_step(setup, pfp, vals)
    r_inst = tok / np.maximum(pfp["new"], 1.0) / step_pf
    return one, np.broadcast_to(r_inst, (n,)), pfp


def disaggregated(setup: Setup, points: dict, pf: dict, instances, pf_instances,
                  symbol_values: dict | None = None, extra_prefill_s=0.0) -> pd.DataFrame:
    """Evaluate a disaggregated deployment. ``pf`` holds the prefill pool's gpus/tp/ep (per instance).
    ``extra_prefill_s``: seconds added to each request's own prefill latency (e.g. a host-tier prefix reload
    overlapped with other requests' prefill: TTFT only, not the prefill pool's rate)."""
    vals = symbol_values if symbol_values is not None else setup.symbol_values()
    p = point_arrays({**points, "mix": 0.0})
    dec = evaluate(setup, p, symbol_values=vals)      # a NaN batch is solved there (capacity, concurrency)
    p["batch"] = dec["batch"].to_numpy(float)
    return closed_loop_pools(setup, p, dec, pf, instances, pf_instances, vals, extra_prefill_s)


def closed_loop_pools(setup: Setup, p: dict, dec: pd.DataFrame, pf: dict, instances, pf_instances, vals,
            extra_prefill_s=0.0) -> pd.DataFrame:
    """The closed loop of ``instances`` decode instances (frame ``dec``) fed by ``pf_instances`` prefill ones."""
    n = len(dec)
    one, r_inst, pfp = _prefill_side(setup, p, pf, vals, n)
    inst, pinst = np.broadcast_to(instances, (n,)), np.broadcast_to(pf_instances, (n,))
    r_p = pinst * r_inst
    step = dec["step_ms"].to_numpy() / 1e3
    total_gpus = inst * p["gpus"] + pinst * pfp["gpus"]
    transfer = _pool_transfer(setup, p, vals, pfp["gpus"], total_gpus)
    load = closed_loop(inst * p["concurrency"], inst * p["batch"], vals["t_req"], step, step, np.zeros(n),
                       p["acc"], p["osl"], one + transfer + np.asarray(extra_prefill_s, float), pinst / r_p, pinst,
                       vals["phi"])
    r = load["x_per_s"]
    tpot = step / p["acc"]
    out = dec.copy()
    out["serving"] = "disaggregated"
    out["concurrency"] = load["concurrency"] / inst
    out["instances"], out["pf_instances"] = inst.astype(float), pinst.astype(float)
    out["pf_gpus"], out["pf_tp"], out["pf_ep"] = pfp["gpus"], pfp["tp"], pfp["ep"]
    out["pf_dp"] = pfp["gpus"] / pfp["tp"]
    out["prefill_gpus"], out["decode_gpus"] = pinst * pfp["gpus"], inst * p["gpus"]
    out["prefill_ratio"] = out["prefill_gpus"] / out["decode_gpus"]
    out["prefill_ms"] = one * 1e3
    out["ttft_ms"], out["ttft_p90_ms"], out["ttft_p99_ms"], out["ttft_mean_ms"] = (
        load[k] * 1e3 for k in ("ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "ttft_mean_s"))
    out["tpot_p99_ms"] = tpot * 1e3          # decode-only pool: every step alike (queueing.tpot_quantile, w = 0)
    out["kv_transfer_ms"], out["prefill_queue_ms"] = transfer * 1e3, load["prefill_queue_s"] * 1e3
    out["capacity_wait_ms"], out["prefill_utilization"] = load["capacity_wait_s"] * 1e3, load["rho"]
    out["request_rate_per_s"] = r / inst
    out_gpu, total_gpu = r * p["osl"] / total_gpus, r * (p["isl"] + p["osl"]) / total_gpus    # both pools' GPUs
    power, basis = setup.power_w()
    cols = rates(ARRAYS, n, p["osl"], tpot, load["ttft_mean_s"], load["ttft_p50_s"], load["ttft_p90_s"], out_gpu,
                 total_gpu, power, basis, setup.price())
    cols.update(record_names(out["tps_per_user"].to_numpy(), total_gpu, out_gpu))
    for k, v in cols.items():
        out[k] = v
    out["bound"] = np.where(load["prefill_saturated"], "prefill_pool", out["bound"])
    return out
