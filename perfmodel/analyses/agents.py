"""AA-AgentPerf capacity: the most concurrent agent sessions per GPU that still meet an SLO.

An SLO is a per-user speed floor v (tokens/s/user) at a percentile q and, optionally, a TTFT limit T (ms) at
the same percentile. Over evaluated operating points (``frontier.candidates``: every deployment and batch):

    agents_per_gpu = max { sessions_per_gpu(x) : speed_q(x) >= v  and  TTFT_q(x) <= T }

- sessions_per_gpu: live sessions over ALL GPUs of the deployment (both pools when disaggregated): the
  agentic engine's ``sessions_per_gpu`` (generating + waiting + paused at a tool); for fixed-length workloads,
  the closed loop's clients: concurrency x decode instances / (prefill + decode GPUs).
- speed_q: ``tps_per_user`` (accepted tokens / decode step). Every running sequence advances once per step, so
  the model's per-user decode speed has no spread across users at an operating point: its q-th percentile is
  the same number.
- TTFT_q: ``ttft_ms`` (P50) for q <= 50, ``ttft_p90_ms`` at 90 (serving/queueing.py gives both), else
  ``ttft_quantile_ms`` (the queue's exponential tail). The TTFT limit may sit at its own percentile
  (``SLO.ttft_percentile``): AA-AgentPerf reads the speed floor at P25 and the TTFT limit at P95
  (workloads/aa-agentperf.yaml ``slo_speed_percentile`` / ``slo_ttft_percentile``).
An SLO no point meets gets a one-line reason naming the SLO field that binds (never NaN or zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError


@dataclass(frozen=True)
class SLO:
    """A per-user speed floor (tok/s/user) at ``percentile`` and an optional TTFT limit (ms)."""

    tps_per_user: float
    ttft_ms: float | None = None
    percentile: float = 50.0
    ttft_percentile: float | None = None     # the TTFT limit's own percentile (None: ``percentile``)

    def __post_init__(self):
        if not (np.isfinite(self.tps_per_user) and self.tps_per_user > 0):
            raise SpecError(f"must be a finite number > 0, got {self.tps_per_user}", field="slo.tps_per_user")
        if self.ttft_ms is not None and not (np.isfinite(self.ttft_ms) and self.ttft_ms > 0):
            raise SpecError(f"must be a finite number > 0 (ms), got {self.ttft_ms}", field="slo.ttft_ms")
        if not 0 < self.percentile < 100:
            raise SpecError(f"must lie in (0, 100), got {self.percentile}", field="slo.percentile")
        if self.ttft_percentile is not None and not 0 < self.ttft_percentile < 100:
            raise SpecError(f"must lie in (0, 100), got {self.ttft_percentile}", field="slo.ttft_percentile")

    @property
    def ttft_q(self) -> float:
        return self.percentile if self.ttft_percentile is None else self.ttft_percentile

    @property
    def ttft_column(self) -> str:
        q = self.ttft_q
        return "ttft_ms" if q <= 50 else "ttft_p90_ms" if q == 90 else f"ttft_p{q:g}_ms"

    def ttft_values(self, df: pd.DataFrame) -> np.ndarray:
        """Each point's TTFT at this SLO's percentile (ms): the frame's column for it where the serving layer
        computed one (``ttft_column``), else ``ttft_quantile_ms`` from the point's queue."""
        col = self.ttft_column
        return df[col].to_numpy(float) if col in df else ttft_quantile_ms(df, self.ttft_q)

    def text(self) -> str:
        ttft = f", TTFT p{self.ttft_q:g} <= {self.ttft_ms:g} ms" if self.ttft_ms is not None else ""
        return f">= {self.tps_per_user:g} tok/s/user p{self.percentile:g}{ttft}"


def ttft_quantile_ms(df: pd.DataFrame, q: float) -> np.ndarray:
    """TTFT at percentile q (ms) from a point's queue: the mean TTFT with its mean prefill wait E[W] replaced by
    the wait's q-quantile under the queue's exponential tail (P(W > 0) = rho, serving/sessions' request samples):
        W_q = (E[W] / rho) max(0, ln(rho / (1 - q/100))),   TTFT_q = TTFT_mean - E[W] + W_q.
    The request-length spread is not in a frontier's columns, so only the queue's spread is (a lower bound on the
    benchmark's percentile where lengths vary)."""
    mean = df["ttft_mean_ms"].to_numpy(float)
    w = np.nan_to_num(df["prefill_queue_ms"].to_numpy(float)) if "prefill_queue_ms" in df else np.zeros(len(df))
    rho = np.clip(np.nan_to_num(df["prefill_utilization"].to_numpy(float)), 1e-12, 1 - 1e-9) \
        if "prefill_utilization" in df else np.full(len(df), 1e-12)
    wq = w / rho * np.maximum(0.0, np.log(rho / (1 - q / 100.0)))
    return mean - w + wq


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
    """The most live sessions per GPU among ``points`` (fitting operating points) that meet ``slo``."""
    if "fits" in points:
        points = points[points["fits"].to_numpy(bool)]
    if points.empty:
        return AgentsResult(None, None, "no deployment fits in memory (model)", slo)
    speed = points["tps_per_user"].to_numpy(float)
    ok_speed = speed >= slo.tps_per_user
    if not ok_speed.any():
        return AgentsResult(None, None, f"no deployment reaches {slo.tps_per_user:g} tok/s/user (the fastest "
                                        f"gives {np.nanmax(speed):.1f}): slo.tps_per_user", slo)
    ok = ok_speed
    if slo.ttft_ms is not None:
        ttft = slo.ttft_values(points)
        ok = ok_speed & (ttft <= slo.ttft_ms)
        if not ok.any():
            best = np.nanmin(np.where(ok_speed, ttft, np.nan))
            return AgentsResult(None, None, f"no deployment reaching {slo.tps_per_user:g} tok/s/user keeps TTFT "
                                            f"p{slo.ttft_q:g} within {slo.ttft_ms:g} ms (the shortest is "
                                            f"{best:,.0f} ms): slo.ttft_ms", slo)
    sess = np.where(ok, sessions_per_gpu(points), -np.inf)
    i = int(np.argmax(sess))
    return AgentsResult(float(sess[i]), points.iloc[i], None, slo)


def capacity(hardware, model, workload, slo: SLO, profile=None, **kw) -> AgentsResult:
    """agents_per_gpu over every enumerated deployment of ``model`` on ``hardware`` (``frontier.candidates``;
    ``kw`` as there: weights, kv_cache, space, ...)."""
    from .frontier import candidates
    from .systems import DEFAULT_PROFILE
    pts = candidates(hardware, model, workload, profile=profile or DEFAULT_PROFILE, **kw)
    return agents_per_gpu(pts, slo)


__all__ = ["SLO", "AgentsResult", "agents_per_gpu", "capacity", "sessions_per_gpu", "ttft_quantile_ms"]
