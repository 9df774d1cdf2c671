"""Prefix-cache residency (serving/prefix_cache.py): hand-checked equations, and the agentic engine using them."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.arch.kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from perfmodel.engine.evaluate import Setup
from perfmodel.serving import prefix_cache as pc
from perfmodel.serving.sessions import agentic, agentic_disaggregated


def test_working_set_law_by_hand():
    # ceiling 0.9; capacity 10 prefixes against a working set of 40: 0.9 x 10/40 = 0.225; a cache larger than
    # the working set keeps the ceiling
    np.testing.assert_allclose(pc.working_set_hit(0.9, [10.0, 50.0], [40.0, 40.0]), [0.225, 0.9])


def test_lru_exponential_gaps_survival_matches_simulation():
    # the derivation: with exponential reuse gaps, the LRU stack distance of a prefix is (P - 1)(1 - e^-x),
    # x ~ Exp(1); it survives in n slots with probability n / (P - 1). A direct Monte Carlo of that quantity:
    rng = np.random.default_rng(0)
    P, n = 200, 50
    d = (P - 1) * (1 - np.exp(-rng.exponential(size=200_000)))
    assert abs((d < n).mean() - n / (P - 1)) < 0.005
    shares, ev = pc.tier_shares(np.array([P]), [np.array([n])])
    np.testing.assert_allclose(shares[0], n / P)
    np.testing.assert_allclose(ev, 1 - n / P)


def test_lru_cache_simulation_matches_the_working_set_law():
    # sessions returning in random order (independent exponential gaps = uniform reference order): an LRU cache
    # of n prefixes over P sessions hits n / P (a direct simulation of the cache, not of the formula)
    from collections import OrderedDict
    rng = np.random.default_rng(1)
    P, n = 120, 30
    cache, hits, refs = OrderedDict(), 0, rng.integers(0, P, 40_000)
    for i, r in enumerate(refs):
        if r in cache:
            hits += i >= 5000          # after a warm-up
            cache.move_to_end(r)
        else:
            cache[r] = True
            if len(cache) > n:
                cache.popitem(last=False)
    np.testing.assert_allclose(hits / (len(refs) - 5000), pc.working_set_hit(1.0, n, P), atol=0.01)


def test_tier_bands_by_hand():
    # 100 waiting prefixes; HBM 20, pool 10, host 30 -> shares 0.2, 0.1, 0.3, evicted 0.4
    shares, ev = pc.tier_shares(np.array([100.0, 10.0, 0.0]), [np.full(3, 20.0), np.full(3, 10.0), np.full(3, 30.0)])
    np.testing.assert_allclose([s[0] for s in shares], [0.2, 0.1, 0.3])
    np.testing.assert_allclose(ev, [0.4, 0.0, 0.0])
    # 10 waiting fit in HBM alone; nobody waiting: no shares, nothing evicted
    np.testing.assert_allclose([s[1] for s in shares], [1.0, 0.0, 0.0])
    np.testing.assert_allclose([s[2] for s in shares], [0.0, 0.0, 0.0])


def test_random_routing_by_hand():
    # 4 workers: each sees 4x the waiting prefixes; the copy found is E[j] = 4 turns old:
    # isl 100k, new 2k, osl 500 -> cached 100k - 2k - 3 (2.5k) = 90.5k tokens (session-aware: 98k)
    np.testing.assert_allclose(pc.competing(10.0, 4.0, "random"), 40.0)
    np.testing.assert_allclose(pc.competing(10.0, 4.0, "session"), 10.0)
    np.testing.assert_allclose(pc.cached_prefix_tokens(100e3, 2e3, 500, 4, "random"), 90.5e3)
    np.testing.assert_allclose(pc.cached_prefix_tokens(100e3, 2e3, 500, 4, "session"), 98e3)
    # half the prefixes evicted, 256 tokens lost to the snapshot boundary: 100k - 0.5 (98k - 256)
    np.testing.assert_allclose(pc.uncached_input(100e3, 2e3, 500, 0.5, 1, "session", 256), 100e3 - 0.5 * 97_744)
    with pytest.raises(ValueError, match="routing"):
        pc.competing(1.0, 1.0, "sticky")


def test_snapshots_by_hand():
    # fixed state 100 MB, 1 kB/token, 10k-token prefix: plain 110 MB; interval 1024 -> ceil(10000/1024) = 10
    # snapshots: (10 x 100 + 10) / 110 = 9.18x the bytes; boundary-only: 1x; lost tokens 512 / osl / none
    np.testing.assert_allclose(pc.snapshot_factor(1e3, [(100e6, 1024)], 10e3), 1010 / 110)
    np.testing.assert_allclose(pc.snapshot_factor(1e3, [(100e6, None)], 10e3), 1.0)
    np.testing.assert_allclose(pc.snapshot_factor(1e3, [(0.0, 1024)], 10e3), 1.0)
    np.testing.assert_allclose(pc.snapshot_lost_tokens([(100e6, 1024)], 400.0), 512.0)
    np.testing.assert_allclose(pc.snapshot_lost_tokens([(100e6, None)], 400.0), 400.0)
    np.testing.assert_allclose(pc.snapshot_lost_tokens([(0.0, 1024)], 400.0), 0.0)
    # two kinds: a 10 MB window ring every 1024 tokens and a 100 MB state at the prompt end only:
    # (10 x 10 + 1 x 100 + 10) / (10 + 100 + 10) = 210 / 120; the hit is the shorter one: loses max(512, 400)
    two = [(10e6, 1024), (100e6, None)]
    np.testing.assert_allclose(pc.snapshot_factor(1e3, two, 10e3), 210 / 120)
    np.testing.assert_allclose(pc.snapshot_lost_tokens(two, 400.0), 512.0)


def test_fixed_states_split_window_rings_from_linear_state():
    m = catalog.model("kimi-k3")
    (win, wi), (lin, li) = pc.fixed_states(m, "fp8", 1024, None)
    assert (wi, li) == (1024, None) and win == 0 and 400 * 2**20 < lin < 460 * 2**20
    (win, _), (lin, _) = pc.fixed_states(catalog.model("deepseek-v4.1-flash"), "fp8")
    assert win > 0 and lin == 0
    assert win + lin == pytest.approx(kv_fixed_bytes_per_sequence(catalog.model("deepseek-v4.1-flash"), "fp8"))


def _setup(model, hw="gb200-nvl72", profile="dynamo-vllm", weights="fp8"):
    return Setup(catalog.hardware(hw), catalog.model(model), catalog.profile(profile), weights=weights, kv_cache="fp8")


def _with_linear_interval(s, interval):
    s.profile = s.profile.model_copy(update={"prefix_cache": s.profile.prefix_cache.model_copy(
        update={"linear_snapshot_interval_tokens": interval})})
    return s


def test_kimi_k3_linear_state_snapshots_cost_capacity():
    # Kimi K3: 69 KDA layers hold ~429 MiB of recurrent state per sequence; storing one snapshot per 1024 tokens
    # of every cached prefix makes a prefix far costlier than a plain sequence
    s = _with_linear_interval(_setup("kimi-k3"), 1024)
    m = s.model
    fixed, per_tok = kv_fixed_bytes_per_sequence(m, "fp8"), kv_bytes_per_token(m, "fp8")
    f = pc.snapshot_factor(per_tok, pc.fixed_states(m, "fp8", None, 1024), 142_000)
    assert f > 10 and fixed > 0
    pts = dict(batch=np.array([8.0]), gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1.0, isl=142_000, osl=444,
               new=4260, mix=1.0)
    snap = agentic(s, pts, 4.9, False)
    plain = agentic(_with_linear_interval(s, None), pts, 4.9, False)
    assert snap["cache_capacity_gb_per_gpu"].iloc[0] == pytest.approx(plain["cache_capacity_gb_per_gpu"].iloc[0])
    assert snap["cache_working_set_gb_per_gpu"].iloc[0] > 5 * plain["cache_working_set_gb_per_gpu"].iloc[0]
    assert snap["evicted_share"].iloc[0] >= plain["evicted_share"].iloc[0]
    # a hit loses 512 tokens (interval / 2) with interval snapshots, the previous output (444) with boundary ones
    assert snap["uncached_input"].iloc[0] >= 4260 + 512 - 1e-6
    assert plain["uncached_input"].iloc[0] >= 4260 + 444 - 1e-6


def test_full_attention_model_needs_no_snapshots():
    s = _setup("deepseek-v3")
    pts = dict(batch=np.array([4.0]), gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1.0, isl=50_000, osl=400,
               new=5000, mix=1.0)
    df = agentic(s, pts, 0.0, False)
    assert df["uncached_input"].iloc[0] == pytest.approx(5000)     # nothing lost, nothing evicted
    assert df["prefix_hit"].iloc[0] == pytest.approx(0.9)


def test_hit_falls_as_working_set_outgrows_capacity_and_host_tier_restores_it():
    # many closed-loop clients of one instance: their prefixes outgrow spare HBM, the host tier holds more
    s = _setup("deepseek-v3", profile="vllm")
    clients = np.array([16.0, 256.0, 4096.0])
    pts = dict(batch=np.full(3, 16.0), concurrency=clients, gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1.0,
               isl=60_000, osl=400, new=6000, mix=1.0)
    off = agentic(s, pts, 0.0, False)
    on = agentic(s, pts, 0.0, True)
    hit = off["prefix_hit"].to_numpy()
    assert hit[0] > hit[1] > hit[2]
    assert np.all(on["prefix_hit"].to_numpy() >= hit - 1e-12) and on["prefix_hit"].iloc[2] > hit[2]
    # the law itself: evicted = 1 - capacity / working set where the working set exceeds the capacity
    ws, cap = off["cache_working_set_gb_per_gpu"].to_numpy(), off["cache_capacity_gb_per_gpu"].to_numpy()
    big = ws > cap
    assert big.any()
    np.testing.assert_allclose(off["evicted_share"].to_numpy()[big] * off["sessions"].to_numpy()[big]
                               / (off["sessions"].to_numpy()[big] - 16.0), 1 - cap[big] / ws[big], rtol=1e-6)


def test_agentic_disaggregated_caches_prefixes_on_prefill_pool():
    s = _setup("deepseek-v4.1-flash", weights="mxfp4")
    pts = dict(batch=np.nan, concurrency=np.array([64.0, 20_000.0]), gpus=4, tp=4, ep=4, pp=1, spec_tokens=0,
               acc=1.0, isl=94_200, osl=400, new=9420, mix=0.0)
    d = agentic_disaggregated(s, pts, dict(gpus=4, tp=4, ep=4), 1.0, 2.0, 0.0, False)
    assert np.all(d["serving"] == "disaggregated")
    assert d["evicted_share"].iloc[0] == pytest.approx(0, abs=1e-12) and d["evicted_share"].iloc[1] > 0.01
    assert d["prefix_hit"].iloc[1] < d["prefix_hit"].iloc[0]
    np.testing.assert_allclose(d["sessions_per_gpu"] * 12, d["sessions"])   # all 12 GPUs counted


def test_median_request_ttft_replaces_the_mean_requests_prefill():
    from perfmodel.engine.compiled import compiled
    from perfmodel.engine.evaluate import prefill_inputs
    from perfmodel.specs.workload import Agentic
    s = _setup("deepseek-v3", profile="vllm")
    pts = dict(batch=np.array([8.0]), gpus=8, tp=8, ep=8, pp=1, spec_tokens=0, acc=1.0, isl=50_000, osl=400,
               new=5000, mix=1.0)
    same = Agentic(context_tokens={"median": 50_000}, new_tokens_per_turn={"median": 5000},
                   output_tokens={"median": 400}, max_hit_rate=0.9)
    df = agentic(s, pts, 1.0, False, dists=same)
    np.testing.assert_allclose(df["ttft_ms"], df["ttft_mean_request_ms"])      # median request = mean request
    skew = Agentic(context_tokens={"median": 25_000, "mean": 50_000}, new_tokens_per_turn={"median": 2500,
                   "mean": 5000}, output_tokens={"median": 400}, max_hit_rate=0.9)
    df2 = agentic(s, pts, 1.0, False, dists=skew)
    vals = s.symbol_values()
    t = lambda isl, new: float(np.asarray(compiled(s.model).prefill(prefill_inputs(  # noqa: E731
        dict(gpus=np.array([8.0]), tp=np.array([8.0]), ep=np.array([8.0]), pp=np.array([1.0]),
             isl=np.array([isl]), new=np.array([new])), vals))["prefill_s"]).ravel()[0])
    # deepseek-v3 (MLA, no fixed state): nothing lost, nothing evicted -> u50 = 2500
    expect = df2["ttft_mean_request_ms"].iloc[0] + (t(25_000, 2500) - t(50_000, 5000)) * 1e3
    np.testing.assert_allclose(df2["ttft_ms"].iloc[0], expect, rtol=1e-9)
    assert df2["ttft_ms"].iloc[0] < df2["ttft_mean_request_ms"].iloc[0]


def test_predict_agentic_disaggregated_scenario_hits_the_live_sessions():
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    sc = Scenario.model_validate({
        "hardware": "gb200-nvl72", "model": "deepseek-v4.1-flash", "profile": "dynamo-vllm",
        "workload": "mooncake-agentic",
        "deployment": {"gpus": 4, "tp": 4, "ep": 4, "weights": "mxfp4", "spec_tokens": 3, "concurrency": 100,
                       "serving": "disaggregated", "decode_gpus": 4,
                       "prefill": {"gpus": 4, "tp": 4, "ep": 4, "instances": 2}}})
    row = api.predict(sc).iloc[0]
    assert row["serving"] == "disaggregated" and row["prefill_gpus"] == 8 and row["decode_gpus"] == 4
    assert row["sessions"] == pytest.approx(100, rel=0.02)          # the batch solved for 100 live sessions
    assert row["sessions_per_gpu"] == pytest.approx(row["sessions"] / 12)
    assert 0 < row["prefix_hit"] <= 0.9


def test_frontier_enumerates_agentic_sessions_on_disaggregated_pools():
    from perfmodel.analyses.deployments import DeploymentSpace
    from perfmodel.analyses.frontier import candidates
    space = DeploymentSpace(gpus=(4,), spec_tokens=(0,), batch_points=4)
    c = candidates("gb200-nvl72", "deepseek-v4.1-flash", "mooncake-agentic", profile="dynamo-vllm",
                   weights=("mxfp4",), space=space)
    dis = c[c["serving"] == "disaggregated"]
    assert len(dis) and dis["kv_host_tier"].any() and not dis["kv_host_tier"].all()
    # every GPU of both pools counted; hits at or below the trace's 90% ceiling
    np.testing.assert_allclose(dis["sessions_per_gpu"], dis["sessions"] * dis["decode_gpus"] / dis["gpus"]
                               / (dis["decode_gpus"] + dis["prefill_gpus"]))
    assert (c["prefix_hit"] <= 0.9 + 1e-9).all() and (c["prefix_hit"] > 0).all()
    assert "disaggregation not enumerated" not in " ".join(c.attrs["notes"])


def _lru_hits(P: int, n: int, draw, events: int = 30_000, seed: int = 0) -> float:
    """A direct LRU cache of n prefixes over P sessions, each returning after its own idle gap drawn by
    ``draw`` (a renewal process per session): the share of returns that find their prefix."""
    import heapq
    from collections import OrderedDict
    rng = np.random.default_rng(seed)
    heap = [(float(draw(rng)), i) for i in range(P)]
    heapq.heapify(heap)
    cache: OrderedDict = OrderedDict()
    hits = tot = 0
    for k in range(events):
        t, i = heapq.heappop(heap)
        if k > events // 5:                     # after a warm-up
            tot += 1
            hits += i in cache
        cache.pop(i, None)
        cache[i] = True
        if len(cache) > n:
            cache.popitem(last=False)
        heapq.heappush(heap, (t + float(draw(rng)), i))
    return hits / tot


def test_renewal_che_by_hand():
    """Exponential gaps: E[min(G,T)]/E[G] = 1 - exp(-T/m) = P(G <= T), so survival = capacity / working set exactly;
    a deterministic gap (a fixed wait, no pause) is the cliff; log-normal pauses (median 7 s, mean 20 s) at
    ratio 0.248: T = 7 s (the median) since E[min(G, 7)] = 20 Phi(-1.449) + 7 x 0.5 = 4.967 = 0.248 x 20, so 0.5."""
    np.testing.assert_allclose(pc.ReuseGaps(7.0, 0.0).survival(np.array([0.1, 0.5, 0.9, 1.5])),
                               [0.1, 0.5, 0.9, 1.0], atol=1e-6)
    fixed = pc.ReuseGaps(1e-9, 0.0, wait=10.0)
    np.testing.assert_allclose(fixed.survival(np.array([0.5, 0.99, 1.0])), [0.0, 0.0, 1.0], atol=1e-6)
    s = float(np.sqrt(2 * np.log(20 / 7)))
    g = pc.ReuseGaps(7.0, s)
    assert g.mean() == pytest.approx(20.0)
    from statistics import NormalDist
    ratio = (20 * NormalDist().cdf(-s) + 3.5) / 20
    assert float(g.survival(ratio)) == pytest.approx(0.5, abs=1e-6)
    # tiers stack on the same law: HBM 20 and host 30 prefixes of 100 idle ones
    shares, ev = pc.tier_shares(np.array([100.0]), [np.array([20.0]), np.array([30.0])], g)
    np.testing.assert_allclose(shares[0] + shares[1], g.survival(0.5))
    np.testing.assert_allclose(ev, 1 - g.survival(0.5))


@pytest.mark.parametrize("cap", [None, 10.0])
def test_renewal_che_matches_a_direct_lru_simulation(cap):
    """Che's approximation for renewal reuse against an LRU cache simulated request by request, 200 sessions with
    log-normal pauses (median 7 s, mean 20 s), uncut and cut at a 10 s harness cap: within 0.02; the exponential
    law (capacity / working set) would be off by 2x for the uncut heavy-tailed gaps."""
    s = float(np.sqrt(2 * np.log(20 / 7)))
    gaps = pc.ReuseGaps(7.0, s, cap=cap)
    draw = (lambda r: 7 * np.exp(s * r.standard_normal())) if cap is None else \
        (lambda r: min(7 * np.exp(s * r.standard_normal()), cap))
    for n in (20, 50, 100):
        assert _lru_hits(200, n, draw) == pytest.approx(float(gaps.survival(n / 200)), abs=0.02)
    if cap is None:
        assert float(gaps.survival(0.25)) > 1.8 * 0.25


def test_survival_stops_where_the_bisection_stops_moving_with_the_same_answer():
    """The early stop of ReuseGaps.survival gives bit-identical results to all 80 bisection steps: once no bracket
    moves, no later step moves it (run here with the stop defeated by a copy of the loop)."""
    import numpy as np

    from perfmodel.serving.prefix_cache import ReuseGaps
    g = ReuseGaps(np.array([5.0, 30.0, 2.0]), np.array([1.2, 0.0, 0.8]), wait=np.array([0.0, 3.0, 1.0]), cap=300.0)
    ratio = np.array([0.05, 0.4, 0.9])
    mean = g.mean()
    lo = np.full(3, -30.0)
    hi = np.log(np.maximum(mean, 1e-12)) + np.log(1e6)
    for _ in range(80):
        mid = (lo + hi) / 2
        below = g.partial(np.exp(mid)) / mean < ratio
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    full = np.clip(g.cdf_and_partial(np.exp(hi))[0], 0.0, 1.0)
    assert np.array_equal(g.survival(ratio), full)
