"""Attribution: exact Shapley split of a ratio; parts multiply to the total."""

import json

import numpy as np
import pytest

from perfmodel.analyses import attribution
from perfmodel.analyses.attribution import _shapley, attribute
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.systems import HW_GROUPS, System
from perfmodel.specs.hardware import HARDWARE_FIELDS

ONE_GPU = DeploymentSpace(gpus=(1,), spec_tokens=(0,), batch_points=16, disaggregation=False)   # one aggregated GPU


def test_parts_multiply_to_total():
    r = attribute("h100-sxm:sglang", "h200-sxm:speed-of-light", "llama-3.1-70b", peak=True,
                  metric="total_tps_per_mw", space=DeploymentSpace(batch_points=12, spec_tokens=(0, 2)))
    assert len(r.parts) >= 3
    assert set(r.parts["kind"]) == {"hardware", "software"}
    assert np.prod(r.parts["factor"]) == pytest.approx(r.total_ratio, rel=1e-9)
    assert r.total_ratio == pytest.approx(r.to_value / r.from_value, rel=1e-12)
    assert r.parts["log_share"].sum() == pytest.approx(1.0, abs=1e-9)
    js = r.to_json()
    assert js["total_ratio"] == pytest.approx(np.prod(list(js["parts"].values())), rel=1e-9)
    json.dumps(js)


def test_bandwidth_change_at_bandwidth_bound_point_is_all_bandwidth():
    """Decode alone at 100 tok/s/user is bandwidth-bound: a 1.25x on bandwidth and FLOPs is all bandwidth."""
    a = System("b200", profile="speed-of-light")
    b = System("b200", profile="speed-of-light",
               hw_overrides={"hbm_bandwidth_tbps": 7.7 * 1.25, "fp8_dense_pflops": 4.5 * 1.25})
    space = DeploymentSpace(gpus=(1,), spec_tokens=(0,), batch_points=16, serving=("decode_only",))
    r = attribute(a, b, "llama-3.1-70b", profile="speed-of-light", at_tps_per_user=100, space=space)
    share = r.parts.set_index("name")["log_share"]
    assert share["hbm_bandwidth"] == pytest.approx(1.0, abs=0.02)
    assert abs(share["flops"]) < 0.02
    assert r.total_ratio > 1.25          # at fixed interactivity the faster system also batches more


def test_aggregated_serving_gives_flops_the_prefill_share():
    """Aggregated, the same request also prefills (compute-bound) in its cycle: FLOPs take a visible share."""
    a = System("b200", profile="speed-of-light")
    b = System("b200", profile="speed-of-light",
               hw_overrides={"hbm_bandwidth_tbps": 7.7 * 1.25, "fp8_dense_pflops": 4.5 * 1.25})
    r = attribute(a, b, "llama-3.1-70b", profile="speed-of-light", at_tps_per_user=100, space=ONE_GPU)
    share = r.parts.set_index("name")["log_share"]
    assert 0.02 < share["flops"] < 0.3
    assert share["hbm_bandwidth"] > 0.7


def test_single_change_is_the_whole_ratio():
    r = attribute(System("b200"), System("b200", hw_overrides={"hbm_bandwidth_tbps": 9.0}), "llama-3.1-70b",
                  peak=True, space=ONE_GPU)
    assert list(r.parts["name"]) == ["hbm_bandwidth"]
    assert r.parts["factor"].iloc[0] == pytest.approx(r.total_ratio, rel=1e-12)


def test_shapley_axioms():
    # v(S) = sum of weights + an interaction shared by players 0 and 1
    w = np.array([0.3, -0.1, 0.5])
    v = np.array([sum(w[i] for i in range(3) if m >> i & 1) + (0.2 if m & 3 == 3 else 0.0) for m in range(8)])
    phi = _shapley(v, 3)
    np.testing.assert_allclose(phi, w + np.array([0.1, 0.1, 0.0]), atol=1e-12)
    assert phi.sum() == pytest.approx(v[-1] - v[0])


def test_every_hardware_field_has_a_group():
    grouped = {f for fs in HW_GROUPS.values() for f in fs}
    assert grouped == set(HARDWARE_FIELDS)


def test_screened_game_equals_exact_when_screened_players_are_null(monkeypatch):
    a = System("b200")
    b = System("b200", hw_overrides={"hbm_bandwidth_tbps": 9.0, "fp8_dense_pflops": 6.0,
                                     "nic_bandwidth_gbps": 100.0})   # one GPU: the NIC never matters
    exact = attribute(a, b, "llama-3.1-70b", at_tps_per_user=60, space=ONE_GPU)
    monkeypatch.setattr(attribution, "MAX_EXACT", 2)
    screened = attribute(a, b, "llama-3.1-70b", at_tps_per_user=60, space=ONE_GPU)
    assert any("no effect" in n for n in screened.meta["notes"])
    np.testing.assert_allclose(screened.parts["factor"], exact.parts["factor"], rtol=1e-9)
    assert screened.parts.set_index("name").loc["scaleout_link", "factor"] == 1.0
    assert np.prod(screened.parts["factor"]) == pytest.approx(screened.total_ratio, rel=1e-9)


def test_attribution_binds_through_setup_and_matches_predict_at_one_deployment():
    """Issue 34: attribution bound symbols by hand without the kernel fits (TPOT 11.68 ms where predict gave
    13.72 ms on H200, SGLang, Llama-3.1-70B, TP8, batch 64). Read at predict's own per-user speed for that
    deployment, the coalition of nothing (A) must give predict's throughput: the regula falsi lands on batch 64."""
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    sc = Scenario.model_validate({"hardware": "h200-sxm", "model": "llama-3.1-70b", "profile": "sglang",
                                  "deployment": {"gpus": 8, "tp": 8, "batch": 64},
                                  "workload": {"isl": 1024, "osl": 1024}})
    pred = api.predict(sc).iloc[0]
    space = DeploymentSpace(gpus=(8,), tp=(8,), ep=(1,), spec_tokens=(0,), attention_dp=False, batch_points=16,
                            disaggregation=False, kv_host_tier=False)
    b = System("h200-sxm", "sglang", hw_overrides={"hbm_bandwidth_tbps": 5.5})
    r = attribute(System("h200-sxm", "sglang"), b, "llama-3.1-70b", workload={"isl": 1024, "osl": 1024},
                  at_tps_per_user=float(pred["tps_per_user"]), space=space)
    assert r.from_value == pytest.approx(float(pred["total_tps_per_gpu"]), rel=1e-3)


def test_kernel_curves_are_a_player_when_the_engines_differ():
    r = attribute(System("h200-sxm", "sglang"), System("h200-sxm", "vllm"), "llama-3.1-70b", at_tps_per_user=20,
                  space=ONE_GPU)
    row = r.parts.set_index("name").loc["engine_kernels"]
    assert row.kind == "software" and row.factor != 1.0
    assert np.prod(r.parts["factor"]) == pytest.approx(r.total_ratio, rel=1e-9)
