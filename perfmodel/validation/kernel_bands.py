"""Search ranges of the attention efficiencies from the measured kernel tables (issue 41 item 1): the hardware
layer bounds what the serving fit may move.

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


def bands(engine: str) -> dict[str, tuple[float, float]]:
    """Search ranges of every attention efficiency for ``engine``."""
    return {p: band(p, engine) for p in FAMILY}
