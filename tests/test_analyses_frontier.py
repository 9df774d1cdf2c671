"""Frontier: deployment enumeration, Pareto envelope, reading the curve."""

import numpy as np
import pandas as pd
import pytest

from perfmodel import catalog
from perfmodel.analyses.deployments import DeploymentSpace, layouts
from perfmodel.analyses.frontier import candidates, frontier, pareto, pareto_index, read_at, summary
from perfmodel.engine.bind import hardware_fields, hbm_bytes
from perfmodel.errors import SpecError

SMALL = DeploymentSpace(batch_points=24)


@pytest.fixture(scope="module")
def front():
    return frontier("h200-sxm", "llama-3.1-70b", "fixed-1k1k", "sglang", space=SMALL)


@pytest.fixture(scope="module")
def cands():
    return candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile="sglang", space=SMALL)


def test_frontier_is_pareto(front):
    x, y = front["tps_per_user"].to_numpy(), front["total_tps_per_gpu"].to_numpy()
    assert len(front) > 10
    assert np.all(np.diff(x) > 0), "interactivity rises along the frontier"
    assert np.all(np.diff(y) < 0), "throughput falls as interactivity rises"


def test_no_candidate_beats_a_frontier_point(front, cands):
    cx, cy = cands["tps_per_user"].to_numpy(), cands["total_tps_per_gpu"].to_numpy()
    fx, fy = front["tps_per_user"].to_numpy(), front["total_tps_per_gpu"].to_numpy()
    beats = (cx[None, :] >= fx[:, None] * (1 + 1e-12)) & (cy[None, :] > fy[:, None] * (1 + 1e-12))
    assert not beats.any()
    # and the frontier reaches the extremes of the candidates
    assert fx.max() >= cx.max() * (1 - 1e-12)
    assert fy.max() >= cy.max() * (1 - 1e-12)


def test_only_fitting_points(front, cands):
    assert cands["fits"].all()
    assert np.all(front["batch"] <= front["max_batch"])
    seen_gb = hbm_bytes(hardware_fields(catalog.hardware("h200-sxm"))) / 1e9   # what the engine sees, in 1e9 B
    assert np.all(front["mem_gb_per_gpu"] <= seen_gb + 1e-9)


def test_output_frontier_and_infx_columns(front):
    for c in ("tps_per_user", "total_tps_per_gpu", "output_tps_per_gpu", "intvty", "tput_per_gpu",
              "output_tput_per_gpu", "gpus", "tp", "ep", "pp", "dp", "spec_tokens", "batch", "serving", "weights"):
        assert c in front.columns, c
    np.testing.assert_array_equal(front["intvty"], front["tps_per_user"])
    np.testing.assert_array_equal(front["tput_per_gpu"], front["total_tps_per_gpu"])
    # fixed 1k/1k: total counts input + output = 2 x output
    np.testing.assert_allclose(front["total_tps_per_gpu"], 2 * front["output_tps_per_gpu"], rtol=1e-12)


def test_summary_reports_ends(front):
    s = summary(front)
    assert s["max_tps_per_user"] == pytest.approx(front["tps_per_user"].max())
    assert s["peak_total_tps_per_gpu"] == pytest.approx(front["total_tps_per_gpu"].max())
    assert s["candidates"] >= len(front)


def test_spec_decoding_uses_profile_acceptance(cands):
    p = catalog.profile("sglang").spec_decoding.acceptance_rate.value
    spec = cands[cands["spec_tokens"] > 0]
    assert len(spec) and (cands["spec_tokens"] == 0).any()
    k = spec["spec_tokens"].to_numpy()
    np.testing.assert_allclose(spec["acceptance_length"], (1 - p ** (k + 1)) / (1 - p), rtol=1e-12)


def test_no_spec_without_acceptance_rate():
    f = candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile="speed-of-light", space=SMALL)
    assert (f["spec_tokens"] == 0).all()


def test_layouts_valid_for_domain_and_model():
    m = catalog.model("deepseek-v3")
    rows, _ = layouts(m, 72, 0.7, DeploymentSpace())
    assert rows["gpus"].max() <= 72
    assert ((128 % rows["tp"]) == 0).all()                  # attention TP divides the heads
    assert (rows["gpus"] == rows["tp"] * rows["dp"] * rows["pp"]).all()
    assert (rows["ep"] >= rows["dp"]).all()
    assert ((rows["gpus"] / rows["pp"]) % rows["ep"] == 0).all()
    dense, _ = layouts(catalog.model("llama-3.1-70b"), 8, None, DeploymentSpace())
    assert (dense["ep"] == 1).all() and (dense["dp"] == 1).all()   # ep only for MoE
    assert (dense["spec_tokens"] == 0).all()


def test_disaggregation_only_where_the_engine_supports_it():
    sp = DeploymentSpace(batch_points=8, spec_tokens=(0,))
    with_d = candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile="speed-of-light", space=sp)
    without = candidates("h200-sxm", "llama-3.1-70b", "fixed-1k1k", profile="trtllm",
                         space=DeploymentSpace(batch_points=8, spec_tokens=(0,)))
    assert (with_d["serving"] == "disaggregated").any()
    assert not (without["serving"] == "disaggregated").any()
    d = with_d[with_d["serving"] == "disaggregated"]
    assert (d["prefill_gpus"] == d["prefill_ratio"] * d["decode_gpus"]).all()


def test_model_that_fits_nowhere_is_an_error():
    with pytest.raises(SpecError, match="does not fit"):
        frontier("h100-sxm", "deepseek-v3", "fixed-1k1k", space=DeploymentSpace(batch_points=4))


def test_pareto_matches_brute_force():
    rng = np.random.default_rng(3)
    x = np.round(rng.uniform(1, 50, 400), 0)          # many ties in x
    y = np.round(rng.uniform(1, 50, 400), 0)          # and in y
    idx = pareto_index(x, y)
    brute = [i for i in range(len(x)) if not np.any((x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i])))]
    # among exact duplicates brute force keeps all; the envelope keeps one
    got = {(x[i], y[i]) for i in idx}
    assert got == {(x[i], y[i]) for i in brute}
    assert len(idx) == len(got)
    # the binned pre-pass (large inputs) gives the same envelope
    xl, yl = rng.lognormal(3, 1, 50_000), rng.lognormal(5, 1, 50_000)
    fast, slow = pareto_index(xl, yl, bins=256), pareto_index(xl, yl, bins=10**9)
    np.testing.assert_array_equal(fast, slow)
    df = pareto(pd.DataFrame({"tps_per_user": x, "total_tps_per_gpu": y}))
    assert np.all(np.diff(df["tps_per_user"]) > 0) and np.all(np.diff(df["total_tps_per_gpu"]) < 0)


def test_read_at(front):
    x = front["tps_per_user"].to_numpy()
    y = front["total_tps_per_gpu"].to_numpy()
    np.testing.assert_allclose(read_at(front, x), y, rtol=1e-12)
    assert read_at(front, x[0] / 2)[0] == pytest.approx(y.max())      # below the start: the peak
    assert np.isnan(read_at(front, x[-1] * 1.01)[0])                   # past the end: unreachable
    mid = np.sqrt(x[3] * x[4])
    assert y[4] <= read_at(front, mid)[0] <= y[3]
