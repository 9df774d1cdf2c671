"""Models added for the inferencex-silicon records (qwen3-32b, minimax-m2.5, kimi-k2.5, qwen3.5-397b-a17b,
deepseek-v3.1): each loads, and its derived total / active parameters match the published figures within the
catalog tolerance (3%, tests/test_model_catalog.py). The expected figures are the ones in each file's
`published` block, restated here so a silent edit of the YAML cannot pass."""

import pytest

from perfmodel import catalog
from perfmodel.arch import kv_bytes_per_token, kv_fixed_bytes_per_sequence, model_summary

TOL = 0.03  # as test_params_within_3pct_of_published

# id: (published total B, published active B or None, bf16 KV bytes per token)
ADDED = {
    "qwen3-32b": (32.8, None, 64 * 2 * 8 * 128 * 2),
    "minimax-m2.5": (229.9, None, 62 * 2 * 8 * 128 * 2),
    "kimi-k2.5": (1000, 32, 61 * (512 + 64) * 2),
    "qwen3.5-397b-a17b": (397, 17, 15 * 2 * 2 * 256 * 2),
}


@pytest.mark.parametrize("mid", sorted(ADDED))
def test_added_model_loads_with_sources(mid):
    m = catalog.model(mid)
    assert m.id == mid and m.num_layers > 0
    assert m.sources and any("https://" in s for s in m.sources)
    assert m.published.total_params_b is not None and m.published.total_params_b.source.startswith("https://")


@pytest.mark.parametrize("mid", sorted(ADDED))
def test_added_model_params_match_published(mid):
    total_b, active_b, _ = ADDED[mid]
    m = catalog.model(mid)
    s = model_summary(m)
    assert m.published.total_params_b.value == total_b
    assert abs(s["total_params"] / (total_b * 1e9) - 1) <= TOL, f"{mid}: total {s['total_params'] / 1e9:.2f}B"
    if active_b is None:
        assert m.published.active_params_b is None
    else:
        assert m.published.active_params_b.value == active_b
        assert abs(s["active_params_per_token"] / (active_b * 1e9) - 1) <= TOL, \
            f"{mid}: active {s['active_params_per_token'] / 1e9:.2f}B"


@pytest.mark.parametrize("mid", sorted(ADDED))
def test_added_model_kv_bytes(mid):
    m = catalog.model(mid)
    assert kv_bytes_per_token(m, "bf16") == ADDED[mid][2] == m.published.kv_bytes_per_token_bf16.value


def test_layer_layouts():
    assert model_summary(catalog.model("qwen3-32b"))["layers_by_kind"] == {"gqa+dense": 64}
    assert model_summary(catalog.model("minimax-m2.5"))["layers_by_kind"] == {"gqa+moe": 62}
    q = catalog.model("qwen3.5-397b-a17b")
    assert model_summary(q)["layers_by_kind"] == {"gdn+moe": 45, "gqa+moe": 15}
    # 45 GDN layers: 64 x 128 x 128 fp32 state + conv (2 x 16 x 128 + 64 x 128) x 3 bf16
    assert kv_fixed_bytes_per_sequence(q, "bf16") == 45 * (64 * 128 * 128 * 4 + (2 * 16 * 128 + 64 * 128) * 3 * 2)


def test_kimi_k25_is_the_kimi_k2_architecture():
    a, b = catalog.model("kimi-k2.5"), catalog.model("kimi-k2")
    assert (a.attention, a.ffn, a.layers, a.hidden_size, a.vocab_size) == \
        (b.attention, b.ffn, b.layers, b.hidden_size, b.vocab_size)
    assert a.native_weights == "int4+bf16" and a.max_context == 262144


def test_deepseek_v31_is_an_alias_of_v3():
    assert catalog.model("deepseek-v3.1").id == "deepseek-v3"
    assert model_summary(catalog.model("deepseek-v3.1")) == model_summary(catalog.model("deepseek-v3"))


def test_measured_records_now_resolve():
    """Every model id in the inferencex-silicon records loads from the catalog, wherever the file is shipped
    under data/ (skipped until it is)."""
    import csv
    from pathlib import Path

    paths = sorted((Path(__file__).resolve().parents[1] / "data").rglob("inferencex-silicon.csv"))
    if not paths:
        pytest.skip("data/**/inferencex-silicon.csv not shipped yet")
    for path in paths:
        with path.open() as f:
            ids = {row["model"] for row in csv.DictReader(f)}
        for mid in sorted(ids):
            catalog.model(mid)
