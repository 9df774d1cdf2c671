"""Property tests (hypothesis) of the compiled equations."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup, evaluate

MODELS = ["llama-3.1-70b", "deepseek-v3"]
LAYOUT = {"llama-3.1-70b": dict(gpus=8, tp=8, ep=1), "deepseek-v3": dict(gpus=8, tp=1, ep=8)}


def _setup(model, profile="vllm", hw="h200-sxm"):
    return Setup(catalog.hardware(hw), catalog.model(model), catalog.profile(profile), weights="fp8", kv_cache="fp8")


def _points(model, batch, isl=2048, osl=512, spec=0, mix=1.0):
    return dict(batch=batch, pp=1, spec_tokens=spec, acc=1.0 + 0.7 * spec, isl=isl, osl=osl, new=isl, mix=mix,
                **LAYOUT[model])


SETTINGS = settings(max_examples=25, deadline=None)


@SETTINGS
@given(model=st.sampled_from(MODELS), isl=st.integers(64, 32768), osl=st.integers(16, 4096),
       mix=st.sampled_from([0.0, 1.0]), spec=st.integers(0, 4))
def test_per_user_speed_never_rises_and_aggregate_never_falls_with_batch(model, isl, osl, mix, spec):
    batch = np.unique(np.round(np.geomspace(1, 4096, 40)))
    df = evaluate(_setup(model), _points(model, batch, isl, osl, spec, mix))
    df = df[df["fits"]]
    assert len(df) >= 1
    assert np.all(np.diff(df["tps_per_user"].to_numpy()) <= 1e-9 * df["tps_per_user"].max())
    assert np.all(np.diff(df["output_tps_per_gpu"].to_numpy()) >= -1e-9 * df["output_tps_per_gpu"].max())


@SETTINGS
@given(model=st.sampled_from(MODELS), batch=st.integers(1, 512), field=st.sampled_from(
    ["hbm_bandwidth_tbps", "fp8_dense_pflops", "bf16_dense_pflops", "scaleup_bandwidth_gbps", "nic_bandwidth_gbps"]),
    factor=st.floats(1.0, 4.0))
def test_more_bandwidth_or_flops_is_never_slower(model, batch, field, factor):
    base = _setup(model)
    more = _setup(model)
    more.hw_overrides = {field: base.hardware.value(field) * factor}
    a = evaluate(base, _points(model, batch))["tpot_ms"].iloc[0]
    b = evaluate(more, _points(model, batch))["tpot_ms"].iloc[0]
    assert b <= a * (1 + 1e-12)


@SETTINGS
@given(model=st.sampled_from(MODELS), batch=st.integers(1, 256), k=st.floats(0.25, 8.0),
       profile=st.sampled_from(["speed-of-light", "vllm"]))
def test_scaling_every_rate_by_k_scales_throughput_by_k(model, batch, k, profile):
    s = _setup(model, profile)
    vals = s.symbol_values()
    fast = dict(vals)
    for sym in ("BW_hbm", "F_bf16", "F_fp8", "F_x", "F_a", "BW_link", "BW_nic", "BW_host", "BW_hmem"):
        fast[sym] = vals[sym] * k
    for sym in ("lat_link", "t_coll", "t_floor", "t_kern", "t_step"):   # latencies are rates too: time per event
        fast[sym] = vals[sym] / k
    a = evaluate(s, _points(model, batch), symbol_values=vals)
    b = evaluate(s, _points(model, batch), symbol_values=fast)
    assert np.allclose(b["output_tps_per_gpu"], k * a["output_tps_per_gpu"], rtol=1e-9)
    assert np.allclose(b["tps_per_user"], k * a["tps_per_user"], rtol=1e-9)
