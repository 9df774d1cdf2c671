"""Little's law on every plan: one served-capacity law (search/served.py) for every demand kind (rate, output
tokens/s, tokens/day, users, sessions, a demand file) on every deployment kind (aggregated, disaggregated, agentic
sessions with pauses, agentic on disaggregated pools), checked by hand on the plan's own columns:

    r = y u / osl                 requests/s one unit serves (y output tokens/s per GPU, u GPUs of the unit)
    R = E[TTFT] + osl E[TPOT]     a request's mean response time, s
    N = lambda R                  users (each with one request in flight)
    N = lambda (R + Z)            sessions (a response, then a mean tool pause Z)
    units = ceil(lambda / r)      (no headroom)

A factor of two on users, the users / sessions factor swapped, or sessions counted on one pool of a split
fails these."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.evaluation import workload_info
from perfmodel.analyses.plan import Demand, plan
from perfmodel.search import SLO
from perfmodel.search.served import cycle_s, demand_rate, response_s, unit_rate, units_needed

SMALL = dict(spec_tokens=(0,), batch_points=8, max_gpus=8)
FIXED_SLO, AGENT_SLO = SLO(ttft_ms=1500, tps_per_user=20), SLO(tps_per_user=60)
DEPLOYMENTS = {   # deployment kind -> (model, workload, system, search space, SLO)
    "aggregated": ("llama-3.3-70b", "fixed-1k1k", "h100-sxm:vllm",
                   DeploymentSpace(**SMALL, disaggregation=False), FIXED_SLO),
    "disaggregated": ("llama-3.3-70b", "fixed-1k1k", "gb200-nvl72:dynamo-trtllm",
                      DeploymentSpace(**SMALL, serving=("disaggregated",)), FIXED_SLO),
    "agentic": ("gpt-oss-120b", "agentx", "b200:vllm", DeploymentSpace(**SMALL, disaggregation=False), AGENT_SLO),
    "agentic-disaggregated": ("gpt-oss-120b", "agentx", "gb200-nvl72:dynamo-trtllm",
                              DeploymentSpace(**SMALL, serving=("disaggregated",)), AGENT_SLO),
}
DEMANDS = {"requests_per_s": 40.0, "output_tps": 40_000.0, "tokens_per_day": 3.0e9, "users": 3000.0,
           "sessions": 5000.0}
PAIRS = [(d, k) for d in DEPLOYMENTS for k in DEMANDS if k != "sessions" or d.startswith("agentic")]


@functools.cache
def _plan(deployment: str, kind: str, value: float) -> pd.Series:
    model, wl, system, space, slo = DEPLOYMENTS[deployment]
    df = plan(model, wl, [system], Demand(kind, value), slo, space=space)
    assert len(df) == 1 and df["serving"].iloc[0] == ("disaggregated" if "disagg" in deployment else "aggregated")
    return df.iloc[0]


def test_the_law_by_hand():
    """y = 1,000 output tokens/s per GPU on u = 8 GPUs, osl = 1,000: r = 8 requests/s per unit. R = 2 s, Z = 3 s:
    a unit holds r R = 16 users or r (R + Z) = 40 sessions; 100 sessions -> lambda = 100 / 5 = 20 requests/s ->
    ceil(20 / 8) = 3 units; 100 users -> lambda = 50 -> 7 units; 1 M output tokens/s -> 1,000 requests/s."""
    r = unit_rate(1000.0, 8, 1000.0)
    assert r == pytest.approx(8.0)
    assert response_s(500.0, 1.5, 1000.0) == pytest.approx(2.0)          # 0.5 s + 1,000 x 1.5 ms
    assert cycle_s("users", np.array([2.0]), 3.0)[0] == 2.0 and cycle_s("sessions", np.array([2.0]), 3.0)[0] == 5.0
    assert demand_rate("sessions", 100, 1000.0, np.array([2.0]), 3.0)[0] == pytest.approx(20.0)
    assert demand_rate("users", 100, 1000.0, np.array([2.0]), 3.0)[0] == pytest.approx(50.0)
    assert demand_rate("output_tps", 1e6, 1000.0) == pytest.approx(1000.0)
    assert demand_rate("tokens_per_day", 86400e3, 1000.0) == pytest.approx(1.0)
    assert units_needed(20.0, r)[()] == 3 and units_needed(50.0, r)[()] == 7 and units_needed(16.0, r)[()] == 2
    assert units_needed(16.0, r, headroom=0.5)[()] == 4                   # 16 / (8 x 0.5)


@pytest.mark.parametrize("deployment, kind", PAIRS)
def test_littles_law_on_the_plans_own_columns(deployment, kind):
    p = _plan(deployment, kind, DEMANDS[kind])
    osl = workload_info(DEPLOYMENTS[deployment][1]).lengths["osl"]
    value, lam = DEMANDS[kind], p["demand_requests_per_s"]
    r = p["output_tps_per_gpu"] * p["unit_gpus"] / osl                   # requests/s per unit, by hand
    R = p["ttft_mean_ms"] / 1e3 + osl * p["tpot_mean_ms"] / 1e3                # mean response time, s
    Z = p["pause_mean_s"]
    assert p["response_mean_s"] == pytest.approx(R, rel=1e-12)
    assert Z == (workload_info("agentx").pause_s if deployment.startswith("agentic") else 0.0)
    by_kind = {"requests_per_s": lam, "output_tps": lam * osl, "tokens_per_day": lam * osl * 86400,
               "users": lam * R, "sessions": lam * (R + Z)}               # N = X R on each demand kind
    assert by_kind[kind] == pytest.approx(value, rel=1e-9)
    assert p["users_per_unit"] == pytest.approx(r * R, rel=1e-9)
    if deployment.startswith("agentic"):
        assert p["sessions_per_unit"] == pytest.approx(r * (R + Z), rel=1e-9)
    # whole units: they carry the rate, one fewer would not; the capacity is units x r
    assert p["units"] == math.ceil(lam / r - 1e-9) and p["units"] >= 1
    assert p["capacity_requests_per_s"] == pytest.approx(p["units"] * r, rel=1e-9)
    assert p["gpus"] == p["units"] * p["unit_gpus"]
    assert p["utilization"] == pytest.approx(lam / (p["units"] * r), rel=1e-9) and p["utilization"] <= 1 + 1e-9


@pytest.mark.parametrize("deployment", ["disaggregated", "agentic-disaggregated"])
def test_a_split_unit_is_both_pools(deployment):
    """A disaggregated unit is its prefill pool and its decode pool; the units, requests and users (sessions) a
    plan holds count all of its GPUs, not the decode instance's."""
    p = _plan(deployment, "users", DEMANDS["users"])
    assert p["unit_gpus"] == p["prefill_gpus"] + p["decode_gpus"] > p["gpus_per_instance"]


