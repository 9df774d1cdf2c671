"""Derived figures of a model, for listings and tests."""

from __future__ import annotations

from collections import Counter

from ..formats import KV_FORMATS
from ..model import attention_family
from ..specs.model import ModelSpec
from .kv import kv_bytes_per_token, kv_fixed_bytes_per_sequence
from .params import param_counts


def attention_label(a) -> str:
    """Short name of attention kind ``a`` for listings (its family's label: gqa, mha, swa4096, mla, dsa, csa, ...)."""
    return attention_family(a).label


def model_summary(m: ModelSpec) -> dict:
    """Parameters, active parameters, KV bytes per token per format, and layers by kind."""
    p = param_counts(m)
    kinds: Counter = Counter()
    for g in m.layers:
        kinds[f"{attention_label(m.attention[g.attention])}+{m.ffn[g.ffn].kind}"] += g.count
    return {
        "id": m.id,
        "name": m.name,
        "confidence": m.confidence,
        "layers": m.num_layers,
        "hidden_size": m.hidden_size,
        "total_params": p.total,
        "active_params_per_token": p.active,
        "mtp_params": p.mtp,
        "engram_params": p.engram,
        "kv_bytes_per_token": {f: kv_bytes_per_token(m, f) for f in KV_FORMATS},
        "kv_fixed_bytes_per_sequence": {f: kv_fixed_bytes_per_sequence(m, f) for f in KV_FORMATS},
        "layers_by_kind": dict(kinds),
        "max_context": m.max_context,
        "published_total_params": m.published.total_params_b.value * 1e9 if m.published.total_params_b else None,
        "published_active_params": m.published.active_params_b.value * 1e9 if m.published.active_params_b else None,
    }
