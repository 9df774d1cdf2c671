"""Hand-checked costs of the operator families added for this autumn's models (issue 55): the GQA output gate and
block indexer (MiniMax-M3 MSA), grouped latent attention with and without a sliding window (Motif-3 GDLA), the mHC
residual family, and IndexShare (a DSA layer reusing another layer's selection). Every expected figure is worked
out by hand in the comment beside it, on the published dimensions of the model that uses the mechanism."""

from __future__ import annotations

import pytest
import sympy as sp

from perfmodel.model import attention_family
from perfmodel.model.residual import ResidualFamily
from perfmodel.specs.model import GQA, MLA, BlockIndexer, GroupedLatentAttention, Indexer, Residual

M3 = GQA(heads=64, kv_heads=4, head_dim=128,
         block_indexer=BlockIndexer(heads=4, head_dim=128, block_size=128, top_k_blocks=16))
MOTIF = dict(heads=80, groups=16, noise_heads_per_group=1, q_lora_rank=1024, kv_lora_rank=512, qk_nope_dim=128,
             qk_rope_dim=64, v_head_dim=128, output_gate=True, head_lambda=True)


def value(expr, A, E, I=0):  # noqa: E741 - the notation's name
    """A family's sympy term with its byte symbols bound."""
    return float(sp.sympify(expr).subs({A.E: E, A.I: I}))


def test_gqa_output_gate_adds_one_h_by_heads_projection():
    # h 8, H 2, n_kv 1, d 4: q 8*2*4 = 64, k+v 2*8*1*4 = 64, o 64, gate 64
    plain = attention_family(GQA(heads=2, kv_heads=1, head_dim=4))
    gated = attention_family(GQA(heads=2, kv_heads=1, head_dim=4, output_gate=True))
    assert (plain.params(8), gated.params(8)) == (192, 256)
    assert gated.kv_per_token("bf16") == plain.kv_per_token("bf16") == 2 * 1 * 4 * 2


def test_block_indexer_minimax_m3():
    A = attention_family(M3, "msa")
    # q, o 6144*64*128 each = 50,331,648; k, v 2*6144*4*128 = 6,291,456; index q 6144*4*128 = 3,145,728 and
    # index k 6144*128 = 786,432
    assert A.params(6144) == 2 * 50_331_648 + 6_291_456 + 3_145_728 + 786_432 == 110_886_912
    assert A.label == "msa" and A.kernels == 7
    # KV per token: K and V 2*4*128*2 = 2048 B bf16 plus one index key 128*2 = 256 B; fp8 1024 + (128 + 4)
    assert A.kv_per_token("bf16") == 2304 and A.kv_per_token("fp8") == 1024 + 132
    assert A.kv_fixed("bf16") == 0
    L = 100_000
    # keys attended: 16 blocks of 128 = 2048 (L above it); 4 H d per key = 4*64*128*2048
    assert value(A.core_flops(L, "decode"), A, 2048, 256) == 67_108_864
    assert value(A.core_flops(1000, "decode"), A, 2048, 256) == 4 * 64 * 128 * 1000
    # the indexer scores every key: 2 H_i d_i L = 2*4*128*100,000
    assert value(A.index_flops(L), A, 2048, 256) == 102_400_000
    # split KV read 2048 keys x 2048 B; every rank reads all L index keys: 100,000 x 256
    assert value(A.kv_read(L), A, 2048, 256) == 4_194_304
    assert value(A.replicated_read(L), A, 2048, 256) == 25_600_000
    # stored at tp 8: KV heads split min(8, 4) = 4 ways (100,000 x 2048 / 4) + index keys in full (100,000 x 256)
    assert value(A.stored_per_rank(L, 8), A, 2048, 256) == 51_200_000 + 25_600_000
    assert value(A.kv_write(), A, 2048, 256) == 2048 and value(A.replicated_write(), A, 2048, 256) == 256


