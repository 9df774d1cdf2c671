"""The fixed part of a small-batch step, part by part (issue 31): hand checks of each part, and profile variants."""

from __future__ import annotations

import pytest
import sympy as sp
from deepseek_floors import trtllm_step_floors_us
from mechanisms_on import profile_with

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup
from perfmodel.equations.collectives import allreduce_latency, bind_fabric, default_custom_latencies
from perfmodel.equations.symbols import S
from perfmodel.errors import SpecError
from perfmodel.serving.aggregated import evaluate
from perfmodel.specs.profile import ProfileSpec

PT = dict(batch=1, gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1, isl=1024, osl=1024, new=1024, mix=0)


def _row(hw, model="deepseek-v3", profile="trtllm", pt=PT, mechanisms=(), **over):
    prof = profile_with(profile, *mechanisms)
    return evaluate(Setup(hw, catalog.model(model), prof, profile_overrides=over), pt).iloc[0]


def test_step_of_n_kernels_costs_n_profile_gaps_plus_the_net_floors():
    """DeepSeek-V3 at batch 1 on H200 (TRT-LLM): 3 dense layers of 13 kernels and 58 MoE layers of 20 launch
    3 x 13 + 58 x 20 = 1199 kernels; the gaps are 1199 x the profile's kernel_overhead_us (the GPU's CUDA-graph node
    period does not replace it: engine/kernel_bind.py), the floors the profile's kernel_floor_share of the kernel
    tables' BF16 GEMM, MLA-decode and fused-MoE floors of H200, net of the tables' per-call overhead where the
    profile switches on floors_net_of_harness (raw without); the two add up to t_launch_ms."""
    hw = catalog.hardware("h200-sxm")
    launch = hw.kernel_fits.launch
    for gap, share in ((7.0, 0.2), (2.0, 1.0)):
        r = _row(hw, mechanisms=("floors_net_of_harness",), kernel_overhead_us=gap, kernel_floor_share=share)
        assert r["t_kernel_gap_ms"] == pytest.approx(1199 * gap * 1e-3, rel=1e-9)
        floors_us = trtllm_step_floors_us(hw.kernel_fits, launch.harness_call_us.value)
        assert r["t_kernel_floor_ms"] == pytest.approx(share * floors_us * 1e-3, rel=1e-9)
        assert r["t_launch_ms"] == pytest.approx(r["t_kernel_gap_ms"] + r["t_kernel_floor_ms"], rel=1e-12)
        off = _row(hw, kernel_overhead_us=gap, kernel_floor_share=share)     # the mechanism off: raw floors
        assert off["t_kernel_floor_ms"] == pytest.approx(share * trtllm_step_floors_us(hw.kernel_fits) * 1e-3,
                                                         rel=1e-9)


def test_without_launch_costs_the_floors_are_the_raw_table_floors():
    """A GPU whose kernel fits carry no launch block (an edited copy of H200's): the gap is the profile's
    kernel_overhead_us per kernel and the floors its share of the raw table floors."""
    h200 = catalog.hardware("h200-sxm")
    hw = h200.model_copy(update={"kernel_fits": h200.kernel_fits.model_copy(update={"launch": None})})
    r = _row(hw, kernel_overhead_us=2.0, kernel_floor_share=0.5)
    assert r["t_kernel_gap_ms"] == pytest.approx(1199 * 2.0e-3, rel=1e-9)
    assert r["t_kernel_floor_ms"] == pytest.approx(0.5 * trtllm_step_floors_us(hw.kernel_fits) * 1e-3, rel=1e-9)


def test_two_hop_nvlink_all_reduce_costs_the_two_hop_latencies():
    """Without an engine fit, a one-shot all-reduce of a batch-1 activation (7 KB) inside one NVLink domain is two
    barriers of one scale-up hop each (plus the extra bytes each GPU reads): on GB300 (scaleup_latency_us 1.5 from
    the hardware file) 2 x 1.5 us."""
    a = catalog.hardware("gb300-nvl72").value("scaleup_latency_us") * 1e-6
    vals = {"lat_link": a, "BW_link": 900e9, "e_ln": 1.0, "n_cus": 8, "D_dom": 72, **bind_fabric(),
            **default_custom_latencies(a)}
    n_, m_ = sp.Symbol("n", positive=True), sp.Symbol("m", positive=True)
    lat = float(allreduce_latency(n_, m_).subs({S[k]: v for k, v in vals.items()}).subs({n_: 2, m_: 7168}))
    assert lat == pytest.approx(2 * a, rel=1e-12)       # n = 2: no extra bytes, (n - 1)(1 - 2/n) = 0


def test_cpu_time_is_hidden_only_by_an_overlap_scheduler():
    """The CPU's step time adds to the GPU's without an overlap scheduler and vanishes behind it with one (at
    batch 1 the GPU's step is far longer than 1 ms of CPU time)."""
    hw = catalog.hardware("b200")
    off = _row(hw, step_overhead_ms=1.0, seq_overhead_us=0.0, scheduler_overlap=0.0)
    on = _row(hw, step_overhead_ms=1.0, seq_overhead_us=0.0, scheduler_overlap=1.0)
    assert off["t_overhead_ms"] == pytest.approx(1.0, rel=1e-9)
    assert on["t_overhead_ms"] == pytest.approx(0.0, abs=1e-12)
    assert off["step_ms"] - on["step_ms"] == pytest.approx(1.0, rel=1e-9)


