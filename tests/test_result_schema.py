"""The declared result (perfmodel/serving/result.py): every column a serving path produces is declared, with the
modes it is declared for; every declared column is produced by some path; predict --json and the README follow it."""

import json
from pathlib import Path

import numpy as np
import pytest

from perfmodel import api, catalog
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.frontier import candidates
from perfmodel.cli.main import main
from perfmodel.engine.evaluate import Setup
from perfmodel.serving import result
from perfmodel.serving.sessions import agentic
from perfmodel.specs.deployment import Scenario

ROOT = Path(__file__).resolve().parents[1]
V3 = {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang", "workload": "fixed-1k1k"}
V4 = {"hardware": "b200", "model": "deepseek-v4-pro", "profile": "sglang", "workload": "agentx"}
PRED = {
    "aggregated": {**V3, "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64}},
    "decode_only": {**V3, "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 32, "serving": "decode_only"}},
    "prefill_only": {**V3, "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 1, "serving": "prefill_only"}},
    # one prefill instance feeding 8 decode instances: bound prefill_pool, so predict adds its note
    "disaggregated": {**V3, "hardware": "gb200-nvl72", "workload": "fixed-8k1k",
                      "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 256, "serving": "disaggregated",
                                     "decode_gpus": 64, "prefill": {"gpus": 8, "tp": 8, "ep": 8, "instances": 1}}},
    "agentic": {**V4, "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4", "concurrency": 64}},
    "agentic_disaggregated": {**V4, "hardware": "gb200-nvl72",
                              "deployment": {"gpus": 8, "tp": 8, "ep": 8, "weights": "mxfp4", "batch": 16,
                                             "serving": "disaggregated", "decode_gpus": 8,
                                             "prefill": {"gpus": 8, "tp": 8, "ep": 8, "instances": 1}}},
}


@pytest.fixture(scope="module")
def produced() -> dict[str, set]:
    """Columns per mode from every path: predict, the frontier's candidate frames (pool search included) and the
    agentic call validation makes for P90 / P95 TTFT rows."""
    out = {mode: set(api.predict(Scenario.model_validate(sc)).columns) for mode, sc in PRED.items()}
    cand = candidates("gb200-nvl72", "deepseek-v3", "fixed-1k1k", profile="dynamo-sglang",
                      space=DeploymentSpace(gpus=(8,), tp=(8,), ep=(8,), spec_tokens=(0,), attention_dp=False,
                                            batch_points=3, pf_gpus=(8,), pf_tp=(8,), pf_ep=(8,),
                                            max_disagg_gpus=24))
    engine_cols = set(cand.columns) - set(_deployment_columns())
    out["disaggregated"] |= {"pool_fits"} & engine_cols        # the pool search's verdict
    agentic_cand = candidates("gb200-nvl72", "deepseek-v4-pro", "agentx", profile="dynamo-sglang", weights=("mxfp4",),
                              space=DeploymentSpace(gpus=(8,), tp=(8,), ep=(8,), spec_tokens=(0,), batch_points=2,
                                                    pf_gpus=(8,), pf_tp=(8,), pf_ep=(8,), max_disagg_gpus=16,
                                                    kv_host_tier=False))
    out["agentic_disaggregated"] |= {"pool_fits"} & set(agentic_cand.columns)
    out["frontier"] = engine_cols | (set(agentic_cand.columns) - set(_deployment_columns()))
    w = catalog.workload("agentx")
    setup = Setup(catalog.hardware("b200"), catalog.model("deepseek-v4-pro"), catalog.profile("sglang"),
                  weights="mxfp4")
    lengths = api.workload_lengths(w)
    pts = dict(batch=16.0, gpus=8.0, tp=8.0, ep=8.0, pp=1.0, spec_tokens=0.0, acc=1.0, mix=1.0, **lengths)
    df = agentic(setup, pts, w.agentic.pause_s, False, dists=w.agentic, ttft_percentiles=(90.0,))
    out["agentic"] |= set(df.columns)
    return out


def _deployment_columns() -> list[str]:
    from perfmodel.analyses.frontier import DEPLOYMENT_COLUMNS
    return [c for c in DEPLOYMENT_COLUMNS if c not in {c.name for c in result.COLUMNS}] + \
        ["attention_weights", "weights", "kv_cache", "dp", "dp_attention", "kv_host_tier", "acc", "mix"]


def test_every_produced_column_is_declared_for_its_mode(produced):
    for mode, cols in produced.items():
        assert result.undeclared(cols) == [], mode
        if mode == "frontier":
            continue
        wrong = [c for c in cols if mode not in result.column(c).modes]
        assert wrong == [], f"{mode}: produced but not declared for the mode: {wrong}"


def test_every_declared_column_is_produced(produced):
    for c in result.COLUMNS:
        for mode in c.modes:
            hits = [x for x in produced[mode] if c.matches(x)]
            assert hits or c.family, f"{c.name} is declared for {mode} but no path produces it"
        assert any(c.matches(x) for cols in produced.values() for x in cols), c.name


def test_always_columns_are_in_every_row_of_their_modes(produced):
    for c in result.COLUMNS:
        if c.family or c.when:
            continue
        for mode in c.modes:
            assert c.name in produced[mode], f"{c.name} missing from {mode}"


def test_an_undeclared_column_is_refused():
    assert result.undeclared(["tpot_ms", "t_attn_core_ms", "tps_per_user_e2e_p25", "made_up_ms"]) == ["made_up_ms"]
    with pytest.raises(KeyError, match="made_up_ms"):
        result.record({"made_up_ms": 1.0})


def test_predict_json_is_the_schema(capsys):
    assert main(["predict", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--batch", "4", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    cols = [k for k in rec if k not in ("overrides", "units", "breakdown")]
    assert cols == result.ordered(cols)
    assert rec["units"]["tpot_ms"] == "ms" and rec["units"]["t_attn_core_ms"] == "ms"
    assert set(rec["units"]) == set(cols)
    assert np.isclose(rec["tps_per_user"], 1000 / rec["tpot_ms"])


def test_readme_output_columns_are_current():
    text = (ROOT / "docs/output-columns.md").read_text()
    assert result.update_readme(text) == text, "docs/output-columns.md is stale: python -m perfmodel.serving.result"


def test_one_power_rule():
    """Per-MW figures divide by all-in power where given, else by the GPU TDP (specs/hardware.power_field), the
    rule predict's power_basis column reports."""
    from perfmodel.specs.hardware import power_field
    assert power_field({"allin_power_w": 1800.0, "gpu_tdp_w": 1000.0}) == "allin_power_w"
    assert power_field({"allin_power_w": None, "gpu_tdp_w": 1000.0}) == "gpu_tdp_w"
    setup = Setup(catalog.hardware("h200-sxm"), catalog.model("llama-3.1-8b"), catalog.profile("vllm"))
    watts, basis = setup.power_w()
    fields = {k: getattr(setup.hardware.specs, k) for k in ("allin_power_w", "gpu_tdp_w")}
    assert basis == ("all-in" if power_field(fields) == "allin_power_w" else "gpu-tdp-fallback")
    assert watts == getattr(setup.hardware.specs, power_field(fields)).value


def test_the_frontier_csv_result_columns_are_declared():
    """The frontier CSV's curve columns are result columns of the schema (deployment columns aside)."""
    from perfmodel.analyses.frontier import CURVE_COLUMNS
    assert result.undeclared(CURVE_COLUMNS) == []


def test_predict_csv_has_the_same_single_columns_for_every_scenario(tmp_path):
    """A fixed workload and an agentic one write the same declared single columns (blank where a mode does not
    fill them); only the model's per-component family columns differ."""
    import csv

    from perfmodel.cli.main import main
    from perfmodel.serving.result import COLUMNS
    heads = []
    for i, extra in enumerate((["--isl", "1024", "--osl", "128"], ["--workload", "agentx", "--concurrency", "8"])):
        out = tmp_path / f"p{i}.csv"
        assert main(["predict", "--hardware", "h200-sxm", "--model", "llama-3.1-70b", "--gpus", "8", "--tp", "8",
                     *extra, "--csv", str(out)]) == 0
        heads.append(next(csv.reader(out.open())))
    single = [c.name for c in COLUMNS if not c.family]
    assert heads[0][:len(single)] == single == heads[1][:len(single)]
