"""Whole-model questions answered from the operator families of a ModelSpec (no spec type tests)."""

from __future__ import annotations

from ..specs.model import ModelSpec
from .attention import AttentionFamily
from .ffn import FFNFamily
from .registry import attention_family, ffn_family


def attention_families(m: ModelSpec) -> dict[str, AttentionFamily]:
    """Attention table name -> family object."""
    return {n: attention_family(a, n) for n, a in m.attention.items()}


def ffn_families(m: ModelSpec) -> dict[str, FFNFamily]:
    """FFN table name -> family object."""
    return {n: ffn_family(f, m.hidden_size) for n, f in m.ffn.items()}


def is_moe(m: ModelSpec) -> bool:
    """True if any FFN kind of the model is a mixture of experts."""
    return any(F.is_moe for F in ffn_families(m).values())


def max_experts(m: ModelSpec) -> int:
    """Most routed experts of any FFN kind (0 for a dense model)."""
    return max((F.experts for F in ffn_families(m).values() if F.is_moe), default=0)


def tp_heads(m: ModelSpec) -> list[int]:
    """Head counts attention TP splits, one per attention kind ([1] for a model without attention kinds)."""
    return [A.tp_heads for A in attention_families(m).values()] or [1]


def uses_mla(m: ModelSpec) -> bool:
    """True if any attention kind runs on the MLA decode kernels (kernel family 'mla')."""
    return any(A.kernel_family == "mla" for A in attention_families(m).values())
