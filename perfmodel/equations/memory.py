"""HBM use per GPU and the batch that fits.

    weights  W = sum_groups n/pp (P_A b_a/tp + P_d b_x/tp + E P_e b_x/(ep moe_tp)) + (1 + untied) V h b_e / tp
                 + MTP module weights (same sharding, held once)
    KV/seq   K = sum_groups n/pp kv_stored_A(L_max) / shard_A;  in HBM (1 - f_cold) K, in the host tier f_cold K
    used     = W + C_ws + (B/dp) K
    KV budget per GPU (the engine's memory-fraction knob):
        q_free = 0 (vLLM gpu_memory_utilization, SGLang mem_fraction_static: a fraction of all HBM)
                   f_mem C_hbm - C_ws - W
        q_free = 1 (TensorRT-LLM free_gpu_memory_fraction: a fraction of what weights and workspace leave)
                   f_mem (C_hbm - C_ws - W)
        i.e. f_mem C_hbm - C_ws - W + q_free (1 - f_mem)(C_ws + W)
    KV held per running sequence: q_res = 1 (TensorRT-LLM GUARANTEED_NO_EVICT: blocks for the whole isl + osl
    are reserved on admission) K(L_max); q_res = 0 (paged allocation as tokens are written, preemption when
    full: vLLM, SGLang) K(L_max - osl/2), the mean over a request's decode
    B_kv     = dp budget / K_held                 the sequences whose KV fits
    B_max    = min(B_kv, dp N_run)                 and at most N_run per scheduler (attention-DP rank)
"""

from __future__ import annotations

import sympy as sp

from .roofline import smin
from .step import StepBuilder
from .symbols import S


def _block_weights(b: StepBuilder, attn: str, ffn: str):
    s, F = S, b.ffn[ffn]
    w = b.attn_params[attn] * s["b_a"] / s["tp"] + F.dense_params * s["b_x"] / s["tp"]
    if F.is_moe:
        w += F.experts * F.expert_params * s["b_x"] / (s["ep"] * b.moe_tp)
    return w


def memory(b: StepBuilder) -> dict[str, sp.Expr]:
    s, m = S, b.m
    pp = s["pp"]
    w = sum(g.count / pp * _block_weights(b, g.attention, g.ffn) for g in m.layers)
    w += (1 if m.tie_embeddings else 2) * m.vocab_size * m.hidden_size * s["b_e"] / s["tp"]
    if m.mtp:
        w += m.mtp.layers * (_block_weights(b, m.mtp.attention, m.mtp.ffn) + 2 * m.hidden_size ** 2 * s["b_a"] / s["tp"])
    held = s["L_max"] - (1 - s["q_res"]) * s["osl"] / 2
    kv = sum(g.count / pp * b.attn[g.attention].stored_per_rank(held, s["tp"]) for g in m.layers)
    budget = s["f_mem"] * s["C_hbm"] - s["C_ws"] - w + s["q_free"] * (1 - s["f_mem"]) * (s["C_ws"] + w)
    hot = (1 - s["f_cold"]) * kv          # the rest of each sequence's KV lives in the host tier
    return {
        "weights_bytes_per_gpu": w,
        "kv_bytes_per_seq_per_gpu": hot,
        "host_kv_bytes_per_gpu": s["B"] / b.dp * s["f_cold"] * kv,
        "mem_bytes_per_gpu": w + s["C_ws"] + s["B"] / b.dp * hot,
        "kv_max_batch": b.dp * budget / hot,
        "max_batch": smin(b.dp * budget / hot, b.dp * s["N_run"]),
    }
