"""KV-cache bytes, per ../shared/reference/models.md ("KV-cache bytes per token per layer").

- GQA/MHA: 2 n_kv d b per token per layer; a sliding window W holds at most W tokens (fixed per sequence).
- MLA latent: (d_c + d_r) b in bf16; FlashMLA FP8 stores d_c in fp8 + one fp32 scale per 128 + RoPE part
  in bf16 (512 + 16 + 128 = 656 B); fp4 stores d_c in nvfp4 + RoPE in bf16.
- DSA indexer keys (not on IndexShare layers): d_idx b, in fp8 d_idx + fp32 scale per 128 (132 B).
- DeepSeek-V4: per context token, CSA (ratio 4) E/4 + I/4 and HCA (ratio 128) E/128, plus a fixed
  window-entry ring E per layer; E = head_dim entry (1024 B bf16; fp8 = 448 fp8 + 64 RoPE bf16 + 8 B scales = 584).
  In general a layer with compress ratio c stores (E + I)/c (I only where it owns an indexer).
  A dsv4 layer whose indexer is ``shared`` (DeepSeek-V4.1 cross-layer reuse) reads the compressed cache
  and the top-k selection of its KV-source layer and stores only its own window ring: 0 per token.
- Linear attention: constant state per sequence, v_heads d_k d_v fp32 + conv state (kernel-1) x conv dim bf16.
"""

from __future__ import annotations

from ..formats import KV_BYTES, check_kv_format
from ..specs.model import GQA, MLA, CompressedAttention, LinearAttention, ModelSpec


def _elem(fmt: str) -> float:
    return KV_BYTES[fmt]


def _scaled(n: int, fmt: str) -> float:
    """Bytes of n quantized elements incl. scales: fp8 one fp32 per 128, fp4 one e4m3 per 16."""
    if fmt == "bf16":
        return 2.0 * n
    if fmt == "fp8":
        return n + 4.0 * n / 128
    return 0.5 * n + n / 16


def indexer_key_bytes(head_dim: int, fmt: str) -> float:
    return _scaled(head_dim, fmt)


def dsv4_entry_bytes(a: CompressedAttention, fmt: str) -> float:
    """One compressed/window KV entry E: no-RoPE part quantized, RoPE part bf16."""
    if fmt == "bf16":
        return 2.0 * a.head_dim
    nope = a.head_dim - a.rope_dim
    return (nope + 8 if fmt == "fp8" else 0.5 * nope + nope / 16) + 2.0 * a.rope_dim


def layer_kv_per_token(a, fmt: str) -> float:
    """Bytes per context token for one layer (growing part)."""
    if isinstance(a, GQA):
        return 0.0 if a.window else 2 * a.kv_heads * a.head_dim * _elem(fmt)
    if isinstance(a, MLA):
        latent = (a.kv_lora_rank + a.qk_rope_dim) * 2.0 if fmt == "bf16" else _scaled(a.kv_lora_rank, fmt) + 2.0 * a.qk_rope_dim
        ix = indexer_key_bytes(a.indexer.head_dim, fmt) if a.indexer and not a.indexer.shared else 0.0
        return latent + ix
    if isinstance(a, CompressedAttention):
        if not a.compress_ratio or (a.indexer is not None and a.indexer.shared):
            return 0.0  # SWA only, or a reader of another layer's compressed cache (V4.1)
        e = dsv4_entry_bytes(a, fmt) / a.compress_ratio
        if a.indexer is not None and not a.indexer.shared:
            e += indexer_key_bytes(a.indexer.head_dim, fmt) / a.compress_ratio
        return e
    if isinstance(a, LinearAttention):
        return 0.0
    raise TypeError(type(a))


def layer_kv_fixed(a, fmt: str) -> float:
    """Bytes per sequence that do not grow with context (window rings, recurrent state)."""
    if isinstance(a, GQA) and a.window:
        return a.window * 2 * a.kv_heads * a.head_dim * _elem(fmt)
    if isinstance(a, CompressedAttention):
        return a.window * dsv4_entry_bytes(a, fmt)
    if isinstance(a, LinearAttention):
        state = a.v_heads * a.head_k_dim * a.head_v_dim * 4.0
        conv = (2 * a.k_heads * a.head_k_dim + a.v_heads * a.head_v_dim) * (a.conv_kernel - 1) * 2.0
        return state + conv
    return 0.0


def kv_bytes_per_token(m: ModelSpec, fmt: str) -> float:
    """Growing KV bytes per context token, summed over the layer schedule (MTP excluded)."""
    check_kv_format(fmt)
    return sum(g.count * layer_kv_per_token(m.attention[g.attention], fmt) for g in m.layers)


def kv_fixed_bytes_per_sequence(m: ModelSpec, fmt: str) -> float:
    """Fixed KV/state bytes per sequence (sliding-window rings, linear-attention state)."""
    check_kv_format(fmt)
    return sum(g.count * layer_kv_fixed(m.attention[g.attention], fmt) for g in m.layers)
