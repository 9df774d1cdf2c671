"""Speed benchmark of the reference event simulation (perfmodel simulate): 10,000 requests on one core.

Goal: under 10 s for 10,000 requests (the step tables included: one vectorized evaluation of the compiled step
equations; the event loop never calls them). Runs a fixed 8k/1k workload and an agentic one (agentx-trace) at
a few concurrencies on DeepSeek-V4-Flash / H200 (vLLM: mixed chunks; SGLang: prefill first).
Prints one line per case; the LAST line is `worst_s_per_10k=<number>`.
Run: python benchmarks/bench_simulate.py [--requests N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfmodel import api  # noqa: E402
from perfmodel.specs.deployment import Scenario  # noqa: E402

CASES = [("vllm", {"isl": 8192, "osl": 1024, "prefix_hit": 0.0}, c) for c in (1, 64, 1024)] + \
        [("sglang", {"isl": 8192, "osl": 1024, "prefix_hit": 0.0}, c) for c in (64, 1024)] + \
        [(p, "agentx", c) for p in ("vllm", "sglang") for c in (16, 128)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000)
    args = ap.parse_args()
    api.simulate(Scenario.model_validate(_scenario("vllm", CASES[0][1], 1)), requests=10)    # compile cache warm
    worst = 0.0
    for prof, wl, c in CASES:
        sc = Scenario.model_validate(_scenario(prof, wl, c))
        t0 = time.process_time()
        s, _ = api.simulate(sc, requests=args.requests, seed=0)
        el = time.process_time() - t0
        worst = max(worst, el * 10_000 / args.requests)
        name = wl if isinstance(wl, str) else f"{wl['isl']:g}/{wl['osl']:g}"
        print(f"{prof:7s} {name:10s} C={c:5d}: {el:6.2f} s CPU for {s['requests']} requests "
              f"({s['total_tps_per_gpu']:.0f} tok/s/GPU, TPOT P50 {s['tpot_ms']:.1f} ms)")
    print(f"worst_s_per_10k={worst:.2f}")


def _scenario(prof, wl, c):
    return {"hardware": "h200-sxm", "model": "deepseek-v4-flash", "profile": prof,
            "deployment": {"gpus": 4, "tp": 4, "ep": 1, "weights": "mxfp4", "spec_tokens": 1,
                           "serving": "aggregated", "concurrency": c}, "workload": wl}


if __name__ == "__main__":
    main()
