"""Parameter counts per component (elements). Norms and biases are ignored (< 0.1%).

Notation: h hidden size, H heads, d head dim, q_c / d_c query / KV latent ranks, d_n / d_r / d_v
MLA no-RoPE, RoPE and value head dims, I FFN intermediate, E experts, k top-k, V vocabulary.
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
        comp = 0
        if a.compress_ratio:
            overlap = 2 if a.indexer is not None else 1  # CSA compressor uses overlapping windows
            comp = 2 * h * a.head_dim * overlap          # KV and gate projections of the compressor
        ix = 0
        if a.indexer is not None and not a.indexer.shared:
            ix = indexer_params(a.indexer, h, a.q_lora_rank) + 2 * h * a.indexer.head_dim * 2
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
    """(total, active per token) weight elements of one FFN block."""
    if isinstance(f, DenseFFN):
        n = (3 if f.gated else 2) * h * f.intermediate
        return n, n
    shared = f.shared_experts * (3 if f.gated else 2) * h * (f.shared_intermediate or f.expert_intermediate)
    router = h * f.experts if f.router == "topk" else 0
    latent = 2 * h * f.latent_dim if f.latent_dim else 0
    e = expert_params(f, h)
    always = shared + router + latent
    return f.experts * e + always, f.top_k * e + always


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

    @property
    def total(self) -> int:
        return self.embedding + (0 if self.lm_head_tied else self.lm_head) + self.attention + self.ffn_total

    @property
    def active(self) -> int:
        """Active per token, the usual convention: all non-expert weights incl. embedding and LM head."""
        return self.embedding + (0 if self.lm_head_tied else self.lm_head) + self.attention + self.ffn_active

    lm_head_tied: bool = False


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
    mtp = 0
    if m.mtp:
        pa = attention_params(m.attention[m.mtp.attention], h)
        ft, _ = ffn_params(m.ffn[m.mtp.ffn], h)
        # each MTP module: one block + a 2h x h projection of [embedding; hidden] (embedding/head shared)
        mtp = m.mtp.layers * (pa + ft + 2 * h * h)
    engram = int(round(m.engram.table_params_b * 1e9)) if m.engram else 0
    return ParamCounts(embedding=m.vocab_size * h, lm_head=m.vocab_size * h, attention=attn,
                       ffn_total=ffn_t, ffn_active=ffn_a, mtp=mtp, engram=engram, per_group=groups,
                       lm_head_tied=m.tie_embeddings)
