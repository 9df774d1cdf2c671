"""Frontier architectures (DeepSeek-V3.2/V4/V4.1, Kimi K2/K3, GLM-4.5/5/5.2): layer schedules, KV bytes and
parameter counts against the configs, checkpoint inventories and check figures in
../shared/reference/models.md. Each expected number below names where it comes from."""

import re

import pytest

from perfmodel import catalog
from perfmodel.arch import kv_bytes_per_token, kv_fixed_bytes_per_sequence, model_summary, param_counts
from perfmodel.arch.params import attention_params, ffn_params

MIB, GIB = 2**20, 2**30


# ------------------------------------------------------------------ helpers
def where_to_layers(where: str) -> set[int]:
    """Expand a ``where`` string: items 'a-b', 'n', 'even a-b', 'odd a-b', 'a-b step k', comma-separated;
    parenthetical comments are ignored."""
    out: set[int] = set()
    for item in re.sub(r"\([^)]*\)", "", where).split(","):
        item = item.strip()
        if m := re.fullmatch(r"(even|odd) (\d+)-(\d+)", item):
            lo, hi = int(m[2]), int(m[3])
            par = 0 if m[1] == "even" else 1
            out |= {i for i in range(lo, hi + 1) if i % 2 == par}
        elif m := re.fullmatch(r"(\d+)-(\d+) step (\d+)", item):
            out |= set(range(int(m[1]), int(m[2]) + 1, int(m[3])))
        elif m := re.fullmatch(r"(\d+)-(\d+)", item):
            out |= set(range(int(m[1]), int(m[2]) + 1))
        elif re.fullmatch(r"\d+", item):
            out.add(int(item))
        else:
            raise ValueError(f"cannot parse where item {item!r} in {where!r}")
    return out


def per_layer(mid: str) -> list[tuple]:
    """(attention spec, ffn spec) for each layer index, from the groups' ``where`` strings."""
    m = catalog.model(mid)
    slots: dict[int, tuple] = {}
    for g in m.layers:
        idx = where_to_layers(g.where)
        assert len(idx) == g.count, f"{mid}: where {g.where!r} names {len(idx)} layers, count is {g.count}"
        assert not idx & slots.keys(), f"{mid}: layers {sorted(idx & slots.keys())} are in two groups"
        slots.update({i: (m.attention[g.attention], m.ffn[g.ffn]) for i in idx})
    assert sorted(slots) == list(range(m.num_layers)), f"{mid}: groups do not cover 0..{m.num_layers - 1}"
    return [slots[i] for i in range(m.num_layers)]


def test_where_parser():
    assert where_to_layers("even 4-8, odd 3-5, 10 (x, y)") == {3, 4, 5, 6, 8, 10}
    assert where_to_layers("3-11 step 4, 0-1") == {0, 1, 3, 7, 11}
    with pytest.raises(ValueError):
        where_to_layers("every other layer")


# ------------------------------------------------------------------ DeepSeek-V4 layer patterns
# compress_ratios from the configs (id:59368543979 verbatim; Pro id:60699344711), main layers only (the last
# entry belongs to the MTP block).
FLASH_RATIOS = [0, 0] + [4, 128] * 20 + [4]
PRO_RATIOS = [128, 128] + [4, 128] * 29 + [4]


