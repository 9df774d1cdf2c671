"""Speed benchmark: decode step time of DeepSeek-V3 on GB200-NVL72 over >= 1e6 operating points.

Random operating points (batch, layout, drafts, lengths) are drawn first, in chunks; the timed part is the
model: binding them to the equations' symbols and evaluating every decode output (``symbol_inputs`` and the
compiled decode equations), chunk by chunk on one thread. ``--kernel``: ``auto`` (the fused numba kernel
when installed, for chunks of >= 100k points), ``fused`` or ``numpy``. Prints points/s and peak memory;
the LAST line is `points_per_s=<number>` (wall),
the line before it `cpu_points_per_s=` (CPU time).
Run: python benchmarks/bench_decode.py [--points N] [--chunk N] [--kernel auto|fused|numpy]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from perfmodel import catalog  # noqa: E402
from perfmodel.engine.compiled import compiled  # noqa: E402
from perfmodel.engine.evaluate import Setup, symbol_inputs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=2_000_000)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--kernel", choices=("auto", "fused", "numpy"), default="auto")
    args = ap.parse_args()

    model = catalog.model("deepseek-v3")
    setup = Setup(catalog.hardware("gb200-nvl72"), model, catalog.profile("sglang"), weights="fp8", kv_cache="fp8")
    t0 = time.perf_counter()
    cm = compiled(model)
    t_compile = time.perf_counter() - t0
    vals = setup.symbol_values()
    rng = np.random.default_rng(0)
    layouts = np.array([(8, 8, 8), (16, 1, 16), (32, 1, 32), (72, 1, 72), (8, 1, 8), (4, 4, 4)], dtype=float)
    chunks = []
    for start in range(0, args.points, args.chunk):
        n = min(args.chunk, args.points - start)
        lay = layouts[rng.integers(0, len(layouts), n)]
        p = {"batch": np.round(np.exp(rng.uniform(0, np.log(4096), n))), "gpus": lay[:, 0], "tp": lay[:, 1],
             "ep": lay[:, 2], "pp": np.ones(n), "spec_tokens": rng.integers(0, 4, n).astype(float),
             "acc": np.ones(n), "isl": rng.uniform(256, 32768, n), "osl": rng.uniform(64, 4096, n),
             "new": np.zeros(n), "mix": np.zeros(n)}
        p["acc"] = 1 + 0.7 * p["spec_tokens"]
        p["new"] = p["isl"]
        chunks.append(p)
    t0 = time.perf_counter()
    cm.decode(symbol_inputs(chunks[0], vals), kernel=args.kernel)     # warm-up: the fused kernel loads/compiles
    t_warm = time.perf_counter() - t0
    done, best = 0, np.inf
    t0, c0 = time.perf_counter(), time.process_time()
    for p in chunks:
        out = cm.decode(symbol_inputs(p, vals), kernel=args.kernel)
        best = min(best, float(np.min(out["step_s"])))
        done += len(p["batch"])
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"kernel={args.kernel} compile_s={t_compile:.2f} warmup_s={t_warm:.2f} points={done} eval_s={dt:.3f} "
          f"min_step_ms={best * 1e3:.3f} peak_rss_mb={peak_mb:.0f}")
    print(f"cpu_points_per_s={done / dc:.0f} (CPU time)")
    print(f"points_per_s={done / dt:.0f}")


if __name__ == "__main__":
    main()
