"""Bind the kernel fits of a GPU and engine (hardware ``kernel_fits``, perfmodel kernels --write) to the
equations' kernel symbols (equations/symbols.py, group ``kernel``).

Where the hardware has curves for the profile's engine (``dynamo-X`` runs engine X's kernels):
    t_gemm0  = median t0 of the engine's BF16 GEMM curves (the floor of a plain kernel launch)
    t_attn0  = median t0 of its decode-attention curves for the KV format (MLA curves for MLA layers)
    t_moe0   = median t0 of its fused-MoE curves for the weight format
    a_1s, g_1s, a_2s, g_2s = medians of its custom all-reduce curves (CUDA-graph variants where measured):
               one-shot lat1 n^g1 and two-shot lat2 n^g2 (scaled by a what-if's scale-up latency over the
               catalog's)
    e_ggk    = median MoE plateau eff_c / median GEMM plateau eff_c of the format (clipped to 0.05-1)
    tpe_h, g_etp = medians of the MoE curves' tpe_half and g_tp
    q_arf, q_ggf = 1 where the all-reduce and MoE curves exist: the all-reduce fit then replaces the profile's
               collective_latency_us on all-reduces and e_ggk its eff_grouped_gemm (calibration no longer sees
               those on such hardware). The launch floors count with the profile's kernel_floor_share
               (calibrated: the share of isolated-kernel floors a CUDA-graph step pays in series).
Where the hardware's kernel_fits also carry ``launch`` (perfmodel/kernels/launch.py) and the profile switches on
the mechanism ``floors_net_of_harness`` (specs/mechanisms.py; off: plain medians of every curve's t0), the floors
are net of the collector's own per-call node periods, and curves whose t0 sits on its fitting bound give none:
    t_X0     = max(t0_X - k_X harness_call_us, 0) for X in gemm, attn, moe (k = 1 for a GEMM or attention call, k =
                                             MOE_KERNELS for a fused-MoE call, the kernels the step counts for it)
The GPU's CUDA-graph node period (``launch.graph_node_us``) is the hardware's lower bound on the per-kernel fixed
cost and is reported beside the curve end (docs/curve-end.md), but it does not replace the profile's fitted
kernel_overhead_us, kernel_floor_share and layer_floor_us: bound in their place it made low-batch DeepSeek-R1 on
TensorRT-LLM 25-48% too fast (the trtllm-blog01 MTP-depth family 6% -> 34-40% left out of the fit; the serving
step launches more than the kernels the equations count), so the fitted per-kernel cost stays the one that
carries what the node period does not.
Where the profile switches on the mechanism ``gemm_kernel_band`` (specs/mechanisms.py), the dense GEMMs' small-M
loss comes from the engine's production GEMM curves on the GPU (``gemm_production``) in the weight format (else any
format): g_mh, g_bc = medians of their m_half and beta_c (equations/gemm_shape.small_m_efficiency); off, 0 and 0.
Without curves (other hardware, the speed-of-light profile, engine 'none') the defaults of ``defaults`` leave
the equations as they were: no kernel floors, one-shot 2 lat_link, two-shot 3 lat_link, the profile's
kernel_overhead_us, collective_latency_us and eff_grouped_gemm.
"""

from __future__ import annotations

import numpy as np

from ..equations.collectives import default_custom_latencies
from ..model.moe import MOE_KERNELS

GEMM_DTYPE = {"bf16": ("bfloat16",), "fp16": ("bfloat16",), "fp8": ("fp8", "fp8_block"), "nvfp4": ("nvfp4",),
              "fp4": ("nvfp4",), "mxfp4": ("nvfp4",), "int4": ("bfloat16",), "mxfp8": ("fp8_block", "fp8"),
              "w4afp8": ("fp8_block", "fp8")}
MOE_DTYPE = {"bf16": ("bfloat16",), "fp16": ("bfloat16",), "fp8": ("fp8", "fp8_block"), "nvfp4": ("nvfp4",),
             "fp4": ("nvfp4",), "mxfp4": ("w4a8_mxfp4_mxfp8", "w4a16_mxfp4"), "int4": ("int4_wo",),
             "mxfp8": ("fp8_block", "fp8")}
KV_DTYPE = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "fp8"}


def defaults(lat_link_s: float) -> dict[str, float]:
    """Kernel-symbol values without a kernel fit (the equations as before)."""
    return {"q_arf": 0.0, "q_ggf": 0.0, "t_gemm0": 0.0, "t_attn0": 0.0, "t_moe0": 0.0, "e_ggk": 1.0,
            "tpe_h": 0.0, "g_etp": 0.0, "g_mh": 0.0, "g_bc": 0.0, **default_custom_latencies(lat_link_s)}


def engine_of(profile) -> str:
    e = profile.engine
    return e.split("-", 1)[1] if e.startswith("dynamo-") else e


def _curves(fits, family: str, engine: str, keep=lambda v: True) -> list[dict]:
    fam = fits.families.get(family, {}).get(engine, {})
    return [c.params for v, c in fam.items() if keep(v)]


T0_EDGE_US = {"gemm": 100.0, "attention": 200.0, "mla": 200.0, "moe": 500.0}
"""The upper bound of each family's fitted t0_us (perfmodel/kernels/<family>.py PARAMS; tests pin them equal): a
curve whose t0 sits on it has no measured floor (vLLM's MLA decode on Hopper: 160-200 us), and is left out of the
floor's median."""


