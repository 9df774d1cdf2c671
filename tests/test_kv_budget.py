"""Hand check of the KV budget and the KV a running request holds, by engine policy (equations/memory.py)."""

import math

import numpy as np
import pytest

from perfmodel import catalog
from perfmodel.engine.evaluate import Setup
from perfmodel.serving.aggregated import evaluate


def _row(profile_overrides):
    s = Setup(catalog.hardware("b200"), catalog.model("llama-3.1-70b"), catalog.profile("vllm"), weights="fp8",
              kv_cache="fp8", profile_overrides={"workspace_gb": 8.0, "mem_fraction": 0.9, **profile_overrides})
    pts = dict(batch=np.array([1.0]), gpus=1.0, tp=1.0, ep=1.0, pp=1.0, spec_tokens=0.0, acc=1.0, isl=1024.0,
               osl=8192.0, new=1024.0, mix=1.0)
    return evaluate(s, pts).iloc[0]


def test_budget_of_all_hbm_and_paged_kv():
    hw = catalog.hardware("b200")
    cap = hw.value("hbm_visible_gib") * 2.0 ** 30   # what the CUDA runtime reports to the engine
    r = _row({"kv_budget_after_weights": 0.0, "kv_reserve_full_length": 0.0})
    per_token = 80 * 2 * 8 * 128 * 1.0            # llama-3.1-70b: 80 layers, K and V, 8 KV heads x 128, FP8
    assert r["kv_gb_per_seq_per_gpu"] * 1e9 == pytest.approx((1024 + 8192 / 2) * per_token, rel=1e-12)  # mean held
    budget = 0.9 * cap - 8e9 - r["weights_gb_per_gpu"] * 1e9
    assert r["max_batch"] == math.floor(budget / (r["kv_gb_per_seq_per_gpu"] * 1e9) + 1e-9)


def test_budget_of_free_hbm_and_reserved_kv():
    hw = catalog.hardware("b200")
    cap = hw.value("hbm_visible_gib") * 2.0 ** 30   # what the CUDA runtime reports to the engine
    r = _row({"kv_budget_after_weights": 1.0, "kv_reserve_full_length": 1.0})
    assert r["kv_gb_per_seq_per_gpu"] * 1e9 == pytest.approx((1024 + 8192) * 80 * 2 * 8 * 128, rel=1e-12)  # reserved
    budget = 0.9 * (cap - 8e9 - r["weights_gb_per_gpu"] * 1e9)
    assert r["max_batch"] == math.floor(budget / (r["kv_gb_per_seq_per_gpu"] * 1e9) + 1e-9)
