"""Disaggregated pool search (serving/pools.py): rate matching by hand, the frontier's pool columns, bad input."""

import numpy as np
import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.analyses.deployments import DeploymentSpace, prefill_layouts
from perfmodel.analyses.frontier import candidates, frontier
from perfmodel.engine.evaluate import Setup, point_arrays, prefill_step
from perfmodel.errors import SpecError
from perfmodel.serving.disaggregated import disaggregated
from perfmodel.serving.pools import PoolSearch, cluster_budget, prefill_front, size_pools


def _const_demand(a):
    one = np.array([a])
    return lambda j: (one, one, np.zeros(1), np.zeros(1))


def test_size_pools_by_hand():
    # one prefill layout of P = 2 GPUs serving r = 10 requests/s; decode instances of D = 4 GPUs consuming
    # a = 3 requests/s each; y = min(n_d a, n_p r) / (n_d D + n_p P) (tokens = 1 per request)
    front = pd.DataFrame({"gpus": [2.0], "rate_per_s": [10.0], "latency_s": [0.1]})
    j, nd, npf, y = size_pools(np.array([4.0]), front, _const_demand(3.0), np.array([1.0]), 72, 64)
    # n_d = 10 needs 3 prefill instances exactly: 30 / (40 + 6); n_d = 20, n_p = 6 ties, the fewer GPUs win
    assert (nd[0], npf[0]) == (10, 3) and y[0] == pytest.approx(30 / 46)
    j, nd, npf, y = size_pools(np.array([4.0]), front, _const_demand(3.0), np.array([1.0]), 72, 40)
    # within 40 GPUs: n_d = 3 with one prefill instance, 9 / 14 (n_d = 6, n_p = 2 ties at 18 / 28)
    assert (nd[0], npf[0]) == (3, 1) and y[0] == pytest.approx(9 / 14)
    _, _, _, y = size_pools(np.array([40.0]), front, _const_demand(3.0), np.array([1.0]), 72, 40)
    assert not np.isfinite(y[0])                    # 40 decode GPUs + 2 prefill GPUs exceed the budget


def test_prefill_front_keeps_only_undominated_layouts():
    cap = pd.DataFrame({"gpus": [1.0, 2, 4, 4, 8], "tp": 1.0, "ep": 1.0, "rate_per_s": [1.0, 1.5, 6.0, 5.0, 8.0],
                        "latency_s": [1.0, 0.6, 0.3, 0.2, 0.2], "fits": [True, True, True, True, False]})
    f = prefill_front(cap)
    # per GPU 1, 0.75, 1.5, 1.25: 2 GPUs at 0.75 is beaten by 1 GPU at 1; 4 GPUs at 1.25 by 4 at 1.5; 8 does not fit
    assert f["gpus"].tolist() == [1.0, 4.0] and f["rate_per_s"].tolist() == [1.0, 6.0]


def test_rate_matching_hand_check_prefill_supply_and_decode_demand():
    # a prefill pool of N instances at T tokens/s each serves N T / new requests/s; when decode could consume
    # more (B instances / (osl TPOT)), the closed loop runs at the prefill pool's rate
    s = Setup(catalog.hardware("h200-sxm"), catalog.model("llama-3.3-70b"), catalog.profile("dynamo-trtllm"))
    pts = dict(batch=np.array([64.0]), gpus=2, tp=2, ep=1, pp=1, spec_tokens=0, acc=1.0, isl=1024, osl=1024,
               new=1024, mix=0.0)
    pf = dict(gpus=1, tp=1, ep=1)
    tok, step = prefill_step(s, point_arrays({**pts, **pf}), s.symbol_values())
    t_per_s = float(tok[0] / step[0])                                  # prefill tokens/s of one instance
    for n_p, n_d in ((1, 16), (2, 16)):
        d = disaggregated(s, pts, pf, instances=n_d, pf_instances=n_p)
        supply = n_p * t_per_s / 1024
        demand = n_d * 64 / (1024 * d["tpot_ms"].iloc[0] / 1e3)
        assert demand > supply                                          # decode could consume more
        assert d["request_rate_per_s"].iloc[0] * n_d == pytest.approx(supply, rel=1e-9)
        assert d["bound"].iloc[0] == "prefill_pool"
        total = n_d * 2 + n_p * 1
        assert d["total_tps_per_gpu"].iloc[0] == pytest.approx(supply * 2048 / total, rel=1e-9)


