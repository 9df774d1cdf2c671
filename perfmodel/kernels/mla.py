"""MLA decode attention family (DeepSeek style, ``generation_mla``), per (engine, kernel, KV format).

B sequences of context s (the table's isl + step), H query heads per rank (the table's num_heads), a latent KV
of 512 + 64 (RoPE) elements per token shared by all heads, stored at s_kv bytes:
    bytes = 576 B s s_kv + 4 B H 576            flops = 2 B H_pad s (576 + 512),  H_pad = 64 ceil(H / 64)
(the kernels process heads in 64-row tiles, so fewer heads cost as many MMA rows) and the curve is the
decode-attention form of ``kernels/attention.py``:
    t = t0 + tau B H + tau_seq B + ( c^q + b^q )^(1/q),  c = (flops / (F_bf16 e_c) + t_score B H s
        + t_kv 576 B s) / P,
    b = bytes / (W e_b P),  P = x / (x + x_half),  x = B (s / 1024)^a_s
Shape groups held out: (H, tp, B), each a whole sweep over the context (the kernels pad heads, so head
configurations alone are too few to hold out).
"""

from __future__ import annotations

import numpy as np

from . import attention
from .gpu import bytes_per_element

FAMILY = "mla"
TABLES = ("generation_mla",)
COLUMNS = ["kernel_source", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step",
           "latency"]
GROUP = ["num_heads", "tp_size", "batch_size"]
PARAMS = [p for p in attention.PARAMS if p.name != "reread"]   # the latent KV is shared by all heads
latency_ms = attention.latency_ms

KV_LATENT, V_HEAD = 576, 512
HEAD_TILE = 64


def features(b, isl, step, h, kv_dtype: str, pk) -> dict:
    b, s, h = (np.asarray(x, dtype=float) for x in (b, np.asarray(isl, float) + np.asarray(step, float), h))
    h_pad = HEAD_TILE * np.ceil(h / HEAD_TILE)
    return dict(prefill=False, flops=2 * b * h_pad * s * (KV_LATENT + V_HEAD), f_peak=pk.bf16_flops, bw=pk.hbm_bw,
                bytes=KV_LATENT * b * s * bytes_per_element(kv_dtype) + 4 * b * h * KV_LATENT, work=b, units=b * h, scores=b * h * s, seqs=b, kv_elems=KV_LATENT * b * s, group=np.ones_like(h), kv_bytes=0.0 * b,
                ctx=s / 1024)


def variants(df, pk):
    for (engine, ks, md, kd), g in df.groupby(["engine", "kernel_source", "mla_dtype", "kv_cache_dtype"],
                                              observed=True):
        f = features(g["batch_size"].to_numpy(), g["isl"].to_numpy(), g["step"].to_numpy(),
                     g["num_heads"].to_numpy(), str(kd), pk)
        yield str(engine), f"{ks}/{md}/{kd}", f, g["latency"].to_numpy(), g[GROUP], f["bytes"]
