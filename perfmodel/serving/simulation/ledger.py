"""Request log of the event simulation: each new request's lengths and session, and its times (s).

Rules (lengths in tokens):
  * the n-th request takes the pre-drawn lengths of pool entry n mod pool size (``requests.Lengths``);
  * agentic workloads: a client whose session has no turns left opens a new session of ``session_turns`` turns
    (drawn from the run's generator when it opens); its first turn prefills ``first_new`` tokens, later turns
    ``new`` (the KV cache manager may raise that to the whole context, ``kv_cache.py``); fixed workloads: no
    session (-1), ``new`` tokens;
  * a request reserves h = isl + osl - (1 - q_res) osl / 2 KV tokens while it runs;
  * a closed-loop client pauses ``pause_s`` of pool entry (7919 i) mod pool size after its request i ends
    (agentic workloads; 0 for fixed ones).
Results per completed request (in completion order): TTFT = end of its last prefill pass - send time; TPOT =
(done - first token) / osl; E2E = done - send time.
"""

from __future__ import annotations

import math

import numpy as np

from .requests import Lengths


class RequestLog:
    """Per-request columns (lists indexed by request id, in arrival order at the scheduler) and the clients'
    sessions."""

    def __init__(self, lengths: Lengths, q_res: float, rng: np.random.Generator):
        self.L, self.q_res, self.rng = lengths, float(q_res), rng
        self.n_pool = len(lengths.isl)
        self.isl: list = []          # context tokens
        self.new: list = []          # tokens to prefill (drawn; set at admission)
        self.osl: list = []          # output tokens
        self.cached: list = []       # prefix tokens found in the cache (set at admission)
        self.sent: list = []         # send time, s
        self.first: list = []        # first token (end of the last prefill pass), s
        self.client: list = []       # client (-1: open loop)
        self.sess: list = []         # session (-1: none)
        self.hold: list = []         # KV reservation while running, tokens
        self.first_turn: list = []   # True: an agentic session's first turn
        self._next_draw = 0
        self._turns_left: dict[int, int] = {}       # client -> turns left in its session
        self._client_session: dict[int, int] = {}   # client -> its session id
        self._n_sessions = 0

    def _session(self, client: int) -> tuple[int, bool]:
        """(session id, first turn) of the client's next request (the session rule of the module docstring)."""
        left = self._turns_left.get(client, 0)
        first = left <= 0
        if first:
            self._client_session[client] = self._n_sessions
            self._n_sessions += 1
            self._turns_left[client] = self.L.session_turns(self.rng)
        self._turns_left[client] -= 1
        return self._client_session[client], first

    def add(self, client: int, t_sent: float) -> int:
        """Log a request ``client`` sent at ``t_sent`` s; returns its id."""
        L = self.L
        j = self._next_draw % self.n_pool
        self._next_draw += 1
        sess, first = self._session(client) if L.agentic else (-1, True)
        isl, osl = L.isl[j], L.osl[j]
        self.isl.append(isl)
        self.osl.append(osl)
        self.new.append(L.first_new[j] if first else L.new[j])
        self.first_turn.append(first and L.agentic)
        self.cached.append(0.0)
        self.sent.append(t_sent)
        self.first.append(math.nan)
        self.client.append(client)
        self.sess.append(sess)
        self.hold.append(isl + osl - (1 - self.q_res) * osl / 2)
        return len(self.isl) - 1

    def pause_after(self, i: int) -> float:
        """The client's pause after request ``i`` ends, s."""
        return float(self.L.pause_s[(i * 7919) % self.n_pool]) if self.L.agentic else 0.0

    def results(self, done_ids: list[int], done_t: list[float]) -> dict:
        """Per-request arrays (one entry per completed request, in completion order), times in s."""
        ids = np.array(done_ids, dtype=np.int64)

        def col(x: list) -> np.ndarray:
            return np.asarray(x, float)[ids]
        t_done = np.array(done_t)
        sent, first, osl = col(self.sent), col(self.first), col(self.osl)
        return {"sent_s": sent, "first_token_s": first, "done_s": t_done, "isl": col(self.isl),
                "uncached_input": col(self.new), "osl": osl, "ttft_s": first - sent,
                "tpot_s": (t_done - first) / osl, "e2e_s": t_done - sent}
