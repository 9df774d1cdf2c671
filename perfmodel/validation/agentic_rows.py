"""Agentic point rows: multi-turn sessions with prefix-cache residency (serving/sessions), aggregated or on
disaggregated pools, and the statistic each row quotes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..serving.dispatch import Sessions, serve
from ..specs.profile import ProfileSpec
from ..specs.records import Record
from .row_context import Ctx, Unsupported, layout_why, pools_of, prefill_pool, tile
from .workload_versions import (
    record_host_tier,
    record_interactivity,
    record_statistic,
    record_workload_spec,
)


def agentic_workload(rec: Record):
    """The row's workload spec when it is agentic (sessions), else None."""
    if not rec.workload:
        return None
    w = record_workload_spec(rec)
    return w if w.kind == "agentic" else None


def eval_agentic(rec: Record, ctx: Ctx, pts: dict, model, pooled: bool, w) -> tuple[pd.DataFrame, dict]:
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
        p, vals = tile(ctx, pts, 1)
        df = serve(ctx.setup, p, "disaggregated", pools=pools_of(pool), symbol_values=vals,
                   sessions=Sessions(w.agentic.pause_s, record_host_tier(rec), w.agentic, prefix_hit=rec.prefix_hit))
        return df, pts
    a = agentic_inputs(rec, model, pts, w, ctx.setup.profile)
    p, vals = tile(ctx, a.pts, 1)
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
            and not layout_why(model, rec.tp, rec.tp, min(pts["ep"], rec.tp)):
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
