"""agents_per_gpu (analyses/agents.py): hand checks on a small frame, the SLO's reasons, validate and claims."""

import numpy as np
import pandas as pd
import pytest

from perfmodel.analyses.agents import agents_per_gpu, sessions_per_gpu
from perfmodel.errors import SpecError
from perfmodel.search import SLO
from perfmodel.specs.records import Record
from perfmodel.validation.agents_per_gpu import slo_of
from perfmodel.validation.frontier_rows import multi_domain_candidates
from perfmodel.validation.row_context import Unsupported


def _frame():
    # three fitting points of an 8-GPU aggregated instance and one disaggregated (4 decode + 8 prefill GPUs)
    return pd.DataFrame({
        "fits": [True, True, True, True, False],
        "serving": ["aggregated"] * 3 + ["disaggregated", "aggregated"],
        "gpus": [8.0, 8, 8, 4, 8],
        "concurrency": [16.0, 64, 256, 120, 4096],
        "prefill_gpus": [np.nan, np.nan, np.nan, 8, np.nan],
        "decode_gpus": [np.nan, np.nan, np.nan, 4, np.nan],
        "tps_per_user": [120.0, 80, 30, 60, 200],
        "ttft_ms": [200.0, 900, 6000, 3000, 10],
        "ttft_p90_ms": [400.0, 2500, 9000, 4500, 20],
    })


def test_sessions_per_gpu_counts_every_gpu():
    # aggregated: clients / instance GPUs; disaggregated: 120 clients on one 4-GPU decode instance fed by an
    # 8-GPU prefill pool -> 120 / 12 = 10 per GPU
    np.testing.assert_allclose(sessions_per_gpu(_frame()), [2.0, 8.0, 32.0, 10.0, 512.0])


def test_agents_per_gpu_by_hand():
    df = _frame()
    # floor 50 tok/s/user, TTFT p50 <= 5 s: points 0, 1, 3 qualify -> max(2, 8, 10) = 10 (the disaggregated one)
    r = agents_per_gpu(df, SLO.speed_floor(50, 5000))
    assert r.value == pytest.approx(10.0) and r.row["serving"] == "disaggregated"
    # TTFT p90 <= 3 s: point 3's P90 (4.5 s) fails -> 8
    assert agents_per_gpu(df, SLO.speed_floor(50, 3000, 90)).value == pytest.approx(8.0)
    # no TTFT limit, floor 25: point 2 (32) qualifies; the non-fitting point never counts
    assert agents_per_gpu(df, SLO.speed_floor(25)).value == pytest.approx(32.0)


def test_unmet_slo_names_the_field():
    df = _frame()
    r = agents_per_gpu(df, SLO.speed_floor(500, 5000))
    assert r.value is None and r.reason.endswith("slo.tps_per_user") and "120.0" in r.reason
    r = agents_per_gpu(df, SLO.speed_floor(50, 100))
    assert r.value is None and r.reason.endswith("slo.ttft_ms") and "200 ms" in r.reason
    with pytest.raises(SpecError, match="slo.tps_per_user"):
        SLO.speed_floor(0)
    with pytest.raises(SpecError, match="slo.ttft_ms"):
        SLO.speed_floor(50, -1)
    with pytest.raises(SpecError, match="slo.percentile"):
        SLO.speed_floor(50, 1000, 100)
    with pytest.raises(SpecError, match="slo.ttft_percentile"):
        SLO.speed_floor(50, 1000, 25, 0)


def test_ttft_quantile_is_the_queue_tail_hand_checked():
    """TTFT_q = mean - E[W] + (E[W]/rho) ln(rho/(1-q)): rho 0.5, E[W] 100 ms, mean 600 ms -> P95 = 500 + 200 ln 10
    = 960.5 ms; at P50, ln(1) = 0 -> the wait's median is 0 (P(W > 0) = rho = 0.5): 500 ms."""
    import math

    import pandas as pd

    from perfmodel.search import ttft_quantile_ms
    df = pd.DataFrame({"ttft_mean_ms": [600.0], "prefill_queue_ms": [100.0], "prefill_utilization": [0.5]})
    assert ttft_quantile_ms(df, 95)[0] == pytest.approx(500 + 200 * math.log(10))
    assert ttft_quantile_ms(df, 50)[0] == pytest.approx(500.0)
    slo = SLO.speed_floor(20, 10_000, 25, 95)
    assert slo.ttft_column == "ttft_p95_ms" and "p25" in slo.text() and "TTFT p95" in slo.text()


def _rec(**kw):
    base = dict(id="a", kind="frontier", hardware="h100-sxm", model="llama-3.3-70b", metric="agents_per_gpu",
                value=10.0, at_tps_per_user=20.0, isl=1024, osl=1024)
    return Record(**{**base, **kw})


def test_slo_from_record_notes():
    s = slo_of(_rec(notes="SLO: p50 >= 50 tok/s/user and p50 TTFT < 5 s"))
    assert (s.tps_per_user, s.ttft_ms, s.speed_percentile) == (20.0, 5000.0, 50.0)
    s = slo_of(_rec(notes="P90 TTFT limit 450 ms"))
    assert (s.ttft_ms, s.speed_percentile) == (450.0, 90.0)
    with pytest.raises(Unsupported, match="TTFT limit"):
        slo_of(_rec(notes="no limit given"))
    with pytest.raises(Unsupported, match="at_tps_per_user"):
        slo_of(_rec(at_tps_per_user=None, notes="TTFT < 2 s"))


