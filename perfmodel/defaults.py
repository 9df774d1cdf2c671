"""The one default rule every command follows (issue 25 item 6); docs/cli.md "Defaults" and ``--help`` print RULE.

- profile: ``vllm`` (calibrated) in every command, ``predict`` included; ``speed-of-light`` (the roofline bound)
  only when asked for.
- weights (FFN/expert weights; dense models: all layers): fp8, or the model's native format where that is
  narrower (4-bit: DeepSeek-V4's and gpt-oss's mxfp4, Kimi's int4), i.e. what a serving stack runs without
  re-quantizing to a wider format; attention weights follow the rule of ``engine.bind.attention_format`` (fp8
  when a MoE model's experts are 4-bit); KV cache fp8.
- KV host tier: the profile's own feature switch (``features.kv_host_tier``; vllm: off). A frontier enumerates it
  on and off only where the profile has it.
- claims (``check``, ``report``) check each claim's own setup: nvfp4 weights (the format the vendors state their
  Blackwell/Rubin claims in) and, where a claim's source places KV in host memory (``kv_placement: hbm+host``),
  the host tier on as a named assumption, marked ``+kvtier`` in the system's name.
"""

from __future__ import annotations

from .formats import WEIGHT_BYTES

DEFAULT_PROFILE = "vllm"
DEFAULT_KV_CACHE = "fp8"
BASE_WEIGHTS = "fp8"

RULE = ("Defaults (every command): profile vllm; weights fp8, or the model's native format where narrower "
        "(mxfp4, int4); attention fp8 when MoE experts are 4-bit; KV cache fp8; KV host tier as the profile has "
        "it (vllm: none). Claims (check, report) use each claim's setup: nvfp4, and +kvtier where the claim "
        "places KV in host memory.")


def native_ffn_format(native_weights: str | None) -> str | None:
    """The FFN/expert part of a model's ``native_weights`` ('mxfp4+fp8' -> 'mxfp4'), None if not a format."""
    head = (native_weights or "").split("+", 1)[0].strip().lower()
    return head if head in WEIGHT_BYTES else None


def default_weights(model) -> str:
    """fp8, or the model's native FFN format where it takes fewer bytes (``model``: id, path or ModelSpec)."""
    if isinstance(model, str):
        from . import catalog
        model = catalog.model(model)
    native = native_ffn_format(getattr(model, "native_weights", None))
    return native if native and WEIGHT_BYTES[native] < WEIGHT_BYTES[BASE_WEIGHTS] else BASE_WEIGHTS
