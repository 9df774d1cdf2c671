"""The hand-checked kernel floors of one DeepSeek-V3 decode step on a GPU's TensorRT-LLM kernel fits (shared by the
kernel-binding and curve-end tests)."""

import numpy as np


def trtllm_step_floors_us(fits, harness_us: float = 0.0) -> float:
    """Kernel floors of one step, us: 3 dense layers of 13 kernels (the attention kernel at the MLA-decode floor t_a,
    the others at the BF16 GEMM floor t_g) and 58 MoE layers of 20 (likewise, with 7 of them replaced by one fused
    MoE kernel at t_m); each t the median table floor t0 of TensorRT-LLM's curves in that format, less the tables'
    per-call overhead ``harness_us`` (kernel_fits.launch.harness_call_us) once per kernel the call launches (the
    fused MoE call: the 7 kernels it replaces), not below 0."""
    fam = fits.families
    t_g = np.median([c.params["t0_us"] for v, c in fam["gemm"]["trtllm"].items() if v.endswith("/bfloat16")])
    t_a = np.median([c.params["t0_us"] for v, c in fam["mla"]["trtllm"].items() if v.endswith("/fp8")])
    t_m = np.median([c.params["t0_us"] for v, c in fam["moe"]["trtllm"].items()
                     if v.split("/", 1)[1] in ("fp8", "fp8_block")])
    t_g, t_a, t_m = max(t_g - harness_us, 0.0), max(t_a - harness_us, 0.0), max(t_m - 7 * harness_us, 0.0)
    return 3 * (13 * t_g + t_a - t_g) + 58 * (20 * t_g + t_a - t_g + t_m - 7 * t_g)
