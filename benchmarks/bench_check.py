"""Speed benchmark: `perfmodel check vllm-58x-at-387` in process and as a fresh CLI process.

The claim of issue 39: Rubin NVL72 vs GB300 NVL72 on DeepSeek-V4.1-Flash at 387 tok/s/user (P90); its check
evaluates both systems' curves, the profile corners, the speed-of-light bounds and every candidate step factor
of the conditions, each one a full evaluation of the deployment space.

- in process: ``perfmodel.claims.check(CLAIM)`` after a first call in the same process (catalog parsed,
  equations compiled and imports done by it; every call builds its own curves, as the CLI does), median over
  ``--repeat`` calls; the first call's time is printed too;
- counts of one in-process call (wrappers around the functions, no change to them): ``equation_runs`` calls of
  the compiled equations (``Compiled.__call__``: one vectorized decode or prefill evaluation each),
  ``frame_builds`` serving evaluations into a DataFrame (``serving.aggregated.evaluate``), ``curves``
  evaluations of a system's whole deployment space (``CurveStore.points``);
- fresh CLI: ``python -m perfmodel check CLAIM`` in a new process (wall seconds, imports and catalog parsing
  included; the compiled equations come from the disk cache), median over ``--cli-repeat`` runs.

The LAST line is `check_s=<median seconds of one in-process check>`; the line before it
`check_cli_s=<median seconds of one fresh CLI process>`; `check_cpu_s=` and `check_cli_cpu_s=` are their CPU
times (on a shared machine the wall time also counts the other jobs' turns).
Run: python benchmarks/bench_check.py [--claim ID] [--repeat N] [--cli-repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfmodel import claims  # noqa: E402
from perfmodel.claims import curves  # noqa: E402
from perfmodel.engine import compiled  # noqa: E402
from perfmodel.serving import aggregated  # noqa: E402

CLAIM = "vllm-58x-at-387"


def counted(claim: str) -> dict[str, int]:
    """Calls of the compiled equations, serving frame builds and curve evaluations in one check."""
    counts = {"equation_runs": 0, "frame_builds": 0, "curves": 0}
    targets = {"equation_runs": compiled.Compiled.__call__, "frame_builds": aggregated.evaluate,
               "curves": curves.CurveStore.points}
    # every binding of each function (modules import them by name), replaced by a counting wrapper
    owners = [compiled.Compiled, curves.CurveStore, *[m for n, m in list(sys.modules.items())
                                                       if n.startswith("perfmodel") and m is not None]]
    patches = [(owner, name, key) for owner in owners for name, val in list(vars(owner).items())
               for key, fn in targets.items() if val is fn]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]

    def wrap(fn, key):
        def inner(*a, **kw):
            counts[key] += 1
            return fn(*a, **kw)
        return inner
    try:
        for owner, name, key in patches:
            setattr(owner, name, wrap(targets[key], key))
        claims.check(claim)
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    return counts


def cli_seconds(claim: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh ``python -m perfmodel check`` process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "perfmodel", "check", claim], check=True, env=env, cwd=ROOT,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claim", default=CLAIM)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cli-repeat", type=int, default=2)
    args = ap.parse_args()
    t0 = time.perf_counter()
    claims.check(args.claim)
    first = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        claims.check(args.claim)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    n = counted(args.claim)
    cli = [cli_seconds(args.claim) for _ in range(args.cli_repeat)]
    print(f"claim={args.claim} first_check_s={first:.3f} runs_s={' '.join(f'{t:.3f}' for t in times)}")
    print(" ".join(f"{k}={v}" for k, v in n.items()))
    print(f"cli_runs_s={' '.join(f'{t:.3f}' for t, _ in cli)}")
    print(f"check_cpu_s={statistics.median(cpu):.3f} check_cli_cpu_s={statistics.median(c for _, c in cli):.3f} "
          "(CPU time: user + system)")
    print(f"check_cli_s={statistics.median(t for t, _ in cli):.3f}")
    print(f"check_s={statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
