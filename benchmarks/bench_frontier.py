"""Speed benchmark: full frontier of DeepSeek-V3 on GB200-NVL72 (>= 50,000 candidate operating points).

Enumerates every deployment the engine supports for the profile (TP / attention-DP / EP within the NVL72
domain, speculative decoding off and 1-4 drafts, aggregated and disaggregated (the prefill pool and both
pools' counts chosen per point by rate matching, serving/pools.py),
FP8 and NVFP4 weights), a 64-point log batch grid per deployment up to its memory capacity, evaluates them
(one vectorized call per format and serving mode) and takes the Pareto envelope.

Prints the one-off cost of compiling the model's equations (sympy -> numpy, cached per model structure for
the life of the process), the first (cold) frontier, then the median of repeated frontiers. The LAST line is
`frontier_s=<median seconds of one full frontier, equations compiled>`.
Run: python benchmarks/bench_frontier.py [--profile P] [--repeat N] [--batch-points N]
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
from perfmodel.analyses.deployments import DeploymentSpace  # noqa: E402
from perfmodel.analyses.frontier import frontier, summary  # noqa: E402
from perfmodel.engine.compiled import compiled  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="dynamo-trtllm", help="software profile (default supports spec + disagg)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--batch-points", type=int, default=64)
    args = ap.parse_args()

    space = DeploymentSpace(batch_points=args.batch_points)
    kw = dict(weights=("fp8", "nvfp4"), space=space)
    t0 = time.perf_counter()
    compiled(catalog.model("deepseek-v3"))
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = frontier("gb200-nvl72", "deepseek-v3", "fixed-1k1k", args.profile, **kw)
    t_cold = time.perf_counter() - t0
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        f = frontier("gb200-nvl72", "deepseek-v3", "fixed-1k1k", args.profile, **kw)
        times.append(time.perf_counter() - t0)
    s = summary(f)
    n = f.attrs["candidates"]
    print(f"profile={args.profile} deployments={f.attrs['deployments']} candidates={n} fitting={f.attrs['fitting']} "
          f"frontier_points={len(f)}")
    print(f"max_tps_per_user={s['max_tps_per_user']:.1f} peak_total_tps_per_gpu={s['peak_total_tps_per_gpu']:.0f}")
    print(f"compile_s={t_compile:.3f} (once per model structure per process)")
    print(f"first_frontier_s={t_cold:.3f} (after compile) cold_total_s={t_compile + t_cold:.3f}")
    print(f"runs_s={' '.join(f'{t:.3f}' for t in times)} points_per_s={n / statistics.median(times):.0f}")
    if n < 50_000:
        print(f"WARNING: only {n} candidate points (< 50,000)")
    print(f"frontier_s={statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
