"""Kernel fits bound to the equations: kernel floors, custom all-reduce latencies, grouped-GEMM efficiency."""

from __future__ import annotations

import pytest
import sympy as sp
from mechanisms_on import profile_with

from perfmodel import catalog
from perfmodel.engine.kernel_bind import defaults, kernel_values
from perfmodel.equations.ffn import MOE_KERNELS, grouped_gemm_efficiency
from perfmodel.equations.step import StepBuilder
from perfmodel.equations.symbols import S
from perfmodel.specs.kernel_fits import LAW_PARAMS, KernelFits

SRC = "https://github.com/ai-dynamo/aiconfigurator"


def _curve(family: str, **params):
    """A curve of ``family`` with the parameters the test reads; the law's others (the schema requires every one,
    specs/kernel_fits.LAW_PARAMS) at 1, which the binder does not read."""
    return {"params": {**dict.fromkeys(LAW_PARAMS[family], 1.0), **params}, "status": "fitted", "source": SRC}


FITS = KernelFits.model_validate({"notice": "Apache-2.0", "command": "test", "families": {
    "gemm": {"trtllm": {"torch_flow/bfloat16": _curve("gemm", t0_us=2.0, eff_c=0.8),
                        "torch_flow/fp8": _curve("gemm", t0_us=14.0, eff_c=0.6)}},
    "attention": {"trtllm": {"torch_flow/bfloat16/fp8": _curve("attention", t0_us=9.0),
                             "torch_flow/bfloat16/bfloat16": _curve("attention", t0_us=7.0)}},
    "mla": {"trtllm": {"default/bfloat16/fp8": _curve("mla", t0_us=11.0)}},
    "moe": {"trtllm": {"cutlass/fp8": _curve("moe", t0_us=25.0, eff_c=0.3, tpe_half=2.0, g_tp=0.1),
                       "cutlass/nvfp4": _curve("moe", t0_us=30.0, eff_c=0.2, tpe_half=9.0, g_tp=0.5)}},
    "allreduce": {"trtllm": {"custom:TRTLLM/bfloat16": _curve("allreduce", lat1_us=3.0, g1=0.2, eff1=0.5, lat2_us=10.0, g2=0.5,
                                                            eff2=0.7)},
                  "sglang": {"custom:SGLang_eager/bfloat16": _curve("allreduce", lat1_us=40.0, g1=0.0, eff1=0.5, lat2_us=40.0,
                                                                  g2=0.0, eff2=0.5),
                             "custom:SGLang_graph/bfloat16": _curve("allreduce", lat1_us=4.0, g1=0.0, eff1=0.5, lat2_us=6.0,
                                                                  g2=0.0, eff2=0.5)}}}})


def _hw(fits):
    return catalog.hardware("gb200-nvl72").model_copy(update={"kernel_fits": fits})


def test_kernel_values_pick_the_engines_curves():
    trt = catalog.profile("trtllm")
    v = kernel_values(_hw(FITS), trt, "fp8", "fp8", mla=False, lat_link_s=1.5e-6, lat_link_catalog_s=1.5e-6)
    assert v["t_gemm0"] == pytest.approx(2e-6)          # the BF16 GEMM's launch floor
    assert v["t_attn0"] == pytest.approx(9e-6)          # decode attention with an FP8 KV cache
    assert v["t_moe0"] == pytest.approx(25e-6)          # fused MoE in the weight format
    assert v["e_ggk"] == pytest.approx(0.3 / 0.6)       # MoE plateau over the FP8 GEMM plateau
    assert (v["tpe_h"], v["g_etp"]) == (2.0, 0.1)
    assert (v["a_1s"], v["g_1s"], v["a_2s"], v["g_2s"]) == pytest.approx((3e-6, 0.2, 10e-6, 0.5))
    assert (v["q_arf"], v["q_ggf"]) == (1.0, 1.0)
    v = kernel_values(_hw(FITS), trt, "nvfp4", "bf16", mla=True, lat_link_s=3e-6, lat_link_catalog_s=1.5e-6)
    assert v["t_attn0"] == pytest.approx(11e-6) and v["t_moe0"] == pytest.approx(30e-6)
    assert v["a_1s"] == pytest.approx(6e-6)             # a what-if doubling the scale-up latency doubles it
    # dynamo-sglang runs SGLang's kernels; its CUDA-graph all-reduce, not the eager one
    v = kernel_values(_hw(FITS), catalog.profile("dynamo-sglang"), "fp8", "fp8", False, 1.5e-6, 1.5e-6)
    assert v["a_1s"] == pytest.approx(4e-6) and v["t_gemm0"] == 0.0   # no SGLang GEMM curve here: no floor


def test_no_fit_leaves_the_equations_as_before():
    d = defaults(1.5e-6)
    assert d == {"q_arf": 0.0, "q_ggf": 0.0, "t_gemm0": 0.0, "t_attn0": 0.0, "t_moe0": 0.0, "e_ggk": 1.0, "tpe_h": 0.0, "g_etp": 0.0,
                 "g_mh": 0.0, "g_bc": 0.0, "a_1s": 3e-6, "g_1s": 0.0, "a_2s": 4.5e-6, "g_2s": 0.0}
    sol = catalog.profile("speed-of-light")
    assert kernel_values(_hw(FITS), sol, "fp8", "fp8", False, 1.5e-6, 1.5e-6) == d
    assert kernel_values(_hw(None), catalog.profile("trtllm"), "fp8", "fp8", False, 1.5e-6, 1.5e-6) == d


