"""Typed, logged access to a Hugging Face config.json for the importer (``hf_config``, ``hf_hybrid``).

``Cfg`` reads fields, each problem a SpecError naming the field, and remembers which keys it read and which
defaults it had to assume (a field missing from the config: its value is the importer's assumption, named on
stderr and lowering the imported entry's confidence). ``ModelBuilder`` accumulates the attention and FFN kinds, the
per-layer schedule, the MTP block, the residual stream and the notes of one import.
"""

from __future__ import annotations

import builtins
import math
import re
from typing import Any

from ..errors import SpecError, short

_MISSING = object()


# ---------------------------------------------------------------- reading config fields
class Cfg:
    """Typed access to config fields; every problem is a SpecError naming the field."""

    def __init__(self, raw: dict, arch: str):
        self.raw = raw
        self.arch = arch
        self.read: set[str] = {"architectures"}
        self.assumed: dict[str, str] = {}

    def touch(self, *keys: str) -> None:
        """Mark ``keys`` as read (looked at by the importer, whether or not they change the spec)."""
        self.read.update(keys)

    def assume(self, key: str, what: str) -> None:
        """Record that the config does not state ``key`` and the importer assumed ``what``."""
        self.assumed.setdefault(key, what)

    def has(self, key: str) -> bool:
        self.read.add(key)
        return self.raw.get(key) is not None

    def int(self, key: str, default: Any = _MISSING, *, positive: bool = True) -> Any:
        """The integer ``key``; when missing, ``default`` (recorded as an assumption unless None: a feature the
        config does not have) or a SpecError when required."""
        self.read.add(key)
        v = self.raw.get(key)
        if v is None:
            if default is _MISSING:
                raise SpecError(f"required for {self.arch} but missing", field=key)
            if default is not None:
                self.assume(key, str(default))
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or \
                (isinstance(v, float) and (not math.isfinite(v) or v != int(v))):   # a huge int is not a float
            raise SpecError(f"expected an integer, got {short(v)}", field=key)
        from ..specs.model import ARCH_INT_MAX
        if abs(v) > ARCH_INT_MAX:            # before int(): 1e308 layers would never finish a per-layer loop
            raise SpecError(f"{short(v)} is out of range (at most {ARCH_INT_MAX:,})", field=key)
        v = int(v)
        if positive and v <= 0:
            raise SpecError(f"expected a positive integer, got {v}", field=key)
        if not positive and v < 0:
            raise SpecError(f"expected a non-negative integer, got {v}", field=key)
        return v

    def bool(self, key: str, default: bool = False) -> bool:
        """The boolean ``key``; when missing, ``default`` (recorded as an assumption)."""
        self.read.add(key)
        v = self.raw.get(key)
        if v is None:
            self.assume(key, "true" if default else "false")
            return default
        if not isinstance(v, bool):
            raise SpecError(f"expected true or false, got {v!r}", field=key)
        return v

    # (``builtins.``: inside this class ``int`` and ``list`` name the methods)
    def list(self, key: str, n: builtins.int | None = None) -> builtins.list | None:
        self.read.add(key)
        v = self.raw.get(key)
        if v is None:
            return None
        if not isinstance(v, list):
            raise SpecError(f"expected a list, got {type(v).__name__}", field=key)
        if n is not None and len(v) < n:
            raise SpecError(f"has {len(v)} entries, fewer than num_hidden_layers={n}", field=key)
        return v

    def int_list(self, key: str) -> builtins.list[builtins.int] | None:
        v = self.list(key)
        if v is None:
            return None
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise SpecError("expected a list of integers", field=key)
        return v


