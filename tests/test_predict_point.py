"""api.predict_point (the one-point fast path) gives predict's row; one point on Python floats is exact."""

import math

import numpy as np
import pytest

from perfmodel import api, catalog
from perfmodel.engine import compiled as C
from perfmodel.engine.evaluate import Setup, point_arrays, symbol_inputs
from perfmodel.specs.deployment import Scenario


def _scenario(serving="aggregated", **dep):
    d = {"gpus": 8, "tp": 8, "ep": 8, "batch": 64, "weights": "fp8", "kv_cache": "fp8", "serving": serving, **dep}
    return Scenario.model_validate({"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
                                    "deployment": d, "workload": {"isl": 1024, "osl": 1024, "prefix_hit": 0.3}})


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@pytest.mark.parametrize("sc", [_scenario(), _scenario("decode_only", batch=1), _scenario(batch=None),
                                _scenario("prefill_only", batch=1)])
def test_predict_point_is_predicts_row(sc):
    row = api.predict(sc).iloc[0].to_dict()
    got = api.predict_point(sc)
    assert list(got) == list(row)
    assert [k for k in row if not _same(got[k], row[k])] == []


def test_predict_point_binds_catalog_setups_once():
    api.predict_point_cache_clear()
    api.predict_point(_scenario())
    api.predict_point(_scenario(batch=8))
    assert len(api._setups) == 1
    api.predict_point(_scenario(weights="nvfp4"))
    assert len(api._setups) == 2


def test_one_point_on_floats_equals_numpy_and_falls_back_where_floats_raise():
    m = catalog.model("deepseek-v3")
    s = Setup(catalog.hardware("gb200-nvl72"), m, catalog.profile("sglang"))
    cm, vals = C.compiled(m), s.symbol_values()
    for batch, tp, ep in ((1, 1, 1), (64, 8, 8), (4096, 1, 72)):
        p = point_arrays(dict(batch=batch, gpus=max(tp, ep), tp=tp, ep=ep, pp=1, spec_tokens=2, acc=2.2, isl=9000,
                         osl=700, new=3000, mix=1.0))
        x = symbol_inputs(p, vals)
        one = cm.decode(x)
        ref = cm.decode(x, kernel="numpy")
        for k in ref:
            np.testing.assert_allclose(np.asarray(one[k], float), np.asarray(ref[k], float).reshape(-1)[0],
                                       rtol=1e-14, err_msg=k)
    x = symbol_inputs(point_arrays(dict(batch=1, gpus=0, tp=8, ep=8, pp=1, spec_tokens=0, acc=1, isl=1000, osl=100,
                                   new=100, mix=0.0)), vals)
    assert cm.decode._one_point([x[a] for a in cm.decode.args]) is None      # 1 / 0: numpy gives inf
    ref = cm.decode(x, kernel="numpy")
    for k, v in cm.decode(x).items():
        np.testing.assert_array_equal(np.asarray(v), np.asarray(ref[k]), err_msg=k)


def test_one_point_mix_of_float_outputs_is_the_elementwise_mix():
    """serving/aggregated._mix stacks one point's float outputs into one array: the same numbers as mixing each
    output on its own (the path of arrays)."""
    from perfmodel.serving.aggregated import _mix
    rng = np.random.default_rng(3)
    d0 = {f"k{i}": float(x) for i, x in enumerate(rng.lognormal(0, 3, 40))}
    dk = {k: v * float(rng.uniform(0.5, 3)) for k, v in d0.items()}
    for share in (np.array([0.0]), np.array([0.37]), np.array([1.0])):
        got = _mix(d0, dk, share)
        want = {k: (1 - share) * np.asarray(d0[k], float) + share * np.asarray(dk[k], float) for k in d0}
        assert list(got) == list(want)
        for k in d0:
            assert got[k].shape == (1,)
            np.testing.assert_array_equal(got[k], want[k])
    arrays = {k: np.array([v, 2 * v]) for k, v in d0.items()}       # arrays take the per-output path
    got = _mix(arrays, arrays, np.array([0.2, 0.9]))
    np.testing.assert_array_equal(got["k0"], arrays["k0"])