@pytest.mark.parametrize("mid,ratios,top_k,heads,o_groups", [
    ("deepseek-v4-flash", FLASH_RATIOS, 512, 64, 8),
    ("deepseek-v4-pro", PRO_RATIOS, 1024, 128, 16),
])
def test_dsv4_layer_pattern(mid, ratios, top_k, heads, o_groups):
    layers = per_layer(mid)
    assert len(layers) == len(ratios)
    for i, (a, f) in enumerate(layers):
        assert a.kind == "dsv4" and a.window == 128 and a.head_dim == 512 and a.rope_dim == 64, i
        assert (a.compress_ratio or 0) == ratios[i], f"layer {i}"
        assert a.heads == heads and a.o_groups == o_groups and a.o_lora_rank == 1024
        if ratios[i] == 4:  # CSA: own indexer 64 x 128
            assert a.indexer is not None and not a.indexer.shared
            assert (a.indexer.heads, a.indexer.head_dim, a.indexer.top_k) == (64, 128, top_k)
        else:
            assert a.indexer is None, f"layer {i}: indexer only on CSA layers"
        assert f.kind == "moe" and f.router == ("hash" if i < 3 else "topk"), f"layer {i}"  # num_hash_layers 3
    assert catalog.model(mid).residual.kind == "mhc" and catalog.model(mid).residual.streams == 4


def test_dsv4_counts_from_models_md():
    flash = model_summary(catalog.model("deepseek-v4-flash"))["layers_by_kind"]
    assert flash == {"swa+moe": 2, "csa+moe": 21, "hca+moe": 20}
    pro = model_summary(catalog.model("deepseek-v4-pro"))["layers_by_kind"]
    assert pro == {"csa+moe": 30, "hca+moe": 31}


# ------------------------------------------------------------------ KV bytes
def test_v4_kv_goldens():
    flash, pro = catalog.model("deepseek-v4-flash"), catalog.model("deepseek-v4-pro")
    assert kv_bytes_per_token(flash, "bf16") == 6880  # models.md
    assert kv_bytes_per_token(pro, "bf16") == 9848    # models.md
    assert kv_fixed_bytes_per_sequence(flash, "bf16") == 43 * 128 * 1024  # SWA ring on every layer
    # independent KV calculator (id:68439258833): Flash at 1M context = 6.723999 GiB incl. the rings
    at_1m = (kv_bytes_per_token(flash, "bf16") * 2**20 + kv_fixed_bytes_per_sequence(flash, "bf16")) / GIB
    assert at_1m == pytest.approx(6.723999, abs=1e-6)
    # FP8 entry: 448 fp8 + 64 bf16 RoPE + 8 B scales = 584 B (models.md); index key 128 + 4 B
    assert kv_bytes_per_token(flash, "fp8") == pytest.approx(21 * (584 + 132) / 4 + 20 * 584 / 128)


def test_v32_fp8_kv():
    m = catalog.model("deepseek-v3.2")
    assert kv_bytes_per_token(m, "fp8") == 48068  # models.md: 788 B/layer x 61
    assert kv_bytes_per_token(m, "fp8") / m.num_layers == 788
    assert kv_bytes_per_token(m, "bf16") == 61 * (1152 + 256)


def test_glm_kv():
    assert kv_bytes_per_token(catalog.model("glm-5"), "bf16") == 78 * (1152 + 256)
    assert kv_bytes_per_token(catalog.model("glm-5"), "fp8") == 78 * 788
    # IndexShare: the 57 shared layers store no index keys
    assert kv_bytes_per_token(catalog.model("glm-5.2"), "bf16") == 21 * 1408 + 57 * 1152
    assert kv_bytes_per_token(catalog.model("glm-4.5"), "bf16") == 2 * 8 * 128 * 2 * 92


def test_kimi_kv():
    k3 = model_summary(catalog.model("kimi-k3"))
    # 69 KDA layers x (96 x 128 x 128 x 4 B fp32 state + 3 x (3 x 12288) x 2 B conv) ~ 429 MiB (models.md)
    for fmt, v in k3["kv_fixed_bytes_per_sequence"].items():
        assert v == 69 * (96 * 128 * 128 * 4 + 3 * 3 * 12288 * 2), fmt
        assert v / MIB == pytest.approx(429, abs=0.5)
    assert k3["kv_bytes_per_token"]["bf16"] == 24 * 1152  # only the 24 MLA layers grow
    assert kv_bytes_per_token(catalog.model("kimi-k2"), "bf16") == 70272


