"""Multi-head / grouped-query attention (MHA when n_kv = H), optionally over a sliding window of W tokens, with an
output gate, or block-sparse through a block indexer (MiniMax-M3 MSA).

    params      q h H d + k, v 2 h n_kv d + o H d h (+ output gate h H d)                   elements
                block indexer: index q h H_i d_i + index k h n_i d_i (own indexer only)
    KV          2 n_kv d b per context token (b = bytes per element); a window keeps at most W tokens, so the
                window ring W 2 n_kv d b is fixed per sequence and nothing grows               B
                block indexer: + one index key I = n_i d_i (scaled as a DSA index key) per token, held in full
                by every TP rank (one index-key head beside the split KV heads)
    core FLOPs  4 H d per attended key (QK^T and PV), keys = min(L, W), min(L, k_b s_b) with a block indexer
                (k_b blocks of s_b keys, the local block among them), or L                per query token
    indexer     2 H_i d_i L FP8 FLOPs per query (scores every key before block pooling)
    KV read     keys E per sequence per step (split over shard) + L I (every rank); stored keys E (+ L I with
                an indexer); shard min(tp, n_kv) (KV heads split over TP)
    kernels     4: QKV GEMM, RoPE + KV write, attention, output GEMM (+3 for an own block indexer: index
                projections, index scores + block top-k, index-key write)
"""

from __future__ import annotations

from .attention import AttentionFamily
from .kv_bytes import element_bytes, indexer_key_bytes


def block_indexer_params(ix, h: int) -> int:
    """Block indexer weights (MiniMax-M3 ``index_q_proj``, ``index_k_proj``): h H_i d_i + h n_i d_i; a shared
    layer has none (norms ignored)."""
    if ix is None or ix.shared:
        return 0
    return h * ix.heads * ix.head_dim + h * ix.key_heads * ix.head_dim


class GQAFamily(AttentionFamily):
    def _own_block_indexer(self):
        ix = self.a.block_indexer
        return ix if ix is not None and not ix.shared else None

    def params(self, h: int) -> int:
        a = self.a
        # q: h x H d ; k, v: h x n_kv d ; o: H d x h ; output gate h x H d
        core = h * a.heads * a.head_dim + 2 * h * a.kv_heads * a.head_dim + a.heads * a.head_dim * h
        gate = h * a.heads * a.head_dim if a.output_gate else 0
        return core + gate + block_indexer_params(a.block_indexer, h)

    @property
    def label(self) -> str:
        a = self.a
        if a.block_indexer is not None:
            return "msa-shared" if a.block_indexer.shared else "msa"
        return f"swa{a.window}" if a.window else ("mha" if a.heads == a.kv_heads else "gqa")

    @property
    def kernels(self) -> int:
        return 4 + (3 if self._own_block_indexer() else 0)

    def _entry(self, fmt: str) -> float:
        """One token's K and V over all KV heads: 2 n_kv d b, B."""
        a = self.a
        return 2 * a.kv_heads * a.head_dim * element_bytes(fmt)

    def _index_key(self, fmt: str) -> float:
        """One token's index keys: n_i keys of d_i elements, scaled as a DSA index key (0 without one), B."""
        ix = self._own_block_indexer()
        return ix.key_heads * indexer_key_bytes(ix.head_dim, fmt) if ix else 0.0

    def kv_per_token(self, fmt: str) -> float:
        return 0.0 if self.a.window else self._entry(fmt) + self._index_key(fmt)

    def kv_fixed(self, fmt: str) -> float:
        a = self.a
        return a.window * 2 * a.kv_heads * a.head_dim * element_bytes(fmt) if a.window else 0.0

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return self._entry(fmt), self._index_key(fmt), 0.0

    def _keys(self, n_ctx):
        from .vocabulary import smin
        a = self.a
        if a.block_indexer is not None:
            return smin(n_ctx, a.block_indexer.top_k_blocks * a.block_indexer.block_size)
        return smin(n_ctx, a.window) if a.window else n_ctx

    def core_flops(self, n_ctx, phase: str):
        a = self.a
        return 4 * a.heads * a.head_dim * self._keys(n_ctx)

    def index_flops(self, n_ctx):
        """2 H_i d_i L FP8 FLOPs per query with an own block indexer (every key scored), else 0."""
        ix = self._own_block_indexer()
        if ix is None:
            import sympy as sp
            return sp.Integer(0)
        return 2 * ix.heads * ix.head_dim * n_ctx

    def kv_read(self, n_ctx):
        return self._keys(n_ctx) * self.E

    def kv_stored(self, n_ctx):
        if self.a.block_indexer is not None:
            return n_ctx * self.E     # every block stays selectable: the whole context is held
        return self._keys(n_ctx) * self.E

    def kv_write(self):
        """E + I (I bound to 0 without an index key); with an own block indexer E alone: the index key is
        written by every rank (``replicated_write``)."""
        return self.E if self._own_block_indexer() else self.E + self.I

    def replicated_read(self, n_ctx):
        """L I: every rank scores every key with the one index-key head (0 without an own block indexer)."""
        return n_ctx * self.I if self._own_block_indexer() else super().replicated_read(n_ctx)

    def replicated_write(self):
        return self.I if self._own_block_indexer() else super().replicated_write()

    def replicated_stored(self, n_ctx):
        return n_ctx * self.I if self._own_block_indexer() else super().replicated_stored(n_ctx)

    def shard(self, tp):
        from .vocabulary import smin
        return smin(tp, self.a.kv_heads)