def test_draft_passes_at_batch_one_cost_one_draft_layer_each():
    """MTP with 3 drafts at batch 1 on DeepSeek-V3 (one MTP layer, drafted one token per pass): three draft passes,
    each one MoE layer's kernels and gaps plus the LM head, so the draft time is 3x one pass."""
    hw = catalog.hardware("b200")
    one = _row(hw, pt={**PT, "spec_tokens": 1})["t_draft_ms"]
    three = _row(hw, pt={**PT, "spec_tokens": 3})["t_draft_ms"]
    assert one > 0
    assert three == pytest.approx(3 * one, rel=1e-6)


def test_variant_changes_only_its_parts():
    base, var = catalog.profile("trtllm"), catalog.profile("trtllm@min-latency")
    assert var.id == "trtllm@min-latency" and not var.variants
    changed = set(base.variants["min-latency"].params)
    assert changed == {"kernel_overhead_us", "scheduler_overlap", "layer_floor_us"}
    for name, v in base.values().items():
        if name not in changed:
            assert var.values()[name] == v, name
    assert var.kernel_overhead_us.value < base.kernel_overhead_us.value
    hw = catalog.hardware("b200")
    s_base = evaluate(Setup(hw, catalog.model("deepseek-r1"), base, weights="nvfp4"), PT).iloc[0]
    s_var = evaluate(Setup(hw, catalog.model("deepseek-r1"), var, weights="nvfp4"), PT).iloc[0]
    # the variant's smaller per-kernel gap shortens the gaps; the floors and collectives stay the default's
    assert s_var["t_kernel_gap_ms"] < s_base["t_kernel_gap_ms"]
    assert s_var["t_kernel_floor_ms"] == pytest.approx(s_base["t_kernel_floor_ms"], rel=1e-12)
    assert s_var["t_collective_latency_ms"] == pytest.approx(s_base["t_collective_latency_ms"], rel=1e-12)
    assert s_var["step_ms"] < s_base["step_ms"]


def test_unknown_variant_and_unknown_part_are_one_line_errors():
    with pytest.raises(SpecError, match="unknown variant 'fast'; choose one of min-latency"):
        catalog.profile("trtllm@fast")
    data = catalog.profile("trtllm").model_dump()
    data["variants"] = {"x": {"description": "d", "source": "https://example.org", "status": "estimate",
                              "params": {"kernel_gap_us": {"value": 1, "low": 1, "high": 1}}}}
    with pytest.raises(ValueError, match="unknown profile parameter 'kernel_gap_us'"):
        ProfileSpec.model_validate(data)


def test_frontier_without_engine_reads_the_default_profiles_envelope_and_calibration_the_profile_alone():
    """InferenceX's B300 DeepSeek-R1 frontier without MTP at 144 tok/s/user (n70) names no engine: with the mechanism
    envelope_over_engines it is read on the envelope of the default profiles (trtllm, sglang, vllm); trtllm@min-latency, fitted on curve-end reads only, is
    not a member; calibration (profile_alone) reads the profile alone, and its value is at most the envelope's."""
    from perfmodel.specs.records import read_records
    from perfmodel.validation.envelope import ENVELOPE_VARIANTS, envelope_members, profile_alone
    from perfmodel.validation.predict_rows import predict_values
    from perfmodel.validation.row_context import Unsupported
    from perfmodel.validation.samples import central_params
    assert "min-latency" not in ENVELOPE_VARIANTS
    off = profile_with("trtllm")          # the mechanism off: the profile and its min-latency variant
    assert [m[0] for m in envelope_members(off, central_params(off))] == ["trtllm", "trtllm@min-latency"]
    prof = profile_with("trtllm", "envelope_over_engines")
    labels = [m[0] for m in envelope_members(prof, central_params(prof))]
    assert labels == ["trtllm", "sglang", "vllm"]
    # n70, else (where the fitted curves end below 144 tok/s/user) the next no-engine frontier row they reach
    rows = [r for r in read_records("data/shared/curve-end.csv") if r.kind == "frontier" and not r.engine]
    rows.sort(key=lambda r: r.id != "n70")
    for rec in rows:
        note: list = []
        try:
            v = predict_values(rec, rec.hardware, prof, central_params(prof), note)[0]
            break
        except Unsupported:
            continue
    else:
        raise AssertionError("no no-engine frontier row of curve-end.csv is reached by the envelope")
    # the note names the members whose curve reaches the speed (which do depends on the fitted profiles)
    assert note[-1].startswith("frontier envelope over ") and "min-latency" not in note[-1]
    with profile_alone():
        try:
            alone = predict_values(rec, rec.hardware, prof, central_params(prof), [])[0]
        except Unsupported:     # the profile's own curve may end below the speed
            alone = float("-inf")
    assert alone <= v
