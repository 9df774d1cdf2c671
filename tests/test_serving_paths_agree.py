"""The same deployment through every serving path gives the same numbers: ``api.predict``, the frontier's
candidate points (``analyses.frontier.candidates``), ``perfmodel validate`` (``validation.predict_rows``) and the
calibration's batch path (``validation.batch_predict``)."""

import math

from perfmodel import api, catalog
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.frontier import candidates
from perfmodel.specs.deployment import Scenario
from perfmodel.specs.records import Record
from perfmodel.validation.batch_predict import plan, predict_matrix
from perfmodel.validation.predict_rows import predict_rows
from perfmodel.validation.samples import central_params

METRICS = ("output_tps_per_gpu", "total_tps_per_gpu", "tpot_ms", "ttft_ms")
ISL, OSL = 1024.0, 1024.0


def _record(metric: str, **kw) -> Record:
    return Record(id=f"r-{metric}", kind="point", hardware=kw.pop("hardware"), model="deepseek-v3",
                  engine=kw.pop("engine"), weights="fp8", kv_cache="fp8", isl=ISL, osl=OSL, prefix_hit=0.0,
                  spec_tokens=0, metric=metric, value=1.0, **kw)


def _validation(recs: list[Record], profile: str) -> tuple[dict, dict]:
    """(predict_rows' central prediction, batch_predict's central column) per metric."""
    rows = predict_rows(recs, n_samples=2)
    assert (rows["status"] == "ok").all(), rows["status"].tolist()
    prof = catalog.profile(profile)
    mat = predict_matrix(plan(recs), {profile: prof}, central_params(prof))
    return dict(zip([r.metric for r in recs], rows["predicted"])), dict(zip([r.metric for r in recs], mat[:, 0]))


def _same(values: dict, expected: dict) -> list[str]:
    return [f"{k}: {values[k]!r} != {expected[k]!r}" for k in METRICS
            if not math.isclose(float(values[k]), float(expected[k]), rel_tol=1e-9)]


def _candidate(serving: str, profile: str, hardware: str, **space) -> dict:
    cand = candidates(hardware, "deepseek-v3", {"isl": ISL, "osl": OSL}, profile=profile, weights=("fp8",),
                      space=DeploymentSpace(gpus=(8,), tp=(8,), ep=(8,), attention_dp=False, spec_tokens=(0,),
                                            batch_points=6, **space))
    rows = cand[cand["serving"] == serving]
    assert len(rows) >= 3
    row = rows.iloc[len(rows) // 2].to_dict()
    assert float(row["batch"]) == int(row["batch"])          # a whole batch: predict takes an integer
    return row


def test_aggregated_point_agrees_across_predict_frontier_validate_and_batch():
    row = _candidate("aggregated", "sglang", "h200-sxm", disaggregation=False)
    batch = int(row["batch"])
    sc = Scenario.model_validate({"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                                  "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": batch},
                                  "workload": {"isl": ISL, "osl": OSL}})
    pred = api.predict(sc).iloc[0].to_dict()
    assert _same(row, pred) == []
    assert _same(api.predict_point(sc), pred) == []
    recs = [_record(m, hardware="h200-sxm", engine="sglang", serving="aggregated", gpus=8, tp=8, ep=8,
                    batch_per_gpu=batch / 8) for m in METRICS]
    validate, batched = _validation(recs, "sglang")
    assert _same(validate, pred) == []
    assert _same(batched, pred) == []


def test_disaggregated_point_agrees_across_predict_frontier_validate_and_batch():
    row = _candidate("disaggregated", "dynamo-sglang", "gb200-nvl72", pf_gpus=(8,), pf_tp=(8,), pf_ep=(8,),
                     max_disagg_gpus=32)
    batch, inst, pinst = int(row["batch"]), int(row["instances"]), int(row["pf_instances"])
    assert row["batch"] == batch and (row["pf_gpus"], row["pf_tp"], row["pf_ep"]) == (8, 8, 8)
    sc = Scenario.model_validate({"hardware": "gb200-nvl72", "model": "deepseek-v3", "profile": "dynamo-sglang",
                                  "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": batch,
                                                 "serving": "disaggregated", "decode_gpus": 8 * inst,
                                                 "prefill": {"gpus": 8, "tp": 8, "ep": 8, "instances": pinst}},
                                  "workload": {"isl": ISL, "osl": OSL}})
    pred = api.predict(sc).iloc[0].to_dict()
    assert _same(row, pred) == []
    recs = [_record(m, hardware="gb200-nvl72", engine="dynamo-sglang", serving="disaggregated",
                    gpus=8 * (inst + pinst), tp=8, ep=8, prefill_gpus=8 * pinst, decode_gpus=8 * inst,
                    decode_workers=inst, prefill_workers=pinst, prefill_tp=8, prefill_ep=8,
                    batch_per_gpu=batch / 8) for m in METRICS]
    validate, batched = _validation(recs, "dynamo-sglang")
    assert _same(validate, pred) == []
    assert _same(batched, pred) == []


def test_the_agreement_is_not_vacuous():
    """One batch more gives other numbers: the comparisons above can fail."""
    sc = {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
          "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 60}, "workload": {"isl": ISL, "osl": OSL}}
    a = api.predict(Scenario.model_validate(sc)).iloc[0].to_dict()
    sc["deployment"]["batch"] = 61
    b = api.predict(Scenario.model_validate(sc)).iloc[0].to_dict()
    assert len(_same(a, b)) == len(METRICS)


def test_agentic_point_agrees_across_predict_frontier_and_attribution():
    """An agentic session deployment (agentx) through predict, the frontier's candidates and attribution (read at
    that point's per-user speed, the batch search lands on it): one throughput, within 0.1%."""
    from perfmodel.analyses.attribution import attribute
    from perfmodel.analyses.systems import System
    space = DeploymentSpace(gpus=(8,), tp=(8,), ep=(1,), attention_dp=False, spec_tokens=(0,), batch_points=6,
                            disaggregation=False, kv_host_tier=False)
    cand = candidates("h200-sxm:sglang", "llama-3.1-70b", "agentx", profile="sglang", weights=("fp8",), space=space)
    row = cand.iloc[len(cand) // 2]
    sc = Scenario.model_validate({"hardware": "h200-sxm", "model": "llama-3.1-70b", "profile": "sglang",
                                  "deployment": {"gpus": 8, "tp": 8, "batch": int(row["batch"])},
                                  "workload": "agentx"})
    pred = api.predict(sc).iloc[0]
    for col in ("tps_per_user", "total_tps_per_gpu", "ttft_ms"):
        assert math.isclose(float(pred[col]), float(row[col]), rel_tol=1e-9), col
    r = attribute(System("h200-sxm", "sglang"), System("h200-sxm", "sglang", hw_overrides={"hbm_bandwidth_tbps": 5.5}),
                  "llama-3.1-70b", workload="agentx", at_tps_per_user=float(row["tps_per_user"]), space=space)
    assert math.isclose(r.from_value, float(pred["total_tps_per_gpu"]), rel_tol=1e-3)
