"""Deployment (how the model is laid out and run) and Scenario (a full `perfmodel predict` input)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, PositiveInt, model_validator

from ..formats import WEIGHT_BYTES, weight_format_problem
from .common import Strict

Serving = Literal["aggregated", "disaggregated", "decode_only", "prefill_only"]
SERVING_MODES: tuple[str, ...] = get_args(Serving)   # the one vocabulary of serving modes (specs, records, dispatch)
ENUMERABLE_MODES = ("aggregated", "decode_only", "disaggregated")   # what a deployment search enumerates


class PrefillPool(Strict):
    """Prefill pool of a disaggregated deployment (its own parallelism)."""

    gpus: PositiveInt = Field(description="GPUs per prefill instance")
    tp: PositiveInt = 1
    ep: PositiveInt = 1
    dp_attention: bool = False
    instances: PositiveInt = Field(1, description="Prefill instances in the pool")


class Deployment(Strict):
    """One instance (model replica). ``gpus`` = tp x pp, or a multiple of it with attention DP.

    Attention runs TP=tp within dp = gpus/(tp pp) data-parallel groups; MoE runs EP=ep with
    expert TP = gpus/(pp ep). ``batch`` = sequences in flight per instance (None: the most that fit).
    """

    gpus: PositiveInt = 1
    tp: PositiveInt = 1
    ep: PositiveInt = 1
    pp: PositiveInt = 1
    dp_attention: bool = False
    weights: str = Field("fp8", description=f"FFN/expert weight format (dense models: all layers): {sorted(WEIGHT_BYTES)}")
    attention_weights: str | None = Field(None, description="Attention/dense weight format; default: weights, "
                                                            "or fp8 when a MoE model's experts are 4-bit")
    kv_cache: Literal["bf16", "fp8", "fp4"] = "fp8"
    batch: PositiveInt | None = Field(None, description="Sequences in flight per instance; None = max that fits")
    spec_tokens: int = Field(0, ge=0, le=16, description="Draft tokens per decode step")
    acceptance_length: float | None = Field(None, ge=1, description="Mean accepted tokens per step incl. bonus")
    acceptance_rate: float | None = Field(None, ge=0, lt=1, description="Per-draft acceptance probability")
    serving: Serving = "aggregated"
    prefill: PrefillPool | None = Field(None, description="Disaggregated: the prefill pool")
    decode_gpus: PositiveInt | None = Field(None, description="Disaggregated: GPUs in the decode pool (>= gpus)")
    kv_host_tier: bool = Field(False, description="Keep KV beyond HBM in host memory (C2C / PCIe)")
    kv_cold_share: float = Field(0.0, ge=0, lt=1, description="With kv_host_tier: share of each sequence's KV "
                                                                "that decode reads straight from host memory")
    kv_pool_gb_per_gpu: float = Field(0.0, ge=0, le=10000, description="Agentic: spare HBM per GPU elsewhere in the "
                                      "scale-up domain pooled (Mooncake-style) for paused sessions' KV, GB")
    concurrency: float | None = Field(None, gt=0, le=1e7, description="Clients in flight per instance: agentic "
                                      "workloads, live sessions (sets the decode batch); fixed workloads, a closed "
                                      "loop (each client sends its next request when the last one ends)")
    max_running_requests: PositiveInt | None = Field(None, le=1_000_000, description="The engine's running-request "
                                                     "cap per scheduler (attention-DP rank) as configured "
                                                     "(max_num_seqs / max_running_requests / max_batch_size); None: "
                                                     "the profile's default")
    arrival_rate: float | None = Field(None, gt=0, le=1e7, description="Open loop: requests/s arriving at one "
                                       "instance (Poisson); the running batch and the TTFT queue follow from it")

    @model_validator(mode="after")
    def _layout(self):
        if weight_format_problem(self.weights):
            raise ValueError(f"weights: {weight_format_problem(self.weights)}")
        if self.attention_weights and weight_format_problem(self.attention_weights):
            raise ValueError(f"attention_weights: {weight_format_problem(self.attention_weights)}")
        if self.gpus % (self.tp * self.pp):
            raise ValueError(f"gpus={self.gpus} is not a multiple of tp x pp = {self.tp * self.pp}")
        if not self.dp_attention and self.gpus != self.tp * self.pp:
            raise ValueError(f"gpus={self.gpus} must equal tp x pp = {self.tp * self.pp} unless dp_attention is true")
        if (self.gpus // self.pp) % self.ep:
            raise ValueError(f"ep={self.ep} must divide gpus/pp = {self.gpus // self.pp}")
        if self.spec_tokens and self.acceptance_length and self.acceptance_length > self.spec_tokens + 1:
            raise ValueError(f"acceptance_length {self.acceptance_length} exceeds spec_tokens + 1")
        if self.kv_cold_share and not self.kv_host_tier:
            raise ValueError("kv_cold_share needs kv_host_tier: true")
        if self.arrival_rate is not None and (self.concurrency is not None or self.batch is not None):
            raise ValueError("arrival_rate sets the running batch: give it without batch or concurrency")
        if self.serving == "disaggregated" and self.prefill is None:
            raise ValueError("disaggregated serving needs a 'prefill' pool")
        return self

    def accepted_tokens(self, default_rate: float | None = None) -> float:
        """Acceptance length a. From a per-draft rate p with k drafts: a = (1 - p^(k+1)) / (1 - p)."""
        k = self.spec_tokens
        if k == 0:
            return 1.0
        if self.acceptance_length is not None:
            return self.acceptance_length
        p = self.acceptance_rate if self.acceptance_rate is not None else default_rate
        if p is None:
            return 1.0
        from ..spec_decoding import acceptance_length
        return float(acceptance_length(p, k))


class FixedWorkload(Strict):
    isl: float = Field(gt=0, le=10_000_000)
    osl: float = Field(gt=0, le=10_000_000)
    prefix_hit: float = Field(0.0, ge=0, lt=1)


class Overrides(Strict):
    hardware: dict[str, float] = Field(default_factory=dict, description="Hardware field -> value (spec units)")
    profile: dict[str, float] = Field(default_factory=dict, description="Profile parameter -> value")


class Scenario(Strict):
    """A `perfmodel predict` input: catalog ids (or YAML paths) plus a deployment and a workload."""

    hardware: str
    model: str
    profile: str = Field("vllm", description="software profile id; default vllm (perfmodel/defaults.py)")
    deployment: Deployment = Deployment()
    workload: FixedWorkload | str = Field(FixedWorkload(isl=1024, osl=1024),
                                          description="{isl, osl, prefix_hit} or a workload catalog id")
    overrides: Overrides = Overrides()

    @model_validator(mode="before")
    @classmethod
    def _default_weights(cls, data):
        """Weights not given: the one default rule (perfmodel/defaults.py: fp8, or the model's native format
        where narrower)."""
        if not isinstance(data, dict) or not isinstance(data.get("model"), str):
            return data
        dep = data.get("deployment")
        if isinstance(dep, Deployment):
            if "weights" in dep.model_fields_set:
                return data
            dep = dep.model_dump(exclude_unset=True)
        dep = dict(dep or {}) if isinstance(dep, (dict, type(None))) else dep
        if not isinstance(dep, dict) or "weights" in dep:
            return data
        from ..defaults import default_weights
        from ..errors import SpecError
        try:
            return {**data, "deployment": {**dep, "weights": default_weights(data["model"])}}
        except SpecError:                # an unknown model is reported where it is loaded
            return data
