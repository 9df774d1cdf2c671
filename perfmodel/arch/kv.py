"""KV-cache bytes, per docs/reference/models.md ("KV-cache bytes per token per layer").

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

from ..formats import check_kv_format
from ..model import attention_family
from ..model.dsv4 import entry_bytes_of as dsv4_entry_bytes
from ..model.kv_bytes import indexer_key_bytes
from ..specs.model import ModelSpec

__all__ = ["dsv4_entry_bytes", "indexer_key_bytes", "kv_bytes_per_token", "kv_fixed_bytes_per_sequence",
           "layer_kv_fixed", "layer_kv_per_token"]


def layer_kv_per_token(a, fmt: str) -> float:
    """Bytes per context token for one layer of attention kind ``a`` (growing part), B."""
    return attention_family(a).kv_per_token(fmt)


def layer_kv_fixed(a, fmt: str) -> float:
    """Bytes per sequence that do not grow with context (window rings, recurrent state), B."""
    return attention_family(a).kv_fixed(fmt)


def kv_bytes_per_token(m: ModelSpec, fmt: str) -> float:
    """Growing KV bytes per context token, summed over the layer schedule (MTP excluded)."""
    check_kv_format(fmt)
    return sum(g.count * layer_kv_per_token(m.attention[g.attention], fmt) for g in m.layers)


def kv_fixed_bytes_per_sequence(m: ModelSpec, fmt: str) -> float:
    """Fixed KV/state bytes per sequence (sliding-window rings, linear-attention state)."""
    check_kv_format(fmt)
    return sum(g.count * layer_kv_fixed(m.attention[g.attention], fmt) for g in m.layers)
