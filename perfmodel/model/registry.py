"""Spec -> operator family: the one place that looks at a spec's type.

Every attention and FFN kind of perfmodel.specs.model has exactly one family class here; callers ask the family
object (its costs, its bytes, its predicates) instead of testing the spec's type.
"""

from __future__ import annotations

from ..specs.model import GQA, MLA, CompressedAttention, DenseFFN, GroupedLatentAttention, LinearAttention, MoE
from .attention import AttentionFamily
from .dense import DenseFamily
from .dsv4 import CompressedFamily
from .ffn import FFNFamily
from .gla import GLAFamily
from .gqa import GQAFamily
from .linear import LinearFamily
from .mla import MLAFamily
from .moe import MoEFamily

ATTENTION_FAMILIES: dict[type, type[AttentionFamily]] = {
    GQA: GQAFamily, MLA: MLAFamily, CompressedAttention: CompressedFamily, GroupedLatentAttention: GLAFamily,
    LinearAttention: LinearFamily}
FFN_FAMILIES: dict[type, type[FFNFamily]] = {DenseFFN: DenseFamily, MoE: MoEFamily}


def _family_class(table: dict, spec):
    cls = table.get(type(spec))
    if cls is None:
        raise TypeError(type(spec))
    return cls


def attention_family(a, name: str = "") -> AttentionFamily:
    """The family object of attention spec ``a``; ``name`` (its key in ModelSpec.attention) names its byte
    symbols E_name, I_name, R_name."""
    return _family_class(ATTENTION_FAMILIES, a)(a, name)


def ffn_family(f, hidden: int) -> FFNFamily:
    """The family object of FFN spec ``f`` in a model of hidden size ``hidden``."""
    return _family_class(FFN_FAMILIES, f)(f, hidden)
