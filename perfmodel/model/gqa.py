"""Multi-head / grouped-query attention (MHA when n_kv = H), optionally over a sliding window of W tokens.

    params      q h H d + k, v 2 h n_kv d + o H d h                         elements
    KV          2 n_kv d b per context token (b = bytes per element); a window keeps at most W tokens, so the
                window ring W 2 n_kv d b is fixed per sequence and nothing grows               B
    core FLOPs  4 H d per attended key (QK^T and PV), keys = min(L, W) or L                       per query token
    KV read     keys E per sequence per step; stored keys E; shard min(tp, n_kv) (KV heads split over TP)
    kernels     4: QKV GEMM, RoPE + KV write, attention, output GEMM
"""

from __future__ import annotations

from .attention import AttentionFamily
from .kv_bytes import element_bytes


class GQAFamily(AttentionFamily):
    def params(self, h: int) -> int:
        a = self.a
        # q: h x H d ; k, v: h x n_kv d ; o: H d x h
        return h * a.heads * a.head_dim + 2 * h * a.kv_heads * a.head_dim + a.heads * a.head_dim * h

    @property
    def label(self) -> str:
        a = self.a
        return f"swa{a.window}" if a.window else ("mha" if a.heads == a.kv_heads else "gqa")

    @property
    def kernels(self) -> int:
        return 4

    def _entry(self, fmt: str) -> float:
        """One token's K and V over all KV heads: 2 n_kv d b, B."""
        a = self.a
        return 2 * a.kv_heads * a.head_dim * element_bytes(fmt)

    def kv_per_token(self, fmt: str) -> float:
        return 0.0 if self.a.window else self._entry(fmt)

    def kv_fixed(self, fmt: str) -> float:
        a = self.a
        return a.window * 2 * a.kv_heads * a.head_dim * element_bytes(fmt) if a.window else 0.0

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return self._entry(fmt), 0.0, 0.0

    def _keys(self, n_ctx):
        from .vocabulary import smin
        a = self.a
        return smin(n_ctx, a.window) if a.window else n_ctx

    def core_flops(self, n_ctx, phase: str):
        a = self.a
        return 4 * a.heads * a.head_dim * self._keys(n_ctx)

    def kv_read(self, n_ctx):
        return self._keys(n_ctx) * self.E

    def kv_stored(self, n_ctx):
        return self._keys(n_ctx) * self.E

    def shard(self, tp):
        from .vocabulary import smin
        return smin(tp, self.a.kv_heads)
