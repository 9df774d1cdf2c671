"""Multi-head latent attention (DeepSeek-V2/V3), and DSA when it carries a lightning indexer (DeepSeek-V3.2,
GLM-5). h hidden, H heads, q_c / d_c query / KV latent ranks, d_n / d_r / d_v no-RoPE, RoPE, value head dims;
an indexer has H_i heads of d_i and keeps top_k keys per query.

    params      q h q_c + q_c H (d_n + d_r) (or h H (d_n + d_r) full rank) + kv_a h (d_c + d_r)
                + kv_b d_c H (d_n + d_v) + o H d_v h (x2 gated) + indexer q_in H_i d_i + h d_i + h H_i
                (+ pooling gate h d_i + p d_i with index keys pooled over p tokens)                     elements
    KV/token    latent E: (d_c + d_r) 2 in bf16; fp8 d_c + 4 d_c/128 + 2 d_r (FlashMLA, 656 B); fp4
                d_c/2 + d_c/16 + 2 d_r; plus the indexer key I (own indexer only; I / p per token when
                p tokens share one pooled index key, GLM-5.3-Flash p = 4; d_r = 0 for NoPE)             B
    core FLOPs  expanded (prefill) 2 H (d_n + d_r) + 2 H d_v per key; absorbed (decode, MQA form)
                2 H (2 d_c + d_r) per key; DSA: absorbed in both phases over min(L, top_k) keys
    indexer     2 H_i d_i L / p FP8 FLOPs per query (own indexer; p = 1 unless keys are pooled)
    KV read     L E (MLA); min(L, top_k) E + L I (DSA, I only with an own indexer); stored L (E + I);
                the latent is replicated over TP (shard 1)
    padding     the decode kernels put q_len H/tp query rows of a sequence in MMA tiles of MLA_ROW_TILE rows:
                issued / useful = 64 ceil(r / 64) / r, r = q_len H / tp
    kernels     8 (+3 for an own indexer): fused down-projection GEMM, q/kv RMSNorm, q up-projection GEMM,
                W_UK batched GEMM, RoPE + KV write, attention, W_UV batched GEMM, output GEMM
"""

from __future__ import annotations

from .attention import AttentionFamily, indexer_flops, own_indexer
from .kv_bytes import indexer_key_bytes, scaled_bytes

MLA_ROW_TILE = 64   # query rows per MMA tile of the MLA decode kernels (FlashMLA: 64; kernels/mla.py HEAD_TILE)


def indexer_params(ix, h: int, q_in: int) -> int:
    """DSA indexer: query up-projection q_in x (heads*head_dim), key projection h x head_dim,
    per-head weights h x heads. A shared (IndexShare) layer has none."""
    if ix is None or ix.shared:
        return 0
    pool = h * ix.head_dim + ix.key_pool * ix.head_dim if ix.key_pool > 1 else 0   # pooling gate and position bias
    return q_in * ix.heads * ix.head_dim + h * ix.head_dim + h * ix.heads + pool


def latent_entry_bytes(d_c: int, d_r: int, fmt: str) -> float:
    """One latent KV entry: (d_c + d_r) 2 in bf16, else the scaled d_c plus d_r in bf16, B."""
    if fmt == "bf16":
        return (d_c + d_r) * 2.0
    return scaled_bytes(d_c, fmt) + 2.0 * d_r


class MLAFamily(AttentionFamily):
    kernel_family = "mla"

    def params(self, h: int) -> int:
        a = self.a
        dqk = a.qk_nope_dim + a.qk_rope_dim
        q = (h * a.q_lora_rank + a.q_lora_rank * a.heads * dqk) if a.q_lora_rank else h * a.heads * dqk
        kv_a = h * (a.kv_lora_rank + a.qk_rope_dim)
        kv_b = a.kv_lora_rank * a.heads * (a.qk_nope_dim + a.v_head_dim)
        o = a.heads * a.v_head_dim * h * (2 if a.gated else 1)
        return q + kv_a + kv_b + o + indexer_params(a.indexer, h, a.q_lora_rank or h)

    @property
    def label(self) -> str:
        a = self.a
        return ("dsa-shared" if a.indexer.shared else "dsa") if a.indexer else "mla"

    @property
    def kernels(self) -> int:
        return 8 + (3 if own_indexer(self.a.indexer) else 0)

    def _latent_bytes(self, fmt: str) -> float:
        """The latent KV entry E: (d_c + d_r) 2 in bf16, else the scaled d_c plus d_r in bf16, B."""
        return latent_entry_bytes(self.a.kv_lora_rank, self.a.qk_rope_dim, fmt)

    def _index_key_bytes(self, fmt: str) -> float:
        a = self.a
        if not own_indexer(a.indexer):
            return 0.0
        if a.indexer.key_pool == 1:
            return indexer_key_bytes(a.indexer.head_dim, fmt)
        return indexer_key_bytes(a.indexer.head_dim, fmt) / a.indexer.key_pool

    def kv_per_token(self, fmt: str) -> float:
        return self._latent_bytes(fmt) + self._index_key_bytes(fmt)

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return self._latent_bytes(fmt) + 0.0, self._index_key_bytes(fmt), 0.0

    def core_flops(self, n_ctx, phase: str):
        from .vocabulary import smin
        a = self.a
        if a.indexer is not None:
            return 2 * a.heads * (2 * a.kv_lora_rank + a.qk_rope_dim) * smin(n_ctx, a.indexer.top_k)
        if phase == "prefill":
            return (2 * a.heads * (a.qk_nope_dim + a.qk_rope_dim) + 2 * a.heads * a.v_head_dim) * n_ctx
        return 2 * a.heads * (2 * a.kv_lora_rank + a.qk_rope_dim) * n_ctx

    def decode_row_padding(self, q_len, tp):
        """64 ceil(r / 64) / r with r = q_len H / tp query rows per sequence and rank."""
        from .vocabulary import ceil_
        rows = q_len * self.a.heads / tp
        return MLA_ROW_TILE * ceil_(rows / MLA_ROW_TILE) / rows

    def index_flops(self, n_ctx):
        ix = self.a.indexer
        return indexer_flops(ix, n_ctx, ix.key_pool if ix is not None and ix.key_pool > 1 else 1)

    def kv_read(self, n_ctx):
        from .vocabulary import smin
        a, E, I = self.a, self.E, self.I
        if a.indexer is not None:
            return smin(n_ctx, a.indexer.top_k) * E + (0 if a.indexer.shared else n_ctx * I)
        return n_ctx * E

    def kv_stored(self, n_ctx):
        return n_ctx * (self.E + self.I)