# ---------------------------------------------------------------- building blocks
class ModelBuilder:
    """Accumulates attention/FFN kinds, a per-layer schedule and notes."""

    def __init__(self, c: Cfg):
        self.c = c
        self.attention: dict[str, dict] = {}
        self.ffn: dict[str, dict] = {}
        self.schedule: list[tuple[str, str]] = []
        self.mtp: dict | None = None
        self.residual: dict | None = None
        self.notes: list[str] = []
        self.family = "unknown"
        self.n_layers = c.int("num_hidden_layers")
        self.hidden = c.int("hidden_size")

    # attention kinds
    def head_dim(self) -> int:
        c = self.c
        heads = c.int("num_attention_heads")
        if c.has("head_dim"):
            return c.int("head_dim")
        if self.hidden % heads:
            raise SpecError(f"missing, and hidden_size {self.hidden} is not a multiple of num_attention_heads {heads}",
                            field="head_dim")
        return self.hidden // heads

    def gqa(self, window: int | None = None, sinks: bool = False, gate: bool = False) -> dict:
        c = self.c
        heads = c.int("num_attention_heads")
        d = {"kind": "gqa", "heads": heads, "kv_heads": c.int("num_key_value_heads", heads), "head_dim": self.head_dim()}
        if window:
            d["window"] = window
        if sinks:
            d["sinks"] = True
        if gate:
            d["output_gate"] = True
        return d

    def mla(self) -> dict:
        c = self.c
        d = {"kind": "mla", "heads": c.int("num_attention_heads"), "q_lora_rank": c.int("q_lora_rank", None),
             "kv_lora_rank": c.int("kv_lora_rank"), "qk_nope_dim": c.int("qk_nope_head_dim"),
             "qk_rope_dim": c.int("qk_rope_head_dim", positive=False), "v_head_dim": c.int("v_head_dim")}
        if c.has("index_topk"):
            d["indexer"] = {"heads": c.int("index_n_heads"), "head_dim": c.int("index_head_dim"),
                            "top_k": c.int("index_topk")}
            pool = c.int("index_kpool", None)
            if pool and pool > 1:
                d["indexer"]["key_pool"] = pool
        return d

    # ffn kinds
    def dense(self, key: str = "intermediate_size") -> dict:
        return {"kind": "dense", "intermediate": self.c.int(key)}

    def moe(self, experts: int, top_k: int, expert_intermediate: int, shared: int = 0,
            shared_intermediate: int | None = None) -> dict:
        if top_k > experts:
            raise SpecError(f"top-k {top_k} exceeds the {experts} experts", field="num_experts_per_tok")
        d = {"kind": "moe", "experts": experts, "top_k": top_k, "expert_intermediate": expert_intermediate}
        if shared:
            d["shared_experts"] = shared
            if shared_intermediate and shared_intermediate != expert_intermediate:
                d["shared_intermediate"] = shared_intermediate
        return d

    def window(self) -> int | None:
        """sliding_window if the config turns it on (Mistral style, or Qwen's use_sliding_window)."""
        c = self.c
        c.touch("use_sliding_window", "max_window_layers")
        if not c.has("sliding_window"):
            return None
        if "use_sliding_window" in c.raw and not c.bool("use_sliding_window"):
            return None
        return c.int("sliding_window")

    def layer_types(self) -> list[str] | None:
        lt = self.c.list("layer_types", self.n_layers)
        if lt is None:
            return None
        if not all(isinstance(x, str) for x in lt):
            raise SpecError("expected a list of strings", field="layer_types")
        return lt[: self.n_layers]

    def add(self, name: str, spec: dict, table: str) -> str:
        tab = self.attention if table == "attention" else self.ffn
        if name in tab and tab[name] != spec:
            raise AssertionError(f"{table} {name!r} defined twice differently")  # importer bug, not user input
        tab[name] = spec
        return name




