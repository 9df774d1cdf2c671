"""Scheduler policy of the event simulation: which waiting requests are admitted, and which prefill tokens join
the next step (chunked prefill under a per-rank token budget).

Rules (lengths in tokens):
  * admission is FIFO: the head of the waiting queue is admitted while fewer than ``cap`` requests run and its
    KV reservation fits (``KVCacheManager.over``; an idle engine admits it regardless); the first that does not
    fit blocks those behind it. Admitted requests keep their reservation until they complete: no preemption;
  * an admitted request joins the prefill queue with its uncached tokens (``KVCacheManager.allocate``);
  * each step takes prefill work from the head of the prefill queue: up to ``budget`` tokens on each of ``ranks``
    attention-DP ranks in turn, a long prompt in chunks (it stays at the head), short ones packed; the step's cost
    is set by the busiest rank's tokens k and the cached prefix in front of that rank's first chunk.
"""

from __future__ import annotations

from collections import deque

from .kv_cache import KVCacheManager
from .ledger import RequestLog


class Scheduler:
    """The waiting queue, the prefill queue (``pf_left``: request -> prefill tokens left) and the count of running
    (admitted, prefilling or decoding) requests."""

    __slots__ = ("budget", "cap", "pf_left", "pf_queue", "ranks", "running", "waiting")

    def __init__(self, cap: int, budget: float, ranks: int):
        self.cap, self.budget, self.ranks = int(max(cap, 1)), float(budget), int(max(ranks, 1))
        self.waiting: deque = deque()          # arrived, not admitted: request ids
        self.pf_queue: deque = deque()         # admitted, prefilling: request ids
        self.pf_left: dict[int, float] = {}    # request id -> prefill tokens left
        self.running = 0                       # admitted requests (prefilling + decoding)

    def admit(self, log: RequestLog, kv: KVCacheManager) -> None:
        """Admit from the head of the waiting queue while a slot and the KV reservation allow."""
        waiting = self.waiting
        while waiting:
            i = waiting[0]
            if self.running >= self.cap or (self.running > 0 and kv.over(log.hold[i])):
                return
            waiting.popleft()
            new = kv.allocate(log.sess[i], log.first_turn[i], log.isl[i], log.new[i], log.hold[i])
            log.new[i] = new
            log.cached[i] = log.isl[i] - new
            self.running += 1
            self.pf_left[i] = new
            self.pf_queue.append(i)

    def release(self) -> None:
        """A running request completed."""
        self.running -= 1

    def take_prefill(self, log: RequestLog) -> tuple[float, float, list[int]]:
        """Up to ``budget`` tokens per rank from the queue head: (busiest rank's tokens, the cached prefix in front
        of its first chunk, requests whose prefill ends in this pass)."""
        pf_left = self.pf_left
        k_max, cached, ended = 0.0, 0.0, []
        q = list(self.pf_queue)
        pos = 0
        for _r in range(self.ranks):
            room = self.budget
            k = 0.0
            while room > 0 and pos < len(q):
                i = q[pos]
                take = min(room, pf_left[i])
                if k == 0.0:
                    c0 = log.cached[i] + (log.new[i] - pf_left[i])
                pf_left[i] -= take
                room -= take
                k += take
                if pf_left[i] <= 0:
                    ended.append(i)
                    pos += 1
                else:
                    break
            if k > k_max:
                k_max, cached = k, c0
            if pos >= len(q):
                break
        for i in ended:
            self.pf_queue.remove(i)
        return k_max, cached, ended