def test_v41_shared_kv():
    m = catalog.model("deepseek-v4.1-flash")
    layers = per_layer("deepseek-v4.1-flash")
    owners = [i for i, (a, _) in enumerate(layers) if a.compress_ratio and not a.indexer.shared]
    assert owners == [2, 8, 14, 20]  # kv_source_layer_ids
    # compress_ratios [0, 0, 2 x 18, 1 x 20] (id:68503033665)
    assert [a.compress_ratio or 0 for a, _ in layers] == [0, 0] + [2] * 18 + [1] * 20
    # BF16: (1024 + 256) B per entry, owners at ratio 2, 2, 2, 1 -> 2.5 entries per token;
    # id:69220586821 pins page_bytes = 16 x (3/2 + 1) x (512 + 128) x 2 for a 16-token page
    assert kv_bytes_per_token(m, "bf16") == 16 * (3 / 2 + 1) * (512 + 128) * 2 / 16 == 3200
    assert kv_fixed_bytes_per_sequence(m, "bf16") == 40 * 128 * 1024


# ------------------------------------------------------------------ GLM / Kimi schedules
def test_glm52_indexshare():
    layers = per_layer("glm-5.2")
    full = {i for i, (a, _) in enumerate(layers) if not a.indexer.shared}
    # indexer_types: full x 3, then (shared x 3, full) repeated (index_topk_freq 4, index_skip_topk_offset 3)
    assert full == {0, 1, 2} | {i for i in range(3, 78) if (i - 3) % 4 == 3}
    assert len(full) == 21 and len(layers) - len(full) == 57
    for a, _ in layers:
        assert (a.indexer.heads, a.indexer.head_dim, a.indexer.top_k) == (32, 128, 2048)
    assert catalog.model("glm-5.2").max_context == 1048576


def test_glm5_dsa():
    for a, f in per_layer("glm-5"):
        assert a.kind == "mla" and not a.indexer.shared
        assert (a.indexer.heads, a.indexer.head_dim, a.indexer.top_k) == (32, 128, 2048)
        assert (a.q_lora_rank, a.kv_lora_rank, a.qk_nope_dim, a.qk_rope_dim, a.v_head_dim) == (2048, 512, 192, 64, 256)
    kinds = [f.kind for _, f in per_layer("glm-5")]
    assert kinds == ["dense"] * 3 + ["moe"] * 75


def test_kimi_k3_schedule():
    layers = per_layer("kimi-k3")
    # linear_attn_config.full_attn_layers (1-based, id:62826164383); the weight inventory names 0-based 3,7,...,91,92
    full_attn_1based = list(range(4, 93, 4)) + [93]
    mla = [i for i, (a, _) in enumerate(layers) if a.kind == "mla"]
    assert mla == [x - 1 for x in full_attn_1based] and len(mla) == 24
    assert sum(a.kind == "linear" and a.variant == "kda" for a, _ in layers) == 69
    for a, f in layers:
        if a.kind == "mla":
            assert a.gated and a.heads == 96 and a.indexer is None
        else:
            assert (a.k_heads, a.v_heads, a.head_k_dim, a.head_v_dim, a.conv_kernel) == (96, 96, 128, 128, 4)
    first_ffn = layers[0][1]
    assert first_ffn.kind == "dense" and first_ffn.intermediate == 33792
    for _, f in layers[1:]:
        assert (f.experts, f.top_k, f.shared_experts, f.expert_intermediate, f.latent_dim) == (896, 16, 2, 3072, 3584)


def test_residuals():
    for mid in ("deepseek-v4-flash", "deepseek-v4-pro", "deepseek-v4.1-flash"):
        r = catalog.model(mid).residual
        assert (r.kind, r.streams) == ("mhc", 4), mid
    for mid in ("deepseek-v3.2", "kimi-k2", "kimi-k3", "glm-4.5", "glm-5", "glm-5.2"):
        assert catalog.model(mid).residual.kind == "standard", mid


