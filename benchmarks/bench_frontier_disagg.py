"""Speed benchmark: a frontier with aggregated and disaggregated serving competing on one envelope.

DeepSeek-V3 on GB200-NVL72, fixed-1k1k, FP8 weights, the dynamo-trtllm profile (supports disaggregation and
speculative decoding). Every decode layout in the NVL72 domain x spec depth x a 64-point batch grid is evaluated
once; per decode point the prefill pool's layout (from the Pareto set of prefill layouts) and both pools' integer
instance counts are chosen by rate matching (serving/pools.py), all vectorized. Prints the one-off compile cost,
the first frontier, then the median of repeated frontiers; the LAST line is
`frontier_disagg_s=<median seconds of one frontier with both modes, equations compiled>`.
Run: python benchmarks/bench_frontier_disagg.py [--hardware H] [--model M] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfmodel import catalog  # noqa: E402
from perfmodel.analyses.frontier import frontier  # noqa: E402
from perfmodel.engine.compiled import compiled  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hardware", default="gb200-nvl72")
    ap.add_argument("--model", default="deepseek-v3")
    ap.add_argument("--workload", default="fixed-1k1k")
    ap.add_argument("--profile", default="dynamo-trtllm")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    run = lambda: frontier(args.hardware, args.model, args.workload, args.profile, weights=("fp8",))  # noqa: E731
    t0 = time.perf_counter()
    compiled(catalog.model(args.model))
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = run()
    t_cold = time.perf_counter() - t0
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        f = run()
        times.append(time.perf_counter() - t0)
    modes = f["serving"].value_counts().to_dict()
    print(f"{args.hardware} {args.model} {args.workload} profile={args.profile} candidates={f.attrs['candidates']} "
          f"fitting={f.attrs['fitting']} frontier_points={len(f)} by_mode={modes}")
    print(f"compile_s={t_compile:.3f} first_frontier_s={t_cold:.3f} runs_s={' '.join(f'{t:.3f}' for t in times)}")
    print(f"frontier_disagg_s={statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
