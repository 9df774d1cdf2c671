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
  * frontier rows with a published concurrency: the hint is a constraint (FRONTIER_HINTS = "constrain"): the
    search only uses batches up to that concurrency (per decode instance), since the measured value is the
    throughput the deployment reached at that load. With FRONTIER_HINTS = "free" the search is unconstrained.
  * disaggregated frontier rows: decode on decode_gpus (in workers of ep GPUs when attention is data-parallel
    and ep divides decode_gpus, the concurrency spread over them), prefill on prefill_gpus (16384 tokens per
    GPU per step);
    the output rate is the lesser of decode and prefill capacity, and per-GPU figures divide by all GPUs.
  * ratio rows: frontier of ``hardware`` over frontier of ``hardware_b`` with the same hints.
The uncertainty band: N_SAMPLES draws (fixed seed), every profile parameter uniform in its [low, high] range,
propagated through the compiled equations; low/high are the 5th/95th percentiles.

This module reads each record on the right room and gathers the rows: the samples (validation/samples.py), one
record's context and layout defaults (row_context.py), point rows (point_rows.py, agentic ones in
agentic_rows.py), frontier rows (frontier_rows.py, read on the envelope of envelope.py when no engine is named)
and agents_per_gpu rows (agents_per_gpu.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalog, progress
from ..errors import SpecError
from ..specs.profile import ProfileSpec
from ..specs.records import Record
from .agents_per_gpu import predict_agents
from .benchmark_runs import record_latency_limits
from .envelope import envelope_members, envelope_on, envelope_value
from .frontier_rows import frontier_value
from .point_rows import predict_point
from .row_context import Unsupported, make_ctx
from .samples import BAND, N_SAMPLES, SEED, central_params, sample_params
from .workload_versions import resolve_record

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


def profile_id(rec: Record) -> str:
    eng = (rec.engine or "trtllm").lower()
    eng = ENGINE_SPELLINGS.get(eng, eng)
    if eng not in ENGINE_PROFILE:
        raise Unsupported(f"no profile for engine {rec.engine!r}")
    return ENGINE_PROFILE[eng]


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
    members = [] if rec.engine or not envelope_on() else envelope_members(profile, params)
    if len(members) <= 1:
        return frontier_value(rec, ctx, note)
    return envelope_value(rec, hardware, profile, members, ctx, note)
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
