"""Hand check (issue 4): DeepSeek-V4.1-Flash on GB300 NVL72, vLLM-like profile, TP4, DSpark 5 drafts at
acceptance length 3.51, agentic workload (agentx) at concurrency 1.

TPOT is worked out below in plain Python, term by term from the equations' documented terms
(perfmodel/equations/step.py, attention.py, ffn.py), with the architecture counts from perfmodel.arch and the
hardware numbers from the catalog. It asserts the engine (sympy -> lambdify -> serving layer) agrees. It
asserts no published number.
"""

import math

import pytest
import yaml

from perfmodel import api, catalog
from perfmodel.arch.kv import dsv4_entry_bytes, indexer_key_bytes
from perfmodel.arch.params import attention_params, expert_params, ffn_params
from perfmodel.specs.deployment import Scenario
from perfmodel.specs.profile import ProfileSpec

VLLM_LIKE = {  # a fixed vLLM-like profile, so recalibration of profiles/vllm.yaml cannot move this check; its
    # engine (none) has no kernel fits in the hardware catalog (perfmodel kernels), so neither can a kernel refit: the
    # profile's kernel_overhead and collective latency apply as written below
    "id": "vllm-like", "name": "vLLM-like (test)", "engine": "none",
    **{k: {"value": v, "low": v, "high": v} for k, v in dict(
        eff_weights=0.8, eff_kv=0.7, eff_gemm=0.6, eff_attention=0.4, eff_link=0.7, overlap=0.5,
        collective_latency_us=10.0, layer_floor_us=20.0, kernel_overhead_us=5.0, step_overhead_ms=2.0,
        moe_imbalance=1.3, workspace_gb=8.0, mem_fraction=0.9).items()},
}


