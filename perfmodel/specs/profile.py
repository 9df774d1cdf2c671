"""Software profile: the engine, and the only place efficiencies live.

Every numeric parameter is a ``Param``: a value plus a plausible [low, high] range. The ranges feed
uncertainty bands (Monte Carlo over the profile) and claim checks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .common import Strict
from .kernel_fits import KernelFits


class Param(Strict):
    """A calibrated value and its plausible range (same unit as the field)."""

    value: float
    low: float
    high: float

    @model_validator(mode="after")
    def _order(self):
        if not (self.low <= self.value <= self.high):
            raise ValueError(f"need low <= value <= high, got {self.low} <= {self.value} <= {self.high}")
        return self


def _p(v: float, lo: float | None = None, hi: float | None = None) -> Param:
    return Param(value=v, low=v if lo is None else lo, high=v if hi is None else hi)


# name -> (unit/description, lower physical bound, upper physical bound, group for attribution)
PROFILE_PARAMS: dict[str, tuple[str, float, float, str]] = {
    "eff_weights": ("achieved fraction of HBM bandwidth when streaming weights", 0.01, 1.0, "kernels"),
    "eff_kv": ("achieved fraction of HBM bandwidth when reading KV cache", 0.01, 1.0, "kernels"),
    "eff_gemm": ("achieved fraction of dense tensor FLOP/s in GEMMs (per format)", 0.01, 1.0, "kernels"),
    "eff_gemm_fp4": ("achieved fraction of dense FP4 tensor FLOP/s in 4-bit (block-scaled NVFP4 / MXFP4) GEMMs; "
                     "defaults to eff_gemm", 0.01, 1.0, "kernels"),
    "eff_grouped_gemm": ("achieved rate of the grouped (MoE expert) GEMM relative to a dense GEMM of the same "
                         "format (fused-MoE kernels: per-expert tiles with short reductions under expert TP, "
                         "gather/scatter of routed tokens, fewer tuned configurations)", 0.05, 1.0, "kernels"),
    "eff_attention": ("achieved fraction of BF16 tensor FLOP/s in prefill (context) attention kernels: "
                      "FlashAttention-style causal attention, MLA in its expanded form", 0.01, 1.0, "kernels"),
    "eff_attention_decode": ("achieved fraction of BF16 tensor FLOP/s in decode attention kernels (absorbed MLA, "
                             "sparse MLA, GQA decode) on the MMA rows they issue; defaults to eff_attention",
                             0.01, 1.0, "kernels"),
    "eff_link": ("achieved fraction of scale-up / NIC bandwidth in collectives", 0.01, 1.0, "communication"),
    "overlap": ("share of communication hidden behind compute (two-batch overlap etc.)", 0.0, 1.0, "communication"),
    "collective_latency_us": ("software latency added to each collective, us", 0.0, 1000.0, "latency"),
    "custom_allreduce_max_gpus": ("largest tensor-parallel group the engine's custom one-shot / two-shot all-reduce "
                                  "kernels serve; larger groups use NCCL (ring or NVLS). vLLM and SGLang: 8 "
                                  "(vllm/distributed/device_communicators/custom_all_reduce.py, "
                                  "_SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]); TensorRT-LLM: 16 "
                                  "(cpp/tensorrt_llm/kernels/customAllReduceKernels.h, MAX_RANKS_PER_NODE)",
                                  1.0, 72.0, "communication"),
    "gemm_tile_m": ("largest row tile of a GEMM: more tokens are padded to a multiple of it, each MoE expert's "
                    "separately (DeepGEMM: 64-256-row blocks, 128-row alignment of contiguous grouped layouts, "
                    "https://github.com/deepseek-ai/DeepGEMM)", 8.0, 512.0, "kernels"),
    "gemm_tile_m_min": ("smallest row tile of a GEMM: fewer tokens (per expert, for MoE) are padded to it "
                        "(swap-AB puts tokens in the MMA's 8-256-wide N dimension; Triton MoE kernels use "
                        "16-row blocks)", 1.0, 512.0, "kernels"),
    "gemm_tile_n": ("output columns per GEMM tile (the tile count against the SMs sets the waves; CUTLASS and "
                    "DeepGEMM default to 128-column tiles for large GEMMs)", 8.0, 512.0, "kernels"),
    "layer_floor_us": ("minimum time of one layer's kernels per step (launch/sync floor), us", 0.0, 1000.0, "latency"),
    "kernel_overhead_us": ("fixed cost per kernel a layer launches (launch gap, tail, sync between kernels), "
                           "us; a layer costs it times its kernel count (DeepSeek MoE layer 20, Llama layer 9)",
                           0.0, 50.0, "latency"),
    "kernel_floor_share": ("share of the kernels' isolated launch floors (fitted on the GPU's kernel tables for this "
                           "engine: perfmodel kernels; engine/kernel_bind.py) that a serving step pays in series: "
                           "1 = they add up, 0 = hidden (CUDA graphs, programmatic dependent launch overlap "
                           "launches); kernel_overhead_us is the per-kernel cost on top. 0 until calibrated",
                           0.0, 1.0, "latency"),
    "step_overhead_ms": ("CPU/scheduler overhead per engine step, ms", 0.0, 1000.0, "latency"),
    "seq_overhead_us": ("CPU/scheduler time per sequence in flight per engine step (scheduling, sampling, "
                        "detokenization, output processing), us; a step costs it times the batch", 0.0, 100.0, "latency"),
    "scheduler_overlap": ("share of a step's CPU time hidden behind the GPU's where the engine prepares the next step "
                          "while the GPU runs this one (1: a step costs max(GPU, CPU); 0: their sum). SGLang "
                          "(python/sglang/srt/server_args.py, --disable-overlap-schedule) and TensorRT-LLM "
                          "(tensorrt_llm/llmapi/llm_args.py, disable_overlap_scheduler) overlap by default, vLLM's "
                          "--async-scheduling is opt-in; the profiles keep 0 until a fit on independent records "
                          "supports a share (at 1 the calibration rows got worse: see the README limits); a what-if "
                          "via --set", 0.0, 1.0, "latency"),
    "request_overhead_ms": ("fixed time a request spends outside the GPU before its first token: API server, "
                            "tokenization, admission, first-token output, ms (part of TTFT)", 0.0, 2000.0, "scheduling"),
    "arrival_burst": ("share of a closed-loop benchmark's requests that arrive in synchronized waves of all C "
                      "clients (they start together and have equal lengths) instead of at random: each waits "
                      "for the wave's prefills ahead of it, uniform in [0, (C - 1) t_s / c]", 0.0, 1.0, "scheduling"),
    "prefill_chunk_tokens": ("chunked-prefill token budget per step (vLLM max_num_batched_tokens, SGLang "
                             "chunked_prefill_size, TensorRT-LLM max_num_tokens): a request's prefill spans "
                             "ceil(new / budget) steps", 256.0, 131072.0, "scheduling"),
    "moe_imbalance": ("structural routing skew: busiest EP rank's expert load over the mean at large batch, on top of the random-routing spread the equations compute (>= 1; only with ep > 1: with one EP rank the load is even)", 1.0, 8.0, "scheduling"),
    "max_running_requests": ("most sequences one scheduler (one attention-DP rank, else the instance) runs at once, "
                             "whatever KV space is left; past it requests wait. Defaults: vLLM max_num_seqs 1024 on "
                             "GPUs with >= 70 GiB (vllm/engine/arg_utils.py get_batch_defaults); SGLang "
                             "max_running_requests bounded by its request pool, at most 4096 per rank "
                             "(python/sglang/srt/model_executor/model_runner.py); TensorRT-LLM max_batch_size 2048 "
                             "(tensorrt_llm/llmapi/llm_args.py). A record or deployment may set it", 1.0, 1.0e6,
                             "scheduling"),
    "workspace_gb": ("HBM reserved for activations, CUDA graphs, runtime, GB per GPU", 0.0, 200.0, "memory"),
    "mem_fraction": ("the engine's memory fraction: of all usable HBM, or (kv_budget_after_weights = 1) of the HBM "
                     "left after weights and workspace", 0.1, 1.0, "memory"),
    "kv_budget_after_weights": ("1 if mem_fraction applies to the HBM left after weights and workspace "
                                "(TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction, "
                                "https://nvidia.github.io/TensorRT-LLM/llm-api/reference.html), 0 if to all HBM "
                                "(vLLM gpu_memory_utilization, SGLang mem_fraction_static)", 0.0, 1.0, "memory"),
    "kv_reserve_full_length": ("1 if a request reserves KV blocks for isl + osl on admission (TensorRT-LLM's "
                               "default GUARANTEED_NO_EVICT capacity scheduler), 0 if blocks are allocated as "
                               "tokens are written and requests preempted when full (vLLM, SGLang paged KV): "
                               "a running request then holds isl + osl/2 on average", 0.0, 1.0, "memory"),
    "prefill_speedup": ("multiplier on prefill throughput from kernel work (1 = none)", 0.2, 5.0, "kernels"),
    "decode_speedup": ("multiplier on decode step speed from kernel work (1 = none)", 0.2, 5.0, "kernels"),
}


# the fixed part of a small-batch step, part by part: the profile parameters that set each part (attribution names
# each part a player of its own; the other parameters play by their group above)
STEP_PART_OF: dict[str, str] = {
    "kernel_overhead_us": "kernel_gaps", "kernel_floor_share": "kernel_floors",
    "collective_latency_us": "collective_latency", "layer_floor_us": "layer_floors",
    "step_overhead_ms": "cpu_per_step", "seq_overhead_us": "cpu_per_step", "scheduler_overlap": "cpu_per_step",
}


def player_of(name: str) -> str:
    """The attribution player a profile parameter belongs to: its step part (STEP_PART_OF) or its group."""
    return STEP_PART_OF.get(name) or PROFILE_PARAMS[name][3]


# switches and integer limits: no derivative (sensitivity skips them; what-if --set changes them)
DISCRETE_PARAMS = frozenset({"max_running_requests", "custom_allreduce_max_gpus", "gemm_tile_m", "gemm_tile_m_min", "gemm_tile_n", "kv_budget_after_weights", "kv_reserve_full_length"})


class SpecDecoding(Strict):
    """Default speculative decoding of this engine (a deployment may override)."""

    method: str = Field("none", description="none | mtp | dspark | eagle")
    acceptance_rate: Param | None = Field(None, description="Per-draft acceptance probability")


class KVTransfer(Strict):
    """How a disaggregated engine moves a request's KV from the prefill to the decode instance (the transfer path
    serving/disaggregated.transfer_bandwidth prices): the backends the engine ships, and the link the default one
    uses between two instances inside one scale-up domain (``scaleup``: NVLink / the domain's fabric; ``nic``: RDMA
    through the scale-out NICs). Across domains every backend uses the NIC."""

    backends: list[str] = Field(min_length=1, description="transfer backends, the default first (e.g. mooncake, nixl)")
    intra_domain: Literal["scaleup", "nic"] = Field(description="link of the default backend inside one domain")
    source: str = Field(description="URL or followable title of the engine's documentation")
    status: Literal["documented", "estimate"] = "documented"
    note: str | None = None


class Features(Strict):
    """Feature switches the engine supports."""

    chunked_prefill: bool = True
    mixed_prefill: bool = Field(
        True, description="True: prefill chunks ride in the decode steps, one forward pass under the token budget "
                          "(vLLM V1 scheduler; TensorRT-LLM in-flight batching). False: prefill batches run as their "
                          "own passes ahead of the running decode batch, which stalls meanwhile (SGLang default: "
                          "server_args enable_mixed_chunk = False, and Scheduler.get_next_batch_to_run runs a new "
                          "prefill batch before the decode batch; "
                          "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py, "
                          "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/managers/scheduler.py). "
                          "The shipped sglang profiles keep True for now: the closed form of the prefill-first "
                          "schedule (serving/prefill_first.py) overstates SGLang's throughput at 256+ clients "
                          "(curve-end.csv), so a mechanism that holds SGLang back there is still missing")
    disaggregation: bool = False
    kv_host_tier: bool = False
    cuda_graphs: bool = True
    kv_transfer: KVTransfer | None = Field(None, description="the P/D KV transfer path (None: the scale-up link "
                                           "inside one domain, the NIC beyond)")


class PrefixCache(Strict):
    """How the engine keeps and routes reusable prefixes (serving/prefix_cache.py)."""

    routing: Literal["session", "random"] = Field(
        "session", description="session: a session's next turn goes to the worker holding its prefix (KV-aware "
                               "routing); random: any worker")
    window_snapshot_interval_tokens: int | None = Field(
        None, gt=0, description="Tokens between the sliding-window tails kept for prefix reuse (a window ring per "
                                "snapshot); None: one tail at each request's prompt end")
    linear_snapshot_interval_tokens: int | None = Field(
        None, gt=0, description="Tokens between stored linear-attention state snapshots (recurrent + conv state "
                                "per snapshot); None: one snapshot at each request's prompt end")
    source: str | None = None


class ProfileVariant(Strict):
    """A named stack configuration of the engine (``<profile>@<variant>``, e.g. ``trtllm@min-latency``): a sourced
    change of some parts of the step (inter-kernel gap, overlap scheduler, CPU time per step, ...), each part a
    ``Param`` that replaces the profile's; every other parameter stays the calibrated default. The variant's values
    come from its sources and are fitted, where its ``calibration`` says so, only on records of that configuration."""

    description: str = Field(description="What the configuration changes, in words")
    source: str = Field(description="URL(s) of what sets the configuration's parts (engine docs, code, blog)")
    status: Literal["datasheet", "announced", "estimate", "fitted"] = Field(
        description="datasheet (the engine's own documentation or code), estimate (derived), fitted (on records of "
                    "this configuration only: see calibration)")
    calibration: str | None = Field(None, description="How the fitted values were obtained (command, records)")
    params: dict[str, Param] = Field(description="Profile parameter -> replacement value and range")

    @model_validator(mode="after")
    def _known(self):
        for k in self.params:
            if k not in PROFILE_PARAMS:
                raise ValueError(f"variant changes unknown profile parameter {k!r}")
        return self


ENGINES = ("none", "sglang", "vllm", "trtllm", "dynamo-sglang", "dynamo-trtllm", "dynamo-vllm")
"""Engine families a profile can describe (the calibration fits one profile per family)."""


class ProfileSpec(Strict):
    id: str
    name: str
    engine: str = Field(description=f"Engine family: one of {', '.join(ENGINES)}")

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, v: str) -> str:
        if v not in ENGINES:
            from ..errors import short
            raise ValueError(f"unknown engine {short(v)}; choose one of {', '.join(ENGINES)}")
        return v

    description: str = ""
    calibration: str | None = Field(None, description="How the values were obtained (command, data, date)")
    eff_weights: Param
    eff_kv: Param
    eff_gemm: Param
    eff_gemm_fp4: Param = Field(None, description="4-bit GEMM efficiency; absent = eff_gemm")  # type: ignore
    eff_grouped_gemm: Param = _p(1.0)
    eff_attention: Param
    eff_attention_decode: Param = Field(None, description="decode attention efficiency; absent = eff_attention")  # type: ignore
    eff_link: Param
    overlap: Param
    collective_latency_us: Param
    custom_allreduce_max_gpus: Param = _p(8.0)
    gemm_tile_m: Param = _p(128.0)
    gemm_tile_m_min: Param = _p(16.0)
    gemm_tile_n: Param = _p(128.0)
    layer_floor_us: Param
    kernel_overhead_us: Param = _p(0.0)
    kernel_floor_share: Param = _p(0.0)
    step_overhead_ms: Param
    seq_overhead_us: Param = _p(0.0)
    scheduler_overlap: Param = _p(0.0)
    request_overhead_ms: Param = _p(0.0)
    arrival_burst: Param = _p(0.0)
    prefill_chunk_tokens: Param = _p(8192.0, 2048.0, 16384.0)
    moe_imbalance: Param
    max_running_requests: Param = _p(1.0e6)
    workspace_gb: Param
    mem_fraction: Param
    kv_budget_after_weights: Param = _p(0.0)
    kv_reserve_full_length: Param = _p(0.0)
    prefill_speedup: Param = _p(1.0)
    decode_speedup: Param = _p(1.0)
    spec_decoding: SpecDecoding = SpecDecoding()
    features: Features = Features()
    prefix_cache: PrefixCache = PrefixCache()
    kernel_fits: KernelFits | None = Field(None, description="This engine's kernel curves, median over the GPUs "
                                           "with kernel tables (perfmodel kernels --write); absent: none fitted")
    variants: dict[str, ProfileVariant] = Field(default_factory=dict, description="Named stack configurations, "
                                                "selectable as <id>@<variant> (perfmodel show lists them)")
    mechanisms: list[str] = Field(default_factory=list, description="Physics mechanisms switched on for this engine "
                                  "(perfmodel/mechanisms.py; none listed: each computes what it did before it was "
                                  "written)")

    @field_validator("mechanisms")
    @classmethod
    def _known_mechanisms(cls, v: list[str]) -> list[str]:
        from .mechanisms import check
        return check(v)

    def uses(self, mechanism: str) -> bool:
        """True if this profile switches ``mechanism`` on (perfmodel/mechanisms.py)."""
        from .mechanisms import MECHANISMS
        assert mechanism in MECHANISMS, mechanism
        return mechanism in self.mechanisms

    @model_validator(mode="before")
    @classmethod
    def _fp4_defaults_to_gemm(cls, data):
        """A profile without eff_gemm_fp4 has no evidence of a format difference: it uses eff_gemm; one without
        eff_attention_decode has one attention efficiency for both phases."""
        if isinstance(data, dict) and data.get("eff_gemm_fp4") is None and data.get("eff_gemm") is not None:
            data = {**data, "eff_gemm_fp4": data["eff_gemm"]}
        if isinstance(data, dict) and data.get("eff_attention_decode") is None \
                and data.get("eff_attention") is not None:
            data = {**data, "eff_attention_decode": data["eff_attention"]}
        return data

    @model_validator(mode="after")
    def _physical(self):
        for name, (desc, lo, hi, _g) in PROFILE_PARAMS.items():
            p: Param = getattr(self, name)
            if p.low < lo or p.high > hi:
                raise ValueError(f"{name} range [{p.low}, {p.high}] leaves the physical range [{lo}, {hi}] ({desc})")
        return self

    def with_variant(self, variant: str | None) -> "ProfileSpec":
        """This profile with the named variant's parameters applied (None: unchanged); id ``<id>@<variant>``."""
        if not variant:
            return self
        if variant not in self.variants:
            from ..errors import SpecError, short
            choices = f"choose one of {', '.join(sorted(self.variants))}" if self.variants else f"{self.id} has no variants"
            raise SpecError(f"unknown variant {short(variant)}; {choices}", field="variant")
        var = self.variants[variant]
        data = {**self.model_dump(), **{k: p.model_dump() for k, p in var.params.items()}}
        data.update(id=f"{self.id}@{variant}", name=f"{self.name} @{variant}", variants={})
        return ProfileSpec.model_validate(data)

    def values(self, which: str = "value") -> dict[str, float]:
        """Parameter name -> value (or 'low' / 'high' end of the range)."""
        return {n: getattr(getattr(self, n), which) for n in PROFILE_PARAMS}