EFF_C_TOP = 0.99
"""A GEMM curve whose plateau eff_c fits at or above this (its bound is 1.0) measured no plateau: left out of the
production curves."""
T0_PLAUSIBLE_US = 50.0
"""A GEMM curve whose launch floor t0 fits above this measured no kernel (the engines' plain GEMMs fit 2-15 us;
vLLM's block-scaled FP8 curves put 30-100 us there): left out of the production curves."""


def gemm_production(variant: str, params: dict) -> bool:
    """A GEMM curve that measures a production kernel: no Triton fallback, a plateau below its bound and a
    plausible launch floor (EFF_C_TOP, T0_PLAUSIBLE_US)."""
    return ("triton" not in variant.split("/", 1)[0] and params["eff_c"] < EFF_C_TOP
            and params["t0_us"] < T0_PLAUSIBLE_US)


def gemm_shape_values(fits, engine: str, weights: str) -> dict[str, float]:
    """g_mh, g_bc (mechanism ``gemm_kernel_band``): medians of m_half and beta_c over the engine's fitted
    production GEMM curves in the weight format (GEMM_DTYPE), else in any format; {} without such a curve."""
    fam = fits.families.get("gemm", {}).get(engine, {})
    kept = {v: c.params for v, c in fam.items() if c.status == "fitted" and gemm_production(v, c.params)}
    use = [p for v, p in kept.items() if _dtype_of(v) in GEMM_DTYPE.get(weights, ())] or list(kept.values())
    if not use:
        return {}
    return {"g_mh": _median(use, "m_half"), "g_bc": _median(use, "beta_c")}


def _median(curves, name):
    vals = [c[name] for c in curves if name in c]
    return float(np.median(vals)) if vals else None


def _floor(curves, family: str) -> float | None:
    """Median t0_us over the curves whose t0 is off its fitting bound (None if none is)."""
    return _median([c for c in curves if c.get("t0_us", 0.0) < 0.99 * T0_EDGE_US[family]], "t0_us")


def _dtype_of(variant: str) -> str:
    return variant.split("/", 1)[1] if "/" in variant else ""


def harness_s(fits) -> float:
    """The per-call overhead inside the tables' latencies, s (0 without a launch block)."""
    return fits.launch.harness_call_us.value * 1e-6 if fits is not None and fits.launch is not None else 0.0


def kernel_values(hardware, profile, weights: str, kv_cache: str, mla: bool, lat_link_s: float,
                  lat_link_catalog_s: float | None = None) -> dict[str, float]:
    """Kernel-symbol values for one setup (SI units): the fitted ones where they exist, else ``defaults``."""
    out = defaults(lat_link_s)
    fits, engine = hardware.kernel_fits, engine_of(profile)
    if fits is None or not any(engine in e for e in fits.families.values()):
        return out
    netted = profile.uses("floors_net_of_harness")
    net = harness_s(fits) if netted else 0.0
    floor = _floor if netted else (lambda curves, family: _median(curves, "t0_us"))
    gemm_bf16 = _curves(fits, "gemm", engine, lambda v: _dtype_of(v) == "bfloat16")
    if (t := floor(gemm_bf16, "gemm")) is not None:
        out["t_gemm0"] = max(t * 1e-6 - net, 0.0)
    kvd = KV_DTYPE.get(kv_cache, "fp8")
    att = _curves(fits, "mla" if mla else "attention", engine, lambda v: v.endswith("/" + kvd)) or \
        _curves(fits, "mla" if mla else "attention", engine)
    if (t := floor(att, "mla" if mla else "attention")) is not None:
        out["t_attn0"] = max(t * 1e-6 - net, 0.0)
    moe = _curves(fits, "moe", engine, lambda v: _dtype_of(v) in MOE_DTYPE.get(weights, ())) or \
        _curves(fits, "moe", engine)
    if (t := floor(moe, "moe")) is not None:
        out["t_moe0"] = max(t * 1e-6 - MOE_KERNELS * net, 0.0)
    if moe:
        gemm_fmt = _curves(fits, "gemm", engine, lambda v: _dtype_of(v) in GEMM_DTYPE.get(weights, ())) or gemm_bf16
        e_moe, e_gemm = _median(moe, "eff_c"), _median(gemm_fmt, "eff_c")
        if e_moe and e_gemm:
            out["e_ggk"], out["q_ggf"] = float(np.clip(e_moe / e_gemm, 0.05, 1.0)), 1.0
        out["tpe_h"] = _median(moe, "tpe_half") or 0.0
        out["g_etp"] = _median(moe, "g_tp") or 0.0
    if profile.uses("gemm_kernel_band"):
        out.update(gemm_shape_values(fits, engine, weights))
    ar = fits.families.get("allreduce", {}).get(engine, {})
    custom = [c.params for v, c in ar.items() if v.startswith("custom:")]
    graph = [c.params for v, c in ar.items() if v.startswith("custom:") and ("graph" in v.lower() or
                                                                              "eager" not in v.lower())]
    use = graph or custom
    if use:
        scale = lat_link_s / lat_link_catalog_s if lat_link_catalog_s else 1.0
        out.update(q_arf=1.0, a_1s=_median(use, "lat1_us") * 1e-6 * scale, g_1s=_median(use, "g1"),
                   a_2s=_median(use, "lat2_us") * 1e-6 * scale, g_2s=_median(use, "g2"))
    return out
