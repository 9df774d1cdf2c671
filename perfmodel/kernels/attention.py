"""Decode attention family (GQA/MHA, ``generation_attention``) and prefill attention (``context_attention``).

Decode, B sequences of context s (the table's isl + step; s = min(s, window) for sliding-window layers),
H query and H_kv KV heads of size d, KV stored at s_kv bytes per element:
    bytes = 2 B s H_kv d s_kv + 4 B H d          flops = 4 B H_kv max(H / H_kv, 16) s d (MMA rows padded)
    t = t0 + tau B H + tau_seq B + ( c^q + b^q )^(1/q),
    c = (flops / (F_bf16 e_c) + t_score B H s + t_kv r 2 B s H_kv d) / P,
    b = (bytes + (r - 1) kv_bytes) / (W e_b P),   P = x / (x + x_half),   x = r B H_kv (s / 1024)^a_s
    r = 1 + rho (H / H_kv - 1)   (KV reads per KV head: rho = 0 packs a KV head's query heads in one pass,
                                  rho = 1 reads the KV once per query head, as MHA-style kernels do)
x is the work the kernel can spread over the SMs (batch x KV heads, and the context split of flash decoding);
P the share of the GPU it keeps busy, x_half the work at which it is half; tau the fixed cost of one (sequence, query head) work unit
(reduction of the context splits and output), tau_seq that of one sequence, t_score the GPU-wide time per attention score (the softmax
exponent and scaling run outside the tensor cores), t_kv the time per KV element read (an FP8 cache is
converted on the CUDA cores). Prefill (causal, new tokens = isl):
    flops = 2 B H isl^2 d (causal half of 4 B H isl^2 d),  bytes as decode with s = isl,
    t = t0 + tau B H + tau_seq B + ( c^q + b^q )^(1/q),
    c = flops / (F e_c (d / 128)^a_d  y / (y + y_half)),  y = B H isl (query rows of the launch),
    b = bytes / (W e_b).
Shape groups held out: the head configuration (H, H_kv, d, window).
"""

from __future__ import annotations

import numpy as np

from .fitting import Param
from .gpu import bytes_per_element

QUERY_TILE = 16
"""Decode kernels put the query heads of one KV head in the MMA rows, padded to 16: issued FLOPs use
max(H / H_kv, 16) rows per KV head."""

FAMILY = "attention"
TABLES = ("generation_attention", "context_attention")
COLUMNS = ["kernel_source", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "attn_dtype",
           "kv_cache_dtype", "window_size", "step", "latency"]
GROUP = ["num_heads", "num_key_value_heads", "head_dim", "window_size"]


def family_of(table: str) -> str:
    return "attention" if table == "generation_attention" else "prefill_attention"


PARAMS = [
    Param("eff_c", 0.3, 0.01, 1.0, doc="share of the BF16 tensor peak"),
    Param("eff_b", 0.7, 0.02, 1.0, doc="plateau share of HBM bandwidth reading the KV cache"),
    Param("x_half", 64, 0.01, 1e6, unit="batch x KV heads", doc="parallel work at half bandwidth efficiency"),
    Param("a_s", 0.5, 0.0, 1.0, log=False, doc="exponent of the context split in the parallel work"),
    Param("tau_ns", 5, 0.001, 1e4, unit="ns", doc="cost per (sequence, query head) work unit"),
    Param("seq_ns", 5, 0.001, 1e4, unit="ns", doc="cost per sequence (page table, split bookkeeping)"),
    Param("score_ps", 1, 1e-4, 1e4, unit="ps", doc="time per attention score (softmax exponent, scaling), GPU-wide"),
    Param("kv_ps", 0.01, 1e-5, 100, unit="ps", doc="time per KV element read (dequantization / conversion on the "
          "CUDA cores, GPU-wide)"),
    Param("reread", 0.05, 0.0, 1.0, log=False, doc="share of the KV re-read for each extra query head of a KV head"),
    Param("sharp", 3, 1, 20, doc="roofline corner sharpness q"),
    Param("t0_us", 5, 0.1, 200, unit="us", doc="launch latency"),
]
PREFILL_PARAMS = [
    Param("eff_c", 0.4, 0.01, 1.0, doc="plateau share of the BF16 (FP8 for an FP8 kernel) tensor peak at d = 128"),
    Param("y_half", 1e4, 1, 1e8, unit="query rows x heads", doc="rows at half compute efficiency"),
    Param("a_d", 0.0, -1.0, 1.0, log=False, doc="head-size exponent of the efficiency: e_c (d / 128)^a_d"),
    Param("tau_ns", 5, 0.001, 1e4, unit="ns", doc="cost per (sequence, query head) work unit"),
    Param("seq_ns", 50, 0.001, 1e5, unit="ns", doc="cost per sequence"),
    Param("eff_b", 0.5, 0.02, 1.0, doc="share of HBM bandwidth"),
    Param("sharp", 3, 1, 20, doc="roofline corner sharpness q"),
    Param("t0_us", 10, 0.1, 500, unit="us", doc="launch latency"),
]


