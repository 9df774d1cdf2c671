"""Workloads: fixed-length requests, or multi-turn agentic sessions.

Lengths in tokens. A distribution is log-normal, given by its median and mean (sigma follows:
sigma = sqrt(2 ln(mean/median))), so percentiles come from the published statistics, not a fudge.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from .common import Strict


class Dist(Strict):
    """A positive quantity with a log-normal spread: median and mean (mean >= median)."""

    median: float = Field(gt=0)
    mean: float | None = Field(None, gt=0, description="None: no spread (mean = median)")
    source: str | None = None

    @model_validator(mode="after")
    def _mean(self):
        if self.mean is not None and self.mean < self.median:
            raise ValueError(f"mean {self.mean} below median {self.median} (log-normal needs mean >= median)")
        return self

    @property
    def sigma(self) -> float:
        return math.sqrt(2 * math.log(self.mean / self.median)) if self.mean else 0.0

    @property
    def mean_value(self) -> float:
        return self.mean or self.median

    def quantile(self, q: float) -> float:
        """q in (0, 1): the log-normal quantile."""
        from statistics import NormalDist
        return self.median * math.exp(self.sigma * NormalDist().inv_cdf(q))


class Agentic(Strict):
    """Multi-turn agentic sessions (AgentX, AA-AgentPerf)."""

    turns: Dist | None = Field(None, description="Turns (requests) per session; None: the trace's reuse ceiling "
                               "(max_hit_rate) is token-weighted over the whole trace and already counts first turns")
    context_tokens: Dist = Field(description="Input tokens per request (cached prefix + new), over all turns")
    new_tokens_per_turn: Dist = Field(description="Uncached new input tokens per turn (tool output, user text)")
    output_tokens: Dist = Field(description="Output tokens per turn")
    tool_pause_s: Dist | None = Field(None, description="Pause between a turn's end and the next request (tool "
                                      "latency), s; None: a closed-loop replay, the next request follows at once")
    max_hit_rate: float | None = Field(None, ge=0, le=1, description="Published prefix-hit ceiling, for checks")
    replay_start_ratio: tuple[float, float] | None = Field(
        None, description="The harness starts each replayed session at a uniform fraction of its trajectory in "
                          "this range (AgentX from 2026-07-30: 0.25-0.75); its first replayed request prefills "
                          "the context reached there uncached")
    max_output_tokens: int | None = Field(None, gt=0)

    @property
    def replayed_turns(self) -> float | None:
        """Requests per replayed session: turns x (1 - mean start fraction); None without a replay start."""
        if self.replay_start_ratio is None or self.turns is None:
            return None
        lo, hi = self.replay_start_ratio
        return max(self.turns.mean_value * (1.0 - (lo + hi) / 2.0), 1.0)

    @property
    def pause_s(self) -> float:
        """Mean pause between turns, s (0 for a closed-loop replay without pauses)."""
        return self.tool_pause_s.mean_value if self.tool_pause_s is not None else 0.0

    @model_validator(mode="after")
    def _turns_or_ceiling(self):
        if self.turns is None and self.max_hit_rate is None:
            raise ValueError("turns: give the turns per session, or max_hit_rate (a trace-wide reuse ceiling)")
        return self


class LatencyLimits(Strict):
    """A benchmark scenario's latency limits at a percentile (MLPerf Server / Interactive: P99 TTFT and TPOT).

    The YAML input schema only: it is read into the one SLO type (search.SLO) in exactly one place,
    validation/benchmark_runs.record_latency_limits (``SLO.from_limits``); nothing else compares against it."""

    ttft_ms: float | None = Field(None, gt=0, description="TTFT limit, ms")
    tpot_ms: float | None = Field(None, gt=0, description="TPOT limit, ms (per-user speed floor 1000 / tpot_ms)")
    percentile: float = Field(99, gt=0, lt=100, description="Percentile at which both limits are read")
    arrivals: Literal["poisson", "offline"] = Field("poisson", description="poisson: open-loop arrivals at a rate; "
                                                    "offline: every request queued at once (no latency limit)")
    source: str | None = None


class WorkloadSpec(Strict):
    id: str
    name: str
    kind: Literal["fixed", "agentic"]
    sources: list[str] = Field(min_length=1)
    notes: str | None = None
    isl: float | None = Field(None, gt=0, description="fixed: input tokens per request")
    osl: float | None = Field(None, gt=0, description="fixed: output tokens per request")
    prefix_hit: float = Field(0.0, ge=0, lt=1, description="fixed: share of input served from a prefix cache")
    agentic: Agentic | None = None
    isl_dist: Dist | None = Field(None, description="fixed: spread of the input length (its mean is isl), tokens")
    osl_dist: Dist | None = Field(None, description="fixed: spread of the output length (its mean is osl), tokens")
    scenarios: dict[str, LatencyLimits] = Field(default_factory=dict, description="Named benchmark scenarios and "
                                                "their latency limits (MLPerf: Offline, Server, Interactive)")
    throughput_counts: Literal["total", "output"] = Field(
        "total", description="What the headline throughput counts: total = input incl. cached + output")
    interactivity_percentile: float = Field(50, gt=0, lt=100, description="Percentile of per-user speed reported")
    slo_speed_percentile: float | None = Field(None, gt=0, lt=100, description="Capacity benchmarks (AA-AgentPerf): "
                                               "percentile at which the output-speed floor is read")
    slo_ttft_percentile: float | None = Field(None, gt=0, lt=100, description="Capacity benchmarks: percentile at "
                                              "which the TTFT limit is read")
    interactivity: Literal["itl", "e2e"] = Field(
        "itl", description="What the per-user speed is: itl = 1 / TPOT while decoding; e2e = OSL / E2E latency "
                           "(AgentX's e2e_norm_intvty, TTFT and queueing included)")

    @model_validator(mode="after")
    def _kind(self):
        if self.kind == "fixed" and (self.isl is None or self.osl is None):
            raise ValueError("a fixed workload needs isl and osl")
        if self.kind == "agentic" and self.agentic is None:
            raise ValueError("an agentic workload needs an 'agentic' block")
        return self
