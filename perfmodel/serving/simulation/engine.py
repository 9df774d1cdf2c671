"""The clock loop of one engine instance: continuous batching with chunked prefill, wiring the seams.

Seams (each its own module, units and rules in its docstring):
  * ``clients.Clients``: when requests reach the scheduler (closed loop of C clients or open-loop Poisson arrivals);
  * ``ledger.RequestLog``: each request's lengths, session and times;
  * ``scheduler.Scheduler``: FIFO admission under the running cap and KV room, chunked prefill under the token
    budget per attention-DP rank;
  * ``kv_cache.KVCacheManager``: KV reservations of running requests and the LRU prefix cache of paused sessions;
  * ``decode_batch.DecodeBatch``: the decoding requests, ``acc`` accepted tokens per step each;
  * ``cost.CostOracle``: the duration of each step, off the compiled step tables (``steps.StepTables``).
Clock (s): each pass takes the requests that reached the scheduler by now and admits what fits; then
  * with prefill waiting, one step carrying the scheduled prefill tokens (and, on mixed engines, the decode batch);
  * else, with decoders, decode steps back to back: the loop jumps over them at once to the next completion, or to
    the next arrival where one could change the schedule (requests wait, or a running slot is free);
  * else, it jumps to the next arrival (none: the run ends).
A request whose prefill ends in a step gets its first token at the step's end and joins the decode batch;
a decoder whose output is complete frees its KV (a session's context enters the prefix cache) and, in a closed
loop, its client sends the next request after its pause.
"""

from __future__ import annotations

import math

import numpy as np

from .clients import Clients
from .cost import CostOracle
from .decode_batch import DecodeBatch
from .kv_cache import KVCacheManager
from .ledger import RequestLog
from .requests import Lengths
from .scheduler import Scheduler
from .steps import StepTables


class Engine:
    def __init__(self, tables: StepTables, lengths: Lengths, *, acc: float, cap: int, kv_tokens: float,
                 budget: float, ranks: int, mixed: bool, t_req: float, q_res: float, rng: np.random.Generator,
                 lost: float = 0.0):
        self.t, self.L, self.acc, self.cap = tables, lengths, float(acc), int(max(cap, 1))
        self.kv_tokens, self.budget, self.ranks, self.mixed = float(kv_tokens), float(budget), int(max(ranks, 1)), mixed
        self.t_req, self.q_res, self.rng = float(t_req), float(q_res), rng
        self.lost = float(lost)          # tokens a hit recomputes past its last state snapshot
        self.cost = CostOracle(tables, mixed)

    def _clients(self, n_requests: int, clients: float | None, rate: float | None) -> Clients:
        """The clients' first sends: 2 n open-loop arrivals at ``rate``/s, or ``clients`` closed-loop clients
        spread over one cycle (their decode at the full batch plus a pause)."""
        src = Clients(self.t_req)
        if rate is not None:
            src.open_loop(rate, n_requests, self.rng)
            return src
        assert clients is not None  # closed loop: the caller gives clients where it gives no rate
        L, n_c = self.L, int(round(clients))
        cycle = float(L.osl.mean()) / self.acc * self.cost.decode_at(min(n_c, self.cap), float(L.isl.mean())) \
            + float(L.pause_s.mean())
        src.closed_loop(n_c, cycle, self.rng)
        return src

    def run(self, n_requests: int, clients: float | None = None, rate: float | None = None, progress=None):
        """Simulate until ``n_requests`` requests completed. Returns per-request arrays (dict of numpy arrays,
        one entry per completed request, in completion order; ``RequestLog.results``)."""
        acc, cost = self.acc, self.cost
        log = RequestLog(self.L, self.q_res, self.rng)
        src = self._clients(n_requests, clients, rate)
        kv = KVCacheManager(self.kv_tokens, self.lost)
        sched = Scheduler(self.cap, self.budget, self.ranks)
        batch = DecodeBatch(self.cap)
        done_ids: list[int] = []
        done_t: list[float] = []
        tick = max(n_requests // 100, 1)

        def finish(i: int, t_done: float) -> None:
            kv.free(log.sess[i], log.isl[i], log.osl[i], log.hold[i])
            sched.release()
            done_ids.append(i)
            done_t.append(t_done)
            if rate is None:
                src.send(log.client[i], t_done + log.pause_after(i))
            if progress is not None and len(done_ids) % tick == 0:
                progress(tick)

        now = 0.0
        while len(done_ids) < n_requests:
            for c, t_sent in src.due(now):
                sched.waiting.append(log.add(c, t_sent))
            sched.admit(log, kv)
            if sched.pf_queue:
                k, cached, ended = sched.take_prefill(log)
                dt, decode = cost.prefill_step(batch.n, batch.ctx_sum, k, cached)
                nsteps = 1
            elif batch.n > 0:
                dt = cost.decode_step(batch.n, batch.ctx_sum)
                nsteps = batch.steps_to_finish(acc)
                t_next = src.next_at()
                if t_next is not None and (sched.waiting or sched.running < sched.cap):
                    nsteps = min(nsteps, max(math.ceil((t_next - now) / dt), 1))
                decode, ended = True, []
            else:
                t_next = src.next_at()
                if t_next is None:
                    break
                now = max(now, t_next)
                continue
            now += dt * nsteps
            if decode:
                for i in batch.advance(acc, nsteps):
                    finish(i, now)
            for i in ended:
                log.first[i] = now
                batch.add(i, log.isl[i], log.osl[i])
        return log.results(done_ids, done_t)
