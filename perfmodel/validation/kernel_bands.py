"""Search ranges of the attention efficiencies (and, with mechanism gemm_kernel_band, the GEMM efficiencies)
from the measured kernel tables (issue 41 item 1, issue 54 item 1): the hardware layer bounds what the serving fit
may move.

The calibration fits one prefill and one decode attention efficiency per engine (profile ``eff_attention``,
``eff_attention_decode``), across GPUs and shapes. The kernel tables (docs/kernels.md says where to get them, fitted per GPU,
engine and kernel by ``perfmodel kernels``, stored in ``hardware/*.yaml`` ``kernel_fits``) measure the engine's own
attention kernels. For each fitted (GPU, kernel) curve of the engine, the effective efficiency at serving shapes:

    decode, MLA curves (kernels/mla.py, on the 64-row tiles the equations issue too):
        e = eff_c x / (x + x_half),          x = B (s / 1024)^a_s
        over B in DECODE_BATCH sequences per rank and s in CONTEXT tokens
    prefill, prefill-attention curves (kernels/attention.py), one request of isl new tokens, d = 128:
        e = eff_c y / (y + y_half),          y = H isl
        over isl in CONTEXT and H in PREFILL_HEADS query heads per rank

GEMM (mechanism ``gemm_kernel_band``, specs/mechanisms.py: a profile that switches it on has eff_gemm and
eff_gemm_fp4 searched here too), the engine's production GEMM curves (engine/kernel_bind.gemm_production: no
Triton fallback, a plateau below its bound, a plausible launch floor), 4-bit (nvfp4) curves for eff_gemm_fp4 and
the others (BF16, FP8, block FP8) for eff_gemm, at their large-M plateau over serving reduction lengths:
        e = eff_c k / (k + k_half)           over k in GEMM_K
(the small-M loss m / (m + m_half) occ^beta_c is not in the band: with the mechanism on, the step computes it from
the same tables, equations/gemm_shape.small_m_efficiency).

The band is the [BAND_Q, 1 - BAND_Q] quantile range over every (GPU, kernel, shape) value; the fit moves the
engine's efficiency only inside it. Kernels kept: the engines' production kernels at BF16 attention math (the
equations divide by the BF16 peak): Triton fallbacks and decode kernels timed on prefill shapes are left out.
An engine with no such curve keeps the prior range PRIOR (a sourced prior's band: FlashAttention-2/3 reach 35-75%
of the BF16 peak on H100, Dao 2023 "FlashAttention-2" and Shah et al. 2024 "FlashAttention-3"; 0.1-1.0 keeps
every slower kernel in).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import catalog

DECODE_BATCH = (8, 16, 32, 64, 128, 256)
CONTEXT = (1024, 2048, 4096, 8192, 16384)
PREFILL_HEADS = (8, 16, 32, 64, 128)
BAND_Q = 0.1
PRIOR = (0.1, 1.0)
FAMILY = {"eff_attention": "prefill_attention", "eff_attention_decode": "mla"}
GEMM_K = (2048, 4096, 7168, 8192, 16384)
"""Reduction lengths of serving GEMMs: the catalog's hidden sizes (2880-16384) and per-rank intermediate sizes."""
GEMM_PARAMS = ("eff_gemm", "eff_gemm_fp4")


def _production(variant: str, family: str) -> bool:
    """A production kernel at BF16 attention math: no Triton fallback, no decode kernel on prefill shapes."""
    name = variant.removeprefix("prefill:")
    source, _, dtypes = name.partition("/")
    math = dtypes.split("/", 1)[0]
    if "triton" in source or math != "bfloat16":
        return False
    return not (family == "prefill_attention" and "decode" in source)


def effective(family: str, p: dict) -> np.ndarray:
    """Effective efficiencies of one curve (params ``p``) over the serving shapes (module docstring)."""
    if family == "mla":
        B, s = np.meshgrid(DECODE_BATCH, CONTEXT)
        x = B * (s / 1024.0) ** p["a_s"]
        return (p["eff_c"] * x / (x + p["x_half"])).ravel()
    H, isl = np.meshgrid(PREFILL_HEADS, CONTEXT)
    y = H * isl
    return (p["eff_c"] * y / (y + p["y_half"])).ravel()


@cache
def band(param: str, engine: str) -> tuple[float, float]:
    """(low, high) search range of ``param`` (eff_attention or eff_attention_decode) for ``engine`` (the base
    engine: dynamo-X runs X's kernels): quantiles of the measured effective efficiencies, else PRIOR."""
    family = FAMILY[param]
    vals: list[np.ndarray] = []
    for hw in catalog.ids("hardware"):
        fits = catalog.hardware(hw).kernel_fits
        if fits is None:
            continue
        for variant, curve in fits.families.get(family, {}).get(engine, {}).items():
            if curve.status == "fitted" and _production(variant, family):
                vals.append(effective(family, curve.params))
    if not vals:
        return PRIOR
    v = np.concatenate(vals)
    lo, hi = np.quantile(v, [BAND_Q, 1 - BAND_Q])
    return float(max(lo, 0.01)), float(min(hi, 1.0))


def gemm_plateau(p: dict) -> np.ndarray:
    """Large-M plateau efficiencies of one GEMM curve (params ``p``) over GEMM_K:  eff_c k / (k + k_half)."""
    k = np.asarray(GEMM_K, dtype=float)
    return p["eff_c"] * k / (k + p["k_half"])


@cache
def gemm_band(param: str, engine: str) -> tuple[float, float]:
    """(low, high) search range of ``param`` (eff_gemm or eff_gemm_fp4) for ``engine`` (mechanism
    ``gemm_kernel_band``): quantiles of the plateaus of its production GEMM curves on every GPU, 4-bit curves for
    eff_gemm_fp4, the others for eff_gemm; PRIOR without such a curve."""
    return gemm_band_of([catalog.hardware(hw).kernel_fits for hw in catalog.ids("hardware")], param, engine)


def gemm_band_of(fits_list, param: str, engine: str) -> tuple[float, float]:
    """``gemm_band`` over the kernel fits ``fits_list`` (one per GPU, None where a GPU has none)."""
    from ..engine.kernel_bind import gemm_production
    fp4 = param == "eff_gemm_fp4"
    vals: list[np.ndarray] = []
    for fits in fits_list:
        if fits is None:
            continue
        for variant, curve in fits.families.get("gemm", {}).get(engine, {}).items():
            if (curve.status == "fitted" and gemm_production(variant, curve.params)
                    and variant.endswith("/nvfp4") == fp4):
                vals.append(gemm_plateau(curve.params))
    if not vals:
        return PRIOR
    lo, hi = np.quantile(np.concatenate(vals), [BAND_Q, 1 - BAND_Q])
    return float(max(lo, 0.01)), float(min(hi, 1.0))


def gemm_bands(engine: str) -> dict[str, tuple[float, float]]:
    """Search ranges of eff_gemm and eff_gemm_fp4 for ``engine`` (mechanism ``gemm_kernel_band``)."""
    return {p: gemm_band(p, engine) for p in GEMM_PARAMS}


def bands(engine: str) -> dict[str, tuple[float, float]]:
    """Search ranges of every attention efficiency for ``engine``."""
    return {p: band(p, engine) for p in FAMILY}
