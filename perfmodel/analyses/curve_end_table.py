"""The per-GPU table of docs/curve-end.md: each GPU's CUDA-graph node period and the fixed part of a batch-1
DeepSeek-R1 decode step on it, part by part (analyses/curve_end.py).

    python -m perfmodel.analyses.curve_end_table            # print the table
    python -m perfmodel.analyses.curve_end_table --write    # replace the block between the markers in the doc

The step: DeepSeek-R1, TP8 x EP8 on 8 GPUs, batch 1, no drafts, 1k/1k, the TensorRT-LLM profile; FP8 weights on
Hopper (no FP4 units), NVFP4 on Blackwell and Rubin (InferenceX's formats). Parts in ms per step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import catalog
from .curve_end import at_deployment, step_parts

GPUS = ("h100-sxm", "h200-sxm", "b200", "b300", "gb200-nvl72", "gb300-nvl72", "vr200-nvl72")
PARTS = ("kernel gaps", "kernel floors", "collective latency", "layer floors", "CPU per step", "kernel work")
DOC = Path(__file__).resolve().parents[2] / "docs" / "curve-end.md"
START, END = "<!-- curve-end-table:start -->", "<!-- curve-end-table:end -->"


def rows(profile: str = "trtllm") -> list[dict]:
    """One dict per GPU: node period (value, low, high, status), harness, the step's parts (ms), step, tok/s/user."""
    out = []
    for hw in GPUS:
        launch = catalog.hardware(hw).kernel_fits.launch
        fmt = "fp8" if hw.startswith("h") else "nvfp4"
        row = at_deployment(dict(hardware=hw, profile=profile, model="deepseek-r1", weights=fmt, kv_cache="fp8",
                                 batch=1, gpus=8, tp=8, ep=8), 1024, 1024)
        parts = {p["part"]: p["ms"] for p in step_parts(row)}
        n = launch.graph_node_us
        out.append({"hardware": hw, "weights": fmt, "node_us": n.value, "node_low": n.low, "node_high": n.high,
                    "status": n.status, "harness_us": launch.harness_call_us.value,
                    **{p: parts.get(p, 0.0) for p in PARTS}, "step_ms": float(row["step_ms"]),
                    "tps_per_user": float(row["tps_per_user"])})
    return out


def table(profile: str = "trtllm") -> str:
    head = ("| GPU | weights | graph node period, us (range; status) | tables' per-call overhead, us | "
            + " | ".join(PARTS) + " | step, ms | tok/s/user |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows(profile):
        lines.append(f"| {r['hardware']} | {r['weights']} | {r['node_us']:g} ({r['node_low']:g}-{r['node_high']:g}; "
                     f"{r['status']}) | {r['harness_us']:g} | " + " | ".join(f"{r[p]:.3g}" for p in PARTS)
                     + f" | {r['step_ms']:.3g} | {r['tps_per_user']:.0f} |")
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """``text`` with the lines between START and END replaced by ``block`` (a one-line error without markers)."""
    from ..docblock import replace_between
    try:
        return replace_between(text, START, END, block, str(DOC))
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def main(argv: list[str]) -> int:
    t = table()
    if "--write" in argv:
        from ..fileio import write_whole
        write_whole(DOC, replace_block(DOC.read_text(), t))
        print(f"wrote {DOC}", file=sys.stderr)
    else:
        print(t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