def test_frontier_rows_name_both_pools_and_respect_the_budget():
    sp = DeploymentSpace(batch_points=12, spec_tokens=(0,))
    c = candidates("h200-sxm", "llama-3.3-70b", "fixed-1k1k", profile="dynamo-trtllm", space=sp)
    d = c[c["serving"] == "disaggregated"]
    assert len(d) and (c["serving"] == "aggregated").any()          # both modes compete
    for col in ("instances", "pf_instances", "pf_gpus", "pf_tp", "pf_ep", "pf_dp"):
        v = d[col].to_numpy(float)
        assert np.all(v >= 1) and np.all(v == np.round(v)), col
    np.testing.assert_allclose(d["prefill_gpus"], d["pf_instances"] * d["pf_gpus"])
    np.testing.assert_allclose(d["decode_gpus"], d["instances"] * d["gpus"])
    np.testing.assert_allclose(d["pf_dp"], d["pf_gpus"] / d["pf_tp"])
    total = d["prefill_gpus"] + d["decode_gpus"]
    assert total.max() <= cluster_budget(8) and d["pf_gpus"].max() <= 8
    # throughput per GPU counts every GPU of both pools
    np.testing.assert_allclose(d["total_tps_per_gpu"], d["request_rate_per_s"] * d["instances"] * 2048 / total,
                               rtol=1e-9)
    assert (d["prefill_utilization"] <= 1).all() and (d["ttft_ms"] > d["kv_transfer_ms"]).all()
    # across nodes (> 8 GPUs) the KV moves over the NIC, inside one node over NVLink: slower per byte
    per_byte = d["kv_transfer_ms"] * d["pf_gpus"]
    assert per_byte[total > 8].min() > per_byte[total <= 8].max()
    # the prefill layout is chosen on its own (here a smaller prefill instance than some decode instances)
    assert (d["pf_gpus"] != d["gpus"]).any()


def test_frontier_disaggregated_only_and_bad_splits():
    sp = DeploymentSpace(batch_points=8, spec_tokens=(0,), serving=())
    f = frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "dynamo-trtllm", space=sp, refine=0)
    assert (f["serving"] == "disaggregated").all()
    with pytest.raises(SpecError, match="budget") as e:   # 70B in FP8 needs 1 + 1 GPUs; budget 2 with 8-GPU TP
        frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "dynamo-trtllm", refine=0,
                 space=DeploymentSpace(batch_points=4, spec_tokens=(0,), serving=(), gpus=(8,), max_disagg_gpus=8))
    assert e.value.field == "max_disagg_gpus"
    with pytest.raises(SpecError) as e:
        DeploymentSpace(max_disagg_gpus=1)
    assert e.value.field == "max_disagg_gpus"
    with pytest.raises(SpecError) as e:
        prefill_layouts(catalog.model("llama-3.3-70b"), 8, DeploymentSpace(pf_tp=(3,)))
    assert e.value.field == "pf_tp"
    with pytest.raises(SpecError) as e:
        frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "trtllm", space=sp)
    assert e.value.field == "serving"
    with pytest.raises(SpecError):
        PoolSearch(pd.DataFrame(columns=["gpus", "tp", "ep"]), 8)


