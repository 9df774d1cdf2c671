"""Hand-worked checks of the serving equations a plan's SLO and capacity rest on, where only pinned outputs guarded
them (issue 57 item 7): the TPOT P99 tail, the mixed-prefill term of the decode step, the P/D KV-transfer time,
the Poisson (open-loop) reading behind the SLO.
Each case has an answer worked on paper in its docstring."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfmodel.analyses.systems import as_model, as_system


def test_tpot_p99_tail_by_hand():
    """A request of osl = 1,024 tokens at acc = 1 takes n = 1,024 decode steps; each carries a prefill chunk with
    probability w = 1/16, taking 30 ms instead of 10 ms. Mean TPOT = 10 + 20/16 = 11.25 ms;
    sd = 20 sqrt((1/16)(15/16) / 1024) = 0.151293 ms; P99 = 11.25 + 2.326348 x 0.151293 = 11.601959 ms."""
    from perfmodel.serving.queueing import tpot_quantile
    got = tpot_quantile(11.25e-3, 10e-3, 30e-3, 1 / 16, 1024.0, 1.0, 0.99)
    assert float(got) * 1e3 == pytest.approx(11.601959, rel=1e-6)
    # no prefill mixed in (w = 0, a decode pool): every percentile is the mean
    assert float(tpot_quantile(11.25e-3, 10e-3, 30e-3, 0.0, 1024.0, 1.0, 0.99)) == pytest.approx(11.25e-3)


def test_the_mixed_prefill_term_of_the_decode_step_by_hand():
    """Chunked prefill (serving/aggregated.chunk_mixture): B = 65 running, each request brings new = 1,024 prompt
    tokens per osl = 1,024 output tokens at acc = 1, so the steps carry n_pf = (B - 1) acc new / osl = 64 prefill
    tokens each on average. One rank (TP8 on 8 GPUs), chunk budget 8,192: they arrive as whole chunks of
    k = min(new, N_ch) = 1,024 tokens in a share w = 64 / 1,024 = 1/16 of the steps; the chunk-step point carries
    mix = k / n_pf(mix = 1) = 1,024 / 64 = 16 times the mean demand."""
    from perfmodel.serving.aggregated import chunk_mixture
    p = {k: np.array([v]) for k, v in dict(batch=65.0, acc=1.0, new=1024.0, osl=1024.0, mix=1.0, gpus=8.0, tp=8.0,
                                           pp=1.0).items()}
    demand, w, chunk = chunk_mixture(p, {"N_ch": 8192.0})
    assert float(w[0]) == pytest.approx(1 / 16) and float(demand[0]) == pytest.approx(1.0)
    assert float(chunk["mix"][0]) == pytest.approx(16.0)
    # a budget smaller than the demand caps it: N_ch = 32 tokens a step -> n_cap = 32, demand over cap = 2, w = 1
    demand, w, chunk = chunk_mixture(p, {"N_ch": 32.0})
    assert float(demand[0]) == pytest.approx(2.0) and float(w[0]) == pytest.approx(1.0)


def test_the_pd_kv_transfer_time_by_hand():
    """Llama-3.3-70B keeps K and V of 8 KV heads x 128 dims in 80 layers: 2 x 80 x 8 x 128 = 163,840 values a
    token, one byte each in FP8, so a 1,024-token context is 167,772,160 bytes. Sent from a 2-GPU prefill instance
    inside one NVL72 domain over the scale-up link at efficiency e_ln: t = bytes / (2 BW_link e_ln); beyond the
    domain over the NIC."""
    from perfmodel.serving.disaggregated import _pool_transfer, request_kv_bytes
    setup = as_system("gb200-nvl72:dynamo-trtllm").setup(as_model("llama-3.3-70b"), weights="fp8", kv_cache="fp8")
    vals = setup.symbol_values()
    assert float(request_kv_bytes(setup, 1024)) == 2 * 80 * 8 * 128 * 1024
    p = {"isl": np.array([1024.0])}
    inside = float(_pool_transfer(setup, p, vals, 2.0, 24.0)[0])
    assert inside == pytest.approx(167_772_160 / (2 * float(vals["BW_link"]) * float(vals["e_ln"])))
    beyond = float(_pool_transfer(setup, p, vals, 2.0, 100.0)[0])   # 100 GPUs > the 72-GPU domain
    assert beyond == pytest.approx(167_772_160 / (2 * float(vals["BW_nic"]) * float(vals["e_ln"])))
    assert beyond > inside and math.isfinite(beyond)


def test_the_poisson_reading_behind_the_plans_slo_by_hand():
    """An aggregated point offered lambda = 2 requests/s (serving/queueing.open_loop, the reading search/served.poisson
    gives every aggregated fixed-length point a plan's SLO judges) with one prefill server (c = 1) of t_s = 0.25 s:
    rho = lambda t_s / c = 0.5. M/D/1 (Pollaczek-Khinchine): E[W] = rho t_s / (2 (1 - rho)) = 0.125 s; the tail
    P(W > w) = rho exp(-rho w / E[W]) gives W_q = (E[W] / rho) max(0, ln(rho / (1 - q))): W_50 = 0.25 ln 1 = 0,
    W_90 = 0.25 ln 5 = 0.40236 s, W_99 = 0.25 ln 50 = 0.97800 s. With t_req = 0.1 s, the residual of the step in
    progress q t_st (t_st = 0.02 s) and the own prefill T_own = 0.05 s:
        TTFT_50 = 0.1 + 0.010 + 0       + 0.05 = 0.16000 s
        TTFT_90 = 0.1 + 0.018 + 0.40236 + 0.05 = 0.57036 s
        TTFT_99 = 0.1 + 0.0198 + 0.97800 + 0.05 = 1.14780 s
        E[TTFT] = 0.1 + 0.010 + 0.125   + 0.05 = 0.28500 s
    A doubled rate (rho = 1) has no steady state: TTFT is infinite, and the plan drops the point."""
    from perfmodel.serving.queueing import open_loop
    got = open_loop(np.array([2.0, 4.0]), 0.1, 0.02, 0.05, 0.25, 1.0)
    assert got["rho"][0] == pytest.approx(0.5)
    assert got["ttft_p50_s"][0] == pytest.approx(0.16, rel=1e-9)
    assert got["ttft_p90_s"][0] == pytest.approx(0.1 + 0.9 * 0.02 + 0.25 * math.log(5) + 0.05, rel=1e-9)
    assert got["ttft_p99_s"][0] == pytest.approx(0.1 + 0.99 * 0.02 + 0.25 * math.log(50) + 0.05, rel=1e-9)
    assert got["ttft_mean_s"][0] == pytest.approx(0.285, rel=1e-9)
    assert got["prefill_queue_s"][0] == pytest.approx(0.125, rel=1e-9)
    assert np.isinf(got["ttft_p99_s"][1]) and got["rho"][1] == pytest.approx(1.0)
