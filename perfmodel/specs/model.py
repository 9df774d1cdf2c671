"""Model architecture schema: a layer schedule, each layer with an attention kind and an FFN kind.

Dimensions are plain counts (elements, not bytes). Byte sizes depend on the number format chosen in
the deployment, so they are not part of the architecture.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from .common import SourcedText, Strict

ARCH_INT_MAX = 1_000_000_000
"""Largest architecture integer accepted (layers, widths, heads, experts, vocabulary, context): 10^9, far above
any published model (contexts ~10^7), and small enough that every product the equations form stays finite in
float64 (a count of 1e308 otherwise overflows or, in an importer's per-layer loop, never returns)."""
PositiveInt = Annotated[int, Field(ge=1, le=ARCH_INT_MAX)]


# ---------------------------------------------------------------- attention kinds
class Indexer(Strict):
    """DSA lightning indexer: scores every previous key with small FP8 heads, keeps the top-k."""

    heads: PositiveInt
    head_dim: PositiveInt
    top_k: PositiveInt = Field(description="Keys kept per query after selection")
    shared: bool = Field(False, description="IndexShare: this layer reuses another layer's selection "
                                            "(no indexer compute or indexer-key cache of its own)")
    key_pool: PositiveInt = Field(1, description="Tokens pooled into one cached index key (GLM-5.3-Flash "
                                                "index_kpool 4: index keys, their scoring and cache are 1/key_pool "
                                                "per token; the pooling gate adds h x head_dim weights)")


class BlockIndexer(Strict):
    """Block-sparse indexer (MiniMax-M3 MSA): small index heads score every previous key, the scores are pooled
    into blocks of ``block_size`` keys, and each query attends the ``top_k_blocks`` best blocks (the local block
    forced in and counted within them)."""

    heads: PositiveInt = Field(description="Index query heads")
    head_dim: PositiveInt
    key_heads: PositiveInt = Field(1, description="Index key heads cached per token (MiniMax-M3: 1)")
    block_size: PositiveInt = Field(description="Keys per selectable block")
    top_k_blocks: PositiveInt = Field(description="Key blocks attended per query, the local block included")
    local_blocks: int = Field(1, ge=0, le=ARCH_INT_MAX, description="Blocks next to the query always kept")
    shared: bool = Field(False, description="Reuses another layer's block selection (no own index keys)")


class GQA(Strict):
    """Multi-head / grouped-query attention (MHA when kv_heads == heads). Optional sliding window, output gate
    and block indexer (all off by default)."""

    kind: Literal["gqa"] = "gqa"
    heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    window: PositiveInt | None = Field(None, description="Sliding-window size in tokens; None = full attention")
    sinks: bool = Field(False, description="Learned attention sinks (gpt-oss); no cost of note")
    output_gate: bool = Field(False, description="Gated attention (Qwen3.5, Muse Glimmer): a sigmoid gate on the "
                                                 "attention output from an extra h x (heads head_dim) projection")
    block_indexer: BlockIndexer | None = Field(None, description="Block-sparse attention (MiniMax-M3); None = dense")

    @model_validator(mode="after")
    def _window_or_indexer(self):
        if self.window is not None and self.block_indexer is not None:
            raise ValueError("window and block_indexer cannot both be set on one attention kind")
        return self


class MLA(Strict):
    """Multi-head latent attention (DeepSeek-V2/V3). Expanded form in prefill, absorbed (MQA) in decode.

    With ``indexer`` set it is DSA (DeepSeek-V3.2, GLM-5): attended keys per query = min(L, top_k).
    """

    kind: Literal["mla"] = "mla"
    heads: PositiveInt
    q_lora_rank: PositiveInt | None = Field(description="None: full-rank query projection")
    kv_lora_rank: PositiveInt
    qk_nope_dim: PositiveInt
    qk_rope_dim: int = Field(ge=0, le=ARCH_INT_MAX, description="0: NoPE (GLM-5.3-Flash)")
    v_head_dim: PositiveInt
    indexer: Indexer | None = None
    gated: bool = Field(False, description="Output gate (Kimi K3 gated MLA): an extra heads*v_head_dim x hidden projection")


class CompressedAttention(Strict):
    """DeepSeek-V4 attention: one shared KV head (head_dim incl. RoPE), a sliding-window ring, and
    optionally a compressed cache of the whole context (CSA: compress 4 with an indexer top-k; HCA:
    compress 128, attended densely). ``compress_ratio`` None = sliding window only.
    """

    kind: Literal["dsv4"] = "dsv4"
    heads: PositiveInt
    head_dim: PositiveInt = Field(description="Shared KV head dim, including rope_dim")
    rope_dim: PositiveInt
    q_lora_rank: PositiveInt
    o_lora_rank: PositiveInt = Field(description="Grouped low-rank output projection rank per group")
    o_groups: PositiveInt
    window: PositiveInt = Field(description="Sliding-window ring entries per layer")
    compress_ratio: PositiveInt | None = Field(None, description="4 (CSA), 128 (HCA), None (SWA only)")
    indexer: Indexer | None = Field(None, description="CSA only: selects top_k compressed entries")


class GroupedLatentAttention(Strict):
    """Grouped latent attention (Motif-3 GDLA): MLA's shared latent KV cache (kv_lora_rank + qk_rope_dim per
    token), up-projected to one K/V head per group (``groups``) instead of one per query head; each group has
    ``heads / groups`` query heads, of which ``noise_heads_per_group`` are noise heads whose output is subtracted
    (differential attention) and the rest signal heads that reach the output projection. Optional sliding
    window (KV held and keys read capped at ``window``), sigmoid output gate and per-signal-head lambda."""

    kind: Literal["gla"] = "gla"
    heads: PositiveInt = Field(description="Query heads in total (signal + noise)")
    groups: PositiveInt = Field(description="KV groups: one up-projected K and V head each")
    noise_heads_per_group: int = Field(0, ge=0, le=ARCH_INT_MAX)
    q_lora_rank: PositiveInt
    kv_lora_rank: PositiveInt
    qk_nope_dim: PositiveInt
    qk_rope_dim: PositiveInt
    v_head_dim: PositiveInt
    window: PositiveInt | None = Field(None, description="Sliding-window keys (incl. the current one); None = full")
    output_gate: bool = Field(False, description="Elementwise sigmoid gate q_lora -> signal heads x v_head_dim")
    head_lambda: bool = Field(False, description="Per-signal-head mixing scalar projected from the hidden state")

    @model_validator(mode="after")
    def _groups(self):
        if self.heads % self.groups:
            raise ValueError(f"heads={self.heads} is not a multiple of groups={self.groups}")
        if self.noise_heads_per_group >= self.heads // self.groups:
            raise ValueError("noise_heads_per_group must leave at least one signal head per group")
        return self

    @property
    def signal_heads(self) -> int:
        return self.heads - self.groups * self.noise_heads_per_group


class LinearAttention(Strict):
    """Linear attention with a constant recurrent state per sequence (Gated DeltaNet, Kimi Delta Attention)."""

    kind: Literal["linear"] = "linear"
    variant: Literal["gdn", "kda"]
    k_heads: PositiveInt
    v_heads: PositiveInt
    head_k_dim: PositiveInt
    head_v_dim: PositiveInt
    conv_kernel: PositiveInt = 4


Attention = Annotated[Union[GQA, MLA, CompressedAttention, GroupedLatentAttention, LinearAttention],
                      Field(discriminator="kind")]


# ---------------------------------------------------------------- FFN kinds
class DenseFFN(Strict):
    """Gated (SwiGLU) MLP: three hidden x intermediate matrices."""

    kind: Literal["dense"] = "dense"
    intermediate: PositiveInt
    gated: bool = Field(True, description="False: two matrices (plain MLP)")


class MoE(Strict):
    """Mixture of experts: routed experts (top_k of experts) plus always-on shared experts.

    ``latent_dim``: latent MoE (Kimi K3): tokens are projected hidden -> latent_dim before the routed
    experts and back after, so routed expert matrices are latent_dim x expert_intermediate.
    """

    kind: Literal["moe"] = "moe"
    experts: PositiveInt
    top_k: PositiveInt
    expert_intermediate: PositiveInt
    shared_experts: int = Field(0, ge=0, le=ARCH_INT_MAX)
    shared_intermediate: PositiveInt | None = Field(None, description="Default: expert_intermediate")
    latent_dim: PositiveInt | None = None
    gated: bool = True
    router: Literal["topk", "hash"] = "topk"
    expert_groups: PositiveInt | None = Field(
        None, description="Node-limited (group-limited) routing: experts are split into this many groups "
                          "(DeepSeek config n_group). None: no group limit")
    route_groups: PositiveInt | None = Field(
        None, description="Groups one token's top_k experts may come from (DeepSeek config topk_group); with "
                          "expert parallelism over several scale-up domains this bounds the domains a token "
                          "is sent to. None: no group limit")

    @model_validator(mode="after")
    def _topk(self):
        if self.top_k > self.experts:
            raise ValueError(f"top_k={self.top_k} exceeds experts={self.experts}")
        return self


FFN = Annotated[Union[DenseFFN, MoE], Field(discriminator="kind")]


# ---------------------------------------------------------------- schedule and extras
class LayerGroup(Strict):
    """``count`` consecutive-or-not layers sharing one attention kind and one FFN kind."""

    count: PositiveInt
    attention: str = Field(description="Key into ModelSpec.attention")
    ffn: str = Field(description="Key into ModelSpec.ffn")
    where: str | None = Field(None, description="Which layer indices, for humans (e.g. 'even 2-42')")


class MTP(Strict):
    """Multi-token-prediction / draft modules shipped with the model (used for speculative decoding)."""

    layers: PositiveInt = Field(description="Draft layers (each one transformer block)")
    attention: str
    ffn: str
    draft_block: PositiveInt | None = Field(None, description="Tokens drafted per pass (DSpark block)")
    params_b: float | None = Field(None, description="Published MTP parameter count, billions")
    mhc: bool = Field(True, description="each MTP block carries the model's mHC stream mixing (DeepSeek-V4); "
                      "false: a plain pre-norm block on one stream (Motif-3's model.mtp_layers.0)")


class Residual(Strict):
    """Residual stream: standard, or mHC (manifold-constrained hyper-connections) with n streams."""

    kind: Literal["standard", "mhc"] = "standard"
    streams: PositiveInt = 1


class Engram(Strict):
    """Engram-style lookup tables kept in host memory; each token gathers rows per Engram layer."""

    table_params_b: float = Field(gt=0, description="Table parameters, billions (not counted as active)")
    layers: PositiveInt = Field(description="Layers with an Engram lookup")
    lookups_per_token: PositiveInt = Field(description="Rows gathered per token per Engram layer")
    row_dim: PositiveInt = Field(description="Elements per row")


class Published(Strict):
    """Published figures that derived numbers are tested against."""

    total_params_b: SourcedText | None = None
    active_params_b: SourcedText | None = None
    kv_bytes_per_token_bf16: SourcedText | None = None


class ModelSpec(Strict):
    id: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    family: str = Field(description="e.g. deepseek, kimi, glm, qwen, llama, gpt-oss, mixtral")
    confidence: Literal["high", "low"] = "high"
    confidence_note: str | None = None
    sources: list[str] = Field(description="URLs / stored-file ids of the configs and reports used", min_length=1)
    revision: str | None = Field(None, description="Revision (commit) of the published config the entry follows")
    config_sha256: str | None = Field(None, description="sha256 of the config.json bytes an importer read")
    hidden_size: PositiveInt
    vocab_size: PositiveInt
    tie_embeddings: bool = False
    max_context: PositiveInt
    attention: dict[str, Attention]
    ffn: dict[str, FFN]
    layers: list[LayerGroup] = Field(min_length=1)
    mtp: MTP | None = None
    residual: Residual = Residual()
    engram: Engram | None = None
    native_weights: str = Field(description="Format the weights are published in, e.g. fp8, bf16, mxfp4, nvfp4+fp8")
    published: Published = Published()
    notes: str | None = None

    @model_validator(mode="after")
    def _refs(self):
        for i, g in enumerate(self.layers):
            if g.attention not in self.attention:
                raise ValueError(f"layers[{i}].attention {g.attention!r} is not in attention {sorted(self.attention)}")
            if g.ffn not in self.ffn:
                raise ValueError(f"layers[{i}].ffn {g.ffn!r} is not in ffn {sorted(self.ffn)}")
        if self.mtp:
            if self.mtp.attention not in self.attention or self.mtp.ffn not in self.ffn:
                raise ValueError("mtp.attention / mtp.ffn must name entries of attention / ffn")
        return self

    @property
    def num_layers(self) -> int:
        return sum(g.count for g in self.layers)
