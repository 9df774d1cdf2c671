"""Busiest-EP-rank statistics and per-layer kernel counts (equations/roofline.py, ffn.py, attention.py, step.py)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from deepseek_floors import trtllm_step_floors_us
from mechanisms_on import profile_with

from perfmodel import catalog
from perfmodel.equations.roofline import expected_max_normal
from perfmodel.equations.step import StepBuilder
from perfmodel.model import ffn_family


@pytest.mark.parametrize("n", [1, 2, 4, 8, 32, 256])
def test_expected_max_normal_matches_monte_carlo(n):
    exact = np.random.default_rng(0).standard_normal((40_000, n)).max(axis=1).mean()
    assert float(expected_max_normal(sp.Integer(n))) == pytest.approx(exact, abs=0.05 * max(exact, 1.0))


def _ffn(model="deepseek-v3"):
    m = catalog.model(model)
    f = next(f for f in m.ffn.values() if getattr(f, "experts", 0))
    return ffn_family(f, m.hidden_size)


def test_one_rank_is_the_mean():
    f = _ffn()
    for T in (1, 8, 4096):
        assert float(f.busiest_rank_experts(T, 1)) == pytest.approx(float(f.distinct_experts(T)))
        assert float(f.busiest_rank_load(T, 1)) == pytest.approx(1.0)


def test_busiest_rank_exceeds_mean_at_low_batch_and_converges_at_high_batch():
    f = _ffn()
    E = f.f.experts
    # 4 tokens x top-8 on EP4: the busiest of 4 ranks touches clearly more experts than the mean rank
    mean = float(f.distinct_experts(4)) / 4
    busiest = float(f.busiest_rank_experts(4, 4))
    assert 1.2 * mean < busiest < E / 4
    # every expert touched: the busiest rank holds E/ep distinct experts, no more
    assert float(f.busiest_rank_experts(100_000, 8)) == pytest.approx(E / 8, rel=1e-6)
    # token load spread: large at a few tokens per rank, vanishing at many
    assert float(f.busiest_rank_load(4, 8)) > 1.5
    assert float(f.busiest_rank_load(100_000, 8)) == pytest.approx(1.0, abs=0.01)


def test_busiest_rank_experts_matches_simulation():
    """Uniform top-k routing simulated: mean over trials of the busiest rank's distinct experts."""
    f = _ffn()
    E, k, ep, T = f.f.experts, f.f.top_k, 8, 16
    rng = np.random.default_rng(1)
    trials = []
    for _ in range(2000):
        touched = np.zeros(E, bool)
        for _t in range(T):
            touched[rng.choice(E, k, replace=False)] = True
        trials.append(touched.reshape(ep, E // ep).sum(axis=1).max())
    assert float(f.busiest_rank_experts(T, ep)) == pytest.approx(np.mean(trials), rel=0.08)


def test_layer_kernel_counts():
    """DeepSeek MoE layer: MLA 8 + MoE 7 + shared expert 3 + 2 norms = 20; Llama layer: GQA 4 + MLP 3 + 2 = 9."""
    ds = StepBuilder(catalog.model("deepseek-v3"))
    kinds = {(g.attention, g.ffn) for g in ds.m.layers}
    counts = sorted(ds.layer_kernels(a, f) for a, f in kinds)
    assert counts == [13, 20]                     # 3 dense layers (MLA + MLP) and 58 MoE layers
    ll = StepBuilder(catalog.model("llama-3.3-70b"))
    g = ll.m.layers[0]
    assert ll.layer_kernels(g.attention, g.ffn) == 9


def test_kernel_overhead_adds_per_kernel_per_layer():
    """TPOT grows by kernel_overhead x (3 x 13 + 58 x 20) kernels per step for DeepSeek-V3 (no drafts), with or
    without kernel fits; where the GPU has them but no launch costs (an edited copy of H200's fits), kernel_floor_share
    adds that share of its fitted launch floors (TRT-LLM on H200: BF16 GEMM, MLA decode and fused-MoE floors of the
    hardware catalog); with the catalog's launch block and the mechanism floors_net_of_harness the floors are net of
    the tables' per-call overhead (the mechanism off: the plain floors, as before it was written)."""
    from perfmodel.engine.evaluate import Setup
    from perfmodel.serving.aggregated import evaluate
    fitted, m, prof = catalog.hardware("h200-sxm"), catalog.model("deepseek-v3"), profile_with("trtllm")
    hw = fitted.model_copy(update={"kernel_fits": None})
    pt = dict(batch=8, gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1, isl=1000, osl=1000, new=1000, mix=0)
    t = [evaluate(Setup(hw, m, prof, profile_overrides={"kernel_overhead_us": v, "layer_floor_us": 0.0}),
                  pt)["tpot_ms"].iloc[0] for v in (1.0, 3.0)]
    assert t[1] - t[0] == pytest.approx(2e-3 * (3 * 13 + 58 * 20), rel=1e-6)
    floors_us = trtllm_step_floors_us(fitted.kernel_fits)
    no_launch = fitted.model_copy(update={"kernel_fits": fitted.kernel_fits.model_copy(update={"launch": None})})
    net_us = trtllm_step_floors_us(fitted.kernel_fits, fitted.kernel_fits.launch.harness_call_us.value)
    assert 0 < net_us < floors_us
    netted = profile_with("trtllm", "floors_net_of_harness")
    for h, pr, floors in ((no_launch, netted, floors_us), (fitted, prof, floors_us), (fitted, netted, net_us)):
        t = [evaluate(Setup(h, m, pr, profile_overrides={"kernel_overhead_us": 1.0, "layer_floor_us": 0.0,
                                                         "kernel_floor_share": r}), pt)["tpot_ms"].iloc[0]
             for r in (0.0, 0.5)]
        assert t[1] - t[0] == pytest.approx(0.5 * floors * 1e-3, rel=1e-6)


def test_fp4_gemm_efficiency_applies_only_on_fp4_tensor_cores():
    """eff_gemm_fp4 moves a compute-bound NVFP4 step on B200 and not the same step on H100 (no FP4 units)."""
    from perfmodel.engine.evaluate import Setup
    from perfmodel.serving.aggregated import evaluate
    m, prof = catalog.model("llama-3.3-70b"), catalog.profile("trtllm")
    pt = dict(batch=512, gpus=1, tp=1, ep=1, pp=1, spec_tokens=0, acc=1, isl=1000, osl=1000, new=1000, mix=0)

    def tpot(hw, e4):
        s = Setup(catalog.hardware(hw), m, prof, weights="nvfp4",
                  profile_overrides={"eff_gemm": 0.5, "eff_gemm_fp4": e4})
        return evaluate(s, pt)["tpot_ms"].iloc[0]
    assert tpot("b200", 0.25) > 1.3 * tpot("b200", 0.5)
    assert tpot("h100-sxm", 0.25) == pytest.approx(tpot("h100-sxm", 0.5))


def test_profile_without_fp4_efficiency_uses_eff_gemm():
    from perfmodel.specs.profile import ProfileSpec
    data = catalog.profile("sglang").model_dump()
    data.pop("eff_gemm_fp4")
    p = ProfileSpec.model_validate(data)
    assert p.eff_gemm_fp4 == p.eff_gemm