def test_block_indexer_shared_layer_has_no_index_cost():
    shared = GQA(heads=64, kv_heads=4, head_dim=128, block_indexer=BlockIndexer(
        heads=4, head_dim=128, block_size=128, top_k_blocks=16, shared=True))
    A = attention_family(shared, "s")
    assert A.params(6144) == 106_954_752 and A.kv_per_token("bf16") == 2048 and A.kernels == 4
    assert A.index_flops(10_000) == 0 and A.replicated_read(10_000) == 0
    # the keys read stay capped by the reused selection
    assert value(A.kv_read(10_000), A, 2048) == 2048 * 2048


def test_window_and_block_indexer_are_exclusive():
    with pytest.raises(ValueError, match="window and block_indexer"):
        GQA(heads=8, kv_heads=1, head_dim=64, window=128,
            block_indexer=BlockIndexer(heads=1, head_dim=64, block_size=64, top_k_blocks=4))


def test_other_kinds_hold_nothing_replicated():
    for a in (GQA(heads=8, kv_heads=2, head_dim=64), GQA(heads=8, kv_heads=2, head_dim=64, window=512),
              GroupedLatentAttention(**MOTIF)):
        A = attention_family(a, "x")
        assert A.replicated_read(1000) == A.replicated_write() == A.replicated_stored(1000) == 0


def test_grouped_latent_attention_params_match_the_motif3_port_shapes():
    A = attention_family(GroupedLatentAttention(**MOTIF), "gla")
    # Motif-3 TT port (8 TP chips): latent projection [4096, 1664] = q_a 1024 + latent 512 + rope 64 + lambda 64;
    # wq_b [1024, 1920] per chip = 10 heads x (128 + 64); gate [1024, 1024] per chip = 8 signal heads x 128;
    # W_UK' and W_UV' [2, 128, 512] per chip = 2 groups; wo [1024, 4096] per chip = 8 signal heads x 128
    port = 4096 * 1664 + 8 * 1024 * 1920 + 8 * 1024 * 1024 + 2 * 8 * 2 * 128 * 512 + 8 * 1024 * 4096
    assert A.params(4096) == port == 66_584_576
    assert A.tp_heads == 16 and A.kernel_family == "mla" and A.label == "gla"


def test_grouped_latent_attention_full_layer_costs():
    A = attention_family(GroupedLatentAttention(**MOTIF), "gla")
    # latent entry (512 + 64) x 2 = 1152 B bf16; fp8 512 + 4*512/128 + 2*64 = 656 B
    assert A.kv_per_token("bf16") == 1152 and A.kv_per_token("fp8") == 656 and A.kv_fixed("bf16") == 0
    L = 10_000
    # absorbed decode: 2 H (2 d_c + d_r) = 2*80*1088 = 174,080 per key; expanded prefill 2*80*192 + 2*80*128
    assert value(A.core_flops(L, "decode"), A, 1152) == 174_080 * L
    assert value(A.core_flops(L, "prefill"), A, 1152) == 51_200 * L
    assert value(A.kv_read(L), A, 1152) == value(A.kv_stored(L), A, 1152) == 1152 * L
    # 80 heads at tp 8 and q_len 1: 10 rows, padded to one 64-row tile
    assert float(A.decode_row_padding(1, 8)) == pytest.approx(6.4)


def test_grouped_latent_attention_sliding_window_caps_held_and_read():
    A = attention_family(GroupedLatentAttention(**MOTIF, window=129), "swa")
    assert A.label == "gla-swa129"
    # the ring holds 129 entries: 129 x 1152 = 148,608 B per sequence, nothing grows per token
    assert A.kv_per_token("bf16") == 0 and A.kv_fixed("bf16") == 148_608
    for L, keys in ((100, 100), (129, 129), (50_000, 129)):
        assert value(A.kv_read(L), A, 1152) == value(A.kv_stored(L), A, 1152) == keys * 1152
        assert value(A.core_flops(L, "decode"), A, 1152) == 174_080 * keys


def test_gla_validates_groups():
    with pytest.raises(ValueError, match="multiple of groups"):
        GroupedLatentAttention(**{**MOTIF, "groups": 3})
    with pytest.raises(ValueError, match="signal head"):
        GroupedLatentAttention(**{**MOTIF, "noise_heads_per_group": 5})


