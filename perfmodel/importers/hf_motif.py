"""Hugging Face config.json builder for Motif-3 (``MotifForCausalLM``, ``model_type`` motif, ``attention_cls`` gdla),
used by ``hf_config``. Field names and their meaning as the Motif-3 port's ``MotifArgs`` reads them (tenstorrent
tt-metal models/demos/motif3/reference/config.py, which "mirrors every config.json field the model actually
consumes"; docs/reference/models.md):

- grouped differential latent attention (``gla``): ``num_attention_heads`` q heads in ``num_noise_heads`` groups,
  each ``(heads - noise) / noise`` signal heads + 1 noise head, one KV head per group (``num_key_value_heads``);
  ``q_lora_rank``, ``kv_lora_rank``; ``head_dim`` = no-RoPE + ``qk_rope_head_dim``; ``v_head_dim``;
  ``elementwise_attn_output_gate`` (sigmoid gate on the signal heads); ``diff_v2`` (a per-signal-head lambda);
- sliding windows: with ``use_sliding_window``, layer l attends ``sliding_window + 1`` keys (the current one
  included) when ``l % sliding_window_period != 0`` (``sliding_window_pattern`` interleave) or on every layer
  (``all``); the other layers are global;
- FFN: dense (``intermediate_size``) below ``n_dense_first_layers``, MoE from there where
  ``(l + 1) % interleave_moe_layer_step == 0``: ``num_experts`` routed, ``experts_top_k`` per token,
  ``num_shared_experts`` shared, all ``moe_intermediate_size`` wide;
- mHC: ``mhc_enabled`` with ``mhc_expansion_rate`` residual streams;
- MTP: ``num_nextn_predict_layers`` plain pre-norm blocks (no mHC) with sliding-window attention and the dense MLP
  (the port's MotifMTP: the MTP config is the model's with ``sliding_window_pattern='all'``,
  ``interleave_moe_layer_step=0``, ``mhc_enabled=False``).
"""

from __future__ import annotations

from ..errors import SpecError
from .hf_fields import ModelBuilder


def _gla(m: ModelBuilder) -> dict:
    """The grouped latent attention kind (no window) from the GDLA fields."""
    c = m.c
    heads, noise = c.int("num_attention_heads"), c.int("num_noise_heads")
    groups = c.int("num_key_value_heads", noise)
    if groups != noise or heads % noise:
        raise SpecError(f"GDLA needs one KV head per noise head and heads a multiple of them; got {heads} heads, "
                        f"{noise} noise heads, {groups} KV heads", field="num_noise_heads")
    rope = c.int("qk_rope_head_dim", positive=False)
    head_dim = c.int("head_dim")
    if head_dim <= rope:
        raise SpecError(f"{head_dim} is not above qk_rope_head_dim {rope}", field="head_dim")
    c.touch("attention_cls", "headwise_attn_output_gate", "grouped_ratio", "k_ratio")
    if str(c.raw.get("attention_cls", "gdla")).lower() != "gdla":
        raise SpecError(f"only gdla is imported for Motif, got {c.raw.get('attention_cls')!r}", field="attention_cls")
    return {"kind": "gla", "heads": heads, "groups": groups, "noise_heads_per_group": noise // groups,
            "q_lora_rank": c.int("q_lora_rank"), "kv_lora_rank": c.int("kv_lora_rank"),
            "qk_nope_dim": head_dim - rope, "qk_rope_dim": rope, "v_head_dim": c.int("v_head_dim"),
            "output_gate": c.bool("elementwise_attn_output_gate", False), "head_lambda": c.bool("diff_v2", False)}


def _window(m: ModelBuilder) -> tuple[int | None, str, int]:
    """(keys a sliding layer attends incl. the current one, pattern, period); None when windows are off."""
    c = m.c
    if not c.bool("use_sliding_window", False) or not c.has("sliding_window"):
        return None, "interleave", 1
    pattern = str(c.raw.get("sliding_window_pattern", "interleave"))
    c.touch("sliding_window_pattern")
    if pattern not in ("interleave", "all"):
        raise SpecError(f"expected interleave or all, got {pattern!r}", field="sliding_window_pattern")
    return c.int("sliding_window") + 1, pattern, c.int("sliding_window_period", 4)


def motif(m: ModelBuilder) -> None:
    c = m.c
    m.family = "motif"
    gla = _gla(m)
    keys, pattern, period = _window(m)
    first_dense = c.int("n_dense_first_layers", 0, positive=False)
    step = c.int("interleave_moe_layer_step", 1, positive=False)
    experts = c.int("num_experts", 0, positive=False)
    if experts:
        inter = c.int("moe_intermediate_size")
        m.add("moe", m.moe(experts, c.int("experts_top_k"), inter, shared=c.int("num_shared_experts", 0,
                                                                               positive=False)), "ffn")
    for i in range(m.n_layers):
        sliding = keys is not None and (pattern == "all" or i % period != 0)
        attn = m.add("swa", dict(gla, window=keys), "attention") if sliding else m.add("global", gla, "attention")
        moe = experts and step and i >= first_dense and (i + 1) % step == 0
        m.schedule.append((attn, "moe" if moe else m.add("dense", m.dense(), "ffn")))
    if c.bool("mhc_enabled", False):
        m.residual = {"kind": "mhc", "streams": c.int("mhc_expansion_rate")}
    c.touch("mhc_sinkhorn_iters", "mhc_identity_init", "mhc_h_post_alpha_end", "swa_rope_theta", "hidden_clamp",
            "polynorm_bias_clamp", "polynorm_output_scale", "polynorm_output_scale_per_layer", "original_seq_len",
            "score_before_experts", "load_balance_coeff", "route_norm", "route_scale", "score_func")
    n_mtp = c.int("num_nextn_predict_layers", 0, positive=False)
    if n_mtp:
        mtp_attn = m.add("swa", dict(gla, window=keys), "attention") if keys else m.add("global", gla, "attention")
        m.mtp = {"layers": n_mtp, "attention": mtp_attn, "ffn": m.add("dense", m.dense(), "ffn"), "mhc": False}
    m.notes.append("grouped differential latent attention (GDLA): one latent per token and layer, up-projected to "
                   "one KV head per group of signal heads and a noise head; sliding layers keep sliding_window + 1 "
                   "keys")
