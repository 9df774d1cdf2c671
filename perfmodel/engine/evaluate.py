"""Evaluate the compiled equations over arrays of operating points -> a tidy DataFrame.

Derived metrics (InferenceX definitions, ../shared/reference/metrics-and-claims.md):
    step_ms            = one decode step (all B sequences advance by acc accepted tokens)
    tpot_ms            = step / acc                      (time per output token, as the record format defines it)
    tps_per_user       = 1000 / tpot_ms = acc / step     (ITL-based interactivity, 'intvty')
    TTFT               = prefill(new tokens after the cached prefix) + one decode step (+ queueing: queueing.py)
    tps_per_user_e2e   = osl / (TTFT + osl TPOT)         (E2E-normalized interactivity)
    output_tps_per_gpu = B acc / (step G)
    total_tps_per_gpu  = output_tps_per_gpu (isl + osl) / osl   (input counted incl. cached prefix)
    total_tps_per_mw   = total_tps_per_gpu / all-in W per GPU x 1e6
    total_tokens_per_usd = total_tps_per_gpu x 3600 / (USD per GPU-hour)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..specs.hardware import HardwareSpec
from ..specs.model import ModelSpec
from ..specs.profile import ProfileSpec
from .bind import attention_format, bind_formats, bind_hardware, bind_profile, hardware_fields, profile_values
from .compiled import compiled

POINT_COLUMNS = ("batch", "gpus", "tp", "ep", "pp", "spec_tokens", "acc", "isl", "osl", "new", "mix")
# share of requests whose prefix is reloaded from the host tier; share of KV decode reads from the host tier
OPTIONAL_COLUMNS = {"reload": 0.0, "cold": 0.0, "pool_reload": 0.0}
RESOURCES = {"r_compute_s": "compute", "r_memory_s": "hbm_bandwidth", "t_link_s": "link", "t_lat_total_s": "latency"}


@dataclass
class Setup:
    """Everything fixed for one evaluation call (scalars); the operating points vary."""

    hardware: HardwareSpec
    model: ModelSpec
    profile: ProfileSpec
    weights: str = "fp8"
    kv_cache: str = "fp8"
    attention_weights: str | None = None
    hw_overrides: dict = field(default_factory=dict)
    profile_overrides: dict = field(default_factory=dict)

    def symbol_values(self, which: str = "value") -> dict[str, float]:
        fields = hardware_fields(self.hardware, self.hw_overrides)
        attn = attention_format(self.model, self.weights, self.attention_weights)
        vals = bind_hardware(fields, self.weights, attn)
        vals.update(bind_profile(profile_values(self.profile, self.profile_overrides, which)))
        vals.update(bind_formats(self.model, self.weights, attn, self.kv_cache))
        vals["C_host"] = fields["host_memory_gb"] * 1e9   # host-tier capacity per GPU (serving layer)
        return vals

    def power_w(self) -> tuple[float, str]:
        f = hardware_fields(self.hardware, self.hw_overrides)
        if f.get("allin_power_w"):
            return f["allin_power_w"], "all-in"
        return f["gpu_tdp_w"], "gpu-tdp-fallback"

    def price(self) -> float | None:
        return hardware_fields(self.hardware, self.hw_overrides).get("price_usd_per_gpu_hour")


def _arrays(points: dict) -> dict[str, np.ndarray]:
    n = max((np.size(v) for v in points.values()), default=1)
    out = {k: np.broadcast_to(np.asarray(points[k], dtype=float), (n,)) for k in POINT_COLUMNS}
    for k, default in OPTIONAL_COLUMNS.items():
        out[k] = np.broadcast_to(np.asarray(points.get(k, default), dtype=float), (n,))
    return out


def symbol_inputs(p: dict[str, np.ndarray], vals: dict[str, float]) -> dict:
    """Operating-point arrays -> equation symbols (decode)."""
    x = dict(vals)
    x.update(B=p["batch"], G=p["gpus"], tp=p["tp"], ep=p["ep"], pp=p["pp"], q=1 + p["spec_tokens"],
             acc=p["acc"], isl=p["isl"], osl=p["osl"], new=p["new"], mix=p["mix"],
             L=p["isl"] + p["osl"] / 2, L_max=p["isl"] + p["osl"], f_rl=p.get("reload", 0.0), f_cold=p.get("cold", 0.0),
             f_rp=p.get("pool_reload", 0.0))
    return x


def prefill_inputs(p: dict[str, np.ndarray], vals: dict[str, float], tokens=None) -> dict:
    """One request's uncached tokens (or ``tokens`` per step) after its cached prefix."""
    x = dict(vals)
    new = np.maximum(p["new"], 1.0)
    x.update(G=p["gpus"], tp=p["tp"], ep=p["ep"], pp=p["pp"], T_pf=new if tokens is None else tokens,
             S_pf=new, P_pf=p["isl"] - p["new"])
    return x


