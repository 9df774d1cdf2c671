"""Sensitivity: analytic elasticities from the sympy derivatives."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.analyses.sensitivity import sensitivity
from perfmodel.engine.evaluate import Setup
from perfmodel.serving.aggregated import evaluate

POINT = dict(gpus=1, tp=1, batch=1)


@pytest.fixture(scope="module")
def sol_batch1():
    return sensitivity("b200", "llama-3.1-70b", "fixed-1k1k", "speed-of-light", point=POINT).set_index("parameter")


def test_hbm_bound_batch1_elasticities(sol_batch1):
    e = sol_batch1["elasticity"]
    assert e["hbm_bandwidth_tbps"] == pytest.approx(1.0, abs=1e-6)
    for f in ("fp8_dense_pflops", "bf16_dense_pflops", "scaleup_bandwidth_gbps", "hbm_capacity_gb"):
        assert abs(e[f]) < 1e-6, f
    # weights dominate the bytes at batch 1: weight streaming ~1, KV reads ~0
    assert e["eff_weights"] > 0.95 and e["eff_kv"] < 0.05
    assert e["eff_weights"] + e["eff_kv"] == pytest.approx(1.0, abs=1e-9)


def test_ranked_by_magnitude(sol_batch1):
    mags = sol_batch1["elasticity"].abs().to_numpy()
    assert np.all(np.diff(mags) <= 1e-12)


def _elasticities(point, profile="sglang", hw="h200-sxm", model="llama-3.1-70b"):
    return sensitivity(hw, model, "fixed-1k1k", profile, point=point).set_index("parameter")["elasticity"]


def test_euler_rates_minus_latencies_sum_to_one():
    """Scaling every rate by k and every latency by 1/k scales throughput by k."""
    e = _elasticities(dict(gpus=8, tp=8, batch=64, spec_tokens=2))
    rates = ["hbm_bandwidth_tbps", "bf16_dense_pflops", "fp8_dense_pflops", "scaleup_bandwidth_gbps",
             "nic_bandwidth_gbps", "host_link_bandwidth_gbps", "host_memory_bandwidth_gbps"]
    times = ["scaleup_latency_us", "collective_latency_us", "layer_floor_us", "kernel_overhead_us", "step_overhead_ms",
             "seq_overhead_us", "kernel_launch_floors"]
    assert e[rates].sum() - e[times].sum() == pytest.approx(1.0, abs=1e-9)
    assert e["scaleup_bandwidth_gbps"] > 0 and e["step_overhead_ms"] <= 0   # 0 where the overlap scheduler hides it


def test_matches_a_finite_difference_check():
    """The analytic elasticity agrees with a tiny finite step of the engine's decode-step throughput
    B acc / (step G) (as a check only), decode alone (aggregated, the share of chunk steps the analytic
    derivative holds fixed moves with the rates too)."""
    pt = dict(gpus=8, tp=8, batch=64, spec_tokens=0, serving="decode_only")
    e = _elasticities(pt)
    hw, m, pr = catalog.hardware("h200-sxm"), catalog.model("llama-3.1-70b"), catalog.profile("sglang")
    pts = dict(batch=64, gpus=8, tp=8, ep=1, pp=1, spec_tokens=0, acc=1.0, isl=1024, osl=1024, new=1024, mix=0.0)
    h = 1e-6
    for field, base in (("hbm_bandwidth_tbps", hw.value("hbm_bandwidth_tbps")),
                        ("scaleup_bandwidth_gbps", hw.value("scaleup_bandwidth_gbps"))):
        lo, hi = (1.0 / evaluate(Setup(hw, m, pr, hw_overrides={field: base * (1 + d)}), pts)["step_ms"].iloc[0]
                  for d in (-h, h))
        fd = (np.log(hi) - np.log(lo)) / (np.log1p(h) - np.log1p(-h))
        assert e[field] == pytest.approx(fd, abs=1e-4), field


def test_acceptance_rate_row_with_spec():
    e = _elasticities(dict(gpus=8, tp=8, batch=16, spec_tokens=3))
    assert e["acceptance_rate"] > 0


def test_a_deployment_that_does_not_fit_is_a_one_line_error():
    import pytest

    from perfmodel.analyses import sensitivity
    from perfmodel.errors import SpecError
    with pytest.raises(SpecError) as e:
        sensitivity("b200", "deepseek-r1", point={"batch": 64, "gpus": 1}, weights="nvfp4")
    assert "does not fit in memory" in str(e.value) and "deployment.gpus" in e.value.line()
