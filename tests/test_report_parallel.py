"""The report's worker processes: claims grouped by (model, workload), results as in one process."""

from perfmodel.claims import CurveStore, check
from perfmodel.report import parallel

SPEC = ["spec-hbm-bandwidth-2.4x", "spec-nvfp4-2.3x", "spec-nvlink-1.7x"]   # no model evaluation: fast


def test_claims_are_binned_by_model_and_workload():
    ids = ["aa-1.14x-peak-per-mw-deepseek-v4-pro", "aa-255-tps-kimi-k3", "aa-5.7x-per-mw-deepseek-v4-pro",
           "vllm-58x-at-387", *SPEC]
    here, bins = parallel._bins(ids, lambda c: c.workload == "agentx", 2)
    assert here == ["vllm-58x-at-387"]
    assert sorted(sum(bins, [])) == sorted(set(ids) - {"vllm-58x-at-387"})
    owner = {i: k for k, b in enumerate(bins) for i in b}
    assert owner["aa-1.14x-peak-per-mw-deepseek-v4-pro"] == owner["aa-5.7x-per-mw-deepseek-v4-pro"]
    assert len({owner[i] for i in SPEC}) == 1


def test_worker_results_equal_in_process_results(monkeypatch):
    monkeypatch.setenv("PERFMODEL_JOBS", "2")
    store = CurveStore()
    with parallel.pool(store) as workers:
        got = parallel.ClaimChecks(SPEC, store, local=lambda c: c.id == SPEC[1], workers=workers).results(store)
    assert got == [check(i) for i in SPEC]
    monkeypatch.setenv("PERFMODEL_JOBS", "1")
    assert parallel.pool(store) is None
    assert parallel.ClaimChecks(SPEC, store).results(store) == got
    monkeypatch.setenv("PERFMODEL_JOBS", "two")
    try:
        parallel.jobs()
    except SystemExit as exc:
        assert "PERFMODEL_JOBS" in str(exc)
    else:
        raise AssertionError("a bad PERFMODEL_JOBS is not refused")
