"""Hand checks of the GEMM-shape terms (equations/gemm_shape.py): tile padding and SM waves."""

import numpy as np
import pytest
import sympy as sp

from perfmodel import catalog
from perfmodel.engine.compiled import NUMPY_MODULES
from perfmodel.engine.evaluate import Setup, evaluate
from perfmodel.equations.gemm_shape import (dense_issued_flops, expected_wave_utilization,
                                            grouped_issued_flops, wave_utilization)
from perfmodel.equations.symbols import S


def _num(expr, **vals):
    subs = {S[k]: v for k, v in vals.items()}
    return float(sp.lambdify([], expr.subs(subs), modules=NUMPY_MODULES)())


@pytest.mark.parametrize("tiles,expected", [
    (132, 1.0),                 # one full wave
    (133, 133 / 264),           # one tile spills into a second wave
    (264, 1.0),
    (300, 300 / 396),           # 3 waves, the last 36/132 full
    (8, 128 / 132),             # below one wave: split-K into floor(132/8) = 16 parts -> 128 CTAs
    (100, 100 / 132),           # 100 tiles: no split fits (2 x 100 > 132)
])
def test_wave_utilization_on_h100(tiles, expected):
    assert _num(wave_utilization(sp.Integer(tiles)), n_sm=132) == pytest.approx(expected, rel=1e-12)


def test_expected_wave_utilization_tends_to_one_and_is_two_thirds_at_one_wave():
    assert _num(expected_wave_utilization(sp.Integer(148)), n_sm=148) == pytest.approx(2 / 3)
    assert _num(expected_wave_utilization(sp.Integer(10)), n_sm=148) == pytest.approx(2 / 3)
    assert _num(expected_wave_utilization(sp.Integer(148 * 100)), n_sm=148) == pytest.approx(100 / 100.5)


def test_dense_padding_rounds_tokens_up_to_the_tile():
    # 8192 x 8192 weights (N = 64 tiles of 128), 65 tokens -> 2 row tiles of 64 = 128 rows, 128 tiles, 1 wave
    w, k = 8192 * 8192, 8192
    got = _num(dense_issued_flops(sp.Integer(w), sp.Integer(65), k), n_sm=132, M_t=64, N_t=128)
    assert got == pytest.approx(2 * w * 128 / (128 / 132), rel=1e-12)
    # 64 tokens: 1 row tile, 64 tiles -> split-K in 2 -> 128 CTAs of 132
    got64 = _num(dense_issued_flops(sp.Integer(w), sp.Integer(64), k), n_sm=132, M_t=64, N_t=128)
    assert got64 == pytest.approx(2 * w * 64 / (128 / 132), rel=1e-12)


def test_grouped_padding_is_a_tile_per_expert_when_few_tokens_and_half_a_tile_when_many():
    w, k = 2048 * 7168 * 3, 7168                    # one DeepSeek expert (gate, up, down) on one GPU
    few = _num(grouped_issued_flops(sp.Integer(w), sp.Integer(40), sp.Integer(32), k), n_sm=132, M_t=64, N_t=128)
    tiles = 32 * np.ceil(w / k / 128)              # 32 experts x one row tile x 48 column tiles = 1536
    assert few == pytest.approx(2 * w * 32 * 64 * (tiles + 66) / tiles, rel=1e-12)
    many = _num(grouped_issued_flops(sp.Integer(w), sp.Integer(32 * 640), sp.Integer(32), k), n_sm=132, M_t=64,
                N_t=128)
    rows = 32 * 640 + 32 * 32
    tiles = rows / 64 * 48
    assert many == pytest.approx(2 * w * rows * (tiles + 66) / tiles, rel=1e-12)


def test_a_compute_bound_step_pays_a_whole_tile_for_one_token_past_the_boundary():
    """Llama-3.1-8B on one H100 at the speed-of-light profile, decode-only: GEMM time per step follows the
    64-row tiles, so 129 sequences cost the GEMMs of 192 rows (and the step time never falls with batch)."""
    su = Setup(catalog.hardware("h100-sxm"), catalog.model("llama-3.1-8b"), catalog.profile("speed-of-light"),
               weights="fp8", kv_cache="fp8")
    b = np.array([1024.0, 1025.0, 1088.0])
    df = evaluate(su, dict(batch=b, gpus=1.0, tp=1.0, ep=1.0, pp=1.0, spec_tokens=0.0, acc=1.0, isl=16.0, osl=16.0,
                           new=16.0, mix=0.0))
    ffn = df["t_ffn_ms"].to_numpy()
    assert ffn[1] > ffn[0] * 1.05              # 1025 tokens run 17 row tiles
    assert ffn[2] == pytest.approx(ffn[1], rel=1e-9)   # ... as do 1088
    assert np.all(np.diff(df["step_ms"].to_numpy()) >= 0)