# ------------------------------------------------------------------ parameters vs checkpoint shapes
def test_dsv4_attention_params_match_flash_tensor_shapes():
    """Shapes from the Flash safetensors header and inference/model.py (id:59368543979, id:52445247382)."""
    m = catalog.model("deepseek-v4-flash")
    h = 4096
    base = 1024 * 4096 + 32768 * 1024 + 512 * 4096 + 8192 * 4096 + 4096 * 8192  # wq_a wq_b wkv wo_a wo_b
    csa_comp = 2 * (2 * 512) * h                                   # wkv, wgate: h -> 2 x 512 (overlap)
    csa_ix = 64 * 128 * 1024 + 64 * h + 2 * (2 * 128) * h         # wq_b, weights_proj, its compressor
    assert attention_params(m.attention["swa"], h) == base
    assert attention_params(m.attention["csa"], h) == base + csa_comp + csa_ix
    assert attention_params(m.attention["hca"], h) == base + 2 * 512 * h
    # hash-routed layers keep gate.weight [256, 4096] (the expert ids come from tid2eid)
    assert ffn_params(m.ffn["moe_hash"], h) == ffn_params(m.ffn["moe"], h)
    p = param_counts(m)
    assert p.residual == 43 * 2 * 24 * (4 * h) + 4 * (4 * h)     # hc_{attn,ffn}_fn [24, 16384]; hc_head_fn


def test_kimi_k3_params_match_inventory():
    """Shapes and the stored element count from the K3 weight inventory (id:62826164383)."""
    m = catalog.model("kimi-k3")
    h = 7168
    mla = 1536 * h + 18432 * 1536 + 576 * h + 24576 * 512 + 12288 * h + h * 12288  # q_a q_b kv_a kv_b g o
    assert attention_params(m.attention["mla_gated"], h) == mla
    total, active = ffn_params(m.ffn["latent_moe"], h)
    expert = 3 * 3072 * 3584
    always = 3 * 6144 * h + 896 * h + 2 * 3584 * h                  # shared (fused 2 x 3072), gate, latent up/down
    assert (total, active) == (896 * expert + always, 16 * expert + always)
    # 1,503,647,073,024 stored elements with MXFP4 experts packed 2 per byte + uint8 scales; unpack, drop the
    # vision tower and projector: 2,779,484,478,208. Derived misses only K3's full-rank KDA gate (~0.2%).
    assert model_summary(m)["total_params"] / 2_779_484_478_208 == pytest.approx(1, abs=0.005)


# ------------------------------------------------------------------ published figures kept in notes
@pytest.mark.parametrize("mid,published_b", [
    ("deepseek-v4-flash", 13),   # HF model card / antirez ds4 MODEL_CARD: 13B activated
    ("glm-4.5", 32),             # zai-org/GLM-4.5 README: 32B active
    ("glm-5", 40),               # zai-org/GLM-5 README: 40B active
    ("deepseek-v4.1-flash", 16),  # 16B activated per decode token (id:68836250416)
])
def test_active_without_input_embedding_matches_published(mid, published_b):
    """These publishers' active counts match only without the input embedding (a gather); see the notes."""
    p = param_counts(catalog.model(mid))
    assert abs(p.active_excl_embedding / (published_b * 1e9) - 1) <= 0.03


def test_v41_engram_and_dspark():
    m = catalog.model("deepseek-v4.1-flash")
    assert m.confidence == "low" and m.confidence_note
    # engram_num_embeddings [384006168, 384016682] x engram_head_dim 256
    assert m.engram.table_params_b == pytest.approx((384006168 + 384016682) * 256 / 1e9, abs=0.01)
    assert m.engram.layers == 2 and m.engram.lookups_per_token == (4 - 1) * 8
    assert m.mtp.layers == 3 and m.mtp.draft_block == 5
    s = model_summary(m)
    assert s["engram_params"] == pytest.approx(196.61e9, rel=1e-4)
    assert s["total_params"] == pytest.approx(552e9, rel=0.03)  # backbone, Engram excluded
