"""The service-level objective: ONE type (``SLO``), the constraint inside the deployment search (search/), used by
the frontier (analyses/frontier.py), the plan (analyses/plan.py), the frontier rows read under a benchmark's
latency limits (validation/frontier_rows.py), the agents capacity (analyses/agents.py), attribution's speed floor
(analyses/attribution.py) and the claims' usable points (claims/reading.py, claims/check.py), so they keep the same
points for the same limits.

A point meets the SLO when every term holds (``SLO.terms``, and the speed floor ``SLO.speed_ok``):
    TTFT_q  <= ttft_ms                  q = ttft_percentile, ms
    TPOT_q  <= min(tpot_ms, 1000 / tps_per_user)     q = tpot_percentile (50: the mean; 90; 99), ms
    TTFT_q / 1e3 + osl TPOT_mean / 1e3 <= e2e_s      s
or, in the speed form (``speed_percentile`` set: the per-user speed floor read on the point's own speed column,
AA-AgentPerf's wording), the TPOT term is replaced by
    speed_p(x) >= tps_per_user          tokens/s per user on ``speed_column``; the model's per-user decode speed
                                        has no spread at a point, so every percentile p reads the same column.
TTFT_q is the column ``ttft_ms`` for q <= 50, ``ttft_p{q}_ms`` above (P90, P99 from serving/queueing.py), else the
queue's exponential tail (search/quantile.py). A NaN value (no steady state under Poisson arrivals, or a percentile
not modeled) fails its term. The search under Poisson arrivals reads only the served columns (SERVED_COLUMNS,
search/served.py): ``check_served`` refuses what they cannot answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SpecError
from .quantile import ttft_quantile_ms

TPOT_COLUMNS = {50.0: "tpot_ms", 90.0: "tpot_p90_ms", 99.0: "tpot_p99_ms"}
"""The TPOT column read at each modeled percentile (50: the mean; 90 and 99: the chunk-step tail,
serving/queueing.tpot_quantile and search/served.tpot_p90_ms)."""
SERVED_SPEEDS = ("tps_per_user_e2e_p50", "tps_per_user_e2e_p90")
"""Per-user speed columns the speed form can read on served points (search/served.py): osl / (TTFT_q + osl TPOT),
AgentX's E2E-normalised axis."""


