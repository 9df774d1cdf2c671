"""Point rows (aggregated, decode_only, disaggregated, prefill_only, agentic): a record evaluated at its published
operating point, one row per parameter sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..serving.dispatch import serve
from ..specs.profile import ProfileSpec
from ..specs.records import Record
from .agentic_rows import agentic_metric, agentic_workload, eval_agentic
from .benchmark_runs import record_arrival_rate, record_instance_gpus, record_percentile
from .row_context import (
    Ctx,
    Unsupported,
    decode_workers,
    eval_points,
    layout,
    layout_why,
    lengths,
    pools_of,
    prefill_pool,
    prefill_rate,
    tile,
)
from .workload_versions import record_running_cap

WAIT_SHARE = 0.01
"""Capacity waits above this share of TTFT mean the clients exceed the running capacity (the note of a point row;
validation/explain.py's binding limit reads the same threshold)."""


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
    if (why := layout_why(m, G, tp, ep)) and not pooled and rec.dp_attention and rec.ep and rec.gpus \
            and rec.gpus % rec.ep == 0 and not layout_why(m, float(rec.ep), tp, float(rec.ep)):
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
        if (why := layout_why(m, G, tp, ep)):
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
    agentic_wl = agentic_workload(rec)
    if agentic_wl is not None:
        df, pts = eval_agentic(rec, ctx, pts, m, pooled, agentic_wl)
        conc, pooled = pts["concurrency"], True      # per-GPU figures already count every GPU
        ceiling = agentic_wl.agentic.max_hit_rate
        note.append(f"modeled prefix hit {float(np.median(df['prefix_hit'])):.1%} (ceiling "
                    f"{'n/a' if ceiling is None else f'{ceiling:.0%}'}), "
                    f"evicted {float(np.median(df['evicted_share'])):.1%}, routing {df['routing'].iloc[0]}")
    elif pooled:
        df = _eval_disaggregated(rec, ctx, pts, m)
    else:
        df = eval_points(ctx, pts, 1)
        if np.isfinite(pts.get("arrival_rate", np.nan)) and df["fit_reason"].astype(str).str.startswith("arrival_rate").any():
            # the run served a Poisson rate above the modeled capacity: the open loop has no steady state, so
            # the row is read at the requests it kept in flight (its Little's-law concurrency), a closed loop
            note.append(f"Poisson rate {pts['arrival_rate']:.3g}/s per instance is above the modeled capacity; "
                        "read at the run's Little's-law concurrency (closed loop)")
            conc = np.nan if rec.concurrency is None else rec.concurrency * pts["gpus"] / (rec.gpus or pts["gpus"])
            df = eval_points(ctx, {**pts, "arrival_rate": np.nan, "concurrency": conc}, 1)
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

def _eval_disaggregated(rec: Record, ctx: Ctx, pts: dict, model) -> pd.DataFrame:
    """A disaggregated point (``prefill_pool``), the concurrency spread over the decode instances; TTFT
    through the closed loop (serving/disaggregated.py)."""
    p, vals = tile(ctx, pts, 1)
    return serve(ctx.setup, p, "disaggregated", pools=pools_of(prefill_pool(rec, model)), symbol_values=vals)
