"""Parameter counts per component (elements). Norms and biases are ignored (< 0.1%).

Notation: h hidden size, H heads, d head dim, q_c / d_c query / KV latent ranks, d_n / d_r / d_v
MLA no-RoPE, RoPE and value head dims, I FFN intermediate, E experts, k top-k, V vocabulary,
H_i / d_i indexer heads / head dim, c compress ratio, n mHC residual streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..specs.model import GQA, MLA, CompressedAttention, DenseFFN, Indexer, LinearAttention, ModelSpec, MoE


def indexer_params(ix: Indexer | None, h: int, q_in: int) -> int:
    """DSA indexer: query up-projection q_in x (heads*head_dim), key projection h x head_dim,
    per-head weights h x heads. A shared (IndexShare) layer has none."""
    if ix is None or ix.shared:
        return 0
    return q_in * ix.heads * ix.head_dim + h * ix.head_dim + h * ix.heads


def dsv4_compressor_params(h: int, d: int, c: int) -> int:
    """DeepSeek-V4 KV compressor (inference/model.py ``Compressor``): wkv and wgate, each h x (coff d),
    coff = 2 for the overlapping ratio-4 (CSA) windows, else 1:  2 h coff d.  A ratio-1 compressor
    (DeepSeek-V4.1 decoder KV source) has wkv only, no gate:  h d.  The (c x coff d) ``ape`` is ignored."""
    if c == 1:
        return h * d
    coff = 2 if c == 4 else 1
    return 2 * h * coff * d


def dsv4_indexer_params(ix: Indexer, h: int, q_lora: int, c: int) -> int:
    """DeepSeek-V4 lightning indexer (inference/model.py ``Indexer``): wq_b q_lora x (H_i d_i) on the
    query latent, weights_proj h x H_i, and its own compressor for the index keys (no separate wk):
    q_lora H_i d_i + h H_i + compressor(h, d_i, c)."""
    return q_lora * ix.heads * ix.head_dim + h * ix.heads + dsv4_compressor_params(h, ix.head_dim, c)


def attention_params(a, h: int) -> int:
    """Weight elements of one attention block."""
    if isinstance(a, GQA):
        # q: h x H d ; k, v: h x n_kv d ; o: H d x h
        return h * a.heads * a.head_dim + 2 * h * a.kv_heads * a.head_dim + a.heads * a.head_dim * h
    if isinstance(a, MLA):
        dqk = a.qk_nope_dim + a.qk_rope_dim
        q = (h * a.q_lora_rank + a.q_lora_rank * a.heads * dqk) if a.q_lora_rank else h * a.heads * dqk
        kv_a = h * (a.kv_lora_rank + a.qk_rope_dim)
        kv_b = a.kv_lora_rank * a.heads * (a.qk_nope_dim + a.v_head_dim)
        o = a.heads * a.v_head_dim * h * (2 if a.gated else 1)
        return q + kv_a + kv_b + o + indexer_params(a.indexer, h, a.q_lora_rank or h)
    if isinstance(a, CompressedAttention):
        q = h * a.q_lora_rank + a.q_lora_rank * a.heads * a.head_dim
        kv = h * a.head_dim
        # grouped low-rank output: o_groups blocks of (H d / g) x o_lora, then (g o_lora) x h
        o = a.heads * a.head_dim * a.o_lora_rank + a.o_groups * a.o_lora_rank * h
        comp = ix = 0
        if a.compress_ratio and not (a.indexer is not None and a.indexer.shared):
            comp = dsv4_compressor_params(h, a.head_dim, a.compress_ratio)
        if a.indexer is not None and not a.indexer.shared:
            ix = dsv4_indexer_params(a.indexer, h, a.q_lora_rank, a.compress_ratio or 1)
        return q + kv + o + comp + ix
    if isinstance(a, LinearAttention):
        qk = a.k_heads * a.head_k_dim
        v = a.v_heads * a.head_v_dim
        conv = (2 * qk + v) * a.conv_kernel
        if a.variant == "gdn":
            # q, k, v, output gate z, beta and alpha per v-head, conv, out
            return h * (2 * qk + 2 * v) + h * 2 * a.v_heads + conv + v * h
        # KDA: q, k, v; low-rank forget gate and output gate (rank = head dim); beta; conv; out
        gates = (h * a.head_k_dim + a.head_k_dim * qk) + (h * a.head_v_dim + a.head_v_dim * v)
        return h * (2 * qk + v) + gates + h * a.v_heads + conv + v * h
    raise TypeError(type(a))


def expert_params(f: MoE, h: int) -> int:
    """One routed expert: gated MLP on the (latent) hidden size."""
    d_in = f.latent_dim or h
    return (3 if f.gated else 2) * d_in * f.expert_intermediate


def ffn_params(f, h: int) -> tuple[int, int]:
    """(total, active per token) weight elements of one FFN block.

    Dense: (3 or 2) h I.  MoE: E e + s + r + l total, k e + s + r + l active, with e = one routed expert
    (``expert_params``), s = shared experts (3 or 2) h I_s each, r = router h E, l = latent projections
    2 h d_lat (latent MoE only)."""
    if isinstance(f, DenseFFN):
        n = (3 if f.gated else 2) * h * f.intermediate
        return n, n
    shared = f.shared_experts * (3 if f.gated else 2) * h * (f.shared_intermediate or f.expert_intermediate)
    # router h x E. Hash-routed layers (DeepSeek-V4, first num_hash_layers) keep gate.weight too: the
    # experts come from a token-id table (tid2eid, an index table, not counted) but the scores still do.
    router = h * f.experts
    latent = 2 * h * f.latent_dim if f.latent_dim else 0
    e = expert_params(f, h)
    always = shared + router + latent
    return f.experts * e + always, f.top_k * e + always


def mhc_params(m: ModelSpec) -> tuple[int, int]:
    """(per layer, head) weight elements of mHC residual mixing (DeepSeek-V4 ``hc_*_fn``): each of the
    two sublayers of a block maps the n h stream concatenation to (2 + n) n mixing logits:
    2 (2 + n) n (n h) per layer; the output head combiner n (n h). Standard residual: (0, 0)."""
    if m.residual.kind != "mhc":
        return 0, 0
    n, h = m.residual.streams, m.hidden_size
    return 2 * (2 + n) * n * n * h, n * n * h


@dataclass
class ParamCounts:
    """Element counts. ``total`` excludes MTP modules and Engram tables (reported separately)."""

    embedding: int
    lm_head: int
    attention: int
    ffn_total: int
    ffn_active: int
    mtp: int
    engram: int
    per_group: list[dict] = field(default_factory=list)

    lm_head_tied: bool = False
    residual: int = 0  # mHC mixing weights (0 for a standard residual)

    @property
    def total(self) -> int:
        return (self.embedding + (0 if self.lm_head_tied else self.lm_head) + self.attention + self.ffn_total
                + self.residual)

    @property
    def active(self) -> int:
        """Active per token, the usual convention: all non-expert weights incl. embedding and LM head."""
        return (self.embedding + (0 if self.lm_head_tied else self.lm_head) + self.attention + self.ffn_active
                + self.residual)

    @property
    def active_excl_embedding(self) -> int:
        """Active per token without the input embedding table (a one-row gather per token, so no
        weight streaming); for comparing with published figures that leave the embedding out."""
        return self.active - (0 if self.lm_head_tied else self.embedding)


def param_counts(m: ModelSpec) -> ParamCounts:
    h = m.hidden_size
    attn = ffn_t = ffn_a = 0
    groups = []
    for g in m.layers:
        pa = attention_params(m.attention[g.attention], h)
        ft, fa = ffn_params(m.ffn[g.ffn], h)
        attn += g.count * pa
        ffn_t += g.count * ft
        ffn_a += g.count * fa
        groups.append({"count": g.count, "attention": g.attention, "ffn": g.ffn,
                       "attention_params": pa, "ffn_params": ft, "ffn_active_params": fa})
    hc_layer, hc_head = mhc_params(m)
    mtp = 0
    if m.mtp:
        pa = attention_params(m.attention[m.mtp.attention], h)
        ft, _ = ffn_params(m.ffn[m.mtp.ffn], h)
        # each MTP module: one block (+ its mHC mixing) + a 2h x h projection of [embedding; hidden]
        # (embedding/head shared with the main model)
        mtp = m.mtp.layers * (pa + ft + 2 * h * h + hc_layer)
    engram = int(round(m.engram.table_params_b * 1e9)) if m.engram else 0
    return ParamCounts(embedding=m.vocab_size * h, lm_head=m.vocab_size * h, attention=attn,
                       ffn_total=ffn_t, ffn_active=ffn_a, mtp=mtp, engram=engram, per_group=groups,
                       lm_head_tied=m.tie_embeddings,
                       residual=m.num_layers * hc_layer + hc_head)