def test_validate_predicts_agents_per_gpu_row():
    from perfmodel.validation.predict_rows import predict_rows
    rec = _rec(engine="vllm", gpus=8, tp=8, notes="TTFT < 2 s")
    out = predict_rows([rec], n_samples=4)
    row = out.iloc[0]
    assert row["status"] == "ok" and row["predicted"] > 0
    bad = predict_rows([_rec(engine="vllm", gpus=8, tp=8, at_tps_per_user=5000.0, notes="TTFT < 2 s")], n_samples=4)
    assert bad.iloc[0]["status"].startswith("unsupported: SLO") and "slo.tps_per_user" in bad.iloc[0]["status"]


def test_multi_domain_candidates_for_a_model_no_node_holds():
    from perfmodel import catalog
    c = multi_domain_candidates(catalog.model("deepseek-r1"), 8)
    assert (16.0, 1.0, 16.0) in c and all(g in (16.0, 32.0) for g, _, _ in c)


def test_claim_schema_accepts_agents_per_gpu_at_an_slo():
    from perfmodel.specs.claim import ClaimSpec
    base = dict(id="x", title="t", source="https://example.org/x", quote="q", kind="absolute",
                systems=[{"hardware": "h100-sxm", "profile": "vllm"}],
                model="llama-3.3-70b", workload="fixed-1k1k", metric={"quantity": "agents_per_gpu"}, claimed=10,
                date="2026-12-01")
    c = ClaimSpec.model_validate({**base, "at": {"point": "speed", "tps_per_user": 20, "ttft_ms": 2000,
                                                 "interactivity": "itl", "percentile": 50}})
    assert c.metric.column == "agents_per_gpu" and c.at.ttft_ms == 2000
    with pytest.raises(ValueError, match="agents_per_gpu claim is read at an SLO"):
        ClaimSpec.model_validate({**base, "at": "peak"})
    # the check reads it off the evaluated points: a modeled number of sessions per GPU, with a band
    from perfmodel.claims.check import check
    out = check(c)
    v, (lo, hi) = out["model"]["value"], out["model"]["band"]
    assert np.isfinite(v) and 0 < lo <= v <= hi and "TTFT <= 2000 ms" in out["at"]
    assert "sessions/GPU" in out["reason"]
    # an SLO no deployment meets: the verdict says which SLO field binds
    bad = ClaimSpec.model_validate({**base, "at": {"point": "speed", "tps_per_user": 20, "ttft_ms": 1,
                                                   "interactivity": "itl", "percentile": 50}})
    out = check(bad)
    assert out["verdict"] == "implausible" and out["reason"].endswith("slo.ttft_ms")


def test_frontier_cli_reports_agents_per_gpu(capsys):
    import json

    from perfmodel.cli.main import main
    fast = ["frontier", "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--batch-points", "8",
            "--spec-tokens", "0"]
    assert main([*fast, "--slo-tps-per-user", "20", "--slo-ttft-ms", "2000"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if "agents_per_gpu" in x][0]
    assert "sessions/GPU within the SLO >= 20 tok/s/user p50, TTFT p50 <= 2000 ms" in line
    # a percentile without a TTFT column of its own (p95) reads the queue's tail, as the search did
    assert main([*fast, "--slo-tps-per-user", "20", "--slo-ttft-ms", "2000", "--slo-percentile", "95"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if "agents_per_gpu" in x][0]
    assert "TTFT p95 <= 2000 ms" in line and "TTFT p95 " in line.split("(at ", 1)[1]
    assert main([*fast, "--slo-tps-per-user", "5000", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["systems"][0]
    assert s["agents_per_gpu"] is None and s["agents_reason"].endswith("slo.tps_per_user")
    assert main([*fast, "--slo-ttft-ms", "100"]) == 2
    assert "--slo-ttft-ms" in capsys.readouterr().err


def test_the_speed_form_is_the_one_slo_read_on_the_speed_column():
    """search.SLO.speed_floor compares speed >= floor on the point's own speed column (not 1000 / TPOT), takes
    any TTFT percentile on operating points, and is refused by the Poisson search (check_served)."""
    df = _frame()
    s = SLO.speed_floor(80, 1000)
    assert list(s.meets(df)) == [True, True, False, False, True] and s.tpot_limit_ms is None
    assert list(SLO.speed_floor(80, speed_column="ttft_p90_ms").speed_ok(df)) == [True] * 4 + [False]
    with pytest.raises(SpecError, match="slo.speed_percentile"):
        s.check_served()
    with pytest.raises(SpecError, match="slo.ttft_percentile"):
        SLO(ttft_ms=100, ttft_percentile=95).check_served()
    with pytest.raises(SpecError, match="slo.ttft_percentile"):     # no column and no queue to read P95 from
        SLO(ttft_ms=100, ttft_percentile=95).meets(df)
    assert SLO(ttft_ms=1000, tps_per_user=20).check_served().tpot_limit_ms == 50.0
