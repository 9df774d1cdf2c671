"""Attention cost per operator family: FLOPs and KV bytes as sympy expressions of the context.

Per query token attending ``n`` keys (FLOPs = 2 x MACs; ../shared/reference/models.md):
- GQA/MHA: 4 H d per key (QK^T and PV); a sliding window caps n at W.
- MLA expanded (prefill): 2 H (d_n + d_r) + 2 H d_v per key.  Absorbed (decode, MQA form): 2 H (2 d_c + d_r).
- DSA (MLA + indexer): keys capped at top_k, absorbed form in both phases; the indexer adds 2 H_i d_i L
  FP8 FLOPs per query over all L keys.
- DeepSeek-V4 (dsv4): 4 H d per attended entry; entries per query: CSA min(k, L/4) + W, HCA L/128 + W,
  SWA-only min(L, W); indexer 2 H_i d_i L/4 on CSA layers.
- Linear (GDN/KDA): 4 H_v d_k d_v per token (state update and read-out), independent of L.
- Issued decode FLOPs of MLA (absorbed and sparse): the decode kernels (FlashMLA, FlashInfer MLA, TensorRT-LLM's
  MLA kernels) put the q_len x H/tp query rows of a sequence (all heads share the latent KV) in MMA tiles of
  MLA_ROW_TILE = 64 rows, so a rank with fewer rows issues a whole tile:
      issued / useful = 64 ceil(r / 64) / r,   r = q_len H / tp
  (DeepSeek-V3 at TP8 without drafts: r = 16, 4x; with attention-DP, r = 128, 1x). The measured MLA decode tables
  (../shared/data/kernels, generation_mla) are fitted with this padding (kernels/mla.py, HEAD_TILE).

KV bytes (entry sizes E_j, I_j, R_j are bound per number format from perfmodel.arch.kv):
- read per sequence per decode step: GQA min(L, W) E; MLA L E; DSA min(L, k) E + L I;
  dsv4 W E + CSA (min(k, L/4) E + L/4 I) | HCA L/128 E; linear 2 R (read + write the state).
- stored per sequence at context L: GQA min(L, W) E; MLA/DSA L (E + I); dsv4 W E + L/c (E + I); linear R.
- shard across attention TP: GQA min(tp, n_kv) (KV heads split); MLA / dsv4 1 (latent replicated);
  linear tp (heads split).
"""

from __future__ import annotations

import sympy as sp

from ..specs.model import GQA, MLA, CompressedAttention, LinearAttention
from .roofline import ceil_, smin
from .symbols import kv_symbols

MLA_ROW_TILE = 64   # query rows per MMA tile of the MLA decode kernels (FlashMLA: 64; kernels/mla.py HEAD_TILE)


