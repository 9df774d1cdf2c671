"""Bind specs to equation symbols: hardware, profile and number formats -> SI values.

Spec units (TB/s, PFLOP/s, GB, us, ms) become SI (B/s, FLOP/s, B, s) here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..equations.collectives import bind_fabric
from ..errors import SpecError
from ..formats import COMPUTE_RATE, weight_bytes
from ..model import attention_families, is_moe, uses_mla
from ..specs.hardware import HARDWARE_FIELDS, HardwareSpec
from ..specs.model import ModelSpec
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from .kernel_bind import defaults as kernel_defaults
from .kernel_bind import kernel_values

# hardware field -> (symbol, factor to SI)
HW_SYMBOLS = {
    "hbm_bandwidth_tbps": ("BW_hbm", 1e12),
    "bf16_dense_pflops": ("F_bf16", 1e15),
    "fp8_dense_pflops": ("F_fp8", 1e15),
    "scaleup_bandwidth_gbps": ("BW_link", 1e9),
    "scaleup_latency_us": ("lat_link", 1e-6),
    "nic_bandwidth_gbps": ("BW_nic", 1e9),
    "scaleup_domain_gpus": ("D_dom", 1.0),
    "sm_count": ("n_sm", 1.0),
    "host_link_bandwidth_gbps": ("BW_host", 1e9),
    "host_memory_bandwidth_gbps": ("BW_hmem", 1e9),
}

# profile parameter -> (symbol, factor to SI)
PROFILE_SYMBOLS = {
    "eff_weights": ("e_w", 1.0), "eff_kv": ("e_kv", 1.0), "eff_gemm": ("e_mm", 1.0), "eff_gemm_fp4": ("e_mm4", 1.0),
    "eff_grouped_gemm": ("e_gg", 1.0),
    "eff_attention": ("e_at", 1.0), "eff_attention_decode": ("e_atd", 1.0), "eff_link": ("e_ln", 1.0), "overlap": ("ovl", 1.0),
    "collective_latency_us": ("t_coll", 1e-6),
    "custom_allreduce_max_gpus": ("n_cus", 1.0), "gemm_tile_m": ("M_t", 1.0), "gemm_tile_m_min": ("m_min", 1.0), "gemm_tile_n": ("N_t", 1.0), "layer_floor_us": ("t_floor", 1e-6),
    "kernel_overhead_us": ("t_kern", 1e-6), "kernel_floor_share": ("r_kf", 1.0),
    "step_overhead_ms": ("t_step", 1e-3), "seq_overhead_us": ("t_seq", 1e-6), "scheduler_overlap": ("q_os", 1.0),
    "request_overhead_ms": ("t_req", 1e-3), "arrival_burst": ("phi", 1.0), "prefill_chunk_tokens": ("N_ch", 1.0), "moe_imbalance": ("imb", 1.0), "workspace_gb": ("C_ws", 1e9),
    "max_running_requests": ("N_run", 1.0),
    "mem_fraction": ("f_mem", 1.0), "kv_budget_after_weights": ("q_free", 1.0),
    "kv_reserve_full_length": ("q_res", 1.0), "prefill_speedup": ("s_pf", 1.0), "decode_speedup": ("s_dec", 1.0),
}


def hardware_fields(hw: HardwareSpec, overrides: dict[str, float] | None = None) -> dict[str, float | None]:
    """Field -> value in spec units (None where an optional field is not given), with overrides (validated against
    the sane ranges)."""
    vals = {f: hw.value(f) for f in HARDWARE_FIELDS}
    for k, v in (overrides or {}).items():
        if k not in HARDWARE_FIELDS:
            import difflib
            close = difflib.get_close_matches(k, list(HARDWARE_FIELDS), n=2)
            raise SpecError(f"unknown hardware field {k!r}" + (f"; did you mean {', '.join(close)}?" if close else ""),
                            field=f"overrides.hardware.{k}")
        lo, hi, unit, _ = HARDWARE_FIELDS[k]
        if not (isinstance(v, (int, float)) and lo <= v <= hi):
            raise SpecError(f"{v!r} is outside the sane range {lo}-{hi} {unit}", field=f"overrides.hardware.{k}")
        vals[k] = float(v)
    cap, seen = vals.get("hbm_capacity_gb"), vals.get("hbm_visible_gib")
    over = overrides or {}
    if seen and "hbm_capacity_gb" in over and "hbm_visible_gib" not in over:
        vals["hbm_visible_gib"] = seen * over["hbm_capacity_gb"] / hw.specs.hbm_capacity_gb.value  # a what-if scales both
    elif cap and seen and seen > cap:
        if "hbm_visible_gib" in over:
            raise SpecError(f"visible HBM {seen:g} GiB exceeds the capacity {cap:g} GB (read as GiB)",
                            field="overrides.hardware.hbm_visible_gib")
        vals["hbm_visible_gib"] = cap   # a what-if with less HBM: software cannot see more than there is
    return vals


def required(fields: Mapping[str, float | None], name: str) -> float:
    """``fields[name]`` for a field the hardware schema requires (or one the caller checked is given)."""
    v = fields[name]
    if v is None:
        raise SpecError(f"hardware field {name} has no value", field=name)
    return v


GIB = 2.0 ** 30


def hbm_bytes(fields: Mapping[str, float | None]) -> float:
    """HBM per GPU as the engine sees it, bytes: hbm_visible_gib x 2^30 (what the CUDA runtime reports), else the
    marketed hbm_capacity_gb x 1e9."""
    seen = fields.get("hbm_visible_gib")
    return seen * GIB if seen else required(fields, "hbm_capacity_gb") * 1e9


def compute_rate(fields: Mapping[str, float | None], fmt: str, without_fp4: str = "fp8") -> float:
    """Dense FLOP/s for GEMMs with weights in ``fmt``. A 4-bit format on hardware without FP4 tensor units runs at
    the ``without_fp4`` rate: "bf16" is what the kernels do (weight-only W4A16: Marlin, Triton, FlashInfer's
    mixed-input CUTLASS; the only 4-bit MoE kernels the H100/H200 tables list are w4a16_mxfp4 and int4_wo, and
    kernels/gpu.GpuPeaks.flops reads them at the 16-bit rate), "fp8" the rule before mechanism
    ``w4a16_without_fp4`` (perfmodel/specs/mechanisms.py)."""
    rate = COMPUTE_RATE[fmt]
    if rate == "fp4" and not fields.get("fp4_dense_pflops"):
        rate = without_fp4
    return required(fields, f"{rate}_dense_pflops") * 1e15


def attention_format(model: ModelSpec, weights: str, attention_weights: str | None) -> str:
    """Default: the weight format, except fp8 for attention when a MoE model's experts are 4-bit."""
    if attention_weights:
        return attention_weights
    return "fp8" if is_moe(model) and weight_bytes(weights) < 1 else weights


