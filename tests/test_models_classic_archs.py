"""Catalog entries for the GQA / MoE / hybrid architectures: layer layouts, KV bytes and parameter
breakdowns against the sourced figures in ../shared/reference/models.md and the models' own reports."""

import pytest

from perfmodel import catalog
from perfmodel.arch import kv_bytes_per_token, kv_fixed_bytes_per_sequence, model_summary, param_counts
from perfmodel.arch.params import attention_params, ffn_params

MINE = ["qwen3-235b-a22b", "qwen3-next-80b-a3b", "gpt-oss-120b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-405b",
        "llama-3.3-70b", "llama-4-maverick", "mixtral-8x7b"]


def layers_by(mid: str) -> dict:
    m = catalog.model(mid)
    out: dict = {}
    for g in m.layers:
        key = (m.attention[g.attention].kind, m.attention[g.attention].__dict__.get("window"), m.ffn[g.ffn].kind)
        out[key] = out.get(key, 0) + g.count
    return out


@pytest.mark.parametrize("mid", MINE)
def test_loads_with_sources_and_published_total(mid):
    m = catalog.model(mid)
    assert m.sources and all("http" in s for s in m.sources)
    assert m.published.total_params_b is not None and m.published.total_params_b.source.startswith("https://")
    assert m.published.kv_bytes_per_token_bf16 is not None


# (id, bf16 KV bytes per token, fixed bf16 bytes per sequence), per the formulas in models.md
KV = [
    ("qwen3-235b-a22b", 94 * 2 * 4 * 128 * 2, 0),
    ("qwen3-next-80b-a3b", 12 * 2 * 2 * 256 * 2, 36 * (32 * 128 * 128 * 4 + (2 * 16 * 128 + 32 * 128) * 3 * 2)),
    ("gpt-oss-120b", 18 * 2048, 18 * 128 * 2048),
    ("llama-2-70b", 327680, 0),
    ("llama-3.1-8b", 32 * 2 * 8 * 128 * 2, 0),
    ("llama-3.1-405b", 126 * 2 * 8 * 128 * 2, 0),
    ("llama-3.3-70b", 327680, 0),
    ("llama-4-maverick", 12 * 2 * 8 * 128 * 2, 36 * 8192 * 2 * 8 * 128 * 2),
    ("mixtral-8x7b", 32 * 2 * 8 * 128 * 2, 0),
]


@pytest.mark.parametrize("mid,per_token,fixed", KV, ids=[k[0] for k in KV])
def test_kv_bytes(mid, per_token, fixed):
    m = catalog.model(mid)
    assert kv_bytes_per_token(m, "bf16") == per_token
    assert kv_bytes_per_token(m, "fp8") == per_token / 2
    assert kv_fixed_bytes_per_sequence(m, "bf16") == fixed


def test_qwen3_next_linear_state_is_73_7_mib():
    assert kv_fixed_bytes_per_sequence(catalog.model("qwen3-next-80b-a3b"), "bf16") / 2**20 == pytest.approx(73.7, abs=0.05)


def test_layer_layouts():
    assert layers_by("qwen3-next-80b-a3b") == {("linear", None, "moe"): 36, ("gqa", None, "moe"): 12}
    assert layers_by("gpt-oss-120b") == {("gqa", 128, "moe"): 18, ("gqa", None, "moe"): 18}
    assert layers_by("llama-4-maverick") == {("gqa", 8192, "dense"): 24, ("gqa", 8192, "moe"): 12,
                                             ("gqa", None, "moe"): 12}
    assert layers_by("qwen3-235b-a22b") == {("gqa", None, "moe"): 94}
    assert catalog.model("llama-3.1-405b").num_layers == 126
    assert all(a.sinks for a in catalog.model("gpt-oss-120b").attention.values())
    mav = catalog.model("llama-4-maverick").ffn["moe"]
    assert (mav.experts, mav.top_k, mav.shared_experts, mav.expert_intermediate) == (128, 1, 1, 8192)
    qn = catalog.model("qwen3-next-80b-a3b").ffn["moe"]
    assert (qn.experts, qn.top_k, qn.shared_experts) == (512, 10, 1)


def test_gpt_oss_matches_the_model_card_breakdown():
    """gpt-oss model card (arXiv 2508.10925): 116.83B total = MLP 114.71B + attention 0.96B + embed/unembed 1.16B;
    5.13B active counts the unembedding but not the embedding. Biases explain the small MLP gap."""
    m = catalog.model("gpt-oss-120b")
    p = param_counts(m)
    assert p.attention / 1e9 == pytest.approx(0.96, abs=0.005)
    assert p.ffn_total / 1e9 == pytest.approx(114.71, rel=0.001)
    assert (p.embedding + p.lm_head) / 1e9 == pytest.approx(1.16, abs=0.005)
    assert (p.active - p.embedding) / 1e9 == pytest.approx(5.13, rel=0.01)
    assert p.active / 1e9 == pytest.approx(5.71, abs=0.01)


def test_qwen3_next_against_safetensors_count():
    """79,674,391,296 parameters from the Qwen3-(Coder-)Next safetensors headers (stored id:70181782850);
    the derived count leaves out norms, the attention output gate (~0.1B) and the shared-expert gate."""
    p = param_counts(catalog.model("qwen3-next-80b-a3b"))
    assert p.total == pytest.approx(79_674_391_296, rel=0.002)
    gate = 12 * 2048 * 16 * 256  # q_proj doubled on the 12 gated-attention layers
    assert p.total + gate == pytest.approx(79_674_391_296, rel=0.0005)
    # "A3B": active without embedding and head is 3.15B (a rounded label, not a count)
    assert (p.active - p.embedding - p.lm_head) / 1e9 == pytest.approx(3.0, rel=0.06)


def test_llama_counts_equal_safetensors_minus_norms():
    """Safetensors parameter counts (Llama 3.1 8B: 8,030,261,248; 70B: 70,553,706,496; stored id:68624493177)
    equal the derived counts plus the RMSNorm weights (2 per layer + the final norm, hidden each)."""
    for mid, n in (("llama-3.1-8b", 8_030_261_248), ("llama-3.1-70b", 70_553_706_496), ("llama-3.3-70b", 70_553_706_496)):
        m = catalog.model(mid)
        norms = (2 * m.num_layers + 1) * m.hidden_size
        assert param_counts(m).total + norms == n, mid


def test_mixtral_and_maverick_active():
    mx = model_summary(catalog.model("mixtral-8x7b"))
    assert mx["total_params"] / 1e9 == pytest.approx(46.70, abs=0.01)
    assert mx["active_params_per_token"] / 1e9 == pytest.approx(12.88, abs=0.01)
    m = catalog.model("llama-4-maverick")
    p = param_counts(m)
    # 24 dense layers of 3 x 5120 x 16384 and 24 MoE layers of 129 experts (128 routed + 1 shared)
    ft, fa = ffn_params(m.ffn["moe"], 5120)
    assert ft == 129 * 3 * 5120 * 8192 + 5120 * 128 and fa == 2 * 3 * 5120 * 8192 + 5120 * 128
    assert p.total / 1e9 == pytest.approx(400, rel=0.01) and p.active / 1e9 == pytest.approx(17, rel=0.02)
    assert attention_params(m.attention["chunked"], 5120) == attention_params(m.attention["global"], 5120)


def test_dense_models_active_equals_total():
    for mid in ("llama-2-70b", "llama-3.1-8b", "llama-3.1-405b", "llama-3.3-70b"):
        s = model_summary(catalog.model(mid))
        assert s["active_params_per_token"] == s["total_params"]