def params_for(variant: str):
    return PREFILL_PARAMS if variant.startswith("prefill:") else PARAMS


def decode_features(b, isl, h, hkv, d, window, kv_dtype: str, pk, step=0.0) -> dict:
    """Decode shape features; the kernels tile head sizes in powers of two (d_pad = 2^ceil(log2 d): 192 runs
    as 256), so the work per head uses d_pad while the KV bytes read use d."""
    b, isl, h, hkv, d, window = (np.asarray(x, dtype=float) for x in (b, isl, h, hkv, d, window))
    isl = isl + np.asarray(step, dtype=float)
    s = np.where(window > 0, np.minimum(isl, np.maximum(window, 1)), isl)
    d_pad = 2.0 ** np.ceil(np.log2(d))
    kv_bytes = 2 * b * s * hkv * d * bytes_per_element(kv_dtype)
    return dict(prefill=False, flops=4 * b * hkv * np.maximum(h / hkv, QUERY_TILE) * s * d_pad,
                f_peak=pk.bf16_flops, bw=pk.hbm_bw, bytes=kv_bytes + 4 * b * h * d, work=b * hkv,
                units=b * h * d_pad / 128, scores=b * h * s, seqs=b, group=h / hkv, kv_elems=2 * b * s * hkv * d_pad,
                kv_bytes=kv_bytes, ctx=s / 1024)


def prefill_features(b, isl, h, hkv, d, window, kv_dtype: str, pk, attn_dtype: str) -> dict:
    b, isl, h, hkv, d, window = (np.asarray(x, dtype=float) for x in (b, isl, h, hkv, d, window))
    s = np.where(window > 0, np.minimum(isl, np.maximum(window, 1)), isl)
    return dict(prefill=True, flops=4 * b * h * isl * (s - s * s / (2 * isl) + 0.5) * d, f_peak=pk.flops(attn_dtype),
                bw=pk.hbm_bw, bytes=2 * b * isl * hkv * d * bytes_per_element(kv_dtype) + 4 * b * isl * h * d,
                rows=b * h * isl, d=d / 128, units=b * h, seqs=b)


def latency_ms(p: dict, f: dict) -> np.ndarray:
    """The closed forms above, in ms."""
    q = p["sharp"]
    if f["prefill"]:
        eff = p["eff_c"] * f["d"] ** p["a_d"] * f["rows"] / (f["rows"] + p["y_half"])
        c = f["flops"] / (f["f_peak"] * eff)
        b = f["bytes"] / (f["bw"] * p["eff_b"])
        return ((c ** q + b ** q) ** (1 / q) * 1e3 + p["t0_us"] * 1e-3 + p["tau_ns"] * 1e-6 * f["units"]
                + p["seq_ns"] * 1e-6 * f["seqs"])
    else:
        heads = 1 + p.get("reread", 0.0) * (f["group"] - 1)       # KV reads per KV head
        x = f["work"] * heads * f["ctx"] ** p["a_s"]
        par = x / (x + p["x_half"])
        c = (f["flops"] / (f["f_peak"] * p["eff_c"]) + f["scores"] * p["score_ps"] * 1e-12
             + f["kv_elems"] * heads * p.get("kv_ps", 0.0) * 1e-12) / par
        b = (f["bytes"] - f["kv_bytes"] + f["kv_bytes"] * heads) / (f["bw"] * p["eff_b"] * par)
        return ((c ** q + b ** q) ** (1 / q) * 1e3 + p["t0_us"] * 1e-3 + p["tau_ns"] * 1e-6 * f["units"]
                + p["seq_ns"] * 1e-6 * f["seqs"])
    return (c ** q + b ** q) ** (1 / q) * 1e3 + p["t0_us"] * 1e-3


def variants(df, pk):
    for (engine, ks, ad, kd), g in df.groupby(["engine", "kernel_source", "attn_dtype", "kv_cache_dtype"],
                                              observed=True):
        args = (g["batch_size"].to_numpy(), g["isl"].to_numpy(), g["num_heads"].to_numpy(),
                g["num_key_value_heads"].to_numpy(), g["head_dim"].to_numpy(), g["window_size"].to_numpy(),
                str(kd), pk)
        if df.attrs.get("table") == "context_attention":
            f, name = prefill_features(*args, str(ad)), f"prefill:{ks}/{ad}/{kd}"
        else:
            f, name = decode_features(*args, step=g["step"].to_numpy()), f"{ks}/{ad}/{kd}"
        yield str(engine), name, f, g["latency"].to_numpy(), g[GROUP], f["bytes"]
