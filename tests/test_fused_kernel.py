"""The fused kernel (numba) gives the numpy path's numbers; the chunked numpy path gives them bit for bit."""

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.engine import compiled as C
from perfmodel.engine import fused
from perfmodel.engine.evaluate import Setup, prefill_inputs, symbol_inputs


def _points(n: int, seed: int = 1) -> dict:
    """Random operating points, with the edges (batch 1, tp 1, ep 1, no drafts, all cached) included."""
    rng = np.random.default_rng(seed)
    lay = np.array([(8, 8, 8), (8, 1, 8), (16, 1, 16), (4, 4, 1), (1, 1, 1), (72, 1, 72)], float)
    lay = lay[rng.integers(0, len(lay), n)]
    spec = rng.integers(0, 4, n).astype(float)
    isl = rng.uniform(1, 60000, n)
    p = {"batch": np.round(np.exp(rng.uniform(0, np.log(2048), n))), "gpus": lay[:, 0], "tp": lay[:, 1],
         "ep": lay[:, 2], "pp": np.ones(n), "spec_tokens": spec, "acc": 1 + 0.6 * spec, "isl": isl,
         "osl": rng.uniform(1, 8000, n), "new": isl * rng.uniform(0, 1, n), "mix": rng.uniform(0, 1, n)}
    p["batch"][:6], p["new"][:3], p["mix"][:3] = 1.0, 0.0, 0.0
    return p


def _agree(a: dict, b: dict, rel: float = 1e-12) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x = np.asarray(a[k], float)
        y = np.broadcast_to(np.asarray(b[k], float), x.shape)
        assert (np.isnan(x) == np.isnan(y)).all(), k
        fin = np.isfinite(y)
        assert (x[~fin & ~np.isnan(y)] == y[~fin & ~np.isnan(y)]).all(), k   # the same infinities
        np.testing.assert_allclose(x[fin], y[fin], rtol=rel, atol=0, err_msg=k)


@pytest.mark.parametrize("model, hardware, weights", [("deepseek-v3", "gb200-nvl72", "fp8")])
def test_fused_kernel_agrees_with_numpy(model, hardware, weights):
    """DeepSeek-V3's equations hold every construct the generator rewrites: max/min, Heaviside, ceiling,
    square roots, integer powers and lifted fractional powers (each model adds ~4 s of numba compile)."""
    pytest.importorskip("numba")
    m = catalog.model(model)
    s = Setup(catalog.hardware(hardware), m, catalog.profile("sglang"), weights=weights, kv_cache="fp8")
    cm, vals, p = C.compiled(m), s.symbol_values(), _points(3000)
    x = symbol_inputs(p, vals)
    y = prefill_inputs(p, vals, tokens=np.maximum(8192 * p["gpus"], p["new"]))
    for part, v in ((cm.decode, x), (cm.prefill, y)):
        fused_out, numpy_out = part(v, kernel="fused"), part(v, kernel="numpy")
        _agree(fused_out, numpy_out)
        for k in numpy_out:       # the same IEEE operations in the same order, powers by numpy: bit for bit
            np.testing.assert_array_equal(fused_out[k], np.broadcast_to(numpy_out[k], (len(p["batch"]),)),
                                          err_msg=k)


def test_fused_kernel_spans_chunks(monkeypatch):
    """More points than one kernel pass: every chunk lands in its own columns."""
    pytest.importorskip("numba")
    m = catalog.model("deepseek-v3")
    s = Setup(catalog.hardware("gb200-nvl72"), m, catalog.profile("sglang"))
    cm, vals, p = C.compiled(m), s.symbol_values(), _points(2500, seed=7)
    monkeypatch.setattr(fused, "CHUNK", 1000)
    x = symbol_inputs(p, vals)
    _agree(cm.decode(x, kernel="fused"), cm.decode(x, kernel="numpy"))


def test_numpy_chunks_are_bit_identical(monkeypatch):
    m = catalog.model("llama-3.1-70b")
    s = Setup(catalog.hardware("h200-sxm"), m, catalog.profile("vllm"))
    cm, vals, p = C.compiled(m), s.symbol_values(), _points(5000, seed=3)
    x = symbol_inputs(p, vals)
    whole = cm.decode(x, kernel="numpy")
    monkeypatch.setattr(C, "NUMPY_CHUNK", 999)
    parts = cm.decode(x, kernel="numpy")
    for k in whole:
        np.testing.assert_array_equal(np.broadcast_to(whole[k], (5000,)), parts[k], err_msg=k)


def test_auto_falls_back_to_numpy_without_numba(monkeypatch):
    m = catalog.model("llama-3.1-8b")
    s = Setup(catalog.hardware("h100-sxm"), m, catalog.profile("vllm"))
    cm, vals = C.compiled(m), s.symbol_values()
    monkeypatch.setattr(C, "FUSED_MIN_POINTS", 10)
    monkeypatch.setattr(C, "_fused_available", lambda: False)
    monkeypatch.setattr(C.Compiled, "fused", lambda self, values: pytest.fail("fused kernel used"))
    out = cm.decode(symbol_inputs(_points(50), vals))
    assert np.shape(out["step_s"]) == (50,) and np.isfinite(out["step_s"]).all()
    with pytest.raises(ValueError, match="PERFMODEL_KERNEL"):
        cm.decode(symbol_inputs(_points(5), vals), kernel="gpu")


def test_kernel_source_hoists_invariants_and_lifts_powers():
    src = ("def _lambdifygenerated(B, a, c):\n    x0 = a**(-1.0)\n    x1 = B*x0\n    x2 = x1**0.14\n"
           "    x3 = c**3\n    return [x1 + x3, x2*x1**2]\n")
    kern, lifted = fused.kernel_source(src, [True, False, False], cache=False)
    before, loop = kern.split("for i in range(")
    assert "x0 = _pow(a, -1.0)" in before and "x3 = _pow(c, 3)" in before  # loop-invariant, computed once
    assert "x1 = B * x0" in loop and "x2 = v1[i]" in loop               # the varying power is an input row
    assert "x1 * x1" in loop and "**" not in kern.split("def kernel")[1]
    assert "x1 = B * x0" in lifted and "x1 ** 0.14" in lifted and "x3" not in lifted


def test_auto_keeps_to_numpy_when_the_kernel_fails(monkeypatch):
    m = catalog.model("llama-3.1-8b")
    s = Setup(catalog.hardware("h100-sxm"), m, catalog.profile("vllm"))
    cm, vals = C.compiled(m), s.symbol_values()
    monkeypatch.setattr(C, "FUSED_MIN_POINTS", 10)
    monkeypatch.setattr(C, "_fused_off", [])
    monkeypatch.setattr(C, "_fused_available", lambda: not C._fused_off)

    def broken(self, values):
        raise RuntimeError("no LLVM here")
    monkeypatch.setattr(C.Compiled, "fused", broken)
    x = symbol_inputs(_points(50), vals)
    with pytest.warns(RuntimeWarning, match="numpy path used"):
        out = cm.decode(x)
    ref = cm.decode(x, kernel="numpy")
    np.testing.assert_array_equal(out["step_s"], ref["step_s"])
    assert C._fused_off and "no LLVM here" in C._fused_off[0]