def test_v41_flash_gb300_tp4_dspark_tpot_by_hand(tmp_path):
    ProfileSpec.model_validate(VLLM_LIKE)
    prof_file = tmp_path / "vllm-like.yaml"
    prof_file.write_text(yaml.safe_dump(VLLM_LIKE))
    m = catalog.model("deepseek-v4.1-flash")
    hw = catalog.hardware("gb300-nvl72")
    sc = Scenario.model_validate(dict(
        hardware="gb300-nvl72", model="deepseek-v4.1-flash", profile=str(prof_file), workload="agentx",
        deployment=dict(gpus=4, tp=4, ep=1, weights="nvfp4", kv_cache="fp8", spec_tokens=5, acceptance_length=3.51,
                        concurrency=1)))
    row = api.predict(sc).iloc[0]

    # ---------------------------------------------------------------- by hand
    BW = hw.value("hbm_bandwidth_tbps") * 1e12
    F4, F8, F16 = (hw.value(f) * 1e15 for f in ("fp4_dense_pflops", "fp8_dense_pflops", "bf16_dense_pflops"))
    LINK, LAT = hw.value("scaleup_bandwidth_gbps") * 1e9, hw.value("scaleup_latency_us") * 1e-6
    HOST = min(hw.value("host_link_bandwidth_gbps"), hw.value("host_memory_bandwidth_gbps")) * 1e9
    e_w, e_kv, e_mm, e_at, e_ln, ovl = 0.8, 0.7, 0.6, 0.4, 0.7, 0.5
    t_coll, t_floor, t_kern, t_step, imb = 10e-6, 20e-6, 5e-6, 2e-3, 1.3
    tp, h, V = 4, m.hidden_size, m.vocab_size
    b_x, b_a, b_e, b_act = 0.5 + 1 / 16, 1.0, 2.0, 2.0     # nvfp4 experts, fp8 attention (MoE + 4-bit), bf16 head

    w = api.workload_lengths("agentx")
    isl, osl, new = w["isl"], w["osl"], w["new"]
    assert row["batch"] == pytest.approx(1.0, abs=1e-6)       # one live session generates alone
    B, q, acc = 1.0, 6.0, 3.51
    L = isl + osl / 2                                       # mean decode context
    n_pf = (B - 1) * acc * new / osl    # the other requests' chunked prefill mixed into each step
    L_pf = isl - new / 2

    def entries(a, ctx):                                    # dsv4 entries attended per query
        if not a.compress_ratio:
            return min(ctx, a.window)
        if a.indexer is not None:
            return min(a.indexer.top_k, ctx / a.compress_ratio) + a.window
        return ctx / a.compress_ratio + a.window

    def layer(a_name, f_name, dec_tokens, pf_tokens):
        a, f = m.attention[a_name], m.ffn[f_name]
        T = dec_tokens + pf_tokens                          # dp = 1: every token on every GPU
        own_ix = a.indexer is not None and not a.indexer.shared
        E = dsv4_entry_bytes(a, "fp8")
        I = indexer_key_bytes(a.indexer.head_dim, "fp8") if own_ix else 0.0
        kern = []
        pa = attention_params(a, h)
        kern.append((2 * pa * T / tp / (F8 * e_mm), pa * b_a / tp / (BW * e_w)))
        core = 4 * a.heads * a.head_dim * (dec_tokens * entries(a, L) + pf_tokens * entries(a, L_pf))
        ix = 2 * a.indexer.heads * a.indexer.head_dim / a.compress_ratio * (dec_tokens * L + pf_tokens * L_pf) \
            if own_ix else 0.0
        kv_read = entries(a, L) * E + (L / a.compress_ratio * I if own_ix else 0.0)
        kv_bytes = B * kv_read + T * (E + I)                # dsv4 KV is replicated over TP (one KV head)
        kern.append((core / tp / (F16 * e_at) + ix / tp / (F8 * e_at), kv_bytes / (BW * e_kv)))
        total, _ = ffn_params(f, h)
        pe = expert_params(f, h)
        dense = total - f.experts * pe                      # shared expert + router
        kern.append((2 * dense * T / tp / (F4 * e_mm), dense * b_x / tp / (BW * e_w)))
        distinct = f.experts * (1 - (1 - f.top_k / f.experts) ** T)
        kern.append((2 * pe * T * f.top_k * imb / (1 * tp) / (F4 * e_mm), distinct * pe * b_x / tp / (BW * e_w)))
        kern.append((0.0, 3 * 4 * h * b_act * T / (BW * e_w)))   # mHC: 3 extra residual streams
        k_t = sum(max(c, mm) for c, mm in kern)
        # kernels launched: dsv4 attention 8 (+1 compressor, +3 own indexer), MoE 7 (+3 shared expert),
        # 2 norms, 2 mHC mixing
        n_kern = (8 + (1 if a.compress_ratio else 0) + (3 if own_ix else 0) + 7 + (3 if f.shared_experts else 0)
                  + 2 + 2)
        link = 2 * (2 * (tp - 1) / tp * T * h * b_act) / (LINK * e_ln)   # two all-reduces, inside the domain
        # all-reduce latency: the fastest of one-shot (2 hops + its extra bytes), two-shot (3 hops; the custom
        # kernels serve tp <= 8), NCCL ring LL (6.6 us + 0.6 us per step) and NVLS (23 us)
        m_ar = T * h * b_act
        ar_lat = min(2 * LAT + (tp - 1) * (1 - 2 / tp) * m_ar / (LINK * e_ln), 3 * LAT,
                     6.6e-6 + 2 * (tp - 1) * 0.6e-6, 23e-6)
        return (k_t + max(0.0, t_floor - k_t) + link - ovl * min(link, k_t)
                + 2 * (ar_lat + t_coll) + t_kern * n_kern), k_t

    def lm_head(tokens):
        p = V * h
        return max(2 * p * tokens / tp / (F8 * e_mm), p * b_e / tp / (BW * e_w))

    main_t, main_kern = 0.0, 0.0
    for g in m.layers:
        t, k_t = layer(g.attention, g.ffn, B * q, n_pf)
        main_t += g.count * t
        main_kern += g.count * k_t
    head = lm_head(B * q)
    main_kern += head
    block = m.mtp.draft_block
    passes = math.ceil((q - 1) / block)
    d_tokens = B * min(q - 1, block)
    draft = passes * (m.mtp.layers * layer(m.mtp.attention, m.mtp.ffn, d_tokens, 0.0)[0] + lm_head(d_tokens))
    e = m.engram
    host = (B * q + n_pf) * e.layers * e.lookups_per_token * e.row_dim * b_act / (HOST * e_ln)
    tpot = main_t + head + draft + t_step + host - ovl * min(host, main_kern)

    step = tpot   # one decode step; TPOT per output token is the step over the accepted tokens
    assert row["step_ms"] == pytest.approx(step * 1e3, rel=1e-9)
    assert row["tpot_ms"] == pytest.approx(step / acc * 1e3, rel=1e-9)
    assert row["tps_per_user"] == pytest.approx(acc / step, rel=1e-9)
    assert row["tps_per_user"] == pytest.approx(1000 / row["tpot_ms"], rel=1e-12)
    assert row["t_draft_ms"] == pytest.approx(draft * 1e3, rel=1e-9)
