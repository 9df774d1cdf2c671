"""Hand-checked goldens: the engine agrees with arithmetic done outside the equations."""

import numpy as np
import pytest

from perfmodel import api, catalog
from perfmodel.arch import param_counts
from perfmodel.specs.deployment import Scenario

SCENARIO = {
    "hardware": "h100-sxm", "model": "llama-3.1-70b", "profile": "speed-of-light",
    "deployment": {"gpus": 1, "tp": 1, "ep": 1, "dp_attention": False, "weights": "fp8", "kv_cache": "fp8",
                   "batch": 1, "spec_tokens": 0, "serving": "aggregated"},
    "workload": {"isl": 2048, "osl": 128, "prefix_hit": 0.0},
    "overrides": {"hardware": {}},
}


def test_batch1_decode_is_weight_bytes_over_bandwidth_plus_kv():
    m = catalog.model("llama-3.1-70b")
    p = param_counts(m)
    # fp8 linear layers (1 B), bf16 LM head (2 B); the embedding table is gathered, not streamed
    weight_bytes = (p.attention + p.ffn_total) * 1.0 + p.lm_head * 2.0
    kv_bytes = (2048 + 128 / 2) * 80 * 2 * 8 * 128 * 1.0        # context x layers x (K,V) x kv heads x dim x fp8
    kv_bytes += 80 * 2 * 8 * 128 * 1.0                           # the new token's K and V written
    expected_s = (weight_bytes + kv_bytes) / 3.35e12
    # decode-only, so no prefill tokens are mixed into the step
    sc = Scenario.model_validate({**SCENARIO, "deployment": {**SCENARIO["deployment"], "serving": "decode_only"}})
    row = api.predict(sc).iloc[0]
    assert row["tpot_ms"] == pytest.approx(expected_s * 1e3, rel=1e-9)
    assert row["bound"] == "hbm_bandwidth"
    assert row["step_bytes_weights_gb"] == pytest.approx(weight_bytes / 1e9, rel=1e-12)
    assert row["step_bytes_kv_read_gb"] + row["step_bytes_kv_write_gb"] == pytest.approx(kv_bytes / 1e9, rel=1e-12)
    assert row["step_flops_fp8"] == pytest.approx(2 * (p.attention + p.ffn_total + p.lm_head), rel=1e-12)
    assert row["tps_per_user"] == pytest.approx(1 / expected_s, rel=1e-9)


def test_prefill_flops_are_2_active_params_tokens_plus_attention():
    m = catalog.model("llama-3.1-70b")
    p = param_counts(m)
    S = 2048
    # GEMM shape (equations/gemm_shape.py): 2048 tokens = 16 row tiles of 128 (the largest tile), so no row
    # padding; output tiles of 128 columns over H100's 132 SMs leave the last wave part empty:
    #   attention projections N = (8192 + 2 x 1024 + 8192) = 18432 columns -> 144 x 16 = 2304 tiles, 18 waves
    #   FFN (gate, up, down as one K = 8192 GEMM) N = 3 x 28672 = 86016 -> 672 x 16 = 10752 tiles, 82 waves
    u_attn, u_ffn = 2304 / (18 * 132), 10752 / (82 * 132)
    linear = 2 * p.attention * S / u_attn + 2 * p.ffn_total * S / u_ffn
    attn = 80 * 4 * 64 * 128 * S * (S / 2)                            # causal: mean context S/2
    row = api.predict(Scenario.model_validate(SCENARIO)).iloc[0]
    # fp8 GEMMs at 1.98 PF, attention at bf16 0.99 PF; prefill is compute-bound here
    # the LM head runs on the last token only: its roofline is the bf16 weight read (its one token is padded to
    # the smallest 16-row tile, still far below the ridge)
    lm_head = max(2 * p.lm_head * 16 / 1.98e15, 2.0 * p.lm_head / 3.35e12)
    expected = linear / 1.98e15 + attn / 0.99e15 + lm_head
    assert row["prefill_ms"] == pytest.approx(expected * 1e3, rel=1e-6)
    assert row["ttft_ms"] == pytest.approx(row["prefill_ms"] + row["tpot_ms"], rel=1e-9)


def test_mla_absorbed_decode_core_flops_reference():
    """DeepSeek-V3 absorbed decode: 278,528 FLOPs per attended key per layer (models.md)."""
    from perfmodel.model import attention_family
    a = catalog.model("deepseek-v3").attention["mla"]
    c = attention_family(a, "mla")
    assert int(c.core_flops(1, "decode")) == 278528
    assert int(c.core_flops(1, "prefill")) == 81920


def test_scenario_example_runs_as_written(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("""hardware: h100-sxm        # catalog id or path to a YAML file
model: llama-3.1-70b
profile: speed-of-light
deployment: {gpus: 1, tp: 1, ep: 1, dp_attention: false, weights: fp8, kv_cache: fp8,
             batch: 1, spec_tokens: 0, serving: aggregated}
workload: {isl: 2048, osl: 128, prefix_hit: 0.0}
overrides: {hardware: {}}  # e.g. {hbm_bandwidth_tbps: 8.0}
""")
    df = api.predict(api.load_scenario(f))
    for col in ("tpot_ms", "ttft_ms", "tps_per_user", "output_tps_per_gpu", "total_tps_per_gpu", "fits", "bound"):
        assert col in df.columns
    assert bool(df["fits"].iloc[0]) and np.isfinite(df["tpot_ms"].iloc[0]) and df["tpot_ms"].iloc[0] > 0


def test_does_not_fit_has_reason_not_nan():
    sc = Scenario.model_validate({**SCENARIO, "model": "llama-3.1-405b"})
    row = api.predict(sc).iloc[0]
    assert not row["fits"]
    assert "weights" in row["fit_reason"] and "GB" in row["fit_reason"]
    assert np.isfinite(row["tpot_ms"]) and row["tpot_ms"] > 0


def test_batch_over_capacity_is_flagged():
    sc = Scenario.model_validate({**SCENARIO, "deployment": {**SCENARIO["deployment"], "batch": 5000}})
    row = api.predict(sc).iloc[0]
    assert not row["fits"] and "at most" in row["fit_reason"] and row["bound"] == "capacity"


def test_moe_expected_distinct_experts():
    from perfmodel.model import ffn_family
    f = ffn_family(catalog.model("deepseek-v3").ffn["moe"], 7168)
    assert float(f.distinct_experts(1)) == pytest.approx(8)
    assert float(f.distinct_experts(10_000)) == pytest.approx(256, rel=1e-9)
    assert float(f.distinct_experts(32)) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 32))
