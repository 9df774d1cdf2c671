"""Request lengths for the event simulation, drawn from the workload (tokens).

Fixed workloads: every request isl input tokens, osl output, new = isl (1 - prefix_hit) uncached.
Agentic workloads: each client runs sessions of T turns (T ~ the turns distribution, rounded, >= 1). Per request
the context reached (isl), the new tokens (<= isl) and the output (capped at max_output_tokens) are drawn from
their log-normal distributions (median, mean -> sigma; Dist). The first turn of a session prefills its initial
context c0 = isl - (E[T] - 1) / 2 (E[new] + E[osl]) (at least its new tokens), as ``serving/lengths.py`` counts it;
a harness that replays each session from a uniform start fraction r in ``replay_start_ratio`` (AgentX from
2026-07-29) replays T (1 - r) turns, the first prefilling the whole context reached there (lengths.py likewise);
later turns prefill only their new tokens, if the session's prefix is still cached (kv_cache.py decides), scaled
where the workload publishes a hit ceiling so the trace-wide hit stays at or below it (``sessions.ceiling_scale``,
as the mean request counts it). A tool pause published without a spread
is drawn exponential with that mean: identical pauses and lengths lock the clients into synchronized waves, and
the closed form's queueing assumes random arrivals. Contexts are drawn per request, not
grown turn by turn: the distributions are the workload's statistics over all requests.
"""

from __future__ import annotations

import numpy as np

from ...specs.deployment import FixedWorkload
from ...specs.workload import WorkloadSpec
from ..sessions import ceiling_scale


def _lognormal(rng, dist, n: int) -> np.ndarray:
    return dist.median * np.exp(dist.sigma * rng.standard_normal(n))


class Lengths:
    """Pre-drawn request lengths for ``n`` requests: arrays isl, new (uncached on a first turn / a cache miss
    is isl, handled by the engine), osl, first (True: a session's first turn) and session turn counts."""

    def __init__(self, workload, n: int, rng: np.random.Generator):
        if isinstance(workload, FixedWorkload) or (isinstance(workload, WorkloadSpec) and workload.kind == "fixed"):
            assert workload.isl is not None and workload.osl is not None  # a fixed workload has both
            isl, osl, hit = float(workload.isl), float(workload.osl), float(workload.prefix_hit)
            self.agentic = False
            self.isl = np.full(n, isl)
            self.osl: np.ndarray = np.full(n, max(osl, 1.0))
            self.new = np.full(n, max(isl * (1 - hit), 1.0))
            self.first_new = self.new
            self.pause_s = np.zeros(n)
            self.turns_mean = 1.0
            return
        a = workload.agentic
        self.agentic = True
        self.isl = np.maximum(np.round(_lognormal(rng, a.context_tokens, n)), 1.0)
        self.new = np.minimum(np.maximum(np.round(_lognormal(rng, a.new_tokens_per_turn, n)), 1.0), self.isl)
        drawn_osl = np.maximum(np.round(_lognormal(rng, a.output_tokens, n)), 1.0)
        self.osl = np.minimum(drawn_osl, a.max_output_tokens) if a.max_output_tokens else drawn_osl
        if a.max_hit_rate is not None:   # the trace-wide hit ceiling: later turns' new tokens scaled (sessions.py)
            self.new = np.minimum(np.maximum(np.round(self.new * ceiling_scale(a)), 1.0), self.isl)
        self._replay = a.replay_start_ratio if a.replayed_turns is not None else None
        if self._replay is not None:     # replayed from a mid-trajectory start: the first replayed request
            self.turns_mean = float(a.replayed_turns)      # prefills the whole context reached there, cold
            self.first_new = self.isl.copy()
        elif a.turns is not None:        # first turns prefill the initial context
            self.turns_mean = a.turns.mean_value
            grow = (self.turns_mean - 1) / 2 * (a.new_tokens_per_turn.mean_value + self.osl.mean())
            self.first_new = np.clip(self.isl - grow, self.new, self.isl)
        else:                            # no turn count: the hit ceiling already counts first turns
            self.turns_mean = np.inf
            self.first_new = self.new
        p = a.tool_pause_s
        if p is None:
            self.pause_s = np.zeros(n)
        elif p.sigma > 0:
            self.pause_s = _lognormal(rng, p, n)
        else:      # no published spread: exponential with that mean (random arrivals, as the queueing assumes)
            self.pause_s = rng.exponential(p.mean_value, n)
        self._turns_dist = a.turns

    def session_turns(self, rng: np.random.Generator) -> int:
        """Turns of a new session (fixed workloads: 1)."""
        if not self.agentic or self._turns_dist is None:
            return 1 if not self.agentic else 10 ** 9
        turns = _lognormal(rng, self._turns_dist, 1)[0]
        if self._replay is not None:     # the harness starts the trace at a uniform fraction r and replays the rest
            turns *= 1.0 - rng.uniform(*self._replay)
        return max(int(round(turns)), 1)