class AttentionCost:
    """Costs of one attention kind ``a`` named ``name`` in the model's attention table."""

    def __init__(self, a, name: str):
        self.a = a
        self.name = name
        k = kv_symbols(name)
        self.E, self.I, self.R = k["E"], k["I"], k["R"]

    @property
    def kernels(self) -> int:
        """Kernels one decode pass launches for this attention kind (before cross-layer fusion), e.g.
        MLA: fused down-projection GEMM, q/kv RMSNorm, q up-projection GEMM, W_UK batched GEMM, RoPE + KV write,
        attention, W_UV batched GEMM, output GEMM (the module list of TensorRT-LLM's DeepSeek-R1 layer);
        GQA: QKV GEMM, RoPE + KV write, attention, output GEMM; a learned indexer or a compressor adds its
        projection, scoring and top-k kernels; linear attention: in-projection, short convolution, gating,
        chunked recurrence, gated norm, out-projection."""
        a = self.a
        if isinstance(a, GQA):
            return 4
        if isinstance(a, MLA):
            return 8 + (3 if a.indexer is not None and not a.indexer.shared else 0)
        if isinstance(a, CompressedAttention):
            return 8 + (1 if a.compress_ratio else 0) + (3 if a.indexer is not None and not a.indexer.shared else 0)
        if isinstance(a, LinearAttention):
            return 6
        raise TypeError(type(a))

    # ---- FLOPs per query token
    def core_flops(self, n_ctx, phase: str):
        """Attention-core FLOPs of one query token with context ``n_ctx`` (tensor-core BF16)."""
        a = self.a
        if isinstance(a, GQA):
            keys = smin(n_ctx, a.window) if a.window else n_ctx
            return 4 * a.heads * a.head_dim * keys
        if isinstance(a, MLA):
            if a.indexer is not None:
                return 2 * a.heads * (2 * a.kv_lora_rank + a.qk_rope_dim) * smin(n_ctx, a.indexer.top_k)
            if phase == "prefill":
                return (2 * a.heads * (a.qk_nope_dim + a.qk_rope_dim) + 2 * a.heads * a.v_head_dim) * n_ctx
            return 2 * a.heads * (2 * a.kv_lora_rank + a.qk_rope_dim) * n_ctx
        if isinstance(a, CompressedAttention):
            return 4 * a.heads * a.head_dim * self._entries(n_ctx)
        if isinstance(a, LinearAttention):
            return 4 * a.v_heads * a.head_k_dim * a.head_v_dim + 0 * n_ctx
        raise TypeError(type(a))

    def decode_row_padding(self, q_len, tp):
        """Issued over useful decode attention FLOPs (module docstring): 64 ceil(r / 64) / r for MLA with
        r = q_len H / tp query rows per sequence and rank; 1 for the other kinds."""
        a = self.a
        if not isinstance(a, MLA):
            return sp.Integer(1)
        rows = q_len * a.heads / tp
        return MLA_ROW_TILE * ceil_(rows / MLA_ROW_TILE) / rows

    def _entries(self, n_ctx):
        a = self.a
        if not a.compress_ratio:
            return smin(n_ctx, a.window)
        if a.indexer is not None:
            return smin(a.indexer.top_k, n_ctx / a.compress_ratio) + a.window
        return n_ctx / a.compress_ratio + a.window

    def index_flops(self, n_ctx):
        """FP8 indexer FLOPs of one query token (0 where the layer has no own indexer)."""
        ix = getattr(self.a, "indexer", None)
        if ix is None or ix.shared:
            return sp.Integer(0)
        ratio = getattr(self.a, "compress_ratio", None) or 1
        return 2 * ix.heads * ix.head_dim * n_ctx / ratio

    # ---- KV bytes
    def kv_read(self, n_ctx):
        """Bytes of KV/state read per sequence per step at context ``n_ctx`` (before TP sharding)."""
        a, E, I, R = self.a, self.E, self.I, self.R
        if isinstance(a, GQA):
            return (smin(n_ctx, a.window) if a.window else n_ctx) * E
        if isinstance(a, MLA):
            if a.indexer is not None:
                return smin(n_ctx, a.indexer.top_k) * E + (0 if a.indexer.shared else n_ctx * I)
            return n_ctx * E
        if isinstance(a, CompressedAttention):
            read = self._entries(n_ctx) * E
            if a.indexer is not None and not a.indexer.shared:
                read += n_ctx / a.compress_ratio * I
            return read
        if isinstance(a, LinearAttention):
            return 2 * R
        raise TypeError(type(a))

    def kv_stored(self, n_ctx):
        """Bytes stored per sequence at context ``n_ctx`` (before TP sharding)."""
        a, E, I, R = self.a, self.E, self.I, self.R
        if isinstance(a, GQA):
            return (smin(n_ctx, a.window) if a.window else n_ctx) * E
        if isinstance(a, MLA):
            return n_ctx * (E + I)
        if isinstance(a, CompressedAttention):
            if not a.compress_ratio or (a.indexer is not None and a.indexer.shared):
                return a.window * E   # SWA only, or reads another layer's compressed cache (V4.1)
            return a.window * E + n_ctx / a.compress_ratio * (E + I)
        if isinstance(a, LinearAttention):
            return R
        raise TypeError(type(a))

    def kv_write(self):
        """Bytes written per new token (0 for linear attention: its state write is in kv_read)."""
        a, E, I = self.a, self.E, self.I
        if isinstance(a, LinearAttention):
            return sp.Integer(0)
        return E + I

    def shard(self, tp):
        """How many ways attention TP splits this layer's KV/state."""
        a = self.a
        if isinstance(a, GQA):
            return smin(tp, a.kv_heads)
        if isinstance(a, LinearAttention):
            return tp
        return sp.Integer(1)
