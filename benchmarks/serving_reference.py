"""Reference numbers of every serving path, to check a refactor of the serving layer changes no number.

Predicts a fixed sample of deployments through every path -- ``api.predict`` and ``api.predict_point`` for
aggregated, decode-only, prefill-only, disaggregated with a prefill pool, agentic on agentx and agentic
disaggregated; ``analyses.frontier`` on one small space (fixed and agentic) and its candidate points (disaggregated, agentic
disaggregated with the pool search); ``validation.predict_rows`` and
``validation.batch_predict`` on a fixed sample of ~30 records of data/shared/*.csv (agentic.csv included) --
and writes every numeric output to benchmarks/serving_reference.json.

    python -m benchmarks.serving_reference --write    # record the reference (before a refactor)
    python -m benchmarks.serving_reference            # check: every number equal to the reference (rtol 1e-9)

The check prints the count of numbers compared and exits 1 on the first difference listing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

REF = Path(__file__).with_name("serving_reference.json")
RTOL = 1e-9

SCENARIOS = {
    "aggregated": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                   "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64},
                   "workload": {"isl": 1024, "osl": 1024, "prefix_hit": 0.3}},
    "aggregated_maxbatch": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                            "deployment": {"gpus": 8, "tp": 8, "ep": 8}, "workload": "fixed-1k1k"},
    "aggregated_concurrency": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                               "deployment": {"gpus": 8, "tp": 8, "ep": 8, "concurrency": 256},
                               "workload": "fixed-1k1k"},
    "aggregated_arrival": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                           "deployment": {"gpus": 8, "tp": 8, "ep": 8, "arrival_rate": 5.0},
                           "workload": "fixed-1k1k"},
    "decode_only": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                    "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 32, "serving": "decode_only"},
                    "workload": "fixed-1k1k"},
    "prefill_only": {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                     "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 1, "serving": "prefill_only"},
                     "workload": "fixed-1k1k"},
    "disaggregated": {"hardware": "gb200-nvl72", "model": "deepseek-v3", "profile": "sglang",
                      "deployment": {"gpus": 8, "tp": 1, "ep": 8, "dp_attention": True, "batch": 128,
                                     "serving": "disaggregated", "decode_gpus": 32,
                                     "prefill": {"gpus": 4, "tp": 4, "ep": 4, "instances": 3}},
                      "workload": "fixed-8k1k"},
    "disaggregated_maxbatch": {"hardware": "gb200-nvl72", "model": "deepseek-v3", "profile": "sglang",
                               "deployment": {"gpus": 8, "tp": 8, "ep": 8, "serving": "disaggregated",
                                              "prefill": {"gpus": 8, "tp": 8, "ep": 8, "instances": 1}},
                               "workload": "fixed-1k1k"},
    "agentic": {"hardware": "b200", "model": "deepseek-v4-pro", "profile": "sglang",
                "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4", "spec_tokens": 3,
                               "concurrency": 64},
                "workload": "agentx"},
    "agentic_tier": {"hardware": "b200", "model": "deepseek-v4-pro", "profile": "sglang",
                     "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4", "batch": 32,
                                    "kv_host_tier": True},
                     "workload": "agentx"},
    "agentic_disaggregated": {"hardware": "gb200-nvl72", "model": "deepseek-v4-pro", "profile": "sglang",
                              "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4",
                                             "serving": "disaggregated", "decode_gpus": 8, "concurrency": 64,
                                             "prefill": {"gpus": 4, "tp": 4, "ep": 4, "instances": 2}},
                              "workload": "agentx"},
}

FRONTIERS = {
    "fixed": dict(hardware="h200-sxm", model="llama-3.1-8b", workload="fixed-1k1k", profile="vllm",
                  space=dict(gpus=(1, 2), tp=(1, 2), disaggregation=True, max_disagg_gpus=4, batch_points=16), refine=16),
    "agentic": dict(hardware="b200", model="deepseek-v4-pro", workload="agentx", profile="sglang",
                    weights=("mxfp4",), space=dict(gpus=(8,), tp=(8,), ep=(8,), spec_tokens=(0,), batch_points=8), refine=8),
}

CANDIDATES = {
    "fixed": dict(FRONTIERS["fixed"], profile="dynamo-vllm", fitting_only=False),
    "agentic_disaggregated": dict(hardware="gb200-nvl72", model="deepseek-v4-pro", workload="agentx",
                                  profile="dynamo-sglang", weights=("mxfp4",),
                                  space=dict(gpus=(8,), tp=(8,), ep=(8,), spec_tokens=(0,), batch_points=4,
                                             pf_gpus=(8,), pf_tp=(8,), pf_ep=(8,), max_disagg_gpus=32),
                                  fitting_only=False),
}
CANDIDATE_STRIDE = 7          # every 7th candidate point (plus every disaggregated one) is kept

RECORD_FILES = ("agentic.csv", "calibration.csv", "curve-end.csv", "inferencex-silicon.csv")
RECORDS_PER_FILE = {"agentic.csv": 8, "calibration.csv": 10, "curve-end.csv": 6, "inferencex-silicon.csv": 8}


def _numbers(row: dict) -> dict:
    """The JSON-able outputs of one row: floats (NaN as the string 'nan'), bools, strings."""
    out = {}
    for k, v in row.items():
        if isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (int, float, np.integer, np.floating)):
            x = float(v)
            out[k] = "nan" if math.isnan(x) else x
        elif isinstance(v, str):
            out[k] = v
    return out


def record_sample():
    from perfmodel.specs.records import read_records
    root = Path(__file__).resolve().parents[1] / "data" / "shared"
    recs = []
    for name in RECORD_FILES:
        rows = read_records(root / name)
        step = max(len(rows) // RECORDS_PER_FILE[name], 1)
        recs += rows[::step][:RECORDS_PER_FILE[name]]
    return recs


def scenario_numbers() -> dict:
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    out = {}
    for name, sc in SCENARIOS.items():
        s = Scenario.model_validate(sc)
        out[f"predict/{name}"] = _numbers(api.predict(s).iloc[0].to_dict())
        out[f"predict_point/{name}"] = _numbers(api.predict_point(s))
    return out


def frontier_numbers() -> dict:
    from perfmodel.analyses.deployments import DeploymentSpace
    from perfmodel.analyses.frontier import frontier
    out = {}
    for name, kw in FRONTIERS.items():
        kw = dict(kw)
        kw["space"] = DeploymentSpace(**kw["space"])
        front = frontier(kw.pop("hardware"), kw.pop("model"), **kw)
        for i, row in enumerate(front.to_dict("records")):
            out[f"frontier/{name}/{i}"] = _numbers(row)
    from perfmodel.analyses.frontier import candidates
    for name, kw in CANDIDATES.items():
        kw = dict(kw)
        kw.pop("refine", None)
        kw["space"] = DeploymentSpace(**kw["space"])
        cand = candidates(kw.pop("hardware"), kw.pop("model"), **kw)
        for i, row in enumerate(cand.to_dict("records")):
            if i % CANDIDATE_STRIDE == 0 or row.get("serving") == "disaggregated":
                out[f"candidates/{name}/{i}"] = _numbers(row)
    return out


def validation_numbers() -> dict:
    from perfmodel import catalog
    from perfmodel.validation.batch_predict import plan, predict_matrix
    from perfmodel.validation.predict_rows import predict_rows
    from perfmodel.validation.samples import central_params, sample_params
    recs = record_sample()
    out = {}
    for row in predict_rows(recs, n_samples=8).to_dict("records"):
        out[f"predict_rows/{row['id']}"] = _numbers(row)
    prof = catalog.profile("sglang")
    for label, params in (("central", central_params(prof)), ("samples", sample_params(prof, 4))):
        pl = plan(recs)
        profiles = {pid: catalog.profile(pid) for pid in ("sglang", "vllm", "trtllm", "dynamo-trtllm",
                                                           "dynamo-sglang", "dynamo-vllm")}
        mat = predict_matrix(pl, profiles, params)
        for rec, vals in zip(pl.records, mat):
            out[f"batch_predict/{label}/{rec.id}"] = {str(j): ("nan" if math.isnan(v) else float(v))
                                                       for j, v in enumerate(vals)}
    return out


def all_numbers() -> dict:
    return {**scenario_numbers(), **frontier_numbers(), **validation_numbers()}


def compare(ref: dict, got: dict, rtol: float = RTOL) -> list[str]:
    """Differences between two number sets: missing or new rows, recorded outputs missing now or changed beyond
    rtol. An output column the reference does not record (a column added since) is not a difference: it moves no
    recorded number."""
    bad = []
    for key in sorted(set(ref) | set(got)):
        a, b = ref.get(key), got.get(key)
        if a is None or b is None:
            bad.append(f"{key}: {'missing now' if b is None else 'new'}")
            continue
        for col in sorted(a):
            x, y = a.get(col, "<absent>"), b.get(col, "<absent>")
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=rtol, abs_tol=0.0):
                    bad.append(f"{key}.{col}: {x!r} -> {y!r}")
            elif x != y:
                bad.append(f"{key}.{col}: {x!r} -> {y!r}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record the reference instead of checking it")
    args = ap.parse_args(argv)
    got = all_numbers()
    if args.write:
        REF.write_text(json.dumps(got, indent=0, sort_keys=True) + "\n")
        print(f"wrote {REF} ({sum(len(v) for v in got.values())} numbers, {len(got)} rows)")
        return 0
    ref = json.loads(REF.read_text())
    bad = compare(ref, got)
    n = sum(len(v) for v in ref.values())
    if bad:
        print(f"{len(bad)} of {n} outputs differ from the reference:")
        print("\n".join(bad[:60]))
        return 1
    print(f"all {n} outputs of {len(ref)} rows equal the reference (rtol {RTOL:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
