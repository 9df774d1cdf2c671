"""DeepSeek-V4 attention ("dsv4"): one shared KV head of d elements (RoPE part d_r included), a sliding-window
ring of W entries, and optionally a compressed cache of the whole context at ratio c: CSA (c = 4, an indexer keeps
top_k compressed entries), HCA (c = 128, attended densely); no ratio: sliding window only. A layer whose indexer is
``shared`` (DeepSeek-V4.1 cross-layer reuse) reads the compressed cache and top-k selection of its KV-source layer.

    params      q h q_c + q_c H d + kv h d + o H d o_r + g o_r h + compressor + indexer             elements
                compressor (inference/model.py Compressor): wkv and wgate h (coff d) each, coff 2 at c = 4
                else 1: 2 h coff d; a ratio-1 compressor (V4.1 KV source) has wkv only: h d
                indexer: q_c H_i d_i + h H_i + its own compressor(h, d_i, c)
    entry E     bf16 2 d; fp8 (d - d_r) + 8 + 2 d_r (584 B at d = 512); fp4 (d - d_r)/2 + (d - d_r)/16 + 2 d_r  B
    KV/token    (E + I)/c (I only with an own indexer); 0 for SWA-only and shared-indexer layers      B
    KV fixed    W E per sequence (the window ring)                                                     B
    entries     attended per query: CSA min(top_k, L/c) + W; HCA L/c + W; SWA-only min(L, W)
    core FLOPs  4 H d per attended entry; indexer 2 H_i d_i L / c (FP8) on CSA layers
    KV read     entries E + L/c I (own indexer); stored W E + L/c (E + I) (W E alone for SWA-only or shared
                layers); shard 1 (one KV head, replicated over TP)
    kernels     8 (+1 compressor, +3 own indexer)
"""

from __future__ import annotations

from .attention import AttentionFamily, indexer_flops, own_indexer
from .kv_bytes import indexer_key_bytes


def compressor_params(h: int, d: int, c: int) -> int:
    """DeepSeek-V4 KV compressor (inference/model.py ``Compressor``): wkv and wgate, each h x (coff d),
    coff = 2 for the overlapping ratio-4 (CSA) windows, else 1:  2 h coff d.  A ratio-1 compressor
    (DeepSeek-V4.1 decoder KV source) has wkv only, no gate:  h d.  The (c x coff d) ``ape`` is ignored."""
    if c == 1:
        return h * d
    coff = 2 if c == 4 else 1
    return 2 * h * coff * d


def indexer_params(ix, h: int, q_lora: int, c: int) -> int:
    """DeepSeek-V4 lightning indexer (inference/model.py ``Indexer``): wq_b q_lora x (H_i d_i) on the
    query latent, weights_proj h x H_i, and its own compressor for the index keys (no separate wk):
    q_lora H_i d_i + h H_i + compressor(h, d_i, c)."""
    return q_lora * ix.heads * ix.head_dim + h * ix.heads + compressor_params(h, ix.head_dim, c)


def entry_bytes_of(a, fmt: str) -> float:
    """One compressed/window KV entry E: no-RoPE part quantized, RoPE part bf16, B."""
    if fmt == "bf16":
        return 2.0 * a.head_dim
    nope = a.head_dim - a.rope_dim
    return (nope + 8 if fmt == "fp8" else 0.5 * nope + nope / 16) + 2.0 * a.rope_dim


class CompressedFamily(AttentionFamily):
    def _reads_other_cache(self) -> bool:
        """SWA only, or a reader of another layer's compressed cache (V4.1): no growing KV of its own."""
        a = self.a
        return not a.compress_ratio or (a.indexer is not None and a.indexer.shared)

    def params(self, h: int) -> int:
        a = self.a
        q = h * a.q_lora_rank + a.q_lora_rank * a.heads * a.head_dim
        kv = h * a.head_dim
        # grouped low-rank output: o_groups blocks of (H d / g) x o_lora, then (g o_lora) x h
        o = a.heads * a.head_dim * a.o_lora_rank + a.o_groups * a.o_lora_rank * h
        comp = ix = 0
        if a.compress_ratio and not (a.indexer is not None and a.indexer.shared):
            comp = compressor_params(h, a.head_dim, a.compress_ratio)
        if own_indexer(a.indexer):
            ix = indexer_params(a.indexer, h, a.q_lora_rank, a.compress_ratio or 1)
        return q + kv + o + comp + ix

    @property
    def label(self) -> str:
        a = self.a
        return {None: "swa", 4: "csa", 128: "hca"}.get(a.compress_ratio, f"c{a.compress_ratio}")

    @property
    def kernels(self) -> int:
        a = self.a
        return 8 + (1 if a.compress_ratio else 0) + (3 if own_indexer(a.indexer) else 0)

    def _index_key_bytes(self, fmt: str) -> float:
        a = self.a
        return indexer_key_bytes(a.indexer.head_dim, fmt) if own_indexer(a.indexer) else 0.0

    def kv_per_token(self, fmt: str) -> float:
        a = self.a
        if self._reads_other_cache():
            return 0.0
        e = entry_bytes_of(a, fmt) / a.compress_ratio
        if own_indexer(a.indexer):
            e += indexer_key_bytes(a.indexer.head_dim, fmt) / a.compress_ratio
        return e

    def kv_fixed(self, fmt: str) -> float:
        return self.a.window * entry_bytes_of(self.a, fmt)

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return entry_bytes_of(self.a, fmt), self._index_key_bytes(fmt), 0.0

    def _entries(self, n_ctx):
        from .vocabulary import smin
        a = self.a
        if not a.compress_ratio:
            return smin(n_ctx, a.window)
        if a.indexer is not None:
            return smin(a.indexer.top_k, n_ctx / a.compress_ratio) + a.window
        return n_ctx / a.compress_ratio + a.window

    def core_flops(self, n_ctx, phase: str):
        a = self.a
        return 4 * a.heads * a.head_dim * self._entries(n_ctx)

    def index_flops(self, n_ctx):
        return indexer_flops(self.a.indexer, n_ctx, self.a.compress_ratio or 1)

    def kv_read(self, n_ctx):
        a = self.a
        read = self._entries(n_ctx) * self.E
        if own_indexer(a.indexer):
            read += n_ctx / a.compress_ratio * self.I
        return read

    def kv_stored(self, n_ctx):
        a, E, I = self.a, self.E, self.I
        if self._reads_other_cache():
            return a.window * E   # SWA only, or reads another layer's compressed cache (V4.1)
        return a.window * E + n_ctx / a.compress_ratio * (E + I)