# ---------------------------------------------------------------- schedules shared by several builders
def attention_per_layer(m: ModelBuilder, sinks: bool = False, gate: bool = False) -> list[str]:
    """Attention key per layer for GQA models: layer_types, else Qwen's max_window_layers, else one kind."""
    c = m.c
    lt = m.layer_types()
    w = c.int("sliding_window", None) if lt is not None else m.window()
    out = []
    for i in range(m.n_layers):
        if lt is not None:
            sliding = lt[i] == "sliding_attention"
            if lt[i] not in ("sliding_attention", "full_attention"):
                raise SpecError(f"layer {i} is {lt[i]!r}; expected sliding_attention or full_attention",
                                field="layer_types")
            if sliding and not w:
                raise SpecError("layer_types has sliding_attention layers but sliding_window is missing",
                                field="sliding_window")
        else:
            sliding = bool(w) and (c.arch not in ("Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
                                   or i >= c.int("max_window_layers", 0, positive=False))
        if sliding:
            out.append(m.add("swa", m.gqa(window=w, sinks=sinks, gate=gate), "attention"))
        else:
            out.append(m.add("full" if (lt is not None or w) else "gqa", m.gqa(sinks=sinks, gate=gate), "attention"))
    # one kind only: call it gqa
    if len(m.attention) == 1 and "gqa" not in m.attention:
        only = next(iter(m.attention))
        if only == "full":
            m.attention = {"gqa": m.attention.pop("full")}
            out = ["gqa"] * len(out)
    return out




def index_shared(m: ModelBuilder) -> list[bool] | None:
    """IndexShare (GLM-5.2): per layer, True if it reuses the previous full layer's top-k. From indexer_types
    ("full"/"shared"), else index_topk_pattern ("S" = shared), else vLLM's rule
    skip = max(i - index_skip_topk_offset + 1, 0) % index_topk_freq != 0 (defaults 2, 1: every layer full)."""
    c, n = m.c, m.n_layers
    types = c.list("indexer_types", n)
    if types is not None:   # the per-layer list states the schedule the freq / offset / pattern fields encode
        c.touch("index_topk_freq", "index_skip_topk_offset", "index_topk_pattern")
        bad = [t for t in types[:n] if t not in ("full", "shared")]
        if bad:
            raise SpecError(f"expected 'full' or 'shared' entries, got {bad[0]!r}", field="indexer_types")
        return [t == "shared" for t in types[:n]]
    c.touch("index_topk_pattern")
    pattern = c.raw.get("index_topk_pattern")
    if pattern is not None:
        if not isinstance(pattern, (str, list)) or len(pattern) < n:
            raise SpecError(f"expected {n} entries", field="index_topk_pattern")
        return [str(x).upper() == "S" for x in list(pattern)[:n]]
    if c.has("index_topk_freq"):
        freq, offset = c.int("index_topk_freq"), c.int("index_skip_topk_offset", 2, positive=False)
        return [max(i - offset + 1, 0) % freq != 0 for i in range(n)]
    return None




# Keys a size-and-cost model has no use for: token ids, RoPE, norms and their epsilons, initialisation, dropout,
# activation names, biases, dtypes, versions, router training knobs, sampling and multimodal-tower settings. A key
# outside these that the importer did not read is named on stderr as not read.
NOT_ARCHITECTURE = re.compile(
    r"(token|rope|rotary|norm|eps$|dropout|initializer|_act$|activation|bias|dtype|version|vision|image|video|soft_cap|"
    r"audio|aux_loss|jitter|logit|softcap|temperature|chat_template|auto_map|name_or_path|use_cache|"
    r"output_router|router_dtype|scoring_func|topk_method|routed_scaling|swiglu|_scale|scaling_factor|"
    r"multiplier|keys_to_ignore|problem_type|id2label|label2id|return_dict|torchscript|pruned_heads|"
    r"tie_encoder|is_encoder|is_decoder|add_cross|cross_attention|task_specific|finetuning|_commit_hash|"
    r"^n_group$|^topk_group$|^sinkhorn|hc_eps|sinkhorn_iters|lower_bound|safe_gate|mlp_bias|qk_layernorm|"
    r"use_qk|pretraining_tp|output_attentions|output_hidden_states|attn_implementation|interleave$|"
    r"moe_router|capacity|drop_policy|load_balanc|^ep_size$|^tp_size$|initial_context|llm_compressor|"
    # transformers' PretrainedConfig generation and serialisation defaults, which a saved config.json repeats
    r"^bad_words_ids$|^chunk_size_feed_forward$|^diversity_penalty$|^do_sample$|^early_stopping$|"
    r"^encoder_no_repeat_ngram_size$|^exponential_decay_length_penalty$|^ignore_index$|^length_penalty$|"
    r"^max_length$|^min_length$|^no_repeat_ngram_size$|^num_beam_groups$|^num_beams$|^num_return_sequences$|"
    r"^output_scores$|^prefix$|^remove_invalid_values$|^repetition_penalty$|^tf_legacy_loss$|^top_k$|^top_p$|"
    r"^typical_p$|^use_bfloat16$|^seq_aux$|^suppress_tokens$|^begin_suppress_tokens$|^sep_token_id$)")


def unread_fields(c: Cfg) -> list[str]:
    """Top-level config keys the import neither read nor knows to be irrelevant to sizes and costs."""
    return sorted(k for k in c.raw if k not in c.read and not k.startswith("_") and not NOT_ARCHITECTURE.search(k)
                  and k not in ("model_type", "text_config"))
