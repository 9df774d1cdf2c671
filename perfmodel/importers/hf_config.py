"""Hugging Face ``config.json`` -> model spec mapping (validates as ``perfmodel.specs.model.ModelSpec``).

Supported ``architectures`` (first entry decides):

- ``LlamaForCausalLM``, ``MistralForCausalLM``, ``Qwen2ForCausalLM``, ``Qwen3ForCausalLM``: dense GQA
  (a ``sliding_window`` / ``layer_types`` / ``use_sliding_window`` + ``max_window_layers`` becomes a window).
- ``MixtralForCausalLM``: GQA + MoE (``num_local_experts``, ``num_experts_per_tok``, ``intermediate_size``).
- ``Qwen3MoeForCausalLM``: GQA + MoE (``num_experts``, ``moe_intermediate_size``, ``decoder_sparse_step``,
  ``mlp_only_layers``).
- ``Qwen3NextForCausalLM``: Gated DeltaNet (``linear_*``) + full GQA layers, MoE with a shared expert.
- ``DeepseekV3ForCausalLM`` (DeepSeek-V3/R1, Kimi K2), ``DeepseekV32ForCausalLM``, ``GlmMoeDsaForCausalLM``
  (GLM-5): MLA (``q_lora_rank``, ``kv_lora_rank``, ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``),
  DSA indexer (``index_n_heads``, ``index_head_dim``, ``index_topk``), ``first_k_dense_replace``,
  ``moe_layer_freq``, ``n_routed_experts``, ``num_experts_per_tok``, ``n_shared_experts``,
  ``moe_intermediate_size``, ``num_nextn_predict_layers`` -> ``mtp``; GLM-5.2 IndexShare from ``indexer_types`` /
  ``index_topk_pattern`` / ``index_topk_freq`` + ``index_skip_topk_offset``, ``index_share_for_mtp_iteration``.
- ``Glm4MoeForCausalLM`` (GLM-4.5/4.6/4.7): GQA + the DeepSeek-style MoE layout, MTP.
- ``GptOssForCausalLM``: ``layer_types`` sliding/full, ``sliding_window``, attention sinks, MoE.
- ``Llama4ForConditionalGeneration`` / ``Llama4ForCausalLM``: ``text_config``; chunked attention
  (``attention_chunk_size``, on RoPE layers per ``no_rope_layers``) as a window; MoE layers per ``moe_layers`` /
  ``interleave_moe_layer_step`` with one shared expert; dense layers of ``intermediate_size_mlp``.

- ``Qwen3_5MoeForConditionalGeneration`` / ``Qwen3_5MoeForCausalLM`` and the dense ``Qwen3_5For*`` (Qwen3.5): as
  Qwen3-Next (dense MLP when the config has no ``num_experts``), with the full layers' output gate modelled
  (``attn_output_gate``); ``KimiK25ForConditionalGeneration`` (Kimi K2.5/K2.6): the
  DeepSeek-V3 path on its ``text_config``.
- GLM-5.3-Flash, MiniMax-M3 and Muse Glimmer: ``hf_hybrid`` (KDA + NoPE DSA with pooled index keys and mHC; GQA
  with a block indexer; sliding/full GQA with an output gate).

Every field the config does not state and the import assumed, and every field it did not read, is a line of the
report (``import_hf_config_report``; the CLI prints them on stderr); an import that assumed anything is written
with ``confidence: low``. ``import_hf_config_file`` records the source revision and the config's sha256.

What a config.json cannot tell (the imported spec says so in ``notes``): published parameter counts, IndexShare
when the config omits its fields (older GLM-5.2 copies), the published MTP size, and small tensors the schema
ignores (norms, biases, sinks, output gates).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import ValidationError

from ..errors import SpecError, pydantic_to_spec_error, short
from ..fileio import load_json
from ..specs.model import ModelSpec
from .hf_fields import Cfg, ModelBuilder, attention_per_layer, index_shared, unread_fields
from .hf_hybrid import HYBRID_BUILDERS

DEFAULT_SOURCE = "Hugging Face config.json"


# ---------------------------------------------------------------- per-family builders
def _dense_gqa(m: ModelBuilder) -> None:
    """Llama / Mistral / Qwen2 / Qwen3 dense: one GQA kind (maybe windowed on some layers), one MLP."""
    c = m.c
    m.family = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral"}.get(c.arch, "qwen")
    ffn = m.add("mlp", m.dense(), "ffn")
    for attn in attention_per_layer(m):
        m.schedule.append((attn, ffn))


def _mixtral(m: ModelBuilder) -> None:
    c = m.c
    m.family = "mixtral"
    ffn = m.add("moe", m.moe(c.int("num_local_experts"), c.int("num_experts_per_tok"), c.int("intermediate_size")),
                "ffn")
    for attn in attention_per_layer(m):
        m.schedule.append((attn, ffn))


def _qwen_moe_layers(m: ModelBuilder, moe_spec: dict) -> list[str]:
    """Qwen2/3-MoE rule: layer i is MoE unless in mlp_only_layers, and if (i + 1) % decoder_sparse_step == 0."""
    c = m.c
    c.touch("intermediate_size")   # read for the dense layers only, when there are any
    only: set[int] = set(c.int_list("mlp_only_layers") or [])
    step = c.int("decoder_sparse_step", 1)
    out = []
    for i in range(m.n_layers):
        if i not in only and (i + 1) % step == 0:
            out.append(m.add("moe", moe_spec, "ffn"))
        else:
            out.append(m.add("dense", m.dense(), "ffn"))
    return out


def _qwen3_moe(m: ModelBuilder) -> None:
    c = m.c
    m.family = "qwen"
    shared_i = c.int("shared_expert_intermediate_size", None)
    moe = m.moe(c.int("num_experts"), c.int("num_experts_per_tok"), c.int("moe_intermediate_size"),
                shared=1 if shared_i else 0, shared_intermediate=shared_i)
    ffns = _qwen_moe_layers(m, moe)
    for attn, ffn in zip(attention_per_layer(m), ffns):
        m.schedule.append((attn, ffn))


def _qwen3_next(m: ModelBuilder, gate: bool = False) -> None:
    """Qwen3-Next / Qwen3.5: Gated DeltaNet + gated full attention every ``full_attention_interval`` layers, MoE.
    ``gate``: model the full layers' output gate (Qwen3.5 entries; the Qwen3-Next entry predates the option)."""
    c = m.c
    m.family = "qwen"
    lt = m.layer_types()
    c.touch("full_attention_interval")   # layer_types, when present, states the same schedule layer by layer
    if lt is None:
        every = c.int("full_attention_interval", 4)
        m.notes.append(f"layer_types missing: full attention every {every}th layer (full_attention_interval)")
        lt = ["full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(m.n_layers)]
    gdn = {"kind": "linear", "variant": "gdn", "k_heads": c.int("linear_num_key_heads"),
           "v_heads": c.int("linear_num_value_heads"), "head_k_dim": c.int("linear_key_head_dim"),
           "head_v_dim": c.int("linear_value_head_dim"), "conv_kernel": c.int("linear_conv_kernel_dim", 4)}
    if c.has("num_experts"):
        shared_i = c.int("shared_expert_intermediate_size", None)
        moe = m.moe(c.int("num_experts"), c.int("num_experts_per_tok"), c.int("moe_intermediate_size"),
                    shared=1 if shared_i else 0, shared_intermediate=shared_i)
        ffns, mtp_ffn = _qwen_moe_layers(m, moe), "moe"
    else:   # the dense Qwen3.5 sizes (e.g. 27B): one MLP of intermediate_size on every layer
        ffns, mtp_ffn = [m.add("mlp", m.dense(), "ffn")] * m.n_layers, "mlp"
    for i, (t, ffn) in enumerate(zip(lt, ffns)):
        if t == "linear_attention":
            attn = m.add("gdn", gdn, "attention")
        elif t == "full_attention":
            attn = m.add("full", m.gqa(gate=gate and c.bool("attn_output_gate", True)), "attention")
        else:
            raise SpecError(f"layer {i} is {t!r}; expected linear_attention or full_attention", field="layer_types")
        m.schedule.append((attn, ffn))
    if c.bool("attn_output_gate", True) and not gate:
        m.notes.append("the full-attention output gate (q_proj doubled) is not modelled (~0.1% of parameters)")
    if c.has("mtp_num_hidden_layers") or c.has("num_nextn_predict_layers"):
        n = c.int("mtp_num_hidden_layers", None) or c.int("num_nextn_predict_layers", None)
        if n:
            m.mtp = {"layers": n, "attention": "full", "ffn": mtp_ffn}


def _deepseek_layout(m: ModelBuilder, attn_key: str, attn_spec: dict) -> None:
    """DeepSeek-V3 / GLM-4.5 layout: first_k_dense_replace dense layers, then MoE every moe_layer_freq (or, where the
    config lists it, ``mlp_layer_types``: dense / sparse per layer)."""
    c = m.c
    shared = index_shared(m) if "indexer" in attn_spec else None
    attn = m.add(attn_key, attn_spec, "attention")
    per_layer_attn = [attn] * m.n_layers
    if shared and any(shared):
        shared_spec = dict(attn_spec, indexer=dict(attn_spec["indexer"], shared=True))
        per_layer_attn = [m.add(f"{attn_key}_shared", shared_spec, "attention") if s else attn for s in shared]
        if shared[0]:
            raise SpecError("layer 0 cannot reuse an earlier layer's top-k", field="indexer_types")
        m.notes.append(f"IndexShare: {sum(shared)} of {m.n_layers} layers reuse the previous full layer's top-k")
    first_dense = c.int("first_k_dense_replace", 0, positive=False)
    freq = c.int("moe_layer_freq", 1)
    experts = c.int("n_routed_experts", None)
    moe = None
    if experts:
        n_shared = c.int("n_shared_experts", 0, positive=False)
        moe = m.moe(experts, c.int("num_experts_per_tok"), c.int("moe_intermediate_size"), shared=n_shared)
    kinds = c.list("mlp_layer_types", m.n_layers)   # transformers v5 configs state the FFN of every layer
    if kinds is not None and any(k not in ("dense", "sparse") for k in kinds[: m.n_layers]):
        raise SpecError("expected 'dense' or 'sparse' entries", field="mlp_layer_types")
    for i in range(m.n_layers):
        is_moe = kinds[i] == "sparse" if kinds is not None else (i >= first_dense and i % freq == 0)
        if moe is not None and is_moe:
            m.schedule.append((per_layer_attn[i], m.add("moe", moe, "ffn")))
        else:
            m.schedule.append((per_layer_attn[i], m.add("dense", m.dense(), "ffn")))
    n_mtp = c.int("num_nextn_predict_layers", 0, positive=False)
    if n_mtp:
        mtp_attn = f"{attn_key}_shared" if (shared and any(shared) and c.bool("index_share_for_mtp_iteration")) \
            else attn
        if mtp_attn not in m.attention:
            mtp_attn = attn
        m.mtp = {"layers": n_mtp, "attention": mtp_attn, "ffn": "moe" if moe is not None else "dense"}
        m.notes.append(f"{n_mtp} MTP layer(s) from num_nextn_predict_layers; their published size is not in config.json")


def _deepseek(m: ModelBuilder) -> None:
    c = m.c
    c.touch("model_type", "num_key_value_heads", "head_dim", "qk_head_dim")   # MLA: no KV heads or head_dim
    mt = str(c.raw.get("model_type", ""))
    m.family = "glm" if c.arch.startswith("Glm") else ("kimi" if "kimi" in mt else "deepseek")
    spec = m.mla()
    _deepseek_layout(m, "dsa" if "indexer" in spec else "mla", spec)
    if "indexer" in spec and not any("IndexShare" in n for n in m.notes):
        m.notes.append("every layer gets its own DSA indexer: the config has no IndexShare fields "
                       "(indexer_types, index_topk_pattern, index_topk_freq)")
        if c.arch == "GlmMoeDsaForCausalLM":   # GLM-5.2/5.3 share the indexer across layers (IndexShare)
            c.assume("index_topk_freq", "1 (an own DSA indexer on every layer; GLM-5.2/5.3 configs with "
                                        "IndexShare set index_topk_freq 4 and index_skip_topk_offset 3)")


def _glm4_moe(m: ModelBuilder) -> None:
    m.family = "glm"
    _deepseek_layout(m, "gqa", m.gqa())
    if m.c.has("partial_rotary_factor"):
        m.notes.append("partial_rotary_factor does not change sizes; ignored")


def _gpt_oss(m: ModelBuilder) -> None:
    c = m.c
    m.family = "gpt-oss"
    top_k = c.int("num_experts_per_tok", None) or c.int("experts_per_token")
    experts = c.int("num_local_experts", None) or c.int("num_experts")
    ffn = m.add("moe", m.moe(experts, top_k, c.int("intermediate_size")), "ffn")
    if m.layer_types() is None:  # the original release alternates sliding (even) and full (odd)
        c.raw = {**c.raw, "layer_types": ["sliding_attention" if i % 2 == 0 else "full_attention"
                                          for i in range(m.n_layers)]}
        m.notes.append("layer_types missing: assumed sliding on even layers, full on odd (gpt-oss release)")
    for attn in attention_per_layer(m, sinks=True):
        m.schedule.append((attn, ffn))
    m.notes.append("attention/expert/router biases and the per-head attention sinks are ignored (< 0.1%)")


def _llama4(m: ModelBuilder) -> None:
    c = m.c
    m.family = "llama"
    n = m.n_layers
    nope = c.int_list("no_rope_layers")
    if not nope:
        every = c.int("no_rope_layer_interval", 4)
        nope = [int((i + 1) % every != 0) for i in range(n)]  # 1 = RoPE (chunked), 0 = NoPE (full)
    if len(nope) < n:
        raise SpecError(f"has {len(nope)} entries, fewer than num_hidden_layers={n}", field="no_rope_layers")
    chunk = c.int("attention_chunk_size", None)
    moe_layers = c.int_list("moe_layers")
    if moe_layers is None:
        step = c.int("interleave_moe_layer_step", 1)
        moe_layers = list(range(step - 1, n, step))
    moe_set = set(moe_layers)
    moe = m.moe(c.int("num_local_experts"), c.int("num_experts_per_tok"), c.int("intermediate_size"), shared=1)
    for i in range(n):
        if nope[i] and chunk:
            attn = m.add("chunked", m.gqa(window=chunk), "attention")
        else:
            attn = m.add("global", m.gqa(), "attention")
        ffn = m.add("moe", moe, "ffn") if i in moe_set else m.add("dense", m.dense("intermediate_size_mlp"), "ffn")
        m.schedule.append((attn, ffn))
    if chunk:
        m.notes.append(f"chunked attention (attention_chunk_size {chunk}) on RoPE layers is modelled as a sliding "
                       f"window of {chunk}: an upper bound on its KV and attention FLOPs (a chunk holds L mod {chunk} "
                       f"tokens)")
    m.notes.append("multimodal checkpoint: only the text model is imported")


def _qwen3_5(m: ModelBuilder) -> None:
    _qwen3_next(m, gate=True)


_BUILDERS: dict[str, Callable[[ModelBuilder], None]] = {
    "LlamaForCausalLM": _dense_gqa,
    "MistralForCausalLM": _dense_gqa,
    "Qwen2ForCausalLM": _dense_gqa,
    "Qwen3ForCausalLM": _dense_gqa,
    "MixtralForCausalLM": _mixtral,
    "Qwen3MoeForCausalLM": _qwen3_moe,
    "Qwen3NextForCausalLM": _qwen3_next,
    "DeepseekV3ForCausalLM": _deepseek,
    "DeepseekV32ForCausalLM": _deepseek,
    "GlmMoeDsaForCausalLM": _deepseek,
    "Glm4MoeForCausalLM": _glm4_moe,
    "GptOssForCausalLM": _gpt_oss,
    "Llama4ForConditionalGeneration": _llama4,
    "Llama4ForCausalLM": _llama4,
    "Qwen3_5MoeForConditionalGeneration": _qwen3_5,
    "Qwen3_5MoeForCausalLM": _qwen3_5,
    "Qwen3_5ForConditionalGeneration": _qwen3_5,
    "Qwen3_5ForCausalLM": _qwen3_5,
    "KimiK25ForConditionalGeneration": _deepseek,
    **HYBRID_BUILDERS,
}
SUPPORTED_ARCHITECTURES = tuple(sorted(_BUILDERS))


# ---------------------------------------------------------------- assembling the mapping
def describe_layers(idx: list[int], n: int | None = None) -> str:
    """Human description of layer indices: '0-2', 'even 0-34', '3-47 every 4', 'all but 3-47 every 4', '0, 5, 7-9'."""
    if n is not None:
        rest = sorted(set(range(n)) - set(idx))
        if len(rest) > 1 and len({b - a for a, b in zip(rest, rest[1:])}) == 1 and len(idx) > len(rest):
            return f"all but {describe_layers(rest)}"
    if len(idx) == 1:
        return str(idx[0])
    diffs = {b - a for a, b in zip(idx, idx[1:])}
    a, b = idx[0], idx[-1]
    if diffs == {1}:
        return f"{a}-{b}"
    if len(diffs) == 1:
        d = diffs.pop()
        if d == 2:
            return f"{'even' if a % 2 == 0 else 'odd'} {a}-{b}"
        return f"{a}-{b} every {d}"
    runs, start = [], idx[0]
    for prev, cur in zip(idx, [*idx[1:], None]):
        if cur is None or cur != prev + 1:
            runs.append(f"{start}-{prev}" if prev > start else str(start))
            if cur is not None:
                start = cur
    return ", ".join(runs)


def _group(schedule: list[tuple[str, str]]) -> list[dict]:
    order: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(schedule):
        order.setdefault(key, []).append(i)
    out = []
    for (attn, ffn), idx in order.items():
        g = {"count": len(idx), "attention": attn, "ffn": ffn}
        if len(order) > 1:
            g["where"] = describe_layers(idx, len(schedule))
        out.append(g)
    return out


def _native_weights(raw: dict) -> str:
    q = raw.get("quantization_config")
    if isinstance(q, dict):
        method = str(q.get("quant_method", "")).lower()
        if method == "fp8":
            return "fp8"
        if method == "mxfp4":
            return "mxfp4+bf16"
        if method == "compressed-tensors":
            text = json.dumps(q.get("config_groups", {})).lower()
            if '"num_bits": 4' in text:
                return "int4" if '"type": "int"' in text else "fp4"
            if '"num_bits": 8' in text:
                return "fp8"
        if method:
            return method
    dtype = str(raw.get("torch_dtype") or raw.get("dtype") or "bfloat16")
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "imported-model"


def _hf_repo(raw: dict) -> str | None:
    name = raw.get("_name_or_path")
    if isinstance(name, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", name):
        return name
    return None


def _architecture(config: Any) -> str:
    """The first ``architectures`` entry, if this importer has a builder for it (else a SpecError)."""
    if not isinstance(config, dict):
        raise SpecError(f"expected a JSON object at the top level, got {type(config).__name__}")
    archs = config.get("architectures")
    if not archs or not isinstance(archs, list) or not isinstance(archs[0], str):
        raise SpecError("missing or not a list of names; cannot tell the model family", field="architectures")
    if archs[0] not in _BUILDERS:
        raise SpecError(f"unsupported architecture {archs[0]!r}; supported: {', '.join(SUPPORTED_ARCHITECTURES)}",
                        field="architectures")
    return archs[0]


def _header(m: ModelBuilder, config: dict, raw: dict, model_id: str | None, source: str) -> dict[str, Any]:
    """id, name, family, sources and the scalar sizes of the imported spec."""
    repo = _hf_repo(config)
    m.c.touch("_name_or_path", "quantization_config", "torch_dtype", "dtype", "model_type")
    mid = model_id or (_slug(repo.split("/")[-1]) if repo else _slug(str(raw.get("model_type") or m.c.arch)))
    sources = [source]
    if repo:
        sources.append(f"https://huggingface.co/{repo}/blob/main/config.json")
    out: dict[str, Any] = {"id": mid, "name": repo.split("/")[-1] if repo else mid, "family": m.family,
                           "sources": sources, "hidden_size": m.hidden, "vocab_size": m.c.int("vocab_size")}
    if m.c.bool("tie_word_embeddings"):
        out["tie_embeddings"] = True
    out["max_context"] = m.c.int("max_position_embeddings")
    out["native_weights"] = _native_weights(raw)
    return out


def import_hf_config_report(config: dict, model_id: str | None = None, source: str = DEFAULT_SOURCE
                            ) -> tuple[dict, list[str]]:
    """(model-spec mapping, report) for a parsed Hugging Face config.json. The report has one line per field the
    import had to assume ('FIELD: not in the config; assumed VALUE') or could not read ('FIELD: not read ...');
    an import that assumed anything gets ``confidence: low`` naming the assumed fields.

    Raises SpecError naming the config field at fault (``architectures`` for an unsupported family).
    """
    arch = _architecture(config)
    raw = dict(config)
    text = config.get("text_config")
    if isinstance(text, dict):  # multimodal wrappers: the text tower's fields win
        raw.update(text)
    m = ModelBuilder(Cfg(raw, arch))
    _BUILDERS[arch](m)
    out = _header(m, config, raw, model_id, source)
    if m.residual:
        out["residual"] = m.residual
    out["attention"] = m.attention
    out["ffn"] = m.ffn
    out["layers"] = _group(m.schedule)
    if m.mtp:
        out["mtp"] = m.mtp
    notes = [f"Imported from a Hugging Face config.json ({arch}) by perfmodel.importers.hf_config",
             "published parameter counts are not in config.json: add a `published` block by hand",
             *m.notes]
    assumed = m.c.assumed
    if assumed:
        out["confidence"] = "low"
        out["confidence_note"] = "assumed (not in the config): " + ", ".join(f"{k} = {v}" for k, v in assumed.items())
    out["notes"] = "; ".join(notes) + "."
    try:
        ModelSpec.model_validate(out)
    except ValidationError as exc:
        raise pydantic_to_spec_error(exc, prefix="imported spec") from None
    report = [f"{k}: not in the config; assumed {v}" for k, v in assumed.items()]
    report += [f"{k}: not read (the importer has no use for it on {arch}; value {short(raw[k])})"
               for k in unread_fields(m.c)]
    return out, report


def import_hf_config(config: dict, model_id: str | None = None, source: str = DEFAULT_SOURCE) -> dict:
    """Build a model-spec mapping from a parsed Hugging Face config.json (``import_hf_config_report`` without the
    report). Raises SpecError naming the config field at fault."""
    return import_hf_config_report(config, model_id, source)[0]


def import_hf_config_file(path: str, model_id: str | None = None, revision: str | None = None,
                          report: list[str] | None = None) -> str:
    """Read a config.json and return model-spec YAML text recording ``revision`` (the source's commit, when
    given) and the sha256 of the file's bytes; the import's report lines are appended to ``report``. Errors are
    SpecError naming the file and the field."""
    p = Path(path)
    cfg = load_json(p)
    if model_id is None and isinstance(cfg, dict) and not _hf_repo(cfg):
        stem = p.resolve().parent.name if p.name == "config.json" else p.stem
        model_id = _slug(stem)
    try:
        mapping, lines = import_hf_config_report(cfg, model_id=model_id, source=f"{p.name} ({DEFAULT_SOURCE})")
    except SpecError as exc:
        raise exc.in_file(str(path)) from None
    rev = revision or (cfg.get("_commit_hash") if isinstance(cfg.get("_commit_hash"), str) else None)
    fields = list(mapping.items())
    at = [k for k, _ in fields].index("sources") + 1
    extra = ([("revision", rev)] if rev else []) + [("config_sha256", hashlib.sha256(p.read_bytes()).hexdigest())]
    mapping = dict(fields[:at] + extra + fields[at:])
    if not rev:
        lines.insert(0, "revision: not recorded (pass --revision COMMIT, the config's source revision)")
    if report is not None:
        report.extend(lines)
    return to_yaml(mapping)


# ---------------------------------------------------------------- YAML in the catalog's style
def _flow(v: Any) -> str:
    s = yaml.safe_dump(v, default_flow_style=True, sort_keys=False, width=1 << 30, allow_unicode=True)
    return s.removesuffix("\n").removesuffix("\n...").strip()


def to_yaml(mapping: dict) -> str:
    """Catalog-style YAML: block top level, one flow mapping per attention/FFN kind and layer group."""
    lines = ["# Generated by `perfmodel models import` from a Hugging Face config.json; check it, then add a",
             "# `published` block (total/active parameters with source URLs) so the catalog tests can verify it."]
    for key, v in mapping.items():
        if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            lines.append(f"{key}:")
            lines += [f"  {_flow(k)}: {_flow(x)}" for k, x in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, (dict, str)) for x in v) and key != "aliases":
            lines.append(f"{key}:")
            lines += [f"  - {_flow(x)}" for x in v]
        else:
            lines.append(f"{key}: {_flow(v)}")
    return "\n".join(lines) + "\n"
