"""The event loop of one engine instance: continuous batching with chunked prefill.

State (times in s, lengths in tokens):
  * clients: a closed loop of C clients (each sends its next request a pause after its last one ended: the
    workload's tool pause, 0 for fixed workloads), or an open loop of Poisson arrivals at lambda requests/s;
  * a request reaches the scheduler t_req after it is sent (the profile's request overhead: API server,
    tokenization), and waits FIFO for admission: a running slot (at most ``cap`` running) and KV room;
  * KV: a running request holds h = isl + osl - (1 - q_res) osl / 2 tokens (the step equations' reservation);
    the rest of the ``kv_tokens`` capacity keeps the prefixes of paused sessions, least recently used first
    evicted; a turn whose prefix was evicted prefills its whole context (``requests.py``), a hit its new tokens
    plus those past its last state snapshot (``lost``);
  * each step the scheduler takes prefill work from the head of the prefill queue, up to ``budget`` tokens per
    attention-DP rank on ``ranks`` ranks (a long prompt in chunks, short ones packed), and
      - mixed engines (vLLM, TensorRT-LLM): one pass of the decode batch plus those tokens,
        ``StepTables.mixed_s(b, L, k)`` with k the busiest rank's tokens;
      - prefill-first engines (SGLang): a prefill pass alone, ``prefill_s(k, cached)``, while decode stalls;
    with no prefill waiting, decode steps ``decode_s(b, L)`` (L the decoders' mean context) run back to back,
    and the loop jumps over the steps until the next completion or arrival (a segment) at once;
  * each decode step advances every decoding request by acc accepted tokens (the mean acceptance).
Per request: TTFT = end of its last prefill pass - send time; TPOT = (done - first token) / osl;
E2E = done - send time.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, deque

import numpy as np

from .requests import Lengths
from .steps import StepTables


class Engine:
    def __init__(self, tables: StepTables, lengths: Lengths, *, acc: float, cap: int, kv_tokens: float,
                 budget: float, ranks: int, mixed: bool, t_req: float, q_res: float, rng: np.random.Generator,
                 lost: float = 0.0):
        self.t, self.L, self.acc, self.cap = tables, lengths, float(acc), int(max(cap, 1))
        self.kv_tokens, self.budget, self.ranks, self.mixed = float(kv_tokens), float(budget), int(max(ranks, 1)), mixed
        self.t_req, self.q_res, self.rng = float(t_req), float(q_res), rng
        self.lost = float(lost)          # tokens a hit recomputes past its last state snapshot

    def run(self, n_requests: int, clients: float | None = None, rate: float | None = None, progress=None):
        """Simulate until ``n_requests`` requests completed. Returns per-request arrays (dict of numpy arrays,
        one entry per completed request, in completion order)."""
        L, acc = self.L, self.acc
        n_pool = len(L.isl)
        now = 0.0
        arrivals: list = []              # heap of (time at the scheduler, seq, client, sent time)
        seq = 0
        sess_turns_left: dict[int, int] = {}
        next_draw = 0

        def send(client: int, t_sent: float):
            nonlocal seq
            heapq.heappush(arrivals, (t_sent + self.t_req, seq, client, t_sent))
            seq += 1

        if rate is not None:        # arrivals go on past the last measured completion (no draining at the end)
            gaps = self.rng.exponential(1.0 / rate, size=2 * n_requests + 1)
            t_open = np.cumsum(gaps)
            for i in range(2 * n_requests):
                send(-1, float(t_open[i]))
        else:
            # clients start spread over one cycle (their decode at the full batch plus a pause), so the loop
            # starts at random phases rather than in one synchronized wave
            assert clients is not None  # closed loop: the caller gives clients where it gives no rate
            n_c = int(round(clients))
            cycle = float(L.osl.mean()) / acc * self.t.decode_s(min(n_c, self.cap), float(L.isl.mean())) \
                + float(L.pause_s.mean())
            for c in range(n_c):
                send(c, float(self.rng.uniform(0.0, cycle)) if n_c > 1 else 0.0)
        waiting: deque = deque()        # arrived, not admitted: (req idx)
        pf_queue: deque = deque()       # admitted, prefilling: req idx (remaining in pf_left)
        cache: OrderedDict = OrderedDict()    # session -> cached tokens (paused sessions' prefixes)
        cache_tokens = 0.0
        held = 0.0
        # request table (grows): lengths index, client, session, times
        R_isl, R_new, R_osl, R_cached, R_sent, R_first, R_pfdone, R_client, R_sess, R_hold, R_firstturn = (
            [] for _ in range(11))
        pf_left: dict[int, float] = {}
        # decoders: slot arrays
        cap = self.cap
        rem = np.zeros(cap + 1)
        rid = np.zeros(cap + 1, dtype=np.int64)
        nd = 0
        ctx_sum = 0.0
        running = 0                      # admitted requests (prefilling + decoding)
        done_ids: list[int] = []
        done_t: list[float] = []
        client_session: dict[int, int] = {}
        n_sessions = 0
        tick = max(n_requests // 100, 1)

        def new_request(client: int, t_sent: float) -> int:
            nonlocal next_draw, n_sessions
            j = next_draw % n_pool
            next_draw += 1
            first = True
            if L.agentic:
                left = sess_turns_left.get(client, 0)
                if left <= 0:
                    client_session[client] = n_sessions
                    n_sessions += 1
                    sess_turns_left[client] = L.session_turns(self.rng)
                else:
                    first = False
                sess_turns_left[client] -= 1
                sess = client_session[client]
            else:
                sess = -1
            R_isl.append(L.isl[j])
            R_osl.append(L.osl[j])
            R_new.append(L.first_new[j] if first else L.new[j])
            R_firstturn.append(first and L.agentic)
            R_cached.append(0.0)
            R_sent.append(t_sent)
            R_first.append(math.nan)
            R_pfdone.append(math.nan)
            R_client.append(client)
            R_sess.append(sess)
            R_hold.append(L.isl[j] + L.osl[j] - (1 - self.q_res) * L.osl[j] / 2)
            return len(R_isl) - 1

        def admit():
            nonlocal held, cache_tokens, running
            while waiting:
                i = waiting[0]
                if running >= cap or (running > 0 and held + R_hold[i] > self.kv_tokens):
                    return
                waiting.popleft()
                sess = R_sess[i]
                new = R_new[i]
                if sess >= 0 and sess in cache:
                    cache_tokens -= cache.pop(sess)          # the prefix becomes part of the running hold
                    new = min(new + self.lost, R_isl[i])
                elif sess >= 0 and not R_firstturn[i]:
                    new = R_isl[i]                           # evicted: re-prefill it all
                R_new[i] = new
                R_cached[i] = R_isl[i] - new
                held += R_hold[i]
                running += 1
                while cache and cache_tokens + held > self.kv_tokens:
                    cache_tokens -= cache.popitem(last=False)[1]
                pf_left[i] = new
                pf_queue.append(i)

        def finish(i: int, t_done: float):
            nonlocal held, cache_tokens, running
            held -= R_hold[i]
            running -= 1
            done_ids.append(i)
            done_t.append(t_done)
            sess = R_sess[i]
            if sess >= 0:
                keep = R_isl[i] + R_osl[i]
                if keep + cache_tokens + held <= self.kv_tokens or cache:
                    cache[sess] = keep
                    cache_tokens += keep
                    while cache and cache_tokens + held > self.kv_tokens:
                        cache_tokens -= cache.popitem(last=False)[1]
            if rate is None:
                c = R_client[i]
                pause = float(L.pause_s[(i * 7919) % n_pool]) if L.agentic else 0.0
                send(c, t_done + pause)

        def take_prefill():
            """Up to ``budget`` tokens per rank from the queue head: (busiest rank's tokens, its cached
            prefix, requests whose prefill ends in this pass)."""
            k_max, cached, ended = 0.0, 0.0, []
            q = list(pf_queue)
            pos = 0
            for _r in range(self.ranks):
                room = self.budget
                k = 0.0
                while room > 0 and pos < len(q):
                    i = q[pos]
                    take = min(room, pf_left[i])
                    if k == 0.0:
                        c0 = R_cached[i] + (R_new[i] - pf_left[i])
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
                pf_queue.remove(i)
            return k_max, cached, ended

        while len(done_ids) < n_requests:
            while arrivals and arrivals[0][0] <= now + 1e-12:
                _, _, c, t_sent = heapq.heappop(arrivals)
                waiting.append(new_request(c, t_sent))
            admit()
            if pf_queue:
                k, cached, ended = take_prefill()
                if self.mixed and nd > 0:
                    dt = self.t.mixed_s(nd, ctx_sum / nd, k)
                else:
                    dt = self.t.prefill_s(k, cached)
                decode = self.mixed and nd > 0
                nsteps = 1
            elif nd > 0:
                dt = self.t.decode_s(nd, ctx_sum / nd)
                steps_fin = math.ceil(float(rem[:nd].min()) / acc - 1e-9)
                nsteps = max(steps_fin, 1)
                if arrivals and (waiting or running < cap):
                    nsteps = min(nsteps, max(math.ceil((arrivals[0][0] - now) / dt), 1))
                decode, ended = True, []
            else:
                if not arrivals:
                    break
                now = max(now, arrivals[0][0])
                continue
            now += dt * nsteps
            if decode:
                rem[:nd] -= acc * nsteps
                ctx_sum += acc * nsteps * nd
                fin = np.flatnonzero(rem[:nd] <= 1e-9)
                for s in fin[::-1]:
                    i = int(rid[s])
                    ctx_sum -= R_isl[i] + R_osl[i] - rem[s]
                    nd -= 1
                    rem[s], rid[s] = rem[nd], rid[nd]
                    finish(i, now)
                    if progress is not None and len(done_ids) % tick == 0:
                        progress(tick)
            for i in ended:
                R_first[i] = now
                R_pfdone[i] = now
                rem[nd] = R_osl[i]
                rid[nd] = i
                ctx_sum += R_isl[i]
                nd += 1
        ids = np.array(done_ids, dtype=np.int64)
        A = lambda x: np.asarray(x, float)[ids]  # noqa: E731
        t_done = np.array(done_t)
        return {"sent_s": A(R_sent), "first_token_s": A(R_first), "done_s": t_done, "isl": A(R_isl),
                "uncached_input": A(R_new), "osl": A(R_osl), "ttft_s": A(R_first) - A(R_sent),
                "tpot_s": (t_done - A(R_first)) / A(R_osl), "e2e_s": t_done - A(R_sent)}