def test_mhc_residual_family_motif3():
    r = ResidualFamily(Residual(kind="mhc", streams=4), 4096)
    # two sites per layer, each [24, 16384] (24 = (2 + 4) 4 logits from the 4 x 4096 streams): 786,432; the
    # head combiner 4 x 16,384 = 65,536
    assert r.params() == (2 * 24 * 16_384, 65_536) == (786_432, 65_536)
    assert r.kernels == 2
    # 3 extra streams read and written around both sublayers: 3 x 4 x 4096 x 2 B = 98,304 B per token and layer
    assert r.extra_bytes_per_token(2) == 98_304


def test_standard_residual_costs_nothing():
    r = ResidualFamily(Residual(), 4096)
    assert r.params() == (0, 0) and r.kernels == 0 and r.extra_bytes_per_token(2) == 0


def test_index_share_layer_skips_indexer_compute_weights_and_keys():
    # GLM-5 DSA dims: q_c 2048, d_c 512, d_r 64, indexer 32 heads x 128, top-k 2048
    kw = dict(heads=64, q_lora_rank=2048, kv_lora_rank=512, qk_nope_dim=192, qk_rope_dim=64, v_head_dim=256)
    own = attention_family(MLA(**kw, indexer=Indexer(heads=32, head_dim=128, top_k=2048)), "own")
    shared = attention_family(MLA(**kw, indexer=Indexer(heads=32, head_dim=128, top_k=2048, shared=True)), "sh")
    # indexer weights 2048*32*128 + 6144*128 + 6144*32 = 9,371,648
    assert own.params(6144) - shared.params(6144) == 9_371_648
    # KV: latent 1152 B bf16 + index key 256 B on the computing layer only
    assert (own.kv_per_token("bf16"), shared.kv_per_token("bf16")) == (1408, 1152)
    L = 50_000
    assert value(own.index_flops(L), own, 1152, 256) == 2 * 32 * 128 * L and shared.index_flops(L) == 0
    # both read the top-k latent entries; only the computing layer reads every index key
    assert value(own.kv_read(L), own, 1152, 256) == 2048 * 1152 + L * 256
    assert value(shared.kv_read(L), shared, 1152, 256) == 2048 * 1152


def test_pooled_index_keys_and_nope_latent_glm53_flash():
    dsa = MLA(heads=64, q_lora_rank=1536, kv_lora_rank=512, qk_nope_dim=256, qk_rope_dim=0, v_head_dim=256,
              indexer=Indexer(heads=32, head_dim=128, top_k=2048, key_pool=4))
    A = attention_family(dsa, "dsa")
    # q 4096*1536 + 1536*64*256; kv_a 4096*512 (no RoPE part); kv_b 512*64*(256 + 256); o 64*256*4096;
    # indexer 1536*32*128 + 4096*128 + 4096*32, pooling gate 4096*128 + position bias 4*128
    assert A.params(4096) == (6_291_456 + 25_165_824) + 2_097_152 + 16_777_216 + 67_108_864 + \
        (6_291_456 + 524_288 + 131_072 + 524_288 + 512) == 124_912_128
    # NoPE latent 512 x 2 B; one 128 x 2 B index key per 4 tokens: 64 B per token
    assert A.kv_per_token("bf16") == 1024 + 64 and A.entry_bytes("bf16") == (1024.0, 64.0, 0.0)
    L = 40_000
    # the indexer scores L / 4 pooled keys: 2 x 32 x 128 x 10,000
    assert value(A.index_flops(L), A, 1024, 64) == 81_920_000
    # top-k 2048 latent entries + every pooled index key
    assert value(A.kv_read(L), A, 1024, 64) == 2048 * 1024 + L * 64
    # an unpooled indexer is unchanged by the field's default
    plain = MLA(heads=64, q_lora_rank=1536, kv_lora_rank=512, qk_nope_dim=256, qk_rope_dim=0, v_head_dim=256,
                indexer=Indexer(heads=32, head_dim=128, top_k=2048))
    P = attention_family(plain, "p")
    assert P.params(4096) == 124_912_128 - 524_288 - 512 and P.kv_per_token("bf16") == 1024 + 256
