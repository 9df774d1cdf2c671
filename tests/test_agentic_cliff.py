"""The KV cliff of agentic lanes (issue 38 items 2 and 4): requests admitted to prefill hold their KV, so past the
capacity the warm-cache state vanishes and the closed loop falls to the cold one, where the simulation falls."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from mechanisms_on import profile_file, profile_with

from perfmodel import api
from perfmodel.serving.sessions import admitted_prefilling
from perfmodel.specs.deployment import Scenario

CLIFF = ("agentic_lanes", "kv_admitted_prefill", "prefix_cache_renewal")
"""The mechanisms (perfmodel/specs/mechanisms.py) that place the cliff; they land switched off."""


def test_admitted_prefilling_by_hand():
    """Little's law: B = 10 decoding, osl 100 at 10 ms a token -> X = 10 / (100 x 0.01) = 10 requests/s; each waits
    200 ms for the prefill server and prefills 300 ms -> 10 x 0.5 = 5 requests hold KV before they decode."""
    df = pd.DataFrame({"batch": [10.0], "tpot_ms": [10.0], "prefill_queue_ms": [200.0], "prefill_ms": [300.0]})
    np.testing.assert_allclose(admitted_prefilling(df, np.array([100.0])), [5.0])


def _scenario(c: int, folder) -> Scenario:
    return Scenario.model_validate({
        "hardware": "h200-sxm", "model": "deepseek-v4-flash", "profile": profile_file(folder, "vllm", *CLIFF),
        "deployment": {"gpus": 4, "tp": 4, "ep": 1, "weights": "mxfp4", "spec_tokens": 1, "serving": "aggregated",
                       "concurrency": c},
        "workload": "agentx-062126-0730", "overrides": {"profile": {"arrival_burst": 0.0}}})


@pytest.mark.parametrize("c, warm", [(128, True), (160, False)])
def test_the_cliff_falls_where_the_simulation_falls(c, warm, tmp_path):
    """DeepSeek-V4-Flash on 4 H200 (room for 140 contexts of 150.7k), AgentX after the harness update: 128 lanes
    keep the prefixes (hit at the 0.91 ceiling), 160 lose them (the simulation: 0.93 and 0.05); at 160 the
    throughput and TTFT P50 are the simulation's within 10% (both prefill-bound on re-prefilled contexts)."""
    sc = _scenario(c, tmp_path)
    cf = api.predict(sc).iloc[0]
    s, req = api.simulate(sc, requests=2000, seed=0)
    sim_hit = 1 - req["uncached_input"].sum() / req["isl"].sum()
    assert (cf["prefix_hit"] > 0.85) == warm and (sim_hit > 0.85) == warm
    if not warm:
        assert cf["total_tps_per_gpu"] == pytest.approx(s["total_tps_per_gpu"], rel=0.10)
        assert cf["ttft_ms"] == pytest.approx(s["ttft_ms"], rel=0.10)


def test_ceiling_scale_by_hand():
    """The published hit ceiling bounds the trace-wide hit, as the mean request counts it (lengths.py): later
    turns' new tokens are scaled by k = max(1, (E[ctx](1 - h) - w_1 E[first]) / E[new]). agentx-trace: 254,000 x
    0.017 = 4,318; first turns 1/65 of 254,000 - 32 x (3,792 + 616) = 112,944 -> 1,737.6; (4,318 - 1,737.6) / 3,792
    = 0.68 -> k = 1 (the means already meet the ceiling: no draw raised, in the closed form or the simulation).
    Without turns and with new tokens of mean 2,000: k = 4,318 / 2,000 = 2.159."""
    from perfmodel import catalog
    from perfmodel.serving.sessions import ceiling_scale, ceiling_scaled
    from perfmodel.specs.workload import Dist
    a = catalog.workload("agentx-trace").agentic
    assert ceiling_scale(a) == 1.0
    b = a.model_copy(update={"turns": None, "new_tokens_per_turn": Dist(median=1000, mean=2000)})
    assert ceiling_scale(b) == pytest.approx(254000 * (1 - 0.983) / 2000)
    on = SimpleNamespace(profile=profile_with("vllm", "hit_ceiling_per_trace"))
    off = SimpleNamespace(profile=profile_with("vllm"))
    np.testing.assert_allclose(ceiling_scaled(on, b, np.array([1000.0, 3e5]), 254000.0), [2159.0, 254000.0])
    np.testing.assert_allclose(ceiling_scaled(on, None, np.array([1664.0, 3e5]), 254000.0), [1664.0, 254000.0])
    # switched off (the catalog profiles): no scaling, as before the mechanism was written
    np.testing.assert_allclose(ceiling_scaled(off, b, np.array([1000.0, 3e5]), 254000.0), [1000.0, 254000.0])
