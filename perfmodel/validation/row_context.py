"""One record's evaluation context: the setup with its parameter samples (``Ctx``), the tiling of operating points
over the samples, and the layout, lengths and disaggregated pools a record's blank cells default to (the defaults
the module docstring of validation/predict_rows.py lists)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import catalog
from ..acceptance_priors import record_acceptance
from ..arch.layout import expert_problem, layout_problem
from ..engine.evaluate import POINT_COLUMNS, Setup
from ..model import is_moe
from ..serving.dispatch import Pools, prefill_throughput, serve
from ..serving.lengths import workload_lengths
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from ..specs.records import Record
from .workload_versions import record_workload_spec

MEASURED_PREFILL_TOKENS_PER_GPU = 16384
"""The prefill step of the prefill_only records (LMSYS's large-scale EP setup: 16384 tokens per GPU per step), the
setup those rows measured; predictions of deployments use the engine's PREFILL_TOKENS_PER_GPU (engine/evaluate.py)."""


class Unsupported(Exception):
    """The row cannot be predicted by this model; the message is the reason."""


@dataclass
class Ctx:
    setup: Setup
    vals: dict            # symbol -> scalar or (S,) array
    acc: np.ndarray       # (S,) accepted tokens per step
    n: int                # S, number of parameter samples
    rate: np.ndarray      # (S,) the profile's per-draft acceptance rate (NaN: none)


def make_ctx(hardware: str, rec: Record, profile: ProfileSpec, params: dict[str, np.ndarray]) -> Ctx:
    hw, m = catalog.hardware(hardware), catalog.model(rec.model)
    setup = Setup(hw, m, profile, weights=rec.weights or "fp8", kv_cache=rec.kv_cache or "fp8")
    n = len(next(iter(params.values())))
    vals = setup.symbol_values(profile={k: np.asarray(params[k], float) for k in PROFILE_PARAMS})
    rate = np.broadcast_to(np.asarray(params["acceptance_rate"], float), (n,))
    return Ctx(setup, vals, record_acceptance(rec, rate, profile), n, rate)


def tile(ctx: Ctx, pts: dict, m: int) -> tuple[dict, dict]:
    """m operating points x S samples -> flat arrays of length S*m (sample-major)."""
    S = ctx.n
    p = {k: np.tile(np.broadcast_to(np.asarray(pts[k], float), (m,)), S)
         for k in (*POINT_COLUMNS, "concurrency", "max_running", "arrival_rate")
         if k != "acc" and k in pts}
    p["acc"] = np.repeat(ctx.acc, m)
    vals = {k: (np.repeat(v, m) if isinstance(v, np.ndarray) and v.size == S and S > 1 else v)
            for k, v in ctx.vals.items()}
    return p, vals


def eval_points(ctx: Ctx, pts: dict, m: int) -> pd.DataFrame:
    """m points of one decode instance (aggregated when prefill is mixed in, else decode-only) x S samples."""
    p, vals = tile(ctx, pts, m)
    return serve(ctx.setup, p, "aggregated" if float(np.max(pts["mix"])) > 0 else "decode_only", symbol_values=vals)


def prefill_rate(ctx: Ctx, gpus: float, tp: float, ep: float, isl: float, new: float) -> np.ndarray:
    """Input tokens/s per GPU of a prefill instance, per sample (S,), at the measured setup's prefill step
    (MEASURED_PREFILL_TOKENS_PER_GPU)."""
    p, vals = tile(ctx, dict(batch=1.0, gpus=gpus, tp=tp, ep=ep, pp=1.0, spec_tokens=0.0, isl=isl, osl=1.0,
                              new=new, mix=0.0), 1)
    rate = prefill_throughput(ctx.setup, p, vals, tokens_per_gpu=MEASURED_PREFILL_TOKENS_PER_GPU)
    return np.broadcast_to(rate, (ctx.n,))


def lengths(rec: Record) -> tuple[float, float, float]:
    if rec.workload:
        w = workload_lengths(record_workload_spec(rec))
        return w["isl"], w["osl"], w["new"]
    assert rec.isl is not None and rec.osl is not None  # a row without a workload gives both (Record._consistent)
    hit = rec.prefix_hit or 0.0
    return rec.isl, rec.osl, rec.isl * (1 - hit)


def layout(rec: Record, model, instance: int | None) -> tuple[float, float, float]:
    """(G, tp, ep) of the measured instance, blank cells filled with the documented defaults."""
    dp = bool(rec.dp_attention)
    G = instance
    if G is None:
        G = max(rec.tp or 1, rec.ep or 1) if dp else (rec.tp or 1)
    tp = rec.tp or (1 if dp else G)
    if dp and tp == G and G > 1:
        # attention data-parallel over the whole instance with tp = its GPUs is SGLang's "--tp G --dp G
        # --enable-dp-attention": attention DP G at attention TP 1 (a DP of one would not be data-parallel)
        tp = 1
    ep = rec.ep or (G if is_moe(model) else 1)
    if not dp and G != tp:
        if rec.tp is None:
            tp = G
    return float(G), float(tp), float(ep)


def layout_why(model, G: float, tp: float, ep: float) -> str | None:
    """Why the model cannot be split over this layout (``arch.layout.layout_problem``), or None."""
    problem = layout_problem(model, int(G), int(tp), int(ep))
    return problem[0] if problem else None

def decode_workers(rec: Record) -> int:
    """Decode instances of a disaggregated row: ``decode_workers``; blank -> the worker the row's layout
    describes (``tp``, ``ep`` and ``dp_attention`` are one decode instance's, data/README.md): an attention-DP
    worker spans its EP group (ep GPUs), a TP worker max(tp, ep) GPUs, when that divides decode_gpus; else one
    instance of decode_gpus (so the expert-TP of a layout is never computed over several workers' GPUs)."""
    if rec.decode_workers:
        return int(rec.decode_workers)
    size = (rec.ep if rec.dp_attention else max(rec.tp or 0, rec.ep or 0)) or 0
    if size and rec.decode_gpus and rec.decode_gpus % size == 0:
        return int(rec.decode_gpus // size)
    return 1


def prefill_pool(rec: Record, model) -> dict:
    """A disaggregated row's pools: ``decode_workers`` decode instances (the row's tp / ep / dp_attention)
    fed by ``prefill_workers`` prefill instances of prefill_gpus / prefill_workers GPUs (prefill_tp /
    prefill_ep; blank tp: all the instance's GPUs, or 1 with prefill_dp_attention; blank ep: the instance
    for MoE models). Blank prefill_workers: prefill_gpus over the size a published prefill_tp / prefill_ep
    layout spans; with no published layout either, the fewest workers whose default layout the model can
    be split into (heads over tp, expert width over expert-TP, experts over ep: P12 of a 128-head model is
    three TP4 workers). Returns dict(pf_gpus, pf_tp, pf_ep, instances, pf_instances)."""
    assert rec.prefill_gpus is not None  # callers pass pooled rows (prefill_gpus and decode_gpus given)
    dp = bool(rec.prefill_dp_attention)
    moe = is_moe(model)

    def pool(workers):
        Gp = rec.prefill_gpus / workers
        tpp = float(rec.prefill_tp or (1 if dp else Gp))
        epp = float(rec.prefill_ep or (Gp if moe else 1))
        why = layout_why(model, Gp, tpp, epp) or (expert_problem(model, int(epp)) if Gp == int(Gp) else None)
        return Gp, tpp, epp, why

    workers = rec.prefill_workers
    if not workers:
        size = (rec.prefill_ep if dp else max(rec.prefill_tp or 0, rec.prefill_ep or 0)) or 0
        if size:
            workers = rec.prefill_gpus // size if rec.prefill_gpus % size == 0 else 1
        else:
            fits = [w for w in range(1, rec.prefill_gpus + 1) if rec.prefill_gpus % w == 0 and not pool(w)[3]]
            workers = fits[0] if fits else 1
    Gp, tpp, epp, why = pool(workers)
    if why:
        raise Unsupported(f"prefill layout: {why}")
    return dict(pf_gpus=float(Gp), pf_tp=tpp, pf_ep=epp, instances=float(decode_workers(rec)),
                pf_instances=float(workers))

def pools_of(pool: dict) -> Pools:
    """The dispatcher's Pools of a ``prefill_pool`` dict (pf_gpus, pf_tp, pf_ep, instances, pf_instances)."""
    return Pools(pool["pf_gpus"], pool["pf_tp"], pool["pf_ep"], pool["instances"], pool["pf_instances"])
