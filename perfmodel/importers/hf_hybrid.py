"""Hugging Face config.json builders for this autumn's hybrid families (issue 55), used by ``hf_config``:

- ``Glm5NextForConditionalGeneration`` (GLM-5.3-Flash): ``layer_types`` linear_attention (Kimi Delta Attention,
  ``linear_attn_config`` num_heads / head_dim / short_conv_kernel_size) and deepseek_sparse_attention (NoPE MLA
  with a DSA indexer, ``index_kpool`` pooled index keys, ``indexer_types`` IndexShare), ``mlp_layer_types`` or
  ``first_k_dense_replace``, MoE with shared experts, mHC (``hc_mult``), ``num_nextn_predict_layers``.
- ``MiniMaxM3VLForConditionalGeneration`` / ``MiniMaxM3ForCausalLM`` (MiniMax-M3): GQA on every layer, block-sparse
  attention on the layers ``sparse_attention_config.sparse_attention_freq`` (or ``layer_types``
  minimax_m3_sparse) marks, with the block indexer of ``sparse_*`` (or flat ``index_*``) fields;
  ``moe_layer_freq`` / ``mlp_layer_types``, ``dense_intermediate_size``, ``shared_intermediate_size``,
  ``num_mtp_modules``.
- ``MuseGlimmerForConditionalGeneration`` / ``MuseGlimmerForCausalLM``: dense GQA, ``layer_types`` sliding/full
  with ``sliding_window``, the attention output gate (``use_attn_output_gate``).
- ``MotifForCausalLM`` (Motif-3): grouped latent attention with a sliding-window schedule, mHC, MoE with dense
  first layers, a plain MTP block (``hf_motif``).
"""

from __future__ import annotations

from typing import Callable

from ..errors import SpecError
from .hf_fields import ModelBuilder, attention_per_layer, index_shared
from .hf_motif import motif


def _schedule(m: ModelBuilder, key: str, allowed: dict[str, str], fallback: Callable[[int], str], why: str) -> list[str]:
    """Per-layer kind names from the list ``key`` (its entries mapped through ``allowed``); when the config has no
    such list, ``fallback(i)`` for every layer, recorded as an assumption (``why``)."""
    c = m.c
    lst = c.list(key, m.n_layers)
    if lst is None:
        c.assume(key, why)
        return [fallback(i) for i in range(m.n_layers)]
    out = []
    for i, v in enumerate(lst[: m.n_layers]):
        if v not in allowed:
            raise SpecError(f"layer {i} is {v!r}; expected one of {sorted(allowed)}", field=key)
        out.append(allowed[v])
    return out


def _moe_or_dense(m: ModelBuilder, experts_key: str, inter_key: str, dense_key: str, shared_inter_key: str | None):
    """(MoE spec name, dense spec name) of a DeepSeek-style MoE with shared experts."""
    c = m.c
    shared = c.int("n_shared_experts", 1 if shared_inter_key and c.has(shared_inter_key) else 0, positive=False)
    s_inter = c.int(shared_inter_key, None) if shared_inter_key else None
    moe = m.add("moe", m.moe(c.int(experts_key), c.int("num_experts_per_tok"), c.int(inter_key), shared=shared,
                             shared_intermediate=s_inter), "ffn")
    return moe, "dense"


def _residual(m: ModelBuilder) -> None:
    """mHC residual streams from ``hc_mult`` (when ``mhc`` is not false)."""
    c = m.c
    n = c.int("hc_mult", None)
    if n and n > 1 and c.raw.get("mhc", True) is not False:
        c.touch("mhc")
        m.residual = {"kind": "mhc", "streams": n}


