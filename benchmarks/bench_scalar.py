"""Speed benchmark: one operating point through the public Python API, in process, after warm-up.

The scenario of issue 16 (DeepSeek-V3 FP8 on 8x H200, TP8/EP8, batch 64, 1k/1k, sglang profile, aggregated):
``api.predict_point`` (the fast path: a mapping, no DataFrame) and ``api.predict`` (a one-row DataFrame).
Prints the median milliseconds per call of each over repeated calls; the LAST line is
`scalar_ms=<median ms of one api.predict_point call>`.
Run: python benchmarks/bench_scalar.py [--calls N]
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

from perfmodel import api  # noqa: E402
from perfmodel.specs.deployment import Scenario  # noqa: E402

SCENARIO = {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
            "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64, "weights": "fp8", "kv_cache": "fp8",
                           "serving": "aggregated"},
            "workload": {"isl": 1024, "osl": 1024, "prefix_hit": 0.0}}


def median_ms(fn, calls: int, rounds: int = 7) -> float:
    """Median over ``rounds`` of the mean milliseconds per call of ``calls`` calls."""
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    sc = Scenario.model_validate(SCENARIO)
    row = api.predict_point(sc)
    frame_ms = median_ms(lambda: api.predict(sc), args.calls)
    point_ms = median_ms(lambda: api.predict_point(sc), args.calls)
    print(f"tpot_ms={row['tpot_ms']:.3f} total_tps_per_gpu={row['total_tps_per_gpu']:.1f}")
    print(f"predict_ms={frame_ms:.3f} (one-row DataFrame)")
    print(f"scalar_ms={point_ms:.3f}")


if __name__ == "__main__":
    main()
