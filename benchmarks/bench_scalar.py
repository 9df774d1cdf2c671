"""Speed benchmark: one operating point through the public Python API, in process, after warm-up.

The scenario of issue 16 (DeepSeek-V3 FP8 on 8x H200, TP8/EP8, batch 64, 1k/1k, sglang profile, aggregated):
``api.predict_point`` (the fast path: a mapping, no DataFrame) and ``api.predict`` (a one-row DataFrame).
Prints the median milliseconds per call of each over repeated calls, and the wall seconds of the same scenario
as a fresh command (``python -m perfmodel predict --hardware h200-sxm ...`` in a new process: imports, catalog
and the compiled equations from the disk cache included; median over ``--cli-repeat`` runs, after one run that
fills the cache). The LAST line is `scalar_ms=<median ms of one api.predict_point call>`; the line before it
`predict_cli_s=<median seconds of one fresh predict command>`; `scalar_cpu_ms=` is the same call's CPU time.
Run: python benchmarks/bench_scalar.py [--calls N] [--cli-repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfmodel import api  # noqa: E402
from perfmodel.specs.deployment import Scenario  # noqa: E402

SCENARIO = {"hardware": "h200-sxm", "model": "deepseek-v3", "profile": "sglang",
            "deployment": {"gpus": 8, "tp": 8, "ep": 8, "batch": 64, "weights": "fp8", "kv_cache": "fp8",
                           "serving": "aggregated"},
            "workload": {"isl": 1024, "osl": 1024, "prefix_hit": 0.0}}


CLI = ["predict", "--hardware", "h200-sxm", "--model", "deepseek-v3", "--profile", "sglang", "--gpus", "8", "--tp", "8",
       "--ep", "8", "--batch", "64", "--weights", "fp8", "--kv-cache", "fp8", "--serving", "aggregated",
       "--isl", "1024", "--osl", "1024", "--prefix-hit", "0"]
"""SCENARIO as command-line flags."""


def cli_seconds() -> float:
    """Wall seconds of one fresh ``python -m perfmodel predict`` process on SCENARIO (this checkout's package)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "perfmodel", *CLI], check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def median_ms(fn, calls: int, rounds: int = 7, clock=time.perf_counter) -> float:
    """Median over ``rounds`` of the mean milliseconds per call of ``calls`` calls (``clock``: wall by default;
    ``time.process_time`` for this process's CPU time, which other jobs on a shared machine inflate less)."""
    fn()
    times = []
    for _ in range(rounds):
        t0 = clock()
        for _ in range(calls):
            fn()
        times.append((clock() - t0) / calls * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--cli-repeat", type=int, default=3)
    args = ap.parse_args()
    sc = Scenario.model_validate(SCENARIO)
    row = api.predict_point(sc)
    frame_ms = median_ms(lambda: api.predict(sc), args.calls)
    point_ms = median_ms(lambda: api.predict_point(sc), args.calls)
    point_cpu_ms = median_ms(lambda: api.predict_point(sc), args.calls, clock=time.process_time)
    print(f"tpot_ms={row['tpot_ms']:.3f} total_tps_per_gpu={row['total_tps_per_gpu']:.1f}")
    cli_seconds()          # fills the disk caches (compiled equations, catalog ids) if a change emptied them
    cli = [cli_seconds() for _ in range(args.cli_repeat)]
    print(f"predict_ms={frame_ms:.3f} (one-row DataFrame)")
    print(f"predict_cli_runs_s={' '.join(f'{t:.3f}' for t in cli)}")
    print(f"scalar_cpu_ms={point_cpu_ms:.4f} (CPU time)")
    print(f"predict_cli_s={statistics.median(cli):.3f}")
    print(f"scalar_ms={point_ms:.4f}")


if __name__ == "__main__":
    main()
