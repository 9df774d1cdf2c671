"""Serving features: speculative decoding, disaggregation, KV host tier, agentic sessions."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup, evaluate
from perfmodel.engine.serving import agentic, disaggregated


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
    # prefill pool is large: decode-limited, so per-GPU output = decode pool rate over all GPUs
    np.testing.assert_allclose(d["output_tps_per_gpu"] * (800 + 8) / 8, dec["output_tps_per_gpu"], rtol=1e-9)
    assert np.all(d["kv_transfer_ms"] < 0.5)


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
    np.testing.assert_allclose(ag["sessions"], PTS["batch"])
