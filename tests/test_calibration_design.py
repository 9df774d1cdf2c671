"""The calibration design of issue 22: data families weighted equally, queue parameters fitted on TTFT records
only, leave-one-family-out folds, SGLang's memory knob."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.validation import calibrate as cal
from perfmodel.validation.crossval import folds
from perfmodel.validation.predict_rows import central_params, predict_record
from perfmodel.validation.records import Record


def _rec(i, family, metric="tpot_ms", value=10.0, **kw):
    base = dict(id=f"r{i}", kind="point", hardware="h200-sxm", model="llama-3.1-8b", engine="trtllm",
                serving="aggregated", gpus=1, tp=1, isl=1024, osl=128, concurrency=8, metric=metric, value=value,
                family=family)
    return Record(**{**base, **kw})


def test_each_family_counts_equally_whatever_its_rows():
    recs = [_rec(i, "big") for i in range(90)] + [_rec(100 + i, "small") for i in range(10)]
    w = cal.family_weights(recs)
    assert w.sum() == pytest.approx(len(recs))
    assert w[:90].sum() == pytest.approx(w[90:].sum())          # 90 rows and 10 rows weigh the same in total


def test_leave_one_family_out_folds():
    recs = [_rec(i, f) for i, f in enumerate(["a", "b", "a", "c", "b"])]
    f = folds(recs, by="family")
    assert f == [0, 1, 0, 2, 1]


def test_family_is_the_file_and_kind(tmp_path):
    from perfmodel.validation.records import read_records
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