def test_grouped_gemm_efficiency_hand_check():
    # 64 pairs on 8 experts: 8 tokens per expert; tpe_h = 2 -> 8 / 10; moe_tp = 4, g = 0.5 -> 1/2
    e = grouped_gemm_efficiency(sp.Integer(64), sp.Integer(8), sp.Integer(4))
    vals = {S["e_gg"]: 0.9, S["q_ggf"]: 1.0, S["e_ggk"]: 0.5, S["tpe_h"]: 2.0, S["g_etp"]: 0.5}
    assert float(e.subs(vals)) == pytest.approx(0.5 * 0.8 * 0.5)   # the fit replaces the profile's e_gg
    vals.update({S["q_ggf"]: 0.0, S["e_ggk"]: 1.0, S["tpe_h"]: 0.0, S["g_etp"]: 0.0})
    assert float(e.subs(vals)) == pytest.approx(0.9)    # without a fit: e_gg alone


def test_layer_kernel_floors_hand_check():
    b = StepBuilder(catalog.model("deepseek-v3"))
    moe_layer = next(g for g in b.m.layers if b.ffn[g.ffn].is_moe)
    n = b.layer_kernels(moe_layer.attention, moe_layer.ffn)
    fl = b.kernel_floors(moe_layer.attention, moe_layer.ffn)
    vals = {S["t_gemm0"]: 2e-6, S["t_attn0"]: 9e-6, S["t_moe0"]: 25e-6}
    # every kernel at 2 us, except the attention core (9 us) and the 7 routed-MoE kernels (25 us together)
    assert float(fl.subs(vals)) == pytest.approx((n - 1 - MOE_KERNELS) * 2e-6 + 9e-6 + 25e-6)
    assert float(fl.subs({k: 0.0 for k in vals})) == 0.0


def test_catalog_holds_sourced_fits_for_the_table_gpus_and_physics_for_rubin():
    for hw_id in ("h100-sxm", "h200-sxm", "b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        kf = catalog.hardware(hw_id).kernel_fits
        assert {"gemm", "moe", "attention", "mla", "allreduce"} <= set(kf.families), hw_id
        curves = [c for e in kf.families.values() for v in e.values() for c in v.values()]
        assert all(c.status == "fitted" and "095f58a51c4ca8e61b66ec108d86f223f8d559ce" in c.source for c in curves)
    rubin = catalog.hardware("vr200-nvl72").kernel_fits
    curves = [c for e in rubin.families.values() for v in e.values() for c in v.values()]
    assert curves and all(c.status == "physics" and "vr200-nvl72" in c.note for c in curves)
    assert catalog.hardware("h800-sxm").kernel_fits is None      # no table, no derivation: equations unchanged


def test_floor_edges_are_the_fitting_bounds():
    """kernel_bind.T0_EDGE_US holds each family's upper bound of t0_us (a curve on it has no measured floor)."""
    from perfmodel.engine.kernel_bind import T0_EDGE_US
    from perfmodel.kernels import attention, gemm, mla, moe
    for fam, mod in (("gemm", gemm), ("attention", attention), ("mla", mla), ("moe", moe)):
        assert T0_EDGE_US[fam] == next(p.high for p in mod.PARAMS if p.name == "t0_us"), fam


def test_launch_costs_net_the_floors_and_drop_curves_on_their_bound():
    """With launch costs (node 2 us, harness 1.5 us) and the mechanism floors_net_of_harness: the per-kernel cost stays the profile's (t_kern, r_kf and
    t_floor are not bound from the tables); the BF16 GEMM floor 2 - 1.5 = 0.5 us; decode
    attention 9 - 1.5 = 7.5 us; the fused MoE call holds MOE_KERNELS = 7 node periods: 25 - 7 x 1.5 = 14.5 us. An
    MLA curve with t0 on its 200 us bound is left out (no MLA floor then)."""
    launch = {"graph_node_us": {"value": 2.0, "status": "estimate", "source": SRC},
              "harness_call_us": {"value": 1.5, "status": "estimate", "source": SRC}}
    data = FITS.model_dump()
    data["launch"] = launch
    data["families"]["mla"]["trtllm"]["default/bfloat16/fp8"]["params"]["t0_us"] = 200.0
    fits = KernelFits.model_validate(data)
    trt = profile_with("trtllm", "floors_net_of_harness")
    v = kernel_values(_hw(fits), trt, "fp8", "fp8", mla=False, lat_link_s=1.5e-6)
    assert not {"t_kern", "r_kf", "t_floor"} & set(v)
    off = kernel_values(_hw(fits), profile_with("trtllm"), "fp8", "fp8", mla=True, lat_link_s=1.5e-6)
    assert off["t_gemm0"] == pytest.approx(2e-6) and off["t_attn0"] == pytest.approx(200e-6)   # switched off
    assert v["t_gemm0"] == pytest.approx(0.5e-6) and v["t_attn0"] == pytest.approx(7.5e-6)
    assert v["t_moe0"] == pytest.approx((25.0 - MOE_KERNELS * 1.5) * 1e-6)
    assert kernel_values(_hw(fits), trt, "fp8", "fp8", mla=True, lat_link_s=1.5e-6)["t_attn0"] == 0.0
