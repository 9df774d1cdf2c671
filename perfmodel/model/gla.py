"""Grouped latent attention ("gla", Motif-3 GDLA): MLA's latent KV cache with one up-projected K/V head per group.
h hidden, H query heads in G groups (H/G heads each, n of them noise heads; S = H - G n signal heads), q_c / d_c
query / KV latent ranks, d_n / d_r / d_v no-RoPE, RoPE and value head dims, W an optional sliding window.

    params      q_a h q_c + q_b q_c H (d_n + d_r) + kv_a h (d_c + d_r) + kv_b d_c G (d_n + d_v) + o S d_v h
                (+ output gate q_c S d_v) (+ lambda h S)                                        elements
    KV entry E  the latent (d_c + d_r) 2 in bf16; fp8 d_c + 4 d_c/128 + 2 d_r; fp4 d_c/2 + d_c/16 + 2 d_r   B
    KV/token    E for a full layer; a window layer holds a ring of W entries (W E fixed per sequence), 0 grows
    keys        min(L, W) with a window, else L
    core FLOPs  per key: expanded (prefill) 2 H (d_n + d_r) + 2 H d_v (every head, noise heads included, scores
                its group's K and weights its group's V); absorbed (decode, MQA form) 2 H (2 d_c + d_r)
    KV read     keys E per sequence per step; stored keys E; shard 1 (the latent is replicated over TP)
    padding     as MLA: q_len H / tp query rows per sequence in 64-row MMA tiles (the MLA decode kernels)
    kernels     8 as MLA (+1 for the output gate)
    TP          splits whole groups: a TP degree must divide G
"""

from __future__ import annotations

from .attention import AttentionFamily
from .mla import MLA_ROW_TILE, latent_entry_bytes


class GLAFamily(AttentionFamily):
    kernel_family = "mla"

    def params(self, h: int) -> int:
        a = self.a
        s = a.signal_heads
        q = h * a.q_lora_rank + a.q_lora_rank * a.heads * (a.qk_nope_dim + a.qk_rope_dim)
        kv_a = h * (a.kv_lora_rank + a.qk_rope_dim)
        kv_b = a.kv_lora_rank * a.groups * (a.qk_nope_dim + a.v_head_dim)
        o = s * a.v_head_dim * h
        gate = a.q_lora_rank * s * a.v_head_dim if a.output_gate else 0
        lam = h * s if a.head_lambda else 0
        return q + kv_a + kv_b + o + gate + lam

    @property
    def tp_heads(self) -> int:
        return self.a.groups

    @property
    def label(self) -> str:
        return f"gla-swa{self.a.window}" if self.a.window else "gla"

    @property
    def kernels(self) -> int:
        return 8 + (1 if self.a.output_gate else 0)

    def _entry(self, fmt: str) -> float:
        return latent_entry_bytes(self.a.kv_lora_rank, self.a.qk_rope_dim, fmt)

    def kv_per_token(self, fmt: str) -> float:
        return 0.0 if self.a.window else self._entry(fmt)

    def kv_fixed(self, fmt: str) -> float:
        return self.a.window * self._entry(fmt) if self.a.window else 0.0

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return self._entry(fmt), 0.0, 0.0

    def _keys(self, n_ctx):
        from .vocabulary import smin
        return smin(n_ctx, self.a.window) if self.a.window else n_ctx

    def core_flops(self, n_ctx, phase: str):
        a = self.a
        if phase == "prefill":
            per_key = 2 * a.heads * (a.qk_nope_dim + a.qk_rope_dim) + 2 * a.heads * a.v_head_dim
        else:
            per_key = 2 * a.heads * (2 * a.kv_lora_rank + a.qk_rope_dim)
        return per_key * self._keys(n_ctx)

    def decode_row_padding(self, q_len, tp):
        """64 ceil(r / 64) / r with r = q_len H / tp query rows per sequence and rank (as MLA)."""
        from .vocabulary import ceil_
        rows = q_len * self.a.heads / tp
        return MLA_ROW_TILE * ceil_(rows / MLA_ROW_TILE) / rows

    def kv_read(self, n_ctx):
        return self._keys(n_ctx) * self.E

    def kv_stored(self, n_ctx):
        return self._keys(n_ctx) * self.E
