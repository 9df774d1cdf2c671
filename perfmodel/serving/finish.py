"""The result columns of a served operating point, written once: ``finish`` (every column of aggregated serving,
on arrays or on one point's floats: serving/ops.py) and ``rates`` / ``record_names`` (the columns derived from the
throughput and the TTFT terms, which disaggregated serving rewrites over its two pools).

Derived columns (InferenceX definitions, docs/reference/metrics-and-claims.md; X requests/s, G GPUs):
    step_ms            = one decode step (all B sequences advance by acc accepted tokens)
    tpot_ms            = step / acc                      (time per output token, as the record format defines it)
    tps_per_user       = 1000 / tpot_ms = acc / step     (ITL-based interactivity, 'intvty')
    TTFT               = request overhead + queueing + own prefill (serving/queueing.py; ttft_ms is the P50,
                         ttft_p90_ms / ttft_p99_ms the P90 / P99, ttft_mean_ms the mean)
    tpot_p99_ms        = P99 over requests of TPOT: the chunk steps a request meets (queueing.tpot_quantile)
    tps_per_user_e2e   = osl / (E[TTFT] + osl TPOT)      (E2E-normalized interactivity, mean TTFT)
    tps_per_user_e2e_p50, _p90 = osl / (TTFT_P50 or _P90 + osl TPOT)   (P50 / P90 over requests of the workload's
                         lengths: the slow tail AgentX quotes; the queue's P90 wait, equations/queueing.py)
    output_tps_per_gpu = X osl / G, X = requests/s of the closed loop (Little's law, queueing.py);
                         decode_only points: B acc / (step G); disaggregated: G counts both pools' GPUs
    total_tps_per_gpu  = output_tps_per_gpu (isl + osl) / osl   (input counted incl. cached prefix;
                         disaggregated: X (isl + osl) / G)
    total_tps_per_mw   = total_tps_per_gpu / all-in W per GPU x 1e6   (output_tps_per_mw likewise)
    total_tokens_per_usd = total_tps_per_gpu x 3600 / (USD per GPU-hour)
tests/test_contracts.py keeps these columns to this module (a planted violation shows the check can fail).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.bind import attention_format
from ..engine.evaluate import Setup
from ..formats import COMPUTE_RATE
from .ops import ARRAYS
from .queueing import tpot_quantile

RESOURCES = {"r_compute_s": "compute", "r_memory_s": "hbm_bandwidth", "t_link_s": "link", "t_lat_total_s": "latency"}
_RESOURCE_NAMES = tuple(RESOURCES.values())
LATENCY_PARTS = (("n_lat_collective", "t_collective_latency_ms"), ("n_lat_launch", "t_launch_ms"),
                 ("n_lat_kernel_gap", "t_kernel_gap_ms"), ("n_lat_kernel_floor", "t_kernel_floor_ms"),
                 ("n_lat_floor_excess", "t_layer_floor_ms"))
"""The latency floor split (main pass): collective latencies, kernel launches and fitted launch floors, and the
layer-floor excess; t_latency_ms = their sum + (pp - 1) link hops (t_launch_ms = t_kernel_gap_ms, the gaps between
kernels, + t_kernel_floor_ms, the kernels' fitted floors)."""


def rate_name(fmt: str) -> str:
    return COMPUTE_RATE[fmt]


def rates(ops, n, osl, tpot, ttft_mean, ttft_p50, ttft_p90, out_gpu, total_gpu, power: float, power_basis: str,
          price: float | None) -> dict:
    """The end-to-end interactivity (tok/s/user), the throughputs per GPU, per MW of all-in power and per dollar
    (module docstring); ``power`` W per GPU, ``price`` USD per GPU-hour (None: no per-dollar figure); seconds."""
    return {
        "tps_per_user_e2e": osl / (ttft_mean + osl * tpot),
        "tps_per_user_e2e_p50": osl / (ttft_p50 + osl * tpot),
        "tps_per_user_e2e_p90": osl / (ttft_p90 + osl * tpot),
        "output_tps_per_gpu": out_gpu, "total_tps_per_gpu": total_gpu,
        "total_tps_per_mw": total_gpu / power * 1e6, "output_tps_per_mw": out_gpu / power * 1e6,
        "power_basis": ops.fill(power_basis, n),
        "total_tokens_per_usd": total_gpu * 3600 / price if price else ops.fill(math.nan, n),
    }


def record_names(tps_user, total_gpu, out_gpu) -> dict:
    """The InferenceX record names of the speed and throughputs, so measured and modeled curves overlay."""
    return {"intvty": tps_user, "tput_per_gpu": total_gpu, "output_tput_per_gpu": out_gpu}


def _constants_of(setup: Setup) -> tuple:
    """(power W per GPU, its basis, price USD per GPU-hour or None, number format of each FLOP term) of a setup."""
    power, basis = setup.power_w()
    attn_fmt = attention_format(setup.model, setup.weights, setup.attention_weights)
    fmt_of = {"n_flops_gemm_attn": rate_name(attn_fmt), "n_flops_gemm_ffn": rate_name(setup.weights),
              "n_flops_attention_core": "bf16", "n_flops_indexer": "fp8"}
    return power, basis, setup.price(), fmt_of


_constants: dict[int, tuple[Setup, tuple]] = {}   # id(setup) -> (setup, its constants); setups are not changed


def setup_constants(setup: Setup) -> tuple:
    """``_constants_of`` kept per setup object: the one-point path (api.predict_point binds a catalog setup once
    per process, and never changes it)."""
    hit = _constants.get(id(setup))
    if hit is not None and hit[0] is setup:
        return hit[1]
    if len(_constants) > 256:
        _constants.clear()
    _constants[id(setup)] = (setup, _constants_of(setup))
    return _constants[id(setup)][1]


def finish(setup: Setup, p: dict, d: dict, t_pf, vals: dict, load: dict, ops=ARRAYS) -> dict:
    """Every output column of aggregated (or decode-only) serving in the declared order: the point, the step and
    its speed, the TTFT terms, the throughputs (``rates``), the step's parts and resources, the memory and fit.
    ``d``: the decode outputs at the load's chunk mixture, ``t_pf``: one request's prefill (s), ``load``: the
    serving load (queueing.serving_load). Arrays of the points' length, or one point's floats (``ops``)."""
    n = len(p["batch"]) if ops is ARRAYS else 1
    full = ops.full(n)
    step = full(d["step_s"])
    acc, osl = p["acc"], p["osl"]
    tpot = step / acc
    tps_user = 1.0 / tpot
    ttft, ttft_mean = load["ttft_p50_s"], load["ttft_mean_s"]
    out_gpu = load["x_per_s"] * osl / p["gpus"]
    total_gpu = out_gpu * (p["isl"] + osl) / osl
    power, power_basis, price, fmt_of = setup_constants(setup) if ops is not ARRAYS else _constants_of(setup)
    cols = {
        "batch": p["batch"], "gpus": p["gpus"], "tp": p["tp"], "ep": p["ep"], "pp": p["pp"],
        "spec_tokens": p["spec_tokens"], "acceptance_length": acc, "isl": p["isl"], "osl": osl,
        "uncached_input": p["new"], "aggregated": p["mix"] > 0,
        "concurrency": load["concurrency"], "step_ms": step * 1e3, "tpot_ms": tpot * 1e3,
        "ttft_ms": ttft * 1e3, "ttft_p90_ms": load["ttft_p90_s"] * 1e3, "ttft_p99_ms": load["ttft_p99_s"] * 1e3,
        "ttft_mean_ms": ttft_mean * 1e3,
        "tpot_p99_ms": tpot_quantile(tpot, load["step0_s"], load["step_chunk_s"], load["chunk_step_share"], osl,
                                     acc, 0.99, ops) * 1e3,
        "prefill_ms": full(t_pf) * 1e3, "prefill_queue_ms": load["prefill_queue_s"] * 1e3,
        "capacity_wait_ms": load["capacity_wait_s"] * 1e3, "request_rate_per_s": load["x_per_s"],
        "prefill_utilization": load["rho"], "chunk_step_share": load["chunk_step_share"],
        "tps_per_user": tps_user,
        **rates(ops, n, osl, tpot, ttft_mean, ttft, load["ttft_p90_s"], out_gpu, total_gpu, power, power_basis,
                price),
    }
    bound = _step_columns(cols, d, fmt_of, load, full, n, ops)
    _memory_columns(cols, p, d, vals, load, bound, full, ops)
    cols.update(record_names(tps_user, total_gpu, out_gpu))
    return cols


def _step_columns(cols: dict, d: dict, fmt_of: dict, load: dict, full, n, ops):
    """The step's parts (ms), per-GPU work (FLOPs by format, GB by kind, collectives), latency split and resource
    times into ``cols``; returns the binding resource of each point ('prefill' where the prefill servers cannot
    feed the batch)."""
    res = [full(d["r_compute_s"]), full(d["r_memory_s"]), full(d["t_link_s"]),
           full(d["t_latency_s"]) + full(d["t_overhead_s"])]
    bound = ops.where(load["prefill_saturated"], "prefill", ops.argmax_name(res, _RESOURCE_NAMES))
    times, gbs, latency = _column_plan(tuple(d))
    for key, col in times:
        cols[col] = full(d[key]) * 1e3
    for fmt in ("bf16", "fp8", "fp4"):
        total = ops.zeros(n)
        for k, f in fmt_of.items():
            if f == fmt and k in d:
                total = total + full(d[k])
        cols[f"step_flops_{fmt}"] = total
    for key, col in gbs:
        cols[col] = full(d[key]) / 1e9
    cols["step_collectives"] = full(d["n_collectives"])
    for key, col in latency:
        cols[col] = full(d[key]) * 1e3
    cols.update(res_compute_ms=res[0] * 1e3, res_hbm_bandwidth_ms=res[1] * 1e3, res_link_ms=res[2] * 1e3,
                res_latency_ms=res[3] * 1e3)
    return bound


_plans: dict[tuple, tuple] = {}    # the decode outputs' names -> _column_plan's answer


def _column_plan(names: tuple) -> tuple[list, list, list]:
    """Which decode outputs become which step columns, in the columns' order: the times (``t_*_s`` -> ``t_*_ms``,
    sorted by name), the bytes (``n_bytes_*`` -> ``step_bytes_*_gb``, sorted) and the latency parts present
    (LATENCY_PARTS order). Worked out once per set of output names (a model's compiled equations)."""
    plan = _plans.get(names)
    if plan is None:
        keys = sorted(names)
        plan = _plans[names] = (
            [(k, k[:-2] + "_ms") for k in keys if k.startswith("t_") and k.endswith("_s")],
            [(k, "step_" + k[2:] + "_gb") for k in keys if k.startswith("n_bytes_")],
            [(k, col) for k, col in LATENCY_PARTS if k in names])
    return plan


def _memory_columns(cols: dict, p: dict, d: dict, vals: dict, load: dict, bound, full, ops) -> None:
    """Memory per GPU, the batch caps, whether the point fits (KV, host tier, a stable queue) and why not."""
    batch = p["batch"]
    w, kvs, maxb = full(d["weights_bytes_per_gpu"]), full(d["kv_bytes_per_seq_per_gpu"]), full(d["max_batch"])
    kv_maxb = full(d["kv_max_batch"])
    mem_gb = full(d["mem_bytes_per_gpu"]) / 1e9
    host_kv = full(d["host_kv_bytes_per_gpu"])
    host_cap = full(np.asarray(vals["C_host"]) * np.asarray(vals["f_mem"]) if ops is ARRAYS
                    else vals["C_host"] * vals["f_mem"])                         # host-tier bytes per GPU
    stable = np.broadcast_to(load.get("queue_stable", True), np.shape(batch)) if ops is ARRAYS \
        else load.get("queue_stable", True)
    fits = (batch <= maxb) & (host_kv <= host_cap) & stable
    if ops.any(host_kv > 0):
        maxb = ops.minimum(maxb, ops.where(host_kv > 0, batch * host_cap / ops.maximum(host_kv, 1e-300), math.inf))
    floor_maxb = ops.floor(maxb)
    cols.update(
        host_kv_gb_per_gpu=host_kv / 1e9,
        weights_gb_per_gpu=w / 1e9, kv_gb_per_seq_per_gpu=kvs / 1e9,
        kv_gb_per_gpu=batch * p["tp"] * p["pp"] / p["gpus"] * kvs / 1e9, mem_gb_per_gpu=mem_gb,
        max_batch=ops.maximum(floor_maxb, 0.0), kv_max_batch=ops.maximum(ops.floor(kv_maxb), 0.0), fits=fits,
        bound=ops.where(fits, ops.where(batch >= floor_maxb * 0.999, "capacity:" + bound, bound), "capacity"),
        fit_reason=_fit_reason(ops, fits, maxb, batch, w, kvs, mem_gb, stable, p["arrival_rate"], kv_maxb),
    )


def _fit_reason(ops, fits, maxb, batch, w, kvs, mem_gb, stable, rate, kv_maxb):
    """``fit_reasons`` of the points (arrays), or of one point ('fits' without building arrays)."""
    ok = fits | ops.logical_not(stable)            # an unstable queue is its own reason
    if ops is ARRAYS:
        return fit_reasons(ok, maxb, batch, w, kvs, mem_gb, stable, rate, kv_maxb)
    if ok and stable:
        return "fits"
    return str(fit_reasons(*(np.array([v]) for v in (ok, maxb, batch, w, kvs, mem_gb, stable, rate, kv_maxb)))[0])


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
