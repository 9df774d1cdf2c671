"""Parameter counts per component (elements). Norms and biases are ignored (< 0.1%).

Notation: h hidden size, H heads, d head dim, q_c / d_c query / KV latent ranks, d_n / d_r / d_v
MLA no-RoPE, RoPE and value head dims, I FFN intermediate, E experts, k top-k, V vocabulary,
H_i / d_i indexer heads / head dim, c compress ratio, n mHC residual streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import attention_family, ffn_family
from ..model.moe import MoEFamily
from ..model.residual import ResidualFamily
from ..specs.model import ModelSpec, MoE


def attention_params(a, h: int) -> int:
    """Weight elements of one attention block (the kind's family states the count: perfmodel/model/)."""
    return attention_family(a).params(h)


def expert_params(f: MoE, h: int) -> int:
    """One routed expert: gated MLP on the (latent) hidden size, (3 or 2) d I_e elements."""
    return MoEFamily(f, h).one_expert_params()


def ffn_params(f, h: int) -> tuple[int, int]:
    """(total, active per token) weight elements of one FFN block.

    Dense: (3 or 2) h I.  MoE: E e + s + r + l total, k e + s + r + l active, with e = one routed expert
    (``expert_params``), s = shared experts (3 or 2) h I_s each, r = router h E, l = latent projections
    2 h d_lat (latent MoE only)."""
    return ffn_family(f, h).params()


def mhc_params(m: ModelSpec) -> tuple[int, int]:
    """(per layer, head) weight elements of mHC residual mixing (DeepSeek-V4 ``hc_*_fn``): each of the
    two sublayers of a block maps the n h stream concatenation to (2 + n) n mixing logits:
    2 (2 + n) n (n h) per layer; the output head combiner n (n h). Standard residual: (0, 0)."""
    return ResidualFamily(m.residual, m.hidden_size).params()


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
        # each MTP module: one block (+ its mHC mixing where it has one) + a 2h x h projection of
        # [embedding; hidden] (embedding/head shared with the main model)
        mtp = m.mtp.layers * (pa + ft + 2 * h * h + (hc_layer if m.mtp.mhc else 0))
    engram = int(round(m.engram.table_params_b * 1e9)) if m.engram else 0
    return ParamCounts(embedding=m.vocab_size * h, lm_head=m.vocab_size * h, attention=attn,
                       ffn_total=ffn_t, ffn_active=ffn_a, mtp=mtp, engram=engram, per_group=groups,
                       lm_head_tied=m.tie_embeddings,
                       residual=m.num_layers * hc_layer + hc_head)
