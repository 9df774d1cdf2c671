"""The step at a curve end, part by part, each part with what sets it (hardware file or engine profile).

At the high-interactivity end of a curve (batch 1 to a few) a decode step is mostly fixed time. Its parts, in ms per
step (the step equations' own split: equations/step.py, serving/aggregated.py columns t_*_ms):

    step = kernel work + kernel floors + kernel gaps + collective latency + layer floors + link + CPU + drafts

    kernel work         sum over kernels of max(FLOPs / (F e), bytes / (BW_hbm e))      hardware x profile efficiencies
    kernel floors       r_kf sum over kernels of t0 (the kernel tables' small-shape time of that GPU and engine)
    kernel gaps         t_kern x kernels launched (the gap between kernels as the engine launches them:
                        CUDA-graph replay, programmatic dependent launch; profile or its variant)
    collective latency  per all-reduce: the engine's custom kernel fit, or hops of scaleup_latency_us / NCCL's per-hop
                        constants (equations/collectives.py); per all-to-all one scale-up (+ NIC) hop
    CPU                 t_step + B t_seq, hidden by the overlap scheduler's share q_os
    drafts              ceil((q - 1) / block) draft passes at the same per-kernel costs

``step_parts`` names them for one evaluated point; ``at_deployment`` evaluates a frontier's end deployment.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalog

WORK = ("t_attn_proj_ms", "t_attn_core_ms", "t_experts_ms", "t_ffn_ms", "t_lm_head_ms", "t_mhc_ms", "t_indexer_ms")

PARTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("kernel work", WORK, "hardware HBM bandwidth and FLOP/s x profile efficiencies"),
    ("kernel floors", ("t_kernel_floor_ms",), "hardware kernel tables (t0) x profile kernel_floor_share"),
    ("kernel gaps", ("t_kernel_gap_ms",), "profile kernel_overhead_us x kernels launched"),
    ("collective latency", ("t_collective_latency_ms",), "hardware scaleup_latency_us and the engine's all-reduce"),
    ("layer floors", ("t_layer_floor_ms",), "profile layer_floor_us"),
    ("link transfers", ("t_link_ms",), "hardware link bandwidths x profile eff_link, less overlap"),
    ("CPU per step", ("t_overhead_ms",), "profile step/seq overhead, less scheduler_overlap"),
    ("draft passes", ("t_draft_ms",), "model draft head, ceil((q-1)/block) passes"),
)
"""(part, columns summed, what sets it)."""


def step_parts(row) -> list[dict]:
    """The parts of one evaluated point's decode step: [{part, ms, share, set_by}] in PARTS order, plus 'other'
    (pipeline hops) where the parts do not add up to step_ms."""
    step = float(row["step_ms"])
    out: list[dict] = []
    for part, cols, by in PARTS:
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
    return evaluate(setup, pt).iloc[0]


def parts_line(parts: list[dict], top: int | None = None) -> str:
    """'kernel gaps 2.7 ms (39%), kernel floors 1.9 ms (27%), ...', largest first (parts under 0.5% left out)."""
    ps = sorted((p for p in parts if p["share"] >= 0.005), key=lambda p: -p["ms"])[:top]
    return ", ".join(f"{p['part']} {p['ms']:.3g} ms ({100 * p['share']:.0f}%)" for p in ps)
