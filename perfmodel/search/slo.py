"""The service-level objective: ONE type (``SLO``), the constraint inside the deployment search (search/), used by
the frontier (analyses/frontier.py), the plan (analyses/plan.py) and the frontier rows read under a benchmark's
latency limits (validation/predict_rows.py), so they keep the same points for the same limits.

A point meets the SLO when every term holds (``SLO.terms``):
    TTFT_q  <= ttft_ms                  q = ttft_percentile (50, 90, 99), ms
    TPOT_q  <= min(tpot_ms, 1000 / tps_per_user)     q = tpot_percentile (50: the mean; 99), ms
    TTFT_q / 1e3 + osl TPOT_mean / 1e3 <= e2e_s      s
A NaN value (no steady state under Poisson arrivals, or a percentile not modeled) fails its term. The served
columns the terms read (SERVED_COLUMNS) come from search/served.py (Poisson arrivals) or from a closed loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError


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

    @classmethod
    def from_limits(cls, ttft_ms: float | None, tpot_ms: float | None, percentile: float) -> "SLO":
        """A benchmark run's latency limits (MLPerf LoadGen: TTFT and TPOT, ms, both at ``percentile``) as read
        on the modeled columns: P99 -> TTFT P99 and TPOT P99; P90 -> TTFT P90 and the mean TPOT (no TPOT P90 is
        modeled); any other percentile -> the P50 TTFT and the mean TPOT."""
        q = float(percentile)
        return cls(ttft_ms=ttft_ms, ttft_percentile=q if q in (90.0, 99.0) else 50.0, tpot_ms=tpot_ms,
                   tpot_percentile=99.0 if q == 99.0 else 50.0)

    def meets(self, served: pd.DataFrame, osl: float = math.nan) -> np.ndarray:
        """Points meeting every term (NaN fails); ``served`` has the columns the terms read (SERVED_COLUMNS)."""
        ok = np.ones(len(served), dtype=bool)
        for v, lim in self.terms(served, osl).values():
            ok &= v <= lim
        return ok

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
        """Points in a steady state (finite mean TPOT) meeting every term (NaN fails), and the terms: the cut of
        points served under Poisson arrivals (search/served.poisson)."""
        terms = self.terms(served, osl)
        ok = np.isfinite(served["tpot_ms"].to_numpy(float))
        for v, lim in terms.values():
            ok &= v <= lim
        return ok, terms


def slo_infeasible(slo: SLO, stats: dict, name: str) -> str:
    """One line: the SLO no deployment meets, and the best value any fitting deployment reaches per term
    (``stats``: per term, ``best``, as search/cut.slo_cut gathers it)."""
    best = [f"{k} best {s['best']:.4g} {'s' if k == 'e2e' else 'ms'}" for k, s in stats.items()
            if k != "queue" and np.isfinite(s["best"])]
    return f"no deployment on {name} meets the SLO ({slo.text()}): " + "; ".join(best or ["no steady state"])
