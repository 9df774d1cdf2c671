"""The seams of the event simulation (serving/simulation): KV cache manager, scheduler policy, cost oracle, decode
batch, clients, and the clock loop wiring them, each on a case worked by hand."""

import numpy as np
import pytest

from perfmodel.serving.simulation.clients import Clients
from perfmodel.serving.simulation.cost import CostOracle
from perfmodel.serving.simulation.decode_batch import DecodeBatch
from perfmodel.serving.simulation.engine import Engine
from perfmodel.serving.simulation.kv_cache import KVCacheManager
from perfmodel.serving.simulation.ledger import RequestLog
from perfmodel.serving.simulation.requests import Lengths
from perfmodel.serving.simulation.scheduler import Scheduler
from perfmodel.serving.simulation.steps import Axis
from perfmodel.specs.deployment import FixedWorkload


class FakeTables:
    """Step tables with hand-readable costs (s): decode 1 ms + 1 us per sequence; mixed: decode + 10 us per
    prefill token; prefill: 10 us per token + 1 us per cached token."""

    def decode_s(self, b, ctx):
        return 1e-3 + 1e-6 * b

    def mixed_s(self, b, ctx, k):
        return self.decode_s(b, ctx) + 1e-5 * k

    def prefill_s(self, k, cached):
        return 1e-5 * k + 1e-6 * cached


def _log(isl=1000.0, osl=100.0, hit=0.0, n=8):
    return RequestLog(Lengths(FixedWorkload(isl=isl, osl=osl, prefix_hit=hit), n, np.random.default_rng(0)), 0.0,
                      np.random.default_rng(0))


# --- KV cache manager ---------------------------------------------------------------------------------------------

def test_kv_refuses_a_reservation_beyond_its_capacity():
    kv = KVCacheManager(1000.0)
    assert not kv.over(1000.0) and kv.over(1000.5)
    assert kv.allocate(-1, True, 600.0, 600.0, 600.0) == 600.0      # no session: its drawn new tokens
    assert kv.over(401.0) and not kv.over(400.0)
    kv.free(-1, 600.0, 50.0, 600.0)
    assert kv.held == 0.0 and not kv.cache                          # no session: nothing cached


def test_kv_prefix_reuse_and_lru_eviction():
    kv = KVCacheManager(1000.0, lost=10.0)
    for sess in (1, 2):                                              # two turns end: 300 + 100 tokens cached each
        kv.allocate(sess, True, 300.0, 300.0, 350.0)
        kv.free(sess, 300.0, 100.0, 350.0)
    assert list(kv.cache) == [1, 2] and kv.cache_tokens == 800.0
    assert not kv.over(1000.0)                                       # the cache yields to a reservation
    # a first turn reserving 300 passes 1000 with the cache: the oldest prefix (session 1) goes
    assert kv.allocate(3, True, 300.0, 300.0, 300.0) == 300.0
    assert list(kv.cache) == [2] and kv.cache_tokens == 400.0 and kv.held == 300.0
    # session 2's next turn (context 500, 100 new): a hit, prefills new + lost; its prefix leaves the cache
    assert kv.allocate(2, False, 500.0, 100.0, 550.0) == 110.0
    assert not kv.cache and kv.held == 850.0 and kv.cache_tokens == 0.0
    # session 1's next turn was evicted: it prefills its whole context
    assert kv.allocate(1, False, 700.0, 50.0, 0.0) == 700.0


# --- scheduler policy ---------------------------------------------------------------------------------------------

def test_scheduler_admits_fifo_under_the_cap_and_kv_room():
    log = _log(isl=1000.0, osl=100.0)                                # hold 1000 + 100 - 100 / 2 = 1050 tokens
    kv = KVCacheManager(2500.0)
    sched = Scheduler(cap=3, budget=512.0, ranks=1)
    for c in range(4):
        sched.waiting.append(log.add(c, 0.0))
    sched.admit(log, kv)
    assert list(sched.pf_queue) == [0, 1] and list(sched.waiting) == [2, 3]     # a third 1050 passes 2500
    assert sched.running == 2 and kv.held == 2100.0
    idle = Scheduler(cap=3, budget=512.0, ranks=1)                   # an idle engine admits what does not fit
    idle.waiting.append(log.add(9, 0.0))
    idle.admit(log, KVCacheManager(10.0))
    assert idle.running == 1


