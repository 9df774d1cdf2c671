"""The step at a curve end, part by part, each part with what sets it (hardware file or engine profile).

At the high-interactivity end of a curve (batch 1 to a few) a decode step is mostly fixed time. Its parts, in ms per
step (the step equations' own split: equations/step.py, serving/aggregated.py columns t_*_ms):

    step = kernel work + kernel floors + kernel gaps + collective latency + layer floors + link + CPU + drafts

    kernel work         sum over kernels of max(FLOPs / (F e), bytes / (BW_hbm e))      hardware x profile efficiencies
    kernel floors       r_kf x sum over kernels of max(t0 - t_harness, 0) (the kernel tables' small-shape time of that
                        GPU and engine, net of the tables' own per-call node period where the hardware carries it;
                        r_kf the profile's fitted kernel_floor_share)
    kernel gaps         t_kern x kernels launched (the profile's fitted kernel_overhead_us; the GPU's CUDA-graph node
                        period, hardware kernel_fits.launch, is named beside it as its hardware lower bound)
    collective latency  per all-reduce: the engine's custom kernel fit, or hops of scaleup_latency_us / NCCL's per-hop
                        constants (equations/collectives.py); per all-to-all one scale-up (+ NIC) hop
    CPU                 t_step + B t_seq, hidden by the overlap scheduler's share q_os
    drafts              ceil((q - 1) / block) draft passes at the same per-kernel costs

``step_parts`` names them for one evaluated point; ``at_deployment`` evaluates a frontier's end deployment and keeps
its setup on the row (``row.attrs['setup']``), so that ``set_by`` names each part's figure and source for that GPU
and stack (``setup_sources``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalog

WORK = ("t_attn_proj_ms", "t_attn_core_ms", "t_experts_ms", "t_ffn_ms", "t_lm_head_ms", "t_mhc_ms", "t_indexer_ms")

PARTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("kernel work", WORK, "hardware HBM bandwidth and FLOP/s x profile efficiencies"),
    ("kernel floors", ("t_kernel_floor_ms",), "hardware kernel tables (t0 net of the tables' per-call overhead)"),
    ("kernel gaps", ("t_kernel_gap_ms",), "profile kernel_overhead_us x kernels launched"),
    ("collective latency", ("t_collective_latency_ms",), "hardware scaleup_latency_us and the engine's all-reduce"),
    ("layer floors", ("t_layer_floor_ms",), "profile layer_floor_us"),
    ("link transfers", ("t_link_ms",), "hardware link bandwidths x profile eff_link, less overlap"),
    ("CPU per step", ("t_overhead_ms",), "profile step/seq overhead, less scheduler_overlap"),
    ("draft passes", ("t_draft_ms",), "model draft head, ceil((q-1)/block) passes"),
)
"""(part, columns summed, what sets it)."""


def _sourced(name: str, x, unit: str) -> str:
    return f"{name} {x.value:g} {unit} ({x.status}; {x.source.split(' ; ')[0]})"


def setup_sources(setup) -> dict[str, str]:
    """Part -> what pins it on this GPU and stack: the hardware figure (value, status, first source) or the profile
    parameter (value; the profile's calibration), in the words of PARTS."""
    from ..engine.kernel_bind import engine_of
    hw, prof, sp = setup.hardware, setup.profile, setup.hardware.specs
    fits = hw.kernel_fits
    curves = fits is not None and any(engine_of(prof) in e for e in fits.families.values())
    launch = fits.launch if curves and fits is not None else None
    fitted = f"profile {prof.id}, fitted on serving records"
    out = {"kernel work": f"{hw.id}: " + ", ".join(
        _sourced(n, getattr(sp, n), u) for n, u in (("hbm_bandwidth_tbps", "TB/s"),) if getattr(sp, n, None))
        + f"; {prof.id} efficiencies"}
    out["kernel gaps"] = f"{fitted}: kernel_overhead_us {prof.kernel_overhead_us.value:g} us x kernels launched"
    if launch is not None:
        out["kernel gaps"] += " (" + _sourced(f"{hw.id} CUDA-graph node period", launch.graph_node_us, "us") \
            + ", its hardware lower bound)"
    net = f" net of {launch.harness_call_us.value:g} us per call" if launch is not None else ""
    derived = curves and any(c.status == "physics" for e in fits.families.values() for v in e.values()
                             for c in v.values())
    out["kernel floors"] = (f"{hw.id} {engine_of(prof)} kernel curves' t0 ("
                            + ("carried from another GPU's tables" if derived else "fitted on its kernel tables")
                            + f"){net} x {fitted}: kernel_floor_share {prof.kernel_floor_share.value:g}"
                            if curves else "none (no kernel tables)")
    out["collective latency"] = (f"{hw.id} " + _sourced("scaleup_latency_us", sp.scaleup_latency_us, "us")
                                 + ("; the engine's custom all-reduce fit (kernel tables)" if curves else ""))
    out["layer floors"] = f"profile {prof.id}: layer_floor_us {prof.layer_floor_us.value:g} us"
    out["CPU per step"] = (f"{fitted}: step_overhead_ms {prof.step_overhead_ms.value:g}, seq_overhead_us "
                           f"{prof.seq_overhead_us.value:g}, scheduler_overlap {prof.scheduler_overlap.value:g}")
    out["draft passes"] = f"{setup.model.id} draft head at the same per-kernel costs"
    return out


def step_parts(row) -> list[dict]:
    """The parts of one evaluated point's decode step: [{part, ms, share, set_by}] in PARTS order, plus 'other'
    (pipeline hops) where the parts do not add up to step_ms. ``set_by`` names the GPU's and stack's figure and
    source where the row carries its setup (``at_deployment``), else the generic owner."""
    step = float(row["step_ms"])
    setup = getattr(row, "attrs", {}).get("setup")
    named = setup_sources(setup) if setup is not None else {}
    out: list[dict] = []
    for part, cols, by in PARTS:
        by = named.get(part, by)
        ms = float(sum(float(row[c]) for c in cols if c in row and np.isfinite(row[c])))
        out.append({"part": part, "ms": ms, "share": ms / step if step > 0 else float("nan"), "set_by": by})
    rest = step - sum(p["ms"] for p in out)
    if abs(rest) > 1e-9 * max(step, 1e-12):
        out.append({"part": "other", "ms": rest, "share": rest / step, "set_by": "pipeline hops"})
    return out


def at_deployment(dep: dict, isl: float, osl: float) -> pd.Series:
    """Evaluate one deployment (a frontier's ``max_tps_per_user_deployment``: hardware, profile, model, formats,
    layout, drafts, batch) as a decode step of requests of isl / osl tokens; the evaluated row."""
    from ..engine.evaluate import Setup
    from ..serving.aggregated import evaluate
    setup = Setup(catalog.hardware(dep["hardware"]), catalog.model(dep["model"]), catalog.profile(dep["profile"]),
                  weights=dep["weights"], kv_cache=dep["kv_cache"], attention_weights=dep.get("attention_weights"))
    acc = dep.get("acceptance_length") or 1.0
    pt = dict(batch=dep["batch"], gpus=dep["gpus"], tp=dep["tp"], ep=dep["ep"], pp=dep.get("pp", 1.0),
              spec_tokens=dep.get("spec_tokens", 0.0), acc=acc, isl=isl, osl=osl, new=isl, mix=0.0)
    row = evaluate(setup, pt).iloc[0]
    row.attrs["setup"] = setup
    return row


def parts_line(parts: list[dict], top: int | None = None) -> str:
    """'kernel gaps 2.7 ms (39%), kernel floors 1.9 ms (27%), ...', largest first (parts under 0.5% left out)."""
    ps = sorted((p for p in parts if p["share"] >= 0.005), key=lambda p: -p["ms"])[:top]
    return ", ".join(f"{p['part']} {p['ms']:.3g} ms ({100 * p['share']:.0f}%)" for p in ps)
