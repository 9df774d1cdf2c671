"""Decode and prefill attention at their own efficiencies, and the MLA decode kernels' row tiles (issue 41 item 1)."""

import pytest
import sympy as sp
from mechanisms_on import profile_file

from perfmodel import catalog
from perfmodel.kernels import mla as mla_kernels
from perfmodel.model import attention_family
from perfmodel.model.mla import MLA_ROW_TILE


def _mla_cost():
    m = catalog.model("deepseek-v3")
    name, a = next((n, a) for n, a in m.attention.items() if type(a).__name__ == "MLA")
    return attention_family(a, name), a.heads


def test_mla_decode_issues_whole_64_row_tiles():
    """By hand, DeepSeek-V3 (128 heads): TP8, one query token: 16 rows per rank in a 64-row tile, 4x the useful
    FLOPs; two tokens (one draft): 32 rows, 2x; attention-DP (TP1): 128 rows, 1x; TP16: 8 rows, 8x."""
    cost, heads = _mla_cost()
    assert heads == 128
    for q, tp, want in [(1, 8, 4.0), (2, 8, 2.0), (1, 1, 1.0), (4, 8, 1.0), (1, 16, 8.0), (3, 8, 64 / 48)]:
        assert float(cost.decode_row_padding(sp.Integer(q), sp.Integer(tp))) == pytest.approx(want)


def test_the_row_tile_is_the_one_the_kernel_tables_are_fitted_with():
    assert MLA_ROW_TILE == mla_kernels.HEAD_TILE


def test_gqa_decode_is_not_padded_here():
    m = catalog.model("llama-3.3-70b")
    name, a = next(iter(m.attention.items()))
    assert attention_family(a, name).decode_row_padding(sp.Integer(1), sp.Integer(8)) == 1


def _tpot(serving, folder, **profile):
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    sc = Scenario.model_validate({
        "hardware": "h200-sxm", "model": "deepseek-v3",
        "profile": profile_file(folder, "speed-of-light", "mla_decode_row_tiles"),
        "deployment": {"gpus": 8, "tp": 8, "ep": 8, "dp_attention": False, "weights": "fp8", "kv_cache": "fp8",
                       "batch": 64, "spec_tokens": 0, "serving": serving},
        "workload": {"isl": 8192, "osl": 1024, "prefix_hit": 0.0},
        "overrides": {"hardware": {}, "profile": profile}})
    row = api.predict(sc).iloc[0]
    return row


def test_decode_attention_efficiency_moves_decode_not_prefill(tmp_path):
    """Halving eff_attention_decode slows a decode-only step (DeepSeek-V3 TP8, 8k context: the padded MLA
    attention binds, with the mechanism mla_decode_row_tiles on); halving the prefill efficiency eff_attention
    leaves it unchanged."""
    base = _tpot("decode_only", tmp_path)["tpot_ms"]
    assert _tpot("decode_only", tmp_path, eff_attention_decode=0.5)["tpot_ms"] > 1.05 * base
    assert _tpot("decode_only", tmp_path, eff_attention=0.5)["tpot_ms"] == pytest.approx(base, rel=1e-12)


def test_prefill_attention_efficiency_moves_prefill_not_decode(tmp_path):
    base = _tpot("prefill_only", tmp_path)["input_tps_per_gpu"]
    assert _tpot("prefill_only", tmp_path, eff_attention=0.5)["input_tps_per_gpu"] < 0.95 * base
    assert _tpot("prefill_only", tmp_path, eff_attention_decode=0.5)["input_tps_per_gpu"] == \
        pytest.approx(base, rel=1e-12)


def test_row_tiles_switched_off_leave_the_useful_flops(tmp_path):
    """Without the mechanism the decode step is the unpadded one: the padded step (4x the MLA decode FLOPs at
    TP8, partly hidden behind the KV reads at batch 64) is slower."""
    from perfmodel import api
    from perfmodel.specs.deployment import Scenario
    padded = _tpot("decode_only", tmp_path)["tpot_ms"]
    sc = {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": profile_file(tmp_path, "speed-of-light"),
          "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64, "serving": "decode_only"},
          "workload": {"isl": 8192, "osl": 1024, "prefix_hit": 0.0}}
    off = api.predict(Scenario.model_validate(sc)).iloc[0]
    assert padded > 1.003 * off["tpot_ms"]
