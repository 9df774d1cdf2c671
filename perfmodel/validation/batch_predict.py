"""Predict many records for many profile-parameter vectors at once: a (records x samples) matrix.

Point rows (the bulk of the concurrency sweeps: aggregated, decode-only and disaggregated with named pools)
that share a setup (hardware, model, weights, KV format, profile) are evaluated in ONE call of the compiled
equations (disaggregated ones in one call of serving.disaggregated), every record tiled over the S parameter
samples (no Python loop per record or per sample). Every other row (frontier, ratio, prefill-only) goes
through ``predict_record`` once per record with all S samples.
The operating point of a row is exactly the one ``predict_rows`` uses (``point_inputs``), so a fit on this
matrix and ``perfmodel validate`` agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import catalog
from ..engine.bind import bind_profile
from ..engine.evaluate import Setup, evaluate
from ..engine.serving import disaggregated
from ..errors import SpecError
from ..acceptance_priors import record_acceptance
from ..specs.profile import PROFILE_PARAMS, ProfileSpec
from .predict_rows import Unsupported, point_inputs, predict_record, prefill_pool, profile_id
from .records import Record
from .workload_versions import resolve_record

BATCHED_METRICS = {"tpot_ms": "tpot_ms", "ttft_ms": "ttft_ms", "tps_per_user": "tps_per_user",
                   "max_tps_per_user": "tps_per_user", "output_tps_per_gpu": "output_tps_per_gpu",
                   "total_tps_per_gpu": "total_tps_per_gpu"}


@dataclass
class Plan:
    """Records split into batched groups (setup key -> [(row index, points)]) and per-record rows."""

    records: list[Record]
    groups: dict[tuple, list[tuple[int, dict]]] = field(default_factory=dict)
    single: list[int] = field(default_factory=list)
    unsupported: dict[int, str] = field(default_factory=dict)


def _agentic(rec: Record) -> bool:
    """Agentic rows go through predict_record (sessions, prefix-cache residency: engine/serving.agentic)."""
    return bool(rec.workload) and catalog.workload(rec.workload).kind == "agentic"


def plan(records: list[Record]) -> Plan:
    pl = Plan(list(records))
    for i, rec in enumerate(pl.records):
        try:
            rec = pl.records[i] = resolve_record(rec)
            pid = profile_id(rec)
            m = catalog.model(rec.model)
            catalog.hardware(rec.hardware)
            batched = (rec.kind == "point" and rec.metric in BATCHED_METRICS and not _agentic(rec)
                       and rec.serving in (None, "aggregated", "decode_only", "disaggregated"))
            pts, pooled = point_inputs(rec, m) if batched else ({}, False)
            if not batched or (rec.serving == "disaggregated" and not pooled):
                pl.single.append(i)
                continue
            if pooled:
                pts = {**pts, **prefill_pool(rec, m)}
            key = (rec.hardware, rec.model, rec.weights or "fp8", rec.kv_cache or "fp8", pid, pooled)
            pl.groups.setdefault(key, []).append((i, pts))
        except (Unsupported, SpecError) as exc:
            pl.unsupported[i] = str(exc)
    return pl


def predict_matrix(pl: Plan, profiles: dict[str, ProfileSpec], params: dict[str, np.ndarray]) -> np.ndarray:
    """(records, S) predictions for S parameter vectors ``params`` (PROFILE_PARAMS names and
    'acceptance_rate' -> (S,) arrays) applied to each record's profile; NaN where unsupported/infeasible."""
    n = len(pl.records)
    S = len(next(iter(params.values())))
    out = np.full((n, S), np.nan)
    prof_vals = {k: np.asarray(params[k], float) for k in PROFILE_PARAMS}
    rate = np.asarray(params.get("acceptance_rate", np.full(S, np.nan)), float)
    for (hw, model, weights, kv, pid, pooled), rows in pl.groups.items():
        setup = Setup(catalog.hardware(hw), catalog.model(model), profiles[pid], weights=weights, kv_cache=kv)
        vals = setup.symbol_values("value")
        m = len(rows)
        # sample-minor layout: record r, sample s at r * S + s
        bound = bind_profile(prof_vals)
        vals.update({k: np.tile(np.asarray(v, float), m) if np.size(v) == S and np.ndim(v) else v
                     for k, v in bound.items()})
        keys = [k for k in rows[0][1]]
        pts = {k: np.repeat([float(p[k]) for _i, p in rows], S) for k in keys}
        pts["acc"] = np.concatenate([record_acceptance(pl.records[i], rate) for i, _p in rows])
        if pooled:
            pf = dict(gpus=pts.pop("pf_gpus"), tp=pts.pop("pf_tp"), ep=pts.pop("pf_ep"))
            inst, pinst = pts.pop("instances"), pts.pop("pf_instances")
            df = disaggregated(setup, pts, pf, instances=inst, pf_instances=pinst, symbol_values=vals)
        else:
            df = evaluate(setup, pts, symbol_values=vals)
        for j, (i, _p) in enumerate(rows):
            col = BATCHED_METRICS[pl.records[i].metric]
            out[i] = df[col].to_numpy(float)[j * S:(j + 1) * S]
    for i in pl.single:
        rec = pl.records[i]
        try:
            out[i] = predict_record(rec, profiles[profile_id(rec)], params)
        except (Unsupported, SpecError):
            pl.unsupported.setdefault(i, "unsupported")
    return out
