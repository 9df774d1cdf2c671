"""The hardware layer of the curve end (issue 37): each GPU's CUDA-graph node period and the kernel tables' per-call
overhead (kernel_fits.launch, perfmodel/kernels/launch.py), bound in place of the profile's per-kernel gap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mechanisms_on import profile_with

from perfmodel import catalog
from perfmodel.engine.kernel_bind import kernel_values
from perfmodel.kernels.launch import node_period, rubin_launch, table_launch
from perfmodel.specs.kernel_fits import LaunchCosts

FIXTURE = Path(__file__).parent / "fixtures" / "kernels"
TABLE_GPUS = ("h100-sxm", "h200-sxm", "b200", "b300", "gb200-nvl72", "gb300-nvl72")


def test_node_period_is_the_median_of_the_engines_minima_with_their_extremes():
    assert node_period({"sglang": 1.75, "trtllm": 1.76, "vllm": 1.5}) == (1.75, 1.5, 1.76)


def test_table_launch_reads_the_least_gemm_latency():
    """The fixture's GB200 TensorRT-LLM GEMM table (its only GEMM table): the node period is its least latency."""
    least = pd.read_csv(FIXTURE / "gb200" / "trtllm" / "gemm.csv.gz")["latency"].min() * 1e3
    b = table_launch(FIXTURE, "gb200")
    assert b["graph_node_us"]["value"] == pytest.approx(least, rel=2e-3)      # 3 significant figures
    assert b["harness_call_us"]["value"] == b["graph_node_us"]["value"]
    LaunchCosts.model_validate(b)                                             # sourced, with a stated range


def test_rubin_is_blackwell_times_half_the_generation_step():
    """Hopper 2.4 / 2.5 us (median 2.45), Blackwell 1.7 / 1.8 / 1.75 / 1.75 (median 1.75): the step is
    1.75 / 2.45 = 0.7143; Rubin 1.75 x 0.7143^0.5 = 1.479 us, range 1.75 x 0.7143 = 1.25 to 1.75; its harness
    overhead is the base GPU's (its curves are that GPU's)."""
    def block(v):
        return {"graph_node_us": {"value": v, "source": f"https://example.org/{v}"},
                "harness_call_us": {"value": v, "status": "estimate", "source": f"https://example.org/{v}"}}
    blocks = {g: block(v) for g, v in (("h100_sxm", 2.4), ("h200_sxm", 2.5), ("b200_sxm", 1.7), ("b300_sxm", 1.8),
                                       ("gb200", 1.75), ("gb300", 1.75))}
    r = rubin_launch(blocks, "gb300", "https://example.org/rubin")
    node = r["graph_node_us"]
    assert (node["value"], node["low"], node["high"]) == (1.48, 1.25, 1.75)
    assert node["status"] == "estimate" and "https://example.org/rubin" in node["source"]
    assert r["harness_call_us"]["value"] == 1.75


def test_catalog_launch_costs_differ_per_gpu_as_the_tables_do():
    """Hopper's node period is longer than Blackwell's (the tables: 2.4-2.5 against 1.7-1.8 us) and Rubin's is its
    own estimate, below GB300's, with a stated range; each is sourced."""
    node = {h: catalog.hardware(h).kernel_fits.launch.graph_node_us for h in (*TABLE_GPUS, "vr200-nvl72")}
    assert all(2.3 < node[h].value < 2.6 for h in ("h100-sxm", "h200-sxm"))
    assert all(1.6 < node[h].value < 1.85 for h in ("b200", "b300", "gb200-nvl72", "gb300-nvl72"))
    rubin = node["vr200-nvl72"]
    assert rubin.value < node["gb300-nvl72"].value and rubin.low < rubin.value < rubin.high
    assert rubin.high == pytest.approx(1.76) and rubin.range_note
    assert all(n.source.startswith("https://") for n in node.values())
    # Rubin's tables are GB300's: its floors are net of GB300's harness
    assert catalog.hardware("vr200-nvl72").kernel_fits.launch.harness_call_us.value == node["gb300-nvl72"].value


def test_binding_nets_the_floors_and_keeps_the_profile_gap():
    """GB300 with TensorRT-LLM: the per-kernel gap, floor share and layer floor stay the profile's (not bound from
    the tables: engine/kernel_bind.py), and with floors_net_of_harness the BF16 GEMM floor is the curves' median t0
    less the tables' 1.75 us per call."""
    hw = catalog.hardware("gb300-nvl72")
    v = kernel_values(hw, profile_with("trtllm", "floors_net_of_harness"), "fp8", "fp8", mla=True, lat_link_s=1.5e-6)
    assert not {"t_kern", "r_kf", "t_floor"} & set(v)
    t0 = sorted(c.params["t0_us"] for k, c in hw.kernel_fits.families["gemm"]["trtllm"].items()
                if k.endswith("/bfloat16"))
    assert v["t_gemm0"] == pytest.approx(max(t0[len(t0) // 2] - 1.75, 0.0) * 1e-6)
    # the mechanism off (the catalog profile): the plain median, as before it was written
    off = kernel_values(hw, profile_with("trtllm"), "fp8", "fp8", mla=True, lat_link_s=1.5e-6)
    assert off["t_gemm0"] == pytest.approx(float(np.median(t0)) * 1e-6)
    # the speed-of-light profile (engine none) keeps its zero gap: no engine curves, no launch costs
    assert "t_kern" not in kernel_values(hw, catalog.profile("speed-of-light"), "fp8", "fp8", True, 1.5e-6)


def test_curve_end_parts_name_each_gpus_figure_and_the_doc_table_is_current():
    """The step at a batch-1 DeepSeek-R1 curve end on GB300 and Rubin (trtllm): the kernel gaps are 1199 kernels x
    the profile's kernel_overhead_us, their set_by names each GPU's node period as the lower bound, Rubin's floors are GB300's
    curves carried over; docs/curve-end.md holds the generated per-GPU table with the catalog's launch costs (the
    step columns move with a refit of the profiles: regenerate with python -m perfmodel.analyses.curve_end_table
    --write)."""
    from perfmodel.analyses.curve_end import at_deployment, step_parts
    from perfmodel.analyses.curve_end_table import DOC, END, START, table
    for hw, node in (("gb300-nvl72", 1.75), ("vr200-nvl72", 1.49)):
        row = at_deployment(dict(hardware=hw, profile="trtllm", model="deepseek-r1", weights="nvfp4", kv_cache="fp8",
                                 batch=1, gpus=8, tp=8, ep=8), 1024, 1024)
        parts = {p["part"]: p for p in step_parts(row)}
        gap = catalog.profile("trtllm").kernel_overhead_us.value
        assert parts["kernel gaps"]["ms"] == pytest.approx(1199 * gap * 1e-3, rel=1e-9)
        assert f"CUDA-graph node period {node:g} us (estimate" in parts["kernel gaps"]["set_by"]
        assert "layer_floor_us" in parts["layer floors"]["set_by"]
        assert ("carried from another GPU's tables" in parts["kernel floors"]["set_by"]) == (hw == "vr200-nvl72")
    def hardware_cells(block: str) -> list[list[str]]:
        return [line.split("|")[1:5] for line in block.strip().splitlines()]
    doc = DOC.read_text().split(START, 1)[1].split(END, 1)[0]
    assert hardware_cells(doc) == hardware_cells(table())
