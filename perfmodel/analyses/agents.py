"""AA-AgentPerf capacity: the most concurrent agent sessions per GPU that still meet an SLO.

An SLO (``search.SLO`` in the speed form, ``SLO.speed_floor``) is a per-user speed floor v (tokens/s/user) at a
percentile q and, optionally, a TTFT limit T (ms) at the same or its own percentile. Over evaluated operating points (``frontier.candidates``: every deployment and batch):

    agents_per_gpu = max { sessions_per_gpu(x) : speed_q(x) >= v  and  TTFT_q(x) <= T }

- sessions_per_gpu: live sessions over ALL GPUs of the deployment (both pools when disaggregated): the
  agentic engine's ``sessions_per_gpu`` (generating + waiting + paused at a tool); for fixed-length workloads,
  the closed loop's clients: concurrency x decode instances / (prefill + decode GPUs).
- speed_q: ``tps_per_user`` (accepted tokens / decode step). Every running sequence advances once per step, so
  the model's per-user decode speed has no spread across users at an operating point: its q-th percentile is
  the same number.
- TTFT_q: ``ttft_ms`` (P50) for q <= 50, ``ttft_p90_ms`` at 90 (serving/queueing.py gives both), else
  ``search.ttft_quantile_ms`` (the queue's exponential tail): ``SLO.ttft_values``. The TTFT limit may sit at its own percentile
  (``SLO.ttft_percentile``): AA-AgentPerf reads the speed floor at P25 and the TTFT limit at P95
  (workloads/aa-agentperf.yaml ``slo_speed_percentile`` / ``slo_ttft_percentile``).
An SLO no point meets gets a one-line reason naming the SLO field that binds (never NaN or zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..search import SLO, best_index


def sessions_per_gpu(df: pd.DataFrame) -> np.ndarray:
    """Live sessions per GPU, all GPUs counted (see the module docstring)."""
    n = len(df)
    if "sessions_per_gpu" in df:
        out = df["sessions_per_gpu"].to_numpy(float)
        if np.isfinite(out).all():
            return out
    else:
        out = np.full(n, np.nan)
    conc = df["concurrency"].to_numpy(float)
    gpus = df["gpus"].to_numpy(float)
    if "decode_gpus" in df and "prefill_gpus" in df:
        dec = df["decode_gpus"].to_numpy(float)
        pre = df["prefill_gpus"].to_numpy(float)
        pooled = np.isfinite(dec) & np.isfinite(pre) & (dec > 0)
        clients = np.where(pooled, conc * np.where(pooled, dec, gpus) / gpus / np.where(pooled, dec + pre, 1.0),
                           conc / gpus)
    else:
        clients = conc / gpus
    return np.where(np.isfinite(out), out, clients)


@dataclass
class AgentsResult:
    value: float | None          # agents per GPU; None when no point meets the SLO
    row: pd.Series | None        # the operating point that gives it
    reason: str | None           # why no point meets the SLO (one line, names the field)
    slo: SLO


def agents_per_gpu(points: pd.DataFrame, slo: SLO) -> AgentsResult:
    """The most live sessions per GPU among ``points`` (fitting operating points) that meet ``slo`` (search.SLO in
    the speed form, ``SLO.speed_floor``: the floor must be set)."""
    if "fits" in points:
        points = points[points["fits"].to_numpy(bool)]
    if points.empty:
        return AgentsResult(None, None, "no deployment fits in memory (model)", slo)
    speed = points[slo.speed_column].to_numpy(float)
    ok_speed = slo.speed_ok(points)
    if not ok_speed.any():
        return AgentsResult(None, None, f"no deployment reaches {slo.tps_per_user:g} tok/s/user (the fastest "
                                        f"gives {np.nanmax(speed):.1f}): slo.tps_per_user", slo)
    ok = slo.meets(points)
    if not ok.any():
        ttft = slo.ttft_values(points)
        best = np.nanmin(np.where(ok_speed, ttft, np.nan))
        return AgentsResult(None, None, f"no deployment reaching {slo.tps_per_user:g} tok/s/user keeps TTFT "
                                        f"p{slo.ttft_percentile:g} within {slo.ttft_ms:g} ms (the shortest is "
                                        f"{best:,.0f} ms): slo.ttft_ms", slo)
    sess = sessions_per_gpu(points)
    i = best_index(sess, ok)
    return AgentsResult(float(sess[i]), points.iloc[i], None, slo)


def capacity(hardware, model, workload, slo: SLO, profile=None, **kw) -> AgentsResult:
    """agents_per_gpu over every enumerated deployment of ``model`` on ``hardware`` (``frontier.candidates``;
    ``kw`` as there: weights, kv_cache, space, ...)."""
    from .frontier import candidates
    from .systems import DEFAULT_PROFILE
    pts = candidates(hardware, model, workload, profile=profile or DEFAULT_PROFILE, **kw)
    return agents_per_gpu(pts, slo)


__all__ = ["AgentsResult", "agents_per_gpu", "capacity", "sessions_per_gpu"]
