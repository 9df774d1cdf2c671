"""Number formats: bytes per element (including block-scale overhead) and which tensor-core rate computes them.

These are definitions of the formats, not hardware or model specs.
- bf16: 2 B.  fp8 (e4m3, per-tensor or 128x128 block scales): 1 B (+ negligible scale bytes).
- nvfp4: 4-bit values + one e4m3 scale per 16 elements = 0.5 + 1/16 B.
- mxfp4: 4-bit values + one e8m0 scale per 32 elements = 0.5 + 1/32 B.
- int4 (W4A16, group 128, bf16 scale): 0.5 + 2/128 B.
- mxfp8 (OCP microscaling: e4m3 values + one e8m0 scale per 32 elements): 1 + 1/32 B; FP8 tensor-core rate
  (MiniMax-M3-MXFP8, Motif-3's MXFP8 expert path).
- w4afp8 (SGLang ``--quantization w4afp8``: INT4 weights, group 128 with a bf16 scale, FP8 activations; the
  GEMM runs on FP8 tensor cores after an in-register dequantization): 0.5 + 2/128 B at the FP8 rate
  (GLM-5.3-W4AFP8-AWQ).
"""

from __future__ import annotations

from .errors import SpecError, short

WEIGHT_BYTES: dict[str, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "nvfp4": 0.5 + 1 / 16,
    "mxfp4": 0.5 + 1 / 32,
    "fp4": 0.5 + 1 / 16,
    "int4": 0.5 + 2 / 128,
    "mxfp8": 1 + 1 / 32,
    "w4afp8": 0.5 + 2 / 128,
}

# Tensor-core rate used for GEMMs with weights in this format: a hardware field name prefix.
COMPUTE_RATE: dict[str, str] = {
    "bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4",
    "int4": "bf16",  # W4A16: weights dequantized, math in bf16
    "mxfp8": "fp8", "w4afp8": "fp8",
}

WEIGHT_SPELLINGS = {"w4a16": "int4", "fp8_e4m3": "fp8", "e4m3": "fp8", "w8a8_fp8": "fp8", "w4a8_fp8": "w4afp8",
                    "modelopt_fp4": "nvfp4", "modelopt_fp8": "fp8", "modelopt": "fp8", "fp8_block": "fp8",
                    "awq": "int4", "gptq": "int4", "bfloat16": "bf16", "float16": "fp16"}
KV_SPELLINGS = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "e4m3": "fp8", "nvfp4": "fp4", "fp16": "bf16",
                "bfloat16": "bf16", "float16": "bf16", "auto": "bf16"}
"""Other names results give a format (engine flags: vLLM --kv-cache-dtype fp8_e4m3, SGLang --quantization w4afp8
or modelopt_fp4 (NVIDIA ModelOpt's NVFP4 checkpoints; ``modelopt`` alone is its FP8), AWQ/GPTQ 4-bit checkpoints
(W4A16, group 128); an NVFP4 KV cache is TRT-LLM's FP4 KV; ``--kv-cache-dtype auto``, vLLM's and SGLang's default,
keeps the model's activation dtype, BF16): read as the catalog format they name (records' weights / kv_cache)."""

KV_FORMATS = ("bf16", "fp8", "fp4")
# KV-cache element bytes (values only: the engines' FP8/FP4 KV scales are per head or per tensor, negligible)
KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5}


def table_element_bytes(dtype: str) -> float:
    """Bytes per element of a dtype as the measured kernel tables name it (``bfloat16``, ``half``, ``float``,
    ``fp8_block``, ``nvfp4``, ``w4a16_mxfp4``, ``int8``, ...): 4-bit formats with their FP8 block scale
    (0.5 + 1/16), 8-bit 1, 32-bit float 4, 16-bit (and anything else) 2."""
    d = str(dtype).lower()
    if d in ("float", "float32", "fp32"):
        return 4.0
    if "fp4" in d or "int4" in d or d.startswith("w4"):
        return WEIGHT_BYTES["nvfp4"]
    if "fp8" in d or "int8" in d:
        return WEIGHT_BYTES["fp8"]
    return WEIGHT_BYTES["bf16"]


def weight_format_problem(fmt) -> str | None:
    """Why ``fmt`` is not a weight format (None when it is one): the one message every entry point uses."""
    if isinstance(fmt, str) and fmt in WEIGHT_BYTES:
        return None
    return f"unknown weight format {short(fmt)}; choose one of {', '.join(sorted(WEIGHT_BYTES))}"


def kv_format_problem(fmt) -> str | None:
    if isinstance(fmt, str) and fmt in KV_FORMATS:
        return None
    return f"unknown KV-cache format {short(fmt)}; choose one of {', '.join(KV_FORMATS)}"


def weight_bytes(fmt: str, field: str = "weights") -> float:
    problem = weight_format_problem(fmt)
    if problem:
        raise SpecError(problem, field=field)
    return WEIGHT_BYTES[fmt]


def check_kv_format(fmt: str, field: str = "kv_cache") -> str:
    problem = kv_format_problem(fmt)
    if problem:
        raise SpecError(problem, field=field)
    return fmt


def check_formats(weights=(), kv_cache=None, attention_weights=None) -> None:
    """Check the formats an analysis enumerates before any work (frontier, sensitivity, attribute, ...)."""
    for w in ([weights] if isinstance(weights, str) else list(weights or ())):
        weight_bytes(w, "weights")
    if kv_cache is not None:
        check_kv_format(kv_cache, "kv_cache")
    if attention_weights is not None:
        weight_bytes(attention_weights, "attention_weights")
