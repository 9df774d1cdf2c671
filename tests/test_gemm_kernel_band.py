"""Mechanism ``gemm_kernel_band`` (specs/mechanisms.py): the GEMM efficiencies searched inside the band of the
engine's GEMM kernel tables (validation/kernel_bands.gemm_band) and the dense GEMMs' small-M loss computed from the
same tables (equations/gemm_shape.small_m_efficiency, engine/kernel_bind.gemm_shape_values). Off (no catalog
profile lists it), the search ranges and the equations are what they were; the serving numbers with it off are
pinned by tests/test_serving_reference.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import sympy as sp
from mechanisms_on import profile_with

from perfmodel import api, catalog
from perfmodel.engine.kernel_bind import gemm_shape_values, kernel_values
from perfmodel.equations.gemm_shape import small_m_efficiency
from perfmodel.equations.symbols import S
from perfmodel.specs.deployment import Scenario
from perfmodel.validation import calibrate
from perfmodel.validation.kernel_bands import bands, gemm_band_of, gemm_bands


def _curve(status="fitted", **p):
    """A GEMM curve with the parameters the band and the binder read (the others never read)."""
    return SimpleNamespace(status=status, params={"eff_c": 0.7, "k_half": 0.0, "m_half": 1.0, "beta_c": 0.5,
                                                  "t0_us": 5.0, **p})


FITS = SimpleNamespace(families={"gemm": {"vllm": {
    "linear/bfloat16": _curve(eff_c=0.8, k_half=0.0, m_half=4.0, beta_c=0.2),
    "cutlass/fp8": _curve(eff_c=0.6, k_half=2048.0, m_half=8.0, beta_c=0.6),
    "cutlass_block/fp8_block": _curve(eff_c=1.0, k_half=5e4),       # plateau on its bound: no plateau measured
    "deepgemm/fp8_block": _curve(eff_c=0.7, t0_us=82.0),            # launch floor of no kernel
    "triton_mm/fp8": _curve(eff_c=0.1),                              # a Triton fallback
    "cutedsl/nvfp4": _curve(eff_c=0.5, k_half=0.0, m_half=2.0, beta_c=0.0)}}})


def test_band_by_hand():
    """Kept: the BF16 curve, plateau 0.8 at every k in GEMM_K, and the FP8 one, 0.6 k / (k + 2048) = 0.3, 0.4,
    0.4667, 0.48, 0.5333 at k = 2048, 4096, 7168, 8192, 16384. Ten values; numpy's linear quantiles at 0.1 and 0.9
    sit at positions 0.9 and 8.1: 0.3 + 0.9 (0.4 - 0.3) = 0.39 and 0.8. The nvfp4 curve alone sets eff_gemm_fp4."""
    assert gemm_band_of([FITS, None], "eff_gemm", "vllm") == pytest.approx((0.39, 0.8))
    assert gemm_band_of([FITS], "eff_gemm_fp4", "vllm") == pytest.approx((0.5, 0.5))
    assert gemm_band_of([FITS], "eff_gemm", "sglang") == (0.1, 1.0)          # no curve: the prior


def _small_m(rows, m_half, beta):
    """small_m_efficiency of ``rows`` rows over a 4096 x 1024 weight, 128 x 128 tiles on 132 SMs, evaluated as the
    step evaluates it (numpy)."""
    from perfmodel.engine.compiled import NUMPY_MODULES
    m = sp.Symbol("m", nonnegative=True)
    f = sp.lambdify([m, S["M_t"], S["N_t"], S["n_sm"], S["g_mh"], S["g_bc"]],
                    small_m_efficiency(4096 * 1024, m, 4096), modules=NUMPY_MODULES)
    return float(f(float(rows), 128.0, 128.0, 132.0, m_half, beta))


def test_small_m_loss_by_hand():
    """M = 16 rows over a 4096 x 1024 weight, 128 x 128 tiles on 132 SMs: 8 tiles; m_half 4, beta_c 0.5:
    s = 16 / 20 (8 / 132)^0.5 = 0.8 x 0.246183 = 0.196946. At 4096 rows (256 tiles, every SM busy): 4096 / 4100."""
    assert _small_m(16, 4.0, 0.5) == pytest.approx(0.8 * (8 / 132) ** 0.5, rel=1e-12)
    assert _small_m(16, 4.0, 0.5) == pytest.approx(0.196946, rel=1e-5)
    assert _small_m(4096, 4.0, 0.5) == pytest.approx(4096 / 4100, rel=1e-12)
    for m in (0, 1, 16, 4096):             # off (g_mh = g_bc = 0): exactly 1, also with no token
        assert _small_m(m, 0.0, 0.0) == 1.0


def test_binder_takes_the_medians_of_the_production_curves():
    """Weight format fp8: the kept FP8 curve alone (m_half 8, beta_c 0.6); bf16: the BF16 curve; nvfp4: the nvfp4
    curve. Without a kept curve in the format (fp8 with the FP8 curve gone: the block curves are not kept), the
    medians of every kept curve: m_half (4, 2) -> 3, beta_c (0.2, 0) -> 0.1."""
    assert gemm_shape_values(FITS, "vllm", "fp8") == {"g_mh": 8.0, "g_bc": 0.6}
    assert gemm_shape_values(FITS, "vllm", "bf16") == {"g_mh": 4.0, "g_bc": 0.2}
    assert gemm_shape_values(FITS, "vllm", "nvfp4") == {"g_mh": 2.0, "g_bc": 0.0}
    curves = {k: v for k, v in FITS.families["gemm"]["vllm"].items() if k != "cutlass/fp8"}
    no_fp8 = SimpleNamespace(families={"gemm": {"vllm": curves}})
    assert gemm_shape_values(no_fp8, "vllm", "fp8") == pytest.approx({"g_mh": 3.0, "g_bc": 0.1})
    assert gemm_shape_values(FITS, "sglang", "fp8") == {}


def test_off_nothing_moves():
    """No catalog profile lists the mechanism; every engine's search ranges are the attention bands alone (the
    fits reproduce); the binder leaves g_mh = g_bc = 0 (s = 1) on a GPU with GEMM tables."""
    for pid in catalog.ids("profiles"):
        assert not catalog.profile(pid).uses("gemm_kernel_band")
        assert calibrate.engine_bounds(pid) == bands(calibrate.base_engine(pid))
    hw = catalog.hardware("h200-sxm")
    v = kernel_values(hw, catalog.profile("vllm"), "fp8", "fp8", False, 1e-6, 1e-6)
    assert (v["g_mh"], v["g_bc"]) == (0.0, 0.0)
    on = kernel_values(hw, profile_with("vllm", "gemm_kernel_band"), "fp8", "fp8", False, 1e-6, 1e-6)
    assert on["g_mh"] > 0 and on["g_bc"] > 0


def test_on_the_fit_searches_the_band(monkeypatch):
    """A profile that switches it on has eff_gemm and eff_gemm_fp4 searched inside its engine's GEMM bands, which
    lie inside the prior search ranges."""
    on = profile_with("vllm", "gemm_kernel_band")
    real = catalog.profile
    monkeypatch.setattr(catalog, "profile", lambda pid: on if pid == "vllm" else real(pid))
    b = calibrate.engine_bounds("vllm")
    assert {k: b[k] for k in ("eff_gemm", "eff_gemm_fp4")} == gemm_bands("vllm")
    for name in ("eff_gemm", "eff_gemm_fp4"):
        lo, hi = b[name]
        assert calibrate.FIT_PARAMS["eff_gemm"][0] <= lo < hi <= 1.0
    assert "eff_gemm" not in calibrate.engine_bounds("sglang")


def test_on_a_mid_batch_decode_step_is_slower(tmp_path):
    """Llama-3.1-8B FP8 on one H200 (vLLM's fitted eff_gemm) at 128 clients: the attention projections' 80 column
    tiles leave 52 of 132 SMs idle, min(1, 80 / 132)^0.98 = 0.61 with the tables' FP8 beta_c; the step is
    compute-bound, so on it is slower (measured here 17.26 -> 17.67 ms); at 1 client the GEMMs stay memory-bound and
    the step does not move."""
    from mechanisms_on import profile_file
    res = {}
    for c in (1, 128):
        sc = {"hardware": "h200-sxm", "model": "llama-3.1-8b",
              "deployment": {"gpus": 1, "tp": 1, "weights": "fp8", "concurrency": c}}
        for name, mechs in (("off", ()), ("on", ("gemm_kernel_band",))):
            prof = profile_file(tmp_path, "vllm", *mechs)
            res[c, name] = api.predict(Scenario.model_validate({**sc, "profile": prof})).iloc[0]["tpot_ms"]
    assert res[128, "on"] > res[128, "off"] * 1.01
    assert res[1, "on"] == pytest.approx(res[1, "off"], rel=1e-9)