PREFILL_TOKENS_PER_GPU = 8192  # default prefill step per GPU (engine chunk sizes are of this order)


def prefill_step(setup: Setup, p: dict, vals: dict, tokens_per_gpu: float = PREFILL_TOKENS_PER_GPU):
    """Prefill steps of max(tokens_per_gpu x gpus, new) tokens (at least one whole request):
    (tokens per step, seconds per step) per point. Throughput per GPU = tokens / seconds / gpus."""
    tokens = np.maximum(tokens_per_gpu * p["gpus"], p["new"])
    t = compiled(setup.model).prefill(prefill_inputs(p, vals, tokens=tokens))["prefill_s"]
    return tokens, np.broadcast_to(np.asarray(t, dtype=float), np.shape(tokens))


def evaluate(setup: Setup, points: dict, which: str = "value", symbol_values: dict | None = None) -> pd.DataFrame:
    """Evaluate every operating point in ``points`` (a mapping of POINT_COLUMNS to scalars or arrays).

    ``batch`` may hold NaN for "the largest batch that fits". Returns one row per point.
    """
    cm = compiled(setup.model)
    vals = symbol_values if symbol_values is not None else setup.symbol_values(which)
    p = _arrays(points)
    if np.isnan(p["batch"]).any():
        probe = cm.decode(symbol_inputs({**p, "batch": np.ones_like(p["batch"])}, vals))["max_batch"]
        p["batch"] = np.where(np.isnan(p["batch"]), np.maximum(np.floor(probe), 1.0), p["batch"])
    d = cm.decode(symbol_inputs(p, vals))
    pf = cm.prefill(prefill_inputs(p, vals))
    return _frame(setup, p, d, pf, vals)


