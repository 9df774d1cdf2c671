"""The calibration's batch path shares work without moving a digit (issue 54 item 5): records at one operating
point (a run's TPOT and TTFT records) are evaluated once, a setup's parameter-free symbol values are bound once,
the open loop's batch solve skips the decode outputs it does not read. Each check compares against the path that
does the work every time, bit for bit."""

import numpy as np

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup, bind_parts
from perfmodel.specs.records import Record
from perfmodel.validation.batch_predict import plan, predict_matrix, unique_rows
from perfmodel.validation.predict_rows import predict_record, sample_params
from perfmodel.validation.row_context import Unsupported


def test_unique_rows_by_hand():
    a = np.array([[1.0, 2.0], [3.0, np.nan], [1.0, 2.0], [0.0, 0.0], [3.0, np.nan]])
    first, inverse = unique_rows(a)
    assert first.tolist() == [0, 1, 3]            # first occurrences, in the order they occur
    assert inverse.tolist() == [0, 1, 0, 2, 1]
    np.testing.assert_array_equal(a[first][inverse], a)
    first, inverse = unique_rows(np.array([[0.0], [-0.0]]))   # bit patterns differ: two rows (never wrongly merged)
    assert first.tolist() == [0, 1]


def _point(rid: str, metric: str, concurrency: float, **kw) -> Record:
    return Record(id=rid, kind="point", hardware="h200-sxm", model="deepseek-v3", engine="sglang",
                  serving="aggregated", weights="fp8", kv_cache="fp8", isl=1024.0, osl=1024.0, prefix_hit=0.0,
                  gpus=8, tp=8, ep=8, concurrency=concurrency, metric=metric, value=1.0, **kw)


def test_records_sharing_a_point_get_the_numbers_each_gets_alone():
    recs = [_point("a", "tpot_ms", 16), _point("b", "ttft_ms", 16), _point("c", "tpot_ms", 64),
            _point("d", "output_tps_per_gpu", 16), _point("e", "ttft_ms", 64)]
    prof = catalog.profile("sglang")
    params = sample_params(prof, 3)
    pl = plan(recs)
    assert len(pl.groups) == 1 and not pl.single
    together = predict_matrix(pl, {"sglang": prof}, params)
    again = predict_matrix(pl, {"sglang": prof}, params)          # the plan's kept arrays and setup
    np.testing.assert_array_equal(together, again)
    for i, r in enumerate(recs):
        alone = predict_matrix(plan([r]), {"sglang": prof}, params)[0]
        np.testing.assert_array_equal(together[i], alone)
        np.testing.assert_allclose(together[i], predict_record(r, prof, params), rtol=1e-9)
    assert np.all(np.isfinite(together)) and together[0, 0] != together[2, 0]   # two loads, two answers


def test_symbol_parts_bind_as_symbol_values_does():
    setup = Setup(catalog.hardware("b200"), catalog.model("deepseek-v3"), catalog.profile("trtllm"),
                  weights="nvfp4", kv_cache="fp8")
    prof = {k: np.array([p.low, p.value]) for k, p in
            ((k, getattr(setup.profile, k)) for k in setup.profile.values("value"))}
    want = setup.symbol_values(profile=prof)
    got = bind_parts(setup.symbol_parts(), prof)
    assert list(got) == list(want)                     # same symbols, bound in the same order
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])


def test_open_loop_batch_unchanged_without_the_mixed_outputs():
    from perfmodel.engine.compiled import compiled
    from perfmodel.engine.evaluate import point_arrays
    from perfmodel.serving.aggregated import decode_under_load
    setup = Setup(catalog.hardware("h200-sxm"), catalog.model("deepseek-v3"), catalog.profile("sglang"))
    p = point_arrays(dict(batch=np.array([1.0, 8.0, 64.0]), gpus=8.0, tp=8.0, ep=8.0, pp=1.0, spec_tokens=0.0,
                          acc=1.0, isl=1024.0, osl=1024.0, new=1024.0, mix=1.0))
    vals = setup.symbol_values()
    full_d, full = decode_under_load(compiled(setup.model), p, vals, 0.05)
    none_d, load = decode_under_load(compiled(setup.model), p, vals, 0.05, outputs=False)
    assert none_d == {} and full_d
    assert list(load) == list(full)
    for k in full:
        np.testing.assert_array_equal(load[k], full[k])


