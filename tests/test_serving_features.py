"""Serving features: speculative decoding, disaggregation, KV host tier, agentic sessions."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup
from perfmodel.serving.aggregated import evaluate
from perfmodel.serving.disaggregated import disaggregated
from perfmodel.serving.sessions import agentic


def _setup(model="deepseek-v3", hw="gb200-nvl72", profile="vllm", weights="fp8"):
    return Setup(catalog.hardware(hw), catalog.model(model), catalog.profile(profile), weights=weights, kv_cache="fp8")


PTS = dict(batch=np.array([1.0, 16, 128]), gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1.0, isl=4096, osl=512,
           new=4096, mix=1.0)


def test_acceptance_length_one_is_no_spec_minus_draft_cost():
    s = _setup()
    base = evaluate(s, PTS)
    spec = evaluate(s, {**PTS, "spec_tokens": 3, "acc": 1.0})
    assert np.all(spec["tps_per_user"] < base["tps_per_user"])
    assert np.all(spec["t_draft_ms"] > 0) and np.all(base["t_draft_ms"] == 0)


def test_spec_benefit_shrinks_with_batch():
    s = _setup()
    base = evaluate(s, {**PTS, "batch": np.array([1.0, 2048])})
    spec = evaluate(s, {**PTS, "batch": np.array([1.0, 2048]), "spec_tokens": 3, "acc": 2.5})
    gain = spec["output_tps_per_gpu"].to_numpy() / base["output_tps_per_gpu"].to_numpy()
    assert gain[0] > 1.5 and gain[1] < gain[0]


def test_disaggregated_with_huge_link_matches_pool_rooflines():
    s = _setup()
    s.hw_overrides = {"scaleup_bandwidth_gbps": 50000, "nic_bandwidth_gbps": 2000}
    d = disaggregated(s, {**PTS, "mix": 0.0}, dict(gpus=8, tp=8, ep=8), instances=1, pf_instances=100)
    dec = evaluate(s, {**PTS, "mix": 0.0})
    # prefill pool is large: decode-limited. A decode slot is held for S = prefill + KV transfer + osl TPOT
    # and a client's cycle is T = E[TTFT] + osl TPOT: X = 1 / T + (B - 1) / S (queueing.closed_loop), a
    # little below the decode pool's rate B / (osl TPOT), over all GPUs of both pools; Little: C = X T
    slot_s = (d["prefill_ms"] + d["kv_transfer_ms"] + PTS["osl"] * d["tpot_ms"]) / 1e3
    cycle_s = (d["ttft_mean_ms"] + PTS["osl"] * d["tpot_ms"]) / 1e3
    x = d["request_rate_per_s"]
    np.testing.assert_allclose(x, 1 / cycle_s + (PTS["batch"] - 1) / slot_s, rtol=1e-9)
    np.testing.assert_allclose(x * cycle_s, d["concurrency"], rtol=1e-9)
    assert np.all(d["output_tps_per_gpu"] * (800 + 8) / 8 < dec["output_tps_per_gpu"])
    assert np.all(d["prefill_utilization"] < 0.2)
    assert np.all(d["kv_transfer_ms"] < 0.5)
    # one small prefill instance feeding 100 decode instances: prefill-limited, so the system rate is the
    # prefill pool's roofline (tokens per step / prefill step time), over all GPUs of both pools
    from perfmodel.engine.compiled import compiled
    from perfmodel.engine.evaluate import PREFILL_TOKENS_PER_GPU, point_arrays, prefill_inputs
    d2 = disaggregated(s, {**PTS, "mix": 0.0}, dict(gpus=8, tp=8, ep=8), instances=100, pf_instances=1)
    tok = PREFILL_TOKENS_PER_GPU * 8
    step = compiled(s.model).prefill(prefill_inputs(point_arrays({**PTS, "mix": 0.0}), s.symbol_values(),
                                                    tokens=tok))["prefill_s"]
    req_rate = tok / PTS["new"] / np.asarray(step)
    limited = (d2["bound"] == "prefill_pool").to_numpy()
    assert limited.sum() >= 2                      # batch 16 and 128 (at batch 1 the decode pool is slower)
    np.testing.assert_allclose(d2["output_tps_per_gpu"][limited], (req_rate * PTS["osl"] / (800 + 8))[limited],
                               rtol=1e-9)


def test_host_tier_never_lowers_capacity_and_absorbs_paused_sessions():
    s = _setup("llama-3.1-70b", "gb200-nvl72", "vllm")
    pts = dict(batch=np.array([8.0, 32]), gpus=4, tp=4, ep=1, pp=1, spec_tokens=0, acc=1.0, isl=60000, osl=300,
               new=1800, mix=1.0)
    off = agentic(s, pts, pause_s=30.0, host_tier=False)
    on = agentic(s, pts, pause_s=30.0, host_tier=True)
    assert np.all(on["evicted_share"] <= off["evicted_share"] + 1e-12)
    assert np.all(on["kv_in_hbm_share"] + on["kv_in_host_share"] >= off["kv_in_hbm_share"] + off["kv_in_host_share"] - 1e-12)


def test_agentic_one_turn_zero_hit_equals_fixed():
    s = _setup()
    fixed = evaluate(s, PTS)
    ag = agentic(s, PTS, pause_s=0.0, host_tier=False)
    for col in ("tpot_ms", "ttft_ms", "total_tps_per_gpu", "tps_per_user"):
        np.testing.assert_allclose(ag[col], fixed[col], rtol=1e-12)
    # no pause: the live sessions are the requests in the loop, Little's law X (mean TTFT + osl TPOT)
    # (mechanism sessions_littles_law): the running batch plus those queued for their prefill
    busy = ag["request_rate_per_s"] * (ag["ttft_mean_ms"] + PTS["osl"] * ag["tpot_ms"]) / 1e3
    np.testing.assert_allclose(ag["sessions"], np.maximum(busy, 0.0), rtol=1e-3)
    assert np.all(ag["sessions"] >= PTS["batch"] - 1e-9)


def test_e2e_percentile_from_distributions_is_below_the_median_request():
    from perfmodel.serving.sessions import agentic
    s = _setup("deepseek-v3", "gb300-nvl72")
    w = catalog.workload("agentx-trace")            # new tokens per turn has a published spread
    pts = dict(PTS, isl=60000.0, osl=600.0, new=1664.0)
    df = agentic(s, pts, pause_s=4.9, host_tier=True, dists=w.agentic, percentile=90)
    p50 = agentic(s, pts, pause_s=4.9, host_tier=True, dists=w.agentic, percentile=50)
    assert np.all(df["tps_per_user_e2e_p90"] < p50["tps_per_user_e2e_p50"])
    assert np.all(df["tps_per_user_e2e_p90"] < df["tps_per_user"])


def test_sessions_to_batch_inverts_live_sessions():
    from perfmodel.serving.sessions import agentic, sessions_to_batch
    s = _setup()
    pts = dict(PTS, batch=np.array([4.0, 40.0, 300.0]))
    live = agentic(s, pts, pause_s=5.0, host_tier=False)["sessions"].to_numpy()
    b = sessions_to_batch(s, pts, 5.0, live, host_tier=False)
    np.testing.assert_allclose(b, pts["batch"], rtol=1e-3)


def test_batch_aware_speculation_uses_fewer_drafts_at_high_batch():
    from perfmodel.serving.speculative import best_spec_tokens
    s = _setup("deepseek-v3", "gb300-nvl72")
    best = best_spec_tokens(s, dict(PTS, batch=np.array([1.0, 1024.0])), acceptance_rate=0.7)
    k = best["spec_tokens"].to_numpy()
    assert k[0] >= 3 and k[1] < k[0]


def test_predict_scenarios_reach_every_serving_feature():
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    ag = api.predict(Scenario.model_validate(dict(
        hardware="gb300-nvl72", model="deepseek-v3", profile="vllm", workload="agentx",
        deployment=dict(gpus=8, tp=8, ep=8, weights="nvfp4", concurrency=32, kv_host_tier=True)))).iloc[0]
    assert ag["sessions"] == pytest.approx(32, rel=1e-2) and "tps_per_user_e2e_p90" in ag.index
    dis = api.predict(Scenario.model_validate(dict(
        hardware="gb200-nvl72", model="deepseek-v3", profile="dynamo-trtllm", workload={"isl": 1024, "osl": 1024},
        deployment=dict(gpus=32, tp=1, ep=32, dp_attention=True, weights="nvfp4", batch=1024,
                        serving="disaggregated", decode_gpus=32, prefill=dict(gpus=4, tp=4, ep=4, instances=3))))).iloc[0]
    assert dis["prefill_gpus"] == 12 and dis["decode_gpus"] == 32 and dis["kv_transfer_ms"] > 0
    pf = api.predict(Scenario.model_validate(dict(
        hardware="h100-sxm", model="llama-3.1-8b", profile="speed-of-light", workload={"isl": 4096, "osl": 1},
        deployment=dict(gpus=1, serving="prefill_only")))).iloc[0]
    # speed of light, compute-bound prefill: close to 1.98 PF / (2 x 8B) tokens/s, less the attention term
    assert 0.6 * 1.98e15 / 16.06e9 < pf["input_tps_per_gpu"] < 1.98e15 / 16.06e9


def test_cold_kv_from_host_raises_capacity_and_costs_host_link():
    s = _setup("llama-3.1-70b", "gb200-nvl72", "speed-of-light")
    pts = dict(batch=np.array([64.0]), gpus=4, tp=4, ep=1, pp=1, spec_tokens=0, acc=1.0, isl=32768, osl=512,
               new=32768, mix=0.0)
    hot = evaluate(s, pts)
    cold = evaluate(s, {**pts, "cold": 0.5})
    assert cold["max_batch"].iloc[0] > hot["max_batch"].iloc[0]
    assert cold["t_host_link_ms"].iloc[0] > 0 and hot["t_host_link_ms"].iloc[0] == 0
    assert cold["step_bytes_kv_read_gb"].iloc[0] == pytest.approx(0.5 * hot["step_bytes_kv_read_gb"].iloc[0])
    # the C2C link is slower than HBM, so reading half the KV from the host is slower per step
    assert cold["tpot_ms"].iloc[0] > hot["tpot_ms"].iloc[0]
    assert cold["host_kv_gb_per_gpu"].iloc[0] > 0


def test_pooled_domain_hbm_holds_paused_sessions_and_reloads_over_scaleup():
    s = _setup("llama-3.1-70b", "gb200-nvl72", "vllm")
    pts = dict(batch=np.array([8.0, 32]), gpus=4, tp=4, ep=1, pp=1, spec_tokens=0, acc=1.0, isl=60000, osl=300,
               new=1800, mix=1.0)
    off = agentic(s, pts, pause_s=30.0, host_tier=False)
    pooled = agentic(s, pts, pause_s=30.0, host_tier=False, pool_gb_per_gpu=100.0)
    assert np.all(pooled["evicted_share"] <= off["evicted_share"]) and np.any(pooled["kv_in_pool_share"] > 0)
    # the pool saves re-prefills (fewer uncached tokens, so less prefill traffic on the link) and reloads over the
    # scale-up link: where the uncached input is the same, the reload shows as more link time
    assert np.all(pooled["uncached_input"] <= off["uncached_input"] + 1e-9)
    same = np.isclose(pooled["uncached_input"], off["uncached_input"])
    assert same.any() and np.all(pooled["t_link_ms"][same] >= off["t_link_ms"][same] - 1e-12)
