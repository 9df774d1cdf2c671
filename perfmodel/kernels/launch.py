"""The fixed cost of one kernel in a replayed CUDA graph, per GPU, from the measured kernel tables.

aiconfigurator's collectors time each measured call inside a CUDA graph replayed back to back (collector/helper.py
``benchmark_with_power``: graph capture of ``repeat_n`` calls, latency = replay time / calls). A call with (next to)
no work therefore measures the period of one kernel node in a replayed graph: the launch of the node by the GPU's
front end, its smallest grid's start and drain, and the dependency wait on the node before it. The smallest GEMM of
each engine's table (m x 32 x 32 and the like) is such a call:

    t_node(GPU)  = median over the GPU's engines of  min over the engine's GEMM table of  latency        [us]
    range        = the least and the greatest of those per-engine minima

Two uses (engine/kernel_bind.py):
  * a graph-replayed decode step pays t_node per kernel it launches (the gap part of the curve end);
  * every row of the tables holds one t_node of harness, so a curve's small-shape floor t0 counts as an execution
    floor only net of it:  floor = max(t0 - t_harness, 0), t_harness = t_node of the GPU the table was measured on.

Vera Rubin has no table: its node period is an estimate from the one generation step the tables measure (Hopper to
Blackwell), stated as a range (``rubin_launch``); its curves are GB300's, so its harness overhead is GB300's.
"""

from __future__ import annotations

import numpy as np

from ..specs.common import Sourced
from .loader import HARDWARE_ID, SOURCE_COMMIT, SOURCE_REPO, load_table

HELPER_URL = f"{SOURCE_REPO}/blob/526f823b09bfb5d1375e0051ad8c90611684241a/collector/helper.py"
"""The collectors' timing harness (``benchmark_with_power``: CUDA-graph capture, replay time / calls)."""
HOPPER = ("h100_sxm", "h200_sxm")
BLACKWELL = ("b200_sxm", "b300_sxm", "gb200", "gb300")


def engine_minima(data_dir, gpu: str) -> dict[str, float]:
    """Engine -> the least latency in its GEMM table on ``gpu``, us (one near-empty graph node)."""
    df = load_table(data_dir, "gemm", ["latency"], gpu=gpu, required=False)
    if df.empty:
        return {}
    mins = df.groupby("engine", observed=True)["latency"].min() * 1e3      # ms -> us
    return {str(e): float(v) for e, v in mins.items() if np.isfinite(v)}


def node_period(minima: dict[str, float]) -> tuple[float, float, float]:
    """(central, low, high) node period, us: the median of the engines' minima and their extremes."""
    v = np.array(list(minima.values()), float)
    return float(np.median(v)), float(v.min()), float(v.max())


def _sig(x: float) -> float:
    return float(f"{x:.3g}")


def table_launch(data_dir, gpu: str) -> dict | None:
    """The ``launch`` block of a table GPU (None without a GEMM table)."""
    minima = engine_minima(data_dir, gpu)
    if not minima:
        return None
    mid, lo, hi = (_sig(x) for x in node_period(minima))
    src = (f"{SOURCE_REPO}/tree/{SOURCE_COMMIT}/aic-core/src/aiconfigurator_core/systems/data ; tables "
           f"{gpu}/*/gemm (Apache-2.0, converted copy in ../shared/data/kernels) ; {HELPER_URL}")
    each = ", ".join(f"{e} {v:.2f}" for e, v in sorted(minima.items()))
    node = Sourced(value=mid, status="estimate", low=min(lo, mid), high=max(hi, mid), source=src,
                   note=f"median over engines of the least GEMM latency in each engine's table ({each} us): one "
                        "near-empty kernel node of a graph the collector replays back to back",
                   range_note="the least and the greatest of the engines' minima")
    harness = node.model_copy(update={"note": "each table row times one call inside a replayed CUDA graph: one "
                                              "node period of this GPU (graph_node_us) is in every latency"})
    return {"graph_node_us": node.model_dump(exclude_none=True), "harness_call_us": harness.model_dump(exclude_none=True)}


def rubin_launch(blocks: dict[str, dict], base_gpu: str, rubin_source: str) -> dict:
    """Rubin's ``launch`` block from the table GPUs' blocks: no Rubin table and no published clock or launch figure,
    so the node period is Blackwell's (the median of the four Blackwell GPUs) times the Hopper-to-Blackwell step
    raised to a power between 0 (no gain) and 1 (the same step again): central the half step (geometric mean of the
    two ends). The harness overhead is that of ``base_gpu``, whose curves Rubin's are."""
    hop = float(np.median([blocks[g]["graph_node_us"]["value"] for g in HOPPER if g in blocks]))
    bw = float(np.median([blocks[g]["graph_node_us"]["value"] for g in BLACKWELL if g in blocks]))
    step = bw / hop
    lo, hi = _sig(bw * step), _sig(bw)
    mid = _sig(bw * step ** 0.5)
    node = Sourced(value=mid, status="estimate", low=lo, high=hi,
                   source=f"{blocks[base_gpu]['graph_node_us']['source']} ; {rubin_source}",
                   note=f"no kernel table, clock or launch figure published for Rubin: Blackwell's node period "
                        f"({bw:.3g} us, median of B200, B300, GB200, GB300) x the Hopper-to-Blackwell step "
                        f"({hop:.3g} -> {bw:.3g} us, x{step:.2f}) to the power 1/2",
                   range_note=f"no further gain ({hi:g} us, Blackwell's) to the whole generation step again "
                              f"({lo:g} us)")
    harness = dict(blocks[base_gpu]["harness_call_us"])
    harness["note"] = f"Rubin's curves are {base_gpu}'s (kernel_fits status physics): their floors hold {base_gpu}'s " \
                      f"per-call overhead"
    return {"graph_node_us": node.model_dump(exclude_none=True), "harness_call_us": harness}


def launch_blocks(data_dir, physics_targets: dict[str, str], rubin_source) -> dict[str, dict]:
    """Hardware id -> ``launch`` block, for every table GPU and every physics-derived hardware."""
    per_gpu = {g: b for g in HARDWARE_ID if (b := table_launch(data_dir, g)) is not None}
    out = {HARDWARE_ID[g]: b for g, b in per_gpu.items()}
    for hw_id, base in physics_targets.items():
        if base in per_gpu:
            out[hw_id] = rubin_launch(per_gpu, base, rubin_source(hw_id))
    return out
