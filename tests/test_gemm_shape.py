"""Hand checks of the GEMM-shape terms (equations/gemm_shape.py): tile padding and SM waves."""

import numpy as np
import pytest
import sympy as sp

from perfmodel import catalog
from perfmodel.engine.compiled import NUMPY_MODULES
from perfmodel.engine.evaluate import Setup
from perfmodel.equations.gemm_shape import (
    dense_issued_flops,
    expected_wave_utilization,
    grouped_issued_flops,
    wave_utilization,
)
from perfmodel.equations.symbols import S
from perfmodel.serving.aggregated import evaluate


def _num(expr, **vals):
    subs = {S[k]: v for k, v in vals.items()}
    return float(sp.lambdify([], expr.subs(subs), modules=NUMPY_MODULES)())


@pytest.mark.parametrize("tiles,expected", [
    (132, 1.0),                 # one full wave
    (133, 133 / 264),           # one tile spills into a second wave
    (264, 1.0),
    (300, 300 / 396),           # 3 waves, the last 36/132 full
    (8, 1.0),                   # below one wave: split-K / stream-K spread the reduction over the idle SMs
    (100, 1.0),
])
def test_wave_utilization_on_h100(tiles, expected):
    assert _num(wave_utilization(sp.Integer(tiles)), n_sm=132) == pytest.approx(expected, rel=1e-12)


def test_expected_wave_utilization_is_two_thirds_at_one_wave_and_tends_to_one():
    assert _num(expected_wave_utilization(sp.Integer(148)), n_sm=148) == pytest.approx(2 / 3)
    assert _num(expected_wave_utilization(sp.Integer(10)), n_sm=148) == pytest.approx(10 / 84)
    assert _num(expected_wave_utilization(sp.Integer(148 * 100)), n_sm=148) == pytest.approx(100 / 100.5)


def test_dense_rows_are_whole_tiles_plus_the_remainder_in_the_smallest_tile_that_holds_it():
    from perfmodel.equations.gemm_shape import padded_rows
    rows = lambda t: _num(padded_rows(sp.Integer(t)), M_t=128, m_min=16)  # noqa: E731
    assert [rows(t) for t in (1, 16, 17, 128, 129, 200, 256, 257)] == [16, 16, 17, 128, 144, 200, 256, 272]


def test_dense_issued_work_counts_padding_and_waves():
    # 8192 x 8192 weights: N = 64 column tiles of 128
    w, k = 8192 * 8192, 8192
    f = lambda t: _num(dense_issued_flops(sp.Integer(w), sp.Integer(t), k), n_sm=132, M_t=128, m_min=16,  # noqa: E731
                       N_t=128)
    assert f(65) == pytest.approx(2 * w * 65, rel=1e-12)        # 64 tiles < 132 SMs: no padding, u = 1
    assert f(8) == pytest.approx(2 * w * 16, rel=1e-12)         # the smallest tile, 16 rows
    # 300 tokens: 2 x 128 + 44 rows; 3 x 64 = 192 tiles -> 2 waves, u = 192 / 264
    assert f(300) == pytest.approx(2 * w * 300 / (192 / 264), rel=1e-12)


def test_grouped_padding_is_a_small_tile_per_expert_when_few_tokens_and_half_a_tile_when_many():
    w, k = 2048 * 7168 * 3, 7168                    # one DeepSeek expert (gate, up, down) on one GPU
    g = lambda a, d: _num(grouped_issued_flops(sp.Integer(w), sp.Integer(a), sp.Integer(d), k),  # noqa: E731
                          n_sm=132, M_t=128, m_min=16, N_t=128)
    # 40 pairs over 32 experts: 16-row tiles, one per expert = 512 rows, 32 x 48 = 1536 tiles
    assert g(40, 32) == pytest.approx(2 * w * 512 * (1536 + 66) / 1536, rel=1e-12)
    # 640 tokens per expert: 128-row tiles, half a tile of padding each: 20480 + 32 x 64 rows
    rows = 32 * 640 + 32 * 64
    tiles = rows / 128 * 48
    assert g(32 * 640, 32) == pytest.approx(2 * w * rows * (tiles + 66) / tiles, rel=1e-12)


def test_a_compute_bound_ffn_follows_rows_and_waves():
    """Llama-3.1-70B on 8 H100 (TP8) at the speed-of-light profile, decode-only: the FFN is compute-bound at these
    batches, so its time scales with the issued work. FFN N = 3 x 28672 / 8 = 10752 columns = 84 tiles of 128:
    744 tokens = 6 row tiles (5 x 128 + 104) -> 504 tiles, 4 waves (u = 504/528);
    920 tokens = 8 row tiles (7 x 128 + 24)  -> 672 tiles, 6 waves (u = 672/792): a sawtooth, as on silicon."""
    su = Setup(catalog.hardware("h100-sxm"), catalog.model("llama-3.1-70b"), catalog.profile("speed-of-light"),
               weights="fp8", kv_cache="fp8")
    b = np.array([744.0, 920.0])
    df = evaluate(su, dict(batch=b, gpus=8.0, tp=8.0, ep=1.0, pp=1.0, spec_tokens=0.0, acc=1.0, isl=16.0, osl=16.0,
                           new=16.0, mix=0.0))
    ffn = df["t_ffn_ms"].to_numpy()
    assert ffn[1] / ffn[0] == pytest.approx((920 / (672 / 792)) / (744 / (504 / 528)), rel=1e-9)
