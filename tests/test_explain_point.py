"""`frontier --explain-at`: the point read at a speed, its terms read off the serving layer's columns, and the CLI."""

import json
import math

import pandas as pd
import pytest

from perfmodel.analyses.explain_point import point_at, terms
from perfmodel.analyses.frontier import frontier
from perfmodel.cli.main import main
from perfmodel.errors import SpecError

FAST = ["--model", "llama-3.1-8b", "--batch-points", "8", "--spec-tokens", "0", "--no-disaggregation"]


def test_point_at_is_the_frontiers_reading():
    f = pd.DataFrame({"tps_per_user": [10.0, 50.0, 100.0], "total_tps_per_gpu": [900.0, 500.0, 100.0]})
    assert point_at(f, 50)["total_tps_per_gpu"] == 500       # exactly at a point
    assert point_at(f, 51)["tps_per_user"] == 100             # the first point at or above the speed
    assert point_at(f, 1)["tps_per_user"] == 10               # below the curve: its peak
    with pytest.raises(SpecError, match="ends at 100.0"):
        point_at(f, 101)
    with pytest.raises(SpecError):
        point_at(f, float("nan"))


def _row(**kw):
    base = {"serving": "disaggregated", "gpus": 32, "tp": 1, "dp": 32, "ep": 32, "spec_tokens": 4,
            "acceptance_length": 2.88, "instances": 1, "decode_gpus": 32, "pf_instances": 20, "pf_gpus": 2,
            "pf_tp": 1, "pf_ep": 2, "prefill_gpus": 40, "kv_host_tier": False, "batch": 384, "kv_max_batch": 1053,
            "max_batch": 1053, "sessions": 800.0, "sessions_per_gpu": 800 / 72, "concurrency": 500.0,
            "isl": 142000.0, "uncached_input": 5265.0, "prefix_hit": 0.963, "kv_in_host_share": 0.1,
            "evicted_share": 0.3, "kv_transfer_ms": 6.0, "ttft_mean_ms": 1500.0, "bound": "prefill_pool"}
    return {**base, **kw}


def test_terms_read_the_columns_disaggregated():
    t = terms(_row()).set_index("term")
    assert t.loc["running batch per (decode) GPU", "value"] == 12                    # 384 / 32
    assert t.loc["decoding: KV in the decode pool's HBM", "value"] == pytest.approx(384 / 800)
    # the non-decoding prefixes: host 0.1 and evicted 0.3 as the serving layer gives them, the rest in HBM
    assert t.loc["others' prefixes in the prefill pool's HBM", "value"] == pytest.approx(0.6)
    assert t.loc["others' prefixes evicted (re-prefilled next turn)", "value"] == 0.3
    assert t.loc["KV transfer share of mean TTFT", "value"] == pytest.approx(6 / 1500)
    assert t.loc["prefill pool share of all GPUs", "value"] == pytest.approx(40 / 72)
    assert t.loc["prefill instances x GPUs each", "value"] == "20 x 2 (TP 1, EP 2)"
    assert t.loc["binding limit", "value"] == "prefill_pool"
    assert t.loc["live sessions per GPU (both pools)", "from"] == "sessions_per_gpu"


def test_terms_aggregated_and_fixed():
    agg = _row(serving="aggregated", kv_in_hbm_share=0.5, kv_in_pool_share=0.1)
    t = terms(agg).set_index("term")
    assert t.loc["in this instance's HBM", "value"] == 0.5 and t.loc["evicted (re-prefilled next turn)", "value"] == 0.3
    assert "prefill pool" not in t.index and "KV transfer share of mean TTFT" not in t.index
    fixed = terms({k: v for k, v in agg.items() if k != "sessions"})
    assert "sessions" not in set(fixed["group"]) and "KV residency" not in set(fixed["group"])


def test_all_columns_keeps_the_frontier_and_adds_the_serving_columns():
    kw = dict(weights=("fp8",))
    from perfmodel.analyses.deployments import DeploymentSpace
    space = DeploymentSpace(spec_tokens=(0,), batch_points=8, disaggregation=False)
    a = frontier("h100-sxm", "llama-3.1-8b", "fixed-1k1k", "vllm", space=space, **kw)
    b = frontier("h100-sxm", "llama-3.1-8b", "fixed-1k1k", "vllm", space=space, all_columns=True, **kw)
    assert list(b.columns[: len(a.columns)]) == list(a.columns)
    pd.testing.assert_frame_equal(a, b[a.columns])
    assert {"step_ms", "res_latency_ms", "kv_gb_per_gpu", "prefill_ms"} <= set(b.columns) - set(a.columns)
    # every number of the terms table is the row's own column (or a ratio of two)
    row = point_at(b, 100)
    t = terms(row).set_index("term")
    assert t.loc["own prefill per request", "value"] == row["prefill_ms"]
    assert t.loc["running batch per (decode) GPU", "value"] == row["batch"] / row["gpus"]


def test_cli_explain_at(capsys):
    rc = main(["frontier", "--hardware", "h100-sxm", *FAST, "--explain-at", "100", "--rows", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "at 100 tok/s/user: the frontier point at" in out and "binding limit" in out
    assert "measured envelope (vllm records" in out and "nvidia-scaleup8" in out
    assert "distance beyond the measured envelope" in out and "plan band widening" in out
    for q in ("batch_per_gpu", "ep", "context_per_gpu", "kv_demand_gb_per_gpu", "span_gpus"):
        assert f"\n    {q} " in out


def test_cli_explain_at_json_and_points_unchanged(capsys):
    assert main(["frontier", "--hardware", "h100-sxm", *FAST, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)["systems"][0]
    assert main(["frontier", "--hardware", "h100-sxm", *FAST, "--json", "--explain-at", "100"]) == 0
    js = json.loads(capsys.readouterr().out)["systems"][0]
    assert js["points"] == plain["points"]                   # the frontier's points and columns as without it
    ex = js["explain"]
    assert ex["tps_per_user"] >= 100 and ex["engine_family"] == "vllm"
    assert {e["quantity"] for e in ex["envelope"]} >= {"batch_per_gpu", "ep", "context_per_gpu", "span_gpus"}
    assert ex["distance"]["hardware_family"] >= 1 and math.isfinite(ex["distance"]["hardware"])
    for lvl in ("hardware", "hardware_family"):
        assert ex["widening"][lvl]["low"] >= 1 and ex["widening"][lvl]["high"] >= 1


def test_cli_explain_at_beyond_the_curve_is_one_line(capsys):
    rc = main(["frontier", "--hardware", "h100-sxm", *FAST, "--explain-at", "100000"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--explain-at" in err and "Traceback" not in err