def _glm5_next(m: ModelBuilder) -> None:
    c = m.c
    m.family = "glm"
    la = c.raw.get("linear_attn_config")
    if isinstance(la, dict):   # the checkpoint nests the KDA geometry
        c.touch("linear_attn_config")
        c.raw.update({"linear_num_heads": la.get("num_heads"), "linear_head_dim": la.get("head_dim"),
                      "linear_conv_kernel_dim": la.get("short_conv_kernel_size")})
    heads, hd = c.int("linear_num_heads"), c.int("linear_head_dim")
    kda = m.add("kda", {"kind": "linear", "variant": "kda", "k_heads": heads, "v_heads": heads, "head_k_dim": hd,
                        "head_v_dim": hd, "conv_kernel": c.int("linear_conv_kernel_dim", 4)}, "attention")
    c.touch("num_key_value_heads", "qk_head_dim", "mla_use_nope", "index_kpool_compress",
            "index_kpool_always_select_tail", "index_share_for_mtp_iteration")   # implied by the MLA/indexer fields
    spec = m.mla()
    kinds = _schedule(m, "layer_types", {"linear_attention": "kda", "deepseek_sparse_attention": "dsa",
                                         "full_attention": "dsa"},
                      lambda i: "dsa" if i % 4 == 3 else "kda", "3 linear_attention then 1 sparse, repeating")
    shared = index_shared(m) or [False] * m.n_layers
    dsa = m.add("dsa", spec, "attention")
    dsa_shared = dict(spec, indexer=dict(spec["indexer"], shared=True)) if "indexer" in spec else spec
    first = c.int("first_k_dense_replace", 0, positive=False)
    mlp = _schedule(m, "mlp_layer_types", {"dense": "dense", "sparse": "moe"},
                    lambda i: "dense" if i < first else "moe", f"dense below first_k_dense_replace {first}")
    moe, dense = _moe_or_dense(m, "n_routed_experts", "moe_intermediate_size", "intermediate_size", None)
    for i, (k, f) in enumerate(zip(kinds, mlp)):
        attn = kda if k == "kda" else (m.add("dsa_shared", dsa_shared, "attention") if shared[i] else dsa)
        ffn = moe if f == "moe" else m.add(dense, m.dense(), "ffn")
        m.schedule.append((attn, ffn))
    _residual(m)
    n_mtp = c.int("num_nextn_predict_layers", 0, positive=False)
    if n_mtp:
        m.mtp = {"layers": n_mtp, "attention": dsa, "ffn": moe}
    m.notes.append("KDA + NoPE sparse MLA hybrid; the vision tower is not imported")


def _minimax_m3(m: ModelBuilder) -> None:
    c = m.c
    m.family = "minimax"
    sp = c.raw.get("sparse_attention_config")
    sp = sp if isinstance(sp, dict) else {}
    c.touch("sparse_attention_config")
    pick = {"sparse_num_index_heads": "index_n_heads", "sparse_index_dim": "index_head_dim",
            "sparse_block_size": "index_block_size", "sparse_topk_blocks": "index_topk_blocks",
            "sparse_local_block": "index_local_blocks"}
    c.raw.update({flat: sp[k] for k, flat in pick.items() if k in sp})
    freq = sp.get("sparse_attention_freq")
    if isinstance(freq, list) and "layer_types" not in c.raw:
        c.raw["layer_types"] = ["minimax_m3_sparse" if f else "full_attention" for f in freq]
    if "mlp_layer_types" not in c.raw and isinstance(c.raw.get("moe_layer_freq"), list):
        c.touch("moe_layer_freq")
        c.raw["mlp_layer_types"] = ["sparse" if f else "dense" for f in c.raw["moe_layer_freq"]]
    gate = c.bool("attention_output_gate", False)
    full = m.gqa(gate=gate)
    ix = {"heads": c.int("index_n_heads"), "head_dim": c.int("index_head_dim"), "key_heads": 1,
          "block_size": c.int("index_block_size"), "top_k_blocks": c.int("index_topk_blocks"),
          "local_blocks": c.int("index_local_blocks", 1, positive=False)}
    kinds = _schedule(m, "layer_types", {"full_attention": "full", "minimax_m3_sparse": "msa"},
                      lambda i: "full", "full attention on every layer")
    mlp = _schedule(m, "mlp_layer_types", {"dense": "dense", "sparse": "moe"}, lambda i: "moe", "MoE on every layer")
    moe, _ = _moe_or_dense(m, "num_local_experts", "intermediate_size", "dense_intermediate_size",
                           "shared_intermediate_size")
    for k, f in zip(kinds, mlp):
        attn = m.add(k, full if k == "full" else dict(full, block_indexer=ix), "attention")
        ffn = moe if f == "moe" else m.add("dense", m.dense("dense_intermediate_size"), "ffn")
        m.schedule.append((attn, ffn))
    n_mtp = c.int("num_mtp_modules", None) or c.int("num_nextn_predict_layers", 0, positive=False)
    if n_mtp:
        m.mtp = {"layers": n_mtp, "attention": "msa" if "msa" in m.attention else "full", "ffn": moe}
    m.notes.append("block-sparse attention: each query attends top_k_blocks blocks of block_size keys, the local "
                   "block among them; the vision tower is not imported")


def _muse_glimmer(m: ModelBuilder) -> None:
    c = m.c
    m.family = "muse"
    gate = c.bool("use_attn_output_gate", False)
    ffn = m.add("mlp", m.dense(), "ffn")
    for attn in attention_per_layer(m, gate=gate):
        m.schedule.append((attn, ffn))
    m.notes.append("the perception encoder (vision tower) is not imported")


HYBRID_BUILDERS: dict[str, Callable[[ModelBuilder], None]] = {
    "Glm5NextForConditionalGeneration": _glm5_next,
    "Glm5NextForCausalLM": _glm5_next,
    "MiniMaxM3VLForConditionalGeneration": _minimax_m3,
    "MiniMaxM3ForCausalLM": _minimax_m3,
    "MuseGlimmerForConditionalGeneration": _muse_glimmer,
    "MuseGlimmerForCausalLM": _muse_glimmer,
    "MotifForCausalLM": motif,
}
