"""Compare two frontiers, and what-if changes against a baseline."""

import numpy as np
import pytest

from perfmodel.analyses.compare import compare
from perfmodel.analyses.deployments import DeploymentSpace
from perfmodel.analyses.systems import System, resolve_changes
from perfmodel.analyses.whatif import whatif
from perfmodel.errors import SpecError

SMALL = DeploymentSpace(batch_points=16, spec_tokens=(0, 2))
ARGS = ("llama-3.1-70b", "fixed-1k1k", "sglang")


def test_compare_with_itself_is_one():
    c = compare("h200-sxm", "h200-sxm", *ARGS, space=SMALL)
    assert len(c.curve) > 10
    np.testing.assert_allclose(c.curve["ratio"], 1.0, rtol=1e-12)
    np.testing.assert_allclose(c.summary["ratio"], 1.0, rtol=1e-12)


def test_compare_ratio_and_ends():
    c = compare("h200-sxm", "h100-sxm", *ARGS, space=SMALL)
    s = c.summary.set_index("quantity")
    assert s.loc["peak total_tps_per_gpu", "ratio"] == pytest.approx(
        c.a["total_tps_per_gpu"].max() / c.b["total_tps_per_gpu"].max())
    assert s.loc["max tps_per_user (curve end)", "a"] == pytest.approx(c.a["tps_per_user"].max())
    assert s.loc["max tps_per_user (curve end)", "b"] == pytest.approx(c.b["tps_per_user"].max())
    # the grid stops where the first curve ends
    assert c.curve["tps_per_user"].max() == pytest.approx(min(c.a["tps_per_user"].max(), c.b["tps_per_user"].max()))
    # H200 = H100 with more and faster HBM: never slower
    assert (c.curve["ratio"] >= 1 - 1e-9).all()
    # per MW: the same power per GPU in the catalog, so the same ratio; per dollar differs by the price ratio
    pa, pb = c.a.attrs["price_usd_per_gpu_hour"], c.b.attrs["price_usd_per_gpu_hour"]
    np.testing.assert_allclose(c.curve["ratio_per_usd"], c.curve["ratio"] * pb / pa, rtol=1e-12)


def test_whatif_scale_one_equals_baseline():
    w = whatif("h200-sxm", *ARGS, scale={"hbm_bandwidth": 1.0, "decode_speedup": 1.0}, space=SMALL)
    np.testing.assert_allclose(w.curve["ratio"], 1.0, rtol=1e-12)
    np.testing.assert_allclose(w.a["total_tps_per_gpu"].to_numpy(), w.b["total_tps_per_gpu"].to_numpy(), rtol=1e-12)


def test_whatif_bandwidth_raises_the_curve_end():
    sp = DeploymentSpace(batch_points=16, spec_tokens=(0,))
    w = whatif("h200-sxm", "llama-3.1-70b", "fixed-1k1k", "speed-of-light", scale={"hbm_bandwidth": 2.0}, space=sp)
    end = w.summary.set_index("quantity").loc["max tps_per_user (curve end)", "ratio"]
    assert 1.5 < end <= 2.0 + 1e-9        # batch 1 streams weights: at most the bandwidth ratio
    assert (w.curve["ratio"] >= 1 - 1e-9).all()


def test_whatif_names():
    s = System("gb200-nvl72", "vllm")
    new = resolve_changes(s, {"nvlink_bandwidth": 1.7, "flops": 2, "decode_speedup": 1.25}, {"hbm_capacity_gb": 200})
    f = new.fields()
    assert f["scaleup_bandwidth_gbps"] == pytest.approx(900 * 1.7)
    assert f["fp4_dense_pflops"] == pytest.approx(20) and f["bf16_dense_pflops"] == pytest.approx(5)
    assert f["hbm_capacity_gb"] == 200
    assert new.profile_overrides["decode_speedup"] == pytest.approx(1.25)
    with pytest.raises(SpecError, match="hbm_bandwith"):
        resolve_changes(s, {"hbm_bandwith": 2})
    with pytest.raises(SpecError, match="fp4_dense_pflops"):
        resolve_changes(System("h100-sxm"), {"fp4_flops": 2})
    with pytest.raises(SpecError, match="outside"):
        resolve_changes(s, {"eff_gemm": 5})