def test_ttft_limit_keeps_prefill_pools_up_and_an_unmeetable_slo_is_an_error():
    sp = DeploymentSpace(batch_points=12, spec_tokens=(0,), max_ttft_ms=1500)
    f = frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "dynamo-trtllm", space=sp, refine=16)
    assert (f["ttft_ms"] <= 1500).all()
    d = f[f["serving"] == "disaggregated"]
    assert len(d) and not (d["bound"] == "prefill_pool").any()   # n_p r >= n_d a: never the prefill pool's rate
    # a tighter limit: more prefill instances per decode instance where the prefill queue would break it
    t = frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "dynamo-trtllm", refine=0,
                 space=DeploymentSpace(batch_points=12, spec_tokens=(0,), serving=(), max_ttft_ms=400))
    assert (t["ttft_ms"] <= 400).all() and len(t) >= 3
    with pytest.raises(SpecError, match="lowest modeled") as e:
        frontier("h200-sxm", "llama-3.3-70b", "fixed-1k1k", "dynamo-trtllm", refine=0,
                 space=DeploymentSpace(batch_points=4, spec_tokens=(0,), max_ttft_ms=1.0))
    assert e.value.field == "max_ttft_ms"
    with pytest.raises(SpecError) as e:
        DeploymentSpace(max_ttft_ms=float("nan"))
    assert e.value.field == "max_ttft_ms"


def test_predict_names_a_prefill_instance_that_does_not_fit_and_one_that_cannot_keep_up():
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    # four decode instances of 32 GPUs at batch 4096 against one 4-GPU prefill instance (with the fused-MoE
    # kernel fits of GB200 one instance serves two decode instances: prefill utilization 0.91)
    dep = dict(gpus=32, tp=1, ep=32, dp_attention=True, weights="nvfp4", batch=4096, serving="disaggregated",
               decode_gpus=128, prefill=dict(gpus=4, tp=1, ep=4, dp_attention=True, instances=1))
    sc = dict(hardware="gb200-nvl72", model="deepseek-v3", profile="dynamo-trtllm", workload="fixed-1k1k")
    row = api.predict(Scenario.model_validate({**sc, "deployment": dep})).iloc[0]
    assert row["bound"] == "prefill_pool" and row["note"].startswith("deployment.prefill:")
    assert row["total_tps_per_gpu"] > 0
    small = {**dep, "prefill": dict(gpus=1, tp=1, ep=1, instances=1)}
    with pytest.raises(SpecError, match="does not fit") as e:
        api.predict(Scenario.model_validate({**sc, "deployment": small}))
    assert e.value.field == "deployment.prefill.gpus"


def test_native_pd_for_sglang_and_vllm_with_their_transfer_paths():
    """SGLang (Mooncake RDMA: the NIC even inside a domain) and vLLM (NIXL over NVLink inside a domain) search P/D;
    the KV transfer is priced on each backend's link (serving/disaggregated.transfer_bandwidth)."""
    from perfmodel import catalog
    from perfmodel.analyses.deployments import DeploymentSpace
    from perfmodel.analyses.frontier import candidates
    from perfmodel.engine.evaluate import Setup
    from perfmodel.serving.disaggregated import transfer_bandwidth
    hw, m = catalog.hardware("h200-sxm"), catalog.model("llama-3.1-70b")
    for prof, link in (("sglang", "BW_nic"), ("vllm", "BW_link"), ("dynamo-sglang", "BW_link")):
        setup = Setup(hw, m, catalog.profile(prof))
        vals = setup.symbol_values()
        assert float(transfer_bandwidth(setup, vals, True)) == float(vals[link])
        assert float(transfer_bandwidth(setup, vals, False)) == float(vals["BW_nic"])
    sp = DeploymentSpace(batch_points=6, spec_tokens=(0,), gpus=(2,), pf_gpus=(2,), max_disagg_gpus=8)
    for prof in ("sglang", "vllm"):
        c = candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile=prof, space=sp)
        d = c[c["serving"] == "disaggregated"]
        assert len(d) and (d["kv_transfer_ms"] > 0).all()
    kv = {p: candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile=p, space=sp) for p in ("sglang", "vllm")}
    ks = kv["sglang"].loc[kv["sglang"]["serving"] == "disaggregated", "kv_transfer_ms"].min()
    kvl = kv["vllm"].loc[kv["vllm"]["serving"] == "disaggregated", "kv_transfer_ms"].min()
    assert ks > 2 * kvl           # RDMA through the NIC against NVLink inside the node