def test_users_and_sessions_differ_by_the_live_share():
    """On one agentic workload, N sessions hold N R / (R + Z) requests in flight (the live share). Planning that
    many users asks the same requests/s at the sessions plan's point, so it needs no more GPUs (another point may
    need fewer); and back: the sessions whose live requests are a users plan's N need no more GPUs than it. Both
    ways the counts agree within one unit's share, and N users ask (R + Z) / R times N sessions' requests/s."""
    for deployment in ("agentic", "agentic-disaggregated"):
        s = _plan(deployment, "sessions", 20_000.0)
        share_s = s["response_mean_s"] / (s["response_mean_s"] + s["pause_mean_s"])
        u = _plan(deployment, "users", 20_000.0 * share_s)
        assert u["gpus"] <= s["gpus"]
        share_u = u["response_mean_s"] / (u["response_mean_s"] + u["pause_mean_s"])
        back = _plan(deployment, "sessions", u["demand_value"] / share_u)
        assert back["gpus"] <= u["gpus"]
        assert abs(u["gpus"] / s["gpus"] - 1) < 0.1 and abs(back["gpus"] / u["gpus"] - 1) < 0.1
        for a, b in ((u, s), (back, u)):
            if a["batch"] == b["batch"] and a["output_tps_per_gpu"] == b["output_tps_per_gpu"]:
                assert a["demand_requests_per_s"] == pytest.approx(b["demand_requests_per_s"], rel=1e-9)
                assert a["gpus"] == b["gpus"]
        same_n = _plan(deployment, "users", 20_000.0)
        ratio = same_n["demand_requests_per_s"] / s["demand_requests_per_s"]
        assert ratio == pytest.approx((s["response_mean_s"] + s["pause_mean_s"]) / same_n["response_mean_s"])
        assert ratio > 1.3                               # a pause of 4.9 s on turns of a few seconds


