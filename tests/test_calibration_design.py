"""The calibration design of issue 22: data families weighted equally, queue parameters fitted on TTFT records
only, leave-one-family-out folds, SGLang's memory knob."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.specs.records import Record
from perfmodel.validation import calibrate as cal
from perfmodel.validation.crossval import folds
from perfmodel.validation.predict_rows import predict_record
from perfmodel.validation.samples import central_params


def _rec(i, family, metric="tpot_ms", value=10.0, **kw):
    base = dict(id=f"r{i}", kind="point", hardware="h200-sxm", model="llama-3.1-8b", engine="trtllm",
                serving="aggregated", gpus=1, tp=1, isl=1024, osl=128, concurrency=8, metric=metric, value=value,
                family=family)
    return Record(**{**base, **kw})


def test_a_family_weighs_the_square_root_of_its_rows():
    from perfmodel.validation.fit_weights import fit_weights
    recs = [_rec(i, "big") for i in range(400)] + [_rec(1000 + i, "small") for i in range(100)]
    w = fit_weights(recs)
    assert w.sum() == pytest.approx(len(recs))
    # 400 rows against 100: totals sqrt(400) : sqrt(100) = 2 : 1 (no row reaches the 1% cap here)
    assert w[:400].sum() / w[400:].sum() == pytest.approx(2.0)
    assert w.max() / w.sum() <= 0.01 + 1e-12


def test_no_row_above_one_percent_of_the_fit():
    """One lone row (a446-like) beside a large family: by sqrt weighting it would hold 1/(1 + sqrt(1356)) = 2.6%;
    the cap holds it at 1% and the rest keep their ratios."""
    from perfmodel.validation.fit_weights import capped, fit_weights
    recs = [_rec(i, "silicon") for i in range(1356)] + [_rec(5000, "lone")] + [_rec(6000 + i, "mid") for i in range(16)]
    w = fit_weights(recs)
    share = w / w.sum()
    assert share.max() == pytest.approx(0.01)
    assert share[1356] == pytest.approx(0.01)
    assert share[:1356].max() < 0.01 and np.ptp(share[:1356]) == pytest.approx(0.0)
    # the cap by hand: weights 10, 1 x 200 at a 2% cap: c = 0.02 (200 + c) / 1 -> c = 4 / 0.98
    v = capped(np.array([10.0] + [1.0] * 200), 0.02)
    assert v[0] == pytest.approx(0.02 * 200 / 0.98) and v[0] / v.sum() == pytest.approx(0.02)
    # fewer rows than 1/cap: nobody can be held at the cap, every row weighs the same
    assert np.ptp(capped(np.array([5.0, 1.0, 1.0]), 0.01)) == 0.0


def test_mlperf_is_one_source_and_capacity_rows_are_not_fitted():
    from perfmodel.validation.fit_weights import speed_fit_row, weight_group
    assert weight_group(_rec(0, "mlperf:point")) == weight_group(_rec(1, "mlperf:frontier")) == "mlperf"
    assert weight_group(_rec(2, "curve-end:point")) != weight_group(_rec(3, "curve-end:frontier"))
    assert not speed_fit_row(_rec(4, "agentic:frontier", metric="agents_per_gpu"))
    assert speed_fit_row(_rec(5, "agentic:point", metric="tpot_ms"))


def test_leave_one_family_out_folds():
    recs = [_rec(i, f) for i, f in enumerate(["a", "b", "a", "c", "b"])]
    f = folds(recs, by="family")
    assert f == [0, 1, 0, 2, 1]


def test_family_is_the_file_and_kind(tmp_path):
    from perfmodel.specs.records import read_records
    p = tmp_path / "blog-points.csv"
    p.write_text("id,kind,hardware,model,isl,osl,metric,value\nx,point,b200,llama-3.1-8b,1024,128,tpot_ms,5\n")
    assert read_records(p)[0].family == "blog-points:point"


def _records(prof, truth, metrics):
    recs = []
    p = central_params(prof)
    p.update({k: np.array([v]) for k, v in truth.items()})
    for i, metric in enumerate(metrics):
        r = _rec(i, "synthetic", metric=metric, concurrency=[1, 4, 16, 64][i % 4])
        recs.append(r.model_copy(update={"value": float(predict_record(r, prof, p)[0])}))
    return recs


def test_queue_parameters_are_set_by_ttft_records_only():
    """Speed parameters from TPOT rows, the request overhead from TTFT rows (stages speed, queue, speed):
    both recovered; without TTFT rows the overhead is not fitted at all (TPOT cannot set it)."""
    prof = catalog.profile("trtllm")
    truth = {"eff_weights": 0.7, "request_overhead_ms": 150.0}
    bounds = {"eff_weights": (0.3, 1.0), "request_overhead_ms": (0.0, 400.0)}
    recs = _records(prof, truth, ["tpot_ms"] * 4 + ["ttft_ms"] * 4)
    res = cal.fit_family(recs, {"trtllm": prof}, fit=list(truth), bounds=bounds)
    assert res["values"]["eff_weights"] == pytest.approx(0.7, rel=0.03)
    assert res["values"]["request_overhead_ms"] == pytest.approx(150.0, rel=0.05)
    tpot_only = cal.fit_family(recs[:4], {"trtllm": prof}, fit=list(truth), bounds=bounds)
    assert "request_overhead_ms" not in tpot_only["values"]


def test_sglang_fits_its_memory_fraction_not_a_workspace():
    recs = [_rec(i, "f", engine="sglang") for i in range(3)]
    names = cal.default_fit(recs)
    assert "mem_fraction" in names and "workspace_gb" not in names
    assert catalog.profile("sglang").workspace_gb.value == 0.0
    assert "workspace_gb" in cal.default_fit([_rec(0, "f", engine="vllm")])


def test_identical_fits_inside_a_cross_validation_run_once(monkeypatch):
    calls = []
    monkeypatch.setattr(cal, "_fit_family", lambda *a, **k: calls.append(1) or {"values": {}})
    recs = [_rec(i, "f") for i in range(3)]
    profs = {"trtllm": catalog.profile("trtllm")}
    with cal.memo_fits():
        a = cal.fit_family(recs, profs, fit=["eff_weights"])
        b = cal.fit_family(recs, profs, fit=["eff_weights"])
        cal.fit_family(recs[:2], profs, fit=["eff_weights"])        # other records: fitted again
    assert a is b and len(calls) == 2
    cal.fit_family(recs, profs, fit=["eff_weights"])                # outside: no memo
    assert len(calls) == 3


def test_a_parameter_on_an_edge_is_written_with_what_it_stands_for():
    res = {"values": {"mem_fraction": 0.95, "moe_imbalance": 1.0, "eff_weights": 0.6},
           "at_range_edge": ["mem_fraction", "moe_imbalance"], "at_upper_bound": []}
    notes = cal.edge_notes(res)
    assert len(notes) == 2
    assert notes[0].startswith("mem_fraction at its upper edge 0.95") and "KV" in notes[0]
    assert notes[1].startswith("moe_imbalance at its lower edge 1") and "physical bound" in notes[1]


def test_parallel_folds_give_the_in_process_predictions(monkeypatch):
    """Folds run in forked workers (PERFMODEL_JOBS=2) predict exactly what one process predicts: each fold is fitted
    on the records outside it (here a stand-in fit that remembers which records it saw)."""
    from perfmodel.validation import crossval
    recs = [_rec(i, f) for i, f in enumerate(["a", "b", "a", "c", "b", "c"])]
    monkeypatch.setattr(crossval, "calibrate", lambda train, neutral_start: {"seen": sorted(r.id for r in train)})
    monkeypatch.setattr(crossval, "_predict",
                        lambda test, res: np.array([len(res["seen"]) + int(r.id[1:]) / 10 for r in test]))
    out = {}
    for n in ("1", "2"):
        monkeypatch.setenv("PERFMODEL_JOBS", n)
        out[n] = crossval.cross_validate(recs, by="family")["predicted"].to_numpy()
    assert np.array_equal(out["1"], out["2"])
    assert out["1"][0] == pytest.approx(4.0)      # r0 (family a) predicted by a fit on the 4 records outside a


def test_no_shipped_row_weighs_more_than_one_percent_of_its_engines_fit():
    """On the shipped records: every engine family with an own fit (at least 100 rows) weighs no row above 1%,
    and the lone agents_per_gpu row (an SLO search) is not in any fit."""
    from perfmodel.specs.records import project_measured_files, read_records, shared_data_files
    from perfmodel.validation.fit_weights import fit_weights, shares, speed_fit_row
    from perfmodel.validation.predict_rows import profile_id
    from perfmodel.validation.row_context import Unsupported
    by: dict[str, list] = {}
    for f in [*shared_data_files(), *project_measured_files()]:
        for r in read_records(f):
            try:
                by.setdefault(profile_id(r), []).append(r)
            except Unsupported:
                continue
    checked = 0
    for pid, recs in by.items():
        fitted = [r for r in recs if speed_fit_row(r)]
        assert not any(r.metric == "agents_per_gpu" for r in fitted)
        if len(fitted) < 100:
            continue
        w = fit_weights(fitted)
        assert (w / w.sum()).max() <= 0.01 + 1e-12, pid
        if pid == "trtllm":   # MLPerf (52 rows, one source) holds sqrt(52) / sum of sqrt(n) of the fit, not 1/8
            assert shares(fitted, w)["mlperf"] < 0.2
        checked += 1
    assert checked >= 3


def test_the_attention_fit_stays_inside_the_kernel_bands_and_the_launch_gap_is_fitted():
    """The E design (docs/accuracy.md, the ledger): an engine's attention efficiencies are searched inside its
    kernel-table bands (kernel_bands.py; a dynamo engine uses its base engine's), and the per-kernel gap and the
    floor share are fitted on every family (the GPU's graph-node period is a lower bound, not a replacement)."""
    from types import SimpleNamespace

    from perfmodel.validation.calibrate import FIT_PARAMS, default_fit, engine_bounds
    from perfmodel.validation.kernel_bands import bands
    b = engine_bounds("dynamo-trtllm")
    assert b == bands("trtllm") and set(b) == {"eff_attention", "eff_attention_decode"}
    for name, (lo, hi) in b.items():
        assert FIT_PARAMS[name][0] <= lo < hi <= FIT_PARAMS[name][1]
    rec = SimpleNamespace(hardware="h100-sxm", family="x", spec_tokens=0, acceptance_length=None, weights="fp8",
                          engine="vllm")
    assert {"kernel_overhead_us", "kernel_floor_share", "step_overhead_ms"} <= set(default_fit([rec]))


def _stand_in_fit(calls):
    """A deterministic stand-in for one engine family's least-squares fit (``_fit_family``): its values say which
    records it saw; ``calls`` collects (engine, record count) per real fit."""
    def fit(records, profiles, fit=None, bounds=None, neutral_start=False):
        calls.append((records[0].engine, len(records)))
        v = float(len(records)) / 100 + (0.5 if records[0].engine == "vllm" else 0.0)
        return {"values": {"eff_weights": v}, "ranges": {"eff_weights": (v, v)}, "rows": [r.id for r in records]}
    return fit


def test_own_fits_in_workers_give_the_one_process_fits(monkeypatch):
    """The independent own fits of calibrate run in forked workers (PERFMODEL_JOBS=2) and give exactly the fits
    of one process (PERFMODEL_JOBS=1), in the same order."""
    recs = [_rec(i, "a", engine="trtllm" if i % 2 else "vllm") for i in range(40)]
    out = {}
    for n in ("1", "2"):
        monkeypatch.setenv("PERFMODEL_JOBS", n)
        calls: list = []
        monkeypatch.setattr(cal, "_fit_family", _stand_in_fit(calls))
        out[n] = {pid: r["values"] for pid, r in cal.calibrate(recs, fit=["eff_weights"]).items()}
    assert out["1"] == out["2"] and list(out["1"])[:2] == ["vllm", "trtllm"]
    assert out["1"]["vllm"]["eff_weights"] == pytest.approx(0.7) and out["1"]["trtllm"]["eff_weights"] == 0.2


def test_family_fold_refits_only_the_engines_whose_records_it_leaves_out(monkeypatch):
    """Leave one family out: after the fit on every record, a fold refits only the engine families with records in
    the left-out family; the others reuse the all-records fit (memo_fits). Two engines, three families (a: 40
    trtllm, b: 40 vllm, c: 30 of each; every set large enough for an own fit): 2 fits on all records, then one per
    engine the fold touches (a: trtllm on 30; b: vllm on 30; c: both on 40), 6 in all, not 8."""
    from perfmodel.validation import crossval
    recs = [_rec(i, "a", engine="trtllm") for i in range(40)] + [_rec(100 + i, "b", engine="vllm") for i in range(40)]
    recs += [_rec(200 + i, "c", engine=("trtllm", "vllm")[i % 2]) for i in range(60)]
    monkeypatch.setenv("PERFMODEL_JOBS", "1")
    calls: list = []
    monkeypatch.setattr(cal, "_fit_family", _stand_in_fit(calls))
    monkeypatch.setattr(crossval, "_predict", lambda test, res: np.array([res["trtllm"]["values"]["eff_weights"]
                                                                           + res["vllm"]["values"]["eff_weights"]
                                                                           for _ in test]))
    df = crossval.cross_validate(recs, by="family")
    assert sorted(calls) == sorted([("trtllm", 70), ("vllm", 70), ("trtllm", 30), ("vllm", 30), ("trtllm", 40),
                                    ("vllm", 40)])
    # the fold leaving out a fits trtllm on the 30 of c and reuses vllm's all-records fit (70 records)
    assert df.loc[df["family"] == "a", "predicted"].iloc[0] == pytest.approx(0.30 + 0.5 + 0.70)