def test_scheduler_packs_prefill_by_the_token_budget():
    log = _log(isl=60.0, osl=10.0)
    sched = Scheduler(cap=8, budget=100.0, ranks=1)
    for c, new in enumerate((60.0, 60.0, 30.0)):
        i = log.add(c, 0.0)
        log.new[i] = new
        sched.waiting.append(i)
    sched.admit(log, KVCacheManager(1e9))
    # pass 1: all 60 of request 0, then a 40-token chunk of request 1 (budget 100)
    assert sched.take_prefill(log) == (100.0, 0.0, [0])
    # pass 2: request 1's last 20 (40 of its tokens now in front of the chunk) and request 2's 30
    assert sched.take_prefill(log) == (50.0, 40.0, [1, 2])
    assert not sched.pf_queue


def test_scheduler_splits_prefill_over_attention_dp_ranks():
    log = _log(isl=100.0, osl=10.0)
    sched = Scheduler(cap=8, budget=100.0, ranks=2)
    for c in range(3):
        sched.waiting.append(log.add(c, 0.0))
    sched.admit(log, KVCacheManager(1e9))
    assert sched.take_prefill(log) == (100.0, 0.0, [0, 1])           # one request per rank, the busiest 100


# --- cost oracle --------------------------------------------------------------------------------------------------

def test_cost_oracle_mixed_and_prefill_first():
    mixed, first = CostOracle(FakeTables(), True), CostOracle(FakeTables(), False)  # type: ignore[arg-type]
    assert mixed.prefill_step(4, 4000.0, 100.0, 50.0) == (pytest.approx(1e-3 + 4e-6 + 1e-3), True)
    assert first.prefill_step(4, 4000.0, 100.0, 50.0) == (pytest.approx(1e-3 + 5e-5), False)
    assert mixed.prefill_step(0, 0.0, 100.0, 0.0) == (pytest.approx(1e-3), False)   # nothing decoding
    assert mixed.decode_step(4, 4000.0) == pytest.approx(1.004e-3)


def test_axis_locates_on_log_and_linear_grids():
    assert Axis(0.0, 100.0, 5, False).locate(30.0) == (1, pytest.approx(0.2))
    i, t = Axis(1.0, 100.0, 3, True).locate(10.0)                    # ln 10 / ln 100 = 1/2 -> point 1 of 0..2
    assert i + t == pytest.approx(1.0)
    assert Axis(1.0, 100.0, 3, True).locate(1e6) == (1, 1.0)        # clamped
    assert Axis(5.0, 5.0, 3, True).locate(7.0) == (0, 0.0)          # a flat axis


# --- decode batch and clients -------------------------------------------------------------------------------------

def test_decode_batch_advances_and_releases_the_first_done():
    b = DecodeBatch(4)
    b.add(0, 100.0, 10.0)
    b.add(1, 200.0, 4.0)
    assert b.steps_to_finish(3.0) == 2 and b.ctx_sum == 300.0       # 4 tokens at 3 a step: 2 steps
    assert b.advance(3.0, 2) == [1]                                  # request 1 done (2 tokens past its end)
    assert b.n == 1 and b.ctx_sum == 106.0 and b.rem[0] == 4.0       # request 0: 100 + 6 context, 4 left


def test_clients_reach_the_scheduler_after_the_request_overhead():
    src = Clients(t_req=0.5)
    src.send(1, 2.0)
    src.send(0, 1.0)
    assert src.next_at() == 1.5
    assert src.due(2.0) == [(0, 1.0)] and src.due(2.5) == [(1, 2.0)] and src.next_at() is None


# --- the clock loop -----------------------------------------------------------------------------------------------

def test_engine_single_client_by_hand():
    """One client, 1000 input tokens in two passes of a 512 budget (512 + 488 tokens, 10 us each, the second after a
    512-token prefix: +0.512 ms), 100 output tokens at one accepted token per 1.001 ms step; 50 ms request overhead."""
    L = Lengths(FixedWorkload(isl=1000, osl=100), 16, np.random.default_rng(0))
    eng = Engine(FakeTables(), L, acc=1.0, cap=4, kv_tokens=1e6, budget=512.0, ranks=1,  # type: ignore[arg-type]
                 mixed=True, t_req=0.05, q_res=0.0, rng=np.random.default_rng(0))
    out = eng.run(3, clients=1)
    ttft = 0.05 + 1000 * 1e-5 + 512 * 1e-6
    assert out["ttft_s"] == pytest.approx([ttft] * 3, rel=1e-9)
    assert out["tpot_s"] == pytest.approx([1.001e-3] * 3, rel=1e-9)
    e2e = ttft + 100 * 1.001e-3
    assert out["done_s"] == pytest.approx([e2e, 2 * e2e, 3 * e2e], rel=1e-9)   # the next request sent at done
