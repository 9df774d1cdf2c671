"""Linear attention with a constant recurrent state per sequence: Gated DeltaNet (gdn) and Kimi Delta Attention
(kda). h hidden, H_k / H_v key / value heads of d_k / d_v, conv kernel K.

    params      gdn: q, k, v, output gate h (2 H_k d_k + 2 H_v d_v) + beta, alpha h 2 H_v + conv + out H_v d_v h
                kda: q, k, v h (2 H_k d_k + H_v d_v) + low-rank forget and output gates (rank = head dim)
                     (h d_k + d_k H_k d_k) + (h d_v + d_v H_v d_v) + beta h H_v + conv + out H_v d_v h
                conv (2 H_k d_k + H_v d_v) K                                                       elements
    state R     H_v d_k d_v 4 (fp32) + (2 H_k d_k + H_v d_v)(K - 1) 2 (bf16 conv state) per sequence   B
    core FLOPs  4 H_v d_k d_v per token (state update and read-out), independent of L
    KV read     2 R (read + write the state); stored R; written per token 0; shard tp (heads split)
    kernels     6: in-projection, short convolution, gating, chunked recurrence, gated norm, out-projection
"""

from __future__ import annotations

from .attention import AttentionFamily


class LinearFamily(AttentionFamily):
    has_linear_state = True

    def params(self, h: int) -> int:
        a = self.a
        qk = a.k_heads * a.head_k_dim
        v = a.v_heads * a.head_v_dim
        conv = (2 * qk + v) * a.conv_kernel
        if a.variant == "gdn":
            # q, k, v, output gate z, beta and alpha per v-head, conv, out
            return h * (2 * qk + 2 * v) + h * 2 * a.v_heads + conv + v * h
        # KDA: q, k, v; low-rank forget gate and output gate (rank = head dim); beta; conv; out
        gates = (h * a.head_k_dim + a.head_k_dim * qk) + (h * a.head_v_dim + a.head_v_dim * v)
        return h * (2 * qk + v) + gates + h * a.v_heads + conv + v * h

    @property
    def tp_heads(self) -> int:
        return self.a.v_heads

    @property
    def label(self) -> str:
        return self.a.variant

    @property
    def kernels(self) -> int:
        return 6

    def kv_per_token(self, fmt: str) -> float:
        return 0.0

    def kv_fixed(self, fmt: str) -> float:
        a = self.a
        state = a.v_heads * a.head_k_dim * a.head_v_dim * 4.0
        conv = (2 * a.k_heads * a.head_k_dim + a.v_heads * a.head_v_dim) * (a.conv_kernel - 1) * 2.0
        return state + conv

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        return 0.0, 0.0, self.kv_fixed(fmt)

    def core_flops(self, n_ctx, phase: str):
        a = self.a
        return 4 * a.v_heads * a.head_k_dim * a.head_v_dim + 0 * n_ctx

    def kv_read(self, n_ctx):
        return 2 * self.R

    def kv_stored(self, n_ctx):
        return self.R

    def kv_write(self):
        """0: the state write is counted in kv_read."""
        import sympy as sp
        return sp.Integer(0)

    def shard(self, tp):
        return tp
