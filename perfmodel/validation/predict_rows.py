"""Predict measured records with the catalog and the engine's profile, with a Monte Carlo band.

Documented defaults for blank cells ("not published"):
  * engine -> profile: the profile whose id is the engine name; ``deepseek`` (DeepSeek's own serving system) maps to
    ``sglang`` (the open reimplementation of the same DeepEP + two-batch-overlap design); ``tilert`` maps to
    ``trtllm`` (compiled low-latency kernels); blank engine -> ``trtllm``. See ENGINE_PROFILE.
  * weights / kv_cache: fp8.  spec_tokens: 0.  prefix_hit: 0.
  * acceptance: acceptance_length if published, else a sourced prior for the record's token source and model
    (acceptance_priors.py: random-token benchmarks accept almost every draft), else the profile's per-draft
    acceptance rate; a = (1 - p^(k+1)) / (1 - p) (the profile rate is sampled in its range for the band).
  * disaggregated point rows with prefill_gpus and decode_gpus: decode instances of decode_gpus / decode_workers
    GPUs (blank decode_workers: the worker the row's tp / ep describe, ``decode_workers``) fed by the prefill
    pool (``prefill_pool``), evaluated as that deployment (serving/disaggregated.disaggregated);
  * point rows, instance size: decode_gpus (decode_only / disaggregated) or gpus; blank gpus -> max(tp, ep) with
    attention DP, else tp.  blank tp -> 1 with attention DP, else all GPUs of the instance.  blank ep -> the
    instance size for MoE models, 1 for dense ones.
  * point rows, batch: concurrency (sequences in flight in the instance), else batch_per_gpu x GPUs, else the
    largest batch that fits in memory (offline max-load run).  A published concurrency above the modeled KV
    capacity is capped at the capacity (the excess requests queue; the capacity counts the KV a running request
    holds under the profile's allocation policy: isl + osl reserved on admission for TensorRT-LLM's default
    GUARANTEED_NO_EVICT, isl + osl/2 on average for paged on-demand KV; equations/memory.py) and flagged in
    ``note``; a
    batch_per_gpu above capacity is evaluated anyway and flagged.
  * prefill_only rows: 16384 tokens per GPU per step (the LMSYS setup), input_tps_per_gpu = T / t_prefill / G.
  * frontier rows: best over a log grid of batches for each candidate layout (the published gpus / tp / ep are
    constraints when given; otherwise TP in {1, 2, 4, 8} on one node, plus attention-DP + EP for MoE models), read
    at at_tps_per_user as the highest throughput among points at least that interactive (blank: the peak).
  * frontier rows with blank spec_tokens on a model with a draft head: the best over spec_tokens in
    FRONTIER_SPEC_DEPTHS (a blank depth on a frontier means "not stated", not "off"; "off" is spec_tokens 0).
  * frontier rows with a published concurrency: the hint is a constraint (FRONTIER_HINTS = "constrain"
FRONTIER_SPEC_DEPTHS = (0, 1, 2, 3)   # draft depths engines serve from an MTP head (the MTP 1-3 recipes)): the
    search only uses batches up to that concurrency (per decode instance), since the measured value is the
    throughput the deployment reached at that load. With FRONTIER_HINTS = "free" the search is unconstrained.
  * disaggregated frontier rows: decode on decode_gpus (in workers of ep GPUs when attention is data-parallel
    and ep divides decode_gpus, the concurrency spread over them), prefill on prefill_gpus (16384 tokens per
    GPU per step);
    the output rate is the lesser of decode and prefill capacity, and per-GPU figures divide by all GPUs.
  * ratio rows: frontier of ``hardware`` over frontier of ``hardware_b`` with the same hints.
The uncertainty band: N_SAMPLES draws (fixed seed), every profile parameter uniform in its [low, high] range,
propagated through the compiled equations; low/high are the 5th/95th percentiles.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import catalog, progress
from ..acceptance_priors import record_acceptance
from ..arch.layout import expert_problem, layout_problem
from ..engine.evaluate import POINT_COLUMNS, Setup
from ..errors import SpecError
from ..model import is_moe
from ..search import SLO, Best, best_over
from ..search.loop import Read
from ..serving.dispatch import Pools, Sessions, prefill_throughput, serve
from ..serving.lengths import workload_lengths
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from ..specs.records import Record
from .benchmark_runs import record_arrival_rate, record_instance_gpus, record_latency_limits, record_percentile
from .workload_versions import (
    record_host_tier,
    record_interactivity,
    record_running_cap,
    record_statistic,
    record_workload_spec,
    resolve_record,
)

ENGINE_PROFILE = {"sglang": "sglang", "vllm": "vllm", "trtllm": "trtllm", "dynamo-trtllm": "dynamo-trtllm",
                  "dynamo-sglang": "dynamo-sglang", "dynamo-vllm": "dynamo-vllm", "deepseek": "sglang",
                  "tilert": "trtllm"}
ENGINE_SPELLINGS = {"trt": "trtllm", "trt-llm": "trtllm", "tensorrt-llm": "trtllm", "tensorrt_llm": "trtllm",
                    "dynamo-trt": "dynamo-trtllm", "dynamo-trt-llm": "dynamo-trtllm", "dynamo-tensorrt-llm":
                    "dynamo-trtllm", "vllm-atom": "vllm", "atom": "vllm"}
"""Other spellings of the engine families as results publish them (InferenceX's framework column writes 'trt' and
'dynamo-trt'). ATOM (AMD's AiTer Optimized Model) is read with the vLLM profile: vLLM-ATOM is a vLLM plugin whose
scheduling, KV-cache management and batching stay vLLM's (ROCm blog 'vLLM-ATOM', 2026-05-07); standalone ATOM keeps
the same engine-core / scheduler design (ROCm blog 'ATOM: Unlocking Extreme AMD Instinct Inference', 2026-06-15).
No ATOM record is calibrated: its rows read vLLM's fitted efficiencies."""
MEASURED_PREFILL_TOKENS_PER_GPU = 16384
WAIT_SHARE = 0.01
"""Capacity waits above this share of TTFT mean the clients exceed the running capacity (the note of a point row;
validation/explain.py's binding limit reads the same threshold)."""
"""The prefill step of the prefill_only records (LMSYS's large-scale EP setup: 16384 tokens per GPU per step), the
setup those rows measured; predictions of deployments use the engine's PREFILL_TOKENS_PER_GPU (engine/evaluate.py)."""
N_SAMPLES = 200
SEED = 0
BAND = (5.0, 95.0)
FRONTIER_HINTS = "constrain"
FRONTIER_SPEC_DEPTHS = (0, 1, 2, 3)   # draft depths engines serve from an MTP head (the MTP 1-3 recipes)
BATCH_GRID = np.unique(np.round(np.geomspace(1, 65536, 73)))


class Unsupported(Exception):
    """The row cannot be predicted by this model; the message is the reason."""


def profile_id(rec: Record) -> str:
    eng = (rec.engine or "trtllm").lower()
    eng = ENGINE_SPELLINGS.get(eng, eng)
    if eng not in ENGINE_PROFILE:
        raise Unsupported(f"no profile for engine {rec.engine!r}")
    return ENGINE_PROFILE[eng]


# --------------------------------------------------------------------------------------------- parameters

def sample_params(profile: ProfileSpec, n: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """Profile parameter -> n uniform draws in [low, high] (plus 'acceptance_rate'). A decode attention efficiency
    the profile does not set apart from eff_attention (the same value and range) is the same draw."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name in PROFILE_PARAMS:
        p = getattr(profile, name)
        if name == "eff_attention_decode" and p == profile.eff_attention:
            out[name] = out["eff_attention"]
            continue
        out[name] = rng.uniform(p.low, p.high, n) if p.high > p.low else np.full(n, p.value)
    ar = profile.spec_decoding.acceptance_rate
    out["acceptance_rate"] = rng.uniform(ar.low, ar.high, n) if ar else np.full(n, np.nan)
    return out


def central_params(profile: ProfileSpec) -> dict[str, np.ndarray]:
    out = {name: np.array([getattr(profile, name).value]) for name in PROFILE_PARAMS}
    ar = profile.spec_decoding.acceptance_rate
    out["acceptance_rate"] = np.array([ar.value if ar else np.nan])
    return out


# --------------------------------------------------------------------------------------------- evaluation

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


def _tile(ctx: Ctx, pts: dict, m: int) -> tuple[dict, dict]:
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
    p, vals = _tile(ctx, pts, m)
    return serve(ctx.setup, p, "aggregated" if float(np.max(pts["mix"])) > 0 else "decode_only", symbol_values=vals)


def prefill_rate(ctx: Ctx, gpus: float, tp: float, ep: float, isl: float, new: float) -> np.ndarray:
    """Input tokens/s per GPU of a prefill instance, per sample (S,), at the measured setup's prefill step
    (MEASURED_PREFILL_TOKENS_PER_GPU)."""
    p, vals = _tile(ctx, dict(batch=1.0, gpus=gpus, tp=tp, ep=ep, pp=1.0, spec_tokens=0.0, isl=isl, osl=1.0,
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


def _valid(model, G: float, tp: float, ep: float) -> str | None:
    """Why the model cannot be split over this layout (``arch.layout.layout_problem``), or None."""
    problem = layout_problem(model, int(G), int(tp), int(ep))
    return problem[0] if problem else None


def point_inputs(rec: Record, m, profile: ProfileSpec | None = None) -> tuple[dict, bool]:
    """The operating point of a point row (aggregated / decode_only / disaggregated): (points, pooled), pooled
    when the row names its prefill and decode workers (evaluated with serving.disaggregated). The running cap is
    the record's ``max_running_requests``; where ``profile`` switches on record_running_cap, also a cap the
    notes quote (``record_running_cap``)."""
    isl, osl, new = lengths(rec)
    inst = rec.decode_gpus if rec.serving in ("decode_only", "disaggregated") else rec.gpus
    pooled = rec.serving == "disaggregated" and bool(rec.prefill_gpus and rec.decode_gpus)
    pp = 1.0
    if pooled:
        assert rec.decode_gpus is not None  # pooled: the row gives prefill_gpus and decode_gpus
        inst = rec.decode_gpus // decode_workers(rec)
    elif (named := record_instance_gpus(rec)) is not None:
        inst, pp = named[0], float(named[1])      # "N instance(s) on G GPUs": one instance of G / N GPUs
    G, tp, ep = layout(rec, m, inst or rec.gpus)
    if (why := _valid(m, G, tp, ep)) and not pooled and rec.dp_attention and rec.ep and rec.gpus \
            and rec.gpus % rec.ep == 0 and not _valid(m, float(rec.ep), tp, float(rec.ep)):
        # attention-DP replicas spanning their EP group ("7 replicas x DP4+EP4" recorded as gpus 28, ep 4): one
        # instance of gpus GPUs would need expert-TP gpus / ep, which the expert width may not divide
        G, ep, why = float(rec.ep), float(rec.ep), None
    if why:
        raise Unsupported(f"layout: {why}")
    per_instance = 1 / decode_workers(rec) if pooled else (G / rec.gpus if rec.gpus and rec.gpus > G else 1.0)
    conc, rate = np.nan, np.nan
    if rec.metric == "max_tps_per_user":
        batch = 1.0
    elif (served := record_arrival_rate(rec)) is not None and rec.serving in (None, "aggregated"):
        batch, rate = np.nan, served * per_instance      # Poisson arrivals (LoadGen Server): the open loop
    elif rec.concurrency is not None:
        batch, conc = np.nan, rec.concurrency * per_instance   # clients per instance: queueing.py solves B
    elif rec.batch_per_gpu is not None:
        batch = rec.batch_per_gpu * G
    else:
        batch = np.nan
    pts = dict(batch=batch, concurrency=conc, arrival_rate=rate, gpus=G, tp=tp, ep=ep, pp=pp,
               spec_tokens=float(rec.spec_tokens or 0),
               isl=isl, osl=osl, new=new, mix=1.0 if rec.serving in (None, "aggregated") else 0.0,
               max_running=_running_cap(rec, G, tp, pp, profile))
    return pts, pooled


def _running_cap(rec: Record, G: float, tp: float, pp: float, profile: ProfileSpec | None) -> float:
    """The row's running cap per scheduler (NaN: the engine's): the field, and the notes' serve flags where the
    profile switches on record_running_cap (specs/mechanisms.py)."""
    if profile is None or not profile.uses("record_running_cap"):
        return float(rec.max_running_requests or np.nan)
    cap = record_running_cap(rec, G / (tp * pp))
    return np.nan if cap is None else cap


def refuse_unfit(df: pd.DataFrame) -> None:
    """Unsupported (with the constraint) where the weights leave no room for one sequence's KV: such a
    deployment is never predicted as one running sequence."""
    bad = df["kv_max_batch"].to_numpy(float) < 1
    if bad.all():
        raise Unsupported(f"memory: {df['fit_reason'].to_numpy()[bad][0]}")


def predict_point(rec: Record, ctx: Ctx, note: list) -> np.ndarray:
    """A point row's predicted value per sample (S,): the column of ``point_frame`` the record names."""
    isl, osl, new = lengths(rec)
    m = ctx.setup.model
    if rec.serving == "prefill_only":
        if rec.metric != "input_tps_per_gpu":
            raise Unsupported(f"metric {rec.metric} of a prefill_only row")
        G, tp, ep = layout(rec, m, rec.prefill_gpus or rec.gpus)
        if (why := _valid(m, G, tp, ep)):
            raise Unsupported(f"layout: {why}")
        return prefill_rate(ctx, G, tp, ep, isl, new)
    frame = point_frame(rec, ctx, note)
    return frame.df[frame.metric].to_numpy(float) * frame.scale


@dataclass
class PointFrame:
    """A point row's evaluation: the serving layer's frame (one row per parameter sample, every output column),
    the column that holds the record's metric, the factor that turns it into the record's per-GPU basis, and the
    operating point it was evaluated at (``validation/explain.py`` reads it)."""

    df: pd.DataFrame
    metric: str
    scale: float
    pts: dict


def point_frame(rec: Record, ctx: Ctx, note: list) -> PointFrame:
    """Evaluate a point row (aggregated, decode_only, disaggregated, agentic) at its published operating point."""
    m = ctx.setup.model
    if rec.metric == "input_tps_per_gpu":
        raise Unsupported("input_tps_per_gpu is only modeled for prefill_only rows")
    pts, pooled = point_inputs(rec, m, ctx.setup.profile)
    conc = pts["concurrency"]
    agentic_wl = _agentic_workload(rec)
    if agentic_wl is not None:
        df, pts = _eval_agentic(rec, ctx, pts, m, pooled, agentic_wl)
        conc, pooled = pts["concurrency"], True      # per-GPU figures already count every GPU
        ceiling = agentic_wl.agentic.max_hit_rate
        note.append(f"modeled prefix hit {float(np.median(df['prefix_hit'])):.1%} (ceiling "
                    f"{'n/a' if ceiling is None else f'{ceiling:.0%}'}), "
                    f"evicted {float(np.median(df['evicted_share'])):.1%}, routing {df['routing'].iloc[0]}")
    else:
        df, conc = _shared_frame(rec, ctx, pts, pooled, note)
    refuse_unfit(df)
    if not np.isnan(conc) and (df["capacity_wait_ms"] > WAIT_SHARE * df["ttft_ms"]).any():
        note.append(f"concurrency {conc:.0f} exceeds the modeled running capacity "
                    f"({df['batch'].min():.0f}-{df['batch'].max():.0f} sequences); the excess waits for a slot")
    elif not df["fits"].iloc[0]:
        note.append(f"batch {df['batch'].iloc[0]:.0f} exceeds the modeled capacity ({df['max_batch'].iloc[0]:.0f}); "
                    "evaluated anyway")
    metric = "tps_per_user" if rec.metric == "max_tps_per_user" else rec.metric
    if agentic_wl is not None:
        metric = agentic_metric(rec, df)
    elif record_percentile(rec) == 99.0 and metric in ("ttft_ms", "tpot_ms"):
        metric = metric.replace("_ms", "_p99_ms")          # the queue's P99 (validation/percentiles.py)
    scale = 1.0
    if rec.gpus and rec.serving == "disaggregated" and metric.endswith("_per_gpu") and not pooled:
        scale = pts["gpus"] / rec.gpus
    return PointFrame(df, metric, scale, pts)


_FRAMES: contextvars.ContextVar[dict | None] = contextvars.ContextVar("shared_point_frames", default=None)


@contextlib.contextmanager
def shared_point_frames():
    """Inside: point rows (not agentic) that differ only in their metric and value, such as one run's TPOT and
    TTFT records, share one evaluation of their operating point (its frame holds every column). For a caller
    that predicts many records with the SAME parameter samples and profile objects inside (one
    ``batch_predict.predict_matrix`` call): the frame is the one each record would get on its own."""
    token = _FRAMES.set({})
    try:
        yield
    finally:
        _FRAMES.reset(token)


def _shared_frame(rec: Record, ctx: Ctx, pts: dict, pooled: bool, note: list) -> tuple[pd.DataFrame, float]:
    """``_eval_point`` once per operating point inside ``shared_point_frames`` (every field of the record but id,
    metric and value, the metric's batch-1 reading, the hardware, the profile object), else every time."""
    memo = _FRAMES.get()
    if memo is None:
        return _eval_point(rec, ctx, pts, pooled, note)
    key = (rec.model_dump_json(exclude={"id", "metric", "value"}), rec.metric == "max_tps_per_user",
           ctx.setup.hardware.id, id(ctx.setup.profile), ctx.setup.weights, ctx.setup.kv_cache)
    if key not in memo:
        added: list = []
        memo[key] = (*_eval_point(rec, ctx, pts, pooled, added), added)
    df, conc, added = memo[key]
    note.extend(added)
    return df, conc


def _eval_point(rec: Record, ctx: Ctx, pts: dict, pooled: bool, note: list) -> tuple[pd.DataFrame, float]:
    """A point row that is not agentic: (its frame, the clients it is read at). Disaggregated on named pools
    (``_eval_disaggregated``), else one instance at the published load; a Poisson rate above the modeled
    capacity is read at the run's Little's-law concurrency."""
    conc = pts["concurrency"]
    if pooled:
        return _eval_disaggregated(rec, ctx, pts, ctx.setup.model), conc
    df = eval_points(ctx, pts, 1)
    if np.isfinite(pts.get("arrival_rate", np.nan)) and df["fit_reason"].astype(str).str.startswith("arrival_rate").any():
        # the run served a Poisson rate above the modeled capacity: the open loop has no steady state, so
        # the row is read at the requests it kept in flight (its Little's-law concurrency), a closed loop
        note.append(f"Poisson rate {pts['arrival_rate']:.3g}/s per instance is above the modeled capacity; "
                    "read at the run's Little's-law concurrency (closed loop)")
        conc = np.nan if rec.concurrency is None else rec.concurrency * pts["gpus"] / (rec.gpus or pts["gpus"])
        df = eval_points(ctx, {**pts, "arrival_rate": np.nan, "concurrency": conc}, 1)
    return df, conc


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
        why = _valid(model, Gp, tpp, epp) or (expert_problem(model, int(epp)) if Gp == int(Gp) else None)
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


def _eval_disaggregated(rec: Record, ctx: Ctx, pts: dict, model) -> pd.DataFrame:
    """A disaggregated point (``prefill_pool``), the concurrency spread over the decode instances; TTFT
    through the closed loop (serving/disaggregated.py)."""
    p, vals = _tile(ctx, pts, 1)
    return serve(ctx.setup, p, "disaggregated", pools=pools_of(prefill_pool(rec, model)), symbol_values=vals)


def pools_of(pool: dict) -> Pools:
    """The dispatcher's Pools of a ``prefill_pool`` dict (pf_gpus, pf_tp, pf_ep, instances, pf_instances)."""
    return Pools(pool["pf_gpus"], pool["pf_tp"], pool["pf_ep"], pool["instances"], pool["pf_instances"])


def _agentic_workload(rec: Record):
    """The row's workload spec when it is agentic (sessions), else None."""
    if not rec.workload:
        return None
    w = record_workload_spec(rec)
    return w if w.kind == "agentic" else None


def _eval_agentic(rec: Record, ctx: Ctx, pts: dict, model, pooled: bool, w) -> tuple[pd.DataFrame, dict]:
    """An agentic point row: sessions with prefix-cache residency (serving/sessions.agentic), on disaggregated
    pools when the row is disaggregated (serving/sessions.agentic_disaggregated). The published concurrency is
    spread over the workers (aggregated: gpus / instance GPUs; disaggregated: the decode instances); prefix
    routing runs over those workers. A disaggregated row without worker columns gets prefill instances laid out
    like the decode instance (prefill_gpus / instance GPUs of them). KV host tier: on where the notes name one
    (HiCache, LMCache, a DRAM tier: ``record_host_tier``). A published ``prefix_hit`` is the measured hit, forced
    (serving/sessions.agentic ``prefix_hit``), not the cache model's. ttft_ms is the statistic the record names
    (``agentic_metric``)."""
    if rec.serving == "disaggregated":
        pts, pool = agentic_pool_inputs(rec, model, pts, pooled)
        p, vals = _tile(ctx, pts, 1)
        df = serve(ctx.setup, p, "disaggregated", pools=pools_of(pool), symbol_values=vals,
                   sessions=Sessions(w.agentic.pause_s, record_host_tier(rec), w.agentic, prefix_hit=rec.prefix_hit))
        return df, pts
    a = agentic_inputs(rec, model, pts, w, ctx.setup.profile)
    p, vals = _tile(ctx, a.pts, 1)
    df = serve(ctx.setup, p, "aggregated", sessions=a.sessions(w), symbol_values=vals)
    return finish_agentic(a, df), a.pts


def agentic_pool_inputs(rec: Record, model, pts: dict, pooled: bool) -> tuple[dict, dict]:
    """A disaggregated agentic row's decode point (concurrency = lanes per decode instance) and pools
    (``prefill_pool``; without worker columns, prefill instances laid out like the decode instance)."""
    G = pts["gpus"]
    if not (rec.prefill_gpus and rec.decode_gpus):
        raise Unsupported("disaggregated agentic row without prefill_gpus / decode_gpus")
    if pooled:
        pool = prefill_pool(rec, model)
    else:
        if rec.prefill_gpus % G or rec.decode_gpus % G:
            raise Unsupported(f"prefill_gpus {rec.prefill_gpus:g} / decode_gpus {rec.decode_gpus:g} are not "
                              f"whole instances of {G:g} GPUs; give prefill_workers / decode_workers")
        pool = dict(pf_gpus=G, pf_tp=pts["tp"], pf_ep=pts["ep"], instances=rec.decode_gpus / G,
                    pf_instances=rec.prefill_gpus / G)
    conc = rec.concurrency / pool["instances"] if rec.concurrency is not None else np.nan
    return {**pts, "concurrency": conc, "mix": 0.0}, pool


@dataclass
class AgenticInputs:
    """An aggregated agentic point row as serving/sessions.agentic takes it (``agentic_inputs``)."""

    pts: dict                  # the operating point (per instance), concurrency = lanes per instance
    workers: float             # instances the published deployment runs (prefix routing over them)
    host: bool                 # KV host tier (record_host_tier)
    hit: float                 # measured prefix hit forced, NaN when the cache model decides
    q: float | None            # E2E per-user speed percentile (tps_per_user rows on e2e workloads), else None
    ttft_qs: tuple             # TTFT percentiles over requests the row needs ((90,) for a P90 TTFT)

    def sessions(self, w) -> Sessions:
        """The dispatcher's Sessions of workload spec ``w`` with this row's options (``workers`` may be an array
        when rows are stacked: ``batch_predict``)."""
        return Sessions(w.agentic.pause_s, self.host, w.agentic, self.q, workers=self.workers, prefix_hit=self.hit,
                        ttft_percentiles=self.ttft_qs)


def agentic_inputs(rec: Record, model, pts: dict, w, profile: ProfileSpec | None = None) -> AgenticInputs:
    """The published concurrency spread over the workers (gpus / instance GPUs; plain TP workers where the row's
    tp is smaller than its gpus), the host tier, the forced hit and the statistics the row names."""
    G = pts["gpus"]
    if not rec.dp_attention and rec.tp and rec.gpus and rec.gpus > rec.tp and rec.gpus % rec.tp == 0 \
            and not _valid(model, rec.tp, rec.tp, min(pts["ep"], rec.tp)):
        G = float(rec.tp)        # plain TP workers (the recipes' "2 workers x TP4"), not one attention-DP instance
        pts = {**pts, "gpus": G, "tp": G, "ep": min(pts["ep"], G)}
    workers = max((rec.gpus or G) / G, 1.0)
    conc = rec.concurrency / workers if rec.concurrency is not None else np.nan
    stat = record_statistic(rec)
    # the notes' 'intvty' read as 1 / ITL where the profile switches on record_intvty_itl (specs/mechanisms.py)
    itl_reading = profile is not None and profile.uses("record_intvty_itl")
    e2e = rec.metric == "tps_per_user" and (record_interactivity(rec, w) if itl_reading else w.interactivity) == "e2e"
    return AgenticInputs({**pts, "concurrency": conc}, workers, record_host_tier(rec),
                         np.nan if rec.prefix_hit is None else float(rec.prefix_hit),
                         (50.0 if stat in ("mean", "p50") else float(stat[1:])) if e2e else None,
                         (float(stat[1:]),) if rec.metric == "ttft_ms" and stat in ("p90", "p95") else ())


def finish_agentic(a: AgenticInputs, df: pd.DataFrame) -> pd.DataFrame:
    """The E2E per-user speed as ``tps_per_user`` where the row reads it."""
    return df.assign(tps_per_user=df[f"tps_per_user_e2e_p{a.q:g}"]) if a.q is not None else df


def agentic_metric(rec: Record, df: pd.DataFrame) -> str:
    """The column of an agentic evaluation holding the statistic the record quotes (``record_statistic``):
    TTFT mean -> the mean request's closed-loop mean; P50 -> the median request's P50; P90 / P95 -> the request
    samples' percentile (length spread and queue tail); TPOT and per-GPU throughput -> the means the model
    computes (a mean TPOT over requests is the step over the acceptance at the mean batch)."""
    stat = record_statistic(rec)
    if rec.metric == "ttft_ms":
        col = {"mean": "ttft_mean_request_ms", "p90": "ttft_p90_request_ms", "p95": "ttft_p95_request_ms"}.get(
            stat, "ttft_ms")
        return col if col in df else "ttft_ms"
    return "tps_per_user" if rec.metric == "max_tps_per_user" else rec.metric


def _candidates(rec: Record, model, instance: int | None) -> list[tuple[float, float, float]]:
    moe = is_moe(model)
    if instance is not None or rec.tp is not None or rec.ep is not None:
        if instance is None and rec.tp is not None and not rec.dp_attention:
            instance = rec.tp
        if instance is not None and rec.tp is None and not rec.dp_attention:
            # dp_attention not published: try both plain TP (within a domain) and attention-DP + EP
            outs = [(float(instance), 1.0, float(rec.ep or instance))] if moe else []
            outs += [(float(instance), float(t), float(rec.ep or (instance if moe else 1)))
                     for t in (1, 2, 4, 8) if instance % t == 0 and (moe or t == instance)]
            if not outs:     # dense on a whole domain (an NVL72) with no layout: instances of up to 8 GPUs (TP)
                outs = [(float(t), float(t), 1.0) for t in (1, 2, 4, 8) if instance % t == 0]
            return sorted(set(outs))
        return [layout(rec, model, instance)]
    outs = [(float(t), float(t), float(t if moe else 1)) for t in (1, 2, 4, 8)]
    if moe:
        outs.append((8.0, 1.0, 8.0))
    return outs


def _eval_disaggregated_grid(rec: Record, ctx: Ctx, pts: dict, nb: int, G: float, model, search) -> pd.DataFrame:
    """A disaggregated frontier row over a batch grid: the published split (decode workers of G GPUs tiling
    decode_gpus, the prefill pool of ``prefill_pool``) through the closed loop, or, without a published split,
    the pool search (serving/pools.py) choosing the prefill layout and both counts per point."""
    p, vals = _tile(ctx, pts, nb)
    if search is not None:
        return serve(ctx.setup, p, "disaggregated", search=search, symbol_values=vals)
    assert rec.decode_gpus is not None  # no pool search: the row gives prefill_gpus and decode_gpus (split)
    pool = prefill_pool(rec.model_copy(update={"decode_workers": int(rec.decode_gpus // G)}), model)
    return serve(ctx.setup, p, "disaggregated", pools=pools_of(pool), symbol_values=vals)


def open_loop_points(ctx: Ctx, pts: dict, m: int) -> pd.DataFrame:
    """The batch grid as Poisson arrival rates (a LoadGen Server / Interactive run): each point's closed-loop
    request rate X(B) (requests/s per instance) is offered as an open loop, lambda = X(B), whose batch
    (B = lambda S), queue and P99 latencies serving/queueing.py solves. Two vectorized evaluations."""
    closed = eval_points(ctx, pts, m)
    p, vals = _tile(ctx, {**pts, "batch": np.nan}, m)
    p["arrival_rate"] = closed["request_rate_per_s"].to_numpy(float)
    return serve(ctx.setup, p, "aggregated", symbol_values=vals)


def spec_depths(rec: Record, m) -> tuple[int, ...]:
    """Draft depths a frontier row searches: the published spec_tokens; blank on a model that ships a draft
    head (the curve is the best over configurations, depth unstated) -> FRONTIER_SPEC_DEPTHS; else 0."""
    if rec.spec_tokens is not None:
        return (int(rec.spec_tokens),)
    return FRONTIER_SPEC_DEPTHS if m.mtp is not None else (0,)


def multi_domain_candidates(model, domain: int) -> list[tuple[float, float, float]]:
    """Instances of 2 and 4 scale-up domains (over the NIC), for a model no single domain holds: MoE with
    attention-DP + EP over all GPUs, or TP = one domain x EP over all; dense with TP over all GPUs."""
    outs = []
    for k in (2, 4):
        G = float(k * domain)
        outs += [(G, 1.0, G), (G, float(domain), G)] if is_moe(model) else [(G, G, 1.0)]
    return [c for c in outs if not _valid(model, *c)]


SPEED_METRICS = ("tps_per_user", "max_tps_per_user")
THROUGHPUT_METRICS = ("output_tps_per_gpu", "total_tps_per_gpu", "total_tps_per_mw")


@dataclass(frozen=True)
class FrontierRow:
    """What a frontier row searches: its model, the decode instance size it publishes (``inst`` GPUs, ``pp``
    stages; None: not published), the benchmark's latency limits as an ``slo`` (search.SLO; read under Poisson
    arrivals), whether a disaggregated row publishes its pool ``split``, and the prefill-pool search (``pools``,
    set once the row has a valid layout) of a disaggregated row that does not."""

    rec: Record
    model: Any
    inst: int | None
    pp: float
    slo: SLO | None
    split: bool
    lengths: tuple[float, float, float]     # isl, osl, new input tokens per request
    pools: Any = None

    @property
    def disagg(self) -> bool:
        return self.rec.serving == "disaggregated"


def frontier_row(rec: Record, ctx: Ctx) -> FrontierRow:
    """The search a frontier row asks for (``FrontierRow``)."""
    lens = lengths(rec)
    disagg = rec.serving == "disaggregated"
    inst = rec.decode_gpus if disagg else rec.gpus
    pp = 1.0
    if not disagg and (named := record_instance_gpus(rec)) is not None:
        inst, pp = named[0], float(named[1])     # "N instance(s) on G GPUs": instances of G / N GPUs
    if disagg and rec.dp_attention and rec.ep and rec.decode_gpus and rec.decode_gpus % rec.ep == 0:
        # a decode worker spans its EP group (attention-DP over the same GPUs): D20 EP4 = 5 workers of 4 GPUs
        # (one 20-GPU instance would need expert-TP 5, which does not divide the expert width)
        inst = rec.ep
    split = disagg and bool(rec.prefill_gpus and rec.decode_gpus)
    return FrontierRow(rec, ctx.setup.model, inst, pp, record_latency_limits(rec) if not disagg else None, split,
                       lens)


def _pool_search(rec: Record, ctx: Ctx):
    """The prefill-pool search (serving/pools.py) of a disaggregated row that publishes no split."""
    from ..analyses.deployments import DeploymentSpace, prefill_layouts
    from ..serving.pools import PoolSearch, cluster_budget
    domain = int(ctx.setup.symbol_values()["D_dom"])
    return PoolSearch(prefill_layouts(ctx.setup.model, domain, DeploymentSpace(
        pf_tp=(rec.prefill_tp,) if rec.prefill_tp else None, pf_ep=(rec.prefill_ep,) if rec.prefill_ep else None)),
        cluster_budget(domain, rec.gpus))


def _batch_grid(row: FrontierRow, G: float) -> np.ndarray:
    """Batches (sequences in flight per decode instance of G GPUs) a candidate is read at: BATCH_GRID, up to a
    published concurrency where FRONTIER_HINTS constrain."""
    rec, grid = row.rec, BATCH_GRID
    if FRONTIER_HINTS == "constrain" and rec.concurrency is not None:
        if row.split:
            assert rec.decode_gpus is not None  # split: both pools given
            cap = rec.concurrency * G / rec.decode_gpus          # concurrency spread over the decode workers
        elif row.disagg:
            cap = rec.concurrency
        else:
            cap = rec.concurrency * (G / rec.gpus if (rec.gpus and rec.gpus > G) else 1.0)
        grid = np.unique(np.append(grid[grid < cap], cap))
    return grid


def _objective(row: FrontierRow, df: pd.DataFrame, user: np.ndarray) -> np.ndarray:
    """The row's metric at each point, shaped like ``user`` (tokens/s per user, or per GPU / MW)."""
    rec = row.rec
    if rec.metric in SPEED_METRICS:
        return user
    if rec.metric not in THROUGHPUT_METRICS:
        raise Unsupported(f"metric {rec.metric} on a frontier row")
    # disaggregated: every GPU of both pools counted (serving/disaggregated._pooled); a published gpus that
    # differs from prefill_gpus + decode_gpus is the denominator of the measured figure
    val = df[rec.metric].to_numpy(float).reshape(user.shape)
    if row.split and rec.gpus:
        assert rec.prefill_gpus is not None and rec.decode_gpus is not None  # split: both given
        val = val * (rec.prefill_gpus + rec.decode_gpus) / rec.gpus
    return val


def _read(row: FrontierRow, ctx: Ctx, cand) -> Read | None:
    """One candidate ((G, tp, ep), draft depth k) over its batch grid x S samples (None: it cannot tile the
    published decode pool): closed loop, the published or searched pools, or Poisson arrivals under an SLO."""
    (G, tp, ep), k = cand
    rec = row.rec
    if row.split and rec.decode_gpus % G:
        return None                                                 # decode workers of G GPUs must tile decode_gpus
    kctx = dataclasses.replace(ctx, acc=record_acceptance(rec.model_copy(update={"spec_tokens": k}), ctx.rate,
                                                                ctx.setup.profile))
    grid = _batch_grid(row, G)
    nb = len(grid)
    isl, osl, new = row.lengths
    pts = dict(batch=grid, gpus=G, tp=tp, ep=ep, pp=row.pp if G % (tp * row.pp) == 0 else 1.0,
               spec_tokens=float(k), isl=isl, osl=osl, new=new, mix=0.0 if row.disagg else 1.0)
    if row.disagg:
        df = _eval_disaggregated_grid(rec, kctx, pts, nb, G, row.model, row.pools)
    elif row.slo is not None:
        df = open_loop_points(kctx, pts, nb)
    else:
        df = eval_points(kctx, pts, nb)
    user = df["tps_per_user"].to_numpy(float).reshape(ctx.n, nb)
    return Read(df["fits"].to_numpy().reshape(ctx.n, nb), _objective(row, df, user), user, df)


def _closed_loop_reads(row: FrontierRow, ctx: Ctx, cands: list) -> list[Read]:
    """Every candidate of an aggregated row without latency limits through ONE closed-loop evaluation: each
    candidate's points tiled as ``_read`` tiles them (``_tile``), concatenated, served once, and split back (the
    evaluation is elementwise, so each candidate's numbers are those of its own call)."""
    rec, S = row.rec, ctx.n
    isl, osl, new = row.lengths
    parts, sizes = [], []
    for (G, tp, ep), k in cands:
        kctx = dataclasses.replace(ctx, acc=record_acceptance(rec.model_copy(update={"spec_tokens": k}), ctx.rate,
                                                                ctx.setup.profile))
        grid = _batch_grid(row, G)
        parts.append(_tile(kctx, dict(batch=grid, gpus=G, tp=tp, ep=ep, pp=row.pp if G % (tp * row.pp) == 0 else 1.0,
                                      spec_tokens=float(k), isl=isl, osl=osl, new=new, mix=1.0), len(grid))[0])
        sizes.append(len(grid))
    p = {key: np.concatenate([q[key] for q in parts]) for key in parts[0]}
    vals = {key: (np.concatenate([np.repeat(v, m) for m in sizes]) if isinstance(v, np.ndarray) and v.size == S
                  and S > 1 else v) for key, v in ctx.vals.items()}
    df = serve(ctx.setup, p, "aggregated", symbol_values=vals)
    out, start = [], 0
    for nb in sizes:
        sub = df.iloc[start:start + S * nb].reset_index(drop=True)
        start += S * nb
        user = sub["tps_per_user"].to_numpy(float).reshape(S, nb)
        out.append(Read(sub["fits"].to_numpy().reshape(S, nb), _objective(row, sub, user), user, sub))
    return out


def _scan(row: FrontierRow, ctx: Ctx, cands: list) -> Best:
    """The search (search.best_over) over the candidate layouts x draft depths: the best value per sample among
    the points that fit and meet the row's SLO (or its at_tps_per_user). An aggregated row without latency limits
    evaluates all its candidates in one call (``_closed_loop_reads``)."""
    rec = row.rec
    target = rec.at_tps_per_user if rec.metric not in SPEED_METRICS else None
    todo = list(itertools.product(cands, spec_depths(rec, row.model)))
    if todo and not row.disagg and row.slo is None:
        return best_over(_closed_loop_reads(row, ctx, todo), lambda r: r, ctx.n, min_speed=target)
    return best_over(todo, lambda c: _read(row, ctx, c), ctx.n, slo=row.slo, min_speed=target)


def _multi_domain_scan(row: FrontierRow, ctx: Ctx, note: list) -> Best:
    """Nothing on one scale-up domain holds the weights (DeepSeek-R1 FP8 on 8 x H100): an engine runs the instance
    over the fewest whole domains that do (2, 4, 8), its collectives crossing the NIC (equations/collectives)."""
    m = row.model
    domain = int(ctx.setup.symbol_values()["D_dom"])
    for nodes in (2, 4, 8):
        G = float(nodes * domain)
        multi = [(G, float(t), G if is_moe(m) else 1.0) for t in (1, 2, 4, 8, G) if G % t == 0
                 and (is_moe(m) or t == G)]
        found = _scan(row, ctx, [c for c in dict.fromkeys(multi) if not _valid(m, *c)])
        if found.fit_any:
            note.append(f"no layout on one {domain}-GPU domain fits the weights; instances of {nodes} domains")
            break
    return found


def frontier_value(rec: Record, ctx: Ctx, note: list | None = None,
                   cands_override: list | None = None) -> np.ndarray:
    """Best modeled value per sample (S,) on the frontier, read at at_tps_per_user (or the peak).

    A row that publishes no layout, on a model none of the single-node candidates holds in memory, is searched
    again over instances of 2 and 4 scale-up domains (``multi_domain_candidates``: e.g. DeepSeek-R1 FP8, 671 GB
    of weights, needs two 8 x 80 GB H100 nodes)."""
    note = [] if note is None else note
    row = frontier_row(rec, ctx)
    problems = {c: _valid(row.model, *c) for c in (cands_override or _candidates(rec, row.model, row.inst))}
    cands = [c for c, why in problems.items() if not why]
    if not cands:
        raise Unsupported(f"layout: {next(iter(problems.values()), f'no candidate layout on {row.inst} GPUs')}")
    if row.disagg and not row.split:
        row = dataclasses.replace(row, pools=_pool_search(rec, ctx))
    found = _scan(row, ctx, cands)
    if not found.fit_any and not (row.inst or rec.gpus or rec.tp or rec.ep):
        found = _multi_domain_scan(row, ctx, note)
    best = np.where(np.isfinite(found.value), found.value, np.nan)
    if not np.isnan(best).all():
        return best
    if rec.at_tps_per_user is not None and np.isfinite(found.peak_speed).any():
        raise Unsupported(f"modeled frontier ends at {np.nanmax(found.peak_speed):.0f} tok/s/user, below the "
                          f"target {rec.at_tps_per_user:g}")
    unpublished = row.inst is None and rec.tp is None and rec.ep is None
    if cands_override is None and unpublished and not np.isfinite(found.peak_speed).any():
        more = multi_domain_candidates(row.model, int(ctx.setup.symbol_values()["D_dom"]))
        if more:
            return frontier_value(rec, ctx, note, cands_override=more)
    raise Unsupported("no candidate deployment fits in memory" + (
        f" (up to {4 * int(ctx.setup.symbol_values()['D_dom'])} GPUs)" if cands_override else ""))


TTFT_LIMIT = re.compile(r"TTFT[^0-9<>=]{0,24}?(?:<=|<|\u2264|under|below|within|limit(?:\s+of)?)\s*"
                        r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*(ms|s)\b", re.IGNORECASE)
TTFT_LIMIT_AFTER = re.compile(r"\band\s+([0-9][0-9,]*(?:\.[0-9]+)?)\s*(ms|s)\s+TTFT\b", re.IGNORECASE)
"""An SLO tier written value first ("20 tok/s output speed and 10 s TTFT", the AA wording)."""


def slo_of(rec: Record) -> SLO:
    """The SLO of an agents_per_gpu row: speed floor at_tps_per_user, TTFT limit from the notes ('TTFT < 5 s'),
    at the percentiles the workload's benchmark applies (aa-agentperf: speed P25, TTFT P95), else at P90 when the
    notes say p90, else P50 (the record format's default percentile)."""
    if rec.at_tps_per_user is None:
        raise Unsupported("agents_per_gpu row without at_tps_per_user (the SLO's speed floor)")
    m = TTFT_LIMIT.search(rec.notes or "") or TTFT_LIMIT_AFTER.search(rec.notes or "")
    if m is None:
        raise Unsupported("agents_per_gpu row: no TTFT limit in notes (write it as 'TTFT < 5 s')")
    limit = float(m.group(1).replace(",", "")) * (1.0 if m.group(2).lower() == "ms" else 1e3)
    q = 90.0 if re.search(r"\bp90\b", rec.notes or "", re.IGNORECASE) else 50.0
    w = catalog.workload(rec.workload) if rec.workload else None
    if w is not None and w.slo_speed_percentile is not None:       # the benchmark's own percentiles
        return SLO.speed_floor(rec.at_tps_per_user, limit, w.slo_speed_percentile, w.slo_ttft_percentile)
    return SLO.speed_floor(rec.at_tps_per_user, limit, q)


_AGENTS_CACHE: dict = {}


def predict_agents(rec: Record, hardware: str, profile: ProfileSpec, note: list) -> float:
    """agents_per_gpu (analyses/agents.py) over the enumerated deployments of the row's system, model and
    workload; the published gpus / tp / ep / spec_tokens / serving constrain the search. Evaluated once per
    (row, hardware, profile): the central and the band call share it."""
    key = (rec.model_dump_json(), hardware, profile.model_dump_json())
    if key not in _AGENTS_CACHE:
        n: list = []
        _AGENTS_CACHE.clear()
        _AGENTS_CACHE[key] = (_predict_agents(rec, hardware, profile, n), n)
    value, n = _AGENTS_CACHE[key]
    note.extend(x for x in n if x not in note)
    return value


def _predict_agents(rec: Record, hardware: str, profile: ProfileSpec, note: list) -> float:
    from ..analyses.agents import capacity
    from ..analyses.deployments import DeploymentSpace
    from ..analyses.systems import System
    slo = slo_of(rec)
    m = catalog.model(rec.model)
    kw: dict[str, Any] = {}
    inst = rec.decode_gpus if rec.serving == "disaggregated" else rec.gpus
    if inst and rec.serving == "disaggregated" and rec.decode_workers:
        inst = inst // rec.decode_workers                     # inst is decode_gpus here
    if inst:
        kw["gpus"] = (int(inst),)
    if rec.tp:
        kw["tp"] = (int(rec.tp),)
    if rec.ep:
        kw["ep"] = (int(rec.ep),)
    if rec.spec_tokens is not None:
        kw["spec_tokens"] = (int(rec.spec_tokens),)
    if rec.serving == "aggregated":
        kw["disaggregation"] = False
    elif rec.serving == "disaggregated":
        kw["serving"] = ()
    wl = rec.workload or {"isl": rec.isl, "osl": rec.osl, "prefix_hit": rec.prefix_hit or 0.0}
    if not rec.workload and (rec.isl is None or rec.osl is None):
        raise Unsupported("agents_per_gpu row without a workload or isl / osl")
    res = capacity(System(hardware, profile), m, wl, slo, weights=(rec.weights or "fp8",),
                   kv_cache=rec.kv_cache or "fp8", space=DeploymentSpace(**kw))
    if res.value is None:
        raise Unsupported(f"SLO {slo.text()} not met: {res.reason}")
    assert res.row is not None  # capacity gives the point with the value
    note.append(f"SLO {slo.text()}; at {res.row['serving']} gpus={res.row['gpus']:g} tp={res.row['tp']:g} "
                f"batch={res.row['batch']:g}; band not sampled (central profile)")
    return float(res.value)


def predict_values(rec: Record, hardware: str, profile: ProfileSpec, params: dict[str, np.ndarray],
                   note: list | None = None) -> np.ndarray:
    """Predicted value of ``rec`` for each parameter sample, shape (S,). Raises Unsupported."""
    note = [] if note is None else note
    if rec.metric == "agents_per_gpu":
        n = len(next(iter(params.values())))
        return np.full(n, predict_agents(rec, hardware, profile, note))
    ctx = make_ctx(hardware, rec, profile, params)
    if rec.kind == "point":
        return predict_point(rec, ctx, note)
    members = [] if rec.engine or not _ENVELOPE.get() else envelope_members(profile, params)
    if len(members) <= 1:
        return frontier_value(rec, ctx, note)
    return envelope_value(rec, hardware, profile, members, ctx, note)


ENVELOPE_PROFILES = ("trtllm", "sglang", "vllm")
"""The default profiles a frontier row that names no engine is read on, as their envelope: such a frontier
(InferenceX's) is the best over engines and their configurations."""
VARIANT_SCOPE = {"min-latency": "curve-end"}
"""Profile variant -> the kind of records it was fitted or validated on: 'curve-end' (fitted on the
high-interactivity end of frontier reads only: ``python -m perfmodel.validation.variant_fit``) or 'mid-curve'
(validated along the curve). A variant joins the envelope of rows naming no engine only when validated mid-curve
(``ENVELOPE_SCOPE``): a configuration fitted on the curve end alone reads the rest of the curve far too fast (the
min-latency variant did, by +100-700% on the InferenceX reads); it stays selectable by name
(``engine: trtllm@min-latency``)."""
ENVELOPE_SCOPE = ("mid-curve",)
ENVELOPE_VARIANTS = tuple(v for v, scope in VARIANT_SCOPE.items() if scope in ENVELOPE_SCOPE)
"""The variants that join the envelope (none while every variant is fitted on the curve end only)."""


LATENCY_VARIANTS = ("min-latency",)
"""Without the mechanism envelope_over_engines: the latency-tuned stack configurations a frontier row with no engine
named is also read on, beside the profile (at a frontier's high-interactivity end the latency-tuned configuration
is the one on it)."""


_ENVELOPE = contextvars.ContextVar("frontier_envelope", default=True)


@contextlib.contextmanager
def profile_alone():
    """Inside: frontier rows are read on the profile alone, not on the envelope over its variants. A profile's
    calibration runs inside it, so the calibrated defaults never see a variant's configuration."""
    token = _ENVELOPE.set(False)
    try:
        yield
    finally:
        _ENVELOPE.reset(token)


def variant_params(profile: ProfileSpec, variant: str, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The parameter samples of ``profile@variant``: the variant's parts at their central values, the rest as given."""
    n = len(next(iter(params.values())))
    return {**params, **{k: np.full(n, p.value) for k, p in profile.variants[variant].params.items()}}


def envelope_members(profile: ProfileSpec, params: dict[str, np.ndarray]) -> list[tuple[str, ProfileSpec, dict]]:
    """(label, profile, parameter samples) of every member of a no-engine row's envelope: ``profile`` with
    ``params``, the other ENVELOPE_PROFILES (central values for one sample, else draws at the fixed seed), and each
    member's ENVELOPE_VARIANTS."""
    n = len(next(iter(params.values())))
    members = [(profile.id, profile, params)]
    if not profile.uses("envelope_over_engines"):      # the profile and its latency-tuned variant (specs/mechanisms.py)
        return members + [(f"{profile.id}@{v}", profile, variant_params(profile, v, params))
                          for v in LATENCY_VARIANTS if v in profile.variants]
    for pid in ENVELOPE_PROFILES:
        if pid != profile.id:
            p = catalog.profile(pid)
            members.append((pid, p, central_params(p) if n == 1 else sample_params(p, n)))
    out = []
    for label, p, prm in members:
        out.append((label, p, prm))
        out += [(f"{label}@{v}", p, variant_params(p, v, prm)) for v in ENVELOPE_VARIANTS if v in p.variants]
    return out


def envelope_value(rec: Record, hardware: str, profile: ProfileSpec, members: list[tuple[str, ProfileSpec, dict]],
                   ctx: Ctx, note: list) -> np.ndarray:
    """Best value per sample over the envelope's ``members`` (``envelope_members``; each read on its own
    frontier; ``ctx`` is ``profile``'s own)."""
    values: dict[str, np.ndarray] = {}
    why: Unsupported | None = None
    for label, p, prm in members:
        try:
            c = ctx if label == profile.id else make_ctx(hardware, rec, p, prm)
            values[label] = frontier_value(rec, c, [])
        except Unsupported as exc:
            why = why or exc
    if not values:
        assert why is not None  # no value: every member (the profile itself at least) raised
        raise why
    top = max(values, key=lambda k: np.nanmedian(values[k]))
    note.append(f"frontier envelope over {', '.join(values)}: {top} on top")
    return np.fmax.reduce(list(values.values()))


def predict_record(rec: Record, profile: ProfileSpec, params: dict[str, np.ndarray],
                   note: list | None = None) -> np.ndarray:
    rec = resolve_record(rec)
    if rec.kind == "ratio":
        a = predict_values(rec.model_copy(update={"kind": "frontier"}), rec.hardware, profile, params, note)
        assert rec.hardware_b is not None  # a ratio row has hardware_b (Record._consistent)
        b = predict_values(rec.model_copy(update={"kind": "frontier"}), rec.hardware_b, profile, params, note)
        return a / b
    return predict_values(rec, rec.hardware, profile, params, note)


def predict_rows(records: list[Record], n_samples: int = N_SAMPLES, seed: int = SEED,
                 profiles: dict[str, ProfileSpec] | None = None, desc: str = "predicting records") -> pd.DataFrame:
    """One row per record: id, metric, measured, predicted, low, high, error_pct, status (+ context columns).
    ``desc`` names the work on the progress bar (stderr, terminals only: perfmodel.progress)."""
    rows = []
    for rec in progress.bar(records, desc=desc, unit="record"):
        base = {"id": rec.id, "kind": rec.kind, "hardware": rec.hardware, "model": rec.model,
                "engine": rec.engine or "", "metric": rec.metric, "measured": rec.value}
        try:
            pid = profile_id(rec)
            prof = (profiles or {}).get(pid) or catalog.profile(pid)
            note: list[str] = []
            pred = float(predict_record(rec, prof, central_params(prof), note)[0])
            mc = predict_record(rec, prof, sample_params(prof, n_samples, seed))
            if np.isnan(pred):
                raise Unsupported("the central profile gives no feasible deployment")
            lo, hi = (np.nanpercentile(mc, BAND) if np.isfinite(mc).any() else (np.nan, np.nan))
            lo, hi = min(lo, pred), max(hi, pred)
            rows.append({**base, "profile": pid, "predicted": pred, "low": lo, "high": hi,
                         "error_pct": (pred / rec.value - 1) * 100, "status": "ok", "note": "; ".join(note),
                         "horizontal_error_pct": horizontal_of(rec, prof)})
        except Unsupported as exc:
            rows.append({**base, "profile": "", "predicted": np.nan, "low": np.nan, "high": np.nan,
                         "error_pct": np.nan, "status": f"unsupported: {exc}", "note": ""})
        except SpecError as exc:
            rows.append({**base, "profile": "", "predicted": np.nan, "low": np.nan, "high": np.nan,
                         "error_pct": np.nan, "status": f"unsupported: {exc.line()}", "note": ""})
    cols = ["id", "metric", "measured", "predicted", "low", "high", "error_pct", "status", "kind", "hardware",
            "model", "engine", "profile", "note", "horizontal_error_pct"]
    return pd.DataFrame(rows).reindex(columns=cols)


HORIZONTAL_METRICS = ("output_tps_per_gpu", "total_tps_per_gpu", "total_tps_per_mw")


def horizontal_of(rec: Record, profile: ProfileSpec) -> float:
    """The horizontal error of a frontier row read at a speed (validation/horizontal.py): the modeled speed at the
    measured throughput against at_tps_per_user, %, at the central profile; NaN for other rows (points, peaks,
    rows read under latency limits)."""
    from .horizontal import horizontal_error_pct
    if (rec.kind != "frontier" or rec.at_tps_per_user is None or rec.metric not in HORIZONTAL_METRICS
            or record_latency_limits(rec) is not None):
        return float("nan")
    central = central_params(profile)

    def value_at(speed: float) -> float:
        try:
            return float(predict_record(rec.model_copy(update={"at_tps_per_user": speed}), profile, central)[0])
        except Unsupported:
            return float("nan")
    return horizontal_error_pct(value_at, rec.at_tps_per_user, rec.value)


def summary(df: pd.DataFrame) -> dict:
    ok = df[df["status"] == "ok"]
    err = ok["error_pct"].abs()
    out = {"rows": len(df), "predicted": len(ok), "unsupported": int((df["status"] != "ok").sum()),
           "median_abs_error_pct": float(err.median()) if len(ok) else float("nan"),
           "mean_abs_error_pct": float(err.mean()) if len(ok) else float("nan"),
           "within_25pct": float((err <= 25).mean()) if len(ok) else float("nan")}
    if "low" in df and "high" in df:   # rows with an uncertainty band
        inside = (ok["measured"] >= ok["low"]) & (ok["measured"] <= ok["high"])
        out["inside_band"] = float(inside.mean()) if len(ok) else float("nan")
    if "kind" in ok and "horizontal_error_pct" in ok:   # frontier reads at a speed, scored both ways
        fr = ok[(ok["kind"] == "frontier") & ok["horizontal_error_pct"].notna()]
        if len(fr):
            out["frontier_rows"] = len(fr)
            out["frontier_vertical_median_abs_pct"] = float(fr["error_pct"].abs().median())
            out["frontier_horizontal_median_abs_pct"] = float(fr["horizontal_error_pct"].abs().median())
    return out