def bind_hardware(fields: Mapping[str, float | None], weights: str, attn_fmt: str,
                  without_fp4: str = "fp8") -> dict[str, float]:
    out = {sym: required(fields, f) * k for f, (sym, k) in HW_SYMBOLS.items()}
    out.update(bind_fabric())
    out.update(kernel_defaults(out["lat_link"]))   # kernel symbols without a fit (Setup binds the fitted ones)
    out["C_hbm"] = hbm_bytes(fields)
    out["F_x"] = compute_rate(fields, weights, without_fp4)
    out["F_a"] = compute_rate(fields, attn_fmt, without_fp4)
    # 1 where the GEMMs run on FP4 tensor cores (their efficiency is eff_gemm_fp4), else 0
    out["q_x"] = 1.0 if runs_fp4(fields, weights) else 0.0
    out["q_a"] = 1.0 if runs_fp4(fields, attn_fmt) else 0.0
    return out


def runs_fp4(fields: Mapping[str, float | None], fmt: str) -> bool:
    """True if GEMMs with weights in ``fmt`` run on FP4 tensor cores (4-bit format and FP4 units present)."""
    return COMPUTE_RATE[fmt] == "fp4" and bool(fields.get("fp4_dense_pflops"))


def bind_profile(values: dict[str, float]) -> dict[str, float]:
    return {sym: values[p] * k for p, (sym, k) in PROFILE_SYMBOLS.items()}


def profile_values(profile: ProfileSpec, overrides: dict[str, float] | None = None, which: str = "value") -> dict:
    vals = profile.values(which)
    for k, v in (overrides or {}).items():
        if k not in PROFILE_PARAMS:
            raise SpecError(f"unknown profile parameter {k!r}; choose from {sorted(PROFILE_PARAMS)}",
                            field=f"overrides.profile.{k}")
        _, lo, hi, _ = PROFILE_PARAMS[k]
        if not lo <= v <= hi:
            raise SpecError(f"{v} is outside the physical range {lo}-{hi}", field=f"overrides.profile.{k}")
        vals[k] = float(v)
    return vals


def bind_formats(model: ModelSpec, weights: str, attn_fmt: str, kv: str) -> dict[str, float]:
    """Bytes per element of each weight class, and KV entry/indexer/state bytes per attention kind."""
    out = {"b_x": weight_bytes(weights), "b_a": weight_bytes(attn_fmt, "attention_weights"),
           "b_e": 2.0, "b_act": 2.0, "b_dsp": 1.0 if weight_bytes(weights) <= 1 else 2.0}
    for name, A in attention_families(model).items():
        out[f"E_{name}"], out[f"I_{name}"], out[f"R_{name}"] = A.entry_bytes(kv)
    return out


def bind_kernel_fits(hw: HardwareSpec, profile: ProfileSpec, model: ModelSpec, weights: str, kv: str,
                     fields: Mapping[str, float | None]) -> dict[str, float]:
    """Kernel-symbol values from the hardware's kernel fits for the profile's engine (engine/kernel_bind.py);
    the defaults of bind_hardware where there is no fit."""
    return kernel_values(hw, profile, weights, kv, uses_mla(model), required(fields, "scaleup_latency_us") * 1e-6,
                         hw.specs.scaleup_latency_us.value * 1e-6)
