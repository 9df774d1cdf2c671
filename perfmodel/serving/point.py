"""One operating point of aggregated (or decode-only) serving on Python floats: ``aggregated.evaluate_columns``
for one point, without numpy arrays (issue 49: one point in ~0.1 ms).

The same steps in the same order as the array path: the compiled step equations on floats (``Compiled`` on one
point), the chunk mixture, the closed loop's substitutions (``queueing.closed_loop``), the TPOT tail and the
result columns (``aggregated._columns``) in the declared order. Scope: a fixed batch, no client count and no
arrival rate (the closed loop of the clients the batch needs), an engine that mixes prefill into its decode steps
and catalog setups whose symbols are scalars. Anything else, and any point where float arithmetic raises (x / 0,
the root of a negative, overflow: numpy would give inf or NaN), returns None and the caller takes the array path.
tests/test_point_path.py pins every column to the array path (1e-12 relative).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from ..engine.bind import attention_format
from ..engine.compiled import compiled, scalar_functions, scalar_max, scalar_min
from ..engine.evaluate import OPTIONAL_COLUMNS, POINT_COLUMNS, Setup, decode_symbols, prefill_symbols
from .aggregated import RESOURCES, fit_reasons, rate_name
from .queueing import PERCENTILES, SATURATED_RHO, SEEN_SUBSTITUTIONS

_nan = float("nan")


@lru_cache(maxsize=1)
def _queue():
    """The queueing forms (serving/queueing.compiled_queue's generated code) on Python floats; cs2 last."""
    from .queueing import queue_sources
    return scalar_functions(queue_sources(), {"log": math.log})


@lru_cache(maxsize=4)
def _z(q: float) -> float:
    return NormalDist().inv_cdf(q)


def point_columns(setup: Setup, points: dict, vals: dict) -> dict | None:
    """``aggregated.evaluate_columns(setup, points, symbol_values=vals)`` of one point as a mapping of Python
    scalars (None where this path does not apply: the caller evaluates the arrays)."""
    try:
        p = {k: float(points[k]) for k in POINT_COLUMNS}
        for k, default in OPTIONAL_COLUMNS.items():
            p[k] = float(points.get(k, default))
    except (TypeError, ValueError):        # arrays of points, or a missing column: the array path decides
        return None
    fvals = _float_values(vals)
    if (fvals is None or math.isnan(p["batch"]) or not math.isnan(p["concurrency"])
            or not math.isnan(p["arrival_rate"]) or fvals.get("mixed_pf", 1.0) != 1.0):
        return None
    try:
        return _evaluate(setup, p, fvals)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None


_float_vals: dict[int, tuple[dict, dict | None]] = {}   # id(symbol values) -> (them, as Python floats or None)


def _float_values(vals: dict) -> dict | None:
    """The symbol values as Python floats (None where one is an array over points), kept per mapping object
    (api.predict_point binds a catalog setup's values once per process; they are not changed in place)."""
    hit = _float_vals.get(id(vals))
    if hit is not None and hit[0] is vals:
        return hit[1]
    out: dict | None = None
    if not any(isinstance(v, np.ndarray) and v.ndim > 0 for v in vals.values()):
        try:
            out = {k: float(v) for k, v in vals.items()}
        except (TypeError, ValueError):      # a value that is no number: the array path decides
            out = None
    if len(_float_vals) > 256:
        _float_vals.clear()
    _float_vals[id(vals)] = (vals, out)
    return out


def _decode_inputs(p: dict, vals: dict, mix: float) -> dict:
    """``evaluate.symbol_inputs`` of one point (floats)."""
    x = dict(vals)
    x.update(decode_symbols(p, mix))
    if not math.isnan(p["max_running"]):
        x["N_run"] = p["max_running"]
    return x


def _prefill_inputs(p: dict, vals: dict, tokens: float | None = None) -> dict:
    """``evaluate.prefill_inputs`` of one point (floats)."""
    x = dict(vals)
    x.update(prefill_symbols(p, scalar_max(p["new"], 1.0), tokens))
    return x


def _floats(out: dict | None) -> dict:
    """The compiled outputs of one point (``Compiled.scalar``); TypeError where float arithmetic raised (the
    caller then takes the array path)."""
    if out is None:
        raise TypeError("float arithmetic raised: numpy decides")
    return out


def _evaluate(setup: Setup, p: dict, vals: dict) -> dict:
    cm = compiled(setup.model)
    t_pf = float(_floats(cm.prefill.scalar(_prefill_inputs(p, vals)))["prefill_s"])
    d0 = _floats(cm.decode.scalar(_decode_inputs(p, vals, 0.0)))
    # aggregated.chunk_mixture
    n_ch_tok = vals["N_ch"]
    unit = (p["batch"] - 1) * p["acc"] * p["new"] / p["osl"]
    n_pf = p["mix"] * unit
    ranks = p["gpus"] / (p["tp"] * p["pp"])
    n_cap = scalar_min(n_pf, n_ch_tok * ranks)
    k_rank = scalar_min(scalar_max(p["new"], 1.0), n_ch_tok)
    w = 1 - (1 - scalar_min(1.0, n_cap / (ranks * k_rank))) ** ranks if n_cap > 0 else 0.0
    k = n_cap / w if w > 0 else 0.0
    demand = n_pf / n_cap if n_cap > 0 else 0.0
    dk = _floats(cm.decode.scalar(_decode_inputs(p, vals, k / unit if unit > 0 else 0.0))) if w > 0 else d0
    step0 = float(d0["step_s"])
    step_mix = (1 - w) * step0 + w * float(dk["step_s"])
    budget = n_ch_tok * p["gpus"] / (p["tp"] * p["pp"])
    t_budget = float(_floats(cm.prefill.scalar(_prefill_inputs(p, vals, budget)))["prefill_s"])
    load = _serving_load(p, step0, step_mix, demand, t_pf, t_budget, vals)
    share = load["chunk_share"] * w
    load["chunk_step_share"] = share
    step_chunk = float(dk["step_s"])
    d = {key: (1 - share) * d0[key] + share * dk[key] for key in d0}
    return _columns(setup, p, d, t_pf, vals, load, step0, step_chunk)


def _serving_load(p: dict, step0, step_chunk, chunks, t_pf, t_budget, vals: dict) -> dict:
    """``queueing.serving_load`` of one point: the closed loop where prefill mixes in, decode alone otherwise."""
    batch = p["batch"]
    if not p["mix"] > 0:
        ttft = t_pf + step0
        return {"x_per_s": batch * p["acc"] / (p["osl"] * step0), "rho": 0.0, "decode_share": 1.0, "chunk_share": 0.0,
                "step_s": step0 + 0.0, "tpot_s": step0 / p["acc"], "slot_s": p["osl"] * step0 / p["acc"],
                "clients_needed": batch, "concurrency": batch, "capacity_wait_s": 0.0, "prefill_saturated": False,
                "prefill_queue_s": 0.0, "ttft_mean_s": ttft, "ttft_p50_s": ttft, "ttft_p90_s": ttft,
                "ttft_p99_s": ttft}
    n_tok = vals["N_ch"]
    servers = p["gpus"] / (p["tp"] * p["pp"])
    n_ch = float(math.ceil(scalar_max(p["new"], 1.0) / n_tok - 1e-9))
    t_own = t_pf + n_ch * step0                                                   # prefill_first.own_and_serve
    t_serve = scalar_max(p["new"], 1.0) / n_tok * (step0 + t_budget) if chunks > 0 else t_pf
    out = _closed_loop(batch, vals["t_req"], step0, step_chunk, chunks, p["acc"], p["osl"], t_own, t_serve, servers,
                       vals["phi"], p["prefill_cv2"], t_serve)
    out["prefill_saturated"] = bool(out["prefill_saturated"])
    return out


def _closed_loop(b_run, t_req, step0, step_chunk, chunks, acc, osl, t_own, t_s, c, phi, cs2, t_cap) -> dict:
    """``queueing.closed_loop`` of one point with the clients its batch needs (floats)."""
    q = _queue()
    t_s = scalar_max(t_s, 1e-12)
    # queueing.decode_share
    u = osl / acc
    g = chunks * (step_chunk - step0)
    b = t_own + u * step0 - u * g
    f = 2 * u * step0 / (b + math.sqrt(b * b + 4 * u * u * g * step0))
    if f * chunks > 1:
        step = step_chunk + 0 * f
        f = u * step / (t_own + u * step)
    else:
        step = step0 + scalar_min(f * chunks, 1.0) * (step_chunk - step0)
    slot = t_own + osl * step / acc
    wait = q["mean_prefill_wait"]
    x, need = b_run / slot, b_run
    for _ in range(SEEN_SUBSTITUTIONS):
        rho = x * t_s / c
        rho_q = scalar_min(rho, SATURATED_RHO)
        seen = scalar_max(need - 1, 0) / scalar_max(need, 1)
        resid = scalar_min(1.0, scalar_max(need - 1, 0)) / 2
        seen_by = need
        cycle = t_req + resid * step + wait(scalar_max(rho_q * seen, 1e-12), t_s, c, phi, seen_by, cs2) + slot
        need = 1 + (b_run - 1) * cycle / slot
        x = need / cycle
    t_cap = scalar_max(t_cap, t_s)
    saturated = x * t_cap / c >= 1
    if saturated:
        x = c / t_cap
    rho = x * t_s / c
    need = x * cycle
    clients = need
    w_cap = (clients - need) / x
    out = {"x_per_s": x, "rho": scalar_min(rho, 1.0), "decode_share": f, "chunk_share": scalar_min(f * chunks, 1.0),
           "step_s": step, "tpot_s": step / acc, "slot_s": slot, "clients_needed": need, "concurrency": clients,
           "capacity_wait_s": w_cap, "prefill_saturated": saturated}
    # queueing._ttft_terms
    r, t_st = scalar_max(rho_q * seen, 1e-12), 2 * resid * step
    out["ttft_mean_s"] = q["ttft_mean"](t_req, w_cap, t_st, t_own, r, t_s, c, phi, seen_by, cs2)
    out["prefill_queue_s"] = q["mean_prefill_wait"](r, t_s, c, phi, seen_by, cs2)
    for pct in PERCENTILES:
        out[f"ttft_p{pct * 100:.0f}_s"] = q["ttft_quantile"](t_req, w_cap, t_st, t_own, r, t_s, c, pct, phi, seen_by,
                                                             cs2)
    for key in ("ttft_mean_s", "prefill_queue_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s"):
        if not isinstance(out[key], float):        # a complex power or an int: the array path decides
            raise TypeError(key)
    return out


_constants: dict[int, tuple[Setup, tuple]] = {}   # id(setup) -> (setup, its constants); setups are not changed


def _setup_constants(setup: Setup) -> tuple:
    """(power W, its basis, price USD per GPU-hour or None, format of each FLOP term) of a setup, kept per setup
    object (api.predict_point binds a catalog setup once per process)."""
    hit = _constants.get(id(setup))
    if hit is not None and hit[0] is setup:
        return hit[1]
    power, basis = setup.power_w()
    attn_fmt = attention_format(setup.model, setup.weights, setup.attention_weights)
    fmt_of = {"n_flops_gemm_attn": rate_name(attn_fmt), "n_flops_gemm_ffn": rate_name(setup.weights),
              "n_flops_attention_core": "bf16", "n_flops_indexer": "fp8"}
    if len(_constants) > 256:
        _constants.clear()
    _constants[id(setup)] = (setup, (power, basis, setup.price(), fmt_of))
    return _constants[id(setup)][1]


def _argmax_name(values: list[float]) -> str:
    """np.argmax over the resources: the first maximum, or the first NaN where there is one."""
    names = list(RESOURCES.values())
    for i, v in enumerate(values):
        if v != v:
            return names[i]
    return names[values.index(max(values))]


def _columns(setup: Setup, p: dict, d: dict, t_pf: float, vals: dict, load: dict, step0: float,
             step_chunk: float) -> dict:
    """``aggregated._columns`` of one point, in its order (floats, bools and strings)."""
    step = d["step_s"]
    acc, osl = p["acc"], p["osl"]
    tpot = step / acc
    tps_user = 1.0 / tpot
    ttft, ttft_mean = load["ttft_p50_s"], load["ttft_mean_s"]
    out_gpu = load["x_per_s"] * osl / p["gpus"]
    total_gpu = out_gpu * (p["isl"] + osl) / osl
    power, power_basis, price, fmt_of = _setup_constants(setup)
    # queueing.tpot_quantile at P99
    n = scalar_max(osl / acc, 1.0)
    w = min(max(load["chunk_step_share"], 0.0), 1.0)
    tail = tpot + _z(0.99) * scalar_max(step_chunk - step0, 0.0) * math.sqrt(w * (1 - w) / n) / acc
    cols = {
        "batch": p["batch"], "gpus": p["gpus"], "tp": p["tp"], "ep": p["ep"], "pp": p["pp"],
        "spec_tokens": p["spec_tokens"], "acceptance_length": acc, "isl": p["isl"], "osl": osl,
        "uncached_input": p["new"], "aggregated": p["mix"] > 0,
        "concurrency": load["concurrency"], "step_ms": step * 1e3, "tpot_ms": tpot * 1e3,
        "ttft_ms": ttft * 1e3, "ttft_p90_ms": load["ttft_p90_s"] * 1e3, "ttft_p99_ms": load["ttft_p99_s"] * 1e3,
        "ttft_mean_ms": ttft_mean * 1e3, "tpot_p99_ms": tail * 1e3,
        "prefill_ms": t_pf * 1e3, "prefill_queue_ms": load["prefill_queue_s"] * 1e3,
        "capacity_wait_ms": load["capacity_wait_s"] * 1e3, "request_rate_per_s": load["x_per_s"],
        "prefill_utilization": load["rho"], "chunk_step_share": load["chunk_step_share"],
        "tps_per_user": tps_user, "tps_per_user_e2e": osl / (ttft_mean + osl * tpot),
        "tps_per_user_e2e_p50": osl / (ttft + osl * tpot),
        "tps_per_user_e2e_p90": osl / (load["ttft_p90_s"] + osl * tpot),
        "output_tps_per_gpu": out_gpu, "total_tps_per_gpu": total_gpu,
        "total_tps_per_mw": total_gpu / power * 1e6, "output_tps_per_mw": out_gpu / power * 1e6,
        "power_basis": power_basis,
        "total_tokens_per_usd": total_gpu * 3600 / price if price else _nan,
    }
    res = [d["r_compute_s"], d["r_memory_s"], d["t_link_s"], d["t_latency_s"] + d["t_overhead_s"]]
    bound = "prefill" if load["prefill_saturated"] else _argmax_name(res)
    keys = sorted(d)
    for key in keys:
        if key.startswith("t_") and key.endswith("_s"):
            cols[key[:-2] + "_ms"] = d[key] * 1e3
    for fmt in ("bf16", "fp8", "fp4"):
        total = 0.0
        for key, f in fmt_of.items():
            if f == fmt and key in d:
                total = total + d[key]
        cols[f"step_flops_{fmt}"] = total
    for key in keys:
        if key.startswith("n_bytes_"):
            cols["step_" + key[2:] + "_gb"] = d[key] / 1e9
    cols["step_collectives"] = d["n_collectives"] + 0.0
    for key, col in (("n_lat_collective", "t_collective_latency_ms"), ("n_lat_launch", "t_launch_ms"),
                     ("n_lat_kernel_gap", "t_kernel_gap_ms"), ("n_lat_kernel_floor", "t_kernel_floor_ms"),
                     ("n_lat_floor_excess", "t_layer_floor_ms")):
        if key in d:
            cols[col] = d[key] * 1e3
    cols.update(res_compute_ms=res[0] * 1e3, res_hbm_bandwidth_ms=res[1] * 1e3, res_link_ms=res[2] * 1e3,
                res_latency_ms=res[3] * 1e3)
    wb, kvs, maxb = d["weights_bytes_per_gpu"] + 0.0, d["kv_bytes_per_seq_per_gpu"] + 0.0, d["max_batch"] + 0.0
    kv_maxb = d["kv_max_batch"] + 0.0
    mem_gb = d["mem_bytes_per_gpu"] / 1e9
    host_kv = d["host_kv_bytes_per_gpu"] + 0.0
    host_cap = vals["C_host"] * vals["f_mem"]
    batch = p["batch"]
    fits = bool(batch <= maxb and host_kv <= host_cap)
    if host_kv > 0:
        maxb = scalar_min(maxb, batch * host_cap / scalar_max(host_kv, 1e-300))
    floor_maxb = float(math.floor(maxb))
    if fits:
        reason = "fits"
    else:
        reason = str(fit_reasons(np.array([fits]), np.array([maxb]), np.array([batch]), np.array([wb]),
                                  np.array([kvs]), np.array([mem_gb]), np.array([True]), np.array([_nan]),
                                  np.array([kv_maxb]))[0])
    cols.update(
        host_kv_gb_per_gpu=host_kv / 1e9,
        weights_gb_per_gpu=wb / 1e9, kv_gb_per_seq_per_gpu=kvs / 1e9,
        kv_gb_per_gpu=batch * p["tp"] * p["pp"] / p["gpus"] * kvs / 1e9, mem_gb_per_gpu=mem_gb,
        max_batch=scalar_max(floor_maxb, 0.0), kv_max_batch=scalar_max(float(math.floor(kv_maxb)), 0.0), fits=fits,
        bound=(("capacity:" + bound if batch >= floor_maxb * 0.999 else bound) if fits else "capacity"),
        fit_reason=reason,
        intvty=tps_user, tput_per_gpu=total_gpu, output_tput_per_gpu=out_gpu,
    )
    return cols
