"""Bytes of KV-cache elements per number format (docs/reference/models.md, "KV-cache bytes per token per
layer"), shared by the attention families.

- one element: KV_BYTES[fmt] (bf16 2, fp8 1, fp4 0.5), B;
- n quantized elements with their scales: bf16 2 n; fp8 n + 4 n/128 (one fp32 scale per 128); fp4 n/2 + n/16
  (one e4m3 scale per 16), B;
- a DSA / DeepSeek-V4 indexer key of d_i elements: that scaled size (fp8: 132 B at d_i = 128).
"""

from __future__ import annotations

from ..formats import KV_BYTES


def element_bytes(fmt: str) -> float:
    """Bytes of one unscaled KV element in ``fmt`` (bf16 2, fp8 1, fp4 0.5)."""
    return KV_BYTES[fmt]


def scaled_bytes(n: int, fmt: str) -> float:
    """Bytes of n quantized elements incl. scales: bf16 2 n, fp8 n + 4 n/128, fp4 n/2 + n/16."""
    if fmt == "bf16":
        return 2.0 * n
    if fmt == "fp8":
        return n + 4.0 * n / 128
    return 0.5 * n + n / 16


def indexer_key_bytes(head_dim: int, fmt: str) -> float:
    """Bytes of one indexer key of ``head_dim`` elements (scales included), B."""
    return scaled_bytes(head_dim, fmt)
