"""Clients of the event simulation: when requests reach the scheduler (times in s).

Rules:
  * a request reaches the scheduler ``t_req`` s after it is sent (the profile's request overhead: API server,
    tokenization); requests reaching it at the same time keep their send order;
  * open loop: Poisson arrivals at ``rate`` requests/s, 2 n of them drawn at the start (arrivals go on past the
    last measured completion: no draining at the end);
  * closed loop: C clients, each sending its next request a pause after its last one ended (``RequestLog
    .pause_after``); they send their first requests at uniform random times over one ``cycle`` (so the loop
    starts at random phases rather than in one synchronized wave), a single client at 0.
"""

from __future__ import annotations

import heapq

import numpy as np


class Clients:
    """The heap of requests on their way to the scheduler: (time at the scheduler, seq, client, sent time)."""

    __slots__ = ("heap", "seq", "t_req")

    def __init__(self, t_req: float):
        self.t_req = float(t_req)
        self.heap: list = []
        self.seq = 0

    def send(self, client: int, t_sent: float) -> None:
        """``client`` (-1: open loop) sends a request at ``t_sent`` s."""
        heapq.heappush(self.heap, (t_sent + self.t_req, self.seq, client, t_sent))
        self.seq += 1

    def open_loop(self, rate: float, n: int, rng: np.random.Generator) -> None:
        """Send 2 n Poisson arrivals at ``rate`` requests/s."""
        t_open = np.cumsum(rng.exponential(1.0 / rate, size=2 * n + 1))
        for i in range(2 * n):
            self.send(-1, float(t_open[i]))

    def closed_loop(self, n_clients: int, cycle: float, rng: np.random.Generator) -> None:
        """``n_clients`` clients send their first requests spread over ``cycle`` s."""
        for c in range(n_clients):
            self.send(c, float(rng.uniform(0.0, cycle)) if n_clients > 1 else 0.0)

    def next_at(self) -> float | None:
        """When the next request reaches the scheduler, s (None: no request on its way)."""
        return self.heap[0][0] if self.heap else None

    def due(self, now: float) -> list[tuple[int, float]]:
        """Take the requests reaching the scheduler by ``now`` s (1e-12 s tolerance): [(client, sent time)]."""
        heap, out = self.heap, []
        while heap and heap[0][0] <= now + 1e-12:
            _, _, c, t_sent = heapq.heappop(heap)
            out.append((c, t_sent))
        return out
