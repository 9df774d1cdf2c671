"""agents_per_gpu rows: the most concurrent agent sessions per GPU that meet the row's SLO (analyses/agents.py),
the SLO read from the row's notes and its workload's benchmark percentiles."""

from __future__ import annotations

import re
from typing import Any

from .. import catalog
from ..search import SLO
from ..specs.profile import ProfileSpec
from ..specs.records import Record
from .row_context import Unsupported

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