def _frame(setup: Setup, p, d, pf, vals) -> pd.DataFrame:
    """All output columns, built as arrays and turned into one DataFrame at the end (no per-column inserts)."""
    n = len(p["batch"])
    full = lambda v: np.broadcast_to(np.asarray(v, dtype=float), (n,))  # noqa: E731
    step = full(d["step_s"])
    acc = p["acc"]
    tpot = step / acc
    tps_user = 1.0 / tpot
    ttft = full(pf["prefill_s"]) + step
    out_gpu = p["batch"] / (tpot * p["gpus"])
    total_gpu = out_gpu * (p["isl"] + p["osl"]) / p["osl"]
    power, power_basis = setup.power_w()
    price = setup.price()
    cols = {
        "batch": p["batch"], "gpus": p["gpus"], "tp": p["tp"], "ep": p["ep"], "pp": p["pp"],
        "spec_tokens": p["spec_tokens"], "acceptance_length": acc, "isl": p["isl"], "osl": p["osl"],
        "uncached_input": p["new"], "aggregated": p["mix"] > 0,
        "step_ms": step * 1e3, "tpot_ms": tpot * 1e3, "ttft_ms": ttft * 1e3,
        "prefill_ms": full(pf["prefill_s"]) * 1e3,
        "tps_per_user": tps_user, "tps_per_user_e2e": p["osl"] / (ttft + p["osl"] * tpot),
        "output_tps_per_gpu": out_gpu, "total_tps_per_gpu": total_gpu,
        "total_tps_per_mw": total_gpu / power * 1e6, "output_tps_per_mw": out_gpu / power * 1e6,
        "power_basis": np.full(n, power_basis, dtype=object),
        "total_tokens_per_usd": total_gpu * 3600 / price if price else np.full(n, np.nan),
    }
    lat_total = full(d["t_latency_s"]) + full(d["t_overhead_s"])
    res = np.stack([full(d["r_compute_s"]), full(d["r_memory_s"]), full(d["t_link_s"]), lat_total])
    names = np.array(list(RESOURCES.values()))
    bound = names[np.argmax(res, axis=0)]
    for key in sorted(d):
        if key.startswith("t_") and key.endswith("_s"):
            cols[key[:-2] + "_ms"] = full(d[key]) * 1e3
    # per-GPU work of one decode step: FLOPs by number format, bytes by kind, link traffic, collectives
    attn_fmt = attention_format(setup.model, setup.weights, setup.attention_weights)
    fmt_of = {"n_flops_gemm_attn": _rate_name(attn_fmt), "n_flops_gemm_ffn": _rate_name(setup.weights),
              "n_flops_attention_core": "bf16", "n_flops_indexer": "fp8"}
    for fmt in ("bf16", "fp8", "fp4"):
        cols[f"step_flops_{fmt}"] = sum((full(d[k]) for k, f in fmt_of.items() if f == fmt and k in d), np.zeros(n))
    for k in sorted(d):
        if k.startswith("n_bytes_"):
            cols["step_" + k[2:] + "_gb"] = full(d[k]) / 1e9
    cols["step_collectives"] = full(d["n_collectives"])
    cols.update(res_compute_ms=res[0] * 1e3, res_hbm_bandwidth_ms=res[1] * 1e3, res_link_ms=res[2] * 1e3,
                res_latency_ms=res[3] * 1e3)
    w, kvs, maxb = full(d["weights_bytes_per_gpu"]), full(d["kv_bytes_per_seq_per_gpu"]), full(d["max_batch"])
    mem_gb = full(d["mem_bytes_per_gpu"]) / 1e9
    host_kv = full(d["host_kv_bytes_per_gpu"])
    host_cap = full(np.asarray(vals["C_host"]) * np.asarray(vals["f_mem"]))   # host-tier bytes per GPU
    fits = (p["batch"] <= maxb) & (host_kv <= host_cap)
    if (host_kv > 0).any():
        maxb = np.minimum(maxb, np.where(host_kv > 0, p["batch"] * host_cap / np.maximum(host_kv, 1e-300), np.inf))
    cols.update(
        host_kv_gb_per_gpu=host_kv / 1e9,
        weights_gb_per_gpu=w / 1e9, kv_gb_per_seq_per_gpu=kvs / 1e9,
        kv_gb_per_gpu=p["batch"] * p["tp"] * p["pp"] / p["gpus"] * kvs / 1e9, mem_gb_per_gpu=mem_gb,
        max_batch=np.maximum(np.floor(maxb), 0), fits=fits,
        bound=np.where(fits, np.where(p["batch"] >= np.floor(maxb) * 0.999, "capacity:" + bound, bound), "capacity"),
        fit_reason=_fit_reasons(fits, maxb, p["batch"], w, kvs, mem_gb),
        # InferenceX record names, so measured and modeled curves overlay
        intvty=tps_user, tput_per_gpu=total_gpu, output_tput_per_gpu=out_gpu,
    )
    return pd.DataFrame(cols)


def _rate_name(fmt: str) -> str:
    from ..formats import COMPUTE_RATE
    return COMPUTE_RATE[fmt]


def _fit_reasons(fits, maxb, batch, w, kvs, mem_gb) -> np.ndarray:
    reasons = np.full(len(fits), "fits", dtype=object)
    bad = ~fits
    if bad.any():
        no_w = bad & (maxb < 1)
        reasons[no_w] = [f"weights {wi / 1e9:.1f} GB/GPU leave no room for one sequence's KV "
                         f"({ki / 1e9:.2f} GB/GPU)" for wi, ki in zip(w[no_w], kvs[no_w])]
        over = bad & ~no_w
        reasons[over] = [f"batch {b:.0f} needs {m:.1f} GB/GPU; at most {mb:.0f} sequences fit"
                         for b, m, mb in zip(batch[over], mem_gb[over], maxb[over])]
    return reasons
