"""KV cache manager of the event simulation: the reservations of running requests and the LRU prefix cache of
paused sessions, counted in tokens (a block of one token: no rounding to pages).

Rules (all sizes in tokens):
  * a running request reserves h = isl + osl - (1 - q_res) osl / 2 tokens from admission to completion (the step
    equations' reservation; the caller computes h). ``over(h)`` says the reservation would pass the capacity; an
    idle engine admits regardless (the scheduler's rule, ``scheduler.py``);
  * a finished turn of a session leaves its context, isl + osl tokens, cached under its session id, if it fits
    beside the reservations or the cache already holds something (then the oldest entries make room);
  * admitting a later turn of a session whose prefix is cached takes the prefix out of the cache (it becomes part
    of the reservation) and prefills its new tokens plus ``lost`` (those past the last state snapshot), at most
    isl; a later turn whose prefix was evicted prefills its whole context isl; a first turn its new tokens;
  * whenever reservations plus cache exceed the capacity, the least recently cached prefixes are evicted until
    they fit or the cache is empty. No running request is ever evicted (no preemption).
"""

from __future__ import annotations

from collections import OrderedDict


class KVCacheManager:
    """Reservations (``held``) and cached session prefixes (``cache``: session -> tokens, oldest first) against
    ``capacity`` tokens."""

    __slots__ = ("cache", "cache_tokens", "capacity", "held", "lost")

    def __init__(self, capacity: float, lost: float = 0.0):
        self.capacity = float(capacity)
        self.lost = float(lost)            # tokens a hit recomputes past its last state snapshot
        self.held = 0.0                    # tokens reserved by running requests
        self.cache: OrderedDict = OrderedDict()
        self.cache_tokens = 0.0            # tokens of the cached prefixes

    def over(self, hold: float) -> bool:
        """True where reserving ``hold`` more tokens would pass the capacity (the cache does not count: it yields)."""
        return self.held + hold > self.capacity

    def allocate(self, sess: int, first_turn: bool, isl: float, new: float, hold: float) -> float:
        """Reserve ``hold`` tokens for a request of session ``sess`` (-1: none) with context ``isl`` and ``new``
        uncached tokens as drawn; returns the tokens it must prefill (the prefix rule of the module docstring)."""
        cache = self.cache
        if sess >= 0 and sess in cache:
            self.cache_tokens -= cache.pop(sess)          # the prefix becomes part of the running hold
            new = min(new + self.lost, isl)
        elif sess >= 0 and not first_turn:
            new = isl                                     # evicted: re-prefill it all
        self.held += hold
        self._evict()
        return new

    def free(self, sess: int, isl: float, osl: float, hold: float) -> None:
        """Release a finished request's ``hold`` tokens; a session's context (isl + osl) enters the cache."""
        self.held -= hold
        if sess >= 0:
            keep = isl + osl
            if keep + self.cache_tokens + self.held <= self.capacity or self.cache:
                self.cache[sess] = keep
                self.cache_tokens += keep
                self._evict()

    def _evict(self) -> None:
        """Drop the least recently cached prefixes while reservations plus cache exceed the capacity."""
        cache = self.cache
        while cache and self.cache_tokens + self.held > self.capacity:
            self.cache_tokens -= cache.popitem(last=False)[1]