def test_poisson_runs_batched_as_each_alone():
    """MLPerf Server runs (Poisson arrivals) go through the point groups, with the runs whose rate exceeds the modeled
    capacity read again at their Little's-law concurrency: the numbers of predict_record, which reads each alone."""
    from perfmodel.specs.records import read_records
    from perfmodel.validation.benchmark_runs import record_arrival_rate
    from perfmodel.validation.samples import central_params
    recs = [r for r in read_records(catalog.builtin_root() / "data/shared/mlperf.csv")
            if r.kind == "point" and record_arrival_rate(r) is not None]
    prof = catalog.profile("trtllm")
    pl = plan(recs)
    assert len(recs) >= 20 and not pl.single and not pl.unsupported
    over = 0
    for params in (central_params(prof), sample_params(prof, 4)):
        got = predict_matrix(pl, {"trtllm": prof}, params)
        for i, r in enumerate(recs):
            note: list[str] = []
            np.testing.assert_array_equal(got[i], predict_record(r, prof, params, note))
            over += any("above the modeled capacity" in n for n in note)
    assert over > 0 and np.isfinite(got).all()     # the closed-loop fallback is exercised


def test_frontier_rows_of_a_setup_read_together_as_each_alone():
    """Frontier rows go through validation/frontier_batch.py (a setup's candidates in one closed-loop call, the
    Poisson reads under latency limits in one more): the numbers and refusals of predict_record, row by row, for
    rows with latency limits (MLPerf), without (curve ends, read on the profile alone inside profile_alone and on
    the envelope outside it) and disaggregated ones."""
    from perfmodel.specs.records import read_records
    from perfmodel.validation.benchmark_runs import record_latency_limits
    from perfmodel.validation.envelope import profile_alone
    from perfmodel.validation.samples import central_params
    recs = [r for f in ("mlperf", "curve-end", "calibration")
            for r in read_records(catalog.builtin_root() / f"data/shared/{f}.csv")
            if r.kind == "frontier" and (r.engine or "trtllm") in ("trtllm", "dynamo-trtllm")]
    assert sum(record_latency_limits(r) is not None for r in recs) >= 10
    assert any(r.serving == "disaggregated" for r in recs) and any(not r.engine for r in recs)
    for engine in ("trtllm", "dynamo-trtllm"):
        rows = [r for r in recs if (r.engine or "trtllm") == engine]
        prof = catalog.profile(engine)
        for params, alone in ((central_params(prof), True), (sample_params(prof, 3), True),
                              (central_params(prof), False)):
            pl = plan(rows)
            assert not pl.single and sum(map(len, pl.frontier.values())) == len(rows)
            with profile_alone() if alone else _nothing():
                got = predict_matrix(pl, {engine: prof}, params)
                for i, r in enumerate(rows):
                    try:
                        want = predict_record(r, prof, params)
                    except Unsupported:
                        want = np.full(got.shape[1], np.nan)
                        assert i in pl.unsupported
                    np.testing.assert_array_equal(got[i], want)
            assert np.isfinite(got).any(axis=1).sum() >= len(rows) // 2


def _nothing():
    import contextlib
    return contextlib.nullcontext()


def test_tier_shares_reuse_the_survival_of_a_tier_adding_nothing():
    """A cache tier that adds no capacity (no pool, no host tier) has the tier before's ratio, so its survival is
    reused (prefix_cache.tier_shares): the shares and evicted share of the path that bisects every tier, bit for
    bit."""
    from perfmodel.serving.prefix_cache import ReuseGaps, tier_shares

    class Counted(ReuseGaps):
        calls = 0

        def survival(self, ratio, iterations: int = 80):
            Counted.calls += 1
            return super().survival(ratio, iterations)

    gaps = Counted(np.array([20.0, 5.0, 60.0, 1.0]), np.array([1.0, 0.0, 0.7, 1.2]), wait=np.array([0.5, 0, 2, 0]))
    waiting = np.array([40.0, 0.0, 12.0, 300.0])
    caps = [np.array([10.0, 3.0, 30.0, 50.0]), np.zeros(4), np.array([0.0, 0.0, 5.0, 100.0])]
    shares, evicted = tier_shares(waiting, caps, gaps)
    assert Counted.calls == 2                       # the second tier adds nothing: its survival reused
    safe = np.where(waiting > 0, waiting, 1.0)      # the path without the reuse: every tier bisected
    cum, prev, want = 0.0, np.zeros(4), []
    for cap in caps:
        cum = cum + np.maximum(cap, 0.0)
        now = np.where(waiting > 0, ReuseGaps.survival(gaps, cum / safe), 1.0)
        want.append(np.where(waiting > 0, now - prev, 0.0))
        prev = now
    for got, w in zip(shares, want):
        np.testing.assert_array_equal(got, w)
    np.testing.assert_array_equal(evicted, np.where(waiting > 0, 1.0 - prev, 0.0))
    assert 0 < evicted[0] < 1 and evicted[1] == 0.0
