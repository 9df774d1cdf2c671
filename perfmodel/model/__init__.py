"""Operator families: one class per attention kind and per FFN kind that states its own parameter counts, KV bytes,
sympy FLOPs and bytes terms, kernel count and kernel family, and the predicates callers ask (is_moe, experts,
has_linear_state, tp_heads). The pydantic specs (perfmodel.specs.model) stay the input schema; ``registry`` wraps a
spec into its family in one place.
"""

from .attention import AttentionFamily
from .ffn import FFNFamily
from .queries import attention_families, ffn_families, is_moe, max_experts, tp_heads, uses_mla
from .registry import attention_family, ffn_family

__all__ = ["AttentionFamily", "FFNFamily", "attention_families", "attention_family", "ffn_families", "ffn_family",
           "is_moe", "max_experts", "tp_heads", "uses_mla"]
