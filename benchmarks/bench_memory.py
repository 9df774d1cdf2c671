"""Memory benchmark: a sweep of 10^7 decode operating points in bounded memory, and its peak RSS.

DeepSeek-V3 on GB200-NVL72 (sglang profile): a grid of batch x context x output length x drafts x layout
(10,000,000 points), generated chunk by chunk, bound to the equations' symbols and evaluated by the
compiled decode equations (the fused kernel when numba is installed). The sweep keeps, per point, only
the step time (s) and the tokens/s per user; everything else of a chunk is freed before the next.
Prints the points, seconds and the peak resident memory; the LAST line is `peak_rss_mb=<MiB>`.
Run: python benchmarks/bench_memory.py [--points N] [--chunk N] [--kernel auto|fused|numpy]
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

BATCH = np.unique(np.round(np.geomspace(1, 4096, 125)))
ISL = np.geomspace(256, 131072, 40)
OSL = np.geomspace(64, 16384, 25)
DRAFTS = np.arange(4.0)
LAYOUTS = np.array([(8, 8, 8), (16, 1, 16), (32, 1, 32), (72, 1, 72), (8, 1, 8), (4, 4, 4), (64, 1, 64),
                    (72, 8, 72)], dtype=float)


def grid_chunk(start: int, n: int) -> dict:
    """Points start .. start + n of the grid (mixed-radix index -> one value per axis)."""
    i = np.arange(start, start + n)
    axes = (BATCH, ISL, OSL, DRAFTS, LAYOUTS)
    idx = []
    for a in axes:
        idx.append(i % len(a))
        i = i // len(a)
    lay = LAYOUTS[idx[4] % len(LAYOUTS)]
    spec = DRAFTS[idx[3]]
    isl = ISL[idx[1]]
    return {"batch": BATCH[idx[0]], "gpus": lay[:, 0], "tp": lay[:, 1], "ep": lay[:, 2], "pp": np.ones(n),
            "spec_tokens": spec, "acc": 1 + 0.7 * spec, "isl": isl, "osl": OSL[idx[2]], "new": isl,
            "mix": np.zeros(n)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--kernel", choices=("auto", "fused", "numpy"), default="auto")
    args = ap.parse_args()
    model = catalog.model("deepseek-v3")
    setup = Setup(catalog.hardware("gb200-nvl72"), model, catalog.profile("sglang"), weights="fp8", kv_cache="fp8")
    cm, vals = compiled(model), setup.symbol_values()
    step = np.empty(args.points)
    tps_user = np.empty(args.points)
    t0 = time.perf_counter()
    for start in range(0, args.points, args.chunk):
        n = min(args.chunk, args.points - start)
        p = grid_chunk(start, n)
        out = cm.decode(symbol_inputs(p, vals), kernel=args.kernel)
        step[start:start + n] = out["step_s"]
        tps_user[start:start + n] = p["acc"] / step[start:start + n]
    dt = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"kernel={args.kernel} points={args.points} eval_s={dt:.2f} points_per_s={args.points / dt:.0f} "
          f"max_tps_per_user={np.nanmax(tps_user):.1f}")
    print(f"peak_rss_mb={peak_mb:.0f}")


if __name__ == "__main__":
    main()