@dataclass(frozen=True)
class SLO:
    """Latency targets at named percentiles (None: no target). ``ttft_ms`` (ms) at ``ttft_percentile`` (0..100);
    per-user speed floor ``tps_per_user`` (tokens/s, = 1000 / TPOT) or ``tpot_ms`` (ms) at ``tpot_percentile``
    (50 or 99); ``e2e_s`` (s): TTFT at ``ttft_percentile`` + osl x TPOT. ``speed_percentile`` (None: the floor is a
    TPOT limit) reads the floor in the speed form on ``speed_column`` (tokens/s per user); build it with
    ``SLO.speed_floor``."""

    ttft_ms: float | None = None
    ttft_percentile: float = 50.0
    tps_per_user: float | None = None
    tpot_ms: float | None = None
    tpot_percentile: float = 50.0
    e2e_s: float | None = None
    speed_percentile: float | None = None
    speed_column: str = "tps_per_user"

    def __post_init__(self):
        for name in ("ttft_ms", "tps_per_user", "tpot_ms", "e2e_s"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v > 0):
                raise SpecError(f"must be a positive number, got {v!r}", field=f"slo.{name}")
        for name in ("ttft_percentile", "speed_percentile"):
            q = getattr(self, name)
            if q is not None and not 0 < q < 100:
                raise SpecError(f"must lie in (0, 100), got {q}", field=f"slo.{name}")
        if self.tpot_percentile not in TPOT_COLUMNS:
            raise SpecError(f"TPOT percentile {self.tpot_percentile:g} is not modeled; choose 50 (the mean), 90 or "
                            "99", field="slo.tpot_percentile")

    @classmethod
    def speed_floor(cls, tps_per_user: float | None, ttft_ms: float | None = None, percentile: float = 50.0,
                    ttft_percentile: float | None = None, speed_column: str = "tps_per_user") -> "SLO":
        """The speed form: a per-user speed floor (tokens/s per user, on ``speed_column``) at ``percentile`` and an
        optional TTFT limit (ms) at ``ttft_percentile`` (None: ``percentile``)."""
        if not 0 < percentile < 100:
            raise SpecError(f"must lie in (0, 100), got {percentile}", field="slo.percentile")
        return cls(ttft_ms=ttft_ms, ttft_percentile=percentile if ttft_percentile is None else ttft_percentile,
                   tps_per_user=tps_per_user, speed_percentile=percentile, speed_column=speed_column)

    @classmethod
    def from_limits(cls, ttft_ms: float | None, tpot_ms: float | None, percentile: float) -> "SLO":
        """A benchmark run's latency limits (MLPerf LoadGen: TTFT and TPOT, ms, both at ``percentile``) as read
        on the modeled columns: P99 -> TTFT P99 and TPOT P99; P90 -> TTFT P90 and the mean TPOT (no TPOT P90 is
        modeled); any other percentile -> the P50 TTFT and the mean TPOT."""
        q = float(percentile)
        return cls(ttft_ms=ttft_ms, ttft_percentile=q if q in (90.0, 99.0) else 50.0, tpot_ms=tpot_ms,
                   tpot_percentile=99.0 if q == 99.0 else 50.0)

    def check_served(self) -> "SLO":
        """This SLO, if points served under Poisson arrivals (SERVED_COLUMNS) can answer it; else SpecError."""
        if self.ttft_percentile not in (50.0, 90.0, 99.0):
            raise SpecError(f"TTFT percentile {self.ttft_percentile:g} is not modeled; choose 50, 90 or 99",
                            field="slo.ttft_percentile")
        if self.speed_percentile is not None and self.speed_column not in SERVED_SPEEDS:
            raise SpecError(f"per-user speed on {self.speed_column} at P{self.speed_percentile:g} is not modeled on "
                            f"served points; the served speeds: {', '.join(SERVED_SPEEDS)} (E2E-normalised, P50 / "
                            "P90), or the decode speed as a TPOT limit (tps_per_user at a TPOT percentile)",
                            field="slo.speed_percentile")
        return self

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.ttft_ms, self.tps_per_user, self.tpot_ms, self.e2e_s))

    @property
    def ttft_column(self) -> str:
        q = self.ttft_percentile
        return "ttft_ms" if q <= 50 else f"ttft_p{q:g}_ms"

    @property
    def tpot_column(self) -> str:
        return TPOT_COLUMNS[self.tpot_percentile]

    @property
    def tpot_limit_ms(self) -> float | None:
        """The tighter of the TPOT limit and, outside the speed form, the speed floor (1000 / tps_per_user), ms."""
        floor = None if self.tps_per_user is None or self.speed_percentile is not None else 1000.0 / self.tps_per_user
        lims = [v for v in (self.tpot_ms, floor) if v]
        return min(lims) if lims else None

    def text(self) -> str:
        if self.speed_percentile is not None:
            return self._speed_text()
        parts = []
        if self.ttft_ms is not None:
            parts.append(f"TTFT P{self.ttft_percentile:g} <= {self.ttft_ms:g} ms")
        if self.tpot_limit_ms is not None:
            parts.append(f"TPOT P{self.tpot_percentile:g} <= {self.tpot_limit_ms:.4g} ms "
                         f"(>= {1000 / self.tpot_limit_ms:.4g} tok/s/user)")
        if self.e2e_s is not None:
            parts.append(f"E2E P{self.ttft_percentile:g} <= {self.e2e_s:g} s")
        return ", ".join(parts) or "none (peak)"

    def _speed_text(self) -> str:
        """The speed form's text: '>= 20 tok/s/user p25, TTFT p95 <= 10000 ms' (+ any TPOT / E2E limit); the axis
        named where it is the E2E-normalised one."""
        axis = " E2E-normalised" if self.speed_column.startswith("tps_per_user_e2e") else ""
        parts = [] if self.tps_per_user is None else [f">= {self.tps_per_user:g} tok/s/user{axis} "
                                                      f"p{self.speed_percentile:g}"]
        if self.ttft_ms is not None:
            parts.append(f"TTFT p{self.ttft_percentile:g} <= {self.ttft_ms:g} ms")
        if self.tpot_ms is not None:
            parts.append(f"TPOT P{self.tpot_percentile:g} <= {self.tpot_ms:.4g} ms")
        if self.e2e_s is not None:
            parts.append(f"E2E P{self.ttft_percentile:g} <= {self.e2e_s:g} s")
        return ", ".join(parts) or "none (peak)"

    def ttft_values(self, frame: pd.DataFrame) -> np.ndarray:
        """TTFT at ``ttft_percentile`` (ms) per point: its column where ``frame`` has it, else the queue's tail
        (search/quantile.py, needs ``ttft_mean_ms``); SpecError where neither is there."""
        col = self.ttft_column
        if col in frame:
            return frame[col].to_numpy(float)
        if "ttft_mean_ms" not in frame:
            self.check_served()
        return ttft_quantile_ms(frame, self.ttft_percentile)

    def speed_ok(self, frame: pd.DataFrame) -> np.ndarray:
        """Points meeting the speed form's floor (speed >= tps_per_user on ``speed_column``; NaN fails); all
        points outside the speed form or without a floor."""
        if self.speed_percentile is None or self.tps_per_user is None:
            return np.ones(len(frame), dtype=bool)
        return frame[self.speed_column].to_numpy(float) >= self.tps_per_user

    def meets(self, served: pd.DataFrame, osl: float = math.nan) -> np.ndarray:
        """Points meeting every term and the speed floor (NaN fails); ``served`` has the columns the terms read
        (SERVED_COLUMNS, or an operating point's own columns)."""
        ok = self.speed_ok(served)
        for v, lim in self.terms(served, osl).values():
            ok &= v <= lim
        return ok

    def terms(self, served: pd.DataFrame, osl: float) -> dict[str, tuple[np.ndarray, float]]:
        """Per upper-limit term: (the modeled value at each point, the limit); ``served`` has SERVED_COLUMNS."""
        terms = {}
        if self.ttft_ms is not None:
            terms[f"ttft_p{self.ttft_percentile:g}"] = (self.ttft_values(served), self.ttft_ms)
        if self.tpot_limit_ms is not None:
            terms[f"tpot_p{self.tpot_percentile:g}"] = (served[self.tpot_column].to_numpy(float),
                                                        self.tpot_limit_ms)
        if self.e2e_s is not None:
            v = self.ttft_values(served) / 1e3 + osl * served["tpot_ms"].to_numpy(float) / 1e3
            terms["e2e"] = (v, self.e2e_s)
        return terms

    def mask(self, served: pd.DataFrame, osl: float) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, float]]]:
        """Points in a steady state (finite mean TPOT) meeting every term (NaN fails), and the terms: the cut of
        points served under Poisson arrivals (search/served.poisson). In the speed form the floor is the term
        ``speed_p{q}``, read as ms per output token on ``speed_column`` (1000 / speed <= 1000 / floor)."""
        terms = self.check_served().terms(served, osl)
        if self.speed_percentile is not None and self.tps_per_user is not None:
            speed = served[self.speed_column].to_numpy(float)        # as an upper limit: ms per output token
            terms[f"speed_p{self.speed_percentile:g}"] = (np.where(speed > 0, 1e3 / np.where(speed > 0, speed, 1.0),
                                                                   np.nan), 1e3 / self.tps_per_user)
        ok = np.isfinite(served["tpot_ms"].to_numpy(float))
        for v, lim in terms.values():
            ok &= v <= lim
        return ok, terms


def slo_infeasible(slo: SLO, stats: dict, name: str) -> str:
    """One line: the SLO no deployment meets, and the best value any fitting deployment reaches per term
    (``stats``: per term, ``best``, as search/cut.slo_cut gathers it)."""
    best = [f"{k} best {1e3 / s['best']:.4g} tok/s/user" if k.startswith("speed") else
            f"{k} best {s['best']:.4g} {'s' if k == 'e2e' else 'ms'}" for k, s in stats.items()
            if k != "queue" and np.isfinite(s["best"])]
    return f"no deployment on {name} meets the SLO ({slo.text()}): " + "; ".join(best or ["no steady state"])
