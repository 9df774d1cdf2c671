"""The service-level objective: ONE type, applied inside the deployment search (analyses/frontier.py) and read by
the plan (analyses/plan.py), so ``plan`` and ``frontier`` with the same limits keep the same points.

An operating point is judged as a service under Poisson arrivals (``poisson``): an aggregated fixed-length point
is offered its own closed-loop request rate lambda = y G / osl (y output tokens/s per GPU, G GPUs of the instance)
as an open loop (serving/queueing.py: running batch B = lambda S, the prefill queue M/D/c, TTFT P50/P90/P99 as
the queue's quantiles, the TPOT tail from the prefill chunks a request's steps meet); a disaggregated point keeps
its pools' closed loop; an agentic point its sessions (TTFT P90/P99 not modeled: NaN, so a P90/P99 TTFT limit
fails there).

A point meets the SLO when every term holds (``SLO.terms``):
    TTFT_q  <= ttft_ms                  q = ttft_percentile (50, 90, 99), ms
    TPOT_q  <= min(tpot_ms, 1000 / tps_per_user)     q = tpot_percentile (50: the mean; 99), ms
    TTFT_q / 1e3 + osl TPOT_mean / 1e3 <= e2e_s      s
A NaN value (no steady state under Poisson arrivals, or a percentile not modeled) fails its term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError
from ..serving.dispatch import serve

SERVED_COLUMNS = ("ttft_ms", "ttft_p90_ms", "ttft_p99_ms", "tpot_ms", "tpot_p99_ms", "in_flight")


@dataclass(frozen=True)
class SLO:
    """Latency targets at named percentiles (None: no target). ``ttft_ms`` (ms) at ``ttft_percentile`` (50, 90 or
    99); per-user speed floor ``tps_per_user`` (tokens/s, = 1000 / TPOT) or ``tpot_ms`` (ms) at
    ``tpot_percentile`` (50 or 99); ``e2e_s`` (s): TTFT at ``ttft_percentile`` + osl x TPOT."""

    ttft_ms: float | None = None
    ttft_percentile: float = 50.0
    tps_per_user: float | None = None
    tpot_ms: float | None = None
    tpot_percentile: float = 50.0
    e2e_s: float | None = None

    def __post_init__(self):
        for name in ("ttft_ms", "tps_per_user", "tpot_ms", "e2e_s"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v > 0):
                raise SpecError(f"must be a positive number, got {v!r}", field=f"slo.{name}")
        if self.ttft_percentile not in (50.0, 90.0, 99.0):
            raise SpecError(f"TTFT percentile {self.ttft_percentile:g} is not modeled; choose 50, 90 or 99",
                            field="slo.ttft_percentile")
        if self.tpot_percentile not in (50.0, 99.0):
            raise SpecError(f"TPOT percentile {self.tpot_percentile:g} is not modeled; choose 50 or 99",
                            field="slo.tpot_percentile")

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.ttft_ms, self.tps_per_user, self.tpot_ms, self.e2e_s))

    @property
    def ttft_column(self) -> str:
        return {50.0: "ttft_ms", 90.0: "ttft_p90_ms", 99.0: "ttft_p99_ms"}[self.ttft_percentile]

    @property
    def tpot_column(self) -> str:
        return "tpot_ms" if self.tpot_percentile == 50.0 else "tpot_p99_ms"

    @property
    def tpot_limit_ms(self) -> float | None:
        """The tighter of the TPOT limit and the speed floor (1000 / tps_per_user), ms."""
        lims = [v for v in (self.tpot_ms, None if self.tps_per_user is None else 1000.0 / self.tps_per_user) if v]
        return min(lims) if lims else None

    def text(self) -> str:
        parts = []
        if self.ttft_ms is not None:
            parts.append(f"TTFT P{self.ttft_percentile:g} <= {self.ttft_ms:g} ms")
        if self.tpot_limit_ms is not None:
            parts.append(f"TPOT P{self.tpot_percentile:g} <= {self.tpot_limit_ms:.4g} ms "
                         f"(>= {1000 / self.tpot_limit_ms:.4g} tok/s/user)")
        if self.e2e_s is not None:
            parts.append(f"E2E P{self.ttft_percentile:g} <= {self.e2e_s:g} s")
        return ", ".join(parts) or "none (peak)"

    def terms(self, served: pd.DataFrame, osl: float) -> dict[str, tuple[np.ndarray, float]]:
        """Per SLO term: (the modeled value at each point, the limit); ``served`` has SERVED_COLUMNS."""
        terms = {}
        if self.ttft_ms is not None:
            terms[f"ttft_p{self.ttft_percentile:g}"] = (served[self.ttft_column].to_numpy(float), self.ttft_ms)
        if self.tpot_limit_ms is not None:
            terms[f"tpot_p{self.tpot_percentile:g}"] = (served[self.tpot_column].to_numpy(float),
                                                        self.tpot_limit_ms)
        if self.e2e_s is not None:
            v = served[self.ttft_column].to_numpy(float) / 1e3 + osl * served["tpot_ms"].to_numpy(float) / 1e3
            terms["e2e"] = (v, self.e2e_s)
        return terms

    def mask(self, served: pd.DataFrame, osl: float) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, float]]]:
        """Points meeting every term (NaN fails), and the terms."""
        terms = self.terms(served, osl)
        ok = np.isfinite(served["tpot_ms"].to_numpy(float))
        for v, lim in terms.values():
            ok &= v <= lim
        return ok, terms


def poisson(setup, pts: dict, closed: pd.DataFrame, serving: str, agentic: bool, gpus: np.ndarray,
            osl: float) -> pd.DataFrame:
    """Points of ONE serving mode served under Poisson arrivals (module docstring): SERVED_COLUMNS, aligned with
    ``closed`` (the closed-loop frame of the same points). ``gpus``: GPUs per instance; ``in_flight`` requests (or
    agentic sessions) in flight per instance."""
    out = pd.DataFrame(index=range(len(closed)), columns=list(SERVED_COLUMNS), dtype=float)
    if agentic:                   # sessions: the closed loop's own columns
        out["ttft_ms"] = closed["ttft_ms"].to_numpy(float)
        out["tpot_ms"] = out["tpot_p99_ms"] = closed["tpot_ms"].to_numpy(float)
        if "sessions_per_gpu" in closed:
            out["in_flight"] = closed["sessions_per_gpu"].to_numpy(float) * gpus
        return out
    if serving == "disaggregated" or serving == "decode_only":
        df = closed
    else:
        rate = closed["output_tps_per_gpu"].to_numpy(float) * gpus / osl
        df = serve(setup, {**pts, "batch": np.nan, "arrival_rate": rate}, serving)
    for c in SERVED_COLUMNS[:-1]:
        out[c] = df[c].to_numpy(float)
    out["in_flight"] = df["concurrency"].to_numpy(float)
    return out