def test_plan_sessions_agree_with_the_serving_layers_count():
    """Cross-check against the sessions model (serving/sessions.py: S = B (t_busy + Z) / t_busy per decode
    instance, spread over both pools in sessions_per_gpu): the plan's sessions per GPU, r (R + Z) / u, lie within
    25% above the frontier point's sessions_per_gpu at these points (1.03 aggregated, 1.07 on pools): the serving
    layer counts the running decode batch B as the busy sessions, so it misses those waiting in the prefill queue
    or prefilling on the prefill pool; counting sessions on the decode instance alone would be 2-3x off."""
    from perfmodel.analyses.frontier import frontier
    for deployment in ("agentic", "agentic-disaggregated"):
        model, wl, system, space, slo = DEPLOYMENTS[deployment]
        p = _plan(deployment, "sessions", DEMANDS["sessions"])
        front = frontier(system, model, wl, space=DeploymentSpace(**{**space.__dict__, "slo": slo}),
                         metric="output_tps_per_gpu")
        row = front[np.isclose(front["output_tps_per_gpu"], p["output_tps_per_gpu"], rtol=1e-12)
                    & (front["batch"] == p["batch"])]
        assert len(row) == 1
        ratio = p["sessions_per_unit"] / p["unit_gpus"] / float(row["sessions_per_gpu"].iloc[0])
        assert 0.99 < ratio < 1.25, (deployment, ratio)


FILE_KINDS = {"aggregated": "requests_per_s", "disaggregated": "users", "agentic": "sessions",
              "agentic-disaggregated": "sessions"}
"""The demand column of each deployment kind's demand file (every pair of the matrix above runs the law on the
plan's columns; a file adds the periods)."""


@pytest.mark.parametrize("deployment", list(FILE_KINDS))
def test_a_demand_file_sizes_by_the_same_law(tmp_path, deployment):
    """A demand file plans each period as the same demand given alone would (its first period is DEMANDS' value),
    and each period's request rate times the cycle of its kind (1 for a rate, R for users, R + Z for sessions) is
    that period's demand."""
    from perfmodel.analyses.plan_error import read_demand_file
    kind = FILE_KINDS[deployment]
    first = DEMANDS[kind]
    f = tmp_path / "d.csv"
    f.write_text(f"period,{kind}\nQ1,{first:g}\nQ2,{4 * first:g}\n")
    kind_read, periods, vals = read_demand_file(str(f))
    assert kind_read == kind and periods == ["Q1", "Q2"] and vals == [first, 4 * first]
    model, wl, system, space, slo = DEPLOYMENTS[deployment]
    df = plan(model, wl, [system], Demand(kind, 1.0), slo, scales=tuple(vals), space=space, periods=periods)
    assert list(df["period"]) == ["Q1", "Q2"]
    one = _plan(deployment, kind, first)
    assert df["gpus"].iloc[0] == one["gpus"] and df["demand_requests_per_s"].iloc[0] == pytest.approx(
        one["demand_requests_per_s"], rel=1e-12)
    lam, resp, pause = df["demand_requests_per_s"], df["response_mean_s"], df["pause_mean_s"]
    cycle = {"requests_per_s": 1.0, "users": resp, "sessions": resp + pause}[kind]
    assert np.allclose(lam * cycle, [first, 4 * first], rtol=1e-9)
    assert (df["gpus"].iloc[1] >= df["gpus"].iloc[0]) and (df["units"] * df["unit_gpus"] == df["gpus"]).all()
